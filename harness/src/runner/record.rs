//! `record`: a scenario run kept as a fixture, with a `PROVENANCE.md` saying how it was made.

use std::path::Path;

use super::error::Error;
use super::{run, RunOptions, ScenarioResult};
use crate::oracle::Check;
use crate::scenario::{Action, Scenario};

/// Runs `scenario` and keeps what it produced as a fixture in `dest`: `state.db`, every
/// `session-N.cast`, `provider.jsonl`, `expect.toml` (what its last check found, [`expect_toml`])
/// and a `PROVENANCE.md` saying which client, which scenario
/// and config, what each checkpoint showed and how to reproduce the verdict without a client.
/// Returns the scenario's result (recorded whether or not it passed: a new bug is a failing run).
pub(crate) fn record(
    scenario: &Scenario,
    options: &RunOptions,
    dest: &Path,
) -> Result<ScenarioResult, Error> {
    let result = run(scenario, options);
    std::fs::create_dir_all(dest).map_err(|source| Error::Create {
        path: dest.to_owned(),
        source,
    })?;
    let mut kept = Vec::new();
    let files = result.kept_files().map_err(|source| Error::Read {
        path: result.kept.clone(),
        source,
    })?;
    for (from, name) in files {
        let wanted = name == "state.db"
            || name == "provider.jsonl"
            || (name.starts_with("session-") && name.ends_with(".cast"));
        if wanted {
            std::fs::copy(&from, dest.join(&name)).map_err(|source| Error::Copy {
                path: from.clone(),
                source,
            })?;
            kept.push(name);
        }
    }
    if !kept.iter().any(|k| k == "state.db") {
        return Err(Error::NoDatabase {
            scenario: scenario.name.clone(),
            verdict: result.error.as_deref().unwrap_or("no error").to_owned(),
        });
    }
    let last_cast = kept.iter().rfind(|k| k.ends_with(".cast")).cloned();
    if let Some(last) = result.checks.last() {
        let path = dest.join("expect.toml");
        std::fs::write(&path, expect_toml(&last.check))
            .map_err(|source| Error::Write { path, source })?;
    }
    std::fs::write(
        dest.join("PROVENANCE.md"),
        provenance(scenario, &result, dest, &kept, last_cast.as_deref()),
    )
    .map_err(|source| Error::Write {
        path: dest.join("PROVENANCE.md"),
        source,
    })?;
    Ok(result)
}

/// A fixture's `expect.toml`: the findings and causes of `check` (its last checkpoint) as a
/// scenario's `expect` table, which `check --expect` reads.
pub(crate) fn expect_toml(check: &Check) -> String {
    use std::fmt::Write as _;
    let mut t = String::from(
        "# What this fixture was recorded to show: the check command in PROVENANCE.md, given\n\
         # `--expect` this file, exits 0.\n",
    );
    for (name, n) in crate::scenario::named_findings(&check.findings) {
        if n > 0 {
            let _ = writeln!(t, "{name} = {n}");
        }
    }
    if !check.repeats.is_empty() {
        let causes: Vec<String> = check
            .repeats
            .iter()
            .map(|r| format!("\"{}\"", r.cause.name()))
            .collect();
        let _ = writeln!(t, "causes = [{}]", causes.join(", "));
    }
    t
}

/// The `- What it shows:` lines of a fixture's `PROVENANCE.md`: each check's verdict (and the
/// error that stopped the run, if any). Also written for a minimized case
/// (`triage/minimize/fixture.rs`).
pub(crate) fn what_it_shows(result: &ScenarioResult) -> String {
    use std::fmt::Write as _;
    let mut p = String::from("- What it shows:\n");
    for c in &result.checks {
        let _ = writeln!(
            p,
            "  - `{}` (session `{}`, {} stored rows, {} logical messages): {}",
            c.check.at, c.session, c.stored_rows, c.logical_messages, c.verdict
        );
    }
    if let Some(e) = &result.error {
        let first = e.lines().next().unwrap_or_default();
        let _ = writeln!(p, "- The run did not finish: {first}");
    }
    p
}

/// The `PROVENANCE.md` of a recorded fixture.
fn provenance(
    scenario: &Scenario,
    result: &ScenarioResult,
    dest: &Path,
    kept: &[String],
    last_cast: Option<&str>,
) -> String {
    use std::fmt::Write as _;
    let mut p = String::new();
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let _ = writeln!(p, "# fixtures/{name}\n");
    let _ = writeln!(p, "- Client: `{}` (classic CLI).", result.client);
    for step in &scenario.steps {
        if let Action::Launch {
            client: Some(other),
            args,
            ..
        } = &step.action
        {
            let _ = writeln!(
                p,
                "- The launch at line {} (`hermes {}`) used `{other}`.",
                step.line,
                args.join(" ")
            );
        }
    }
    let _ = writeln!(
        p,
        "- Recorded by `hermes-e2e record {} --out {}` (hermes-e2e {}).",
        scenario.path.display(),
        dest.display(),
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(p, "- Scenario: {}", scenario.summary);
    let _ = writeln!(
        p,
        "- Config: the harness's offline config (fake model on 127.0.0.1) with `{}`; terminal {}×{}.",
        scenario.config, scenario.cols, scenario.rows
    );
    let _ = writeln!(p, "- Files: {}.", kept.join(", "));
    p.push_str(&what_it_shows(result));
    if let Some(cast) = last_cast {
        let terminal = match scenario.terminal {
            crate::terminal::Terminal::Vt100 => String::new(),
            other => format!(" --terminal {}", other.name()),
        };
        let _ = writeln!(
            p,
            "- Reproduce the last verdict without a client: `hermes-e2e check --cast {d}/{cast} --db {d}/state.db{terminal}`; \
             with `--expect {d}/expect.toml` it exits 0.",
            d = dest.display()
        );
    }
    p
}
