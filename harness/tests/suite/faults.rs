//! The harness against a misbehaving model and client: a hang, a model that only fails, a client
//! that exits at once. Each run must end with a verdict naming the step, with the last screen (and
//! the exit status when the client died), within the step's deadline — and leave no process behind.
//!
//! Scenarios that pin how the real client handles a transient fault (and the bugs found) live in
//! `scenarios/faults/`; these are about the harness itself, so they are built here.

use std::time::{Duration, Instant};

use hermes_e2e::runner::{self, RunOptions};
use hermes_e2e::scenario::Scenario;

use crate::common::processes::processes_under;
use crate::common::test::{tests, Test};

/// Runs scenario `text` (written into a fresh directory) with artefacts under that directory.
fn run(name: &str, text: &str) -> (runner::ScenarioResult, Duration, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    let scenario = Scenario::load(&path, dir.path()).expect("valid scenario");
    let options = RunOptions {
        out_root: dir.path().join("out"),
        ..Default::default()
    };
    let started = Instant::now();
    let result = runner::run(&scenario, &options);
    (result, started.elapsed(), dir)
}

fn faulty(fault: &str, deadline: u64) -> String {
    format!(
        r#"# A model that answers every request to this turn with `{fault}` (harness test).

[scenario]
size = {{ rows = 30, cols = 100 }}

[[step]]
launch = []

[[step]]
say = "What did a lighthouse keeper do all day?"
reply = "He kept the light."
fault = "{fault}"
deadline_secs = {deadline}

[[step]]
check = "after the turn"
expect = {{}}
"#
    )
}

fn assert_timed_out_verdict(result: &runner::ScenarioResult, line: usize, deadline: u64) {
    assert!(!result.passed);
    let error = result.error.as_deref().expect("a harness verdict");
    assert_eq!(result.error_line, Some(line), "{error}");
    assert!(
        error.contains(&format!("timed out after {deadline}.0 s")),
        "{error}"
    );
    assert!(error.contains("--- last screen ---"), "{error}");
    // What the client did is on that screen: the user's message was sent.
    assert!(
        error.contains("What did a lighthouse keeper do all day?"),
        "{error}"
    );
    assert!(
        result.checks.is_empty(),
        "no check runs after a failed step"
    );
}

/// Runs scenario `name` against a model with `fault` on every answer (6 s step deadline) and
/// asserts the timed-out verdict within 40 s with no process left behind; returns the fake
/// model's log.
fn times_out_within_the_deadline(name: &str, fault: &str) -> String {
    let (result, took, dir) = run(name, &faulty(fault, 6));
    assert_timed_out_verdict(&result, 9, 6);
    // Launch (a few seconds) + the 6 s deadline + teardown; nowhere near a hang.
    assert!(took < Duration::from_secs(40), "took {took:?}");
    assert!(processes_under(dir.path()).is_empty());
    std::fs::read_to_string(dir.path().join(format!("out/{name}/provider.jsonl"))).unwrap()
}

fn a_hanging_model_gives_a_verdict_within_the_step_deadline() {
    let log = times_out_within_the_deadline("hang", "hang");
    assert!(log.contains("\"fault\":\"hang\""), "the hang is in the log");
}

fn a_model_that_only_fails_gives_a_verdict_within_the_step_deadline() {
    let log = times_out_within_the_deadline("http500", "http_500");
    assert!(log.contains("\"fault\":\"http_500\""));
    assert!(log.contains("\"status\":500"));
}

fn a_client_that_exits_at_once_is_a_verdict_with_its_exit_status() {
    let text = r#"# A client started with an argument it rejects (harness test).

[scenario]
size = { rows = 30, cols = 100 }

[[step]]
launch = ["--no-such-option-for-hermes"]

[[step]]
check = "never reached"
expect = {}
"#;
    let (result, took, dir) = run("exits", text);
    assert!(!result.passed);
    let error = result.error.as_deref().expect("a harness verdict");
    assert_eq!(result.error_line, Some(6), "{error}");
    assert!(error.contains("exit"), "names the exit: {error}");
    assert!(error.contains("--- last screen ---"), "{error}");
    assert!(
        error.contains("no-such-option"),
        "the client's complaint: {error}"
    );
    assert!(took < Duration::from_secs(40), "took {took:?}");
    assert!(processes_under(dir.path()).is_empty());
}

/// The tests of this file, trials of the binary that starts the real client.
pub const TESTS: &[Test] = tests![
    a_hanging_model_gives_a_verdict_within_the_step_deadline,
    a_model_that_only_fails_gives_a_verdict_within_the_step_deadline,
    a_client_that_exits_at_once_is_a_verdict_with_its_exit_status,
];
