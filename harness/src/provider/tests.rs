use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::openai::{classify, Completion, Usage};
use super::script::{match_turn, title_reply};
use super::*;

/// The opening of the real client's system prompt (`agent/prompt_builder.py`).
const HERMES_SYSTEM: &str = "You are Hermes Agent, built by Nous Research. Be direct: match the \
    length of your reply to the weight of the ask.";

/// A long reply, so that a stream carries several content chunks.
const LIGHTHOUSE: &str = "The keeper of the lighthouse climbed the spiral stairs every evening \
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
        models: Vec::new(),
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

    /// The JSON chunks of an SSE body, in order (`[DONE]` left out).
    fn chunks(&self) -> Vec<Value> {
        self.events()
            .iter()
            .filter(|e| e.as_str() != "[DONE]")
            .map(|e| serde_json::from_str(e).expect("JSON chunk"))
            .collect()
    }

    /// The content of a streamed reply: its content deltas joined.
    fn streamed_text(&self) -> String {
        self.chunks()
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
            .collect()
    }
}

/// One raw HTTP/1.1 exchange over a fresh connection.
fn http(provider: &Provider, method: &str, path: &str, body: &[u8]) -> HttpReply {
    let timeout = Duration::from_secs(10);
    let mut stream = send_request(provider.addr(), method, path, body, timeout, true);
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the whole reply");
    parse_reply(&raw)
}

/// Sends one raw HTTP/1.1 request over a fresh connection and returns the connection, to read the
/// answer from within `read_timeout`; with `close`, the request asks to close it after the answer.
fn send_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: &[u8],
    read_timeout: Duration,
    close: bool,
) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connect to the fake");
    stream
        .set_read_timeout(Some(read_timeout))
        .expect("read timeout");
    let connection = if close { "Connection: close\r\n" } else { "" };
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n{connection}\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("send head");
    stream.write_all(body).expect("send body");
    stream
}

/// A chat request shaped like the client's ([`chat_body`]), sent over a fresh connection.
fn chat(provider: &Provider, messages: Value, stream: bool) -> HttpReply {
    let body = chat_body(messages, stream);
    http(provider, "POST", "/v1/chat/completions", &body)
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

/// Asserts that what was said is one user text and one reply.
fn assert_said_once(provider: &Provider, user: &str, assistant: &str) {
    assert_eq!(
        provider.said(),
        crate::oracle::Said {
            user: vec![user.to_owned()],
            assistant: vec![assistant.to_owned()],
        }
    );
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
fn switched_models_are_listed_and_described() {
    let provider = Provider::start(Script {
        models: vec!["other-model".into(), "fake-model".into(), "m/2".into()],
        ..Script::default()
    })
    .expect("start");
    let object = |id: &str| json!({"id": id, "object": "model", "owned_by": "hermes-e2e", "context_length": 131072});
    let models = http(&provider, "GET", "/v1/models", b"");
    assert_eq!(
        (models.status, models.json()),
        (
            200,
            json!({"object": "list", "data": [object("fake-model"), object("other-model"), object("m/2")]})
        )
    );
    for id in ["fake-model", "other-model", "m/2"] {
        let one = http(&provider, "GET", &format!("/v1/models/{id}"), b"");
        assert_eq!((one.status, one.json()), (200, object(id)));
    }
    assert_eq!(
        http(&provider, "GET", "/v1/models/unknown", b"").status,
        404
    );
    // A reply names the model the request asked for.
    let body = chat_body(json!([{"role": "user", "content": "hi"}]), false);
    let mut request: Value = serde_json::from_slice(&body).unwrap();
    request["model"] = json!("other-model");
    let reply = http(
        &provider,
        "POST",
        "/v1/chat/completions",
        &serde_json::to_vec(&request).unwrap(),
    );
    assert_eq!(reply.json()["model"], "other-model");
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
    assert_said_once(&provider, "Tell me about the lighthouse keeper", LIGHTHOUSE);
}

#[test]
fn list_of_parts_content_is_joined() {
    let provider = Provider::start(script()).expect("start");
    let ask = json!([{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "text", "text": "Please,"},
        {"type": "text", "text": "say hi"},
    ]}]);
    let reply = chat(&provider, ask, false);
    // "say hi" is contained and longer than "hi", which ends at the same place.
    assert_eq!(content(&reply), "Hi!");
    assert_eq!(provider.log()[0].user.as_deref(), Some("Please,\nsay hi"));
}

#[test]
fn streamed_reply_reassembles_with_usage_and_done() {
    let provider = Provider::start(script()).expect("start");
    let ask = json!([{"role": "user", "content": "Tell me about the lighthouse keeper"}]);
    let reply = chat(&provider, ask, true);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("Content-Type"), Some("text/event-stream"));
    let events = reply.events();
    assert_eq!(events.last().map(String::as_str), Some("[DONE]"));
    let chunks = reply.chunks();
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
    let first = chat(&provider, ask, false);
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
    let second = chat(&provider, results, true);
    assert_eq!(second.streamed_text(), LIGHTHOUSE);
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
    let chunks = chat(&provider, ask, true).chunks();
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

/// [`tool_script`] with a narration sent beside the calls.
fn narrated_tool_script() -> Script {
    let mut s = tool_script();
    s.turns[0].narration = "Let me read the keeper's log first.".to_owned();
    s
}

#[test]
fn a_narration_is_sent_with_the_tool_calls_and_counts_as_said() {
    let provider = Provider::start(narrated_tool_script()).expect("start");
    let ask = json!([{"role": "user", "content": "Read the log"}]);
    let first: Value =
        serde_json::from_slice(&chat(&provider, ask.clone(), false).body).expect("JSON");
    let choice = &first["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(
        choice["message"]["content"],
        "Let me read the keeper's log first."
    );
    assert_eq!(
        choice["message"]["tool_calls"][0]["function"]["name"],
        "read_file"
    );

    // Streamed: the narration's content first, then the calls, then the stop.
    let chunks = chat(&provider, ask, true).chunks();
    let first_call = chunks
        .iter()
        .position(|c| c["choices"][0]["delta"].get("tool_calls").is_some())
        .expect("a tool-call delta");
    let text: String = chunks[..first_call]
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "Let me read the keeper's log first.");
    assert!(chunks[first_call..]
        .iter()
        .all(|c| c["choices"][0]["delta"].get("content").is_none()));
    assert_eq!(
        provider.said().assistant,
        vec!["Let me read the keeper's log first.".to_owned()]
    );
    assert_eq!(provider.log()[0].tool_calls, vec!["read_file".to_owned()]);
}

#[test]
fn a_second_round_of_calls_answers_the_first_rounds_results() {
    let mut script = narrated_tool_script();
    script.turns[0].rounds = vec![crate::provider::Round {
        narration: "Now the station clock.".to_owned(),
        tool_calls: vec![ToolCall {
            name: "terminal".to_owned(),
            arguments: json!({"command": "date"}),
        }],
    }];
    let provider = Provider::start(script).expect("start");
    let ask = json!([{"role": "user", "content": "Read the log"}]);
    let first: Value = serde_json::from_slice(&chat(&provider, ask, false).body).expect("JSON");
    let call = first["choices"][0]["message"]["tool_calls"][0].clone();
    assert_eq!(call["id"], "call_hermes_e2e_0_0");
    let after_first = json!([
        {"role": "user", "content": "Read the log"},
        {"role": "assistant", "content": "Let me read the keeper's log first.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_hermes_e2e_0_0", "content": "12 March 1887"},
    ]);
    let second: Value =
        serde_json::from_slice(&chat(&provider, after_first, false).body).expect("JSON");
    let message = &second["choices"][0]["message"];
    assert_eq!(message["content"], "Now the station clock.");
    assert_eq!(message["tool_calls"][0]["id"], "call_hermes_e2e_0_0_r1");
    assert_eq!(message["tool_calls"][0]["function"]["name"], "terminal");
    let after_second = json!([
        {"role": "user", "content": "Read the log"},
        {"role": "tool", "tool_call_id": "call_hermes_e2e_0_0_r1", "content": "1887"},
    ]);
    let third = chat(&provider, after_second, true);
    assert_eq!(third.streamed_text(), LIGHTHOUSE);
    assert_eq!(
        provider.said().assistant,
        vec![
            "Let me read the keeper's log first.".to_owned(),
            "Now the station clock.".to_owned(),
            LIGHTHOUSE.to_owned()
        ]
    );
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
    assert_eq!(reply.streamed_text(), script().summary);
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
    let ask = json!([{"role": "user", "content": "  What is the weather?  "}]);
    let reply = chat(&provider, ask, false);
    assert_eq!(content(&reply), UNSCRIPTED_REPLY);
    let log = provider.log();
    assert!(log[0].unscripted);
    assert_said_once(&provider, "What is the weather?", UNSCRIPTED_REPLY);
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
    chat(&provider, json!([{"role": "user", "content": "hi"}]), false);
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

mod faults;
mod pace;

#[test]
fn a_saved_log_says_what_was_said_and_a_bad_line_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("provider.jsonl");
    std::fs::write(
        &path,
        concat!(
            "{\"kind\":\"meta\",\"user\":null,\"reply\":null}\n",
            "{\"kind\":\"chat\",\"user\":\" Q1 \",\"reply\":\"A1\"}\n",
            "\n",
            "{\"kind\":\"title\",\"user\":\"Q1\",\"reply\":\"Title\"}\n",
            "{\"kind\":\"chat\",\"user\":\"Q1\",\"reply\":\"A1 again\"}\n",
            "{\"kind\":\"chat\",\"user\":\"Q2\",\"reply\":null}\n",
        ),
    )
    .unwrap();
    let said = said_from_log(&path).unwrap();
    assert_eq!(said.user, vec!["Q1", "Q2"]);
    assert_eq!(said.assistant, vec!["A1", "A1 again"]);
    for (text, line) in [
        ("{\"kind\":\"chat\"}\nnot json\n", 2),
        ("{\"user\":\"Q\"}\n", 1),
    ] {
        std::fs::write(&path, text).unwrap();
        let message = said_from_log(&path).unwrap_err().to_string();
        assert!(
            message.contains(&format!("provider.jsonl:{line}`")),
            "{text:?}: {message}"
        );
    }
}
