//! Faults the fake model injects into chat answers.
//!
//! Which answers get one (counted against [`Turn::fault_times`](super::Turn::fault_times)), how
//! each [`Fault`] transforms a reply, the reader that cuts a stream halfway, and the polling of a
//! hanging answer.

use std::io::{self, Cursor, Read};
use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

use super::reply::{Body, Reply};
use super::script::{match_turn, turn_index};
use super::{CallKind, Exchange, Shared};

/// A fault the fake model injects into a chat answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// HTTP 500 with an OpenAI-shaped error body.
    #[serde(rename = "http_500")]
    Http500,
    /// HTTP 200 whose body (or first stream event) is not valid JSON.
    MalformedJson,
    /// The stream (or JSON body) is cut halfway: the connection closes without the end.
    DropStream,
    /// No answer at all until the fake model shuts down.
    Hang,
    /// A stream whose final chunk is usage-only (`choices: []`, `usage`) and that carries no
    /// `finish_reason` on any chunk, then `[DONE]`: the shape upstream #91373 reports from
    /// vLLM with `stream_options.include_usage`. The text and tool calls arrive whole; a client
    /// that reads the missing `finish_reason` as a cut stream retries or nudges. A JSON (not
    /// streamed) answer is sent unchanged.
    UsageOnlyEnd,
}

/// How often a hanging answer checks whether the fake model is stopping.
const HANG_POLL: Duration = Duration::from_millis(20);

impl Shared {
    /// The fault to inject into the answer logged as `exchange`, counting it against the turn's
    /// `fault_times`: only chat turns that matched a scripted turn with a fault get one.
    pub(super) fn take_fault(&self, exchange: &Exchange) -> Option<Fault> {
        if exchange.kind != CallKind::Chat || exchange.unscripted {
            return None;
        }
        let user = exchange.user.as_deref()?;
        let turn = match_turn(&self.script.turns, user)?;
        let fault = turn.fault?;
        let index = turn_index(&self.script.turns, turn);
        let mut sent = self
            .faults_sent
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let n = sent.entry(index).or_insert(0);
        if turn.fault_times.is_some_and(|max| *n >= max) {
            return None;
        }
        *n += 1;
        Some(fault)
    }

    /// Holds a hanging answer's connection open without a byte until the fake model stops.
    pub(super) fn hang(&self) {
        while !self.stopping.load(Ordering::SeqCst) {
            thread::sleep(HANG_POLL);
        }
    }
}

/// Turns a normal reply into `fault`.
pub(super) fn inject(fault: Fault, reply: Reply, stream: bool) -> Reply {
    match fault {
        Fault::Http500 => Reply::error(
            500,
            "server_error",
            "hermes-e2e fake model: injected fault (HTTP 500)".to_owned(),
        ),
        Fault::MalformedJson if stream => Reply {
            status: 200,
            body: Body::Raw(
                "text/event-stream",
                b"data: {\"id\": \"chatcmpl-broken\", \"choices\": [{\"delta\": \n\n".to_vec(),
            ),
        },
        Fault::MalformedJson => Reply {
            status: 200,
            body: Body::Raw(
                "application/json",
                b"{\"choices\": [{\"message\": ".to_vec(),
            ),
        },
        Fault::DropStream => Reply {
            status: reply.status,
            body: Body::Cut(Box::new(reply.body)),
        },
        Fault::Hang => Reply {
            status: 0,
            body: Body::Hang,
        },
        Fault::UsageOnlyEnd => Reply {
            status: reply.status,
            body: match reply.body {
                Body::Events(events) => Body::Events(usage_only_end(events)),
                Body::Paced(events, delay) => Body::Paced(usage_only_end(events), delay),
                other => other,
            },
        },
    }
}

/// `events` without the chunk that carries `finish_reason`, ending with a usage-only chunk: the
/// one the request asked for (`stream_options.include_usage`), else one made from the first
/// chunk's id and model with zero counts.
pub(super) fn usage_only_end(events: Vec<serde_json::Value>) -> Vec<serde_json::Value> {
    let finishes = |e: &serde_json::Value| {
        e.pointer("/choices/0/finish_reason")
            .is_some_and(|f| !f.is_null())
    };
    let usage_only = |e: &serde_json::Value| {
        e.get("usage").is_some()
            && e.get("choices")
                .and_then(serde_json::Value::as_array)
                .is_some_and(Vec::is_empty)
    };
    let head = events.first().cloned().unwrap_or_default();
    let mut out: Vec<serde_json::Value> = events.into_iter().filter(|e| !finishes(e)).collect();
    if !out.last().is_some_and(usage_only) {
        out.push(serde_json::json!({
            "id": head.get("id").cloned().unwrap_or_default(),
            "object": "chat.completion.chunk",
            "created": head.get("created").cloned().unwrap_or_default(),
            "model": head.get("model").cloned().unwrap_or_default(),
            "choices": [],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }));
    }
    out
}

/// A reader that yields `bytes` up to `cut`, then fails: tiny_http then closes the connection
/// without finishing the response (no final chunk, no `[DONE]`).
pub(super) struct CutReader {
    pub(super) bytes: Cursor<Vec<u8>>,
    pub(super) cut: u64,
}

impl Read for CutReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.cut.saturating_sub(self.bytes.position());
        if left == 0 {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "hermes-e2e fake model: injected fault (stream dropped)",
            ));
        }
        let n = buf.len().min(left as usize);
        self.bytes.read(&mut buf[..n])
    }
}
