//! A paced stream read as it arrives.
//!
//! A paced stream (`Turn::stream`), read by a test client as it arrives: chunk sizes, the spread
//! of arrival times, and the log's note of when the last chunk was sent.

use super::*;

/// 94 characters: nine chunks of 10 and one of 4.
const PACED_REPLY: &str = "The keeper climbed the stairs at dusk, trimmed the wick and watched \
    the ships pass in the fog.";

const DELAY: Duration = Duration::from_millis(30);

/// Ten characters a chunk, 30 ms before each (upstream's `chunk_chars=10, delay_per_chunk=0.03`).
const TEN_EVERY_30_MS: Pace = Pace {
    chunk_chars: 10,
    delay: DELAY,
};

fn paced_script(pace: Option<Pace>) -> Script {
    Script {
        turns: vec![Turn {
            user: "Tell me about the keeper".to_owned(),
            reply: PACED_REPLY.to_owned(),
            stream: pace,
            ..Turn::default()
        }],
        ..script()
    }
}

/// Streams one chat turn over a fresh connection and returns each content delta with the time
/// its read completed it, and the whole body's text.
fn read_paced(provider: &Provider) -> (Vec<(String, Instant)>, String) {
    let body = chat_body(
        json!([{"role": "user", "content": "Tell me about the keeper"}]),
        true,
    );
    let mut stream = send_request(
        provider.addr(),
        "POST",
        "/v1/chat/completions",
        &body,
        Duration::from_secs(10),
        true,
    );
    let mut raw = Vec::new();
    let mut deltas: Vec<(String, Instant)> = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).expect("read the stream");
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        let at = Instant::now();
        // Every complete `data:` line seen so far; those new since the last read arrived now.
        let text = String::from_utf8_lossy(&raw).into_owned();
        let contents: Vec<String> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|e| *e != "[DONE]")
            .filter_map(|e| serde_json::from_str::<Value>(e).ok())
            .filter_map(|c| {
                c["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(str::to_owned)
            })
            .filter(|c| !c.is_empty())
            .collect();
        for content in contents.into_iter().skip(deltas.len()) {
            deltas.push((content, at));
        }
        if text.ends_with("0\r\n\r\n") {
            break;
        }
    }
    (deltas, String::from_utf8_lossy(&raw).into_owned())
}

#[test]
fn a_paced_stream_sends_chunks_of_its_size_spread_over_time() {
    let provider = Provider::start(paced_script(Some(TEN_EVERY_30_MS))).expect("start");
    let (deltas, raw) = read_paced(&provider);
    let sizes: Vec<usize> = deltas.iter().map(|(c, _)| c.chars().count()).collect();
    assert_eq!(sizes, [10, 10, 10, 10, 10, 10, 10, 10, 10, 4]);
    let text: String = deltas.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(text, PACED_REPLY);
    assert!(raw.contains("data: [DONE]"), "{raw}");
    // Ten chunks, 30 ms before each: the first and the last arrive at least 9 × 30 ms apart on
    // the sender's clock; a bound of half that on the reader's leaves room for a loaded machine.
    let spread = deltas[9].1 - deltas[0].1;
    assert!(
        spread >= 9 * DELAY / 2,
        "10 chunks arrived within {spread:?}"
    );
    // Each chunk is flushed as it is written: most arrive in a read of their own, apart.
    let apart = deltas
        .windows(2)
        .filter(|w| w[1].1 - w[0].1 >= DELAY / 3)
        .count();
    assert!(
        apart >= 5,
        "only {apart} of 9 gaps between chunks were ≥ 10 ms"
    );
    // The log says when the stream ended: at least ten delays after the request arrived.
    let log = provider.log();
    let (received, last) = (
        log[0].received_ms,
        log[0].last_chunk_ms.expect("last chunk noted"),
    );
    assert!(
        last >= received + 10 * 30,
        "received {received} ms, last chunk {last} ms"
    );
    assert!(provider.chat_received_since(0).is_some());
    assert!(provider.chat_received_since(1).is_none());
}

#[test]
fn an_unpaced_stream_comes_in_forty_character_pieces_with_no_last_chunk_noted() {
    let provider = Provider::start(paced_script(None)).expect("start");
    let (deltas, _) = read_paced(&provider);
    let sizes: Vec<usize> = deltas.iter().map(|(c, _)| c.chars().count()).collect();
    assert_eq!(sizes, [40, 40, 14]);
    assert_eq!(provider.log()[0].last_chunk_ms, None);
}

#[test]
fn a_paced_turn_answered_without_streaming_is_one_json_body() {
    let provider = Provider::start(paced_script(Some(TEN_EVERY_30_MS))).expect("start");
    let reply = chat(
        &provider,
        json!([{"role": "user", "content": "Tell me about the keeper"}]),
        false,
    );
    assert_eq!(content(&reply), PACED_REPLY);
}
