//! The fake model's faults: what each sends, and how often.

use super::*;

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
    let timeout = Duration::from_secs(10);
    let mut stream = send_request(
        provider.addr(),
        "POST",
        "/v1/chat/completions",
        &body,
        timeout,
        true,
    );
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    assert!(text.contains("data: "), "some events arrive: {text}");
    assert!(!text.contains("[DONE]"), "the stream never ends: {text}");
    assert!(!text.contains("stop"), "no finish_reason: {text}");
}

#[test]
fn usage_only_end_fault_sends_the_whole_text_and_no_finish_reason() {
    let provider = Provider::start(faulty_script(Fault::UsageOnlyEnd, None)).expect("start");
    let body = chat_body(json!([{"role": "user", "content": "hi"}]), true);
    let reply = http(&provider, "POST", "/v1/chat/completions", &body);
    let events = reply.events();
    assert_eq!(
        events.last().map(String::as_str),
        Some("[DONE]"),
        "{events:?}"
    );
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).expect("JSON"))
        .collect();
    let text: String = chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
        })
        .collect();
    assert_eq!(text, LIGHTHOUSE, "the text arrives whole");
    let finishes = chunks
        .iter()
        .filter(|c| {
            c.pointer("/choices/0/finish_reason")
                .is_some_and(|f| !f.is_null())
        })
        .count();
    assert_eq!(finishes, 0, "{chunks:?}");
    let last = chunks.last().expect("a chunk");
    assert_eq!(last["choices"], json!([]), "{last}");
    assert!(last.get("usage").is_some(), "{last}");
    // Already ending usage-only: nothing is added, only the finish chunk is taken out.
    let with_usage = vec![
        json!({"choices": [{"delta": {"content": "a"}, "finish_reason": null}]}),
        json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 3}}),
    ];
    let out = crate::provider::faults::usage_only_end(with_usage.clone());
    assert_eq!(out, vec![with_usage[0].clone(), with_usage[2].clone()]);
}

#[test]
fn a_hanging_answer_does_not_hold_up_the_fake_models_shutdown() {
    let provider = Provider::start(faulty_script(Fault::Hang, None)).expect("start");
    let addr = provider.addr();
    let body = chat_body(json!([{"role": "user", "content": "hi"}]), false);
    let timeout = Duration::from_millis(500);
    let mut stream = send_request(addr, "POST", "/v1/chat/completions", &body, timeout, false);
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
