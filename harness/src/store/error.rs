//! What can go wrong reading a `state.db`.

use std::path::PathBuf;

/// Everything that can go wrong reading a `state.db`; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be read or copied.
    #[error("cannot read `{path}`")]
    Io {
        /// The user's file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// SQLite refused the file or a query.
    #[error("`{path}` is not a readable SQLite database")]
    Sqlite {
        /// The user's file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The file is certainly not a usable SQLite database (read from its header, before SQLite
    /// opens it).
    #[error("`{path}` is not a readable SQLite database: {reason}")]
    NotSqlite {
        /// The user's file.
        path: PathBuf,
        /// What its header shows, and what was expected.
        reason: String,
    },
    /// A snapshot left its copy in a journal mode that needs siblings beside it.
    #[error("cannot snapshot into `{path}`: its journal mode is `{mode}` after the copy; expected `delete`")]
    Journal {
        /// The snapshot written.
        path: PathBuf,
        /// The journal mode it has.
        mode: String,
    },
    /// The database is SQLite but not a Hermes `state.db` this harness understands.
    #[error("`{path}` is not a Hermes state.db: expected {expected}")]
    Schema {
        /// The user's file.
        path: PathBuf,
        /// What was expected and not found (e.g. "table `messages` with column `role`").
        expected: String,
    },
    /// A session id that is not in the database.
    #[error(
        "`{path}` has no session `{session}`; it holds {}",
        session_list(sessions)
    )]
    NoSuchSession {
        /// The user's file.
        path: PathBuf,
        /// The id asked for.
        session: String,
        /// The sessions it holds, oldest first (for the message).
        sessions: Vec<String>,
    },
    /// A Hermes database without any session.
    #[error(
        "`{path}` is a Hermes state.db with no session in it (its table `sessions` is empty): the \
         client writes one when it \
         starts; give the `state.db` of the home the conversation ran in (`$HERMES_HOME/state.db`, \
         by default ~/.hermes/state.db)"
    )]
    NoSessions {
        /// The user's file.
        path: PathBuf,
    },
}

/// The sessions a database holds, as a message lists them: the newest 10 (`hermes-e2e inspect`
/// lists them all).
fn session_list(sessions: &[String]) -> String {
    const SHOWN: usize = 10;
    match sessions.len() {
        0 => "none".to_owned(),
        n if n <= SHOWN => sessions.join(", "),
        n => format!(
            "{n} sessions, the newest {SHOWN}: {} (`hermes-e2e inspect` lists them all)",
            sessions[n - SHOWN..].join(", ")
        ),
    }
}
