//! Unit tests of the display projection: hand-built and real-client databases.

use super::*;
use crate::store::testdb::{Msg, TestDb};
use rusqlite::params;
use std::collections::HashSet;

const CLASSIC: Surface = Surface { tool_output: false };
const EXPORT: Surface = Surface { tool_output: true };

fn summary_text(n: u32) -> String {
    format!(
        "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary \
         below.\n\n## Summary {n}\nThe user asked about lighthouses.\n\n{HANDOFF_END}"
    )
}

fn carrier_text(reply: &str, n: u32) -> String {
    format!(
        "{PRIOR_CONTEXT_HEADER}\n{reply}\n\n{PRIOR_CONTEXT_END}\n\n{}",
        summary_text(n)
    )
}

/// `(role, text)` of every expected message.
fn shown(e: &Expected) -> Vec<(Role, &str)> {
    e.messages
        .iter()
        .map(|m| (m.role, m.text.as_str()))
        .collect()
}

fn ids(m: &LogicalMessage) -> Vec<i64> {
    m.rows.iter().map(|r| r.id).collect()
}

/// Sets `active`/`compacted` of rows, as compaction does.
fn set_state(db: &TestDb, ids: &[i64], active: i64, compacted: i64) {
    for id in ids {
        db.conn
            .execute(
                "UPDATE messages SET active = ?1, compacted = ?2 WHERE id = ?3",
                params![active, compacted, id],
            )
            .unwrap();
    }
}

/// Clones rows as fresh live rows into `session` (every column but id/state, like the client's
/// `_clone_message_rows`); `fresh_ts` gives the clones a new timestamp (0.19's behaviour).
fn clone_rows(db: &TestDb, ids: &[i64], session: &str, fresh_ts: Option<f64>) -> Vec<i64> {
    let cols = match db.schema {
        Schema::Uid => {
            "role, content, tool_call_id, tool_calls, tool_name, _compressed_summary, \
             display_kind, display_metadata, message_uid"
        }
        Schema::Legacy => "role, content, tool_call_id, tool_calls, tool_name",
    };
    ids.iter()
        .map(|id| {
            db.conn
                .execute(
                    &format!(
                        "INSERT INTO messages (session_id, {cols}, timestamp, active, compacted) \
                         SELECT ?1, {cols}, COALESCE(?2, timestamp), 1, 0 FROM messages WHERE id = ?3"
                    ),
                    params![session, fresh_ts, id],
                )
                .unwrap();
            db.conn.last_insert_rowid()
        })
        .collect()
}

fn uid_msg(session: &str, role: &str, content: &str, uid: &str) -> Msg {
    let mut m = Msg::new(session, role, content);
    m.uid = Some(uid.into());
    m
}

/// Six plain turns in session `s`, with uids `u1..u6`; returns their ids.
fn six_rows(db: &mut TestDb, session: &str) -> Vec<i64> {
    [
        ("user", "Tell me about lighthouses."),
        (
            "assistant",
            "The keeper of the lighthouse climbs the stairs every night.",
        ),
        ("user", "Why every night?"),
        ("assistant", "Because the lamp must be lit at dusk."),
        ("user", "And in the morning?"),
        ("assistant", "He trims the wick and polishes the lens."),
    ]
    .iter()
    .enumerate()
    .map(|(i, (role, text))| {
        db.msg(&uid_msg(session, role, text, &format!("u{}", i + 1)))
            .0
    })
    .collect()
}

/// Plain rows (no uid, the row's own timestamp) in `session`; returns their ids.
fn plain_rows(db: &mut TestDb, session: &str, said: &[(&str, &str)]) -> Vec<i64> {
    said.iter()
        .map(|(r, t)| db.msg(&Msg::new(session, r, t)).0)
        .collect()
}

/// A standalone summary (the `n`th) stored as `role` in `session` at `ts`, as 0.19 writes it in
/// a compaction batch.
fn stamped_summary(db: &mut TestDb, session: &str, role: &str, n: u32, ts: f64) {
    let mut summary = Msg::new(session, role, &summary_text(n));
    summary.ts = Some(ts);
    db.msg(&summary);
}

/// The displayed text of every expected message.
fn texts(e: &Expected) -> Vec<&str> {
    e.messages.iter().map(|m| m.text.as_str()).collect()
}

/// Three exchanges, "ok" twice, for the 0.19 tests.
const HI_OK_OK: [(&str, &str); 6] = [
    ("user", "hi"),
    ("assistant", "Hello!"),
    ("user", "ok"),
    ("assistant", "A"),
    ("user", "ok"),
    ("assistant", "B"),
];

#[test]
fn plain_conversation_is_every_row_once_in_order() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("s", None, 1.0, None);
    let ids = six_rows(&mut db, "s");
    let e = expected(&db.open(), "s", CLASSIC).unwrap();
    assert_eq!(e.lineage, ["s"]);
    assert_eq!(e.stored_rows, 6);
    assert_eq!(e.messages.len(), 6);
    for (m, id) in e.messages.iter().zip(&ids) {
        assert_eq!(ids_of(m), vec![*id]);
        assert_eq!(m.shown, *id);
    }
    assert_eq!(e.messages[0].role, Role::User);
    assert_eq!(
        e.messages[1].text,
        "The keeper of the lighthouse climbs the stairs every night."
    );
    assert!(e.internal.is_empty());
}

fn ids_of(m: &LogicalMessage) -> Vec<i64> {
    ids(m)
}

/// In-place compaction: head copied, middle archived, tail originals superseded and copied,
/// a standalone user-role summary in between; plus a rewound row.
#[test]
fn in_place_compaction_collapses_copies_across_row_states() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("s", None, 1.0, None);
    let ids = six_rows(&mut db, "s");
    // A reply the user took back (/undo): active = 0, compacted = 0, never shown.
    let mut undone = uid_msg("s", "assistant", "A reply the user took back.", "u-undo");
    undone.active = 0;
    let (undone_id, _) = db.msg(&undone);
    set_state(&db, &ids[..4], 0, 1); // archived
    set_state(&db, &ids[4..], 0, 0); // superseded tail originals
    let head = clone_rows(&db, &ids[..2], "s", None);
    let mut summary = Msg::new("s", "user", &summary_text(1));
    summary.summary = 1;
    let (summary_id, _) = db.msg(&summary);
    let tail = clone_rows(&db, &ids[4..], "s", None);

    let e = expected(&db.open(), "s", CLASSIC).unwrap();
    assert_eq!(e.stored_rows, 12);
    assert_eq!(
        texts(&e),
        [
            "Tell me about lighthouses.",
            "The keeper of the lighthouse climbs the stairs every night.",
            "Why every night?",
            "Because the lamp must be lit at dusk.",
            "And in the morning?",
            "He trims the wick and polishes the lens.",
        ]
    );
    // Head: original + live copy, the live copy shown; order by the original.
    assert_eq!(ids_of(&e.messages[0]), vec![ids[0], head[0]]);
    assert_eq!(e.messages[0].shown, head[0]);
    // Archived middle: shown from the archive.
    assert_eq!(e.messages[2].shown, ids[2]);
    // Tail: the superseded original is not a candidate.
    assert_eq!(ids_of(&e.messages[4]), vec![tail[0]]);
    assert!(!e
        .messages
        .iter()
        .any(|m| m.rows.iter().any(|r| r.id == undone_id)));
    // The summary is internal, not a message.
    assert_eq!(e.internal.len(), 1);
    assert_eq!(e.internal[0].rows[0].id, summary_id);
    assert!(e.internal[0].text.starts_with("[CONTEXT COMPACTION"));
}

/// The upstream bug: after ROTATING compaction the archived original (parent) and the carrier
/// (child) share `message_uid` and timestamp but not content. One reply, shown once, carried text.
#[test]
fn rotating_compaction_carrier_is_the_carried_reply_once() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("p", None, 1.0, Some("compression"));
    db.session("c", Some("p"), 2.0, None);
    let ids = six_rows(&mut db, "p");
    let reply = db
        .conn
        .query_row(
            "SELECT content, timestamp FROM messages WHERE id = ?1",
            [ids[5]],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?)),
        )
        .unwrap();
    // Child: head copies, then the carrier of the last reply (its original stays in the parent).
    let head = clone_rows(&db, &ids[..5], "c", None);
    let mut carrier = uid_msg("c", "assistant", &carrier_text(&reply.0, 1), "u6");
    carrier.summary = 1;
    carrier.ts = Some(reply.1);
    let (carrier_id, _) = db.msg(&carrier);
    let (next_user, _) = db.msg(&uid_msg("c", "user", "Thank you.", "u7"));

    let e = expected(&db.open(), "c", CLASSIC).unwrap();
    assert_eq!(e.lineage, ["p", "c"]);
    assert_eq!(e.messages.len(), 7);
    let m = &e.messages[5];
    assert_eq!(m.text, reply.0);
    assert_eq!(ids_of(m), vec![ids[5], carrier_id]);
    assert_eq!(m.shown, carrier_id);
    assert_eq!(ids_of(&e.messages[0]), vec![ids[0], head[0]]);
    assert_eq!(ids_of(&e.messages[6]), vec![next_user]);
    // The summary part of the carrier is internal; the carried reply is not.
    assert_eq!(e.internal.len(), 1);
    assert!(e.internal[0].text.starts_with(PRIOR_CONTEXT_END));
    assert!(!e.internal[0].text.contains(&reply.0));
}

/// The carrier borrows the original's identity by `message_uid` even when the carried text is
/// not byte-identical (e.g. the client cleaned the in-memory copy it wrapped); the newest copy
/// (the carrier) is what is shown.
#[test]
fn carrier_borrows_identity_by_uid_when_text_differs() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("p", None, 1.0, Some("compression"));
    db.session("c", Some("p"), 2.0, None);
    db.msg(&uid_msg("p", "user", "Describe the lens.", "a"));
    let mut original = uid_msg("p", "assistant", "The lens is a  Fresnel lens.\n\n\n", "b");
    original.ts = Some(100.5);
    let (orig_id, _) = db.msg(&original);
    let mut carrier = uid_msg(
        "c",
        "assistant",
        &carrier_text("The lens is a Fresnel lens.", 1),
        "b",
    );
    carrier.summary = 1;
    carrier.ts = Some(100.5);
    let (carrier_id, _) = db.msg(&carrier);
    let e = expected(&db.open(), "c", CLASSIC).unwrap();
    assert_eq!(
        shown(&e),
        [
            (Role::User, "Describe the lens."),
            (Role::Assistant, "The lens is a Fresnel lens."),
        ]
    );
    assert_eq!(ids_of(&e.messages[1]), vec![orig_id, carrier_id]);
}

/// In-place compaction supersedes the carried original: the carrier alone is the reply.
#[test]
fn in_place_carrier_without_candidate_original_is_its_carried_reply() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("s", None, 1.0, None);
    let ids = six_rows(&mut db, "s");
    set_state(&db, &ids[..5], 0, 1);
    set_state(&db, &ids[5..], 0, 0);
    let head = clone_rows(&db, &ids[..1], "s", None);
    let (reply, ts): (String, f64) = db
        .conn
        .query_row(
            "SELECT content, timestamp FROM messages WHERE id = ?1",
            [ids[5]],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let mut carrier = uid_msg("s", "assistant", &carrier_text(&reply, 1), "u6");
    carrier.summary = 1;
    carrier.ts = Some(ts);
    let (carrier_id, _) = db.msg(&carrier);
    let e = expected(&db.open(), "s", CLASSIC).unwrap();
    assert_eq!(e.messages.len(), 6);
    assert_eq!(ids_of(&e.messages[0]), vec![ids[0], head[0]]);
    assert_eq!(e.messages[5].text, reply);
    assert_eq!(ids_of(&e.messages[5]), vec![carrier_id]);
    assert_eq!(e.internal.len(), 1);
}

#[test]
fn standalone_summaries_and_markers_are_internal() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("s", None, 1.0, None);
    db.msg(&Msg::new("s", "user", "First question."));
    // A flagged, hidden assistant-role summary.
    let mut s1 = Msg::new("s", "assistant", &summary_text(1));
    s1.summary = 1;
    s1.kind = Some("hidden".into());
    db.msg(&s1);
    // An unflagged user-role summary (recognised by content), with the live ask after the
    // marker ("force user leading").
    db.msg(&Msg::new(
        "s",
        "user",
        &format!("{}\n\nWhat about fog horns?", summary_text(2)),
    ));
    // A bare handoff marker row.
    db.msg(&Msg::new("s", "assistant", HANDOFF_END));
    db.msg(&Msg::new(
        "s",
        "assistant",
        "Fog horns sound every thirty seconds.",
    ));
    let e = expected(&db.open(), "s", CLASSIC).unwrap();
    assert_eq!(
        shown(&e),
        [
            (Role::User, "First question."),
            (Role::User, "What about fog horns?"),
            (Role::Assistant, "Fog horns sound every thirty seconds."),
        ]
    );
    assert_eq!(e.internal.len(), 3);
    assert!(e.internal.iter().all(|t| t.text.contains(HANDOFF_END)));
    assert!(e.internal.iter().all(|t| !t.text.contains("fog horns")));
}

/// Pruning leaves a stub with the original's uid and timestamp; the archived payload stays the
/// message (tool_output surface); the classic recap shows neither tool rows nor tool-only calls.
#[test]
fn pruned_tool_stub_keeps_archived_payload_expected() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("s", None, 1.0, None);
    db.msg(&uid_msg("s", "user", "Read the log.", "a"));
    let mut call = uid_msg("s", "assistant", "", "b");
    call.tool_calls = Some(
        r#"[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"/var/log/lamp.log\"}"}}]"#
            .into(),
    );
    let (call_id, _) = db.msg(&call);
    let payload = format!("lamp lit at dusk\n{}", "line of the log\n".repeat(40));
    let mut result = uid_msg("s", "tool", &payload, "c");
    result.tool_call_id = Some("call_1".into());
    result.ts = Some(500.25);
    let (result_id, _) = db.msg(&result);
    db.msg(&uid_msg("s", "assistant", "The lamp was lit at dusk.", "d"));
    // Compaction archives the payload and writes a pruned stub (same uid and timestamp).
    set_state(&db, &[result_id], 0, 1);
    let mut stub = uid_msg(
        "s",
        "tool",
        "[read_file] read /var/log/lamp.log from line 1 (12,924 chars)",
        "c",
    );
    stub.tool_call_id = Some("call_1".into());
    stub.ts = Some(500.25);
    let (stub_id, _) = db.msg(&stub);
    let mut placeholder = stub.clone();
    placeholder.content = Some(PRUNED_PLACEHOLDER.into());
    let (placeholder_id, _) = db.msg(&placeholder);

    let store = db.open();
    let e = expected(&store, "s", EXPORT).unwrap();
    let tools: Vec<&LogicalMessage> = e.messages.iter().filter(|m| m.role == Role::Tool).collect();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].text, payload.trim());
    assert_eq!(ids_of(tools[0]), vec![result_id, stub_id, placeholder_id]);
    assert_eq!(tools[0].shown, result_id);
    // The tool-only assistant row is shown on the export (empty text, one call).
    assert!(e
        .messages
        .iter()
        .any(|m| m.shown == call_id && m.text.is_empty()));
    assert_eq!(e.messages.len(), 4);

    let e = expected(&store, "s", CLASSIC).unwrap();
    assert_eq!(
        shown(&e),
        [
            (Role::User, "Read the log."),
            (Role::Assistant, "The lamp was lit at dusk."),
        ]
    );
}

#[test]
fn model_only_hidden_and_system_rows_are_not_candidates() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("s", None, 1.0, None);
    db.msg(&Msg::new("s", "system", "You are Hermes Agent."));
    db.msg(&Msg::new("s", "user", "Is the lamp lit?"));
    db.msg(&Msg::new("s", "user", "And the horn?"));
    let mut merged = Msg::new("s", "user", "Is the lamp lit?\n\nAnd the horn?");
    merged.meta = Some(r#"{"model_only": true}"#.into());
    db.msg(&merged);
    let mut hidden = Msg::new("s", "assistant", "(interrupted)");
    hidden.kind = Some("hidden".into());
    db.msg(&hidden);
    let mut not_model_only = Msg::new("s", "assistant", "Both are on.");
    not_model_only.meta = Some(r#"{"model_only": false, "reactions": []}"#.into());
    db.msg(&not_model_only);
    let e = expected(&db.open(), "s", CLASSIC).unwrap();
    assert_eq!(e.stored_rows, 6);
    assert_eq!(
        shown(&e),
        [
            (Role::User, "Is the lamp lit?"),
            (Role::User, "And the horn?"),
            (Role::Assistant, "Both are on."),
        ]
    );
}

const SWITCH_NOTICE: &str = "[System: The active model for this chat has changed to fake-2 via \
    provider custom. From this point forward, use this runtime metadata when answering \
    questions about what model/provider is active.]";

#[test]
fn the_test_notice_is_the_clients_model_switch_notice() {
    assert!(SWITCH_NOTICE.starts_with(crate::client::stored::MODEL_SWITCH_NOTICE_PREFIX));
    assert!(SWITCH_NOTICE.starts_with(SYSTEM_NOTICE_PREFIX));
}

/// Compaction merges a model-switch notice and the next user message into one row, with a
/// fresh uid and timestamp: the user's words are one message, the notice is internal.
#[test]
fn merged_notice_and_user_text_is_the_user_message_once() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("s", None, 1.0, None);
    let mut notice = uid_msg("s", "user", SWITCH_NOTICE, "n");
    notice.kind = Some("model_switch".into());
    let (notice_id, _) = db.msg(&notice);
    let (hello_id, _) = db.msg(&uid_msg("s", "user", "Hello again.", "h"));
    let (reply_id, _) = db.msg(&uid_msg("s", "assistant", "Hello! Still here.", "r"));
    set_state(&db, &[notice_id, hello_id, reply_id], 0, 1);
    let mut merged = uid_msg(
        "s",
        "user",
        &format!("{SWITCH_NOTICE}\n\nHello again."),
        "fresh",
    );
    merged.ts = Some(9_999.0);
    let (merged_id, _) = db.msg(&merged);
    let copy = clone_rows(&db, &[reply_id], "s", None);
    let e = expected(&db.open(), "s", CLASSIC).unwrap();
    assert_eq!(
        shown(&e),
        [
            (Role::User, "Hello again."),
            (Role::Assistant, "Hello! Still here."),
        ]
    );
    assert_eq!(ids_of(&e.messages[0]), vec![hello_id, merged_id]);
    assert_eq!(e.messages[0].shown, merged_id);
    assert_eq!(ids_of(&e.messages[1]), vec![reply_id, copy[0]]);
    assert_eq!(e.internal.len(), 1);
    assert_eq!(e.internal[0].text, SWITCH_NOTICE);
    assert_eq!(
        e.internal[0].rows.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![notice_id, merged_id]
    );
}

/// When the user's original row was superseded (carried forward by the merged copy), the
/// merged row stands alone — it must not be taken for a copy of an older identical message.
#[test]
fn merged_copy_of_superseded_original_is_not_folded_into_an_older_twin() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("s", None, 1.0, None);
    let (ok1, _) = db.msg(&uid_msg("s", "user", "ok", "1"));
    let (r1, _) = db.msg(&uid_msg("s", "assistant", "Noted.", "2"));
    let mut notice = uid_msg("s", "user", SWITCH_NOTICE, "3");
    notice.kind = Some("model_switch".into());
    let (n, _) = db.msg(&notice);
    let (ok2, _) = db.msg(&uid_msg("s", "user", "ok", "4"));
    set_state(&db, &[ok1, r1], 0, 1);
    set_state(&db, &[n, ok2], 0, 0);
    let (merged, _) = db.msg(&uid_msg(
        "s",
        "user",
        &format!("{SWITCH_NOTICE}\n\nok"),
        "5",
    ));
    let e = expected(&db.open(), "s", CLASSIC).unwrap();
    assert_eq!(
        shown(&e),
        [
            (Role::User, "ok"),
            (Role::Assistant, "Noted."),
            (Role::User, "ok"),
        ]
    );
    assert_eq!(ids_of(&e.messages[2]), vec![merged]);
}

#[test]
fn two_identical_user_messages_stay_two() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("s", None, 1.0, None);
    let a = db.msg(&uid_msg("s", "user", "ok", "1")).0;
    let b = db.msg(&uid_msg("s", "assistant", "Noted.", "2")).0;
    let c = db.msg(&uid_msg("s", "user", "ok", "3")).0;
    let d = db.msg(&uid_msg("s", "assistant", "Noted.", "4")).0;
    // Compaction keeps the last exchange as the protected tail.
    set_state(&db, &[a, b], 0, 1);
    set_state(&db, &[c, d], 0, 0);
    let mut summary = Msg::new("s", "user", &summary_text(1));
    summary.summary = 1;
    db.msg(&summary);
    clone_rows(&db, &[c, d], "s", None);
    let e = expected(&db.open(), "s", CLASSIC).unwrap();
    assert_eq!(
        shown(&e),
        [
            (Role::User, "ok"),
            (Role::Assistant, "Noted."),
            (Role::User, "ok"),
            (Role::Assistant, "Noted."),
        ]
    );
}

/// 0.19: in-place compaction archives everything and re-inserts head and tail with FRESH
/// timestamps; the summary has no flag column. "ok" is said three times and must stay three.
#[test]
fn legacy_in_place_clones_with_fresh_timestamps_collapse() {
    let mut db = TestDb::new(Schema::Legacy);
    db.session("s", None, 1.0, None);
    let gen0 = plain_rows(&mut db, "s", &HI_OK_OK);
    set_state(&db, &gen0, 0, 1);
    // 0.19 writes the compacted list in one batch: one fresh timestamp for every row.
    let head = clone_rows(&db, &gen0[..2], "s", Some(7_000.0));
    stamped_summary(&mut db, "s", "user", 1, 7_000.0);
    let tail = clone_rows(&db, &gen0[4..], "s", Some(7_000.0));
    db.msg(&Msg::new("s", "user", "ok"));
    db.msg(&Msg::new("s", "assistant", "C"));
    let e = expected(&db.open(), "s", CLASSIC).unwrap();
    assert_eq!(texts(&e), ["hi", "Hello!", "ok", "A", "ok", "B", "ok", "C"]);
    assert_eq!(ids_of(&e.messages[0]), vec![gen0[0], head[0]]);
    assert_eq!(ids_of(&e.messages[4]), vec![gen0[4], tail[0]]);
    assert_eq!(ids_of(&e.messages[5]), vec![gen0[5], tail[1]]);
    assert_eq!(e.internal.len(), 1);

    // A second compaction: the new head copies repeat the previous generation's head.
    let store_rows = e.stored_rows;
    let live: Vec<i64> = {
        let mut stmt = db
            .conn
            .prepare("SELECT id FROM messages WHERE active = 1 ORDER BY id")
            .unwrap();
        let ids: Vec<i64> = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        ids
    };
    set_state(&db, &live, 0, 1);
    clone_rows(&db, &live[..2], "s", Some(8_000.0));
    stamped_summary(&mut db, "s", "assistant", 2, 8_000.0);
    clone_rows(&db, &live[live.len() - 2..], "s", Some(8_000.0));
    let e = expected(&db.open(), "s", CLASSIC).unwrap();
    assert_eq!(e.stored_rows, store_rows + 5);
    assert_eq!(texts(&e), ["hi", "Hello!", "ok", "A", "ok", "B", "ok", "C"]);
    assert_eq!(e.messages[0].rows.len(), 3);
    assert_eq!(e.messages[6].rows.len(), 2);
    assert_eq!(e.internal.len(), 2);
}

/// 0.19: an exchange repeated right before a compaction looks like head copies by content;
/// only the batch timestamp tells it is not (it was typed, not written by the compaction).
#[test]
fn legacy_repeated_exchange_before_compaction_is_not_a_head_copy() {
    let mut db = TestDb::new(Schema::Legacy);
    db.session("s", None, 1.0, None);
    let said = [
        ("user", "ok"),
        ("assistant", "Noted."),
        ("user", "ok"),
        ("assistant", "Noted."),
    ];
    let gen0 = plain_rows(&mut db, "s", &said);
    set_state(&db, &gen0, 0, 1);
    stamped_summary(&mut db, "s", "user", 1, 7_000.0);
    let tail = clone_rows(&db, &gen0[3..], "s", Some(7_000.0));
    let e = expected(&db.open(), "s", CLASSIC).unwrap();
    assert_eq!(texts(&e), ["ok", "Noted.", "ok", "Noted."]);
    assert_eq!(ids_of(&e.messages[3]), vec![gen0[3], tail[0]]);
}

/// 0.19 rotating compaction: the child starts with head copies, a summary (here a carrier),
/// and tail copies, all with fresh timestamps.
#[test]
fn legacy_rotating_clones_and_carrier_collapse() {
    let mut db = TestDb::new(Schema::Legacy);
    db.session("p", None, 1.0, Some("compression"));
    db.session("c", Some("p"), 2.0, None);
    let parent = plain_rows(&mut db, "p", &HI_OK_OK);
    clone_rows(&db, &parent[..1], "c", Some(9_000.0));
    let (carrier, _) = db.msg(&Msg::new("c", "assistant", &carrier_text("Hello!", 1)));
    clone_rows(&db, &parent[2..], "c", Some(9_000.0));
    db.msg(&Msg::new("c", "user", "ok"));
    let e = expected(&db.open(), "c", CLASSIC).unwrap();
    assert_eq!(texts(&e), ["hi", "Hello!", "ok", "A", "ok", "B", "ok"]);
    assert_eq!(ids_of(&e.messages[1]), vec![parent[1], carrier]);
    assert_eq!(e.messages[1].shown, carrier);
}

#[test]
fn legacy_compress_here_tail_copies_from_the_middle_collapse() {
    // hermes-agent 0.19.0 `/compress here 2`, as measured: the child holds copies of the first
    // exchange and a half, a carrier of the third reply, a copy of the fourth exchange — all
    // with fresh batch timestamps — and not the last two exchanges.
    let mut db = TestDb::new(Schema::Legacy);
    db.session("p", None, 1.0, Some("compression"));
    db.session("c", Some("p"), 2.0, None);
    let said = [
        ("user", "q1"),
        ("assistant", "a1"),
        ("user", "q2"),
        ("assistant", "a2"),
        ("user", "q3"),
        ("assistant", "a3"),
        ("user", "q4"),
        ("assistant", "a4"),
        ("user", "q5"),
        ("assistant", "a5"),
        ("user", "q6"),
        ("assistant", "a6"),
    ];
    let parent = plain_rows(&mut db, "p", &said);
    clone_rows(&db, &parent[..3], "c", Some(9_000.0));
    let (carrier, _) = db.msg(&Msg::new("c", "assistant", &carrier_text("a3", 1)));
    let tail = clone_rows(&db, &parent[6..8], "c", Some(9_000.0));
    let e = expected(&db.open(), "c", CLASSIC).unwrap();
    assert_eq!(
        texts(&e),
        ["q1", "a1", "q2", "a2", "q3", "a3", "q4", "a4", "q5", "a5", "q6", "a6"]
    );
    assert_eq!(ids_of(&e.messages[5]), vec![parent[5], carrier]);
    assert_eq!(ids_of(&e.messages[7]), vec![parent[7], tail[1]]);
}

#[test]
fn legacy_rows_after_a_plain_summary_are_not_matched_inside_the_parent() {
    // Without a carrier nothing places a run in the middle: a rotated child whose first new
    // message repeats one from the middle of the parent keeps it as a new message.
    let mut db = TestDb::new(Schema::Legacy);
    db.session("p", None, 1.0, Some("compression"));
    db.session("c", Some("p"), 2.0, None);
    plain_rows(
        &mut db,
        "p",
        &[
            ("user", "ok"),
            ("assistant", "A"),
            ("user", "q"),
            ("assistant", "B"),
        ],
    );
    db.msg(&Msg::new("c", "assistant", &summary_text(1)));
    db.msg(&Msg::new("c", "user", "ok"));
    let e = expected(&db.open(), "c", CLASSIC).unwrap();
    assert_eq!(texts(&e), ["ok", "A", "q", "B", "ok"]);
}

/// Internal texts as `(first words, row ids)`.
fn internal_rows(e: &Expected) -> Vec<(String, Vec<i64>)> {
    e.internal
        .iter()
        .map(|i| {
            let head: String = i.text.chars().take(24).collect();
            (head, i.rows.iter().map(|r| r.id).collect())
        })
        .collect()
}

/// A 0.19 rotating lineage: parent `p` (ended by compression) with `exchanges` plain exchanges
/// (`q1`, `a1`, …) and then the user rows `after`, and its empty child `c`; returns the parent's ids.
fn legacy_rotated(exchanges: usize, after: &[&str]) -> (TestDb, Vec<i64>) {
    let mut db = TestDb::new(Schema::Legacy);
    db.session("p", None, 1.0, Some("compression"));
    db.session("c", Some("p"), 2.0, None);
    let mut ids = Vec::new();
    for i in 1..=exchanges {
        ids.push(db.msg(&Msg::new("p", "user", &format!("q{i}"))).0);
        ids.push(db.msg(&Msg::new("p", "assistant", &format!("a{i}"))).0);
    }
    for text in after {
        ids.push(db.msg(&Msg::new("p", "user", text)).0);
    }
    (db, ids)
}

/// 0.19 TUI, `/model` before the first turn, then rotating compaction (as measured in
/// a run of the TUI with `/model` as its first step): no parent row holds the notice, but the child's first head
/// copy is the notice merged with the first question, with a fresh timestamp. The question is one
/// message (parent row and merged copy); the notice is internal, held by the merged row alone.
#[test]
fn legacy_notice_merged_into_a_head_copy_without_a_stored_notice() {
    let (mut db, parent) = legacy_rotated(3, &[]);
    let mut merged = Msg::new("c", "user", &format!("{SWITCH_NOTICE}\n\nq1"));
    merged.ts = Some(9_000.0);
    let (merged, _) = db.msg(&merged);
    clone_rows(&db, &parent[1..3], "c", Some(9_000.0));
    let (carrier, _) = db.msg(&Msg::new("c", "assistant", &carrier_text("a2", 1)));
    clone_rows(&db, &parent[4..], "c", Some(9_000.0));
    let e = expected(&db.open(), "c", CLASSIC).unwrap();
    assert_eq!(texts(&e), ["q1", "a1", "q2", "a2", "q3", "a3"]);
    assert_eq!(ids_of(&e.messages[0]), vec![parent[0], merged]);
    assert_eq!(ids_of(&e.messages[3]), vec![parent[3], carrier]);
    let notice = internal_rows(&e)
        .into_iter()
        .find(|(head, _)| SWITCH_NOTICE.starts_with(head.as_str()))
        .expect("the notice is internal");
    assert_eq!(notice.1, vec![merged]);
}

/// 0.19 TUI, `/model` after the last turn, then rotating compaction (as measured in
/// a run of the TUI with `/model` right before `/compress`): the parent holds the notice twice (at the switch and when
/// compaction flushes the history), the child's protected tail ends with a copy of it, and the
/// summary is standalone. Every message once; the notice is one internal text of three rows.
#[test]
fn legacy_notice_stored_twice_and_copied_is_one_internal_text() {
    let (mut db, parent) = legacy_rotated(3, &[SWITCH_NOTICE, SWITCH_NOTICE]);
    clone_rows(&db, &parent[..3], "c", Some(9_000.0));
    stamped_summary(&mut db, "c", "assistant", 1, 9_000.000_003);
    let tail = clone_rows(&db, &parent[4..7], "c", Some(9_000.000_004));
    let e = expected(&db.open(), "c", CLASSIC).unwrap();
    assert_eq!(texts(&e), ["q1", "a1", "q2", "a2", "q3", "a3"]);
    assert_eq!(ids_of(&e.messages[5]), vec![parent[5], tail[1]]);
    let notices: Vec<_> = internal_rows(&e)
        .into_iter()
        .filter(|(head, _)| SWITCH_NOTICE.starts_with(head.as_str()))
        .collect();
    assert_eq!(
        notices,
        [(notices[0].0.clone(), vec![parent[6], parent[7], tail[2]])]
    );
}

#[test]
fn unmarked_child_of_an_unfinished_parent_is_displayed_alone() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("p", None, 1.0, None);
    db.session("b", Some("p"), 2.0, None);
    let parent = six_rows(&mut db, "p");
    let copies = clone_rows(&db, &parent[..2], "b", None);
    let e = expected(&db.open(), "b", CLASSIC).unwrap();
    assert_eq!(e.lineage, ["b"]);
    assert_eq!(e.stored_rows, 2);
    assert_eq!(
        e.messages.iter().map(|m| m.shown).collect::<Vec<_>>(),
        copies
    );
}

#[test]
fn structured_content_and_odd_rows_do_not_panic() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("s", None, 1.0, None);
    db.msg(&Msg::new(
        "s",
        "user",
        "\u{0}json:[{\"type\":\"text\",\"text\":\"Look at this\"},{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}}]",
    ));
    db.msg(&Msg::new("s", "user", "\u{0}json:not json"));
    let mut null = Msg::new("s", "assistant", "");
    null.content = None;
    null.tool_calls = Some("{broken".into());
    db.msg(&null);
    db.msg(&Msg::new("s", "weird", "Other role"));
    let mut flagged = Msg::new("s", "assistant", "unrecognised summary shape");
    flagged.summary = 1;
    db.msg(&flagged);
    let store = db.open();
    let e = expected(&store, "s", CLASSIC).unwrap();
    assert_eq!(
        shown(&e),
        [
            (Role::User, "Look at this [image]"),
            (Role::User, "\u{0}json:not json"),
        ]
    );
    assert_eq!(e.internal.len(), 1);
    let e = expected(&store, "s", EXPORT).unwrap();
    assert_eq!(e.messages.len(), 4);
    assert!(matches!(
        expected(&store, "missing", CLASSIC),
        Err(StoreError::NoSuchSession { .. })
    ));
}

fn brief(e: &Expected) -> Vec<(Role, Vec<i64>, i64)> {
    e.messages
        .iter()
        .map(|m| (m.role, ids(m), m.shown))
        .collect()
}

mod history_commands;
mod properties;
mod real_rows;

/// The JSONL export's contract: one session's live rows as stored — a carrier with its summary,
/// no archived or superseded row, nothing of another session.
#[test]
fn a_data_export_is_one_sessions_live_rows_as_stored() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("parent", None, 1.0, Some("compression"));
    db.session("child", Some("parent"), 2.0, None);
    db.msg(&Msg::new("parent", "user", "What did the keeper do?"));
    let (reply, _) = db.msg(&Msg::new("child", "user", "And at night?"));
    let mut carrier = Msg::new(
        "child",
        "assistant",
        "[PRIOR CONTEXT — for reference only; not a new message] He kept the lamp lit.",
    );
    carrier.summary = 1;
    let (carried, _) = db.msg(&carrier);
    let mut archived = Msg::new("child", "assistant", "An archived reply.");
    archived.active = 0;
    archived.compacted = 1;
    db.msg(&archived);
    let store = db.open();
    let rows = store.rows(&["parent".into(), "child".into()]).unwrap();
    let e = live_rows("child", &rows);
    assert_eq!(e.lineage, ["child"]);
    assert_eq!(e.stored_rows, 3);
    let shown: Vec<(i64, &str)> = e
        .messages
        .iter()
        .map(|m| (m.shown, m.text.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            (reply, "And at night?"),
            (
                carried,
                "[PRIOR CONTEXT — for reference only; not a new message] He kept the lamp lit."
            )
        ]
    );
    assert!(e.internal.is_empty() && e.taken_back.is_empty());
}

/// A 0.19 rotated child of `HI_OK_OK`: head copies of the first exchange, a summary and tail
/// copies of the last, in one compaction batch; then `own`, written by the child itself. Returns
/// the database, the tail copies and the child's own rows.
fn legacy_rotated_child(own: &[(&str, &str)]) -> (TestDb, Vec<i64>, Vec<i64>) {
    let mut db = TestDb::new(Schema::Legacy);
    db.session("p", None, 1.0, Some("compression"));
    db.session("c", Some("p"), 2.0, None);
    let parent = plain_rows(&mut db, "p", &HI_OK_OK);
    clone_rows(&db, &parent[..2], "c", Some(9_000.0));
    stamped_summary(&mut db, "c", "user", 1, 9_000.0);
    let tail = clone_rows(&db, &parent[4..], "c", Some(9_000.0));
    let own = plain_rows(&mut db, "c", own);
    (db, tail, own)
}

/// Rule 8 on 0.19 (no uids): `/undo 2` in a rotated child rewinds its tail copies and the
/// exchange it wrote itself. The tail copies lie in the compaction's batch, so the parent's
/// originals they copy are taken back with them; the earlier "ok" the user typed stays, and
/// what no kept message says is listed as taken back (rule 10).
#[test]
fn legacy_rewound_batch_copies_take_their_parents_originals_back() {
    let (db, tail, own) = legacy_rotated_child(&[("user", "and fog?"), ("assistant", "C")]);
    set_state(&db, &[tail.as_slice(), own.as_slice()].concat(), 0, 0);
    let e = expected(&db.open(), "c", CLASSIC).unwrap();
    assert_eq!(texts(&e), ["hi", "Hello!", "ok", "A"]);
    let taken: Vec<&str> = e.taken_back.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(taken, ["B", "and fog?", "C"]);
}

/// A rewound row the child wrote itself takes nothing of the parent back, though its text is a
/// parent message's.
#[test]
fn legacy_rewound_row_of_the_child_takes_nothing_across_sessions() {
    let (db, _, own) = legacy_rotated_child(&[("user", "ok"), ("assistant", "B")]);
    set_state(&db, &own, 0, 0);
    let e = expected(&db.open(), "c", CLASSIC).unwrap();
    assert_eq!(texts(&e), ["hi", "Hello!", "ok", "A", "ok", "B"]);
    assert!(e.taken_back.is_empty());
}
