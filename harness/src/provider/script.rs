//! What the fake model answers, and to which request.
//!
//! What the fake model answers: the [`Script`] of a scenario, its [`Turn`]s and [`ToolCall`]s, the
//! deterministic tool-call ids, and how a request is matched to the turn it answers — by content
//! only, so that a retry gets the same reply.

use std::time::Duration;

use serde_json::{json, Value};

use super::openai::{message_text, messages, role, Completion};
use super::{Fault, PLACEHOLDER_SUMMARY, UNSCRIPTED_REPLY};

/// What the fake model answers.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// Chat turns: when the last user message of a chat request contains `user` (trimmed), reply `reply`.
    pub turns: Vec<Turn>,
    /// Text returned for compaction-summary calls.
    pub summary: String,
    /// Title returned for `session_title` calls.
    pub title: String,
    /// Model ids served besides the default `MODEL_ID` (listed by `GET /v1/models` and
    /// described by `GET /v1/models/ID`): the names a scenario switches to with `/model NAME`, so
    /// the client finds them in the endpoint's listing. Replies name the model each request asks
    /// for, listed or not.
    pub models: Vec<String>,
}

/// One scripted chat turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Turn {
    /// The user's text as typed.
    pub user: String,
    /// The model's reply.
    pub reply: String,
    /// A fault injected into the answers to this turn instead of the reply.
    pub fault: Option<Fault>,
    /// How many answers get the fault before the reply is sent normally (`None`: every answer,
    /// so the client's retries fail too).
    pub fault_times: Option<u32>,
    /// Tools the model calls before it replies: the first answer to this turn is these calls; the
    /// answer to their results (role `tool`, matched by call id) is `reply`.
    pub tool_calls: Vec<ToolCall>,
    /// How the reply is streamed: `None` — in pieces of 40 characters sent at once; `Some` — in
    /// pieces of `Pace::chunk_chars` with `Pace::delay` before each, each flushed as written.
    pub stream: Option<Pace>,
    /// Text the model sends with its [`Turn::tool_calls`], in the same response (the OpenAI
    /// wire format's `content` beside `tool_calls`): the narration a model writes before it
    /// calls tools ("Let me read the log first."). Streamed before the calls, at the turn's
    /// pace. Empty: the calls come alone (`content: null`).
    pub narration: String,
    /// Further rounds of tool calls: the answer to the results of the calls before (the
    /// turn's own, then each round's in order) is the next round's calls with its narration;
    /// the answer to the last round's results is `reply`. Empty: one round.
    pub rounds: Vec<Round>,
}

/// A further round of tool calls a scripted turn makes ([`Turn::rounds`]): the model's next
/// response after the results of the round before.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Round {
    /// Text sent beside the calls (empty: none), as [`Turn::narration`].
    pub(crate) narration: String,
    /// The calls (at least one).
    pub(crate) tool_calls: Vec<ToolCall>,
}

/// A paced stream: the reply's content in pieces of `chunk_chars` characters, each sent (and
/// flushed) `delay` after the one before it — a model that takes its time, so that the client
/// draws the reply while the harness acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Characters of reply per content chunk (at least 1).
    pub(crate) chunk_chars: usize,
    /// The pause before each content chunk.
    pub(crate) delay: Duration,
}

/// One tool call a scripted turn makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The tool's function name, as the client offers it (e.g. `read_file`).
    pub(crate) name: String,
    /// Its arguments, a JSON object.
    pub(crate) arguments: Value,
}

/// The id of the `index`-th call of the `turn`-th scripted turn. Deterministic, so that the answer
/// to the tool results finds its turn by id even when compaction has summarised away the user
/// message that asked for the calls.
fn tool_call_id(turn: usize, index: usize) -> String {
    format!("call_hermes_e2e_{turn}_{index}")
}

/// The id of the `index`-th call of round `round` of the `turn`-th scripted turn: round 0 (the
/// turn's own calls) as [`tool_call_id`], a further round with `_r{round}` after it.
fn round_call_id(turn: usize, round: usize, index: usize) -> String {
    if round == 0 {
        tool_call_id(turn, index)
    } else {
        format!("call_hermes_e2e_{turn}_{index}_r{round}")
    }
}

/// The round a [`round_call_id`] names (0 for the turn's own calls).
fn round_of_tool_call_id(id: &str) -> usize {
    id.strip_prefix("call_hermes_e2e_")
        .and_then(|rest| rest.rsplit_once("_r"))
        .and_then(|(_, round)| round.parse().ok())
        .unwrap_or(0)
}

/// The turn index a [`tool_call_id`] names.
fn turn_of_tool_call_id(id: &str) -> Option<usize> {
    let rest = id.strip_prefix("call_hermes_e2e_")?;
    rest.split_once('_')?.0.parse().ok()
}

/// What the script answers to one completion request.
pub(super) struct Answer {
    /// The text replied: the reply, or with tool calls the turn's narration (often empty).
    pub(super) text: String,
    /// The user text to log: the last user message of a chat request, or — for the results of a
    /// scripted turn's tool calls — that turn's own `user`; `None` for title and summary calls.
    pub(super) user: Option<String>,
    /// True when no scripted turn matched and [`UNSCRIPTED_REPLY`] is sent.
    pub(super) unscripted: bool,
    /// The tool calls made instead of a reply, in the OpenAI shape (`id`, `type`, `function`).
    pub(super) calls: Vec<Value>,
    /// How the reply is streamed: the pace of the scripted turn it comes from (`None`: at once).
    pub(super) pace: Option<Pace>,
}

impl Script {
    /// Every model id the fake serves: [`MODEL_ID`](super::MODEL_ID) first, then
    /// [`Script::models`] in order, each once.
    pub(super) fn model_ids(&self) -> Vec<&str> {
        let mut ids = vec![super::MODEL_ID];
        for id in &self.models {
            if !ids.contains(&id.as_str()) {
                ids.push(id);
            }
        }
        ids
    }

    /// The answer to a completion request of `kind`: for a chat turn, the results of a scripted
    /// turn's calls get its reply, then the matched turn's calls or reply, then the rest of a cut
    /// reply, then [`UNSCRIPTED_REPLY`]; the title or the summary (or [`PLACEHOLDER_SUMMARY`]) for
    /// the others.
    pub(super) fn answer(&self, kind: Completion, request: &Value) -> Answer {
        let mut calls: &[ToolCall] = &[];
        let mut call_turn = 0;
        let mut call_round = 0;
        let mut pace = None;
        let (text, user, unscripted) = match kind {
            Completion::Chat => {
                let user = last_user_text(request);
                if let Some((turn, round)) = answered_tool_calls(request, &self.turns) {
                    // The results of a scripted turn's calls: its next round, or its reply,
                    // whatever compaction did to the user message before them.
                    pace = turn.stream;
                    match turn.rounds.get(round) {
                        Some(next) => {
                            calls = &next.tool_calls;
                            call_turn = turn_index(&self.turns, turn);
                            call_round = round + 1;
                            (next.narration.clone(), Some(turn.user.clone()), false)
                        }
                        None => (turn.reply.clone(), Some(turn.user.clone()), false),
                    }
                } else {
                    match user.as_deref().and_then(|t| match_turn(&self.turns, t)) {
                        Some(turn) if !turn.tool_calls.is_empty() => {
                            calls = &turn.tool_calls;
                            call_turn = turn_index(&self.turns, turn);
                            pace = turn.stream;
                            (turn.narration.clone(), user, false)
                        }
                        Some(turn) => {
                            pace = turn.stream;
                            (turn.reply.clone(), user, false)
                        }
                        None => match continuation(request, &self.turns) {
                            Some(rest) => (rest, user, false),
                            None => (UNSCRIPTED_REPLY.to_owned(), user, true),
                        },
                    }
                }
            }
            Completion::Title => (title_reply(request, &self.title), None, false),
            Completion::Summary if self.summary.trim().is_empty() => {
                (PLACEHOLDER_SUMMARY.to_owned(), None, false)
            }
            Completion::Summary => (self.summary.clone(), None, false),
        };
        let calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(index, call)| {
                json!({
                    "id": round_call_id(call_turn, call_round, index),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments.to_string()},
                })
            })
            .collect();
        Answer {
            text,
            user,
            unscripted,
            calls,
            pace,
        }
    }
}

/// The position of `turn` (a reference into `turns`) in the script.
pub(super) fn turn_index(turns: &[Turn], turn: &Turn) -> usize {
    turns
        .iter()
        .position(|t| std::ptr::eq(t, turn))
        .unwrap_or_default()
}

/// The scripted turn whose tool calls a request answers, with the round of those calls (0: the
/// turn's own): its last message is a tool result (role `tool`) whose `tool_call_id` is one of
/// ours.
fn answered_tool_calls<'a>(request: &Value, turns: &'a [Turn]) -> Option<(&'a Turn, usize)> {
    let last = messages(request).last()?;
    if role(last) != "tool" {
        return None;
    }
    let id = last.get("tool_call_id").and_then(Value::as_str)?;
    Some((
        turns.get(turn_of_tool_call_id(id)?)?,
        round_of_tool_call_id(id),
    ))
}

/// The rest of a scripted reply, when the request asks to continue one that was cut off: the
/// client's continuation prompt (`[System: …` as the last user message, e.g. "The previous
/// response was cut off by a network error mid-stream — … Continue exactly …") after an assistant
/// message that is a prefix of a scripted reply. A real model continues where it stopped; so does
/// the fake.
fn continuation(request: &Value, turns: &[Turn]) -> Option<String> {
    let messages = messages(request);
    let last = messages.last()?;
    if role(last) != "user" || !message_text(last).trim_start().starts_with("[System:") {
        return None;
    }
    let partial = messages
        .iter()
        .rev()
        .skip(1)
        .find(|m| role(m) == "assistant")
        .map(message_text)?;
    let partial = partial.trim();
    if partial.is_empty() {
        return None;
    }
    turns.iter().find_map(|t| {
        let reply = t.reply.trim();
        reply
            .strip_prefix(partial)
            .filter(|rest| !rest.is_empty())
            .map(str::to_owned)
    })
}

/// The text of the last `user` message, if there is one.
fn last_user_text(request: &Value) -> Option<String> {
    messages(request)
        .iter()
        .rev()
        .find(|m| role(m) == "user")
        .map(message_text)
}

/// The scripted turn a user message answers to, by content only (so a retry gets the same reply).
///
/// A turn whose `user` equals the message (both trimmed) wins. Otherwise, of the turns whose
/// `user` the message contains, the one whose last occurrence ends latest wins (the client may
/// prepend notes to what was typed), then the longest (so "hi" does not steal "say hi"), then the
/// first in the script. Turns with an empty `user` never match.
pub(super) fn match_turn<'a>(turns: &'a [Turn], text: &str) -> Option<&'a Turn> {
    let text = text.trim();
    if let Some(turn) = turns
        .iter()
        .find(|t| !t.user.trim().is_empty() && t.user.trim() == text)
    {
        return Some(turn);
    }
    let mut best: Option<(usize, usize, &Turn)> = None;
    for turn in turns {
        let wanted = turn.user.trim();
        if wanted.is_empty() {
            continue;
        }
        if let Some(at) = text.rfind(wanted) {
            let candidate = (at + wanted.len(), wanted.len(), turn);
            let better = match best {
                None => true,
                Some((end, len, _)) => (candidate.0, candidate.1) > (end, len),
            };
            if better {
                best = Some(candidate);
            }
        }
    }
    best.map(|(_, _, turn)| turn)
}

/// The content of a title reply.
///
/// The client parses `{"title": …}` strictly first and falls back to the first prose line
/// (`agent/title_generator.py`, `_extract_title_text`); an older client asking for prose would
/// store JSON verbatim. So: JSON when the request asks for JSON (a `response_format`, or a prompt
/// that shows `{"title": …}`), the bare title otherwise.
pub(super) fn title_reply(request: &Value, title: &str) -> String {
    let wants_json = request.get("response_format").is_some()
        || messages(request)
            .iter()
            .any(|m| message_text(m).contains("{\"title\""));
    if wants_json {
        json!({ "title": title }).to_string()
    } else {
        title.to_owned()
    }
}
