//! `run --bless` and `run --expect-correct` through the binary: the flags that cannot go with
//! `--bless` are refused before any client runs, and both flags reach the run they follow. What
//! they do with a real run's numbers is judged on the runs of the scenario trials
//! (`judges/bless.rs`, `judges/expect_correct.rs`): one launch of the client serves both.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::bin::BIN;
use crate::common::output::{stderr, stdout};
use crate::common::quick::exits_at_once;
use crate::common::test::{tests, Test};

fn scenarios() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

/// `hermes-e2e run ARGS -j 1 --out OUT`, with the scenarios' own client (no
/// `HERMES_E2E_CLIENT`): refused before it would start.
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

/// `--bless` and `--expect-correct` reach the run they follow: with the scenarios' clients
/// overridden (`HERMES_E2E_CLIENT`, here the `/bin/false` test double), `--bless` runs the
/// scenario, then refuses to bless and exits 1; `--expect-correct` judges every check expecting
/// a correct display and its rerun line repeats the flag. What each does with a real run's
/// numbers is judged on the scenario trials' runs (`bless/…`, `expect_correct/…`).
fn bless_and_expect_correct_reach_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = exits_at_once(dir.path());
    let run = |flag: &str| {
        Command::new(BIN)
            .args(["run", flag, scenario.to_str().unwrap(), "--out"])
            .arg(dir.path().join("out"))
            .env("HERMES_E2E_CLIENT", "/bin/false")
            .output()
            .expect("run hermes-e2e")
    };
    let o = run("--bless");
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(out.contains("FAIL "), "{out}");
    assert!(
        out.contains("bless: refused: HERMES_E2E_CLIENT is set (/bin/false)"),
        "{out}"
    );
    let o = run("--expect-correct");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{}", stderr(&o));
    let rerun = format!(
        "rerun:    cargo run -p hermes-e2e -- run {} --expect-correct\n",
        scenario.display()
    );
    assert!(out.contains(&rerun), "{out}");
}

/// The tests of this file, trials of the binary that runs the suite in one pool of workers.
pub const TESTS: &[Test] = tests![
    bless_takes_no_overrides_and_no_expect_correct,
    bless_and_expect_correct_reach_the_run,
];
