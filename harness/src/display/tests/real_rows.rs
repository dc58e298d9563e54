//! Rows written by the real clients' storage code, and the recorded fixtures' databases.

use super::*;

/// Rows written by the real 0.22.2.post1 storage code (`tests/data/make_real_0_22.py`).
const REAL_0_22: &str = include_str!("../../../tests/data/real_0_22_compactions.sql");
/// Rows written by the real 0.19.0 storage code (`tests/data/make_real_0_19.py`).
const REAL_0_19: &str = include_str!("../../../tests/data/real_0_19_in_place.sql");
/// Rows written by 0.19.0's TUI backend around a `/model` switch (a real scenario run).
const REAL_0_19_TUI_SWITCH: &str =
    include_str!("../../../tests/data/real_0_19_tui_model_switch.sql");

/// Real 0.22 in-place compaction with a carrier: the client (0.22.2.post1) draws the carrier
/// raw; a correct display draws the carried reply once and none of the summary.
#[test]
fn real_0_22_in_place_carrier() {
    let db = TestDb::with_rows(Schema::Uid, REAL_0_22);
    let e = expected(&db.open(), "inplace", CLASSIC).unwrap();
    assert_eq!(e.stored_rows, 12);
    use Role::{Assistant as A, User as U};
    assert_eq!(
        brief(&e),
        [
            (U, vec![1, 7], 7),
            (A, vec![2, 8], 8),
            (U, vec![3, 9], 9),
            (A, vec![10], 10),
            (U, vec![11], 11),
            (A, vec![12], 12),
        ]
    );
    assert!(e.messages[3]
        .text
        .starts_with("The keeper of the lighthouse"));
    assert!(!e.messages[3].text.contains("PRIOR CONTEXT"));
    assert_eq!(e.internal.len(), 1);
    assert_eq!(e.internal[0].rows[0].id, 10);
}

/// Real 0.22 rotating compaction: the client shows the carried reply twice (original in the
/// parent, raw carrier at the end); a correct display shows it once, in place.
#[test]
fn real_0_22_rotating_carrier_shown_once() {
    let db = TestDb::with_rows(Schema::Uid, REAL_0_22);
    let e = expected(&db.open(), "rot_child", CLASSIC).unwrap();
    assert_eq!(e.lineage, ["rot_parent", "rot_child"]);
    assert_eq!(e.stored_rows, 13);
    use Role::{Assistant as A, User as U};
    assert_eq!(
        brief(&e),
        [
            (U, vec![13, 19], 19),
            (A, vec![14, 20], 20),
            (U, vec![15, 21], 21),
            (A, vec![16, 22], 22),
            (U, vec![17, 23], 23),
            (A, vec![18, 24], 24),
            (U, vec![25], 25),
        ]
    );
    assert_eq!(
        e.messages[3].rows[0].message_uid,
        e.messages[3].rows[1].message_uid
    );
}

/// Real 0.19 in-place compaction: clones carry fresh (1 µs-stepped) timestamps; "ok" is said
/// three times and stays three messages.
#[test]
fn real_0_19_in_place_fresh_timestamps() {
    let db = TestDb::with_rows(Schema::Legacy, REAL_0_19);
    let store = db.open();
    assert_eq!(store.schema(), Schema::Legacy);
    let e = expected(&store, "legacy", CLASSIC).unwrap();
    use Role::{Assistant as A, User as U};
    assert_eq!(
        brief(&e),
        [
            (U, vec![1, 7], 7),
            (A, vec![2, 8], 8),
            (U, vec![3], 3),
            (A, vec![4], 4),
            (U, vec![5, 10], 10),
            (A, vec![6, 11], 11),
            (U, vec![12], 12),
            (A, vec![13], 13),
        ]
    );
    assert_eq!(e.internal.len(), 1);
    assert_eq!(e.internal[0].rows[0].id, 9);
}

/// Rows written by 0.19.0's TUI backend: `/model` before the last turn, then rotating compaction
/// (`/model` before the last lighthouse turn). The notice is a user row of its own in the parent (11); the
/// child's tail copy merges it with the last question (18, fresh timestamp). A correct display
/// shows the question once (rows 12 and 18) and the notice as internal text (rows 11 and 18).
#[test]
fn real_0_19_tui_model_switch_notice_merged_into_the_tail_copy() {
    let store = TestDb::with_rows(Schema::Legacy, REAL_0_19_TUI_SWITCH).open();
    let e = expected(&store, "20261203_195720_6a0fb1", CLASSIC).unwrap();
    // Twelve messages alternating user / assistant, each shown from its newest row; the notice
    // row 11 is in none of them.
    let rows: Vec<Vec<i64>> = e.messages.iter().map(ids).collect();
    let copied = [[1, 14], [2, 15], [3, 16], [10, 17], [12, 18], [13, 19]];
    let mut want: Vec<Vec<i64>> = (4..=9).map(|id| vec![id]).collect();
    want.extend(copied.iter().map(|pair| pair.to_vec()));
    want.sort();
    assert_eq!((e.stored_rows, rows), (19, want));
    for (i, m) in e.messages.iter().enumerate() {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        assert_eq!((m.role, m.shown), (role, *ids(m).last().unwrap()));
    }
    let question = &e.messages[10].text;
    assert_eq!(question, "Which records should the museum exhibit show?");
    let notice = e
        .internal
        .iter()
        .find(|i| {
            i.text
                .starts_with(crate::client::stored::MODEL_SWITCH_NOTICE_PREFIX)
        })
        .expect("the notice is internal");
    assert_eq!(
        notice.rows.iter().map(|r| r.id).collect::<Vec<_>>(),
        [11, 18]
    );
    assert!(notice.text.ends_with("provider is active.]"));
    assert_eq!(e.internal.len(), 2, "the notice and the carrier's summary");
}

/// Every recorded `fixtures/**/state.db` (written by a real client) projects without error,
/// and the projection is self-consistent: each row in at most one message, the shown row
/// among the message's rows, rows in id order.
#[test]
fn recorded_fixtures_project_consistently() {
    fn find(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                find(&p, out);
            } else if p.file_name().is_some_and(|n| n == "state.db") {
                out.push(p);
            }
        }
    }
    let mut dbs = Vec::new();
    find(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures"),
        &mut dbs,
    );
    for path in dbs {
        let store = Store::open(&path).unwrap();
        for session in store.sessions().unwrap() {
            for surface in [CLASSIC, EXPORT] {
                let e = expected(&store, &session.id, surface).unwrap();
                let mut seen = HashSet::new();
                for m in &e.messages {
                    assert!(ids(m).windows(2).all(|w| w[0] < w[1]), "{}", path.display());
                    assert!(ids(m).contains(&m.shown), "{}", path.display());
                    assert!(
                        ids(m).iter().all(|id| seen.insert(*id)),
                        "{}",
                        path.display()
                    );
                }
            }
        }
    }
}

/// Prints the projection of `$HERMES_E2E_DB` (session `$HERMES_E2E_SESSION`, default: the
/// latest) as JSON: `HERMES_E2E_DB=… cargo test --lib display::tests::print_projection -- --ignored --nocapture`.
#[test]
#[ignore = "a development aid: needs HERMES_E2E_DB"]
fn print_projection() {
    let Ok(path) = std::env::var("HERMES_E2E_DB") else {
        return;
    };
    let store = Store::open(std::path::Path::new(&path)).unwrap();
    let session = std::env::var("HERMES_E2E_SESSION")
        .unwrap_or_else(|_| store.latest_session().unwrap().unwrap().id);
    for surface in [CLASSIC, EXPORT] {
        let e = expected(&store, &session, surface).unwrap();
        println!("{}", serde_json::to_string_pretty(&e).unwrap());
    }
}
