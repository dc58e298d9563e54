//! What a minimization step reads and removes.
//!
//! What a minimization step reads of a `state.db` (the sessions, the resumed session's lineage,
//! its rows with their kind and relations), the units it removes (sessions, exchanges, rows),
//! and how a candidate is built from a copy (rusqlite `DELETE`s; the copy only).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::inspect;
use crate::store::{Store, StoreError};

/// One row of the resumed session's lineage, as the minimizer needs it: as `inspect` reads it
/// (id, session, role, kind, state, preview, `message_uid`), with its tool relation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelRow {
    /// The row as `inspect` reads it (its id is kept across candidates: rows are deleted, never
    /// renumbered).
    pub(crate) row: inspect::InspectedRow,
    /// `tool_call_id` (a tool result).
    pub(crate) tool_call_id: Option<String>,
    /// `tool_calls` (an assistant row calling tools; JSON text).
    pub(crate) tool_calls: Option<String>,
}

/// Two rows that are removed together, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tie {
    /// One row.
    pub(crate) a: i64,
    /// The other.
    pub(crate) b: i64,
    /// Why they go together.
    pub(crate) why: String,
    /// `b` is a summary carrier and `a` the row it carries (the text phase shortens the reply in
    /// both together).
    pub(crate) carrier: bool,
}

/// A `state.db` as the minimizer reads it.
#[derive(Debug, Clone)]
pub(crate) struct Model {
    /// Its lineage, root first (as the display read walks it).
    pub(crate) lineage: Vec<String>,
    /// Every session of the file with its `parent_session_id`, oldest first.
    pub(crate) sessions: Vec<(String, Option<String>)>,
    /// The rows of the lineage, by id.
    pub(crate) rows: Vec<ModelRow>,
    /// Rows of the whole file (every session, and rows of no session).
    pub(crate) total_rows: usize,
    /// The relations between lineage rows: a carrier and the row it carries, a tool call and its
    /// result.
    pub(crate) ties: Vec<Tie>,
}

impl Model {
    /// Reads `path` (through a private read-only copy) for `session`.
    pub(crate) fn read(path: &Path, session: &str) -> Result<Model, StoreError> {
        let store = Store::open(path)?;
        let sessions: Vec<(String, Option<String>)> = store
            .sessions()?
            .into_iter()
            .map(|s| (s.id, s.parent_session_id))
            .collect();
        let all_ids: Vec<String> = sessions.iter().map(|(id, _)| id.clone()).collect();
        let total_rows = count_rows(path).unwrap_or(store.rows(&all_ids)?.len());
        let inspection = inspect::inspect(&store, Some(session))?;
        let lineage: Vec<String> = inspection
            .lineage
            .iter()
            .map(|l| l.session.id.clone())
            .collect();
        let stored: HashMap<i64, crate::store::Row> = store
            .rows(&lineage)?
            .into_iter()
            .map(|r| (r.id, r))
            .collect();
        let rows: Vec<ModelRow> = inspection
            .rows
            .iter()
            .map(|r| {
                let s = stored.get(&r.id);
                ModelRow {
                    row: r.clone(),
                    tool_call_id: s.and_then(|s| s.tool_call_id.clone()),
                    tool_calls: s.and_then(|s| s.tool_calls.clone()),
                }
            })
            .collect();
        let ties = ties(&rows, &inspection.carriers);
        Ok(Model {
            lineage,
            sessions,
            rows,
            total_rows,
            ties,
        })
    }

    /// The sessions that may be removed: not in the lineage, and no ancestor (through
    /// `parent_session_id`) of a lineage session — a kept session never loses its parent.
    pub(crate) fn removable_sessions(&self) -> Vec<String> {
        let parent: HashMap<&str, &str> = self
            .sessions
            .iter()
            .filter_map(|(id, p)| p.as_deref().map(|p| (id.as_str(), p)))
            .collect();
        let mut needed: BTreeSet<&str> = BTreeSet::new();
        for id in &self.lineage {
            let mut at = id.as_str();
            // Bounded: a cycle of parents ends the walk.
            while needed.insert(at) {
                match parent.get(at) {
                    Some(p) => at = p,
                    None => break,
                }
            }
        }
        self.sessions
            .iter()
            .map(|(id, _)| id)
            .filter(|id| !needed.contains(id.as_str()))
            .cloned()
            .collect()
    }

    /// `chunk` and every session below one of them (through `parent_session_id`): removing a
    /// session removes its children, which no kept session needs (see
    /// [`Model::removable_sessions`]).
    pub(crate) fn with_descendants(&self, chunk: &[String]) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = chunk.iter().cloned().collect();
        loop {
            let before = out.len();
            for (id, parent) in &self.sessions {
                if parent.as_ref().is_some_and(|p| out.contains(p)) {
                    out.insert(id.clone());
                }
            }
            if out.len() == before {
                return out;
            }
        }
    }

    /// The exchanges of the lineage: a user row with the rows after it up to the next user row
    /// (or the end of its session); rows before a session's first user row form their own unit.
    /// Tied rows ([`Model::ties`]) join their units.
    pub(crate) fn exchange_units(&self) -> Vec<Vec<i64>> {
        let mut base = Vec::with_capacity(self.rows.len());
        let mut n = 0;
        for (i, r) in self.rows.iter().enumerate() {
            let new_session = i > 0 && self.rows[i - 1].row.session_id != r.row.session_id;
            if i > 0 && (r.row.role == "user" || new_session) {
                n += 1;
            }
            base.push(n);
        }
        self.merge(&base)
    }

    /// Single rows of the lineage; tied rows ([`Model::ties`]) form one unit.
    pub(crate) fn row_units(&self) -> Vec<Vec<i64>> {
        let base: Vec<usize> = (0..self.rows.len()).collect();
        self.merge(&base)
    }

    /// Groups the rows by `base[i]` (the group of row `i`), joined through the ties; the groups
    /// in the order of their first row.
    fn merge(&self, base: &[usize]) -> Vec<Vec<i64>> {
        let index: HashMap<i64, usize> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.row.id, i))
            .collect();
        let mut up: Vec<usize> = (0..=base.iter().copied().max().unwrap_or(0)).collect();
        fn find(up: &mut [usize], mut x: usize) -> usize {
            while up[x] != x {
                up[x] = up[up[x]];
                x = up[x];
            }
            x
        }
        for t in &self.ties {
            if let (Some(&a), Some(&b)) = (index.get(&t.a), index.get(&t.b)) {
                let (ra, rb) = (find(&mut up, base[a]), find(&mut up, base[b]));
                up[ra.max(rb)] = ra.min(rb);
            }
        }
        let mut groups: BTreeMap<usize, Vec<i64>> = BTreeMap::new();
        let mut order: Vec<usize> = Vec::new();
        for (i, r) in self.rows.iter().enumerate() {
            let g = find(&mut up, base[i]);
            if !groups.contains_key(&g) {
                order.push(g);
            }
            groups.entry(g).or_default().push(r.row.id);
        }
        order
            .into_iter()
            .filter_map(|g| groups.remove(&g))
            .collect()
    }
}

/// The relations between `rows`: a summary carrier with the row it carries and every row sharing
/// its `message_uid`; a tool result with the assistant row whose `tool_calls` names its
/// `tool_call_id`.
fn ties(rows: &[ModelRow], carriers: &[inspect::Carrier]) -> Vec<Tie> {
    let mut out = Vec::new();
    for c in carriers {
        if let Some(carried) = c.carries {
            out.push(Tie {
                a: carried,
                b: c.row,
                why: format!("row {} is the carrier of row {carried}", c.row),
                carrier: true,
            });
        }
        if let Some(uid) = &c.message_uid {
            for r in rows.iter().map(|r| &r.row) {
                if r.id != c.row && Some(r.id) != c.carries && r.message_uid.as_ref() == Some(uid) {
                    out.push(Tie {
                        a: r.id,
                        b: c.row,
                        why: format!(
                            "row {} shares the message_uid of carrier row {}",
                            r.id, c.row
                        ),
                        carrier: false,
                    });
                }
            }
        }
    }
    for result in rows {
        let Some(call_id) = result.tool_call_id.as_deref().filter(|s| !s.is_empty()) else {
            continue;
        };
        let quoted = format!("\"{call_id}\"");
        // The nearest call before the result (a rotated session's copy of a tool turn repeats
        // its call ids: the copy's result belongs to the copy's call).
        let mut calls = rows.iter().rev().filter(|r| r.row.id < result.row.id);
        if let Some(call) =
            calls.find(|r| r.tool_calls.as_deref().is_some_and(|t| t.contains(&quoted)))
        {
            let (call, result) = (call.row.id, result.row.id);
            out.push(Tie {
                a: call,
                b: result,
                why: format!("row {result} is the result of row {call}'s tool call"),
                carrier: false,
            });
        }
    }
    out
}

/// Rows of `messages` in the file at `path` (our own copy), if it can be counted.
pub(crate) fn count_rows(path: &Path) -> Option<usize> {
    let conn = read_only(path).ok()?;
    conn.query_row("SELECT COUNT(*) FROM messages", [], |r| r.get::<_, i64>(0))
        .ok()
        .and_then(|n| usize::try_from(n).ok())
}

/// What a candidate removes from (or shortens in) the current best.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Removal {
    /// Whole sessions (with their rows and every row of another table naming them).
    pub(crate) sessions: BTreeSet<String>,
    /// Single rows of `messages`.
    pub(crate) rows: BTreeSet<i64>,
    /// New `content` of rows (shortened texts), by row id.
    pub(crate) texts: BTreeMap<i64, String>,
}

impl Removal {
    /// `self` followed by `next`: both removals, `next`'s texts over `self`'s.
    pub(crate) fn then(&self, next: &Removal) -> Removal {
        let mut all = self.clone();
        all.sessions.extend(next.sessions.iter().cloned());
        all.rows.extend(next.rows.iter().copied());
        all.texts
            .extend(next.texts.iter().map(|(id, t)| (*id, t.clone())));
        all
    }
}

/// Building a candidate failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BuildError {
    /// Copying the database failed.
    #[error(transparent)]
    Copy(#[from] StoreError),
    /// SQLite refused a statement on the copy.
    #[error("cannot edit the copy `{}`", path.display())]
    Sqlite {
        /// The copy.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
}

/// Removes `path` and its `-wal`, `-shm` and `-journal` siblings (missing files are fine).
pub(crate) fn remove_database(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

/// Writes `to`: a fresh copy of `from` (with its siblings) without what `removal` names. Rows
/// are deleted one by one (the client's own triggers keep its search index and display order
/// consistent); a removed session's rows go first, then its rows in every other table with a
/// `session_id` column, then the session; `sessions.message_count` (when the column exists) is
/// set to the rows left in each session that lost rows; last, the new texts are written (`UPDATE`,
/// the triggers keep the search index). `from` is only read.
pub(crate) fn build(from: &Path, to: &Path, removal: &Removal) -> Result<(), BuildError> {
    remove_database(to);
    crate::store::copy_database(from, to)?;
    let err = |e: rusqlite::Error| BuildError::Sqlite {
        path: to.to_owned(),
        source: e,
    };
    let mut conn = Connection::open(to).map_err(err)?;
    let tx = conn.transaction().map_err(err)?;
    let mut touched: BTreeSet<String> = BTreeSet::new();
    for id in &removal.rows {
        let session: Option<String> = tx
            .query_row("SELECT session_id FROM messages WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .ok();
        touched.extend(session);
        tx.execute("DELETE FROM messages WHERE id = ?1", [id])
            .map_err(err)?;
    }
    let tables = tables_with_session_id(&tx).map_err(err)?;
    for session in &removal.sessions {
        tx.execute("DELETE FROM messages WHERE session_id = ?1", [session])
            .map_err(err)?;
        for table in &tables {
            tx.execute(
                &format!("DELETE FROM \"{table}\" WHERE session_id = ?1"),
                [session],
            )
            .map_err(err)?;
        }
        tx.execute("DELETE FROM sessions WHERE id = ?1", [session])
            .map_err(err)?;
    }
    for (id, text) in &removal.texts {
        tx.execute(
            "UPDATE messages SET content = ?2 WHERE id = ?1",
            rusqlite::params![id, text],
        )
        .map_err(err)?;
    }
    if has_column(&tx, "sessions", "message_count").map_err(err)? {
        for session in touched.difference(&removal.sessions) {
            tx.execute(
                "UPDATE sessions SET message_count = \
                 (SELECT COUNT(*) FROM messages WHERE session_id = ?1) WHERE id = ?1",
                [session],
            )
            .map_err(err)?;
        }
    }
    tx.commit().map_err(err)?;
    conn.close().map_err(|(_, e)| err(e))
}

/// Rebuilds `path` without its free pages (`VACUUM`): a removed row's text must not survive in
/// the file a maintainer passes on.
pub(crate) fn vacuum(path: &Path) -> Result<(), BuildError> {
    let err = |e: rusqlite::Error| BuildError::Sqlite {
        path: path.to_owned(),
        source: e,
    };
    let conn = Connection::open(path).map_err(err)?;
    conn.execute_batch("VACUUM").map_err(err)?;
    conn.close().map_err(|(_, e)| err(e))
}

/// The ordinary tables other than `messages` and `sessions` with a `session_id` column.
fn tables_with_session_id(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' \
         AND name NOT IN ('messages', 'sessions') AND sql NOT LIKE 'CREATE VIRTUAL%'",
    )?;
    let names: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut out = Vec::new();
    for name in names {
        if has_column(conn, &name, "session_id")? {
            out.push(name);
        }
    }
    Ok(out)
}

fn has_column(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare(&format!("PRAGMA table_info(\"{table}\")"))?;
    let names: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(1))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(names.iter().any(|n| n.eq_ignore_ascii_case(column)))
}

/// Sessions in the file at `path` (our own copy).
#[cfg(test)]
pub(crate) fn count_sessions(path: &Path) -> Option<usize> {
    let conn = read_only(path).ok()?;
    conn.query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get::<_, i64>(0))
        .ok()
        .and_then(|n| usize::try_from(n).ok())
}

/// Texts of rows, by row id.
pub(crate) type Texts = BTreeMap<i64, String>;

/// The text (`content`) of every row of `messages` in the file at `path` (our own copy) that has
/// one, by id.
pub(crate) fn contents(path: &Path) -> Result<Texts, BuildError> {
    let err = |e: rusqlite::Error| BuildError::Sqlite {
        path: path.to_owned(),
        source: e,
    };
    let conn = read_only(path).map_err(err)?;
    let mut stmt = conn
        .prepare("SELECT id, content FROM messages WHERE typeof(content) = 'text'")
        .map_err(err)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
        .map_err(err)?;
    rows.collect::<rusqlite::Result<_>>().map_err(err)
}

/// `path` opened read-only without leaving a trace: a settled file (no `-wal` beside it: our
/// copies, a fixture) is opened `immutable` — SQLite then creates no `-shm`/`-wal` next to it, as
/// it would for a read-only reader of a WAL-mode file; a file with a `-wal` is opened read-only
/// as it is (its log holds rows).
fn read_only(path: &Path) -> rusqlite::Result<Connection> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if Path::new(&wal).exists() {
        return Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY);
    }
    let escaped = path
        .to_string_lossy()
        .replace('%', "%25")
        .replace('?', "%3f")
        .replace('#', "%23");
    Connection::open_with_flags(
        format!("file:{escaped}?immutable=1"),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
    )
}
