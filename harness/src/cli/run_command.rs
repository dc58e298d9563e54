//! The `run` command.
//!
//! `run`: scenarios run on the real client, each verdict printed as soon as it and those before
//! it are done.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{out, Error, Exit, Outcome};
use crate::client::Ui;
use crate::runner::{self, RunOptions, ScenarioResult};
use crate::scenario::{self, Scenario};
use crate::terminal::{Size, Terminal};

/// What `run --help` ends with.
pub(crate) const EXIT_STATUS: &str = super::exit_status!(
    "\n`run` exits 1 when a scenario's checks differ from its expectations, 2 when a run stopped\n\
     before its verdict (the report says where and why).\n"
);

/// The arguments of `run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// Scenario files or directories (searched for `*.toml`) [default: every bundled scenario].
    pub(crate) paths: Vec<PathBuf>,
    /// One JSON object per scenario per line on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    /// Client spec overriding the scenarios': `DIST==VERSION` of any distribution of the client
    /// on PyPI (`hermes-agent==0.19.0`; a fork, its executable found from its entry points) or a
    /// path to `hermes`.
    #[arg(long, value_name = "SPEC")]
    pub(crate) client: Option<String>,
    /// Where to keep artefacts [default: `target/hermes-e2e`].
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Terminal size overriding the scenarios' (the pinned numbers must hold at any size).
    #[arg(long, value_name = "COLSxROWS")]
    pub(crate) size: Option<Size>,
    /// The client's interface, overriding the scenarios'.
    #[arg(long, value_enum)]
    pub(crate) ui: Option<Ui>,
    /// The emulator the checks read, overriding the scenarios' (both are fed; a check notes
    /// when their transcripts differ).
    #[arg(long, value_enum)]
    pub(crate) terminal: Option<Terminal>,
    /// Also write an HTML report into this directory (`index.html`).
    #[arg(long, value_name = "DIR")]
    pub(crate) report: Option<PathBuf>,
    /// Scenarios run at once [default: the number of cores, as `cargo test` does]. Each has its
    /// own client home, database, port and terminal; verdicts print in the scenarios' order as
    /// soon as they and those before them are done.
    #[arg(short = 'j', long, value_name = "N")]
    pub(crate) jobs: Option<NonZeroUsize>,
    /// After the run, rewrite the `expect` pins of the checks whose numbers changed to what the
    /// run measured, printing each change first (`old → new`, the verdict); a scenario that
    /// errored is refused. Exit 0 when every pin holds afterwards.
    #[arg(long, conflicts_with_all = ["expect_correct", "client", "size", "ui", "terminal"])]
    pub(crate) bless: bool,
    /// Every check expects a correct display (every finding 0, no cause; row pins as bounds)
    /// instead of its pins: for an unreleased client build (`--client PATH/TO/hermes`).
    #[arg(long)]
    pub(crate) expect_correct: bool,
}

/// `run`: exit 0 when every scenario passed, 1 when one failed, 2 when one stopped before its
/// verdict.
pub(crate) fn run(args: RunArgs) -> Outcome {
    let root = super::scenarios_root();
    let loaded = load_scenarios(&args, &root)?;
    let out_root = args.out.clone().unwrap_or_else(runner::default_out_root);
    let jobs = args
        .jobs
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get)
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
            out::note(&format!("client {spec} …"));
        }
        // A failure here is reported by each scenario that needs the client.
        let _ = crate::client::resolve(spec);
    }
    let results = run_all(&loaded, jobs, &args, &out_root)?;
    let failed = results.iter().filter(|r| !r.passed).count();
    if let Some(dir) = &args.report {
        let index = super::write_report(dir, &results)?;
        if !args.json {
            out::println(&format!("report: {}", index.display()))?;
        }
    }
    if !args.json {
        out::println(&format!(
            "\n{} scenario(s): {} passed, {} failed",
            loaded.len(),
            loaded.len() - failed,
            failed
        ))?;
    }
    if args.bless {
        let mut text = String::new();
        let settled = runner::bless::bless_into(&results, &mut text);
        if args.json {
            out::note_text(&text);
        } else {
            out::print(&crate::report::printable(&text))?;
        }
        return Ok(Exit::held(settled));
    }
    Ok(Exit::of(&results))
}

/// The scenarios of `run`'s paths (default: every bundled scenario), with `--size`, `--ui` and
/// `--terminal` applied; the first that does not load is the error.
fn load_scenarios(args: &RunArgs, root: &Path) -> Result<Vec<Scenario>, Error> {
    let paths = if args.paths.is_empty() {
        vec![root.to_owned()]
    } else {
        args.paths.clone()
    };
    let files = scenario::discover(&paths)?;
    let mut loaded = Vec::new();
    for f in &files {
        let mut s = Scenario::load(f, root)?;
        if let Some(size) = args.size {
            s.cols = size.cols;
            s.rows = size.rows;
            s.name = format!("{}@{size}", s.name);
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
    // Files outside `scenarios/` are named by their stem: two with one stem get a suffix.
    scenario::unique_names(&mut loaded);
    Ok(loaded)
}

/// The flags of `args` that change a scenario before it runs (`--size`, `--ui`, `--terminal`),
/// as the rerun line repeats them.
fn changing_flags(args: &RunArgs) -> Vec<String> {
    let mut flags = Vec::new();
    if let Some(size) = args.size {
        flags.push(format!("--size {size}"));
    }
    if let Some(ui) = args.ui {
        flags.push(format!("--ui {}", ui.name()));
    }
    if let Some(terminal) = args.terminal {
        flags.push(format!("--terminal {}", terminal.name()));
    }
    flags
}

/// Runs `loaded` on `jobs` threads and prints each verdict, in the scenarios' order, as soon as
/// it and those before it are done; the results in that order. When stdout is closed (its
/// reader went away) no further scenario starts; the ones running finish (their clients
/// stopped) and the error is [`Error::Closed`].
fn run_all(
    loaded: &[Scenario],
    jobs: usize,
    args: &RunArgs,
    out_root: &Path,
) -> Result<Vec<ScenarioResult>, Error> {
    let json = args.json;
    let board = Board::new(jobs, json);
    let mut failed = None;
    let results = runner::run_in_order(
        loaded,
        jobs,
        |worker| RunOptions {
            client: args.client.clone(),
            out_root: out_root.to_owned(),
            progress: board.progress(worker),
            expect_correct: args.expect_correct,
            flags: changing_flags(args),
        },
        |worker, s| board.set(worker, s.map(|s| format!("{} …", s.name))),
        |result| {
            board.clear();
            match super::print_result(result, json) {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        },
    );
    board.clear();
    match failed {
        Some(e) => Err(e),
        None => Ok(results),
    }
}

/// What every running scenario is doing, as one line on a terminal (silent off a terminal and
/// with `--json`): `[2 running] compress/rotating_resume: step 5 … │ v0_19/inplace_resume: …`.
struct Board {
    lines: Arc<Mutex<Vec<Option<String>>>>,
    line: out::Progress,
}

impl Board {
    fn new(workers: usize, json: bool) -> Board {
        Board {
            lines: Arc::new(Mutex::new(vec![None; workers])),
            line: out::Progress::new(json, 160),
        }
    }

    /// Sets what `worker` is doing and redraws.
    fn set(&self, worker: usize, line: Option<String>) {
        Self::update(&self.lines, self.line, worker, line);
    }

    fn update(
        lines: &Mutex<Vec<Option<String>>>,
        shown: out::Progress,
        worker: usize,
        line: Option<String>,
    ) {
        let mut lines = lines.lock().unwrap_or_else(|e| e.into_inner());
        lines[worker] = line;
        if !shown.live() {
            return;
        }
        let running: Vec<&str> = lines.iter().flatten().map(String::as_str).collect();
        shown.show(&format!(
            "[{} running] {}",
            running.len(),
            running.join(" │ ")
        ));
    }

    /// The progress callback of `worker`'s current run.
    fn progress(&self, worker: usize) -> Option<runner::Progress> {
        if !self.line.live() {
            return None;
        }
        let (lines, shown) = (self.lines.clone(), self.line);
        Some(Arc::new(move |line: &str| {
            Board::update(&lines, shown, worker, Some(line.to_owned()));
        }))
    }

    /// Clears the line before something is printed.
    fn clear(&self) {
        self.line.clear();
    }
}
