//! Stage `runner`: executes one scenario end to end and produces its [`ScenarioResult`].
//!
//! Input: a [`Scenario`] and [`RunOptions`]. It resolves the client, starts the fake model, writes a
//! private `HERMES_HOME`, drives the steps, and at every `check` step runs store → display → oracle
//! on the whole rendered history. Output: the verdict with every check, the timings, and the kept
//! artefacts (recordings, provider log, a copy of `state.db`) in the run directory.
//!
//! "The harness could not do its job" (bad scenario, client would not start, a wait ran past its
//! deadline) is kept apart from "the client misbehaved" (a check whose numbers differ): the first is
//! [`ScenarioResult::error`], the second a [`CheckResult`] with mismatches.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::client::{self, Client};
use crate::display::{self, Surface};
use crate::driver::{Driver, Launch};
use crate::oracle::{self, Check};
use crate::provider::Provider;
use crate::scenario::{merge_json, Action, DisplayProfile, Expectation, Scenario, Step, Ui};
use crate::settings::{ClientVersion, DisplaySettings};
use crate::store::Store;
use crate::terminal::Transcript;

/// How to run scenarios.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// Client spec overriding every scenario's (`--client`).
    pub client: Option<String>,
    /// Directory under which each scenario gets `<name>/` for its artefacts.
    pub out_root: PathBuf,
    /// Called before each step with a one-line description (scenario, step number, kind, line),
    /// for a progress display. `None`: silent.
    pub progress: Option<Progress>,
}

/// A progress callback (see [`RunOptions::progress`]).
pub type Progress = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("client", &self.client)
            .field("out_root", &self.out_root)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// One checkpoint's outcome.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckResult {
    /// What the oracle found.
    #[serde(flatten)]
    pub check: Check,
    /// What the scenario expected.
    #[serde(skip)]
    pub expected: Expectation,
    /// Each difference between expected and found, as `finding: expected X, got Y`.
    pub mismatches: Vec<String>,
    /// The oracle's one-sentence verdict.
    pub verdict: String,
    /// Line of the `check` step in the scenario file.
    pub line: usize,
    /// The displayed session.
    pub session: String,
    /// Stored rows / logical messages of the display model.
    pub stored_rows: usize,
    /// Number of logical messages expected.
    pub logical_messages: usize,
    /// The rendered history the oracle read (for snapshots and reports).
    #[serde(skip)]
    pub transcript: Transcript,
    /// A picture of the terminal at the checkpoint, colours kept ([`crate::terminal::Screen::svg`]);
    /// `None` for a check of an exported file.
    #[serde(skip)]
    pub screen_svg: Option<String>,
}

/// Wall time of one step, and how much of it was the harness only waiting.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StepTiming {
    /// Line of the step.
    pub line: usize,
    /// Step kind.
    pub kind: &'static str,
    /// Seconds.
    pub secs: f64,
    /// Seconds of it the harness spent confirming that the client had gone quiet, after the
    /// client's last byte (the rest is the client drawing and working, or the harness checking).
    pub harness_wait_secs: f64,
}

/// The outcome of one scenario.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScenarioResult {
    /// Scenario name (`compress/rotating_resume`).
    pub scenario: String,
    /// The scenario file.
    pub file: PathBuf,
    /// Client spec used.
    pub client: String,
    /// True when every check matched and no harness error happened.
    pub passed: bool,
    /// Every check run.
    pub checks: Vec<CheckResult>,
    /// A harness-level failure (with step and last screen), if any.
    pub error: Option<String>,
    /// Line of the step that failed, if any.
    pub error_line: Option<usize>,
    /// Wall time of the whole scenario, seconds.
    pub wall_secs: f64,
    /// Seconds spent waiting on the client (launch, turns, commands, quit).
    pub client_secs: f64,
    /// Per-step timings.
    pub steps: Vec<StepTiming>,
    /// Where artefacts were kept.
    pub kept: PathBuf,
    /// The command that reruns exactly this (shown on failure).
    pub rerun: String,
}

/// Runs `scenario` and returns its result; never panics on client misbehaviour.
pub fn run(scenario: &Scenario, options: &RunOptions) -> ScenarioResult {
    let started = Instant::now();
    let dir = options.out_root.join(&scenario.name);
    let mut result = ScenarioResult {
        scenario: scenario.name.clone(),
        file: scenario.path.clone(),
        client: options
            .client
            .clone()
            .unwrap_or_else(|| scenario.client.clone()),
        passed: false,
        checks: Vec::new(),
        error: None,
        error_line: None,
        wall_secs: 0.0,
        client_secs: 0.0,
        steps: Vec::new(),
        kept: dir.clone(),
        rerun: match &options.client {
            Some(spec) => format!(
                "cargo run -p hermes-e2e -- run {} --client {spec}",
                scenario.path.display()
            ),
            None => format!(
                "cargo run -p hermes-e2e -- run {}   (or: cargo test --test scenarios -- {} --exact)",
                scenario.path.display(),
                scenario.name
            ),
        },
    };
    // Every run works in a private directory and publishes it at the end, so two runs of one
    // scenario at once (two terminals, `cargo test` beside `run`) never share a client home or a
    // database; the last one to finish is what `target/hermes-e2e/<scenario>/` holds.
    let private = private_run_dir(&options.out_root, &scenario.name);
    if let Err((line, message)) =
        run_inner(scenario, &private, &mut result, options.progress.as_ref())
    {
        result.error = Some(message);
        result.error_line = line;
    }
    match publish(&private, &dir) {
        Ok(()) => result.kept = dir,
        Err(e) => {
            result.kept = private;
            if result.error.is_none() {
                result.error = Some(format!(
                    "cannot publish the run's artefacts to `{}`: {e}",
                    result.kept.display()
                ));
            }
        }
    }
    result.wall_secs = started.elapsed().as_secs_f64();
    result.passed = result.error.is_none()
        && !result.checks.is_empty()
        && result.checks.iter().all(|c| c.mismatches.is_empty());
    result
}

/// A directory no other run uses: `OUT/.runs/<pid>-<n>/<scenario>`. It ends in the scenario's
/// own path, as the published one does, so what the client shows of its working directory (the
/// TUI's status bar: `…rotating_resume/work`) is the same in both.
fn private_run_dir(out_root: &Path, name: &str) -> PathBuf {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    out_root
        .join(".runs")
        .join(format!("{}-{n}", std::process::id()))
        .join(name)
}

/// Moves a finished run's directory to where its scenario's artefacts are kept, replacing what an
/// earlier run left there. Another run publishing at the same moment may win the race; then this
/// one tries again, so the last to finish is kept.
fn publish(private: &Path, dir: &Path) -> std::io::Result<()> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut last = None;
    for _ in 0..8 {
        let _ = std::fs::remove_dir_all(dir);
        match std::fs::rename(private, dir) {
            Ok(()) => {
                // The now empty `.runs/<pid>-<n>/…` parents (and `.runs` when no run is left).
                let mut up = private.parent();
                while let Some(p) = up.filter(|p| std::fs::remove_dir(p).is_ok()) {
                    up = p.parent();
                }
                return Ok(());
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("rename failed")))
}

type StepError = (Option<usize>, String);

fn run_inner(
    scenario: &Scenario,
    dir: &Path,
    result: &mut ScenarioResult,
    progress: Option<&Progress>,
) -> Result<(), StepError> {
    let fail = |e: String| (None, e);
    let client: Client = client::resolve(&result.client).map_err(|e| fail(e.to_string()))?;
    result.client = client.label().to_owned();
    // A fresh run directory: nothing from an earlier run can leak into this one.
    let _ = std::fs::remove_dir_all(dir);
    let home = dir.join("home");
    let user_home = dir.join("user-home");
    let work = dir.join("work");
    for d in [&home, &user_home, &work] {
        std::fs::create_dir_all(d)
            .map_err(|e| fail(format!("cannot create `{}`: {e}", d.display())))?;
    }
    for (relative, content) in &scenario.files {
        let file = work.join(relative);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| fail(format!("cannot create `{}`: {e}", parent.display())))?;
        }
        std::fs::write(&file, content)
            .map_err(|e| fail(format!("cannot write `{}`: {e}", file.display())))?;
    }
    let provider = Provider::start(scenario.script())
        .map_err(|e| fail(format!("cannot start the fake model on 127.0.0.1: {e}")))?;
    let mut config = client::base_config(&provider.base_url());
    let version = ClientVersion::from_spec(client.label()).unwrap_or(ClientVersion::Iot0_22);
    if scenario.display == DisplayProfile::Stock {
        config["display"] = DisplaySettings::stock(version).to_config_json();
    }
    merge_json(&mut config, &scenario.config);
    // The recap the classic CLI draws on resume follows the settings it actually ran with.
    let recap = (scenario.ui == Ui::Classic)
        .then(|| DisplaySettings::from_yaml_str(&config.to_string(), "config.yaml", version))
        .and_then(Result::ok)
        .map(|settings| (settings, version));
    client::write_config(&home, &config).map_err(|e| {
        fail(format!(
            "cannot write `{}/config.yaml`: {e}",
            home.display()
        ))
    })?;
    let env = client::environment(&home, &user_home);

    let mut driver: Option<Driver> = None;
    let mut launches = 0usize;
    let mut exports = 0usize;
    // What the last `export` step wrote, for the next `check`.
    let mut exported: Option<Transcript> = None;
    let outcome = (|| -> Result<(), StepError> {
        let total = scenario.steps.len();
        for (n, step) in scenario.steps.iter().enumerate() {
            let t = Instant::now();
            let at = |e: String| (Some(step.line), e);
            let kind = step_kind(step);
            if let Some(p) = progress {
                p(&format!(
                    "{}: step {}/{total} `{kind}` (line {})",
                    scenario.name,
                    n + 1,
                    step.line
                ));
            }
            let deadline = Duration::from_secs(step.deadline_secs);
            // The waits of one step share its deadline: what is left of it after the earlier ones.
            let left = || deadline.saturating_sub(t.elapsed());
            let waits_on_client = !matches!(step.action, Action::Check { .. });
            // A step that fails still took the client's time: it is counted before the error
            // goes up (a client that never became idle ran for the whole deadline).
            let mut perform = || -> Result<(), StepError> {
                match &step.action {
                    Action::Launch {
                        args,
                        client: launch_client,
                    } => {
                        let this_client;
                        let program = match launch_client {
                            // `--client`/`HERMES_E2E_CLIENT` override the scenario's client, not a
                            // per-launch one: a cross-version scenario needs both versions.
                            Some(spec) => {
                                this_client =
                                    client::resolve(spec).map_err(|e| at(e.to_string()))?;
                                this_client.executable.clone()
                            }
                            None => client.executable.clone(),
                        };
                        if driver.is_some() {
                            return Err(at(
                                "`launch` while the client is running: `quit` first".into()
                            ));
                        }
                        let args = substitute_session(args, &home).map_err(at)?;
                        launches += 1;
                        let launch = Launch {
                            program,
                            args,
                            env: env.clone(),
                            cwd: work.clone(),
                            rows: scenario.rows,
                            cols: scenario.cols,
                            cast: dir.join(format!("session-{launches}.cast")),
                            ui: scenario.ui,
                        };
                        let d = start_client(launch, deadline).map_err(at)?;
                        driver = Some(d);
                    }
                    Action::Say {
                        text,
                        reply,
                        fault,
                        fault_times,
                        tool_calls: _,
                    } => {
                        let d = running(&mut driver).map_err(at)?;
                        d.type_line(text, deadline)
                            .map_err(|e| at(whole_step(e, deadline)))?;
                        if fault.is_some() && fault_times.is_none() {
                            // The reply never arrives: the turn is over when the client has given
                            // up — its output settles with the idle prompt back.
                            d.wait_settled_idle(left())
                                .map_err(|e| at(whole_step(e, deadline)))?;
                        } else {
                            d.wait_idle_with(&reply_tail(reply), left())
                                .map_err(|e| at(whole_step(e, deadline)))?;
                        }
                    }
                    Action::Command { text, wait_for } => {
                        let text = substitute_session(std::slice::from_ref(text), &home)
                            .map_err(at)?
                            .remove(0);
                        let d = running(&mut driver).map_err(at)?;
                        let ui = d.ui();
                        d.type_line(&text, deadline)
                            .map_err(|e| at(whole_step(e, deadline)))?;
                        // `wait_for` must appear BELOW the echoed command: text an earlier run of the
                        // same command left on screen (a second `/compress`) proves nothing. Once seen
                        // it counts even if redrawn away: the TUI's `compressing …` progress line is
                        // gone, with the rest of its screen, when `/compress` is done.
                        let needle = crate::driver::squash(wait_for);
                        // The TUI says when it is working in its status bar: that it left `ready`
                        // after the command was typed proves the command ran, whatever it printed
                        // (a scenario's `wait_for` is usually the classic CLI's wording).
                        let mut seen = false;
                        d.wait_until(
                            &format!("`{wait_for}` below `{text}` and the idle prompt"),
                            left(),
                            |s| {
                                if !seen {
                                    let lines = s.history_lines();
                                    seen = lines
                                        .iter()
                                        .rposition(|l| l.contains(text.as_str()))
                                        .map(|at| crate::driver::squash(&lines[at + 1..].join("")))
                                        .is_some_and(|below| below.contains(&needle))
                                        || crate::client::is_busy(ui, &s.viewport_rows());
                                }
                                seen && crate::client::is_idle(ui, &s.viewport_rows())
                            },
                        )
                        .map_err(|e| at(whole_step(e, deadline)))?;
                        d.wait_idle_quiet(
                            &format!("the idle prompt to settle after `{text}`"),
                            crate::client::COMMAND_SETTLE,
                            left(),
                        )
                        .map_err(|e| at(whole_step(e, deadline)))?;
                    }
                    Action::Resume(id) => {
                        let id = substitute_session(std::slice::from_ref(id), &home)
                            .map_err(at)?
                            .remove(0);
                        let d = running(&mut driver).map_err(at)?;
                        slash_resume(d, &id, deadline).map_err(at)?;
                    }
                    Action::Resize { rows, cols } => {
                        let d = running(&mut driver).map_err(at)?;
                        d.resize(*rows, *cols)
                            .map_err(|e| at(whole_step(e, deadline)))?;
                        d.wait_quiet(Duration::from_millis(300), left())
                            .map_err(|e| at(whole_step(e, deadline)))?;
                        d.wait_idle_with("", left())
                            .map_err(|e| at(whole_step(e, deadline)))?;
                    }
                    Action::Quit => {
                        let mut d = driver
                            .take()
                            .ok_or_else(|| at("`quit` with no client running".into()))?;
                        d.type_line("/quit", deadline)
                            .map_err(|e| at(whole_step(e, deadline)))?;
                        d.wait_exit(left())
                            .map_err(|e| at(whole_step(e, deadline)))?;
                        d.finish_recording();
                    }
                    Action::Check { name, expect } => {
                        let (transcript, surface, svg) = match exported.take() {
                            Some(t) => (t, Surface { tool_output: true }, None),
                            None => {
                                let d = running(&mut driver).map_err(at)?;
                                let svg = d.screen().svg(&format!("{} — {name}", scenario.name));
                                (d.screen().transcript(), Surface::default(), Some(svg))
                            }
                        };
                        let mut checked = run_check(
                            name,
                            expect,
                            step,
                            transcript,
                            surface,
                            &home,
                            &provider,
                            recap.as_ref(),
                        )
                        .map_err(at)?;
                        checked.screen_svg = svg;
                        result.checks.push(checked);
                    }
                    Action::Export(args) => {
                        exports += 1;
                        let out = dir.join(format!("export-{exports}"));
                        std::fs::create_dir_all(&out)
                            .map_err(|e| at(format!("cannot create `{}`: {e}", out.display())))?;
                        let args: Vec<String> = substitute_session(args, &home)
                            .map_err(at)?
                            .into_iter()
                            .map(|a| a.replace("{out}", &out.to_string_lossy()))
                            .collect();
                        let stdout = run_cli(&client.executable, &args, &env, &work, deadline)
                            .map_err(at)?;
                        exported = Some(export_transcript(&out, &stdout).map_err(at)?);
                    }
                }
                Ok(())
            };
            let outcome = perform();
            let secs = t.elapsed().as_secs_f64();
            if waits_on_client {
                result.client_secs += secs;
            }
            let harness_wait_secs = driver
                .as_mut()
                .map_or(0.0, |d| d.take_settled().as_secs_f64());
            result.steps.push(StepTiming {
                line: step.line,
                kind,
                secs,
                harness_wait_secs,
            });
            outcome?;
        }
        Ok(())
    })();
    drop(driver);
    // Keep what a maintainer needs to look at a failure without rerunning.
    let _ = provider.write_log(&dir.join("provider.jsonl"));
    let db = home.join("state.db");
    if db.is_file() {
        let _ = std::fs::copy(&db, dir.join("state.db"));
    }
    outcome
}

fn running(driver: &mut Option<Driver>) -> Result<&mut Driver, String> {
    driver
        .as_mut()
        .ok_or_else(|| "no client running: add a `launch` step first".to_owned())
}

fn step_kind(step: &Step) -> &'static str {
    match step.action {
        Action::Launch { .. } => "launch",
        Action::Say { .. } => "say",
        Action::Command { .. } => "command",
        Action::Resume(_) => "resume",
        Action::Resize { .. } => "resize",
        Action::Export(_) => "export",
        Action::Quit => "quit",
        Action::Check { .. } => "check",
    }
}

/// The end of a reply, which proves the whole reply was drawn (compared squashed by the driver).
fn reply_tail(reply: &str) -> String {
    let squashed = crate::driver::squash(reply);
    let n = squashed.chars().count();
    squashed.chars().skip(n.saturating_sub(40)).collect()
}

/// Replaces `{session}` in launch arguments or a command with the newest session of `state.db`
/// that holds messages.
fn substitute_session(args: &[String], home: &Path) -> Result<Vec<String>, String> {
    if !args.iter().any(|a| a.contains("{session}")) {
        return Ok(args.to_vec());
    }
    let store = Store::open(&home.join("state.db")).map_err(|e| e.to_string())?;
    let session = store
        .latest_session_with_messages()
        .map_err(|e| e.to_string())?
        .ok_or("`{session}` used but `state.db` has no session with messages yet")?;
    Ok(args
        .iter()
        .map(|a| a.replace("{session}", &session.id))
        .collect())
}

#[allow(clippy::too_many_arguments)]
fn run_check(
    name: &str,
    expect: &Expectation,
    step: &Step,
    transcript: Transcript,
    surface: Surface,
    home: &Path,
    provider: &Provider,
    recap: Option<&(DisplaySettings, ClientVersion)>,
) -> Result<CheckResult, String> {
    let store = Store::open(&home.join("state.db")).map_err(|e| e.to_string())?;
    // The session on screen: the newest one with messages (a fresh client that then ran
    // `/resume ID` may have written an empty session of its own).
    let session = store
        .latest_session_with_messages()
        .map_err(|e| e.to_string())?
        .ok_or("`check`: `state.db` has no session with messages")?;
    let expected = display::expected(&store, &session.id, surface).map_err(|e| e.to_string())?;
    let said = provider.said();
    let data = crate::integrity::data_problems(&store, &session.id).unwrap_or_default();
    let optional = recap
        .map(|(settings, version)| crate::settings::not_on_recap(settings, *version, &expected))
        .unwrap_or_default();
    let check = oracle::check_in(
        name,
        &transcript,
        &expected,
        &oracle::Context {
            said: Some(&said),
            data_problems: &data,
            optional: &optional,
        },
    );
    let mismatches = compare(expect, &check);
    Ok(CheckResult {
        verdict: oracle::verdict_sentence(&check),
        check,
        expected: expect.clone(),
        mismatches,
        line: step.line,
        session: session.id,
        stored_rows: expected.stored_rows,
        logical_messages: expected.messages.len(),
        transcript,
        screen_svg: None,
    })
}

/// Every difference between the expectation and the findings.
pub fn compare(expect: &Expectation, check: &Check) -> Vec<String> {
    let f = &check.findings;
    let mut out = Vec::new();
    let pairs = [
        (
            "words_rendered_more_than_once",
            expect.words_rendered_more_than_once,
            f.words_rendered_more_than_once,
        ),
        (
            "missing_messages",
            expect.missing_messages,
            f.missing_messages,
        ),
        (
            "internal_text_shown",
            expect.internal_text_shown,
            f.internal_text_shown,
        ),
        ("out_of_order", expect.out_of_order, f.out_of_order),
    ];
    for (name, want, got) in pairs {
        if want != got {
            out.push(format!("{name}: expected {want}, got {got}"));
        }
    }
    let causes: Vec<String> = check
        .repeats
        .iter()
        .map(|r| {
            serde_json::to_value(r.cause)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        })
        .collect();
    if causes != expect.causes {
        out.push(format!(
            "causes: expected {:?}, got {:?}",
            expect.causes, causes
        ));
    }
    out
}

/// Default directory for artefacts: `$HERMES_E2E_OUT`, else `target/hermes-e2e` of the workspace.
pub fn default_out_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("HERMES_E2E_OUT").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    workspace_root().join("target").join("hermes-e2e")
}

/// The workspace root (parent of the `harness` crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The display paths `repro` replays a saved conversation through.
pub const REPRO_PATHS: &[&str] = &["--resume", "/resume"];

/// A session id as one path component: a user's database may hold any text there (`../x`, `/`).
fn path_safe(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() || safe.chars().all(|c| c == '.') {
        format!("session{}", safe.len())
    } else {
        safe
    }
}

/// Reproduces a bug report: copies the user's `state.db` (with `-wal`/`-shm`) into a private
/// `HERMES_HOME`, resumes `session` (default: the most recent with messages) in the real client through every
/// path of [`REPRO_PATHS`], and runs the oracle on what each drew. The expectation is projected
/// from the user's file itself (read from a private copy; the file is never written).
/// Every check expects all findings to be 0, so `passed` means "displayed correctly".
#[allow(clippy::too_many_arguments)]
pub fn repro(
    db: &Path,
    session: Option<&str>,
    client_spec: &str,
    ui: crate::client::Ui,
    rows: u16,
    cols: u16,
    out_root: &Path,
    user_config: Option<&Path>,
) -> Result<ScenarioResult, String> {
    let started = Instant::now();
    let store = Store::open(db).map_err(|e| e.to_string())?;
    let session = match session {
        Some(id) => store
            .sessions()
            .map_err(|e| e.to_string())?
            .into_iter()
            .find(|s| s.id == id)
            .ok_or_else(|| format!("`{}` has no session `{id}`", db.display()))?,
        None => store
            .latest_session_with_messages()
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("`{}` has no session with messages to resume", db.display()))?,
    };
    let expected =
        display::expected(&store, &session.id, Surface::default()).map_err(|e| e.to_string())?;
    let data_problems = crate::integrity::data_problems(&store, &session.id).unwrap_or_default();
    drop(store);
    let client = client::resolve(client_spec).map_err(|e| e.to_string())?;
    // The user's display settings (`--config`): the client runs with them, and the expectation
    // follows them (which messages the recap leaves out). Without: the harness's wide settings.
    let version = ClientVersion::from_spec(client.label()).unwrap_or(ClientVersion::Iot0_22);
    let settings = match user_config {
        Some(path) => {
            DisplaySettings::from_config_yaml(path, version).map_err(|e| e.to_string())?
        }
        None => DisplaySettings::wide(),
    };
    let optional = if ui == Ui::Classic {
        crate::settings::not_on_recap(&settings, version, &expected)
    } else {
        Vec::new()
    };
    let dir = out_root.join("repro").join(path_safe(&session.id));
    let _ = std::fs::remove_dir_all(&dir);
    let provider = Provider::start(crate::provider::Script::default())
        .map_err(|e| format!("cannot start the fake model on 127.0.0.1: {e}"))?;
    let mut result = ScenarioResult {
        scenario: format!("repro {} --session {}", db.display(), session.id),
        file: db.to_owned(),
        client: client.label().to_owned(),
        passed: false,
        checks: Vec::new(),
        error: None,
        error_line: None,
        wall_secs: 0.0,
        client_secs: 0.0,
        steps: Vec::new(),
        kept: dir.clone(),
        rerun: format!(
            "cargo run -p hermes-e2e -- repro {} --session {} --client {client_spec} --ui {} --size {cols}x{rows}{}",
            db.display(),
            session.id,
            ui.name(),
            user_config
                .map(|c| format!(" --config {}", c.display()))
                .unwrap_or_default()
        ),
    };
    // A pristine copy of the user's database beside the recordings: what the expectation was
    // projected from (the report's stored rows, a maintainer's `inspect`).
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    crate::store::copy_database(db, &dir.join("state.db")).map_err(|e| e.to_string())?;
    for (n, path) in REPRO_PATHS.iter().enumerate() {
        // Each path gets its own pristine copy: the client migrates and writes its database.
        let home = dir.join(format!("home-{}", n + 1));
        let user_home = dir.join("user-home");
        let work = dir.join("work");
        for d in [&home, &user_home, &work] {
            std::fs::create_dir_all(d)
                .map_err(|e| format!("cannot create `{}`: {e}", d.display()))?;
        }
        crate::store::copy_database(db, &home.join("state.db")).map_err(|e| e.to_string())?;
        let mut config = client::base_config(&provider.base_url());
        config["display"] = settings.to_config_json();
        client::write_config(&home, &config)
            .map_err(|e| format!("cannot write the config in `{}`: {e}", home.display()))?;
        let args = if *path == "--resume" {
            vec!["--resume".to_owned(), session.id.clone()]
        } else {
            Vec::new()
        };
        let launch = Launch {
            program: client.executable.clone(),
            args,
            env: client::environment(&home, &user_home),
            cwd: work,
            rows,
            cols,
            cast: dir.join(format!("path-{}.cast", n + 1)),
            ui,
        };
        let t = Instant::now();
        let drawn = (|| -> Result<(Transcript, String), String> {
            let deadline = Duration::from_secs(60);
            let mut d = start_client(launch, deadline)?;
            if *path == "/resume" {
                slash_resume(&mut d, &session.id, deadline)?;
            }
            let svg = d.screen().svg(&format!("repro {} — {path}", session.id));
            Ok((d.screen().transcript(), svg))
        })();
        result.client_secs += t.elapsed().as_secs_f64();
        match drawn {
            Ok((transcript, svg)) => {
                let check = oracle::check_in(
                    path,
                    &transcript,
                    &expected,
                    &oracle::Context {
                        said: None,
                        data_problems: &data_problems,
                        optional: &optional,
                    },
                );
                let expect = Expectation::default();
                let mismatches = compare(&expect, &check);
                result.checks.push(CheckResult {
                    verdict: oracle::verdict_sentence(&check),
                    check,
                    expected: expect,
                    mismatches,
                    line: 0,
                    session: session.id.clone(),
                    stored_rows: expected.stored_rows,
                    logical_messages: expected.messages.len(),
                    transcript,
                    screen_svg: Some(svg),
                });
            }
            Err(e) => {
                result.error = Some(format!("path `{path}`: {e}"));
                break;
            }
        }
    }
    result.wall_secs = started.elapsed().as_secs_f64();
    result.passed = result.error.is_none() && result.checks.iter().all(|c| c.mismatches.is_empty());
    Ok(result)
}

/// Starts the client of `launch` — in its interface: `launch.ui`'s arguments go before the
/// launch's own and its environment is added — and waits until it is ready for input: the idle
/// prompt, quiet for [`crate::client::COMMAND_SETTLE`] (the TUI draws `ready` a frame before the
/// rest), and for the TUI its session banner (a resumed TUI first draws a partial transcript).
fn start_client(mut launch: Launch, deadline: Duration) -> Result<Driver, String> {
    let start = Instant::now();
    let left = || deadline.saturating_sub(start.elapsed());
    let ui = launch.ui;
    if ui == crate::client::Ui::Tui && !on_path(&launch.env, "node") {
        return Err(format!(
            "the Ink TUI (`ui = \"tui\"`) needs `node` (Node.js 20 or newer) on the client's PATH `{}`",
            env_value(&launch.env, "PATH")
        ));
    }
    launch
        .args
        .splice(0..0, ui.args().iter().map(|a| a.to_string()));
    launch
        .env
        .extend(ui.env().iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let mut d = Driver::spawn(&launch).map_err(|e| whole_step(e, deadline))?;
    if let Some(marker) = ui.started_marker() {
        let needle = crate::driver::squash(marker);
        d.wait_until(&format!("`{marker}` on screen"), left(), |s| {
            crate::driver::squash(&s.history_lines().join("")).contains(&needle)
        })
        .map_err(|e| whole_step(e, deadline))?;
    }
    d.wait_idle_quiet("the idle prompt", crate::client::COMMAND_SETTLE, left())
        .map_err(|e| whole_step(e, deadline))?;
    Ok(d)
}

/// A driver error as the step reports it: a timeout in any of the step's waits (which share the
/// step's deadline) is reported against the whole deadline, not the remainder that wait had left.
fn whole_step(e: crate::driver::DriverError, deadline: Duration) -> String {
    match e {
        crate::driver::DriverError::Timeout { what, screen, .. } => {
            crate::driver::DriverError::Timeout {
                what,
                secs: deadline.as_secs_f64(),
                screen,
            }
            .to_string()
        }
        other => other.to_string(),
    }
}

/// The value of `key` in a client environment ("" when unset).
fn env_value<'a>(env: &'a [(String, String)], key: &str) -> &'a str {
    env.iter()
        .find(|(k, _)| k == key)
        .map_or("", |(_, v)| v.as_str())
}

/// Whether an executable `name` is in one of the directories of the environment's `PATH`.
fn on_path(env: &[(String, String)], name: &str) -> bool {
    env_value(env, "PATH")
        .split(':')
        .filter(|d| !d.is_empty())
        .any(|d| Path::new(d).join(name).is_file())
}

/// Types `/resume ID` and waits until its output is drawn: `/resume` prints a one-line notice,
/// then the recap panel; the history is complete once the panel below the echoed command has
/// closed and the prompt is back.
fn slash_resume(d: &mut Driver, id: &str, deadline: Duration) -> Result<(), String> {
    let start = Instant::now();
    let left = || deadline.saturating_sub(start.elapsed());
    let echo = format!("/resume {id}");
    let ui = d.ui();
    if let Some(marker) = ui.started_marker() {
        // The TUI draws no recap panel: it redraws the resumed transcript twice — the session's
        // own rows first, with `ready`, then (0.2 s or more later) everything again under the
        // session banner. Done is the banner drawn after the command, then a settled prompt.
        let mark = d.printed_mark();
        d.type_line(&echo, deadline)
            .map_err(|e| whole_step(e, deadline))?;
        return d
            .wait_printed_then_idle(marker, mark, crate::client::COMMAND_SETTLE, left())
            .map_err(|e| whole_step(e, deadline));
    }
    d.type_line(&echo, deadline)
        .map_err(|e| whole_step(e, deadline))?;
    d.wait_until("the recap panel of `/resume` to close", left(), |s| {
        crate::client::is_idle(ui, &s.viewport_rows())
            && recap_closed_after(&s.history_lines(), &echo)
    })
    .map_err(|e| whole_step(e, deadline))
}

/// Whether a panel (a line starting with `╰`) closes below the last line showing `echo`.
fn recap_closed_after(lines: &[String], echo: &str) -> bool {
    let Some(at) = lines.iter().rposition(|l| l.contains(echo)) else {
        return false;
    };
    lines[at + 1..]
        .iter()
        .any(|l| l.trim_start().starts_with('╰'))
}

/// Runs `scenario` and keeps what it produced as a fixture in `dest`: `state.db`, every
/// `session-N.cast`, `provider.jsonl` and a `PROVENANCE.md` saying which client, which scenario
/// and config, what each checkpoint showed and how to reproduce the verdict without a client.
/// Returns the scenario's result (recorded whether or not it passed: a new bug is a failing run).
pub fn record(
    scenario: &Scenario,
    options: &RunOptions,
    dest: &Path,
) -> Result<ScenarioResult, String> {
    let result = run(scenario, options);
    std::fs::create_dir_all(dest)
        .map_err(|e| format!("cannot create `{}`: {e}", dest.display()))?;
    let mut kept = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&result.kept)
        .map_err(|e| format!("cannot read `{}`: {e}", result.kept.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for from in entries {
        let name = from
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let wanted = name == "state.db"
            || name == "provider.jsonl"
            || (name.starts_with("session-") && name.ends_with(".cast"));
        if wanted && from.is_file() {
            std::fs::copy(&from, dest.join(&name))
                .map_err(|e| format!("cannot copy `{}`: {e}", from.display()))?;
            kept.push(name);
        }
    }
    if !kept.iter().any(|k| k == "state.db") {
        return Err(format!(
            "`{}` wrote no state.db (see the verdict: {})",
            scenario.name,
            result.error.as_deref().unwrap_or("no error")
        ));
    }
    let last_cast = kept.iter().rfind(|k| k.ends_with(".cast")).cloned();
    std::fs::write(
        dest.join("PROVENANCE.md"),
        provenance(scenario, &result, dest, &kept, last_cast.as_deref()),
    )
    .map_err(|e| {
        format!(
            "cannot write `{}`: {e}",
            dest.join("PROVENANCE.md").display()
        )
    })?;
    Ok(result)
}

fn provenance(
    scenario: &Scenario,
    result: &ScenarioResult,
    dest: &Path,
    kept: &[String],
    last_cast: Option<&str>,
) -> String {
    use std::fmt::Write as _;
    let mut p = String::new();
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let _ = writeln!(p, "# fixtures/{name}\n");
    let _ = writeln!(p, "- Client: `{}` (classic CLI).", result.client);
    for step in &scenario.steps {
        if let Action::Launch {
            client: Some(other),
            args,
        } = &step.action
        {
            let _ = writeln!(
                p,
                "- The launch at line {} (`hermes {}`) used `{other}`.",
                step.line,
                args.join(" ")
            );
        }
    }
    let _ = writeln!(
        p,
        "- Recorded by `hermes-e2e record {} --out {}` (hermes-e2e {}).",
        scenario.path.display(),
        dest.display(),
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(p, "- Scenario: {}", scenario.summary);
    let _ = writeln!(
        p,
        "- Config: the harness's offline config (fake model on 127.0.0.1) with `{}`; terminal {}×{}.",
        scenario.config, scenario.cols, scenario.rows
    );
    let _ = writeln!(p, "- Files: {}.", kept.join(", "));
    let _ = writeln!(p, "- What it shows:");
    for c in &result.checks {
        let _ = writeln!(
            p,
            "  - `{}` (session `{}`, {} stored rows, {} logical messages): {}",
            c.check.at, c.session, c.stored_rows, c.logical_messages, c.verdict
        );
    }
    if let Some(e) = &result.error {
        let first = e.lines().next().unwrap_or_default();
        let _ = writeln!(p, "- The run did not finish: {first}");
    }
    if let Some(cast) = last_cast {
        let _ = writeln!(
            p,
            "- Reproduce the last verdict without a client: `hermes-e2e check --cast {d}/{cast} --db {d}/state.db`.",
            d = dest.display()
        );
    }
    p
}

/// Runs the client without a PTY (`hermes ARGS`) in its private environment and returns its
/// stdout; killed (with its process group) at `deadline`. A non-zero exit is an error with the
/// output's tail.
fn run_cli(
    program: &Path,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
    deadline: Duration,
) -> Result<String, String> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run `{} {}`: {e}", program.display(), args.join(" ")))?;
    let _registered = crate::interrupt::register(child.id() as i32);
    // Drain both pipes on threads so a chatty client cannot block on a full pipe.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let mut bytes = Vec::new();
                let _ = p.read_to_end(&mut bytes);
                text = String::from_utf8_lossy(&bytes).into_owned();
            }
            text
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= deadline => {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(child.id() as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
                let _ = child.wait();
                return Err(format!(
                    "`hermes {}` did not finish within {:.1} s",
                    args.join(" "),
                    deadline.as_secs_f64()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("waiting for `hermes {}`: {e}", args.join(" "))),
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if !status.success() {
        let tail: Vec<&str> = stderr
            .lines()
            .chain(stdout.lines())
            .rev()
            .take(15)
            .collect();
        return Err(format!(
            "`hermes {}` failed ({status}); last output:\n{}",
            args.join(" "),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ));
    }
    Ok(stdout)
}

/// The text an export wrote, as a transcript: every file under `out` (or `out` itself), sorted by
/// path; `.jsonl` files reduced to the `content` strings they hold, in order. Without any file,
/// the command's stdout.
fn export_transcript(out: &Path, stdout: &str) -> Result<Transcript, String> {
    fn files(p: &Path, acc: &mut Vec<PathBuf>) {
        if p.is_file() {
            acc.push(p.to_path_buf());
        } else if let Ok(entries) = std::fs::read_dir(p) {
            for e in entries.flatten() {
                files(&e.path(), acc);
            }
        }
    }
    fn contents(v: &serde_json::Value, acc: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    match (k.as_str(), v) {
                        ("content", serde_json::Value::String(s)) => acc.push(s.clone()),
                        _ => contents(v, acc),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| contents(i, acc)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    files(out, &mut found);
    found.sort();
    // The manifest lists files, not conversation.
    found.retain(|f| {
        !f.file_name()
            .is_some_and(|n| n.to_string_lossy().contains("manifest"))
    });
    let mut text = String::new();
    for f in &found {
        let body = std::fs::read_to_string(f)
            .map_err(|e| format!("cannot read `{}`: {e}", f.display()))?;
        if f.extension().is_some_and(|e| e == "jsonl") {
            for line in body.lines().filter(|l| !l.trim().is_empty()) {
                let v: serde_json::Value = serde_json::from_str(line)
                    .map_err(|e| format!("`{}` is not JSONL: {e}", f.display()))?;
                let mut acc = Vec::new();
                contents(&v, &mut acc);
                for c in acc {
                    text.push_str(&c);
                    text.push_str("\n\n");
                }
            }
        } else {
            text.push_str(&body);
            text.push('\n');
        }
    }
    if found.is_empty() {
        text = stdout.to_owned();
    }
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    Ok(Transcript::from_history_lines(&lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_path_looks_only_in_the_client_environment() {
        let env = vec![("PATH".to_owned(), "/nonexistent:/bin".to_owned())];
        assert!(on_path(&env, "sh"));
        assert!(!on_path(&env, "hermes-e2e-no-such-program"));
        assert!(!on_path(&[], "sh"), "no PATH, nothing found");
    }
}
