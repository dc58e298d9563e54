//! Unit tests of the TUI's frame views, on 0.19-style rows as its backend writes them.

use super::TuiFrame;
use crate::oracle::Findings;
use crate::store::testdb::{Msg, TestDb};
use crate::store::{Schema, Store};
use crate::terminal::Transcript;
use crate::views::ViewKind;

const SAID: [(&str, &str); 4] = [
    ("user", "What did a lighthouse keeper do all day long?"),
    (
        "assistant",
        "The keeper trimmed the wicks, wound the clockwork and kept the log every night.",
    ),
    ("user", "Which records should the museum exhibit show?"),
    (
        "assistant",
        "Show the logbooks, the supply boat schedule and the letters from the keepers' families.",
    ),
];

/// A session `s` holding `said`.
fn conversation(said: &[(&str, &str)]) -> TestDb {
    let mut db = TestDb::new(Schema::Legacy);
    db.session("s", None, 1.0, None);
    for (role, text) in said {
        db.msg(&Msg::new("s", role, text));
    }
    db
}

fn screen(texts: &[&str]) -> Transcript {
    Transcript::from_history_lines(&texts.iter().map(|t| t.to_string()).collect::<Vec<_>>())
}

fn frame() -> TuiFrame {
    TuiFrame::launched(ViewKind::Start, "launch".into(), 1)
}

/// `say` each of the four messages, then `/undo`.
fn undone(store: &Store) -> TuiFrame {
    let mut f = frame();
    f.after((ViewKind::Exchange, "say \"x\"".into(), 2), Some(store))
        .unwrap();
    f.before("/undo", Some(store)).unwrap();
    f.after((ViewKind::Command, "/undo".into(), 3), Some(store))
        .unwrap();
    f
}

/// The TUI's `/undo` leaves `state.db` as it was: the frame is judged with the last exchange
/// taken back, so the exchange still drawn is `taken_back_shown` (2 messages); a frame without
/// it is correct. A second check of the unchanged frame is carried, named after `/undo`.
#[test]
fn an_exchange_the_tui_undid_but_still_draws_is_taken_back_shown() {
    let db = conversation(&SAID);
    let store = db.open();
    let mut f = undone(&store);
    let basis = f.basis(&store).unwrap().unwrap();
    assert_eq!(basis.expected.messages.len(), 2);
    assert_eq!(basis.expected.taken_back.len(), 2);
    let all: Vec<&str> = SAID.iter().map(|s| s.1).collect();
    let (c, views) = f.judge("after /undo", &screen(&all), &basis, None);
    assert_eq!(
        c.findings,
        Findings {
            taken_back_shown: 2,
            ..Findings::default()
        }
    );
    assert_eq!((views[0].step.as_str(), views[0].carried), ("/undo", false));
    // Nothing drawn since: the same findings, carried from `/undo`.
    f.after((ViewKind::Command, "/branch".into(), 4), Some(&store))
        .unwrap();
    let (again, views) = f.judge("after /branch", &screen(&all), &basis, None);
    assert_eq!(again.findings, c.findings);
    assert_eq!(
        (views[0].step.as_str(), views[0].line, views[0].carried),
        ("/undo", 3, true)
    );
    let (kept, _) = f.judge("kept", &screen(&all[..2]), &basis, None);
    assert_eq!(kept.findings, Findings::default());
}

/// The question asked again after the TUI's `/undo` is stored a second time; the frame draws
/// the exchange taken back and the new one: the kept exchange drawn twice, a display cause
/// (not a data duplicate: the one taken back is not part of what the frame should show).
#[test]
fn the_question_asked_again_after_the_tuis_undo_is_a_display_repeat() {
    let mut db = conversation(&SAID);
    let store = db.open();
    let mut f = undone(&store);
    db.msg(&Msg::new("s", SAID[2].0, SAID[2].1));
    db.msg(&Msg::new("s", SAID[3].0, SAID[3].1));
    let store = db.open();
    f.after(
        (ViewKind::Exchange, "say \"Which\"".into(), 5),
        Some(&store),
    )
    .unwrap();
    let basis = f.basis(&store).unwrap().unwrap();
    let all: Vec<&str> = SAID.iter().chain(&SAID[2..]).map(|s| s.1).collect();
    let (c, _) = f.judge("asked again", &screen(&all), &basis, None);
    let words = |t: &str| crate::words::count(t);
    assert_eq!(
        c.findings.words_rendered_more_than_once,
        words(SAID[2].1) + words(SAID[3].1)
    );
    assert_eq!(c.findings.taken_back_shown, 0);
    assert!(c
        .repeats
        .iter()
        .all(|r| r.cause == crate::oracle::Cause::Display));
}

/// `/retry` takes back only when this process sent a message (the TUI's `nothing to retry`).
#[test]
fn retry_without_a_message_sent_here_takes_nothing_back() {
    let db = conversation(&SAID);
    let store = db.open();
    let mut f = TuiFrame::launched(ViewKind::Recap, "launch --resume s".into(), 1);
    f.before("/retry", Some(&store)).unwrap();
    f.after((ViewKind::Exchange, "/retry".into(), 2), Some(&store))
        .unwrap();
    let basis = f.basis(&store).unwrap().unwrap();
    assert_eq!(basis.expected.messages.len(), 4);
    assert!(basis.expected.taken_back.is_empty());
}

/// After `/compress` the frame means to show the compacted session: its own live rows (a
/// compaction in place archived the rest), not the lineage.
#[test]
fn after_compress_the_frame_is_the_compacted_session_alone() {
    let mut db = conversation(&SAID);
    db.session("c", Some("s"), 2.0, None);
    db.conn
        .execute(
            "UPDATE sessions SET end_reason = 'compression' WHERE id = 's'",
            [],
        )
        .unwrap();
    db.msg(&Msg::new("c", SAID[0].0, SAID[0].1));
    db.msg(&Msg::new("c", SAID[3].0, SAID[3].1));
    let store = db.open();
    let mut f = frame();
    f.after((ViewKind::Command, "/compress".into(), 2), Some(&store))
        .unwrap();
    let basis = f.basis(&store).unwrap().unwrap();
    assert_eq!(basis.session, "c");
    assert_eq!(basis.expected.messages.len(), 2);
    let (c, _) = f.judge("after /compress", &screen(&[]), &basis, None);
    assert_eq!(c.findings.missing_messages, 2);
}

/// A fresh TUI shows no session: a command or a resize after the launch leaves nothing to
/// expect, though an earlier process's session is in the database; `/new` starts afresh.
#[test]
fn a_fresh_frame_expects_nothing_until_a_message_is_sent() {
    let db = conversation(&SAID);
    let store = db.open();
    let mut f = frame();
    f.after((ViewKind::Command, "/model x".into(), 2), Some(&store))
        .unwrap();
    let basis = f.basis(&store).unwrap().unwrap();
    let (c, _) = f.judge("after /model", &screen(&[]), &basis, None);
    assert_eq!(c.findings, Findings::default());
    f.after((ViewKind::Recap, "/resume s".into(), 3), Some(&store))
        .unwrap();
    let (c, _) = f.judge("after /resume", &screen(&[]), &basis, None);
    assert_eq!(c.findings.missing_messages, 4);
    f.after((ViewKind::Command, "/new".into(), 4), Some(&store))
        .unwrap();
    let (c, _) = f.judge("after /new", &screen(&[]), &basis, None);
    assert_eq!(c.findings, Findings::default());
}

/// The 0.19 TUI may store a question behind a client notice in one row (display contract rule
/// 5: `[System: …]`, a blank line, the question): that row is the last question `/undo` takes
/// back from; a notice alone is not a question.
#[test]
fn undo_takes_back_from_a_question_merged_behind_a_notice() {
    let merged = "[System: the model was switched to fake-model.]\n\nWhich records should the museum exhibit show?";
    let said = [SAID[0], SAID[1], ("user", merged), SAID[3]];
    let db = conversation(&said);
    let store = db.open();
    let f = undone(&store);
    let basis = f.basis(&store).unwrap().unwrap();
    assert_eq!(basis.expected.messages.len(), 2, "the first exchange kept");
    let mut alone = conversation(&SAID);
    alone.msg(&Msg::new(
        "s",
        "user",
        "[System: the model was switched to fake-model.]",
    ));
    let store = alone.open();
    let f = undone(&store);
    let basis = f.basis(&store).unwrap().unwrap();
    assert_eq!(
        basis.expected.messages.len(),
        2,
        "a notice alone is not a question: the last exchange is taken back"
    );
}
