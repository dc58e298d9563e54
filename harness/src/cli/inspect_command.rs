//! `inspect`: what a `state.db` holds and what a correct display of it is, without a client.

use std::path::PathBuf;

use super::input::Input;
use super::{out, Exit, Outcome};
use crate::report;
use crate::settings::DisplaySettings;
use crate::store::Store;

/// What `inspect --help` ends with.
pub(crate) const EXIT_STATUS: &str =
    super::exit_status!("\n`inspect` exits 0 when it read the database, 2 when it could not.\n");

/// The arguments of `inspect`.
#[derive(Debug, clap::Args)]
pub(crate) struct InspectArgs {
    /// The `state.db` (never modified; a private copy is read); `-` reads it from stdin.
    #[arg(value_name = "STATE_DB")]
    pub(crate) db: PathBuf,
    /// The session to inspect [default: the most recent one with messages].
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// The user's Hermes `config.yaml`: the resume recap counted is the one its `display:`
    /// settings draw [default: every user and assistant message with text]; `-` reads it from
    /// stdin.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// One JSON object on stdout.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `inspect`: exit 0 with the inspection printed.
pub(crate) fn inspect(args: &InspectArgs) -> Outcome {
    let db = Input::file(&args.db, "STATE_DB", "a Hermes `state.db` file", "state.db")?;
    let config = Input::config(args.config.as_deref())?;
    let store = Store::open(&db.path)?;
    let settings = match &config {
        Some(config) => {
            let version = crate::recording::version_of(&store);
            Some((
                DisplaySettings::from_config_yaml(&config.path, version)?,
                version,
            ))
        }
        None => None,
    };
    let recap = settings.as_ref().map(|(s, v)| (s, *v));
    let i = crate::inspect::inspect_under(&store, args.session.as_deref(), recap)?;
    if args.json {
        // serde_json escapes every C0 control; the JSON stays exact.
        out::json(&serde_json::to_string(&i)?)?;
    } else {
        out::print(&report::printable(&i.text()))?;
    }
    Ok(Exit::Ok)
}
