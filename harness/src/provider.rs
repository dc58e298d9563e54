//! Stage `provider`: an OpenAI-compatible fake model served on 127.0.0.1 (ephemeral port).
//!
//! Input: a [`Script`] from the scenario (user text → reply, the compaction summary, the title).
//! Output: HTTP answers to the client (plain JSON and SSE streaming) and a log of every request and
//! reply — the ground truth of *what was said* ([`Provider::said`]).
//!
//! Requests are recognised by their shape, never by their order, so a retried request gets the same
//! answer again (see [`CallKind`] and the `classify` notes below). Every exchange is logged; the log is
//! kept by the scenario as `provider.jsonl`.
//!
//! Only 127.0.0.1 is ever bound: the fake must not be reachable from outside the machine.

use std::collections::HashMap;
use std::io::{self, Cursor, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

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
}

/// One tool call a scripted turn makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The tool's function name, as the client offers it (e.g. `read_file`).
    pub name: String,
    /// Its arguments, a JSON object.
    pub arguments: Value,
}

/// The id of the `index`-th call of the `turn`-th scripted turn. Deterministic, so that the answer
/// to the tool results finds its turn by id even when compaction has summarised away the user
/// message that asked for the calls.
fn tool_call_id(turn: usize, index: usize) -> String {
    format!("call_hermes_e2e_{turn}_{index}")
}

/// The turn index a [`tool_call_id`] names.
fn turn_of_tool_call_id(id: &str) -> Option<usize> {
    let rest = id.strip_prefix("call_hermes_e2e_")?;
    rest.split_once('_')?.0.parse().ok()
}

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
    /// The fault injected instead of (or into) the reply, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// Names of the tools called instead of a reply (empty for a text reply).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<String>,
}

/// The model id the fake serves; the client's config names it.
pub const MODEL_ID: &str = "fake-model";

/// The reply sent to a chat message no scripted [`Turn`] matches. Deterministic so that a retry of
/// the same request gets the same answer and the oracle can recognise it.
pub const UNSCRIPTED_REPLY: &str = "(hermes-e2e: unscripted message)";

/// The summary sent when the script has none: the client treats empty summary content as a
/// failed compaction, which would hide the behaviour under test behind a fallback path.
pub const PLACEHOLDER_SUMMARY: &str = "(hermes-e2e: no summary scripted)";

/// Context length advertised by `GET /v1/models`; matches the `context_length` the harness writes
/// into the client's config, so both sources agree.
const CONTEXT_LENGTH: u64 = 131_072;

/// Worker threads answering requests. The client may run its title call concurrently with a chat
/// turn (and an auxiliary summary call during one), so one worker is not enough.
const WORKERS: usize = 4;

/// Request bodies beyond this are cut: the client's largest requests (full history plus ~21 tool
/// schemas) are well under a megabyte, and the cap keeps a runaway sender from exhausting memory.
const MAX_BODY_BYTES: u64 = 64 << 20;

/// Characters of reply per SSE content chunk; several chunks per reply exercise the client's
/// delta reassembly the way a real model does.
const SSE_PIECE_CHARS: usize = 40;

/// How long `Drop` waits for workers busy with a request (a stalled client) before detaching them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

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

    fn record(&self, mut exchange: Exchange) {
        let mut log = self.log();
        exchange.seq = log.len();
        log.push(exchange);
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
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The socket address bound (always 127.0.0.1).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port())
    }

    /// A snapshot of every exchange so far.
    pub fn log(&self) -> Vec<Exchange> {
        self.shared.log().clone()
    }

    /// Number of chat-kind requests answered so far (the driver waits on it). An exchange is
    /// counted as soon as its reply is decided, just before it is sent.
    pub fn chat_calls(&self) -> usize {
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
    pub fn said(&self) -> crate::oracle::Said {
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
    pub fn write_log(&self, path: &Path) -> std::io::Result<()> {
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

/// A worker: answers requests until `Drop` unblocks it.
fn serve(server: &tiny_http::Server, shared: &Shared) {
    loop {
        match server.recv() {
            Ok(request) => handle(request, shared),
            // `recv` fails both when unblocked and when accepting failed; only the former ends us.
            Err(_) if shared.stopping.load(Ordering::SeqCst) => return,
            Err(_) => continue,
        }
    }
}

/// Reads one request, answers it and logs the exchange.
fn handle(mut request: tiny_http::Request, shared: &Shared) {
    let method = request.method().as_str().to_owned();
    let path = request
        .url()
        .split('?')
        .next()
        .unwrap_or_default()
        .to_owned();
    let mut body = Vec::new();
    let read = Read::take(request.as_reader(), MAX_BODY_BYTES).read_to_end(&mut body);
    let (mut reply, mut exchange) = answer(&shared.script, &method, &path, read.map(|_| body));
    if let Some(fault) = shared.take_fault(&exchange) {
        exchange.fault = Some(fault);
        reply = inject(fault, reply, exchange.stream);
        exchange.status = reply.status;
    }
    // Logged before sending, so that whoever has seen the reply (the client's screen, a test)
    // finds the exchange in the log. A client that went away is not the fake's failure.
    shared.record(exchange);
    if reply.body == Body::Hang {
        // Hold the connection open without a byte until the fake model stops.
        while !shared.stopping.load(Ordering::SeqCst) {
            thread::sleep(HANG_POLL);
        }
        return;
    }
    let _ = send(request, &reply);
}

/// How often a hanging answer checks whether the fake model is stopping.
const HANG_POLL: Duration = Duration::from_millis(20);

impl Shared {
    /// The fault to inject into the answer logged as `exchange`, counting it against the turn's
    /// `fault_times`: only chat turns that matched a scripted turn with a fault get one.
    fn take_fault(&self, exchange: &Exchange) -> Option<Fault> {
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
}

/// Turns a normal reply into `fault`.
fn inject(fault: Fault, reply: Reply, stream: bool) -> Reply {
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
    }
}

/// A reader that yields `bytes` up to `cut`, then fails: tiny_http then closes the connection
/// without finishing the response (no final chunk, no `[DONE]`).
struct CutReader {
    bytes: Cursor<Vec<u8>>,
    cut: u64,
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

/// An HTTP answer, decided before anything is written.
///
/// Kept apart from the sending so that fault injection (an HTTP 500, malformed JSON, a stream cut
/// midway, a hang) can later be added as a transformation of a `Reply` or of how it is written,
/// without touching the classification.
#[derive(Debug, Clone, PartialEq)]
struct Reply {
    status: u16,
    body: Body,
}

#[derive(Debug, Clone, PartialEq)]
enum Body {
    /// `application/json`.
    Json(Value),
    /// `text/event-stream`: each value one `data:` event, then `data: [DONE]`.
    Events(Vec<Value>),
    /// Bytes sent as they are, with this content type (malformed JSON).
    Raw(&'static str, Vec<u8>),
    /// The first half of `body`'s bytes, then the connection is closed (a dropped stream).
    Cut(Box<Body>),
    /// Nothing is sent until the fake model stops.
    Hang,
}

impl Reply {
    fn json(status: u16, value: Value) -> Reply {
        Reply {
            status,
            body: Body::Json(value),
        }
    }

    /// An OpenAI-shaped error body.
    fn error(status: u16, kind: &str, message: String) -> Reply {
        Reply::json(
            status,
            json!({"error": {"message": message, "type": kind, "param": null, "code": null}}),
        )
    }
}

/// Decides the reply to one request and the exchange to log (its `seq` is set when recorded).
fn answer(
    script: &Script,
    method: &str,
    path: &str,
    body: io::Result<Vec<u8>>,
) -> (Reply, Exchange) {
    let mut exchange = Exchange {
        seq: 0,
        method: method.to_owned(),
        path: path.to_owned(),
        kind: CallKind::Other,
        stream: false,
        user: None,
        reply: None,
        unscripted: false,
        status: 0,
        prompt_tokens: 0,
        request: Value::Null,
        fault: None,
        tool_calls: Vec::new(),
    };
    let reply = route(script, method, path, body, &mut exchange);
    exchange.status = reply.status;
    (reply, exchange)
}

fn route(
    script: &Script,
    method: &str,
    path: &str,
    body: io::Result<Vec<u8>>,
    exchange: &mut Exchange,
) -> Reply {
    let get = method.eq_ignore_ascii_case("GET");
    if get && path.ends_with("models_dev.json") {
        // The client's model catalogue: empty, so it relies on the config's context length.
        exchange.kind = CallKind::Meta;
        return Reply::json(200, json!({}));
    }
    if get && path.ends_with("/models") {
        exchange.kind = CallKind::Meta;
        return Reply::json(200, json!({"object": "list", "data": [model_object()]}));
    }
    if get && path.rsplit_once("/models/").map(|(_, id)| id) == Some(MODEL_ID) {
        exchange.kind = CallKind::Meta;
        return Reply::json(200, model_object());
    }
    if method.eq_ignore_ascii_case("POST") && path.ends_with("/chat/completions") {
        return completion(script, body, exchange);
    }
    Reply::error(
        404,
        "not_found_error",
        format!("hermes-e2e fake model: no route for `{method} {path}`"),
    )
}

fn model_object() -> Value {
    json!({
        "id": MODEL_ID,
        "object": "model",
        "owned_by": "hermes-e2e",
        "context_length": CONTEXT_LENGTH,
    })
}

/// The three kinds of completion request the client makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Completion {
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

/// `POST …/chat/completions`.
fn completion(script: &Script, body: io::Result<Vec<u8>>, exchange: &mut Exchange) -> Reply {
    let raw = match body {
        Ok(raw) => raw,
        Err(e) => {
            return Reply::error(
                400,
                "invalid_request_error",
                format!("hermes-e2e fake model: could not read the request body: {e}"),
            )
        }
    };
    let request = match serde_json::from_slice::<Value>(&raw) {
        Ok(request @ Value::Object(_)) => request,
        Ok(other) => {
            exchange.request = other;
            return Reply::error(
                400,
                "invalid_request_error",
                "hermes-e2e fake model: the request body must be a JSON object".to_owned(),
            );
        }
        Err(e) => {
            exchange.request = Value::String(String::from_utf8_lossy(&raw).into_owned());
            return Reply::error(
                400,
                "invalid_request_error",
                format!("hermes-e2e fake model: malformed JSON in the request body: {e}"),
            );
        }
    };

    let kind = classify(&request);
    let mut calls: &[ToolCall] = &[];
    let mut call_turn = 0;
    let (text, user, unscripted) = match kind {
        Completion::Chat => {
            let user = last_user_text(&request);
            if let Some(turn) = answered_tool_calls(&request, &script.turns) {
                // The results of a scripted turn's calls: its reply, whatever compaction did to
                // the user message before them.
                (turn.reply.clone(), Some(turn.user.clone()), false)
            } else {
                match user.as_deref().and_then(|t| match_turn(&script.turns, t)) {
                    Some(turn) if !turn.tool_calls.is_empty() => {
                        calls = &turn.tool_calls;
                        call_turn = turn_index(&script.turns, turn);
                        (String::new(), user, false)
                    }
                    Some(turn) => (turn.reply.clone(), user, false),
                    None => match continuation(&request, &script.turns) {
                        Some(rest) => (rest, user, false),
                        None => (UNSCRIPTED_REPLY.to_owned(), user, true),
                    },
                }
            }
        }
        Completion::Title => (title_reply(&request, &script.title), None, false),
        Completion::Summary if script.summary.trim().is_empty() => {
            (PLACEHOLDER_SUMMARY.to_owned(), None, false)
        }
        Completion::Summary => (script.summary.clone(), None, false),
    };
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            json!({
                "id": tool_call_id(call_turn, index),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments.to_string()},
            })
        })
        .collect();

    let usage = Usage::new(&request, &text);
    let stream = request.get("stream").and_then(Value::as_bool) == Some(true);
    let include_usage = request
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        == Some(true);
    let head = ChunkHead::new(&request);

    exchange.kind = kind.into();
    exchange.stream = stream;
    exchange.user = user;
    exchange.unscripted = unscripted;
    exchange.prompt_tokens = usage.prompt;
    exchange.request = request;

    exchange.tool_calls = calls
        .iter()
        .filter_map(|c| c.pointer("/function/name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let body = if stream {
        Body::Events(stream_events(
            &head,
            &text,
            &calls,
            include_usage.then_some(usage),
        ))
    } else {
        let mut message = json!({"role": "assistant", "content": text});
        if !calls.is_empty() {
            message["content"] = Value::Null;
            message["tool_calls"] = Value::Array(calls);
        }
        Body::Json(json!({
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
        }))
    };
    if exchange.tool_calls.is_empty() {
        exchange.reply = Some(text);
    }
    Reply { status: 200, body }
}

/// The position of `turn` (a reference into `turns`) in the script.
fn turn_index(turns: &[Turn], turn: &Turn) -> usize {
    turns
        .iter()
        .position(|t| std::ptr::eq(t, turn))
        .unwrap_or_default()
}

/// The scripted turn whose tool calls a request answers: its last message is a tool result
/// (role `tool`) whose `tool_call_id` is one of ours.
fn answered_tool_calls<'a>(request: &Value, turns: &'a [Turn]) -> Option<&'a Turn> {
    let last = messages(request).last()?;
    if role(last) != "tool" {
        return None;
    }
    let id = last.get("tool_call_id").and_then(Value::as_str)?;
    turns.get(turn_of_tool_call_id(id)?)
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
fn classify(request: &Value) -> Completion {
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

fn messages(request: &Value) -> &[Value] {
    request
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn role(message: &Value) -> &str {
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
fn message_text(message: &Value) -> String {
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

/// The text of the last `user` message, if there is one.
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
fn match_turn<'a>(turns: &'a [Turn], text: &str) -> Option<&'a Turn> {
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
fn title_reply(request: &Value, title: &str) -> String {
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

/// Token counts reported in `usage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Usage {
    prompt: u64,
    completion: u64,
}

/// Tokens counted for the system prompt and tool schemas of every request, whatever they hold.
///
/// The client's system prompt and tool list differ between runs of the same scenario (measured:
/// the same conversation's request varied by ~3 KB, ≈ 770 tokens), and the client decides
/// automatic compaction on the provider's `prompt_tokens` (plus a rough estimate of what was
/// appended since, `agent/usage_anchor.py`). Counting them as a constant makes the turn on which
/// a `compression.threshold_tokens` is crossed a function of the conversation alone. The value is
/// about what the real 0.22 client sends (≈ 50 KB of system prompt and 21 tool schemas).
pub const PROMPT_OVERHEAD_TOKENS: u64 = 12_000;

impl Usage {
    /// About four bytes a token of the conversation (every message but the system prompt, with
    /// tool-call arguments), plus [`PROMPT_OVERHEAD_TOKENS`]: realistic enough that the client's
    /// threshold-based auto-compaction fires as the conversation grows, and deterministic, so a
    /// scenario can pin the turn on which it fires.
    fn new(request: &Value, reply: &str) -> Usage {
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
struct ChunkHead {
    id: String,
    created: u64,
    model: String,
}

impl ChunkHead {
    fn new(request: &Value) -> ChunkHead {
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

/// The SSE events of a streamed reply: the role, the content in pieces, the stop, and the usage
/// chunk (empty `choices`) when the request asked for it. `data: [DONE]` is added when sending.
fn stream_events(
    head: &ChunkHead,
    text: &str,
    calls: &[Value],
    usage: Option<Usage>,
) -> Vec<Value> {
    let mut events = vec![head.chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(SSE_PIECE_CHARS) {
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

/// The bytes and content type of a complete body.
fn body_bytes(body: &Body) -> io::Result<(&'static str, Vec<u8>)> {
    Ok(match body {
        Body::Json(value) => ("application/json", serde_json::to_vec(value)?),
        Body::Events(events) => {
            let mut bytes = Vec::new();
            for event in events {
                bytes.extend_from_slice(b"data: ");
                serde_json::to_writer(&mut bytes, event)?;
                bytes.extend_from_slice(b"\n\n");
            }
            bytes.extend_from_slice(b"data: [DONE]\n\n");
            ("text/event-stream", bytes)
        }
        Body::Raw(kind, bytes) => (kind, bytes.clone()),
        Body::Cut(inner) => body_bytes(inner)?,
        Body::Hang => ("text/plain", Vec::new()),
    })
}

/// Writes `reply` to the client. A JSON body carries its length; everything else is sent
/// chunked, as streaming servers do — a cut body stops halfway (see [`CutReader`]).
fn send(request: tiny_http::Request, reply: &Reply) -> io::Result<()> {
    if reply.body == Body::Hang {
        return Ok(());
    }
    let status = tiny_http::StatusCode(reply.status);
    let (kind, bytes) = body_bytes(&reply.body)?;
    let headers = match reply.body {
        Body::Events(_) => headers(&[("Content-Type", kind), ("Cache-Control", "no-cache")]),
        _ => headers(&[("Content-Type", kind)]),
    };
    match reply.body {
        Body::Json(_) => {
            let length = bytes.len();
            request.respond(tiny_http::Response::new(
                status,
                headers,
                Cursor::new(bytes),
                Some(length),
                None,
            ))
        }
        Body::Cut(_) => {
            let cut = bytes.len() as u64 / 2;
            request.respond(tiny_http::Response::new(
                status,
                headers,
                CutReader {
                    bytes: Cursor::new(bytes),
                    cut,
                },
                None,
                None,
            ))
        }
        _ => request.respond(tiny_http::Response::new(
            status,
            headers,
            Cursor::new(bytes),
            None,
            None,
        )),
    }
}

fn headers(pairs: &[(&str, &str)]) -> Vec<tiny_http::Header> {
    pairs
        .iter()
        .filter_map(|(name, value)| {
            tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
        })
        .collect()
}

fn push_distinct(list: &mut Vec<String>, text: String) {
    if !text.is_empty() && !list.contains(&text) {
        list.push(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The opening of the real client's system prompt (`agent/prompt_builder.py`).
    const HERMES_SYSTEM: &str =
        "You are Hermes Agent, built by Nous Research. Be direct: match the \
        length of your reply to the weight of the ask.";

    /// A long reply, so that a stream carries several content chunks.
    const LIGHTHOUSE: &str =
        "The keeper of the lighthouse climbed the spiral stairs every evening \
        at dusk, trimmed the wick, polished the great lens and watched the ships pass safely by.";

    fn script() -> Script {
        Script {
            turns: vec![
                Turn {
                    user: "Tell me about the lighthouse keeper".to_owned(),
                    reply: LIGHTHOUSE.to_owned(),
                    ..Turn::default()
                },
                Turn {
                    user: "say hi".to_owned(),
                    reply: "Hi!".to_owned(),
                    ..Turn::default()
                },
                Turn {
                    user: "hi".to_owned(),
                    reply: "Hello.".to_owned(),
                    ..Turn::default()
                },
            ],
            summary: "## Goal\nThe user asked about a lighthouse keeper.".to_owned(),
            title: "Lighthouse keeper story".to_owned(),
        }
    }

    /// A chat request shaped like the client's: Hermes system prompt, tool schemas, history.
    fn chat_body(messages: Value, stream: bool) -> Vec<u8> {
        let mut all = vec![json!({"role": "system", "content": HERMES_SYSTEM})];
        all.extend(messages.as_array().cloned().unwrap_or_default());
        let mut body = json!({
            "model": "fake-model",
            "messages": all,
            "tools": [
                {"type": "function", "function": {"name": "read_file", "description": "Read a file",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
                {"type": "function", "function": {"name": "terminal", "description": "Run a command",
                    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}},
            ],
            "stream": stream,
        });
        if stream {
            body["stream_options"] = json!({"include_usage": true});
        }
        serde_json::to_vec(&body).expect("serialise")
    }

    /// A title request shaped like `agent/title_generator.py` sends it.
    fn title_body(with_response_format: bool) -> Vec<u8> {
        let mut body = json!({
            "model": "fake-model",
            "messages": [
                {"role": "system", "content": "You name chat sessions. Given the user's opening \
                    message, write a title that lets them find this conversation again in a list.\n\n\
                    Good: {\"title\": \"Fix login button on mobile\"}\n\n\
                    Reply with JSON only: {\"title\": \"...\"}"},
                {"role": "user", "content": "Tell me about the lighthouse keeper"},
            ],
            "max_tokens": 512,
        });
        if with_response_format {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": "session_title", "strict": true, "schema": {
                    "type": "object", "properties": {"title": {"type": "string"}},
                    "required": ["title"], "additionalProperties": false}},
            });
        }
        serde_json::to_vec(&body).expect("serialise")
    }

    /// A compaction-summary request shaped like `agent/context_compressor.py` sends it (streamed,
    /// as the auxiliary client does when a progress hook is installed).
    fn summary_body() -> Vec<u8> {
        serde_json::to_vec(&json!({
            "model": "fake-model",
            "messages": [{"role": "user", "content": "You are a summarization agent creating a \
                context checkpoint. Treat the conversation turns below as source material.\n\n\
                TURNS TO SUMMARIZE:\n[USER]: Tell me about the lighthouse keeper"}],
            "stream": true,
            "stream_options": {"include_usage": true},
        }))
        .expect("serialise")
    }

    struct HttpReply {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    }

    impl HttpReply {
        fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        }

        fn json(&self) -> Value {
            serde_json::from_slice(&self.body).expect("JSON reply")
        }

        /// The `data:` payloads of an SSE body, in order.
        fn events(&self) -> Vec<String> {
            String::from_utf8_lossy(&self.body)
                .split("\n\n")
                .filter(|e| !e.trim().is_empty())
                .map(|e| e.strip_prefix("data: ").expect("data event").to_owned())
                .collect()
        }
    }

    /// One raw HTTP/1.1 exchange over a fresh connection.
    fn http(provider: &Provider, method: &str, path: &str, body: &[u8]) -> HttpReply {
        let mut stream = TcpStream::connect(provider.addr()).expect("connect to the fake");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("read timeout");
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).expect("send head");
        stream.write_all(body).expect("send body");
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("read the whole reply");
        parse_reply(&raw)
    }

    fn parse_reply(raw: &[u8]) -> HttpReply {
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("end of headers");
        let head = String::from_utf8_lossy(&raw[..end]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .expect("status line");
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
            .collect();
        let rest = &raw[end + 4..];
        let mut reply = HttpReply {
            status,
            headers,
            body: Vec::new(),
        };
        reply.body = if reply
            .header("Transfer-Encoding")
            .is_some_and(|v| v.contains("chunked"))
        {
            dechunk(rest)
        } else {
            let length: usize = reply
                .header("Content-Length")
                .and_then(|v| v.parse().ok())
                .expect("Content-Length");
            rest[..length].to_vec()
        };
        reply
    }

    fn dechunk(mut data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let eol = data
                .windows(2)
                .position(|w| w == b"\r\n")
                .expect("chunk size line");
            let line = String::from_utf8_lossy(&data[..eol]).into_owned();
            let size = usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16)
                .expect("hex chunk size");
            data = &data[eol + 2..];
            if size == 0 {
                return out;
            }
            out.extend_from_slice(&data[..size]);
            data = &data[size + 2..];
        }
    }

    fn content(reply: &HttpReply) -> String {
        reply.json()["choices"][0]["message"]["content"]
            .as_str()
            .expect("content")
            .to_owned()
    }

    #[test]
    fn binds_loopback_only() {
        let provider = Provider::start(Script::default()).expect("start");
        assert_eq!(
            provider.addr().ip(),
            std::net::IpAddr::V4(Ipv4Addr::LOCALHOST)
        );
        assert_ne!(provider.port(), 0);
        assert_eq!(
            provider.base_url(),
            format!("http://127.0.0.1:{}/v1", provider.port())
        );
    }

    #[test]
    fn models_list_and_catalogue() {
        let provider = Provider::start(Script::default()).expect("start");
        let models = http(&provider, "GET", "/v1/models", b"");
        assert_eq!(models.status, 200);
        assert_eq!(
            models.json(),
            json!({"object": "list", "data": [{"id": "fake-model", "object": "model",
                "owned_by": "hermes-e2e", "context_length": 131072}]})
        );
        let catalogue = http(&provider, "GET", "/models_dev.json", b"");
        assert_eq!((catalogue.status, catalogue.json()), (200, json!({})));
        let log = provider.log();
        assert_eq!(log.len(), 2);
        assert!(log
            .iter()
            .all(|e| e.kind == CallKind::Meta && e.status == 200));
        assert_eq!(provider.chat_calls(), 0);
    }

    #[test]
    fn unknown_path_is_404_logged_as_other() {
        let provider = Provider::start(Script::default()).expect("start");
        let reply = http(&provider, "GET", "/v1/props?x=1", b"");
        assert_eq!(reply.status, 404);
        assert!(reply.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("/v1/props")));
        let log = provider.log();
        assert_eq!(log[0].kind, CallKind::Other);
        assert_eq!((log[0].status, log[0].path.as_str()), (404, "/v1/props"));
    }

    #[test]
    fn chat_reply_is_matched_by_content_and_repeated_on_retry() {
        let provider = Provider::start(script()).expect("start");
        let body = chat_body(
            json!([
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "Hello."},
                {"role": "user", "content": "[System note: the user is on a PTY]\n\nTell me about the lighthouse keeper  "},
            ]),
            false,
        );
        let conversation = [
            "hi",
            "Hello.",
            "[System note: the user is on a PTY]\n\nTell me about the lighthouse keeper  ",
        ]
        .iter()
        .map(|t| t.len() as u64)
        .sum::<u64>();
        let prompt = PROMPT_OVERHEAD_TOKENS + conversation / 4;
        for _ in 0..2 {
            let reply = http(&provider, "POST", "/v1/chat/completions", &body);
            assert_eq!(reply.status, 200);
            let value = reply.json();
            assert_eq!(value["object"], "chat.completion");
            assert_eq!(value["choices"][0]["finish_reason"], "stop");
            assert_eq!(value["choices"][0]["message"]["role"], "assistant");
            assert_eq!(content(&reply), LIGHTHOUSE);
            let completion = LIGHTHOUSE.chars().count() as u64 / 4;
            assert_eq!(
                value["usage"],
                json!({"prompt_tokens": prompt, "completion_tokens": completion,
                    "total_tokens": prompt + completion})
            );
        }
        let log = provider.log();
        assert_eq!(provider.chat_calls(), 2);
        assert_eq!(log[0].kind, CallKind::Chat);
        assert!(!log[0].unscripted && !log[0].stream);
        assert_eq!(log[0].prompt_tokens, prompt);
        assert!(log[0]
            .user
            .as_deref()
            .is_some_and(|u| u.contains("[System note")));
        // The retry is said once, and the user text is what was typed, not the client's note.
        assert_eq!(
            provider.said(),
            crate::oracle::Said {
                user: vec!["Tell me about the lighthouse keeper".to_owned()],
                assistant: vec![LIGHTHOUSE.to_owned()],
            }
        );
    }

    #[test]
    fn list_of_parts_content_is_joined() {
        let provider = Provider::start(script()).expect("start");
        let body = chat_body(
            json!([{"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "text", "text": "Please,"},
                {"type": "text", "text": "say hi"},
            ]}]),
            false,
        );
        let reply = http(&provider, "POST", "/v1/chat/completions", &body);
        // "say hi" is contained and longer than "hi", which ends at the same place.
        assert_eq!(content(&reply), "Hi!");
        assert_eq!(provider.log()[0].user.as_deref(), Some("Please,\nsay hi"));
    }

    #[test]
    fn streamed_reply_reassembles_with_usage_and_done() {
        let provider = Provider::start(script()).expect("start");
        let body = chat_body(
            json!([{"role": "user", "content": "Tell me about the lighthouse keeper"}]),
            true,
        );
        let reply = http(&provider, "POST", "/v1/chat/completions", &body);
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("Content-Type"), Some("text/event-stream"));
        let events = reply.events();
        assert_eq!(events.last().map(String::as_str), Some("[DONE]"));
        let chunks: Vec<Value> = events[..events.len() - 1]
            .iter()
            .map(|e| serde_json::from_str(e).expect("JSON chunk"))
            .collect();
        assert!(chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk" && c["id"] == chunks[0]["id"]));
        assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
        let text: String = chunks
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(text, LIGHTHOUSE);
        let pieces = chunks
            .iter()
            .filter(|c| {
                c["choices"][0]["delta"]["content"]
                    .as_str()
                    .is_some_and(|s| !s.is_empty())
            })
            .count();
        assert!(pieces >= 3, "reply split into {pieces} pieces");
        let stop = &chunks[chunks.len() - 2];
        assert_eq!(stop["choices"][0]["finish_reason"], "stop");
        let usage = &chunks[chunks.len() - 1];
        assert_eq!(usage["choices"], json!([]));
        // The conversation without the system prompt, plus the constant overhead.
        let conversation = "Tell me about the lighthouse keeper".len() as u64;
        assert_eq!(
            usage["usage"]["prompt_tokens"],
            json!(PROMPT_OVERHEAD_TOKENS + conversation / 4)
        );
        assert!(provider.log()[0].stream);
    }

    #[test]
    fn prompt_tokens_ignore_the_system_prompt_and_count_tool_arguments() {
        let turn = |system: &str| {
            json!({"messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": "x".repeat(400)},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c", "type": "function",
                     "function": {"name": "read_file", "arguments": "y".repeat(91)}}]},
                {"role": "tool", "tool_call_id": "c", "content": "z".repeat(800)},
            ]})
        };
        let short = Usage::new(&turn("You are Hermes Agent."), "");
        let long = Usage::new(&turn(&"You are Hermes Agent. ".repeat(500)), "");
        assert_eq!(short, long, "the system prompt is a constant");
        assert_eq!(
            short.prompt,
            PROMPT_OVERHEAD_TOKENS + (400 + 9 + 91 + 800) / 4
        );
    }

    fn tool_script() -> Script {
        Script {
            turns: vec![Turn {
                user: "Read the log".to_owned(),
                reply: LIGHTHOUSE.to_owned(),
                tool_calls: vec![ToolCall {
                    name: "read_file".to_owned(),
                    arguments: json!({"path": "log.txt"}),
                }],
                ..Turn::default()
            }],
            ..script()
        }
    }

    #[test]
    fn a_turn_with_tool_calls_calls_them_then_replies_to_their_results() {
        let provider = Provider::start(tool_script()).expect("start");
        let ask = json!([{"role": "user", "content": "Read the log"}]);
        let first = http(
            &provider,
            "POST",
            "/v1/chat/completions",
            &chat_body(ask, false),
        );
        let first: Value = serde_json::from_slice(&first.body).expect("JSON");
        let choice = &first["choices"][0];
        assert_eq!(choice["finish_reason"], "tool_calls");
        assert_eq!(choice["message"]["content"], Value::Null);
        let call = &choice["message"]["tool_calls"][0];
        assert_eq!(call["function"]["name"], "read_file");
        let arguments: Value =
            serde_json::from_str(call["function"]["arguments"].as_str().expect("string"))
                .expect("arguments are JSON text");
        assert_eq!(arguments, json!({"path": "log.txt"}));

        // The results, after compaction summarised the user message away: still the reply.
        let results = json!([
            {"role": "user", "content": "[CONTEXT COMPACTION] earlier turns summarised"},
            {"role": "assistant", "content": null, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": "12 March 1887 …"},
        ]);
        let second = http(
            &provider,
            "POST",
            "/v1/chat/completions",
            &chat_body(results, true),
        );
        let text: String = second
            .events()
            .iter()
            .filter_map(|e| serde_json::from_str::<Value>(e).ok())
            .filter_map(|c| {
                c["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(text, LIGHTHOUSE);
        let log = provider.log();
        assert_eq!(log[0].tool_calls, vec!["read_file".to_owned()]);
        assert_eq!(log[0].reply, None, "a tool call is not something said");
        assert_eq!(log[1].user.as_deref(), Some("Read the log"));
        assert_eq!(provider.said().assistant, vec![LIGHTHOUSE.to_owned()]);
    }

    #[test]
    fn streamed_tool_calls_arrive_as_a_real_provider_sends_them() {
        let provider = Provider::start(tool_script()).expect("start");
        let ask = json!([{"role": "user", "content": "Read the log"}]);
        let reply = http(
            &provider,
            "POST",
            "/v1/chat/completions",
            &chat_body(ask, true),
        );
        let chunks: Vec<Value> = reply
            .events()
            .iter()
            .filter_map(|e| serde_json::from_str(e).ok())
            .collect();
        let deltas: Vec<&Value> = chunks
            .iter()
            .filter_map(|c| c["choices"][0]["delta"].get("tool_calls"))
            .collect();
        assert_eq!(deltas.len(), 2, "the head, then the arguments");
        assert_eq!(deltas[0][0]["id"], "call_hermes_e2e_0_0");
        assert_eq!(deltas[0][0]["function"]["name"], "read_file");
        assert_eq!(
            deltas[1][0]["function"]["arguments"],
            "{\"path\":\"log.txt\"}"
        );
        assert!(chunks
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "tool_calls"));
    }

    #[test]
    fn streamed_reply_without_include_usage_has_no_usage_chunk() {
        let provider = Provider::start(script()).expect("start");
        let mut body: Value =
            serde_json::from_slice(&chat_body(json!([{"role": "user", "content": "hi"}]), true))
                .expect("JSON");
        body.as_object_mut()
            .expect("object")
            .remove("stream_options");
        let reply = http(
            &provider,
            "POST",
            "/v1/chat/completions",
            body.to_string().as_bytes(),
        );
        let events = reply.events();
        assert_eq!(events.last().map(String::as_str), Some("[DONE]"));
        let last: Value = serde_json::from_str(&events[events.len() - 2]).expect("JSON chunk");
        assert_eq!(last["choices"][0]["finish_reason"], "stop");
        assert!(events.iter().all(|e| !e.contains("\"usage\"")));
    }

    #[test]
    fn title_call_like_the_client_gets_json_title() {
        let provider = Provider::start(script()).expect("start");
        for with_response_format in [true, false] {
            let reply = http(
                &provider,
                "POST",
                "/v1/chat/completions",
                &title_body(with_response_format),
            );
            let title: Value = serde_json::from_str(&content(&reply)).expect("JSON title");
            assert_eq!(title, json!({"title": "Lighthouse keeper story"}));
        }
        let log = provider.log();
        assert!(log
            .iter()
            .all(|e| e.kind == CallKind::Title && e.user.is_none()));
        assert_eq!(provider.chat_calls(), 0);
        assert_eq!(provider.said(), crate::oracle::Said::default());
    }

    #[test]
    fn title_for_a_prose_prompt_is_plain() {
        let request = json!({"messages": [
            {"role": "system", "content": "Generate a short, descriptive title (3-7 words) for a conversation."},
            {"role": "user", "content": "hi"},
        ]});
        assert_eq!(classify(&request), Completion::Title);
        assert_eq!(title_reply(&request, "Greeting"), "Greeting");
    }

    #[test]
    fn summary_call_like_the_client_gets_the_summary() {
        let provider = Provider::start(script()).expect("start");
        let reply = http(&provider, "POST", "/v1/chat/completions", &summary_body());
        let text: String = reply
            .events()
            .iter()
            .filter(|e| e.as_str() != "[DONE]")
            .map(|e| serde_json::from_str::<Value>(e).expect("JSON chunk"))
            .filter_map(|c| {
                c["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(text, script().summary);
        let log = provider.log();
        assert_eq!(log[0].kind, CallKind::Summary);
        assert_eq!(provider.chat_calls(), 0);
    }

    #[test]
    fn summary_recognised_in_other_shapes() {
        // agent/micro_compaction.py: a summarizer system prompt, then the summarization prompt.
        let micro = json!({"messages": [
            {"role": "system", "content": "You are a conversation summarization assistant."},
            {"role": "user", "content": "You are a summarization agent creating a compact record."},
        ], "max_tokens": 1500});
        assert_eq!(classify(&micro), Completion::Summary);
        // Fallback: neither tools nor the Hermes system prompt.
        let bare = json!({"messages": [{"role": "user", "content": "Summarise this."}]});
        assert_eq!(classify(&bare), Completion::Summary);
        // The Hermes system prompt alone (tools disabled) is still a chat turn.
        let no_tools = json!({"messages": [
            {"role": "system", "content": HERMES_SYSTEM},
            {"role": "user", "content": "hi"},
        ]});
        assert_eq!(classify(&no_tools), Completion::Chat);
    }

    #[test]
    fn empty_summary_gets_a_placeholder() {
        let provider = Provider::start(Script::default()).expect("start");
        let body = serde_json::to_vec(&json!({"messages": [
            {"role": "user", "content": "You are a summarization agent creating a context checkpoint."},
        ]}))
        .expect("serialise");
        let reply = http(&provider, "POST", "/v1/chat/completions", &body);
        assert_eq!(content(&reply), PLACEHOLDER_SUMMARY);
    }

    #[test]
    fn unscripted_message_gets_the_placeholder() {
        let provider = Provider::start(script()).expect("start");
        let body = chat_body(
            json!([{"role": "user", "content": "  What is the weather?  "}]),
            false,
        );
        let reply = http(&provider, "POST", "/v1/chat/completions", &body);
        assert_eq!(content(&reply), UNSCRIPTED_REPLY);
        let log = provider.log();
        assert!(log[0].unscripted);
        assert_eq!(
            provider.said(),
            crate::oracle::Said {
                user: vec!["What is the weather?".to_owned()],
                assistant: vec![UNSCRIPTED_REPLY.to_owned()],
            }
        );
    }

    #[test]
    fn malformed_json_is_400_and_logged() {
        let provider = Provider::start(script()).expect("start");
        let reply = http(
            &provider,
            "POST",
            "/v1/chat/completions",
            b"{\"messages\": [",
        );
        assert_eq!(reply.status, 400);
        assert_eq!(reply.json()["error"]["type"], "invalid_request_error");
        let not_object = http(&provider, "POST", "/v1/chat/completions", b"[1, 2]");
        assert_eq!(not_object.status, 400);
        let log = provider.log();
        assert_eq!(log.len(), 2);
        assert!(log
            .iter()
            .all(|e| e.kind == CallKind::Other && e.status == 400));
        assert_eq!(log[0].request, json!("{\"messages\": ["));
        assert_eq!(provider.chat_calls(), 0);
    }

    #[test]
    fn odd_shapes_do_not_panic() {
        let provider = Provider::start(script()).expect("start");
        for body in [
            json!({}),
            json!({"messages": 5, "tools": "x"}),
            json!({"messages": [{"role": 1}, {"role": "user", "content": 42}], "tools": [{}]}),
            json!({"messages": [{"role": "user", "content": [1, null, {"text": 2}]}], "tools": [{}],
                "stream": "yes", "stream_options": 3, "response_format": {"json_schema": 7}}),
        ] {
            let reply = http(
                &provider,
                "POST",
                "/v1/chat/completions",
                body.to_string().as_bytes(),
            );
            assert_eq!(reply.status, 200, "for {body}");
        }
        assert_eq!(provider.log().len(), 4);
        assert!(provider.said().user.is_empty());
    }

    #[test]
    fn concurrent_requests_are_all_answered() {
        let provider = Provider::start(script()).expect("start");
        thread::scope(|scope| {
            let chat = scope.spawn(|| {
                let body = chat_body(json!([{"role": "user", "content": "hi"}]), true);
                http(&provider, "POST", "/v1/chat/completions", &body)
            });
            let title =
                scope.spawn(|| http(&provider, "POST", "/v1/chat/completions", &title_body(true)));
            assert_eq!(chat.join().expect("chat thread").status, 200);
            assert_eq!(title.join().expect("title thread").status, 200);
        });
        let mut seqs: Vec<usize> = provider.log().iter().map(|e| e.seq).collect();
        seqs.sort_unstable();
        assert_eq!(seqs, [0, 1]);
    }

    #[test]
    fn write_log_writes_one_json_line_per_exchange() {
        let provider = Provider::start(script()).expect("start");
        http(&provider, "GET", "/v1/models", b"");
        http(
            &provider,
            "POST",
            "/v1/chat/completions",
            &chat_body(json!([{"role": "user", "content": "hi"}]), false),
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("provider.jsonl");
        provider.write_log(&path).expect("write log");
        let text = std::fs::read_to_string(&path).expect("read log");
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON line"))
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["kind"], "meta");
        assert_eq!(
            (lines[1]["kind"].clone(), lines[1]["seq"].clone()),
            (json!("chat"), json!(1))
        );
        assert_eq!(lines[1]["reply"], "Hello.");
    }

    #[test]
    fn drop_stops_the_server() {
        let provider = Provider::start(script()).expect("start");
        // A keep-alive connection left open must not keep `Drop` from returning.
        let idle = TcpStream::connect(provider.addr()).expect("connect");
        let addr = provider.addr();
        assert_eq!(http(&provider, "GET", "/v1/models", b"").status, 200);
        drop(provider);
        assert!(
            TcpStream::connect(addr).is_err(),
            "still accepting on {addr}"
        );
        drop(idle);
    }

    #[test]
    fn match_turn_prefers_exact_then_latest_then_longest() {
        let turns = script().turns;
        let user = |t: Option<&Turn>| t.map(|t| t.user.clone());
        assert_eq!(user(match_turn(&turns, " hi ")), Some("hi".to_owned()));
        assert_eq!(
            user(match_turn(&turns, "please say hi")),
            Some("say hi".to_owned())
        );
        assert_eq!(
            user(match_turn(
                &turns,
                "hi — Tell me about the lighthouse keeper"
            )),
            Some("Tell me about the lighthouse keeper".to_owned())
        );
        assert_eq!(user(match_turn(&turns, "unknown words")), None);
        let empty = [Turn {
            user: "  ".to_owned(),
            reply: "x".to_owned(),
            ..Turn::default()
        }];
        assert_eq!(match_turn(&empty, "anything"), None);
    }

    fn faulty_script(fault: Fault, times: Option<u32>) -> Script {
        Script {
            turns: vec![Turn {
                user: "hi".to_owned(),
                reply: LIGHTHOUSE.to_owned(),
                fault: Some(fault),
                fault_times: times,
                ..Turn::default()
            }],
            ..script()
        }
    }

    #[test]
    fn http_500_fault_then_the_reply_once_fault_times_is_spent() {
        let provider = Provider::start(faulty_script(Fault::Http500, Some(1))).expect("start");
        let body = chat_body(json!([{"role": "user", "content": "hi"}]), false);
        let first = http(&provider, "POST", "/v1/chat/completions", &body);
        assert_eq!(first.status, 500);
        assert!(String::from_utf8_lossy(&first.body).contains("injected fault"));
        let second = http(&provider, "POST", "/v1/chat/completions", &body);
        assert_eq!(second.status, 200);
        assert!(String::from_utf8_lossy(&second.body).contains("lighthouse"));
        let log = provider.log();
        assert_eq!(log[0].fault, Some(Fault::Http500));
        assert_eq!(
            (log[0].status, log[1].status, log[1].fault),
            (500, 200, None)
        );
    }

    #[test]
    fn malformed_json_fault_is_not_json() {
        let provider = Provider::start(faulty_script(Fault::MalformedJson, None)).expect("start");
        let body = chat_body(json!([{"role": "user", "content": "hi"}]), false);
        let reply = http(&provider, "POST", "/v1/chat/completions", &body);
        assert_eq!(reply.status, 200);
        assert!(serde_json::from_slice::<Value>(&reply.body).is_err());
        let stream = chat_body(json!([{"role": "user", "content": "hi"}]), true);
        let reply = http(&provider, "POST", "/v1/chat/completions", &stream);
        let events = reply.events();
        assert!(
            serde_json::from_str::<Value>(&events[0]).is_err(),
            "{events:?}"
        );
    }

    #[test]
    fn drop_stream_fault_sends_half_a_stream_without_done() {
        let provider = Provider::start(faulty_script(Fault::DropStream, None)).expect("start");
        let body = chat_body(json!([{"role": "user", "content": "hi"}]), true);
        let mut stream = TcpStream::connect(provider.addr()).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let head = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).expect("head");
        stream.write_all(&body).expect("body");
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        let text = String::from_utf8_lossy(&raw);
        assert!(text.contains("data: "), "some events arrive: {text}");
        assert!(!text.contains("[DONE]"), "the stream never ends: {text}");
        assert!(!text.contains("stop"), "no finish_reason: {text}");
    }

    #[test]
    fn a_hanging_answer_does_not_hold_up_the_fake_models_shutdown() {
        let provider = Provider::start(faulty_script(Fault::Hang, None)).expect("start");
        let addr = provider.addr();
        let body = chat_body(json!([{"role": "user", "content": "hi"}]), false);
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_millis(500)))
            .expect("timeout");
        let head = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).expect("head");
        stream.write_all(&body).expect("body");
        let mut buf = [0u8; 16];
        let err = stream.read(&mut buf).expect_err("nothing arrives");
        assert!(matches!(
            err.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ));
        let started = Instant::now();
        drop(provider);
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }
}
