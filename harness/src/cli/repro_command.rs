//! `repro`: a user's `state.db` resumed in the real client through every display path.

use std::path::PathBuf;

use super::{Exit, Outcome};
use crate::client::Ui;
use crate::runner;
use crate::scenario;
use crate::terminal::Size;
use crate::triage::probe::default_size;

/// What `repro --help` ends with.
pub(crate) const EXIT_STATUS: &str = super::exit_status!(
    "\n`repro` expects every finding 0 on every display path: 1 means the client misrendered the\n\
     user's conversation (the bug is reproduced).\n"
);

/// How the client is run on a user's database: `repro`'s and `minimize`'s common arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct ClientArgs {
    /// The user's `state.db` (never modified; each run resumes a private copy).
    #[arg(value_name = "STATE_DB")]
    pub(crate) db: PathBuf,
    /// The session to resume [default: the most recent one with messages].
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// The client: a release (`hermes-agent==0.19.0`; any distribution of the client on PyPI as
    /// `DIST==VERSION`, a fork too) or a path to `hermes`.
    #[arg(long, value_name = "SPEC", default_value = scenario::DEFAULT_CLIENT)]
    pub(crate) client: String,
    /// The client's interface.
    #[arg(long, value_enum, default_value_t = Ui::Classic)]
    pub(crate) ui: Ui,
    /// The terminal, `COLSxROWS` [default: 100x40; 100x300 for the TUI, whose resumed screen on
    /// a terminal shorter than the conversation depends on Ink's redraws].
    #[arg(long, value_name = "COLSxROWS")]
    pub(crate) size: Option<Size>,
    /// The user's Hermes `config.yaml`: the client runs with its `display:` settings and the
    /// expectation follows them [default: whole replies in the recap, every exchange].
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// One JSON object on stdout, in the shape of `run --json`.
    #[arg(long)]
    pub(crate) json: bool,
    /// Also write an HTML report into this directory (`index.html`).
    #[arg(long, value_name = "DIR")]
    pub(crate) report: Option<PathBuf>,
}

impl ClientArgs {
    /// The terminal: `--size`, or the interface's default.
    pub(crate) fn size(&self) -> Size {
        self.size.unwrap_or_else(|| default_size(self.ui))
    }
}

/// The arguments of `repro`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReproArgs {
    /// The database and how the client runs on it.
    #[command(flatten)]
    pub(crate) client: ClientArgs,
    /// Where to keep artefacts [default: `target/hermes-e2e`].
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
}

/// `repro`: the verdict of each display path; exit 0 when every one displayed the conversation
/// correctly, 1 when not.
pub(crate) fn repro(args: ReproArgs) -> Outcome {
    let c = &args.client;
    let out_root = args.out.clone().unwrap_or_else(runner::default_out_root);
    let result = runner::repro(
        &c.db,
        c.session.as_deref(),
        &c.client,
        c.ui,
        c.size(),
        &out_root,
        c.config.as_deref(),
    )?;
    if let Some(dir) = &c.report {
        super::write_report(dir, std::slice::from_ref(&result))?;
    }
    super::print_result(&result, c.json)?;
    Ok(Exit::of(std::slice::from_ref(&result)))
}
