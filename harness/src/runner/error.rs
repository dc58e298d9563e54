//! Why the harness could not do its job — every message of orchestration in one place.
//!
//! [`Error`] is what went wrong (a directory not created, the client would not start, a wait ran
//! past its deadline); [`StepError`] adds the scenario line of the step it happened at. The text of
//! each is what [`ScenarioResult::error`](super::ScenarioResult::error) holds and the report
//! prints.

use std::path::PathBuf;

use crate::client::ClientError;
use crate::driver::DriverError;
use crate::settings::SettingsError;
use crate::store::StoreError;

/// What stopped a run, a `repro` or a `record`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The client could not be provided.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// Driving the client failed (a timeout is reported against the whole step's deadline).
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// Reading a `state.db` failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The user's `config.yaml` could not be read as the client's display settings.
    #[error(transparent)]
    Settings(#[from] SettingsError),
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
    /// A file or directory could not be read.
    #[error("cannot read `{}`", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// What an earlier run left could not be removed.
    #[error("cannot remove `{}`", path.display())]
    Remove {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A file could not be copied.
    #[error("cannot copy `{}`", path.display())]
    Copy {
        /// The file copied from.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The client's `config.yaml` could not be written into its home.
    #[error("cannot write `{}/config.yaml`", home.display())]
    Config {
        /// The client's `HERMES_HOME`.
        home: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The fake model could not listen.
    #[error("cannot start the fake model on 127.0.0.1")]
    Provider(#[source] std::io::Error),
    /// The Ink TUI was asked for and `node` is not on the client's `PATH`.
    #[error("the Ink TUI (`ui = \"tui\"`) needs `node` (Node.js 20 or newer) on the client's PATH `{path}`")]
    NoNode {
        /// The client's `PATH`.
        path: String,
    },
    /// A `launch` step while a client runs.
    #[error("`launch` while the client is running: `quit` first")]
    AlreadyRunning,
    /// A step that needs a client before any `launch`.
    #[error("no client running: add a `launch` step first")]
    NotRunning,
    /// A `type` step on the Ink TUI, whose composer the harness does not read.
    #[error(
        "a `type` step reads the classic CLI's composer; the TUI's is not read (run this \
         scenario with `ui = \"classic\"`)"
    )]
    TypeOnTui,
    /// A `quit` step with no client.
    #[error("`quit` with no client running")]
    QuitNotRunning,
    /// `{session}` in a step before the database holds a session with messages.
    #[error("`{{session}}` used but `state.db` has no session with messages yet")]
    NoSessionYet,
    /// `{banner_session}` in a step before a `quit` step's exit banner printed a session id.
    #[error(
        "`{{banner_session}}` used but no `quit` step before it left an exit banner naming a \
         session (`hermes --resume ID`)"
    )]
    NoBannerYet,
    /// A `say` step's reply was drawn (the client idle again) before a `during` entry's trigger
    /// fired: its action would not have run while the reply streamed.
    #[error(
        "`during` entry {entry} ({trigger}) had not fired when the reply was drawn: \
         slow the stream down or trigger earlier\n--- last screen ---\n{screen}"
    )]
    DuringTooLate {
        /// 1-based index of the entry in `during`.
        entry: usize,
        /// The trigger as written.
        trigger: String,
        /// The visible screen then.
        screen: String,
    },
    /// A `check` step before the database holds a session with messages.
    #[error("`check`: `state.db` has no session with messages")]
    NothingToCheck,
    /// `repro` on a database without a session holding messages.
    #[error("`{}` has no session with messages to resume", db.display())]
    NothingToResume {
        /// The user's `state.db`.
        db: PathBuf,
    },
    /// The client run without a PTY (`export`) could not be started.
    #[error("cannot run `{} {}`", program.display(), args.join(" "))]
    CliSpawn {
        /// The executable.
        program: PathBuf,
        /// Its arguments.
        args: Vec<String>,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The client run without a PTY ran past its deadline (and was killed).
    #[error("`hermes {}` did not finish within {secs:.1} s", args.join(" "))]
    CliTimeout {
        /// Its arguments.
        args: Vec<String>,
        /// The deadline, seconds.
        secs: f64,
    },
    /// Waiting for the client run without a PTY failed.
    #[error("waiting for `hermes {}`", args.join(" "))]
    CliWait {
        /// Its arguments.
        args: Vec<String>,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The client run without a PTY exited unsuccessfully.
    #[error("`hermes {}` failed ({status}); last output:\n{tail}", args.join(" "))]
    CliFailed {
        /// Its arguments.
        args: Vec<String>,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The last lines of its output.
        tail: String,
    },
    /// An exported `.jsonl` file has a line that is not JSON.
    #[error("`{}` is not JSONL", path.display())]
    NotJsonl {
        /// The file.
        path: PathBuf,
        /// What the JSON parser said.
        source: serde_json::Error,
    },
    /// The run's artefacts could not be moved to where its scenario's are kept.
    #[error("cannot publish the run's artefacts to `{}`", kept.display())]
    Publish {
        /// Where the artefacts stayed.
        kept: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// `record` of a run that left no `state.db`.
    #[error("`{scenario}` wrote no state.db (see the verdict: {verdict})")]
    NoDatabase {
        /// The scenario.
        scenario: String,
        /// The run's error, or `no error`.
        verdict: String,
    },
}

/// An [`Error`] at a step of a scenario: says what `error` says, and has its causes.
#[derive(Debug)]
pub struct StepError {
    /// Line of the step in the scenario file; `None` before the first step (preparing the run).
    pub(crate) line: Option<usize>,
    /// What went wrong.
    pub(crate) error: Error,
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.error, f)
    }
}

impl std::error::Error for StepError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.error)
    }
}

impl StepError {
    /// `error` at the step on `line`.
    pub(crate) fn at(line: usize) -> impl FnOnce(Error) -> StepError {
        move |error| StepError {
            line: Some(line),
            error,
        }
    }
}

impl From<Error> for StepError {
    /// An error before the first step.
    fn from(error: Error) -> Self {
        StepError { line: None, error }
    }
}
