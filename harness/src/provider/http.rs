//! The fake model's HTTP side.
//!
//! The tiny_http side of the fake model: the worker loop, routing one request to its [`Reply`],
//! the request body limit, and writing the reply (JSON with a length, everything else chunked).

use std::io::{self, Cursor, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::faults::{inject, CutReader};
use super::openai::{
    self, classify, model_object, stream_events, ChunkHead, Usage, SSE_PIECE_CHARS,
};
use super::reply::{Body, Reply};
use super::script::Script;
use super::{CallKind, Exchange, Shared};

/// Request bodies beyond this are cut: the client's largest requests (full history plus ~21 tool
/// schemas) are well under a megabyte, and the cap keeps a runaway sender from exhausting memory.
const MAX_BODY_BYTES: u64 = 64 << 20;

/// A worker: answers requests until `Drop` unblocks it.
pub(super) fn serve(server: &tiny_http::Server, shared: &Shared) {
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
    let received = shared.since_start(Instant::now());
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
    exchange.received_ms = received;
    if let Some(fault) = shared.take_fault(&exchange) {
        exchange.fault = Some(fault);
        reply = inject(fault, reply, exchange.stream);
        exchange.status = reply.status;
    }
    // Logged before sending, so that whoever has seen the reply (the client's screen, a test)
    // finds the exchange in the log. A client that went away is not the fake's failure.
    let seq = shared.record(exchange);
    match &reply.body {
        Body::Hang => shared.hang(),
        Body::Paced(events, delay) => {
            let _ = send_paced(
                request,
                reply.status,
                events,
                *delay,
                &shared.stopping,
                |at| shared.sent_last_chunk(seq, at),
            );
        }
        _ => {
            let _ = send(request, &reply);
        }
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
        received_ms: 0,
        last_chunk_ms: None,
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
    let ids = script.model_ids();
    if get && path.ends_with("/models") {
        exchange.kind = CallKind::Meta;
        let data: Vec<Value> = ids.iter().map(|id| model_object(id)).collect();
        return Reply::json(200, json!({"object": "list", "data": data}));
    }
    if let Some(id) = path
        .rsplit_once("/models/")
        .map(|(_, id)| id)
        .filter(|id| get && ids.contains(id))
    {
        exchange.kind = CallKind::Meta;
        return Reply::json(200, model_object(id));
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

/// `POST …/chat/completions`.
fn completion(script: &Script, body: io::Result<Vec<u8>>, exchange: &mut Exchange) -> Reply {
    let request = match read_request(body, exchange) {
        Ok(request) => request,
        Err(reply) => return reply,
    };

    let kind = classify(&request);
    let answer = script.answer(kind, &request);
    let (text, calls, pace) = (answer.text, answer.calls, answer.pace);

    let usage = Usage::new(&request, &text);
    let stream = request.get("stream").and_then(Value::as_bool) == Some(true);
    let include_usage = request
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        == Some(true);
    let head = ChunkHead::new(&request);

    exchange.kind = kind.into();
    exchange.stream = stream;
    exchange.user = answer.user;
    exchange.unscripted = answer.unscripted;
    exchange.prompt_tokens = usage.prompt;
    exchange.request = request;

    exchange.tool_calls = calls
        .iter()
        .filter_map(|c| c.pointer("/function/name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    let body = if stream {
        let piece_chars = pace.map_or(SSE_PIECE_CHARS, |p| p.chunk_chars);
        let events = stream_events(
            &head,
            &text,
            piece_chars,
            &calls,
            include_usage.then_some(usage),
        );
        match pace {
            Some(pace) => Body::Paced(events, pace.delay),
            None => Body::Events(events),
        }
    } else {
        Body::Json(openai::completion_json(&head, &text, calls, usage))
    };
    // A text sent with tool calls (a narration) was said too.
    if exchange.tool_calls.is_empty() || !text.is_empty() {
        exchange.reply = Some(text);
    }
    Reply { status: 200, body }
}

/// The request body of a completion as a JSON object, or the HTTP 400 that answers it (the body
/// could not be read, is not JSON, or is JSON but not an object); what was received is logged.
fn read_request(body: io::Result<Vec<u8>>, exchange: &mut Exchange) -> Result<Value, Reply> {
    let raw = match body {
        Ok(raw) => raw,
        Err(e) => {
            return Err(Reply::error(
                400,
                "invalid_request_error",
                format!("hermes-e2e fake model: could not read the request body: {e}"),
            ))
        }
    };
    match serde_json::from_slice::<Value>(&raw) {
        Ok(request @ Value::Object(_)) => Ok(request),
        Ok(other) => {
            exchange.request = other;
            Err(Reply::error(
                400,
                "invalid_request_error",
                "hermes-e2e fake model: the request body must be a JSON object".to_owned(),
            ))
        }
        Err(e) => {
            exchange.request = Value::String(String::from_utf8_lossy(&raw).into_owned());
            Err(Reply::error(
                400,
                "invalid_request_error",
                format!("hermes-e2e fake model: malformed JSON in the request body: {e}"),
            ))
        }
    }
}

/// The bytes and content type of a complete body.
fn body_bytes(body: &Body) -> io::Result<(&'static str, Vec<u8>)> {
    Ok(match body {
        Body::Json(value) => ("application/json", serde_json::to_vec(value)?),
        Body::Events(events) | Body::Paced(events, _) => {
            let mut bytes = Vec::new();
            for event in events {
                bytes.extend_from_slice(&event_bytes(event)?);
            }
            bytes.extend_from_slice(DONE_EVENT);
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
        Body::Events(_) | Body::Paced(..) => {
            headers(&[("Content-Type", kind), ("Cache-Control", "no-cache")])
        }
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

/// The last event of every stream.
const DONE_EVENT: &[u8] = b"data: [DONE]\n\n";

/// One SSE event: `data: JSON` and a blank line.
fn event_bytes(event: &Value) -> io::Result<Vec<u8>> {
    let mut bytes = b"data: ".to_vec();
    serde_json::to_writer(&mut bytes, event)?;
    bytes.extend_from_slice(b"\n\n");
    Ok(bytes)
}

/// Writes a paced stream by hand on the request's raw connection (tiny_http's chunked encoder
/// holds 8 KiB before it writes): the head, then each event as one HTTP chunk, flushed at once,
/// with `delay` before each content event (the role chunk goes at once, tool calls, the stop and
/// the usage right after the last content); then `[DONE]` and the terminating chunk. `sent` is
/// told the instant the last event was flushed, before `[DONE]` is written: whoever has read
/// `[DONE]` finds it noted. Stops early (an error) when the fake model is stopping.
fn send_paced(
    request: tiny_http::Request,
    status: u16,
    events: &[Value],
    delay: Duration,
    stopping: &AtomicBool,
    sent: impl FnOnce(Instant),
) -> io::Result<()> {
    let reason = tiny_http::StatusCode(status).default_reason_phrase();
    let mut w = request.into_writer();
    write!(
        w,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/event-stream\r\n\
         Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
    )?;
    w.flush()?;
    for event in events {
        let content = event
            .pointer("/choices/0/delta/content")
            .and_then(Value::as_str)
            .is_some_and(|c| !c.is_empty());
        if content {
            thread::sleep(delay);
        }
        if stopping.load(Ordering::SeqCst) {
            return Err(io::Error::other("the fake model is stopping"));
        }
        write_chunk(&mut w, &event_bytes(event)?)?;
    }
    sent(Instant::now());
    write_chunk(&mut w, DONE_EVENT)?;
    w.write_all(b"0\r\n\r\n")?;
    w.flush()
}

/// One HTTP/1.1 chunk (`SIZE CRLF data CRLF`), flushed.
fn write_chunk(w: &mut dyn Write, data: &[u8]) -> io::Result<()> {
    write!(w, "{:x}\r\n", data.len())?;
    w.write_all(data)?;
    w.write_all(b"\r\n")?;
    w.flush()
}

/// Response headers from name/value pairs (a pair tiny_http rejects is left out).
fn headers(pairs: &[(&str, &str)]) -> Vec<tiny_http::Header> {
    pairs
        .iter()
        .filter_map(|(name, value)| {
            tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
        })
        .collect()
}
