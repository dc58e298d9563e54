//! The integration tests that take time, in one pool of workers (libtest-mimic): one trial per
//! scenario file under `scenarios/`, named by its path without extension (`cargo test --test
//! scenarios -- compress/` selects a group; several filters select the trials that match any:
//! `-- resize/ model/ history/`); the geometry sweep's `NAME@COLSxROWS` trials (see [`sweep`];
//! `HERMES_E2E_SWEEP=full|off`); and the suite's other tests, `FILE::FUNCTION` (see [`LONG`]
//! and [`SHORT`]). `HERMES_E2E_STRESS=N` runs every scenario trial N times beside a CPU hog (see
//! [`stress`]).
//!
//! Each scenario trial runs the scenario against the real client and fails with the report's
//! text when an expectation differs; then each resumed checkpoint's rendered history (a check
//! right after a `launch` or `resume`) is compared with its insta snapshot under `snapshots/`
//! (redacted: session ids, timestamps, paths, ports, timings, token estimates, tips; blank lines
//! dropped).
//!
//! A test that judges what a scenario's run leaves (its recordings, its database, its views) is
//! a trial of its own fed by that run, not a second launch of the client: `upstream_resize/NAME`,
//! `recorded_views/NAME`, `views/NAME`, `bless/NAME` and `expect_correct/NAME` (see [`JUDGES`])
//! share the run of trial `NAME`, whichever starts first makes it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use hermes_e2e::report;
use hermes_e2e::runner::{self, RunOptions};
use hermes_e2e::scenario::{self, Action, Scenario, Ui};
use libtest_mimic::{Arguments, Failed, Trial};

mod common {
    pub mod bin;
    pub mod fixture;
    pub mod output;
    pub mod processes;
    pub mod quick;
    pub mod report;
    pub mod test;
}
mod judges {
    pub mod bless;
    pub mod expect_correct;
    pub mod recorded_views;
    pub mod upstream_resize;
    pub mod views;
}

/// The suite's other tests, trials here beside the scenario trials so that every test shares
/// one pool of workers (`cargo test` runs its test binaries one after another): the binary's
/// commands and the harness's own faults on the real client, its verdict and report, pasted
/// screens, and the oracle against the client's own display read.
mod suite {
    pub mod bisect;
    pub mod bless;
    pub mod cli;
    pub mod differential;
    pub mod faults;
    pub mod minimize;
    pub mod real_recorders;
    pub mod report_html;
    pub mod screens;
    pub mod verdict;
}

use common::test::Test;
use judges::{bless, expect_correct, recorded_views, upstream_resize, views};

/// The files of [`suite`] whose tests take long (several runs of the client each, or a wait
/// for a step's deadline): listed first, longest first, so that no long test starts while the
/// other workers run out of work.
const LONG: [(&str, &[Test]); 4] = [
    ("minimize", suite::minimize::TESTS),
    ("real_recorders", suite::real_recorders::TESTS),
    ("bisect", suite::bisect::TESTS),
    ("faults", suite::faults::TESTS),
];

/// The files of [`suite`] whose tests take a few seconds at most: listed after the scenario
/// trials, they fill the workers as the last long trials end.
const SHORT: [(&str, &[Test]); 6] = [
    ("verdict", suite::verdict::TESTS),
    ("cli", suite::cli::TESTS),
    ("bless", suite::bless::TESTS),
    ("report_html", suite::report_html::TESTS),
    ("differential", suite::differential::TESTS),
    ("screens", suite::screens::TESTS),
];

/// A scenario's run, shared by the trials that judge it: made once, by the first to ask.
type Shared = Arc<OnceLock<runner::ScenarioResult>>;

/// A test judging the passed run of a scenario (it panics with what differs).
type Judge = fn(&str, &runner::ScenarioResult);

/// The trials fed by a scenario trial's run: each judge's name, the scenarios it judges, the judge.
/// The first takes longest (upstream's resize procedure live in tmux).
const JUDGES: [(&str, &[&str], Judge); 5] = [
    (
        "upstream_resize",
        &upstream_resize::SCENARIOS,
        upstream_resize::judge,
    ),
    ("bless", &bless::SCENARIOS, bless::judge),
    (
        "expect_correct",
        &expect_correct::SCENARIOS,
        expect_correct::judge,
    ),
    (
        "recorded_views",
        &recorded_views::SCENARIOS,
        recorded_views::judge,
    ),
    ("views", &views::SCENARIOS, views::judge),
];

fn main() {
    START.get_or_init(Instant::now);
    let (mut args, filters) = arguments(std::env::args());
    args.test_threads = args.test_threads.or_else(workers);
    let rounds = stress();
    let mut trials = file_trials(&LONG);
    let mut judging = Vec::new();
    for round in 1..=rounds {
        let (scenarios, judges) = scenario_trials(round);
        trials.extend(scenarios);
        judging.extend(judges);
    }
    trials.extend(file_trials(&SHORT));
    // Trials fed by another trial's run, listed last: by the time a worker takes one, the run
    // it judges is made or under way, and the machine is at its quietest for upstream's resize
    // procedure live in tmux, whose verdict depends on the client's timing.
    trials.extend(judging);
    if !filters.is_empty() {
        trials.retain(|t| {
            filters.iter().any(|f| {
                if args.exact {
                    t.name() == f
                } else {
                    t.name().contains(f.as_str())
                }
            })
        });
    }
    if rounds > 1 {
        // A CPU hog per core beside the trials, until the run exits: flakes show under load.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        for _ in 0..cores {
            std::thread::spawn(|| {
                let mut x = 0u64;
                loop {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            });
        }
        eprintln!("note: stress mode: every trial {rounds} times, {cores} CPU hog thread(s)");
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The trials of `files`, named `FILE::FUNCTION`.
fn file_trials(files: &[(&str, &[Test])]) -> Vec<Trial> {
    files
        .iter()
        .flat_map(|(file, tests)| {
            tests.iter().map(move |t| {
                let run = t.run;
                trial(format!("{file}::{}", t.name), move || {
                    run();
                    Ok(())
                })
                .with_ignored_flag(t.ignored.is_some())
            })
        })
        .collect()
}

/// When the pool started: [`trial`]'s times are seconds since.
static START: OnceLock<Instant> = OnceLock::new();

/// A trial running `test`; with `HERMES_E2E_TIMES=FILE`, it appends its name, start and end
/// (seconds since the pool started) and whether it passed to `FILE` as a tab-separated line, to
/// see where a run's time goes and how busy the workers were (docs/ci.md).
fn trial(name: String, test: impl FnOnce() -> Result<(), Failed> + Send + 'static) -> Trial {
    let Some(log) = std::env::var_os("HERMES_E2E_TIMES").filter(|f| !f.is_empty()) else {
        return Trial::test(name, test);
    };
    Trial::test(name.clone(), move || {
        let start = START.get_or_init(Instant::now);
        let began = start.elapsed().as_secs_f64();
        // A test that panics is logged too, then its panic goes on to the harness.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(test));
        let line = format!(
            "{name}\t{began:.1}\t{:.1}\t{}\n",
            start.elapsed().as_secs_f64(),
            if matches!(outcome, Ok(Ok(()))) {
                "ok"
            } else {
                "FAILED"
            }
        );
        // One short write to a file opened for appending: workers' lines do not interleave.
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
        if let Err(e) = written {
            eprintln!(
                "note: HERMES_E2E_TIMES: cannot append to {}: {e}",
                log.to_string_lossy()
            );
        }
        outcome.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// How many trials run at once unless `--test-threads` says: `RUST_TEST_THREADS` as libtest
/// reads it, else one per core and one more. A trial waits on the client as well as computing
/// (a turn's reply streams, the screen settles, a terminal answers late, a step runs to its
/// deadline), so one per core leaves the cores idle part of the time; two per core starve the
/// clients whose drawing depends on their timing (docs/ci.md, "Where the time goes").
fn workers() -> Option<usize> {
    std::env::var("RUST_TEST_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .or_else(|| {
            std::thread::available_parallelism()
                .ok()
                .map(|n| n.get() + 1)
        })
}

/// The harness's arguments, and the filters when more than one is given: libtest-mimic takes one
/// filter, libtest any number (`cargo test --test scenarios -- resize/ model/ history/` runs the
/// trials whose name contains any of them; with `--exact`, equals one of them). With one filter or
/// none, libtest-mimic filters as usual and the list is empty.
fn arguments(argv: impl Iterator<Item = String>) -> (Arguments, Vec<String>) {
    // The options that take a value as the next argument (libtest-mimic 0.8's `Arguments`).
    const VALUED: [&str; 6] = [
        "--test-threads",
        "--logfile",
        "--skip",
        "--color",
        "--format",
        "-Z",
    ];
    let argv: Vec<String> = argv.collect();
    let mut options = Vec::new();
    let mut filters = Vec::new();
    let mut rest = argv.iter();
    if let Some(program) = rest.next() {
        options.push(program.clone());
    }
    while let Some(arg) = rest.next() {
        if arg.starts_with('-') {
            options.push(arg.clone());
            if VALUED.contains(&arg.as_str()) {
                options.extend(rest.next().cloned());
            }
        } else {
            filters.push(arg.clone());
        }
    }
    if filters.len() <= 1 {
        return (Arguments::from_iter(argv), Vec::new());
    }
    (Arguments::from_iter(options), filters)
}

/// `HERMES_E2E_STRESS=N`: every scenario trial N times (round k > 1 named `NAME#k`) with a CPU
/// hog beside them, to find what is not deterministic under load. Unset: once, no hog.
fn stress() -> usize {
    std::env::var("HERMES_E2E_STRESS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1)
}

/// The trials of every scenario file (and the geometry sweep), for stress round `round`, and the
/// trials judging their runs ([`JUDGES`]).
fn scenario_trials(round: usize) -> (Vec<Trial>, Vec<Trial>) {
    let suffix = if round > 1 {
        format!("#{round}")
    } else {
        String::new()
    };
    let root = runner::workspace_root().join("scenarios");
    let files = match scenario::discover(std::slice::from_ref(&root)) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    // Each file read once here (a file that does not load fails its own trial, which reads it
    // again and says why). Longest first, so that no long trial starts while the other workers
    // run out of work.
    let mut files: Vec<(f64, PathBuf, Option<Scenario>)> = files
        .into_iter()
        .map(|f| {
            let scenario = Scenario::load(&f, &root).ok();
            (
                scenario.as_ref().map_or(0.0, |s| weight(s, &f)),
                f,
                scenario,
            )
        })
        .collect();
    files.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (sweep_all, sizes) = sweep();
    let mut trials = Vec::new();
    let mut judging = Vec::new();
    for (_, file, scenario) in files {
        let name = file
            .strip_prefix(&root)
            .unwrap_or(&file)
            .with_extension("")
            .to_string_lossy()
            .into_owned();
        // A scenario that resizes the terminal, or acts while a reply streams, is about its own
        // geometry: not swept. (The emulator,
        // like xterm, does not reflow: shrinking below the width the recap was drawn at truncates
        // the visible rows, as it would on such a terminal.)
        //
        // The TUI is not swept either: right after `/compress` it erases what is still on screen,
        // so how many messages go missing there depends on the terminal's height (pinned at the
        // scenario's own size).
        let own_geometry = scenario
            .as_ref()
            .is_some_and(|s| s.ui == Ui::Tui || s.steps.iter().any(|st| resizes(&st.action)));
        if !own_geometry && (sweep_all || SWEPT.contains(&name.as_str())) {
            for &(cols, rows) in &sizes {
                let (file, root) = (file.clone(), root.clone());
                trials.push(trial(format!("{name}@{cols}x{rows}{suffix}"), move || {
                    run_at(&file, &root, rows, cols)
                }));
            }
        }
        // The TUI runs on Node.js; without it on the client's PATH the trial is skipped with a
        // note (as the tmux and Chromium tests are), not failed.
        let needs_node = scenario.as_ref().is_some_and(|s| s.ui == Ui::Tui);
        let skip = needs_node && !node_on_client_path();
        if skip && round == 1 {
            eprintln!(
                "note: {name} skipped: the Ink TUI needs `node` (Node.js 20+) on the client's PATH"
            );
        }
        let shared = Shared::default();
        for (order, (judge_name, scenarios, judge)) in JUDGES.into_iter().enumerate() {
            if !scenarios.contains(&name.as_str()) {
                continue;
            }
            let (file, root, shared, name) =
                (file.clone(), root.clone(), shared.clone(), name.clone());
            judging.push((
                order,
                trial(format!("{judge_name}/{name}{suffix}"), move || {
                    judge_run(&file, &root, &name, &shared, judge)
                })
                .with_ignored_flag(skip),
            ));
        }
        let root = root.clone();
        trials.push(
            trial(format!("{name}{suffix}"), move || {
                run_one(&file, &root, &shared)
            })
            .with_ignored_flag(skip),
        );
    }
    // The judges in the order of [`JUDGES`], the longest first.
    judging.sort_by_key(|&(order, _)| order);
    (trials, judging.into_iter().map(|(_, t)| t).collect())
}

/// A scenario's expected run time, in about seconds, to start the longest trials first: a
/// client launch (an export runs the client too) is ≈ 4 s of the client's CPU, a turn or a
/// command about 1 s, a settle its quiet time; the TUI's frames cost it half as much again, and a
/// terminal that answers late (`[terminal] answer_after_ms`) about 15 s more.
fn weight(scenario: &Scenario, file: &Path) -> f64 {
    let answers_late = std::fs::read_to_string(file)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .is_some_and(|t| {
            t.get("terminal")
                .and_then(|t| t.get("answer_after_ms"))
                .is_some()
        });
    let steps: f64 = scenario
        .steps
        .iter()
        .map(|step| match &step.action {
            Action::Launch { .. } | Action::Export(_) => 4.0,
            Action::Resume(_) => 2.0,
            Action::Say { .. } | Action::Command { .. } => 1.0,
            Action::Settle { quiet_ms } => *quiet_ms as f64 / 1000.0,
            _ => 0.5,
        })
        .sum();
    let steps = match scenario.ui {
        Ui::Tui => steps * 1.5,
        Ui::Classic => steps,
    };
    if answers_late {
        steps + 15.0
    } else {
        steps
    }
}

/// Whether a step makes the scenario's numbers depend on its own geometry: a `resize` step, or a
/// `say` step that acts while its reply streams (a resize or a drag then; and after Ctrl-C the
/// classic CLI repaints one screenful, so what lands in the history twice depends on the height).
fn resizes(action: &Action) -> bool {
    match action {
        Action::Resize { .. } => true,
        Action::Say { during, .. } => !during.is_empty(),
        _ => false,
    }
}

/// Whether `node` is in a directory of the PATH the harness gives the client.
fn node_on_client_path() -> bool {
    let env = hermes_e2e::testing::client::environment(Path::new("/"), Path::new("/"));
    env.iter()
        .filter(|(k, _)| k == "PATH")
        .flat_map(|(_, v)| v.split(':'))
        .any(|dir| Path::new(dir).join("node").is_file())
}

/// Scenarios swept over terminal sizes by default: a clean one, a known bug, and the known bug on
/// conversations that share and repeat text.
const SWEPT: &[&str] = &[
    "compress/rotating_resume",
    "compress/inplace_resume",
    // Shared and repeated text (a code block, a table, Chinese) wraps differently at every width:
    // the count of the carried reply must not change.
    "compress/rotating_resume_repetitive",
    "compress/rotating_resume_tables",
];

/// The geometry sweep: `HERMES_E2E_SWEEP` unset — the [`SWEPT`] scenarios at a narrow/short and a
/// wide/tall size; `full` — every scenario at four sizes; `off` — none.
fn sweep() -> (bool, Vec<(u16, u16)>) {
    match std::env::var("HERMES_E2E_SWEEP").as_deref() {
        Ok("off") => (false, Vec::new()),
        Ok("full") => (true, vec![(60, 20), (80, 24), (120, 40), (200, 60)]),
        _ => (false, vec![(80, 24), (160, 50)]),
    }
}

/// A scenario at another terminal size: the same pinned numbers must hold (a display bug does not
/// depend on where the scrollback boundary falls). No snapshots: wrapping differs by width.
fn run_at(file: &Path, root: &Path, rows: u16, cols: u16) -> Result<(), Failed> {
    let mut scenario = Scenario::load(file, root).map_err(|e| e.to_string())?;
    scenario.rows = rows;
    scenario.cols = cols;
    scenario.name = format!("{}@{cols}x{rows}", scenario.name);
    let options = RunOptions {
        out_root: runner::default_out_root(),
        ..Default::default()
    };
    let result = runner::run(&scenario, &options);
    if result.passed {
        Ok(())
    } else {
        Err(failure(&result).into())
    }
}

/// The failure message of a trial: the text report, and the HTML report written for it (so a
/// JUnit entry, e.g. `cargo nextest run --profile ci`, names the page to open).
fn failure(result: &runner::ScenarioResult) -> String {
    let mut text = report::text(result);
    let dir = runner::default_out_root()
        .join("reports")
        .join(runner::slug(&result.scenario, "check"));
    match hermes_e2e::report::html::write_report(&dir, std::slice::from_ref(result)) {
        Ok(index) => text.push_str(&format!("  report:   {}\n", index.display())),
        Err(e) => text.push_str(&format!("  report:   not written ({e})\n")),
    }
    text
}

/// The run of `scenario` into the default output root, made once for the trials sharing `shared`.
fn shared_run<'a>(scenario: &Scenario, shared: &'a Shared) -> &'a runner::ScenarioResult {
    shared.get_or_init(|| {
        let options = RunOptions {
            out_root: runner::default_out_root(),
            ..Default::default()
        };
        runner::run(scenario, &options)
    })
}

/// A judging trial ([`JUDGES`]): `judge` on the run of the scenario `name` (the run's own failure
/// is its own trial's).
fn judge_run(
    file: &Path,
    root: &Path,
    name: &str,
    shared: &Shared,
    judge: Judge,
) -> Result<(), Failed> {
    let scenario = Scenario::load(file, root).map_err(|e| e.to_string())?;
    let result = shared_run(&scenario, shared);
    if !result.passed {
        return Err(format!(
            "the run of `{name}` failed (its trial `{name}` fails with it):\n{}",
            report::text(result)
        )
        .into());
    }
    judge(name, result);
    Ok(())
}

fn run_one(file: &Path, root: &Path, shared: &Shared) -> Result<(), Failed> {
    let scenario = Scenario::load(file, root).map_err(|e| e.to_string())?;
    let result = shared_run(&scenario, shared);
    if !result.passed {
        return Err(failure(result).into());
    }
    kept_database_is_whole(result)?;
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(snapshot_dir());
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_description(format!("{} — {}", scenario.name, scenario.summary));
    settings.bind(|| {
        for check in &result.checks {
            if !after_resume(&scenario, check.line) {
                continue;
            }
            let name = format!(
                "{}@{}",
                scenario.name.replace('/', "__"),
                runner::slug(&check.check.at, "check")
            );
            insta::assert_snapshot!(
                name,
                report::redact(&conversation(&check.transcript.text()))
            );
        }
    });
    Ok(())
}

/// The run's kept `state.db` — the file a maintainer attaches to a bug report — opens read-only
/// with nothing beside it and holds every row of the client's own database read with its
/// write-ahead log. A 0.19 client killed at the end of a run leaves its last rows in the WAL: a
/// copy of the main file alone held 34 of 42 rows in `history/tui_branch_rotating` and
/// `v0_19_branch_rotating`, 22 of 24 in `v0_19_retry_rotating` (measured before snapshots).
fn kept_database_is_whole(result: &runner::ScenarioResult) -> Result<(), Failed> {
    use rusqlite::{Connection, OpenFlags};
    const ROWS: &str = "SELECT id, session_id, role, content FROM messages ORDER BY id";
    type Rows = Vec<(i64, String, String, Option<String>)>;
    fn rows(conn: &Connection) -> rusqlite::Result<Rows> {
        let mut stmt = conn.prepare(ROWS)?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
        rows.collect()
    }
    let kept = result.kept.join("state.db");
    let client_db = result.kept.join("home").join("state.db");
    if !client_db.is_file() {
        return Ok(()); // the client never made its database (a launch that failed by design)
    }
    for suffix in ["-wal", "-shm", "-journal"] {
        let sibling = result.kept.join(format!("state.db{suffix}"));
        if sibling.exists() {
            return Err(format!("`{}` is kept beside the snapshot", sibling.display()).into());
        }
    }
    let read_kept = Connection::open_with_flags(&kept, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|c| rows(&c))
        .map_err(|e| format!("the kept `{}` does not read alone: {e}", kept.display()))?;
    // The client's database as SQLite reads it, its WAL replayed: from a private copy.
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let copy = dir.path().join("state.db");
    hermes_e2e::store::copy_database(&client_db, &copy).map_err(|e| e.to_string())?;
    let read_client = Connection::open(&copy)
        .and_then(|c| rows(&c))
        .map_err(|e| format!("`{}`: {e}", client_db.display()))?;
    if read_kept != read_client {
        return Err(format!(
            "the kept `{}` holds {} messages, the client's database with its WAL {}",
            kept.display(),
            read_kept.len(),
            read_client.len()
        )
        .into());
    }
    Ok(())
}

/// Scenarios whose stored conversation depends on timing, so that their resumed history is
/// pinned by the oracle's numbers only: a message sent while a reply streams under
/// `busy_input_mode: interrupt` cuts the reply where the message lands, and the part stored is
/// that part.
const TIMED_STORE: [&str; 2] = ["stream/interrupt_by_message", "v0_19/interrupt_by_message"];

/// Whether the check at `line` follows a `launch` or `resume` (other checks aside): a resumed
/// history, drawn in one piece from `state.db`. Only those are snapshotted. A live screen (after
/// `/compress`, between turns) depends on output timing — spinners, busy notices and their clears
/// land in different places from run to run — so its numbers are pinned by the oracle only; so
/// does a launch resized while it draws (`during`): which recap rows the client's repaint reaches
/// depends on when the resizes land (`resize/drag_across_compress_resume`: the same numbers in
/// every run, the summary's rows re-wrapped differently).
fn after_resume(scenario: &Scenario, line: usize) -> bool {
    if TIMED_STORE.contains(&scenario.name.as_str()) {
        return false;
    }
    let Some(at) = scenario.steps.iter().position(|s| s.line == line) else {
        return false;
    };
    scenario.steps[..at]
        .iter()
        .rev()
        .find(|s| !matches!(s.action, Action::Check { .. }))
        .is_some_and(|s| match &s.action {
            Action::Launch { during, .. } => during.is_empty(),
            Action::Resume(_) => true,
            _ => false,
        })
}

fn snapshot_dir() -> PathBuf {
    runner::workspace_root().join("snapshots")
}

/// The rendered history below the start-up banner (whose tool list and logo say nothing about the
/// conversation): everything after the banner's `Session: …` line, without the transient progress
/// lines that are a bare i18n key (`cli.chat.initializing_agent`, `cli.session.compress_busy`):
/// whether one of them is still on screen when it scrolls away depends on timing, not on the client.
fn conversation(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with("Session: "))
        .map_or(0, |i| i + 1);
    // Blank lines are dropped: where the client leaves them depends on output timing (spinner
    // clears, hermes-agent 0.19.0), and a snapshot pins what text is drawn, in order.
    // Rotating tips (`✦ Tip: …` and its wrapped lines up to the next blank line, 0.19.0) are random.
    // The banner's right-hand column can run on below the anchor (the tail of an install notice,
    // "… for supported install methods.", indented to that column) or not, depending on where
    // the client's redraw cut it under load: those leading indented lines are not the conversation.
    let start = start
        + lines[start..]
            .iter()
            .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() >= BANNER_COLUMN)
            .count();
    let mut out: Vec<&str> = Vec::new();
    let mut in_tip = false;
    for l in &lines[start..] {
        if l.trim().is_empty() {
            in_tip = false;
            continue;
        }
        if l.trim_start().starts_with("✦ Tip:") {
            in_tip = true;
            out.push("✦ Tip: [TIP]");
            continue;
        }
        if in_tip || is_bare_key(l) {
            continue;
        }
        out.push(l);
    }
    out.join("\n")
}

/// Indentation from which a line below the banner is the banner's right-hand column.
const BANNER_COLUMN: usize = 20;

fn is_bare_key(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("cli.") && !t.contains(' ')
}
