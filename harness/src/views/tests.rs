//! The views on generated live sessions.
//!
//! A simulated client (a test double of the real one's writes and screen, named as such) plays
//! turns, `/history`, `/undo`, `/retry`, in-place `/compress` and resumes against a real-schema
//! `state.db`, drawing what a correct client draws, and the views are judged as a scenario's steps
//! judge them. A correct screen has no finding at any check; each planted defect is found with its
//! exact size, in the view that drew it, and carried by later checks of the same client process.

use proptest::prelude::*;

use super::*;
use crate::display::{Role, Surface};
use crate::oracle::Findings;
use crate::store::testdb::{Msg, TestDb};
use crate::store::Schema;
use crate::terminal::Transcript;
use crate::verdict::{self, Basis};

const SESSION: &str = "20261205_120000_aaaaaa";

/// User texts: repeats on purpose (a person may type `ok` twice), one CJK.
const USER: &[&str] = &[
    "ok",
    "tell me about the lamp room",
    "ok",
    "什么是灯塔？",
    "what about the fog signal in winter",
];

/// Replies: repeats on purpose (the same answer twice), and a paragraph shared by two replies.
const REPLY: &[&str] = &[
    "The lamp was lit at dusk and trimmed at midnight by the keeper on watch.",
    "Noted.",
    "The lamp was lit at dusk and trimmed at midnight by the keeper on watch.",
    "Fog rolled in over the rocks. The lamp was lit at dusk and trimmed at midnight by the \
     keeper on watch, and the horn sounded every thirty seconds.",
];

/// The words of `text` as the oracle reads them.
fn words_of(text: &str) -> Vec<String> {
    crate::words::word_spans(text)
        .into_iter()
        .map(|(_, w)| w)
        .collect()
}

/// Whether `outer` holds the words `inner` in a row.
fn holds(outer: &[String], inner: &[String]) -> bool {
    outer.windows(inner.len().max(1)).any(|w| w == inner)
}

/// One thing the user does, and the defect planted in what the client draws for it.
#[derive(Debug, Clone)]
enum Op {
    /// A turn; `twice`: the client draws the reply twice in the exchange.
    Turn {
        user: usize,
        reply: usize,
        twice: bool,
    },
    /// `/history`; `summary`: the listing draws the compaction summary.
    Listing { summary: bool },
    /// `/undo`: the last exchange taken back, its question back in the composer.
    Undo,
    /// `/retry`: the last exchange taken back and its question sent again; the new reply.
    Retry { reply: usize },
    /// In-place `/compress`: a summary and the last two rows carried forward.
    Compact,
    /// Quit and `--resume`; `taken_back`: the recap draws a message the user took back.
    Resume { taken_back: bool },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..USER.len(), 0..REPLY.len(), prop::bool::weighted(0.2))
            .prop_map(|(user, reply, twice)| Op::Turn { user, reply, twice }),
        1 => prop::bool::weighted(0.3).prop_map(|summary| Op::Listing { summary }),
        1 => Just(Op::Undo),
        1 => (0..REPLY.len()).prop_map(|reply| Op::Retry { reply }),
        1 => Just(Op::Compact),
        1 => prop::bool::weighted(0.3).prop_map(|taken_back| Op::Resume { taken_back }),
    ]
}

/// The simulated client, its database and its screen, and the views judged so far.
struct Sim {
    db: TestDb,
    /// Live exchanges (user row, reply row), oldest first.
    exchanges: Vec<(i64, i64)>,
    screen: Vec<String>,
    judged: Vec<Judged>,
    reported: usize,
    end: usize,
    seen: Vec<String>,
    before: Before,
    /// What each view was planted with.
    planted: Vec<Findings>,
    /// `message_uid`s minted.
    uids: u32,
    /// Internal texts this client process has drawn.
    internal_drawn: std::collections::HashSet<String>,
}

impl Sim {
    fn new() -> Sim {
        let db = TestDb::in_memory(Schema::Uid);
        db.session(SESSION, None, 1_790_000_000.0, None);
        Sim {
            db,
            exchanges: Vec::new(),
            screen: vec!["Hermes Agent banner".into()],
            judged: Vec::new(),
            reported: 0,
            end: 0,
            seen: Vec::new(),
            before: Before::default(),
            planted: Vec::new(),
            uids: 0,
            internal_drawn: Default::default(),
        }
    }

    fn basis(&self) -> Basis {
        let store = self.db.open();
        Basis::read(&store, verdict::Session::Id(SESSION), Surface::default()).unwrap()
    }

    fn before(&self, basis: &Basis) -> Before {
        Before::read(&self.db.open(), Some(basis)).unwrap()
    }

    /// Writes `msg` with a fresh `message_uid` (as the client's trigger mints one); its id.
    fn write(&mut self, mut msg: Msg) -> i64 {
        self.uids += 1;
        msg.uid = Some(format!("uid-{:04}", self.uids));
        self.db.msg(&msg).0
    }

    fn draw(&mut self, text: &str) {
        self.screen.extend(text.lines().map(str::to_owned));
    }

    /// A message under its label, as the client draws one (`cli.resume.label_you`, the reply
    /// panel's title): the oracle sees message boundaries through such words.
    fn draw_message(&mut self, role: Role, text: &str) {
        self.draw(match role {
            Role::User => "▌ label_you",
            _ => "▌ label_hermes",
        });
        self.draw(text);
    }

    /// Performs `op`, drawing what the client draws; returns the view's kind and what was
    /// planted in it.
    fn perform(&mut self, op: &Op) -> Option<(ViewKind, Findings)> {
        let mut planted = Findings::default();
        let kind = match *op {
            Op::Turn { user, reply, twice } => {
                let u = self.write(Msg::new(SESSION, "user", USER[user]));
                let a = self.write(Msg::new(SESSION, "assistant", REPLY[reply]));
                self.exchanges.push((u, a));
                self.draw_message(Role::User, USER[user]);
                self.draw_message(Role::Assistant, REPLY[reply]);
                if twice {
                    self.draw_message(Role::Assistant, REPLY[reply]);
                    planted.words_rendered_more_than_once = crate::words::count(REPLY[reply]);
                }
                ViewKind::Exchange
            }
            Op::Listing { summary } => {
                let basis = self.basis();
                for m in &basis.expected.messages {
                    self.draw_message(m.role, &m.text);
                }
                match basis.expected.internal.first() {
                    Some(x) if summary => {
                        self.draw(&x.text);
                        // Counted where the screen first shows it (one client act, once).
                        if self.internal_drawn.insert(x.text.clone()) {
                            planted.internal_text_shown = crate::words::count(&x.text);
                        }
                    }
                    _ => {}
                }
                ViewKind::Command
            }
            Op::Undo => {
                let (u, a) = self.exchanges.pop()?;
                self.take_back(u, a);
                let text = self.content(u);
                self.draw("Undid the last exchange");
                self.draw(&text);
                ViewKind::Command
            }
            Op::Retry { reply } => {
                let (u, a) = self.exchanges.pop()?;
                self.take_back(u, a);
                let text = self.content(u);
                let u = self.write(Msg::new(SESSION, "user", &text));
                let a = self.write(Msg::new(SESSION, "assistant", REPLY[reply]));
                self.exchanges.push((u, a));
                self.draw_message(Role::User, &text);
                self.draw_message(Role::Assistant, REPLY[reply]);
                ViewKind::Exchange
            }
            Op::Compact => {
                if self.exchanges.len() < 3 {
                    return None;
                }
                self.compact();
                self.draw("Compressed: 8 → 4");
                ViewKind::Command
            }
            Op::Resume { taken_back } => {
                // A new process: a fresh screen, its views start again.
                self.screen = vec!["Hermes Agent banner".into()];
                self.judged.clear();
                self.planted.clear();
                self.reported = 0;
                self.end = 0;
                self.seen.clear();
                self.internal_drawn.clear();
                let basis = self.basis();
                self.before = self.before(&basis);
                for m in &basis.expected.messages {
                    self.draw_message(m.role, &m.text);
                }
                // A taken-back text that a kept message holds inside its own (or holds a kept
                // one) is, on the screen, either message's words: the screen cannot tell them
                // apart, so none is planted.
                let told_apart = |t: &&crate::display::TakenBack| {
                    let theirs = words_of(&t.text);
                    !basis.expected.messages.iter().any(|m| {
                        let kept = words_of(&m.text);
                        holds(&kept, &theirs) || holds(&theirs, &kept)
                    })
                };
                match basis.expected.taken_back.iter().find(told_apart) {
                    Some(t) if taken_back => {
                        self.draw(&t.text);
                        planted.taken_back_shown = 1;
                    }
                    _ => {}
                }
                ViewKind::Recap
            }
        };
        Some((kind, planted))
    }

    /// The exchange of rows `u` and `a` rewound, as `/undo` and `/retry` do.
    fn take_back(&self, u: i64, a: i64) {
        self.db
            .conn
            .execute(
                "UPDATE messages SET active = 0 WHERE id IN (?1, ?2)",
                rusqlite::params![u, a],
            )
            .unwrap();
    }

    /// The stored content of row `id`.
    fn content(&self, id: i64) -> String {
        self.db
            .conn
            .query_row("SELECT content FROM messages WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .unwrap()
    }

    /// In-place compaction: the live rows archived, a standalone summary, and the last exchange
    /// carried forward (the originals superseded, the copies live, same uid and timestamp).
    fn compact(&mut self) {
        let (u, a) = *self.exchanges.last().unwrap();
        let conn = &self.db.conn;
        conn.execute(
            "UPDATE messages SET active = 0, compacted = 1 WHERE active = 1 AND id NOT IN (?1, ?2)",
            rusqlite::params![u, a],
        )
        .unwrap();
        conn.execute(
            "UPDATE messages SET active = 0, compacted = 0 WHERE id IN (?1, ?2)",
            rusqlite::params![u, a],
        )
        .unwrap();
        let mut summary = Msg::new(
            SESSION,
            "user",
            "[CONTEXT COMPACTION — REFERENCE ONLY] The keeper lit the lamp nightly and kept the \
             fog signal ready through every winter storm.",
        );
        summary.summary = 1;
        self.write(summary);
        let mut copies = Vec::new();
        for id in [u, a] {
            let (role, content, ts, uid): (String, String, f64, String) = self
                .db
                .conn
                .query_row(
                    "SELECT role, content, timestamp, message_uid FROM messages WHERE id = ?1",
                    [id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .unwrap();
            let mut copy = Msg::new(SESSION, &role, &content);
            copy.ts = Some(ts);
            copy.uid = Some(uid);
            copies.push(self.db.msg(&copy).0);
        }
        self.exchanges = vec![(copies[0], copies[1])];
    }

    /// Judges the view `op` drew, as the runner does when its step is done.
    fn step(&mut self, op: &Op, at: &str) {
        let Some((kind, planted)) = self.perform(op) else {
            return;
        };
        let transcript = Transcript::from_history_lines(&self.screen);
        let start = next_start(&self.seen, &transcript, self.end);
        let basis = self.basis();
        let judged = judge(
            (kind, at.to_owned(), 0),
            &slice(&transcript, start),
            &basis,
            (&self.before, &Erased::since(&self.judged, usize::MAX)),
            None,
        );
        self.before = self.before(&basis);
        self.judged.push(judged);
        self.planted.push(planted);
        self.end = transcript.lines.len();
        self.seen = transcript.lines.into_iter().map(|l| l.text).collect();
    }

    /// A check: the sum of the views, each view's own findings as planted.
    fn check(&mut self, at: &str) -> Result<(), TestCaseError> {
        let (check, summaries) = combine(at, &self.judged, self.reported, &self.basis());
        let mut want = Findings::default();
        for (i, (s, p)) in summaries.iter().zip(&self.planted).enumerate() {
            prop_assert_eq!(&s.findings, p, "view {} ({}): {}", i, s.step, s.verdict);
            prop_assert_eq!(s.carried, i < self.reported);
            want.words_rendered_more_than_once += p.words_rendered_more_than_once;
            want.internal_text_shown += p.internal_text_shown;
            want.taken_back_shown += p.taken_back_shown;
        }
        prop_assert_eq!(check.findings, want, "{}", at);
        self.reported = self.judged.len();
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::history::cases()))]

    /// Drawn correctly, a live session has no finding at any check; each planted defect is found
    /// with its size in its own view, and carried, not re-counted, by the later checks.
    #[test]
    fn views_find_exactly_what_the_client_drew_wrong(ops in prop::collection::vec(op(), 1..14)) {
        let mut sim = Sim::new();
        for (i, op) in ops.iter().enumerate() {
            let at = format!("step {i}: {op:?}");
            sim.step(op, &at);
            sim.check(&at)?;
        }
    }
}

/// The earlier views of the screen are frozen: a client that rewrites a line above the last
/// view's end has the rewritten part judged again in the next view.
#[test]
fn a_rewritten_line_above_starts_the_next_view_there() {
    let t = Transcript::from_history_lines(&["a".into(), "b changed".into(), "c".into()]);
    assert_eq!(next_start(&["a".into(), "b".into()], &t, 2), 1);
    assert_eq!(next_start(&["a".into(), "b".into()], &t, 1), 1);
    let same = Transcript::from_history_lines(&["a".into(), "b".into(), "c".into()]);
    assert_eq!(next_start(&["a".into(), "b".into()], &same, 2), 2);
}

#[test]
fn commands_and_launches_start_the_views_their_output_needs() {
    assert_eq!(ViewKind::of_command("/history"), ViewKind::Command);
    assert_eq!(ViewKind::of_command("/retry"), ViewKind::Exchange);
    assert_eq!(ViewKind::of_command("/redraw"), ViewKind::Command);
    assert_eq!(ViewKind::of_command("/resume x"), ViewKind::Recap);
    assert_eq!(ViewKind::of_command("/undo 2 now"), ViewKind::Command);
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(ViewKind::of_launch(&args(&[])), ViewKind::Start);
    assert_eq!(
        ViewKind::of_launch(&args(&["--resume", "x"])),
        ViewKind::Recap
    );
    assert_eq!(ViewKind::of_launch(&args(&["-c"])), ViewKind::Recap);
}
