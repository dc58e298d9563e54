//! Stage `provider`: an OpenAI-compatible fake model served on 127.0.0.1 (ephemeral port).
//!
//! Input: a [`Script`] from the scenario (user text → reply, the compaction summary, the title).
//! Output: HTTP answers to the client (plain JSON and SSE streaming) and a log of every request and
//! reply — the ground truth of *what was said* ([`Provider::said`]).
//!
//! OWNER: helper "provider" — contract below is fixed; implementation pending.

use std::path::Path;

/// What the fake model answers.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// Chat turns: when the last user message of a chat request contains `user` (trimmed), reply `reply`.
    pub turns: Vec<Turn>,
    /// Text returned for compaction-summary calls.
    pub summary: String,
    /// Title returned for `session_title` calls.
    pub title: String,
}

/// One scripted chat turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// The user's text as typed.
    pub user: String,
    /// The model's reply.
    pub reply: String,
}

/// What kind of call the client made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// A conversation turn (system prompt "You are Hermes Agent…", tools).
    Chat,
    /// Session title generation (`response_format.json_schema.name == "session_title"`).
    Title,
    /// Compaction summary (no Hermes system prompt, no tools).
    Summary,
    /// `GET /v1/models` and other metadata.
    Meta,
    /// Anything unrecognised (answered 404).
    Other,
}

/// One request and the reply sent.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Exchange {
    /// Sequence number, from 0.
    pub seq: usize,
    /// Method and path.
    pub method: String,
    /// Request path.
    pub path: String,
    /// Recognised kind.
    pub kind: CallKind,
    /// Whether the reply was streamed (SSE).
    pub stream: bool,
    /// The last user message of a chat request (None otherwise).
    pub user: Option<String>,
    /// The text replied (None for non-completion calls).
    pub reply: Option<String>,
    /// True when no scripted turn matched and a placeholder reply was sent.
    pub unscripted: bool,
    /// HTTP status sent.
    pub status: u16,
    /// `usage.prompt_tokens` reported.
    pub prompt_tokens: u64,
    /// The request body as received (JSON).
    pub request: serde_json::Value,
}

/// A running fake model; stops serving when dropped.
pub struct Provider {
    _private: (),
}

impl Provider {
    /// Binds 127.0.0.1 on an ephemeral port and starts serving `script` on a background thread.
    pub fn start(script: Script) -> std::io::Result<Provider> {
        let _ = script;
        unimplemented!("provider helper")
    }

    /// The port bound.
    pub fn port(&self) -> u16 {
        unimplemented!("provider helper")
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port())
    }

    /// A snapshot of every exchange so far.
    pub fn log(&self) -> Vec<Exchange> {
        unimplemented!("provider helper")
    }

    /// Number of chat-kind requests answered so far (the driver waits on it).
    pub fn chat_calls(&self) -> usize {
        unimplemented!("provider helper")
    }

    /// What was said: each distinct user text and chat reply once, in first-seen order.
    pub fn said(&self) -> crate::oracle::Said {
        unimplemented!("provider helper")
    }

    /// Writes the log as JSON lines to `path`.
    pub fn write_log(&self, path: &Path) -> std::io::Result<()> {
        let _ = path;
        unimplemented!("provider helper")
    }
}
