//! What one stored row contributes to the display.
//!
//! Pass 1 of the projection: what one stored row contributes ([`RowView`]) — its displayed role
//! and text, the internal text it holds (summary, handoff marker, notice), and whether it is a
//! candidate at all (rule 1) — and the readings of stored content it rests on.

use super::{
    Columns, Form, InternalAcc, Role, RowRef, RowView, CONTENT_JSON_PREFIX, EVENT_KINDS,
    HANDOFF_END, HIDDEN_KIND, PRIOR_CONTEXT_END, PRIOR_CONTEXT_HEADER, PRUNED_PLACEHOLDER,
    SUMMARY_PREFIXES, SYSTEM_NOTICE_PREFIX,
};
use crate::store::Row;
use std::borrow::Cow;

/// Pass 1: classifies one row. `None` for rows that never display (`system`); every other row gets
/// a view, with `candidate = false` when rule 1 excludes it.
pub(super) fn row_view(
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
        // The same test as [`RowView::is_carrier`]: the row's reference says so wherever it is.
        let carrier = role == Role::Assistant && !split.live.is_empty();
        internal.add(&split.internal, row, carrier);
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
                    internal.add(n, row, false);
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

    let (superseded, candidate) = candidacy(row, columns);
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

/// Rule 1: which rows are candidates, as `(superseded, candidate)`.
/// - `active = 0, compacted = 0` is a superseded original (its copy carries it forward) or a
///   rewound row (the user took it back): not shown. Without a `compacted` column (databases
///   older than in-place compaction) `active = 0` can only be a rewind.
/// - `display_metadata.model_only` rows are written for the model (micro-compaction's merge
///   of adjacent user turns, whose source rows stay displayed): not shown.
/// - `display_kind = 'hidden'` rows are painted by no surface: not shown.
fn candidacy(row: &Row, columns: Columns) -> (bool, bool) {
    let superseded = if columns.compacted {
        !row.active && !row.compacted
    } else {
        !row.active
    };
    let kind = row.display_kind.as_deref();
    let candidate = !superseded && !is_model_only(row) && kind != Some(HIDDEN_KIND);
    (superseded, candidate)
}

/// A `system` row is never displayed, but a summary stored in one is still internal text.
fn collect_internal_only(row: &Row, raw: &str, internal: &mut InternalAcc) {
    if let Some(split) = split_summary(raw, row.compressed_summary) {
        internal.add(&split.internal, row, false);
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
pub(crate) fn split_notices(content: &str) -> Option<(Vec<&str>, &str)> {
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
pub(super) fn is_model_only(row: &Row) -> bool {
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
fn decode_content(content: Option<&str>) -> Cow<'_, str> {
    let Some(c) = content else {
        return Cow::Borrowed("");
    };
    // Plain text (nearly every row) is borrowed: a gigabyte message is not copied to be read.
    let Some(json) = c.strip_prefix(CONTENT_JSON_PREFIX) else {
        return Cow::Borrowed(c);
    };
    Cow::Owned(match serde_json::from_str::<serde_json::Value>(json) {
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
    })
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

/// The reference to `row`; `carrier` when it is a summary carrier ([`RowView::is_carrier`]).
pub(super) fn row_ref(row: &Row, carrier: bool) -> RowRef {
    RowRef {
        id: row.id,
        session_id: row.session_id.clone(),
        message_uid: row.message_uid.clone(),
        carrier,
    }
}
