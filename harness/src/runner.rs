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
//!
//! The jobs live in their own modules: `steps` interprets a scenario's steps, `session` is the
//! client session protocol (start, `/resume`, the waits of each command), `during` a `say` step
//! that acts while its reply streams, `cli` runs the client
//! without a PTY, `repro` and `record` are the two other ways to run the
//! client, `results` holds what the reports read and `error` every orchestration error. The
//! verdict itself is [`Basis`](crate::Basis).

use std::path::{Path, PathBuf};
use std::time::Instant;

pub(crate) mod bless;
mod deadline;
pub(crate) mod error;
mod export;
mod jobs;
pub(crate) mod record;
mod repro;
pub(crate) mod results;
mod session;
mod steps;
mod streaming;

pub use bless::bless_into;
pub use error::{Error, StepError};
pub(crate) use jobs::run_in_order;
pub(crate) use record::record;
pub use repro::{repro, REPRO_PATHS};
pub use results::{CheckResult, InternalShown, ScenarioResult, StepTiming};
pub use steps::{prepare, RunDir};

use crate::scenario::Scenario;

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
    /// Every check expects a correct display instead of its pins (`--expect-correct`,
    /// `Scenario::expecting_correct`): for a client build that should have no defect.
    pub expect_correct: bool,
    /// The command-line flags that changed the scenarios before they were run (`--size
    /// 80x24`, `--ui tui`, `--terminal reflow`, each as its words): the rerun line repeats them
    /// (`rerun_line`).
    pub flags: Vec<String>,
}

/// A progress callback (see [`RunOptions::progress`]).
pub(crate) type Progress = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("client", &self.client)
            .field("out_root", &self.out_root)
            .field("progress", &self.progress.is_some())
            .field("expect_correct", &self.expect_correct)
            .field("flags", &self.flags)
            .finish()
    }
}

/// Runs `scenario` and returns its result; never panics on client misbehaviour.
pub fn run(scenario: &Scenario, options: &RunOptions) -> ScenarioResult {
    let started = Instant::now();
    let correct;
    let scenario = if options.expect_correct {
        correct = scenario.expecting_correct();
        &correct
    } else {
        scenario
    };
    let dir = options.out_root.join(&scenario.name);
    let mut result = ScenarioResult::new(
        scenario.name.clone(),
        scenario.path.clone(),
        options
            .client
            .clone()
            .unwrap_or_else(|| scenario.client.clone()),
        dir.clone(),
        rerun_line(scenario, options),
    );
    // Every run works in a private directory and publishes it at the end, so two runs of one
    // scenario at once (two terminals, `cargo test` beside `run`) never share a client home or a
    // database; the last one to finish is what `target/hermes-e2e/<scenario>/` holds.
    let private = private_run_dir(&options.out_root, &scenario.name);
    if let Err(e) = steps::run_steps(scenario, &private, &mut result, options.progress.as_ref()) {
        result.error = Some(crate::chain::one_line(&e.error));
        result.error_line = e.line;
    }
    match publish(&private, &dir) {
        Ok(()) => result.kept = dir,
        Err(source) => {
            result.kept = private;
            if result.error.is_none() {
                result.error = Some(crate::chain::one_line(&Error::Publish {
                    kept: result.kept.clone(),
                    source,
                }));
            }
        }
    }
    result.wall_secs = started.elapsed().as_secs_f64();
    result.passed = result.held();
    result
}

/// The command that reruns `scenario` as `options` ran it: every flag that changed the run
/// (`--client`, [`RunOptions::flags`], `--expect-correct`) repeated; with none, for a bundled
/// scenario (under `scenarios/`), the `cargo test` trial that runs the same file is offered too.
pub(crate) fn rerun_line(scenario: &Scenario, options: &RunOptions) -> String {
    let mut line = format!("cargo run -p hermes-e2e -- run {}", scenario.path.display());
    if let Some(spec) = &options.client {
        line.push_str(&format!(" --client {spec}"));
    }
    for flag in &options.flags {
        line.push(' ');
        line.push_str(flag);
    }
    if options.expect_correct {
        line.push_str(" --expect-correct");
    }
    let bundled = std::fs::canonicalize(&scenario.path)
        .ok()
        .zip(std::fs::canonicalize(workspace_root().join("scenarios")).ok())
        .is_some_and(|(file, root)| file.starts_with(root));
    if bundled && options.client.is_none() && options.flags.is_empty() && !options.expect_correct {
        line.push_str(&format!(
            "   (or: cargo test --test scenarios -- {} --exact)",
            scenario.name
        ));
    }
    line
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

/// A text as one file or directory name: ASCII letters and digits, lower-cased, every other
/// character `_`, without leading or trailing `_`; `fallback` when nothing is left. Report pages
/// and folders, snapshot names and `repro`'s directory per session (a user's database may hold
/// any text in an id: `../x`, `/`) are named with it.
pub fn slug(text: &str, fallback: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_matches('_');
    if s.is_empty() {
        fallback.to_owned()
    } else {
        s.to_owned()
    }
}

/// Creates `dir` and its parents.
fn create_dir(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Create {
        path: dir.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests;
