//! The recap panel under the display settings.
//!
//! The recap panel: tool calls and events as the recap draws them, and what the classic CLI's
//! resume recap shows of each message under the settings.

use std::collections::HashMap;

use unicode_segmentation::UnicodeSegmentation;

use super::text::{clean_assistant, first_chars, py_prefix_len, py_splitlines, py_strip, sanitize};
use super::{ClientVersion, DisplaySettings, ResumeDisplay};
use crate::display::{LogicalMessage, Role};

// ---------------------------------------------------------------------------------------------
// Tool calls and events.

/// Tool-call function names per stored row id (`messages.id`), in call order.
pub(crate) type ToolCalls = HashMap<i64, Vec<String>>;

/// The function name of every call in a stored `tool_calls` JSON array, in order (`"unknown"` where
/// the client's summary says so: no `function` object, or no string `name`). Unparsable JSON has
/// no calls (the client loads it as `[]`).
#[cfg(test)]
pub(crate) fn tool_call_names(tool_calls_json: &str) -> Vec<String> {
    let Ok(serde_json::Value::Array(calls)) =
        serde_json::from_str::<serde_json::Value>(tool_calls_json)
    else {
        return Vec::new();
    };
    calls
        .iter()
        .map(|tc| {
            tc.get("function")
                .and_then(|f| f.get("name"))
                .and_then(|n| n.as_str())
                .unwrap_or("unknown")
                .to_string()
        })
        .collect()
}

/// The summary the recap appends for an assistant row's tool calls: 0.19
/// `[N tool call(s): a, b, c, d, ...]` (up to four distinct names), iot the bare catalog key.
pub(super) fn tool_summary(names: &[String], version: ClientVersion) -> String {
    match version {
        ClientVersion::V0_19 => {
            let mut distinct: Vec<&str> = Vec::new();
            for n in names {
                if !distinct.contains(&n.as_str()) {
                    distinct.push(n);
                }
            }
            let mut list = distinct
                .iter()
                .take(4)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
            if distinct.len() > 4 {
                list.push_str(", ...");
            }
            let noun = if names.len() == 1 { "call" } else { "calls" };
            format!("[{} tool {noun}: {list}]", names.len())
        }
        ClientVersion::Iot0_22 => {
            if names.len() == 1 {
                "cli.resume.tool_calls_one".into()
            } else {
                "cli.resume.tool_calls_other".into()
            }
        }
    }
}

/// The label the iot recap draws (after `◈ `) for an event row, `None` for rows that are not
/// recap events (and always on 0.19, whose recap has no events). `display_metadata` is the stored
/// JSON; its `display_text` labels delegation and process completions.
#[cfg(test)]
pub(crate) fn event_label(
    version: ClientVersion,
    display_kind: &str,
    display_metadata: Option<&str>,
) -> Option<String> {
    if version != ClientVersion::Iot0_22 {
        return None;
    }
    let key = match display_kind {
        "model_switch" => "cli.resume.event_model_changed",
        "async_delegation_complete" => "cli.resume.event_delegation_completed",
        "process_complete" => "cli.resume.event_process_finished",
        "auto_continue" => "cli.resume.event_resumed_interrupted",
        _ => return None,
    };
    let custom = if matches!(
        display_kind,
        "async_delegation_complete" | "process_complete"
    ) {
        display_metadata
            .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
            .and_then(|m| {
                m.get("display_text")
                    .and_then(|t| t.as_str())
                    .map(str::to_string)
            })
            .filter(|t| !t.is_empty())
    } else {
        None
    };
    Some(sanitize(custom.as_deref().unwrap_or(key)))
}
// ---------------------------------------------------------------------------------------------
// The recap.

/// One item of display history as the recap reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RecapSource {
    /// A message: its role, its text (the stored content; `LogicalMessage::text` is the trimmed
    /// version) and the function names of its tool calls in call order.
    Message {
        /// Displayed role.
        role: Role,
        /// The text.
        text: String,
        /// Tool-call function names (empty for none).
        tool_calls: Vec<String>,
    },
    /// An iot event row (`display_kind` in the recap's event table), drawn as `◈ label`; see
    /// [`event_label`]. Ignored on 0.19.
    #[cfg(test)]
    Event {
        /// The label drawn.
        label: String,
    },
}

impl RecapSource {
    /// The source for a logical message: its text, and the tool calls of the row it is shown from
    /// (else of the first of its rows that has any).
    pub(crate) fn from_message(m: &LogicalMessage, tool_calls: &ToolCalls) -> Self {
        let calls = tool_calls
            .get(&m.shown)
            .or_else(|| m.rows.iter().find_map(|r| tool_calls.get(&r.id)))
            .cloned()
            .unwrap_or_default();
        RecapSource::Message {
            role: m.role,
            text: m.text.clone(),
            tool_calls: calls,
        }
    }
}

/// What the recap makes of one source.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RecapItem {
    /// On the recap panel, as described.
    Shown(Shown),
    /// An entry left out by the `resume_exchanges` window: counted in [`Recap::omitted`], not shown.
    Dropped,
    /// Never an entry of the recap.
    Skipped(Skip),
    /// `resume_display: minimal`: there is no recap.
    Minimal,
}

/// Why a source is not an entry of the recap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Skip {
    /// A tool result (`role = tool`).
    ToolResult,
    /// Neither user nor assistant (`system`, other roles).
    NotConversation,
    /// An assistant row with no visible text and no tool calls (e.g. reasoning only).
    NoVisibleText,
    /// An assistant row with tool calls and no visible text, under `resume_skip_tool_only`.
    ToolOnly,
    /// An event on 0.19, whose recap has no events.
    #[cfg(test)]
    NoEventsOnThisVersion,
}

/// How an entry is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EntryKind {
    /// A user message (dim, "You" label).
    User,
    /// An earlier assistant message (dim, truncated).
    Assistant,
    /// The last assistant entry of the history, inside the window: full text, not dim.
    AssistantLast,
    /// An iot event label (`◈`).
    #[cfg(test)]
    Event,
}

/// An entry as the recap shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Shown {
    /// How it is drawn.
    pub(crate) kind: EntryKind,
    /// Exactly what follows the label (before Rich wraps it): the message part, the truncation
    /// markers and the tool-call summary.
    pub(crate) text: String,
    /// The part of the message's (cleaned) text that is shown, without markers or summary. A line
    /// cut joins the kept lines with `\n`.
    pub(crate) body: String,
    /// `body` without the word the character cut fell into (that word is shown only in part).
    pub(crate) complete: String,
    /// Whether a line or character cut applied.
    pub(crate) truncated: bool,
    /// The tool-call summary shown after the text, if any.
    pub(crate) tool_summary: Option<String>,
}

/// The recap panel of a resume: what the classic CLI prints in "Previous Conversation".
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Recap {
    /// Whether a panel is printed (no: `minimal`, no entries at all, or a [`render_error`](Self::render_error)).
    pub(crate) panel: bool,
    /// The panel title (0.19 `Previous Conversation`, iot the bare key `cli.resume.panel_title`).
    pub(crate) title: String,
    /// Entries left out before the window, as the client counts them (for a negative
    /// `resume_exchanges` this is more than there are entries: the client's arithmetic).
    pub(crate) omitted: u64,
    /// The line printed for them (first line of the panel), when `omitted > 0`.
    pub(crate) omitted_line: Option<String>,
    /// One item per source, in input order.
    pub(crate) items: Vec<RecapItem>,
    /// The panel body's lines as appended, before Rich wraps them (the last is the blank line the
    /// final newline leaves).
    pub(crate) lines: Vec<String>,
    /// Where the client raises while building the panel (0.19 indexes the first line of an empty
    /// entry); nothing is printed then.
    pub(crate) render_error: Option<String>,
}

impl Recap {
    /// The shown items with their input index.
    #[cfg(test)]
    pub(crate) fn shown(&self) -> impl Iterator<Item = (usize, &Shown)> {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(i, it)| match it {
                RecapItem::Shown(s) => Some((i, s)),
                _ => None,
            })
    }
}

/// The classic CLI's resume recap of `messages` (an `Expected`'s logical messages, in display
/// order) under `settings`; `tool_calls` by row id ([`tool_call_names`] of each row; empty if unknown).
pub(crate) fn recap(
    settings: &DisplaySettings,
    version: ClientVersion,
    messages: &[LogicalMessage],
    tool_calls: &ToolCalls,
) -> Recap {
    let sources: Vec<RecapSource> = messages
        .iter()
        .map(|m| RecapSource::from_message(m, tool_calls))
        .collect();
    recap_sources(settings, version, &sources)
}

/// One entry while the recap is built.
struct Entry {
    source: usize,
    shown: Shown,
    /// For an assistant entry: the untruncated text with its summary (the `assistant_last` form).
    full: Option<(String, String)>,
}

/// [`recap`] over explicit sources (raw texts, event rows).
///
/// 0.19 `hermes_cli/cli_agent_setup_mixin.py:536-704`; iot `hermes_cli/cli_agent_setup_mixin.py:147-199`
/// and `:806-859`.
pub(crate) fn recap_sources(
    settings: &DisplaySettings,
    version: ClientVersion,
    sources: &[RecapSource],
) -> Recap {
    let title = match version {
        ClientVersion::V0_19 => "Previous Conversation",
        ClientVersion::Iot0_22 => "cli.resume.panel_title",
    }
    .to_string();
    let mut items: Vec<RecapItem> = Vec::with_capacity(sources.len());
    if settings.resume_display == ResumeDisplay::Minimal || sources.is_empty() {
        let item = if settings.resume_display == ResumeDisplay::Minimal {
            RecapItem::Minimal
        } else {
            RecapItem::Dropped
        };
        return Recap::without_panel(title, vec![item; sources.len()]);
    }

    let mut entries: Vec<Entry> = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        match entry(settings, version, source) {
            Ok(shown) => {
                let full = match shown.0.kind {
                    EntryKind::Assistant => Some(shown.1),
                    _ => None,
                };
                entries.push(Entry {
                    source: i,
                    shown: shown.0,
                    full,
                });
                items.push(RecapItem::Dropped); // replaced below when in the window
            }
            Err(skip) => items.push(RecapItem::Skipped(skip)),
        }
    }
    if entries.is_empty() {
        return Recap::without_panel(title, items);
    }

    // The window: the last 2·N entries; `skipped = len - 2N` when positive.
    let len = entries.len() as i128;
    let omitted_wide = (len - 2 * i128::from(settings.resume_exchanges)).max(0);
    let omitted = u64::try_from(omitted_wide).unwrap_or(u64::MAX);
    let first_kept = usize::try_from(omitted_wide.min(len)).unwrap_or(entries.len());
    // The last assistant entry is shown in full when it is inside the window.
    let last_assistant = entries
        .iter()
        .rposition(|e| e.shown.kind == EntryKind::Assistant);
    if let Some(idx) = last_assistant.filter(|&i| i >= first_kept) {
        let e = &mut entries[idx];
        if let Some((full_text, full_body)) = e.full.take() {
            if !full_text.is_empty() {
                e.shown.kind = EntryKind::AssistantLast;
                e.shown.text = full_text;
                e.shown.body = full_body.clone();
                e.shown.complete = full_body;
                e.shown.truncated = false;
            }
        }
    }

    let omitted_line = (omitted > 0).then(|| match version {
        ClientVersion::V0_19 => format!("  ... {omitted} earlier messages ..."),
        ClientVersion::Iot0_22 => "  cli.resume.earlier_messages".to_string(),
    });
    let kept = entries.drain(..).skip(first_kept);
    let (lines, render_error) = panel_lines(version, omitted_line.as_deref(), kept, &mut items);
    Recap {
        panel: render_error.is_none(),
        title,
        omitted,
        omitted_line,
        items,
        lines,
        render_error,
    }
}

impl Recap {
    /// The recap when no panel is printed: `minimal`, or no entries at all.
    fn without_panel(title: String, items: Vec<RecapItem>) -> Recap {
        Recap {
            panel: false,
            title,
            omitted: 0,
            omitted_line: None,
            items,
            lines: Vec::new(),
            render_error: None,
        }
    }
}

/// The panel body's lines for the entries in the window (`kept`), after the omitted line if any,
/// and where the client raises drawing them; marks each kept entry's item as shown.
fn panel_lines(
    version: ClientVersion,
    omitted_line: Option<&str>,
    kept: impl Iterator<Item = Entry>,
    items: &mut [RecapItem],
) -> (Vec<String>, Option<String>) {
    let mut lines: Vec<String> = Vec::new();
    if let Some(line) = omitted_line {
        lines.push(line.to_string());
        lines.push(String::new());
    }
    let mut render_error = None;
    let (you, hermes) = match version {
        ClientVersion::V0_19 => ("  ● You: ", "  ◆ Hermes: "),
        ClientVersion::Iot0_22 => ("  cli.resume.label_you ", "  cli.resume.label_assistant "),
    };
    for e in kept {
        let text = &e.shown.text;
        match e.shown.kind {
            #[cfg(test)]
            EntryKind::Event => {
                for (k, part) in text.split('\n').enumerate() {
                    lines.push(if k == 0 {
                        format!("  ◈ {part}")
                    } else {
                        part.to_string()
                    });
                }
            }
            kind => {
                let label = if kind == EntryKind::User { you } else { hermes };
                let indent = " ".repeat(label.chars().count());
                let mut parts = py_splitlines(text);
                if parts.is_empty() {
                    if version == ClientVersion::V0_19 {
                        render_error.get_or_insert_with(|| {
                            format!(
                                "IndexError: the 0.19 recap indexes the first line of an empty entry (source {})",
                                e.source
                            )
                        });
                    }
                    parts.push("");
                }
                lines.push(format!("{label}{}", parts[0]));
                for p in &parts[1..] {
                    lines.push(format!("{indent}{p}"));
                }
            }
        }
        items[e.source] = RecapItem::Shown(e.shown);
    }
    lines.push(String::new());
    (lines, render_error)
}

/// The entry of one source, with (for an assistant) its full text and full body; or why it is
/// none.
fn entry(
    settings: &DisplaySettings,
    version: ClientVersion,
    source: &RecapSource,
) -> Result<(Shown, (String, String)), Skip> {
    match source {
        #[cfg(test)]
        RecapSource::Event { label } => {
            if version == ClientVersion::V0_19 {
                return Err(Skip::NoEventsOnThisVersion);
            }
            let text = sanitize(label);
            Ok((
                Shown {
                    kind: EntryKind::Event,
                    text: text.clone(),
                    body: text.clone(),
                    complete: text,
                    truncated: false,
                    tool_summary: None,
                },
                (String::new(), String::new()),
            ))
        }
        RecapSource::Message {
            role,
            text,
            tool_calls,
        } => match role {
            Role::Tool => Err(Skip::ToolResult),
            Role::Other => Err(Skip::NotConversation),
            Role::User => {
                let clean = sanitize(text);
                let cut = cut_chars(&clean, settings.resume_max_user_chars);
                Ok((
                    Shown {
                        kind: EntryKind::User,
                        text: cut.shown,
                        body: cut.body,
                        complete: cut.complete,
                        truncated: cut.truncated,
                        tool_summary: None,
                    },
                    (String::new(), String::new()),
                ))
            }
            Role::Assistant => {
                let clean = clean_assistant(text, version);
                if clean.is_empty() && (settings.resume_skip_tool_only || tool_calls.is_empty()) {
                    return Err(if tool_calls.is_empty() {
                        Skip::NoVisibleText
                    } else {
                        Skip::ToolOnly
                    });
                }
                let summary = (!tool_calls.is_empty()).then(|| tool_summary(tool_calls, version));
                let mut parts: Vec<String> = Vec::new();
                let mut full: Vec<String> = Vec::new();
                let mut shown = Shown {
                    kind: EntryKind::Assistant,
                    text: String::new(),
                    body: String::new(),
                    complete: String::new(),
                    truncated: false,
                    tool_summary: summary.clone(),
                };
                if !clean.is_empty() {
                    full.push(clean.clone());
                    let cut = cut_assistant(
                        &clean,
                        settings.resume_max_assistant_chars,
                        settings.resume_max_assistant_lines,
                    );
                    parts.push(cut.shown);
                    shown.body = cut.body;
                    shown.complete = cut.complete;
                    shown.truncated = cut.truncated;
                }
                if let Some(s) = summary {
                    parts.push(s.clone());
                    full.push(s);
                }
                shown.text = parts.join(" ");
                Ok((shown, (full.join(" "), clean)))
            }
        },
    }
}

/// A text after the recap's cuts.
struct Cut {
    shown: String,
    body: String,
    complete: String,
    truncated: bool,
}

/// `body` cut at `keep` code points of `whole`, and the same without a word the cut split.
fn cut_at(whole: &str, keep: usize) -> (String, String) {
    let body = first_chars(whole, keep);
    let at = body.len();
    if at == whole.len() {
        return (body.to_string(), body.to_string());
    }
    let boundary = whole
        .split_word_bound_indices()
        .map(|(i, _)| i)
        .take_while(|&i| i <= at)
        .last()
        .unwrap_or(0);
    (body.to_string(), py_strip(&whole[..boundary]).to_string())
}

/// The user cut: `text[:U] + "..."` when `len(text) > U` (code points).
fn cut_chars(text: &str, max: i64) -> Cut {
    let n = text.chars().count();
    if i128::try_from(n).unwrap_or(i128::MAX) > i128::from(max) {
        let keep = py_prefix_len(n, max);
        let (body, complete) = cut_at(text, keep);
        Cut {
            shown: format!("{body}..."),
            body,
            complete,
            truncated: true,
        }
    } else {
        Cut {
            shown: text.to_string(),
            body: text.to_string(),
            complete: text.to_string(),
            truncated: false,
        }
    }
}

/// The assistant cut: first the lines (`"\n".join(lines[:L]) + " ..."` when there are more than
/// L), then the characters (`[:C] + "..."` when longer than C code points).
fn cut_assistant(text: &str, max_chars: i64, max_lines: i64) -> Cut {
    let lines = py_splitlines(text);
    let (mut s, content, mut truncated) =
        if i128::try_from(lines.len()).unwrap_or(i128::MAX) > i128::from(max_lines) {
            let joined = lines[..py_prefix_len(lines.len(), max_lines)].join("\n");
            (format!("{joined} ..."), joined, true)
        } else {
            (text.to_string(), text.to_string(), false)
        };
    let mut body = content.clone();
    let mut complete = content.clone();
    let n = s.chars().count();
    if i128::try_from(n).unwrap_or(i128::MAX) > i128::from(max_chars) {
        let keep = py_prefix_len(n, max_chars);
        s = format!("{}...", first_chars(&s, keep));
        let content_len = content.chars().count();
        if keep < content_len {
            (body, complete) = cut_at(&content, keep);
        }
        truncated = true;
    }
    Cut {
        shown: s,
        body,
        complete,
        truncated,
    }
}

/// The messages of `expected` that the classic CLI's resume recap does not draw under
/// `settings` (left out by the `resume_exchanges` window, never an entry, or no recap at all with
/// `resume_display: minimal`): indexes into [`Expected::messages`](crate::display::Expected::messages), for
/// [`crate::oracle::Context::optional`]. Messages the recap draws truncated are not listed: a
/// truncated rendering is a rendering of the message (the oracle counts what it covers).
pub(crate) fn not_on_recap(
    settings: &DisplaySettings,
    version: ClientVersion,
    expected: &crate::display::Expected,
) -> Vec<usize> {
    recap(settings, version, &expected.messages, &ToolCalls::default())
        .items
        .iter()
        .enumerate()
        .filter(|(_, item)| !matches!(item, RecapItem::Shown(_)))
        .map(|(i, _)| i)
        .collect()
}
