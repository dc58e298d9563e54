//! `check --screen`: a screen pasted into a bug report — text copied from the terminal, `tmux
//! capture-pane -pJ`, asciinema 3's `txt` output, or the terminal's bytes without timing
//! (asciinema 3's `raw` output) — is judged with the numbers of the recording it was copied from.
//! The recordings are bundled fixtures (a resume; no client needed); a real tmux pane gives the
//! `capture-pane -pJ` text when tmux is installed. asciinema 3's own `txt` and
//! `raw` conversions are checked when asciinema 3.x is installed (`.ci/run` installs it), and
//! skipped with a note otherwise.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::bin::BIN;
use crate::common::fixture::fixture;
use crate::common::test::{tests, Test};

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `check --json` with `args`: the findings, and the cut.
fn findings(args: &[&str]) -> (serde_json::Value, String) {
    let out = run(&[&["check", "--json"], args].concat());
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let json = &json["checks"][0];
    (
        json["findings"].clone(),
        json["cut"].as_str().unwrap().to_owned(),
    )
}

/// The output bytes of an asciicast v2 recording, without timing: what asciinema's `raw`
/// output holds.
fn raw_of(cast: &Path) -> String {
    std::fs::read_to_string(cast)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let (_, kind, data): (f64, String, String) = serde_json::from_str(l).ok()?;
            (kind == "o").then_some(data)
        })
        .collect()
}

/// A fixture's resume recording (`resume.cast`, else `session-2.cast`) and its database.
fn fixture_recording(name: &str) -> (PathBuf, PathBuf) {
    let f = fixture(name);
    let cast = [f.join("resume.cast"), f.join("session-2.cast")]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap();
    (cast, f.join("state.db"))
}

/// The raw rendered history of `cast` (`check --json --history`'s `history`), one line a row.
fn history(cast: &Path, db: &Path) -> String {
    let out = run(&[
        "check",
        "--json",
        "--history",
        "--cast",
        s(cast),
        "--db",
        s(db),
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let lines = json["checks"][0]["history"].as_array().unwrap();
    let mut text: String = lines
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    text.push('\n');
    text
}

fn a_pasted_resume_screen_reads_as_its_recording() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "iot-0.22.2.post1-rotating-resume",
        "0.19.0-rotating-resume",
        "iot-0.22.2.post1-inplace-resume",
    ] {
        let (cast, db) = fixture_recording(name);
        let (recorded, _) = findings(&["--cast", s(&cast), "--db", s(&db)]);
        // The history as `tmux capture-pane -pJ -S -` gives it: soft wraps joined.
        let pasted_text = history(&cast, &db);
        let text = dir.path().join(format!("{name}.txt"));
        std::fs::write(&text, &pasted_text).unwrap();
        let (pasted, cut) = findings(&["--screen", s(&text), "--db", s(&db)]);
        assert_eq!(pasted, recorded, "{name}: pasted text");
        assert_eq!(cut, "whole", "{name}: a resume with nothing sent after it");
        // The same screen pasted from a Windows clipboard (CRLF).
        let crlf = dir.path().join(format!("{name}.crlf.txt"));
        std::fs::write(&crlf, pasted_text.replace('\n', "\r\n")).unwrap();
        assert_eq!(
            findings(&["--screen", s(&crlf), "--db", s(&db)]).0,
            recorded,
            "{name}: CRLF"
        );
        // The terminal's bytes without timing, at the recording's size.
        let raw = dir.path().join(format!("{name}.raw"));
        std::fs::write(&raw, raw_of(&cast)).unwrap();
        let header: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(&cast)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        let size = format!("{}x{}", header["width"], header["height"]);
        let (from_raw, _) = findings(&["--screen", s(&raw), "--size", &size, "--db", s(&db)]);
        assert_eq!(from_raw, recorded, "{name}: raw");
    }
    // The numbers themselves: the rotating fixture's recap draws the fifth reply twice (169
    // words) and the summary (502).
    let f = fixture("iot-0.22.2.post1-rotating-resume");
    let expect = f.join("expect.toml");
    let text = dir.path().join("iot-0.22.2.post1-rotating-resume.txt");
    let out = run(&[
        "check",
        "--screen",
        s(&text),
        "--db",
        s(&f.join("state.db")),
        "--expect",
        s(&expect),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("no colours") && stderr.contains("scrolled off"),
        "the note on what a screen cannot tell: {stderr}"
    );
}

fn asciinema_3_txt_and_raw_outputs_read_as_their_recording() {
    let program =
        hermes_e2e::testing::client::cache_dir().join("recorders/asciinema-3/bin/asciinema");
    let program = [program, PathBuf::from("asciinema")].into_iter().find(|p| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).starts_with("asciinema 3."))
    });
    let Some(program) = program else {
        eprintln!("note: asciinema 3.x not found: skipped; `.ci/run` installs it");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let f = fixture("iot-0.22.2.post1-rotating-resume");
    let (cast, db) = (f.join("resume.cast"), f.join("state.db"));
    let (recorded, _) = findings(&["--cast", s(&cast), "--db", s(&db)]);
    assert_eq!(recorded["words_rendered_more_than_once"], 169);
    for (format, extra) in [
        ("asciicast-v3", &[][..]),
        ("txt", &[][..]),
        ("raw", &["--size", "100x40"][..]),
    ] {
        let to = dir.path().join(format!("resume.{format}"));
        let out = Command::new(&program)
            .args(["convert", "-f", format])
            .arg(&cast)
            .arg(&to)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let flag = if format.starts_with("asciicast") {
            "--cast"
        } else {
            "--screen"
        };
        let args = [&[flag, s(&to), "--db", s(&db)][..], extra].concat();
        assert_eq!(findings(&args).0, recorded, "asciinema 3's {format}");
    }
}

fn bad_screens_are_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = fixture("iot-0.22.2.post1-rotating-resume").join("state.db");
    let cases: [(&str, &[u8], &str); 3] = [
        ("empty.txt", b"  \n\n", "found nothing"),
        ("binary.txt", b"SQLite format 3\0\0", "NUL bytes"),
        (
            "a.cast",
            b"{\"version\": 2, \"width\": 80, \"height\": 24}\n",
            "--cast",
        ),
    ];
    for (name, bytes, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = run(&["check", "--screen", s(&path), "--db", s(&db)]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains(name) && stderr.contains(expected),
            "{name}: {stderr}"
        );
    }
    // Neither or both of --cast and --screen.
    let out = run(&["check", "--db", s(&db)]);
    assert_eq!(out.status.code(), Some(2));
    let path = dir.path().join("empty.txt");
    let out = run(&[
        "check",
        "--cast",
        s(&path),
        "--screen",
        s(&path),
        "--db",
        s(&db),
    ]);
    assert_eq!(out.status.code(), Some(2));
    // `--size` is a screen's: a recording says its own.
    let out = run(&[
        "check",
        "--cast",
        s(&path),
        "--size",
        "80x24",
        "--db",
        s(&db),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--size"));
}

/// The screen as tmux captures it (`tmux capture-pane -p -J -S -`, what a user pastes from tmux):
/// the recordings' bytes replayed in a real tmux pane of their size.
fn a_tmux_capture_of_a_resume_reads_as_its_recording() {
    use hermes_e2e::terminal::tmux;
    if !tmux::available("the tmux capture of a pasted screen") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for name in ["iot-0.22.2.post1-rotating-resume", "0.19.0-rotating-resume"] {
        let (cast, db) = fixture_recording(name);
        let (recorded, _) = findings(&["--cast", s(&cast), "--db", s(&db)]);
        let (size, parts) = tmux::cast_parts(&cast, None);
        let lines = tmux::replay(name, &parts, size);
        let text = dir.path().join(format!("{name}.tmux.txt"));
        std::fs::write(&text, lines.join("\n") + "\n").unwrap();
        let (pasted, _) = findings(&["--screen", s(&text), "--db", s(&db)]);
        assert_eq!(pasted, recorded, "{name}: tmux capture-pane -pJ");
    }
}

/// The tests of this file, trials of the binary that runs the suite in one pool of workers.
pub const TESTS: &[Test] = tests![
    a_pasted_resume_screen_reads_as_its_recording,
    asciinema_3_txt_and_raw_outputs_read_as_their_recording,
    bad_screens_are_refused_naming_the_file,
    a_tmux_capture_of_a_resume_reads_as_its_recording,
];
