//! What a bisection probes each release with: a scenario, or a saved `state.db` resumed as
//! `repro` does; and the commands that rerun a probe or the whole bisection.

use std::path::{Path, PathBuf};

use super::bisect::{Bad, By, Probe};
use super::versions::Release;
use crate::runner::{self, RunOptions};
use crate::scenario::{Scenario, Ui};

/// What each release is probed with.
#[derive(Debug)]
pub enum Subject {
    /// A scenario file, run on each release (its pins are not used; its findings are).
    Scenario(Scenario),
    /// A saved `state.db`, resumed on each release through every `repro` path (classic CLI,
    /// 100×40, the harness's wide display settings); the file is never written.
    Db {
        /// The user's file.
        path: PathBuf,
        /// The session to resume (default: the most recent one with messages).
        session: Option<String>,
    },
}

impl Subject {
    /// The subject as a report names it.
    pub fn name(&self) -> String {
        match self {
            Subject::Scenario(s) => format!("`{}`", s.path.display()),
            Subject::Db { path, session } => {
                format!("`{}`{}", path.display(), session_arg(session))
            }
        }
    }

    /// Runs the probe on `release` once, with its artefacts under `out/<release>/`, and judges it.
    pub fn probe(&self, release: &Release, out: &Path, bad: Bad) -> Probe {
        let out = out.join(release.to_string());
        let run = match self {
            Subject::Scenario(scenario) => Ok(runner::run(
                scenario,
                &RunOptions {
                    client: Some(release.to_string()),
                    out_root: out,
                    progress: None,
                    expect_correct: false,
                },
            )),
            Subject::Db { path, session } => runner::repro(
                path,
                session.as_deref(),
                &release.to_string(),
                Ui::Classic,
                40,
                100,
                &out,
                None,
            )
            .map_err(|e| e.to_string()),
        };
        Probe::judge(release, run, bad)
    }

    /// The command that reruns one probe.
    pub fn probe_command(&self, release: &Release) -> String {
        match self {
            Subject::Scenario(s) => format!(
                "cargo run --release -p hermes-e2e -- run {} --client {release}",
                s.path.display()
            ),
            Subject::Db { path, session } => format!(
                "cargo run --release -p hermes-e2e -- repro {}{} --client {release}",
                path.display(),
                session_arg(session)
            ),
        }
    }

    /// The command that reruns the whole bisection.
    pub fn bisect_command(&self, by: By, versions: Option<&str>) -> String {
        let what = match self {
            Subject::Scenario(s) => s.path.display().to_string(),
            Subject::Db { path, session } => {
                format!("--db {}{}", path.display(), session_arg(session))
            }
        };
        let by = match by {
            By::Verdict => "verdict",
            By::Signature => "signature",
        };
        let versions = versions
            .map(|v| format!(" --versions {v}"))
            .unwrap_or_default();
        format!("cargo run --release -p hermes-e2e -- bisect {what} --by {by}{versions}")
    }
}

fn session_arg(session: &Option<String>) -> String {
    session
        .as_ref()
        .map(|s| format!(" --session {s}"))
        .unwrap_or_default()
}
