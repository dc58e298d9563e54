//! Offline tests of the minimizer's parts.
//!
//! Delta debugging, the units of a real fixture, and a candidate built from a copy.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::ddmin::{ddmin, Spent};
use super::model::{build, Model, Removal};
use super::outcome::describe_rows;

fn rotating() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/iot-0.22.2.post1-rotating-resume/state.db")
}

const ROTATED: &str = "20261202_183601_e28d7d";

#[test]
fn ddmin_keeps_exactly_the_needed_units() {
    let units: Vec<u32> = (1..=16).collect();
    let needed = [3u32, 11];
    let mut calls = 0;
    let mut test = |chunk: &[u32]| {
        calls += 1;
        Ok(!chunk.iter().any(|u| needed.contains(u)))
    };
    let (kept, spent) = ddmin(units, &mut test);
    assert_eq!(kept, vec![3, 11]);
    assert!(!spent);
    assert!(calls < 40, "{calls} tests");
}

#[test]
fn ddmin_stops_when_the_budget_is_spent() {
    let mut left = 3;
    let mut test = |_: &[u32]| {
        if left == 0 {
            return Err(Spent);
        }
        left -= 1;
        Ok(false)
    };
    let (kept, spent) = ddmin((1..=8).collect(), &mut test);
    assert!(spent);
    assert_eq!(kept.len(), 8);
}

#[test]
fn ranges_of_rows_read_as_ranges() {
    let rows: BTreeSet<i64> = [3, 4, 5, 8, 10, 11].into();
    assert_eq!(describe_rows(&rows), "rows 3–5, 8, 10–11");
    assert_eq!(describe_rows(&[7].into()), "row 7");
}

/// The rotating fixture: two lineage sessions (none removable), its exchanges (the carrier's
/// exchange joined with the exchange of the row it carries) and its rows (the carrier with the
/// row it carries).
#[test]
fn units_of_the_rotating_fixture_respect_its_relations() {
    let m = Model::read(&rotating(), ROTATED).unwrap();
    assert_eq!(m.lineage.len(), 2);
    assert_eq!(m.total_rows, 18);
    assert!(m.removable_sessions().is_empty());
    let exchanges = m.exchange_units();
    assert!(exchanges.contains(&vec![9, 10, 15, 16]), "{exchanges:?}");
    assert!(exchanges.contains(&vec![1, 2]), "{exchanges:?}");
    let rows = m.row_units();
    assert!(rows.contains(&vec![10, 16]), "{rows:?}");
    assert_eq!(rows.len(), 17);
}

/// A candidate is a copy with rows deleted (the search index's triggers run) and the session's
/// `message_count` following; the source is untouched; a removed session takes its children.
#[test]
fn a_candidate_is_a_copy_with_rows_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let before = std::fs::read(rotating()).unwrap();
    let to = dir.path().join("c.db");
    let removal = Removal {
        rows: [1, 2, 13, 14].into(),
        ..Removal::default()
    };
    build(&rotating(), &to, &removal).unwrap();
    assert_eq!(std::fs::read(rotating()).unwrap(), before);
    let m = Model::read(&to, ROTATED).unwrap();
    assert_eq!(m.total_rows, 14);
    let conn = rusqlite::Connection::open(&to).unwrap();
    let count: i64 = conn
        .query_row(
            "SELECT message_count FROM sessions WHERE id = ?1",
            [ROTATED],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(count, 4);
    let root = &m.lineage[0];
    assert_eq!(
        m.with_descendants(std::slice::from_ref(root)),
        [root.clone(), ROTATED.to_owned()].into()
    );
}

/// Sessions outside the lineage are units, except an ancestor of a lineage session (the root's
/// `parent_session_id` names it); removing one takes its children, its rows and its rows in
/// other tables.
#[test]
fn sessions_outside_the_lineage_are_removable_with_their_children() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    std::fs::copy(rotating(), &db).unwrap();
    let root = "20261202_183554_6dda8d";
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(&format!(
        "INSERT INTO sessions (id, source, started_at) VALUES ('before', 'cli', 1.0);
         UPDATE sessions SET parent_session_id = 'before' WHERE id = '{root}';
         INSERT INTO sessions (id, source, started_at) VALUES ('other', 'cli', 2.0);
         INSERT INTO sessions (id, source, started_at, parent_session_id)
             VALUES ('branch', 'cli', 3.0, 'other');
         INSERT INTO messages (session_id, role, content, timestamp)
             VALUES ('other', 'user', 'unrelated', 2.0), ('branch', 'user', 'also', 3.0);
         INSERT INTO session_model_usage (session_id, model) VALUES ('other', 'm');"
    ))
    .unwrap();
    drop(conn);
    let m = Model::read(&db, ROTATED).unwrap();
    assert_eq!(m.total_rows, 20);
    assert_eq!(m.removable_sessions(), ["other", "branch"]);
    let sessions = m.with_descendants(&["other".to_owned()]);
    assert_eq!(sessions, ["branch".to_owned(), "other".to_owned()].into());
    let to = dir.path().join("c.db");
    build(
        &db,
        &to,
        &Removal {
            sessions,
            ..Removal::default()
        },
    )
    .unwrap();
    let m = Model::read(&to, ROTATED).unwrap();
    assert_eq!((m.total_rows, m.sessions.len()), (18, 3));
    let conn = rusqlite::Connection::open(&to).unwrap();
    let usage: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM session_model_usage WHERE session_id = 'other'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(usage, 0);
}

/// A tool result stays with its call — the nearest one before it: the rotated session's copy
/// of the tool turn (rows 21–22) repeats the call ids of the original (rows 14–15).
#[test]
fn a_tool_result_stays_with_the_nearest_call() {
    let db = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/iot-0.22.2.post1-mid-tool-turn-resume/state.db");
    let m = Model::read(&db, "20261203_112552_431f99").unwrap();
    let rows = m.row_units();
    assert!(rows.contains(&vec![14, 15]), "{rows:?}");
    assert!(rows.contains(&vec![21, 22]), "{rows:?}");
    let exchanges = m.exchange_units();
    assert!(exchanges.contains(&vec![13, 14, 15]), "{exchanges:?}");
    assert!(exchanges.contains(&vec![20, 21, 22, 23]), "{exchanges:?}");
}

#[test]
fn halving_drops_the_middle_half_of_the_words_and_keeps_the_ends() {
    use super::texts::halve;
    assert_eq!(halve("a b c d e f g h").as_deref(), Some("a b g h"));
    assert_eq!(halve("one two three").as_deref(), Some("one"));
    // Seven words: three kept, the markers at both ends among them.
    assert_eq!(
        halve("[MARK]\nw1 w2 w3 w4 w5\n[END]").as_deref(),
        Some("[MARK]\nw1 [END]")
    );
    assert_eq!(halve("  two words ").as_deref(), Some("  two "));
    assert_eq!(halve("single"), None);
    assert_eq!(halve("  \n "), None);
    // Multi-byte text is cut at word boundaries only.
    assert_eq!(halve("é ü ö ä").as_deref(), Some("é ä"));
}

/// The rotating fixture's texts: the carried reply (row 10) with its copy in the carrier (row
/// 16) is one unit, shortened in both so the carrier still holds the reply verbatim; the
/// carrier's own text before and after the copy are units of their own; other rows are plain.
#[test]
fn a_carried_reply_is_shortened_with_its_carriers_copy() {
    use super::texts::{shorten, units, TextUnit};
    let m = Model::read(&rotating(), ROTATED).unwrap();
    let contents = super::model::contents(&rotating()).unwrap();
    let all = units(&m, &contents);
    let reply = TextUnit::Reply {
        carried: 10,
        carrier: 16,
    };
    assert_eq!(all[0], reply, "{all:?}");
    assert!(all.contains(&TextUnit::Around {
        carried: 10,
        carrier: 16,
        after: true
    }));
    // The rotated session repeats the first exchanges: row 13 is a copy of row 1.
    assert!(all.contains(&TextUnit::Plain(vec![1, 13])), "{all:?}");
    assert!(all.contains(&TextUnit::Plain(vec![5])), "{all:?}");
    assert!(all
        .iter()
        .all(|u| !matches!(u, TextUnit::Plain(ids) if ids.contains(&10) || ids.contains(&16))));
    let edit = shorten(&reply, &contents).unwrap();
    let (short, carrier) = (&edit[&10], &edit[&16]);
    assert!(short.len() < contents[&10].len() * 2 / 3, "{short}");
    assert!(carrier.contains(short.as_str()));
    assert_eq!(
        contents[&16].len() - carrier.len(),
        contents[&10].trim().len() - short.len()
    );
    // The summary after the copy is halved, the reply and the text before it are kept.
    let around = TextUnit::Around {
        carried: 10,
        carrier: 16,
        after: true,
    };
    let edit = shorten(&around, &contents).unwrap();
    let carrier = &edit[&16];
    assert!(carrier.len() < contents[&16].len());
    let reply_at = contents[&16].find(contents[&10].trim()).unwrap();
    let kept = reply_at + contents[&10].trim().len();
    assert_eq!(carrier[..kept], contents[&16][..kept]);
}

/// A candidate with shortened texts: the rows are updated on the copy, the source untouched.
#[test]
fn a_candidate_carries_its_shortened_texts() {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("c.db");
    let removal = Removal {
        texts: [(13, "short".to_owned())].into(),
        ..Removal::default()
    };
    build(&rotating(), &to, &removal).unwrap();
    let contents = super::model::contents(&to).unwrap();
    assert_eq!(contents[&13], "short");
    assert_ne!(super::model::contents(&rotating()).unwrap()[&13], "short");
}

/// The offline signature: the client's display read of the rotating fixture as measured (the
/// carrier listed last, with its whole content) is judged like the real client's screen — the
/// carried reply repeated by its carrier, internal text shown, on both paths; a read without the
/// carrier is clean; a read that leaves a message out shows it missing.
#[test]
fn the_offline_signature_reads_the_measured_display_rows() {
    use super::offline::{signature_of, transcript_of};
    use crate::reference::ClientRow;
    use crate::store::Store;
    use crate::verdict::{Basis, Session};
    let store = Store::open(&rotating()).unwrap();
    let basis = Basis::read(
        &store,
        Session::Id(ROTATED),
        crate::display::Surface::default(),
    )
    .unwrap()
    .with_recap(
        &crate::settings::DisplaySettings::wide(),
        crate::settings::ClientVersion::Iot0_22,
    );
    let contents = super::model::contents(&rotating()).unwrap();
    let read = |ids: &[i64]| -> Vec<ClientRow> {
        ids.iter()
            .map(|&id| ClientRow {
                id: Some(id),
                role: if id % 2 == 1 { "user" } else { "assistant" }.into(),
                content: contents.get(&id).cloned(),
            })
            .collect()
    };
    let measured = [13, 14, 15, 4, 5, 6, 7, 8, 9, 10, 17, 18, 16];
    let s = signature_of(&basis, &read(&measured));
    assert_eq!(
        s.to_string(),
        "--resume: repeats (display; a carrier's reply) + internal; \
         /resume: repeats (display; a carrier's reply) + internal"
    );
    let s = signature_of(&basis, &read(&measured[..12]));
    assert!(s.checks.iter().all(|c| c.is_clean()), "{s}");
    let s = signature_of(&basis, &read(&[13, 14, 15, 4, 5, 6, 7, 8, 9, 10, 17]));
    assert!(s.to_string().starts_with("--resume: missing"), "{s}");
    // Tool rows and rows without text are not drawn.
    let t = transcript_of(&[
        ClientRow {
            id: Some(1),
            role: "tool".into(),
            content: Some("tool output".into()),
        },
        ClientRow {
            id: Some(2),
            role: "assistant".into(),
            content: None,
        },
        ClientRow {
            id: Some(3),
            role: "user".into(),
            content: Some("two\nlines".into()),
        },
    ]);
    assert_eq!(t.text(), "two\nlines");
}

/// A stand-in for the real client in the PTY: every row of the lineage listed in id order (the
/// carried reply and its carrier both, as the real client shows them), drawn as the offline tier
/// draws a read and judged by the oracle on both `repro` paths.
struct ListsEveryRow {
    runs: usize,
}

impl super::Oracle for ListsEveryRow {
    fn judge(
        &mut self,
        db: &std::path::Path,
        session: &str,
        out_root: &std::path::Path,
    ) -> Result<crate::runner::ScenarioResult, crate::runner::Error> {
        use crate::runner::{CheckResult, ScenarioResult};
        use crate::verdict::{Basis, Session};
        self.runs += 1;
        let store = crate::store::Store::open(db)?;
        let basis = Basis::read(&store, Session::Id(session), Default::default())
            .expect("the stand-in reads only databases with the session");
        let lineage = store.lineage_ids(session)?;
        let listed: Vec<crate::reference::ClientRow> = store
            .rows(&lineage)?
            .into_iter()
            .map(|r| crate::reference::ClientRow {
                id: Some(r.id),
                role: r.role,
                content: r.content,
            })
            .collect();
        let transcript = super::offline::transcript_of(&listed);
        let mut result = ScenarioResult::new(
            "stand-in".into(),
            db.to_owned(),
            "stand-in".into(),
            out_root.to_owned(),
            String::new(),
        );
        for at in crate::runner::REPRO_PATHS {
            let check = basis.check(at, &transcript, None);
            result.checks.push(CheckResult::new(
                &basis,
                (check, None),
                Default::default(),
                0,
                transcript.clone(),
                None,
            ));
        }
        Ok(result)
    }

    fn repro_args(&self) -> String {
        String::new()
    }
}

/// An offline tier that cannot see anything: it answers the same signature for every candidate.
struct Blind(crate::triage::signature::Signature);

impl super::Offline for Blind {
    fn signature(
        &mut self,
        _: &std::path::Path,
        _: &str,
    ) -> Result<crate::triage::signature::Signature, super::offline::OfflineError> {
        Ok(self.0.clone())
    }
}

fn options(out: &std::path::Path) -> super::Options {
    super::Options {
        session: Some(ROTATED.into()),
        matching: super::Matching::Same,
        max_trials: 200,
        timeout: None,
        out: Some(out.to_owned()),
        fixture: None,
    }
}

/// An offline tier that keeps everything is caught by the real client's confirmation of the
/// tenth step kept offline: that candidate is refuted, the run goes back to the last confirmed
/// state (the original), and from then on every step is confirmed — the result still fails the
/// same way on the real client, with the rows it needs.
#[test]
fn a_refuted_offline_step_goes_back_to_the_last_confirmed_state() {
    use super::{minimize, Phase, TrialVerdict};
    let dir = tempfile::tempdir().unwrap();
    let mut client = ListsEveryRow { runs: 0 };
    let original = crate::triage::signature::Signature::of(
        &super::Oracle::judge(&mut client, &rotating(), ROTATED, dir.path()).unwrap(),
    );
    let mut blind = Blind(original.clone());
    let mut lines = Vec::new();
    let mut progress = |l: &str| lines.push(l.to_owned());
    let o = minimize(
        &rotating(),
        &options(&dir.path().join("min")),
        &mut client,
        Some(&mut blind),
        &mut progress,
    )
    .unwrap();
    assert_eq!(o.signature, original);
    assert_eq!(o.final_signature, original);
    let refuted = o
        .trials
        .iter()
        .position(|t| matches!(t.verdict, TrialVerdict::Refuted(_)))
        .expect("a refuted step");
    // The ninth step kept offline before it; none kept offline after it.
    let kept_offline = |ts: &[super::Trial]| {
        ts.iter()
            .filter(|t| t.verdict == TrialVerdict::KeptOffline)
            .count()
    };
    assert_eq!(kept_offline(&o.trials[..refuted]), super::CONFIRM_EVERY - 1);
    assert_eq!(kept_offline(&o.trials[refuted..]), 0);
    assert!(o.trials[refuted + 1..]
        .iter()
        .any(|t| t.verdict == TrialVerdict::Kept));
    assert!(lines
        .iter()
        .any(|l| l.contains("back to the last confirmed state")));
    // The carried reply and its carrier are both needed (the stand-in, listing every row in id
    // order, also needs rows 12 and 18: measured).
    let kept: Vec<i64> = o.kept.iter().map(|k| k.id).collect();
    assert_eq!(kept, vec![10, 12, 16, 18], "{:?}", o.trials);
    assert!(o
        .trials
        .iter()
        .all(|t| t.phase != Phase::Confirm || t.runs == 2));
}

/// Without an offline tier every candidate runs the stand-in client, twice when it is kept; the
/// minimized texts are shorter, the carried reply still inside its carrier.
#[test]
fn without_an_offline_tier_every_candidate_runs_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = ListsEveryRow { runs: 0 };
    let o = super::minimize(
        &rotating(),
        &options(&dir.path().join("min")),
        &mut client,
        None,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(o.offline_trials(), 0);
    assert_eq!(o.pty_trials(), o.trials.len());
    assert!(o.rows_after <= 4, "{}", o.rows_after);
    assert!(o.chars_after < o.chars_before / 4, "{}", o.chars_after);
    let texts = super::model::contents(&o.minimized).unwrap();
    assert!(texts[&16].contains(texts[&10].trim()));
    assert!(o.offline_absent.is_some());
    // The user's file: the fixture's, unchanged (the suite would see any change).
    assert!(o.fixture.join("state.db").is_file());
    assert!(o.fixture.join("PROVENANCE.md").is_file());
}

/// Rows holding the same text — the cross-version fixture's user message copied into the
/// continuation session (rows 11 and 17) — are one text unit, halved together.
#[test]
fn copies_of_a_text_are_shortened_together() {
    use super::texts::{shorten, units, TextUnit};
    let db = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/cross-0.19.0-to-iot-0.22.2.post1-rotating-resume/state.db");
    let m = Model::read(&db, "20261203_082138_6b48d3").unwrap();
    let contents = super::model::contents(&db).unwrap();
    let all = units(&m, &contents);
    let copies = TextUnit::Plain(vec![11, 17]);
    assert!(all.contains(&copies), "{all:?}");
    let edit = shorten(&copies, &contents).unwrap();
    assert_eq!(edit.len(), 2);
    assert_eq!(edit[&11], edit[&17]);
    assert!(edit[&11].len() < contents[&11].len());
    assert_eq!(
        copies.describe(),
        "the middle half of the text of rows 11, 17 (copies of each other)"
    );
}

/// Reading a fixture in WAL mode (the cross-version one) for its model and texts leaves nothing
/// beside it (a read-only SQLite reader of a WAL file would create `-shm` and `-wal`).
#[test]
fn reading_a_wal_fixture_leaves_no_file_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/cross-0.19.0-to-iot-0.22.2.post1-rotating-resume/state.db"),
        &db,
    )
    .unwrap();
    let mode: String =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
    assert_eq!(mode, "wal");
    for f in ["state.db-shm", "state.db-wal"] {
        let _ = std::fs::remove_file(dir.path().join(f));
    }
    Model::read(&db, "20261203_082138_6b48d3").unwrap();
    super::model::contents(&db).unwrap();
    super::model::count_sessions(&db).unwrap();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["state.db".to_owned()]);
}
