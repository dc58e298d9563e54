//! Stage `provider`: an OpenAI-compatible fake model served on 127.0.0.1 (ephemeral port).
//!
//! Input: a [`Script`] from the scenario (user text → reply, the compaction summary, the title).
//! Output: HTTP answers to the client (plain JSON and SSE streaming) and a log of every request and
//! reply — the ground truth of *what was said* ([`Provider::said`]).
//!
//! Requests are recognised by their shape, never by their order, so a retried request gets the same
//! answer again (see [`CallKind`] and the `classify` notes in `openai.rs`). Every exchange is logged;
//! the log is kept by the scenario as `provider.jsonl`.
//!
//! Only 127.0.0.1 is ever bound: the fake must not be reachable from outside the machine.
//!
//! Where each part lives:
//! - `provider.rs`: the [`Provider`] handle (start, address, log, [`Provider::said`], shutdown), the
//!   logged [`Exchange`] and its [`CallKind`], the public constants.
//! - `reply.rs`: `Reply` and its body, what one request is answered, decided before
//!   anything is written (`faults.rs` transforms it, `http.rs` writes it).
//! - `http.rs`: the tiny_http side — the worker loop, routing a request to its reply, the request
//!   body limit, and how each reply body is written.
//! - `openai.rs`: the OpenAI wire format — a request's messages and their text, the kind of a
//!   completion request (`classify`), `usage`, completion bodies and SSE chunks, the model object.
//! - `script.rs`: [`Script`], [`Turn`], [`ToolCall`] — the scripted answers, the tool-call ids, and
//!   matching a request to the turn it answers.
//! - `faults.rs`: [`Fault`] — which answers get one, how each transforms a reply, the cut stream,
//!   the hang.
//! - `tests.rs`: the unit tests, over raw HTTP against a started fake.

use std::collections::HashMap;
use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

mod faults;
mod http;
mod openai;
mod reply;
mod script;
#[cfg(test)]
mod tests;

pub(crate) use faults::Fault;
pub(crate) use script::{Pace, Round, ToolCall};
pub use script::{Script, Turn};

use http::serve;
use script::match_turn;

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
    pub(crate) seq: usize,
    /// Method and path.
    pub(crate) method: String,
    /// Request path.
    pub(crate) path: String,
    /// Recognised kind.
    pub kind: CallKind,
    /// Whether the reply was streamed (SSE).
    pub(crate) stream: bool,
    /// The last user message of a chat request (None otherwise).
    pub(crate) user: Option<String>,
    /// The text replied (None for non-completion calls, and for tool calls sent without a
    /// narration, [`Turn::narration`]).
    pub(crate) reply: Option<String>,
    /// True when no scripted turn matched and a placeholder reply was sent.
    pub(crate) unscripted: bool,
    /// HTTP status sent.
    pub(crate) status: u16,
    /// When the request reached the fake model: milliseconds since it started.
    pub(crate) received_ms: u64,
    /// When the last event of a paced stream ([`Turn::stream`]) was flushed, before its `[DONE]`:
    /// milliseconds since the fake model started (`None`: not a paced stream, or the client went
    /// away before its end). Noted before `[DONE]` is sent, so a reader that has seen `[DONE]`
    /// finds it here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) last_chunk_ms: Option<u64>,
    /// `usage.prompt_tokens` reported.
    pub(crate) prompt_tokens: u64,
    /// The request body as received (JSON).
    pub(crate) request: serde_json::Value,
    /// The fault injected instead of (or into) the reply, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) fault: Option<Fault>,
    /// Names of the tools called instead of a reply (empty for a text reply).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tool_calls: Vec<String>,
}

/// The model id the fake serves; the client's config names it.
pub(crate) const MODEL_ID: &str = "fake-model";

/// The reply sent to a chat message no scripted [`Turn`] matches. Deterministic so that a retry of
/// the same request gets the same answer and the oracle can recognise it.
pub(crate) const UNSCRIPTED_REPLY: &str = "(hermes-e2e: unscripted message)";

/// The summary sent when the script has none: the client treats empty summary content as a
/// failed compaction, which would hide the behaviour under test behind a fallback path.
pub(crate) const PLACEHOLDER_SUMMARY: &str = "(hermes-e2e: no summary scripted)";

/// Tokens counted for the system prompt and tool schemas of every request, whatever they hold.
///
/// The client's system prompt and tool list differ between runs of the same scenario (measured:
/// the same conversation's request varied by ~3 KB, ≈ 770 tokens), and the client decides
/// automatic compaction on the provider's `prompt_tokens` (plus a rough estimate of what was
/// appended since, `agent/usage_anchor.py`). Counting them as a constant makes the turn on which
/// a `compression.threshold_tokens` is crossed a function of the conversation alone. The value is
/// about what the real 0.22 client sends (≈ 50 KB of system prompt and 21 tool schemas).
pub(crate) const PROMPT_OVERHEAD_TOKENS: u64 = 12_000;

/// Worker threads answering requests. The client may run its title call concurrently with a chat
/// turn (and an auxiliary summary call during one), so one worker is not enough.
const WORKERS: usize = 4;

/// How long `Drop` waits for workers busy with a request (a stalled client) before detaching them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A running fake model; stops serving when dropped.
pub struct Provider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    /// `None` only while dropping: releasing the last handle closes the listening socket.
    server: Option<Arc<tiny_http::Server>>,
    workers: Vec<JoinHandle<()>>,
    /// Each worker sends once when it stops, so `Drop` can wait with a deadline. In a mutex only
    /// so that `Provider` is `Sync` (the runner polls it from other threads).
    stopped: Mutex<mpsc::Receiver<()>>,
}

/// State shared by the workers and the [`Provider`] handle.
struct Shared {
    script: Script,
    /// When the fake model started: the origin of [`Exchange::received_ms`].
    started: Instant,
    log: Mutex<Vec<Exchange>>,
    stopping: AtomicBool,
    /// Faults injected so far, per turn index (for `Turn::fault_times`).
    faults_sent: Mutex<HashMap<usize, u32>>,
}

impl Shared {
    fn log(&self) -> MutexGuard<'_, Vec<Exchange>> {
        // A worker that panicked while holding the lock leaves a log that is still consistent
        // (pushes are atomic); keep serving it rather than propagating the poison.
        self.log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Logs `exchange` and returns its sequence number.
    fn record(&self, mut exchange: Exchange) -> usize {
        let mut log = self.log();
        exchange.seq = log.len();
        log.push(exchange);
        log.len() - 1
    }

    /// Milliseconds from the fake model's start to `at`.
    fn since_start(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.started).as_millis() as u64
    }

    /// Notes in the log that the last event of exchange `seq`'s paced stream was flushed at `at`.
    fn sent_last_chunk(&self, seq: usize, at: Instant) {
        let ms = self.since_start(at);
        if let Some(exchange) = self.log().get_mut(seq) {
            exchange.last_chunk_ms = Some(ms);
        }
    }
}

/// Sends on drop, so a worker signals its end even if it unwinds.
struct StopSignal(mpsc::Sender<()>);

impl Drop for StopSignal {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

impl Provider {
    /// Binds 127.0.0.1 on an ephemeral port and starts serving `script` on a background thread.
    ///
    /// Fails when the port cannot be bound or a worker thread cannot be spawned.
    pub fn start(script: Script) -> std::io::Result<Provider> {
        // Bind the std listener ourselves: it pins the address to loopback and reports bind
        // errors as `io::Error` instead of tiny_http's boxed error.
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let addr = listener.local_addr()?;
        let server = tiny_http::Server::from_listener(listener, None)
            .map_err(|e| io::Error::other(format!("fake model on {addr}: {e}")))?;
        let server = Arc::new(server);
        let shared = Arc::new(Shared {
            script,
            started: Instant::now(),
            log: Mutex::new(Vec::new()),
            stopping: AtomicBool::new(false),
            faults_sent: Mutex::new(HashMap::new()),
        });
        let (stop_tx, stopped) = mpsc::channel();
        let mut provider = Provider {
            addr,
            shared,
            server: Some(Arc::clone(&server)),
            workers: Vec::with_capacity(WORKERS),
            stopped: Mutex::new(stopped),
        };
        for index in 0..WORKERS {
            let server = Arc::clone(&server);
            let shared = Arc::clone(&provider.shared);
            let signal = StopSignal(stop_tx.clone());
            let worker = thread::Builder::new()
                .name(format!("hermes-e2e-provider-{index}"))
                .spawn(move || {
                    let _signal = signal;
                    serve(&server, &shared);
                })?; // on error `provider` drops here and stops the workers already started
            provider.workers.push(worker);
        }
        Ok(provider)
    }

    /// The port bound.
    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The socket address bound (always 127.0.0.1).
    #[cfg(test)]
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port())
    }

    /// How many exchanges have been logged so far (a mark for [`Provider::chat_received_since`]).
    pub(crate) fn exchanges(&self) -> usize {
        self.shared.log().len()
    }

    /// When the first chat request logged at or after `mark` (see [`Provider::exchanges`])
    /// reached the fake model, if one has.
    pub(crate) fn chat_received_since(&self, mark: usize) -> Option<Instant> {
        let log = self.shared.log();
        let exchange = log.iter().skip(mark).find(|e| e.kind == CallKind::Chat)?;
        Some(self.shared.started + Duration::from_millis(exchange.received_ms))
    }

    /// A snapshot of every exchange so far.
    pub fn log(&self) -> Vec<Exchange> {
        self.shared.log().clone()
    }

    /// Number of chat-kind requests answered so far (the driver waits on it). An exchange is
    /// counted as soon as its reply is decided, just before it is sent.
    #[cfg(test)]
    pub(crate) fn chat_calls(&self) -> usize {
        self.shared
            .log()
            .iter()
            .filter(|e| e.kind == CallKind::Chat)
            .count()
    }

    /// What was said: each distinct user text and chat reply once, in first-seen order.
    ///
    /// The user text of a scripted exchange is the [`Turn::user`] it matched (what was typed, free
    /// of anything the client added to the message); of an unscripted one, the last user message.
    pub(crate) fn said(&self) -> crate::oracle::Said {
        let turns = &self.shared.script.turns;
        let mut said = crate::oracle::Said::default();
        for exchange in self.shared.log().iter() {
            if exchange.kind != CallKind::Chat {
                continue;
            }
            if let Some(text) = exchange.user.as_deref() {
                let typed = match match_turn(turns, text) {
                    Some(turn) => turn.user.clone(),
                    None => text.trim().to_owned(),
                };
                push_distinct(&mut said.user, typed);
            }
            if let Some(reply) = &exchange.reply {
                push_distinct(&mut said.assistant, reply.clone());
            }
        }
        said
    }

    /// Writes the log as JSON lines to `path`.
    ///
    /// Fails when `path` cannot be created or written.
    pub(crate) fn write_log(&self, path: &Path) -> std::io::Result<()> {
        let log = self.log();
        let mut out = io::BufWriter::new(std::fs::File::create(path)?);
        for exchange in &log {
            serde_json::to_writer(&mut out, exchange)?;
            out.write_all(b"\n")?;
        }
        out.flush()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        if let Some(server) = &self.server {
            // Each `unblock` wakes exactly one `recv`; one per worker.
            for _ in &self.workers {
                server.unblock();
            }
        }
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        let stopped = self
            .stopped
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut signalled = 0;
        while signalled < self.workers.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            if stopped.recv_timeout(left).is_err() {
                break;
            }
            signalled += 1;
        }
        let all_stopped = signalled == self.workers.len();
        let mut detached = false;
        for worker in std::mem::take(&mut self.workers) {
            // A worker still inside a request (a client that stalls mid-body) is left to finish
            // on its own rather than hanging the harness.
            if all_stopped || worker.is_finished() {
                let _ = worker.join();
            } else {
                detached = true;
            }
        }
        // Our handle is the last one unless a worker was detached: dropping it makes tiny_http
        // close the listener, on its accept thread, shortly after.
        self.server = None;
        if !detached {
            wait_until_refused(self.addr, deadline);
        }
    }
}

/// Waits (bounded) until connections to `addr` are refused, so that "dropped" means "stopped"
/// for whoever connects next.
fn wait_until_refused(addr: SocketAddr, deadline: Instant) {
    loop {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(100)) {
            Err(_) => return,
            // Still listening: tiny_http's accept thread has not let go of the socket yet.
            Ok(stream) => drop(stream),
        }
        if Instant::now() >= deadline {
            return;
        }
        thread::sleep(Duration::from_millis(2));
    }
}

/// Why a saved provider log could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LogError {
    /// The file could not be read.
    #[error("cannot read the provider log `{}`", path.display())]
    Io {
        /// The log.
        path: std::path::PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A line is not an exchange of the fake model's log.
    #[error(
        "`{}:{line}` is not a provider log line: expected a JSON object with `kind` and, for a \
         chat, `user` and `reply` (the `provider.jsonl` a scenario run keeps)",
        path.display()
    )]
    Format {
        /// The log.
        path: std::path::PathBuf,
        /// 1-based line.
        line: usize,
    },
}

/// What a saved provider log (`provider.jsonl`, written by [`Provider::write_log`]) says was
/// said: each distinct user text and chat reply once, in first-seen order, as
/// [`Provider::said`] says it live — without the script, so a user text is the request's last
/// user message, trimmed (the harness's clients add nothing to it).
pub(crate) fn said_from_log(path: &Path) -> Result<crate::oracle::Said, LogError> {
    let text = std::fs::read_to_string(path).map_err(|source| LogError::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut said = crate::oracle::Said::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = || LogError::Format {
            path: path.to_owned(),
            line: i + 1,
        };
        let exchange: serde_json::Value = serde_json::from_str(line).map_err(|_| bad())?;
        let kind = exchange
            .get("kind")
            .and_then(|k| k.as_str())
            .ok_or_else(bad)?;
        if kind != "chat" {
            continue;
        }
        let field = |name: &str| match exchange.get(name) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad()),
        };
        if let Some(user) = field("user")? {
            push_distinct(&mut said.user, user.trim().to_owned());
        }
        if let Some(reply) = field("reply")? {
            push_distinct(&mut said.assistant, reply);
        }
    }
    Ok(said)
}

/// Appends `text` unless it is empty or already in `list`.
fn push_distinct(list: &mut Vec<String>, text: String) {
    if !text.is_empty() && !list.contains(&text) {
        list.push(text);
    }
}
