//! Benchmarks of the pure stages: screen ingest, display projection, oracle, word counting.
//!
//! `cargo bench -p hermes-e2e --bench pipeline`. Inputs: the recorded rotating-resume fixture
//! (its asciicast and `state.db`) and generated histories (`hermes_e2e::testing::history`). Results and
//! method are written down in the README ("Performance").

/// The binary's allocator (`src/main.rs`), so that what is measured here is what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use hermes_e2e::display::{self, Surface};
use hermes_e2e::store::Store;
use hermes_e2e::terminal::{cast, Emulator, ReflowScreen, Screen};
use hermes_e2e::testing::history::History;
use hermes_e2e::testing::oracle::count_words;
use hermes_e2e::{Basis, Session};

mod support;

use support::Shape;

fn fixture(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/iot-0.22.2.post1-rotating-resume")
        .join(file)
}

/// The output bytes and size of the fixture recording.
fn cast_output() -> (u16, u16, Vec<u8>) {
    let text = std::fs::read_to_string(fixture("resume.cast")).expect("fixture cast");
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    let mut bytes = Vec::new();
    for line in lines {
        if let Ok((_, kind, data)) = serde_json::from_str::<(f64, String, String)>(line) {
            if kind == "o" {
                bytes.extend_from_slice(data.as_bytes());
            }
        }
    }
    (
        header["height"].as_u64().unwrap() as u16,
        header["width"].as_u64().unwrap() as u16,
        bytes,
    )
}

fn screen_ingest(c: &mut Criterion) {
    let (rows, cols, bytes) = cast_output();
    let mut g = c.benchmark_group("screen");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("ingest_fixture_cast", |b| {
        b.iter(|| {
            let mut s = Screen::new(rows, cols);
            s.feed(black_box(&bytes));
            black_box(s.transcript());
        })
    });
    g.finish();
}

/// The fixture's bytes into emulator `E`, resized (narrowed to 60 columns a third of the way, then
/// widened to 120 two thirds of the way) if `resizes`; its transcript.
fn ingest<E: Emulator>(rows: u16, cols: u16, bytes: &[u8], resizes: bool) {
    let mut s = E::create(rows, cols);
    if resizes {
        let third = bytes.len() / 3;
        s.feed(&bytes[..third]);
        s.resize(rows, 60);
        s.feed(&bytes[third..2 * third]);
        s.resize(rows, 120);
        s.feed(&bytes[2 * third..]);
    } else {
        s.feed(bytes);
    }
    black_box(s.transcript());
}

/// vt100 against the reflowing terminal (alacritty_terminal) on the same recording, with and
/// without two width changes: bytes per second, transcript included.
fn terminal_ingest(c: &mut Criterion) {
    let (rows, cols, bytes) = cast_output();
    let mut g = c.benchmark_group("terminal");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    for (name, resizes) in [("fixture_cast", false), ("fixture_cast_resized", true)] {
        g.bench_function(BenchmarkId::new("vt100", name), |b| {
            b.iter(|| ingest::<Screen>(rows, cols, black_box(&bytes), resizes))
        });
        g.bench_function(BenchmarkId::new("reflow", name), |b| {
            b.iter(|| ingest::<ReflowScreen>(rows, cols, black_box(&bytes), resizes))
        });
    }
    g.finish();
}

/// A history of `turns` turns with an in-place compaction every 20 and a rotation every 60.
fn generated(turns: usize) -> History {
    support::generated(&Shape {
        turns,
        tool_calls: 3,
        compact_every: 20,
        rotate_every: 3,
        max_compactions: usize::MAX,
    })
}

fn display_projection(c: &mut Criterion) {
    let mut g = c.benchmark_group("display");
    for turns in [100usize, 1000] {
        let h = generated(turns);
        let store = h.store().unwrap();
        let rows = store.rows(&h.sessions).unwrap().len();
        g.throughput(Throughput::Elements(rows as u64));
        g.bench_with_input(BenchmarkId::new("expected", turns), &turns, |b, _| {
            b.iter(|| {
                black_box(display::expected(store, h.tip(), Surface::default()).unwrap());
            })
        });
    }
    g.finish();
}

fn oracle_check(c: &mut Criterion) {
    let screen = cast::replay(&fixture("resume.cast")).unwrap();
    let transcript = screen.transcript();
    let store = Store::open(&fixture("state.db")).unwrap();
    let basis = Basis::read(&store, Session::Latest, Surface::default()).unwrap();
    // The oracle stage alone, the expectation's words made in each iteration (a basis on the
    // expectation alone: no data problems, no optional messages).
    c.bench_function("oracle/check_fixture", |b| {
        b.iter_batched(
            || basis.expected.clone(),
            |expected| Basis::from_expected(expected).check("bench", &transcript, None),
            BatchSize::SmallInput,
        )
    });
}

/// A one-million-word check: 10,000 messages of 100 words, each rendered once in a panel, with
/// one reply rendered a second time (the shape of issue 15's `check --cast` measurement).
fn oracle_check_million_words(c: &mut Criterion) {
    use hermes_e2e::display::{Expected, LogicalMessage, Role, RowRef};
    use hermes_e2e::terminal::{Transcript, TranscriptLine};
    const VOCAB: &[&str] = &[
        "keeper", "lamp", "fog", "tide", "gull", "lens", "wick", "oil", "bell", "storm", "ship",
        "rock", "pier", "net", "sail", "wind", "cliff", "wave", "beam", "log", "night", "dawn",
        "stair", "glass", "brass", "boat", "shore", "ice", "smoke", "bread", "salt", "rope",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let messages: Vec<LogicalMessage> = (0..10_000)
        .map(|i| {
            let text = (0..100)
                .map(|_| VOCAB[(next() % VOCAB.len() as u64) as usize])
                .collect::<Vec<_>>()
                .join(" ");
            LogicalMessage {
                role: if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                },
                text,
                rows: vec![RowRef {
                    id: i,
                    session_id: "s".to_string(),
                    message_uid: None,
                    carrier: false,
                }],
                shown: i,
            }
        })
        .collect();
    let mut lines = Vec::new();
    let mut draw = |text: &str| {
        lines.push(TranscriptLine {
            row: lines.len(),
            text: "Hermes".to_string(),
        });
        for chunk in text.split(' ').collect::<Vec<_>>().chunks(14) {
            lines.push(TranscriptLine {
                row: lines.len(),
                text: chunk.join(" "),
            });
        }
    };
    for m in &messages {
        draw(&m.text);
    }
    draw(&messages[4_999].text);
    let transcript = Transcript { lines };
    let expected = Expected {
        session_id: "s".to_string(),
        lineage: vec!["s".to_string()],
        stored_rows: messages.len(),
        messages,
        internal: vec![],
        taken_back: Vec::new(),
    };
    let mut g = c.benchmark_group("oracle");
    g.sample_size(10);
    g.throughput(Throughput::Elements(1_000_100));
    g.bench_function("check_1m_words", |b| {
        b.iter_batched(
            || expected.clone(),
            |expected| {
                let c = Basis::from_expected(expected).check("bench", &transcript, None);
                assert_eq!(c.findings.words_rendered_more_than_once, 100);
                c
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn word_count(c: &mut Criterion) {
    let text = "The keeper trims the wick, polishes the lens — 灯塔の番人 — and logs the weather. "
        .repeat(12_000);
    let mut g = c.benchmark_group("words");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("count_1MB", |b| b.iter(|| black_box(count_words(&text))));
    g.finish();
}

criterion_group!(
    benches,
    screen_ingest,
    terminal_ingest,
    display_projection,
    oracle_check,
    oracle_check_million_words,
    word_count
);
criterion_main!(benches);
