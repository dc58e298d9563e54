//! The OpenAI wire format as the fake model reads and writes it.
//!
//! A request's messages and their text, the kind of a completion request, `usage`, completion
//! bodies and SSE chunks, the model object of `GET /v1/models`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::{CallKind, MODEL_ID, PROMPT_OVERHEAD_TOKENS};

/// Context length advertised by `GET /v1/models`; matches the `context_length` the harness writes
/// into the client's config, so both sources agree.
const CONTEXT_LENGTH: u64 = 131_072;

/// Characters of reply per SSE content chunk of an unpaced stream; several chunks per reply
/// exercise the client's delta reassembly the way a real model does.
pub(super) const SSE_PIECE_CHARS: usize = 40;

/// What the system prompt of every chat turn of the real client starts with
/// (`agent/prompt_builder.py`, `hermes_cli/default_soul.py`).
const HERMES_SYSTEM_MARKER: &str = "You are Hermes Agent";

/// The opening of the compaction-summary prompt (`agent/context_compressor.py`,
/// `_build_summary_prompt`), sent as the only message, role user, without tools.
const SUMMARY_PROMPT_MARKER: &str = "You are a summarization agent";

/// Openings of title-generation system prompts: 0.22 (`agent/title_generator.py`,
/// `_TITLE_PROMPT_TEMPLATE`) and the prose "Generate a short, descriptive title…" prompt of
/// older title generators (not verified against 0.19.0, which is not installed here).
const TITLE_PROMPT_MARKERS: [&str; 2] = [
    "You name chat sessions",
    "Generate a short, descriptive title",
];

/// The `response_format.json_schema.name` of the client's title call.
const TITLE_SCHEMA_NAME: &str = "session_title";

/// The messages of a request (none when `messages` is missing or not a list).
pub(super) fn messages(request: &Value) -> &[Value] {
    request
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The role of a message (`""` when it has none).
pub(super) fn role(message: &Value) -> &str {
    message.get("role").and_then(Value::as_str).unwrap_or("")
}

/// Texts of the system (and `developer`, the newer OpenAI name) messages.
fn system_texts(messages: &[Value]) -> impl Iterator<Item = String> + '_ {
    messages
        .iter()
        .filter(|m| matches!(role(m), "system" | "developer"))
        .map(message_text)
}

/// The text of a message whose content is a string or a list of parts, parts joined by newlines
/// as the client itself flattens them (`agent/message_content.py`, `flatten_message_text`).
pub(super) fn message_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(part_text)
            .collect::<Vec<_>>()
            .join("\n"),
        Some(part @ Value::Object(_)) => part_text(part).unwrap_or_default().to_owned(),
        _ => String::new(),
    }
}

/// The text of one content part (`{"type": "text", "text": …}`, `input_text`, or a bare string);
/// images and other parts have none.
fn part_text(part: &Value) -> Option<&str> {
    match part {
        Value::String(text) => Some(text.as_str()),
        Value::Object(fields) => fields.get("text").and_then(Value::as_str),
        _ => None,
    }
    .filter(|text| !text.is_empty())
}

/// Bytes of a message's tool-call names and arguments (an assistant message that called tools).
fn tool_call_bytes(message: &Value) -> usize {
    message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map_or(0, |calls| {
            calls
                .iter()
                .map(|c| {
                    let f = |k: &str| {
                        c.pointer(&format!("/function/{k}"))
                            .and_then(Value::as_str)
                            .map_or(0, str::len)
                    };
                    f("name") + f("arguments")
                })
                .sum()
        })
}

/// The three kinds of completion request the client makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Completion {
    Chat,
    Title,
    Summary,
}

impl From<Completion> for CallKind {
    fn from(kind: Completion) -> CallKind {
        match kind {
            Completion::Chat => CallKind::Chat,
            Completion::Title => CallKind::Title,
            Completion::Summary => CallKind::Summary,
        }
    }
}

/// Recognises the kind of a completion request by its shape.
///
/// - Title: `response_format.json_schema.name == "session_title"` (`agent/title_generator.py`,
///   `_TITLE_RESPONSE_FORMAT`), or — because the client retries without `response_format` when a
///   provider rejects it (`agent/auxiliary_client.py`) — a tool-less request whose system prompt
///   opens like a title prompt.
/// - Summary: the compaction prompt (`agent/context_compressor.py` `_build_summary_prompt`,
///   `agent/micro_compaction.py`: a user message opening "You are a summarization agent", no tools);
///   and, as a fallback, any request with neither tools nor the Hermes system prompt.
/// - Chat: the rest — in practice the Hermes system prompt plus ~21 tool schemas.
pub(super) fn classify(request: &Value) -> Completion {
    let messages = messages(request);
    let has_tools = request
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| !tools.is_empty());
    let title_schema = request
        .pointer("/response_format/json_schema/name")
        .and_then(Value::as_str)
        == Some(TITLE_SCHEMA_NAME);
    if title_schema
        || (!has_tools
            && system_texts(messages).any(|text| {
                let text = text.trim_start();
                TITLE_PROMPT_MARKERS.iter().any(|m| text.starts_with(m))
            }))
    {
        return Completion::Title;
    }
    let summary_prompt = messages.iter().filter(|m| role(m) == "user").any(|m| {
        message_text(m)
            .trim_start()
            .starts_with(SUMMARY_PROMPT_MARKER)
    });
    if !has_tools && summary_prompt {
        return Completion::Summary;
    }
    if has_tools || system_texts(messages).any(|text| text.contains(HERMES_SYSTEM_MARKER)) {
        Completion::Chat
    } else {
        Completion::Summary
    }
}

/// Token counts reported in `usage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Usage {
    pub(super) prompt: u64,
    completion: u64,
}

impl Usage {
    /// About four bytes a token of the conversation (every message but the system prompt, with
    /// tool-call arguments), plus [`PROMPT_OVERHEAD_TOKENS`]: realistic enough that the client's
    /// threshold-based auto-compaction fires as the conversation grows, and deterministic, so a
    /// scenario can pin the turn on which it fires.
    pub(super) fn new(request: &Value, reply: &str) -> Usage {
        let conversation: usize = messages(request)
            .iter()
            .filter(|m| !matches!(role(m), "system" | "developer"))
            .map(|m| message_text(m).len() + tool_call_bytes(m))
            .sum();
        Usage {
            prompt: PROMPT_OVERHEAD_TOKENS + conversation as u64 / 4,
            completion: reply.chars().count() as u64 / 4,
        }
    }

    fn to_json(self) -> Value {
        json!({
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt.saturating_add(self.completion),
        })
    }
}

/// Fields every chunk of one completion shares.
pub(super) struct ChunkHead {
    id: String,
    created: u64,
    model: String,
}

impl ChunkHead {
    pub(super) fn new(request: &Value) -> ChunkHead {
        // Distinct ids per completion, as a real provider sends; the client may key on them.
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let id = format!(
            "chatcmpl-hermes-e2e-{}",
            NEXT_ID.fetch_add(1, Ordering::Relaxed)
        );
        let created = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let model = request
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .unwrap_or(MODEL_ID)
            .to_owned();
        ChunkHead { id, created, model }
    }

    fn chunk(&self, delta: Value, finish_reason: Value) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
        })
    }
}

/// The SSE events of a streamed reply: the role, the content in pieces of `piece_chars`
/// characters, the stop, and the usage chunk (empty `choices`) when the request asked for it.
/// `data: [DONE]` is added when sending.
pub(super) fn stream_events(
    head: &ChunkHead,
    text: &str,
    piece_chars: usize,
    calls: &[Value],
    usage: Option<Usage>,
) -> Vec<Value> {
    let mut events = vec![head.chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(piece_chars.max(1)) {
        let piece: String = piece.iter().collect();
        events.push(head.chunk(json!({ "content": piece }), Value::Null));
    }
    // Each call as a real provider streams it: the id and name first, then the arguments.
    for (index, call) in calls.iter().enumerate() {
        let name = call.pointer("/function/name").cloned().unwrap_or_default();
        let arguments = call
            .pointer("/function/arguments")
            .cloned()
            .unwrap_or_default();
        events.push(head.chunk(
            json!({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        ));
        events.push(head.chunk(
            json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}),
            Value::Null,
        ));
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    events.push(head.chunk(json!({}), json!(finish)));
    if let Some(usage) = usage {
        events.push(json!({
            "id": head.id,
            "object": "chat.completion.chunk",
            "created": head.created,
            "model": head.model,
            "choices": [],
            "usage": usage.to_json(),
        }));
    }
    events
}

/// The body of a complete (not streamed) reply: the text, or — when `calls` is not empty — the
/// tool calls with the text beside them (`content: null` when there is none), and the usage.
pub(super) fn completion_json(
    head: &ChunkHead,
    text: &str,
    calls: Vec<Value>,
    usage: Usage,
) -> Value {
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let mut message = json!({"role": "assistant", "content": text});
    if !calls.is_empty() {
        if text.is_empty() {
            message["content"] = Value::Null;
        }
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": head.id,
        "object": "chat.completion",
        "created": head.created,
        "model": head.model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish,
        }],
        "usage": usage.to_json(),
    })
}

/// A model the fake serves, as `GET /v1/models` lists it.
pub(super) fn model_object(id: &str) -> Value {
    json!({
        "id": id,
        "object": "model",
        "owned_by": "hermes-e2e",
        "context_length": CONTEXT_LENGTH,
    })
}
