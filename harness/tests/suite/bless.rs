//! `run --bless` and `run --expect-correct` through the binary, against the real pinned client:
//! a bless run on a copy of a bundled scenario with a doctored pin restores the measured number
//! and prints the change; `--expect-correct` fails where the pinned client has a defect
//! (`compress/rotating_resume`) and passes where it has none (`faults/http_500_once`). Each run
//! is one scenario at a time (`-j 1`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::bin::BIN;
use crate::common::output::{stderr, stdout};
use crate::common::test::{tests, Test};

fn scenarios() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

/// `hermes-e2e run ARGS -j 1 --out OUT`, with the scenarios' own client (no
/// `HERMES_E2E_CLIENT`).
fn run(args: &[&str], out: &Path) -> Output {
    Command::new(BIN)
        .arg("run")
        .args(args)
        .args(["-j", "1", "--out"])
        .arg(out)
        .env_remove("HERMES_E2E_CLIENT")
        .output()
        .expect("run hermes-e2e")
}

/// The 1-based line of the first line of `text` that contains `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("no `{needle}` in the file"))
}

fn bless_restores_a_doctored_pin_and_prints_the_change() {
    let dir = tempfile::tempdir().unwrap();
    // The scenario and the conversation it includes (`../conversations/…`), side by side as in
    // `scenarios/`.
    for (from, to) in [
        (
            "compress/rotating_resume.toml",
            "compress/rotating_resume.toml",
        ),
        (
            "conversations/lighthouse.steps.toml",
            "conversations/lighthouse.steps.toml",
        ),
    ] {
        let to = dir.path().join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(scenarios().join(from), to).unwrap();
    }
    let path = dir.path().join("compress/rotating_resume.toml");
    let original = std::fs::read_to_string(&path).unwrap();
    let included = dir.path().join("conversations/lighthouse.steps.toml");
    let included_before = std::fs::read_to_string(&included).unwrap();
    // One more word rendered twice than the client draws.
    let pin = regex::Regex::new(r"words_rendered_more_than_once = (\d+)").unwrap();
    let pinned: usize = pin.captures(&original).expect("a pinned repeat")[1]
        .parse()
        .unwrap();
    let doctored = pin
        .replace(
            &original,
            format!("words_rendered_more_than_once = {}", pinned + 1).as_str(),
        )
        .into_owned();
    assert_ne!(doctored, original);
    std::fs::write(&path, &doctored).unwrap();

    let o = run(
        &["--bless", path.to_str().unwrap()],
        &dir.path().join("out"),
    );
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    // The run itself failed on the doctored pin …
    assert!(out.contains("FAIL "), "{out}");
    assert!(
        out.contains(&format!(
            "words_rendered_more_than_once: expected {}, got {pinned}",
            pinned + 1
        )),
        "{out}"
    );
    // … and the blessing says what it rewrites, where, with the verdict, before writing.
    let line = line_of(&doctored, &format!("= {}", pinned + 1));
    let at = format!("check `after --resume` ({}:{line})", path.display());
    let change = format!(
        "    words_rendered_more_than_once: {} → {pinned}\n",
        pinned + 1
    );
    let (at_i, change_i, wrote_i) = (
        out.find(&at).unwrap_or_else(|| panic!("{at}: {out}")),
        out.find(&change)
            .unwrap_or_else(|| panic!("{change}: {out}")),
        out.find("bless: wrote ").unwrap_or_else(|| panic!("{out}")),
    );
    assert!(at_i < change_i && change_i < wrote_i, "{out}");
    assert!(
        out[change_i..].contains(&format!("    got: {pinned} words rendered more than once")),
        "{out}"
    );
    assert_eq!(
        out.matches(" → ").count(),
        1,
        "only the doctored pin changes: {out}"
    );
    // The file is the bundled one again, byte for byte; the included conversation untouched.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    assert_eq!(std::fs::read_to_string(&included).unwrap(), included_before);
}

/// The `--json` object of the one scenario of `out`.
fn json_of(out: &str) -> serde_json::Value {
    let line = out
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON line: {out}"));
    serde_json::from_str(line).unwrap()
}

fn expect_correct_fails_on_the_carrier_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenarios().join("compress/rotating_resume.toml");
    let o = run(
        &["--expect-correct", "--json", scenario.to_str().unwrap()],
        dir.path(),
    );
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    let result = json_of(&out);
    assert_eq!(result["passed"], false, "{out}");
    let check = result["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["at"] == "after --resume")
        .unwrap_or_else(|| panic!("{out}"));
    let mismatches: Vec<&str> = check["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m.as_str())
        .collect();
    assert_eq!(
        mismatches,
        [
            "words_rendered_more_than_once: expected 0, got 169",
            "internal_text_shown: expected 0, got 502",
            "causes: expected [], got [\"display\"]",
        ],
        "{out}"
    );
    assert!(
        result["rerun"]
            .as_str()
            .unwrap()
            .contains("--expect-correct"),
        "{out}"
    );
}

fn expect_correct_passes_where_the_client_draws_every_message_once() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenarios().join("faults/http_500_once.toml");
    let o = run(
        &["--expect-correct", scenario.to_str().unwrap()],
        dir.path(),
    );
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("ok ") && l.contains("faults/http_500_once")),
        "{out}"
    );
    assert!(out.contains("1 passed, 0 failed"), "{out}");
}

fn bless_takes_no_overrides_and_no_expect_correct() {
    // Pins are the scenario's own client, size, interface and terminal: no client is run.
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenarios().join("faults/http_500_once.toml");
    for extra in [
        &["--client", "hermes-agent==0.19.0"][..],
        &["--size", "80x24"],
        &["--ui", "tui"],
        &["--terminal", "reflow"],
        &["--expect-correct"],
    ] {
        let mut args = vec!["--bless", scenario.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = run(&args, dir.path());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains("cannot be used with"), "{extra:?}: {err}");
    }
}

/// A pin that becomes non-zero on a check with no known bug: `--bless` writes the numbers, the
/// compact causes and `known_bug = "TODO: …"`, and says so. On `v0_19/draft_while_resized`
/// (hermes-agent 0.19.0 replays the history on each resize) with its pins taken back to 0.
fn bless_of_a_pin_that_becomes_non_zero_writes_a_todo_known_bug() {
    let dir = tempfile::tempdir().unwrap();
    for file in [
        "v0_19/draft_while_resized.toml",
        "conversations/lighthouse.steps.toml",
    ] {
        let to = dir.path().join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(scenarios().join(file), to).unwrap();
    }
    let path = dir.path().join("v0_19/draft_while_resized.toml");
    let original = std::fs::read_to_string(&path).unwrap();
    let expect = regex::Regex::new(r"(?m)^expect = \{.*\}\nknown_bug = .*\n").unwrap();
    let zeroed = expect
        .replace(&original, "expect = { prompt_rows = 5 }\n")
        .into_owned();
    assert!(!zeroed.contains("known_bug"), "{zeroed}");
    std::fs::write(&path, &zeroed).unwrap();

    let o = run(
        &["--bless", path.to_str().unwrap()],
        &dir.path().join("out"),
    );
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    let blessed = std::fs::read_to_string(&path).unwrap();
    let pinned = regex::Regex::new(
        r"(?m)^expect = \{ words_rendered_more_than_once = [1-9]\d*, causes = \{ display = [1-9]\d* \}, prompt_rows = 5 \}\nknown_bug = .TODO: ",
    )
    .unwrap();
    assert!(pinned.is_match(&blessed), "{blessed}\n{out}");
    assert!(out.contains("    known_bug: (none) → \"TODO: "), "{out}");
    assert!(
        out.contains("bless: 1 check(s) now pin a non-zero number with no known bug"),
        "{out}"
    );
    // The blessed file loads and holds: a second run passes.
    let o = run(&[path.to_str().unwrap()], &dir.path().join("out"));
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// The tests of this file, trials of the binary that starts the real client.
pub const TESTS: &[Test] = tests![
    bless_restores_a_doctored_pin_and_prints_the_change,
    expect_correct_fails_on_the_carrier_duplicate,
    expect_correct_passes_where_the_client_draws_every_message_once,
    bless_takes_no_overrides_and_no_expect_correct,
    bless_of_a_pin_that_becomes_non_zero_writes_a_todo_known_bug,
];
