//! What a bisection probes each release with.
//!
//! A scenario, or a saved `state.db` resumed as `repro` does; and the commands that rerun a probe
//! or the whole bisection.

use std::path::{Path, PathBuf};

use super::bisect::{Bad, By, Probe};
use super::versions::Release;
use crate::runner::{self, RunOptions};
use crate::scenario::{Scenario, Ui};
use crate::terminal::Size;

/// What each release is probed with.
#[derive(Debug)]
pub(crate) enum Subject {
    /// A scenario file, run on each release (its pins are not used; its findings are).
    Scenario(Scenario),
    /// A saved `state.db`, resumed on each release through every `repro` path, as `repro` runs
    /// it; the file is never written.
    Db {
        /// The user's file.
        path: PathBuf,
        /// The session to resume (default: the most recent one with messages).
        session: Option<String>,
        /// The interface.
        ui: Ui,
        /// The terminal.
        size: Size,
        /// The user's `config.yaml` (default: the harness's wide display settings).
        config: Option<PathBuf>,
    },
}

/// `repro`'s terminal for `ui` when none is given: 100×40, or 100×300 for the TUI (whose resumed
/// screen on a terminal shorter than the conversation depends on Ink's redraws).
pub(crate) fn default_size(ui: Ui) -> Size {
    match ui {
        Ui::Classic => Size {
            cols: 100,
            rows: 40,
        },
        Ui::Tui => Size {
            cols: 100,
            rows: 300,
        },
    }
}

impl Subject {
    /// The subject as a report names it.
    pub(crate) fn name(&self) -> String {
        match self {
            Subject::Scenario(s) => format!("`{}`", s.path.display()),
            Subject::Db { path, session, .. } => {
                format!("`{}`{}", path.display(), session_arg(session))
            }
        }
    }

    /// Runs the probe on `release` once, with its artefacts under `out/<release>/`, and judges it.
    pub(crate) fn probe(&self, release: &Release, out: &Path, bad: Bad) -> Probe {
        let out = out.join(release.to_string());
        let run = match self {
            Subject::Scenario(scenario) => Ok(runner::run(
                scenario,
                &RunOptions {
                    client: Some(release.to_string()),
                    out_root: out,
                    ..Default::default()
                },
            )),
            Subject::Db {
                path,
                session,
                ui,
                size,
                config,
            } => runner::repro(
                path,
                session.as_deref(),
                &release.to_string(),
                *ui,
                *size,
                &out,
                config.as_deref(),
            ),
        };
        Probe::judge(release, run, bad)
    }

    /// The command that reruns one probe.
    pub(crate) fn probe_command(&self, release: &Release) -> String {
        match self {
            Subject::Scenario(s) => format!(
                "cargo run --release -p hermes-e2e -- run {} --client {release}",
                s.path.display()
            ),
            Subject::Db { path, session, .. } => format!(
                "cargo run --release -p hermes-e2e -- repro {}{}{} --client {release}",
                path.display(),
                session_arg(session),
                self.db_args()
            ),
        }
    }

    /// ` --ui UI --size COLSxROWS --config FILE` of a database probe, each where it is not the
    /// default.
    fn db_args(&self) -> String {
        let Subject::Db {
            ui, size, config, ..
        } = self
        else {
            return String::new();
        };
        let mut args = String::new();
        if *ui != Ui::Classic {
            args.push_str(&format!(" --ui {}", ui.name()));
        }
        if *size != default_size(*ui) {
            args.push_str(&format!(" --size {size}"));
        }
        if let Some(c) = config {
            args.push_str(&format!(" --config {}", c.display()));
        }
        args
    }

    /// The command that reruns the whole bisection.
    pub(crate) fn bisect_command(&self, by: By, bad: Bad, versions: Option<&str>) -> String {
        let what = match self {
            Subject::Scenario(s) => s.path.display().to_string(),
            Subject::Db { path, session, .. } => {
                format!(
                    "--db {}{}{}",
                    path.display(),
                    session_arg(session),
                    self.db_args()
                )
            }
        };
        let bad = match bad {
            Bad::Repeats => String::new(),
            other => format!(
                " --bad {}",
                clap::ValueEnum::to_possible_value(&other)
                    .map(|v| v.get_name().to_owned())
                    .unwrap_or_default()
            ),
        };
        let versions = versions
            .map(|v| format!(" --versions {v}"))
            .unwrap_or_default();
        format!(
            "cargo run --release -p hermes-e2e -- bisect {what} --by {}{bad}{versions}",
            by.name()
        )
    }
}

fn session_arg(session: &Option<String>) -> String {
    session
        .as_ref()
        .map(|s| format!(" --session {s}"))
        .unwrap_or_default()
}
