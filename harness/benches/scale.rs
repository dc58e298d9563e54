//! Benchmarks at scale (issue 15): a 1,000,000-word check end to end against bare vt100 parsing of
//! the same bytes, the display projection of a 100,000-message conversation with 50 compactions,
//! a live recording cut into views against the same judged whole, and `inspect` of one very
//! large message.
//!
//! `cargo bench -p hermes-e2e --bench scale` (≈ 3 minutes). The inputs are generated here, in the
//! test tree, deterministically: a conversation of 10,000 messages of 100 words in the 0.22 schema
//! with the asciicast a client would have drawn of it (each message once), the shape of
//! `hermes-e2e check --cast` on a long session; a [`History`](hermes_e2e::testing::history::History) with a
//! compaction every 800 turns; one message of `HERMES_E2E_BENCH_MESSAGE_MB` MB (default 64; 950
//! for the gigabyte case, just under SQLite's limit of 10^9 bytes on a string: one sample takes
//! ≈ 20 s). Peak memory is not something criterion
//! measures: it is measured on the same inputs with `/usr/bin/time -f "%e s %M KB" hermes-e2e
//! check --cast …` / `inspect …`, as the README's Performance section says. With
//! `HERMES_E2E_BENCH_KEEP=DIR` the 1M-word inputs are written to `DIR/big.cast` and
//! `DIR/state.db`, the large message to `DIR/large.db`, and kept (e.g.
//! `HERMES_E2E_BENCH_KEEP=/tmp/scale cargo bench -p hermes-e2e --bench scale -- check_cast`), so
//! the binary can be timed and profiled on the same bytes.

/// The binary's allocator (`src/main.rs`), so that what is measured here is what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::io::Write;
use std::num::NonZeroU16;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hermes_e2e::display::{self, Surface};
use hermes_e2e::store::Store;
use hermes_e2e::terminal::{cast, Screen};
use hermes_e2e::testing::client::stored::SCHEMA_0_22;
use hermes_e2e::testing::views::recorded;
use hermes_e2e::{Basis, Session};
use rusqlite::Connection;

mod support;

use support::Shape;

const VOCAB: &[&str] = &[
    "keeper", "lamp", "fog", "tide", "gull", "lens", "wick", "oil", "bell", "storm", "ship",
    "rock", "pier", "net", "sail", "wind", "cliff", "wave", "beam", "log", "night", "dawn",
    "stair", "glass", "brass", "boat", "shore", "ice", "smoke", "bread", "salt", "rope", "harbor",
    "winter", "light", "tower",
];

/// A deterministic word stream (xorshift).
struct Words(u64);

impl Words {
    fn next(&mut self) -> &'static str {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        VOCAB[(self.0 % VOCAB.len() as u64) as usize]
    }

    fn text(&mut self, words: usize) -> String {
        (0..words)
            .map(|_| self.next())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A database of one session with `messages` messages of `words` words, alternating user and
/// assistant, in the 0.22 schema; message `i` made at `1000 + i` seconds.
fn conversation_db(path: &Path, texts: &[String]) {
    conversation_db_at(path, texts, |i| 1000.0 + i as f64);
}

/// [`conversation_db`] with message `i` made at `made(i)`.
fn conversation_db_at(path: &Path, texts: &[String], made: impl Fn(usize) -> f64) {
    let mut db = Connection::open(path).unwrap();
    db.execute_batch(SCHEMA_0_22).unwrap();
    db.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1000.0)",
        [],
    )
    .unwrap();
    let tx = db.transaction().unwrap();
    for (i, t) in texts.iter().enumerate() {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        tx.execute(
            "INSERT INTO messages (session_id, role, content, timestamp, active, message_uid) \
             VALUES ('s1', ?1, ?2, ?3, 1, ?4)",
            rusqlite::params![role, t, made(i), format!("uid{i}")],
        )
        .unwrap();
    }
    tx.commit().unwrap();
}

/// The asciicast a 200×50 terminal would have recorded of `texts` in a resume recap: each drawn
/// once in a panel, after a role marker; returns its output bytes.
fn conversation_cast(path: &Path, texts: &[String]) -> Vec<u8> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(f, r#"{{"version": 2, "width": 200, "height": 50}}"#).unwrap();
    let mut bytes = Vec::new();
    for (i, t) in texts.iter().enumerate() {
        // A resume recap's panel (what `check --cast` is mostly given): a border, a label.
        let line = format!("│ {}{t}\r\n", if i % 2 == 0 { "● " } else { "◆ " });
        let event = serde_json::json!([0.001 * (i + 1) as f64, "o", line]);
        writeln!(f, "{event}").unwrap();
        bytes.extend_from_slice(line.as_bytes());
    }
    f.flush().unwrap();
    bytes
}

fn million_words(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    // `HERMES_E2E_BENCH_KEEP=DIR` writes the inputs into DIR and keeps them, for timing and
    // profiling the release binary on the same bytes (see the module docs).
    let keep = std::env::var_os("HERMES_E2E_BENCH_KEEP").map(PathBuf::from);
    let at = keep.as_deref().unwrap_or(dir.path());
    std::fs::create_dir_all(at).unwrap();
    let mut words = Words(0x2545_f491_4f6c_dd1d);
    let texts: Vec<String> = (0..10_000).map(|_| words.text(100)).collect();
    let (db, recording) = (at.join("state.db"), at.join("big.cast"));
    let _ = std::fs::remove_file(&db);
    conversation_db(&db, &texts);
    let bytes = conversation_cast(&recording, &texts);
    let file_bytes = std::fs::metadata(&recording).unwrap().len();

    let mut g = c.benchmark_group("scale");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(file_bytes));
    // What `hermes-e2e check --cast big.cast --db state.db` does, minus printing: the recording
    // replayed while the database is read, on a second thread.
    g.bench_function("check_cast_1m_words_10k_messages", |b| {
        b.iter(|| {
            let (transcript, basis) = std::thread::scope(|scope| {
                let read = scope.spawn(|| {
                    let store = Store::open(&db).unwrap();
                    Basis::read(&store, Session::Latest, Surface::default()).unwrap()
                });
                // Where `check` cuts the recording into views: none sent, so it is one.
                let read_cast = cast::Recording::read(&recording).unwrap();
                let (steps, screen) = recorded::steps::<Screen>(&read_cast);
                assert_eq!(steps.steps.len(), 1);
                let transcript = screen.unwrap().transcript();
                (transcript, read.join().unwrap())
            });
            black_box(basis.check("bench", &transcript, None))
        })
    });
    // The floor: vt100 alone on the same output (no history kept, no JSON, no oracle), as
    // published — the vendored copy with its ASCII fast path turned off runs vt100 0.18.1's own
    // code (vendor/README.md) — and with the fast path the harness uses.
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    for (name, fast) in [
        ("bare_vt100_same_output", false),
        ("bare_vt100_fast_ascii_same_output", true),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let (rows, cols) = (NonZeroU16::new(50).unwrap(), NonZeroU16::new(200).unwrap());
                let mut parser = vt100::Parser::new(rows, cols, 0);
                parser.screen_mut().set_fast_text(fast);
                parser.process(black_box(&bytes));
                black_box(parser.screen().cursor_position())
            })
        });
    }
    g.finish();
}

/// 100,000 messages (≈ 40,000 turns, some with tool calls) with 50 compactions, every fifth
/// rotating into a child session.
fn hundred_thousand_messages(c: &mut Criterion) {
    let h = support::generated(&Shape {
        turns: 40_000,
        tool_calls: 1,
        compact_every: 800,
        rotate_every: 5,
        max_compactions: 50,
    });
    let store = h.store().unwrap();
    let rows = store.rows(&h.sessions).unwrap().len();
    let mut g = c.benchmark_group("scale");
    g.sample_size(10);
    g.throughput(Throughput::Elements(rows as u64));
    g.bench_function("projection_100k_messages_50_compactions", |b| {
        b.iter(|| black_box(display::expected(store, h.tip(), Surface::default()).unwrap()))
    });
    g.finish();
}

/// `check --cast` of a live recording of 200 turns (400 messages of 100 words) with its input
/// events: 201 views, each judged against the database as of its end (a copy and a projection
/// each), against the same recording judged whole.
fn live_recording_views(c: &mut Criterion) {
    const TURNS: usize = 200;
    let dir = tempfile::tempdir().unwrap();
    let mut words = Words(0x51ed_270b_1f6c_9e33);
    let texts: Vec<String> = (0..2 * TURNS).map(|_| words.text(100)).collect();
    // Turn `t` is sent at 1 + t seconds; its question is made 10 ms later, its reply 100 ms.
    let db = dir.path().join("state.db");
    conversation_db_at(&db, &texts, |i| {
        1001.0 + (i / 2) as f64 + if i % 2 == 0 { 0.01 } else { 0.1 }
    });
    let recording = dir.path().join("live.cast");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&recording).unwrap());
        writeln!(
            f,
            r#"{{"version": 2, "width": 200, "height": 50, "timestamp": 1000}}"#
        )
        .unwrap();
        for (t, pair) in texts.chunks(2).enumerate() {
            let sent = 1.0 + t as f64;
            let events = [
                (sent - 0.2, "i", pair[0].clone()),
                (sent, "i", "\r".to_owned()),
                (sent + 0.01, "o", format!("● {}\r\n", pair[0])),
                (sent + 0.1, "o", format!("{}\r\n", pair[1])),
            ];
            for (at, kind, data) in events {
                writeln!(f, "{}", serde_json::json!([at, kind, data])).unwrap();
            }
        }
    }
    let judge = |cut: bool| {
        let store = Store::open(&db).unwrap();
        let read = cast::Recording::read(&recording).unwrap();
        let (steps, _) = recorded::steps::<Screen>(&read);
        let basis = || Basis::read(&store, Session::Latest, Surface::default()).unwrap();
        if cut {
            let got = recorded::judge::<Screen, hermes_e2e::store::StoreError>(
                &read,
                steps,
                &store,
                // No basis before the first message is stored.
                |s| Ok(Basis::read(s, Session::Latest, Surface::default()).ok()),
                None,
            )
            .unwrap();
            assert_eq!(got.views.len(), TURNS + 1);
            black_box(got.views.len())
        } else {
            let mut screen: Screen = read.screen();
            read.play(&mut screen, 0..read.events.len());
            black_box(basis().check("bench", &screen.transcript(), None));
            0
        }
    };
    let mut g = c.benchmark_group("scale");
    g.sample_size(10);
    g.throughput(Throughput::Elements(TURNS as u64));
    g.bench_function("check_cast_live_200_turns_views", |b| {
        b.iter(|| judge(true))
    });
    g.bench_function("check_cast_live_200_turns_whole", |b| {
        b.iter(|| judge(false))
    });
    g.finish();
}

/// `inspect` of a database holding one message of `HERMES_E2E_BENCH_MESSAGE_MB` MB.
fn one_large_message(c: &mut Criterion) {
    let mb: usize = std::env::var("HERMES_E2E_BENCH_MESSAGE_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let dir = tempfile::tempdir().unwrap();
    // With `HERMES_E2E_BENCH_KEEP=DIR`: kept as `DIR/large.db`.
    let keep = std::env::var_os("HERMES_E2E_BENCH_KEEP").map(PathBuf::from);
    let db: PathBuf = keep.unwrap_or(dir.path().to_owned()).join("large.db");
    let _ = std::fs::remove_file(&db);
    let mut words = Words(7);
    let chunk = words.text(100_000) + " ";
    let text = chunk.repeat((mb << 20) / chunk.len() + 1);
    conversation_db(&db, &["hello there".to_owned(), text]);
    let mut g = c.benchmark_group("scale");
    g.sample_size(10);
    g.throughput(Throughput::Bytes((mb << 20) as u64));
    g.bench_function(format!("inspect_one_{mb}_mb_message"), |b| {
        b.iter(|| {
            let store = Store::open(&db).unwrap();
            black_box(
                hermes_e2e::testing::oracle::inspect(&store, None)
                    .unwrap()
                    .text(),
            )
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    million_words,
    live_recording_views,
    hundred_thousand_messages,
    one_large_message
);
criterion_main!(benches);
