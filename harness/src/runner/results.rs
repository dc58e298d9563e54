//! What a run produces.
//!
//! Every check's outcome, the step timings and the scenario's result — the types the reports
//! ([`crate::report`], [`crate::report::html`]) read.

use std::path::PathBuf;

use crate::oracle::{self, Check, RowCounts};
use crate::scenario::{Action, Comparison, Expectation, Scenario};
use crate::terminal::Transcript;
use crate::verdict::Basis;
use crate::views::recorded::Cut;
use crate::views::ViewSummary;

/// One checkpoint's outcome; in `--json`, one object of `checks` (docs/counting.md, "The JSON
/// verdict").
#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckResult {
    /// Whether the expectation held (no [`mismatches`](CheckResult::mismatches)).
    pub passed: bool,
    /// What the oracle found.
    #[serde(flatten)]
    pub check: Check,
    /// The causes of the repeats, counted by cause (`{"display": 1}`; `{}` without a repeat).
    #[serde(serialize_with = "cause_counts")]
    pub causes: Vec<oracle::Cause>,
    /// The row counts of the checkpoint's history (`oracle::count_rows`); `None` for a check of
    /// an exported file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_counts: Option<RowCounts>,
    /// What the scenario expected (`--json`: findings, causes, pinned rows, unpinned, known bug).
    pub expected: Expectation,
    /// Every finding, `causes` and row count: what was expected, what was found, whether it held.
    pub comparisons: Vec<Comparison>,
    /// Each difference between expected and found, as `finding: expected X, got Y`.
    pub mismatches: Vec<String>,
    /// Each internal text drawn (the words counted in `internal_text_shown`), located: its stored
    /// rows, its history rows and an excerpt.
    pub internal: Vec<InternalShown>,
    /// The oracle's one-sentence verdict.
    pub verdict: String,
    /// The check's `known_bug` when its numbers dropped to zero
    /// (`Expectation::fixed_upstream`): still a failure until the pins are blessed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed_upstream: Option<String>,
    /// Line of the `check` step in the scenario file.
    pub line: usize,
    /// The displayed session.
    pub session: String,
    /// Stored rows / logical messages of the display model.
    pub stored_rows: usize,
    /// Number of logical messages expected.
    pub logical_messages: usize,
    /// The rendered history the oracle read (for snapshots and reports).
    #[serde(skip)]
    pub transcript: Transcript,
    /// A picture of the terminal at the checkpoint, colours kept ([`crate::terminal::Screen::svg`]);
    /// `None` for a check of an exported file.
    #[serde(skip)]
    pub screen_svg: Option<String>,
    /// How the other emulator's transcript of the same bytes differs from the one checked
    /// ([`crate::terminal::difference`]): information, not a failure. `None` when they agree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal_note: Option<String>,
    /// The views of the live screen the check's numbers add up from, in screen order
    /// (`views.rs`); empty when the check judged one whole screen (the TUI, an export).
    pub views: Vec<ViewSummary>,
    /// What the check's inputs suggest is wrong with them (a recording and a database that do
    /// not belong together): the verdict still stands.
    pub warnings: Vec<String>,
    /// What the reader of the verdict should know about the inputs that may not be wrong (a
    /// WAL-mode database without a `-wal` beside it).
    pub notes: Vec<String>,
    /// How a saved recording was cut into views (`check --cast`); `None` for a scenario's check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
    /// The rendered history, one line per history row, numbered from 1 (`check --history`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<String>>,
    /// The rendered history the oracle read, as text (`check --transcript`).
    #[serde(rename = "transcript", skip_serializing_if = "Option::is_none")]
    pub transcript_text: Option<String>,
}

/// One internal text drawn: where it is stored, where the screen draws it and how much of it
/// was counted.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct InternalShown {
    /// Words of it counted in `internal_text_shown`.
    pub(crate) words: usize,
    /// The stored rows holding it (`messages.id`).
    pub(crate) stored_rows: Vec<i64>,
    /// Their sessions (distinct, in row order).
    pub(crate) sessions: Vec<String>,
    /// The history rows drawing it (first, last; inclusive; numbered from 1), in screen order.
    #[serde(serialize_with = "oracle::history_ranges")]
    pub(crate) history_rows: Vec<(usize, usize)>,
    /// Its first words.
    pub(crate) excerpt: String,
}

impl InternalShown {
    /// Each internal text of `expected` that `check` counted words of, located.
    pub(crate) fn located(
        check: &Check,
        expected: &crate::display::Expected,
    ) -> Vec<InternalShown> {
        let mut out = Vec::new();
        for (x, &words) in check.internal_words.iter().enumerate() {
            let Some(text) = expected.internal.get(x).filter(|_| words > 0) else {
                continue;
            };
            // Identical internal texts are counted at the first; their renderings are listed
            // there (as the HTML report does).
            let same = |y: usize| {
                expected.internal.get(y).map(|t| t.text.trim()) == Some(text.text.trim())
            };
            let history_rows = check
                .drawn
                .iter()
                .filter(|d| d.internal.is_some_and(same))
                .map(|d| d.rows)
                .collect();
            let mut sessions: Vec<String> = Vec::new();
            for r in &text.rows {
                if !sessions.contains(&r.session_id) {
                    sessions.push(r.session_id.clone());
                }
            }
            out.push(InternalShown {
                words,
                stored_rows: text.rows.iter().map(|r| r.id).collect(),
                sessions,
                history_rows,
                excerpt: excerpt(&text.text, 8),
            });
        }
        out
    }
}

/// The first `n` words of `text`, with ` …` when there are more.
fn excerpt(text: &str, n: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() > n {
        format!("{} …", words[..n].join(" "))
    } else {
        words.join(" ")
    }
}

/// Serialises causes as counts by cause: `{"display": 1}`.
fn cause_counts<S: serde::Serializer>(causes: &[oracle::Cause], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(None)?;
    for c in oracle::Cause::ALL {
        let n = causes.iter().filter(|&&x| x == c).count();
        if n > 0 {
            map.serialize_entry(c.name(), &n)?;
        }
    }
    map.end()
}

/// Wall time of one step, and how much of it was the harness only waiting.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StepTiming {
    /// Line of the step.
    pub(crate) line: usize,
    /// Step kind.
    pub kind: &'static str,
    /// Seconds.
    pub(crate) secs: f64,
    /// Seconds of it the client was busy (working, drawing, answering keys): `secs` less
    /// `harness_wait_secs`.
    pub(crate) busy_secs: f64,
    /// Seconds of it the harness's waits spent after the client's last byte: noticing that the
    /// client was done, confirming quiet output where no positive signal exists, holding Enter
    /// back for the client's paste window ([`crate::client::profile::ENTER_HOLD`]).
    pub(crate) harness_wait_secs: f64,
    /// Seconds of `harness_wait_secs` spent holding Enter back by the client's clock rules
    /// ([`crate::client::profile::ENTER_HOLD`], [`crate::client::profile::AFTER_TURN_HOLD`]):
    /// time the client needs that nothing on its screen signals. The rest of the harness's
    /// wait is noticing signals and, where none exists, confirming quiet output.
    pub(crate) clock_rule_secs: f64,
}

/// The outcome of one scenario: in `--json` (`run`, `repro`, `check`), one object per line, with
/// `schema_version` (`crate::report::json::SCHEMA_VERSION`) first.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScenarioResult {
    /// Scenario name (`compress/rotating_resume`).
    pub scenario: String,
    /// The scenario file.
    pub file: PathBuf,
    /// Client spec used.
    pub client: String,
    /// True when every check matched and no harness error happened.
    pub passed: bool,
    /// Every check run.
    pub checks: Vec<CheckResult>,
    /// A harness-level failure (with step and last screen), if any.
    pub error: Option<String>,
    /// Line of the step that failed, if any.
    pub error_line: Option<usize>,
    /// Wall time of the whole scenario, seconds.
    pub wall_secs: f64,
    /// Seconds spent waiting on the client (launch, turns, commands, quit).
    pub client_secs: f64,
    /// Per-step timings.
    pub steps: Vec<StepTiming>,
    /// Where artefacts were kept.
    pub kept: PathBuf,
    /// The command that reruns exactly this (shown on failure).
    pub rerun: String,
}

impl CheckResult {
    /// The outcome of `check` (and the row counts `row_counts`), made on `basis`, against what the
    /// scenario expected: the mismatches and the verdict sentence are derived from them.
    pub fn new(
        basis: &Basis,
        (check, row_counts): (Check, Option<RowCounts>),
        expected: Expectation,
        line: usize,
        transcript: Transcript,
        screen_svg: Option<String>,
    ) -> CheckResult {
        let mut result = CheckResult {
            passed: false,
            causes: check.repeats.iter().map(|r| r.cause).collect(),
            comparisons: Vec::new(),
            internal: InternalShown::located(&check, &basis.expected),
            verdict: oracle::verdict_sentence(&check),
            mismatches: Vec::new(),
            fixed_upstream: None,
            check,
            row_counts,
            expected: Expectation::default(),
            line,
            session: basis.session.clone(),
            stored_rows: basis.expected.stored_rows,
            logical_messages: basis.expected.messages.len(),
            transcript,
            screen_svg,
            terminal_note: None,
            views: Vec::new(),
            warnings: Vec::new(),
            notes: Vec::new(),
            cut: None,
            history: None,
            transcript_text: None,
        };
        result.judge(expected);
        result
    }

    /// Judges the check against `expected`: sets it, and what follows from it — whether the
    /// check held, its comparisons, its mismatches and a known bug it reads as fixed.
    fn judge(&mut self, expected: Expectation) {
        let rows = self.row_counts.as_ref();
        self.mismatches = expected.mismatches(&self.check, rows);
        self.passed = self.mismatches.is_empty();
        self.comparisons = expected.comparisons(&self.check, rows);
        self.fixed_upstream = expected
            .fixed_upstream(&self.check, rows)
            .map(str::to_owned);
        self.expected = expected;
    }

    /// The result with the views its numbers add up from.
    pub(crate) fn with_views(self, views: Vec<ViewSummary>) -> CheckResult {
        CheckResult { views, ..self }
    }

    /// The result with a note on how the other emulator's transcript differs.
    pub(crate) fn with_terminal_note(self, terminal_note: Option<String>) -> CheckResult {
        CheckResult {
            terminal_note,
            ..self
        }
    }
}

impl ScenarioResult {
    /// A result with nothing run yet: no check, no error, no time.
    pub fn new(
        scenario: String,
        file: PathBuf,
        client: String,
        kept: PathBuf,
        rerun: String,
    ) -> ScenarioResult {
        ScenarioResult {
            scenario,
            file,
            client,
            passed: false,
            checks: Vec::new(),
            error: None,
            error_line: None,
            wall_secs: 0.0,
            client_secs: 0.0,
            steps: Vec::new(),
            kept,
            rerun,
        }
    }

    /// Whether the run passed: it ran to its end and every check held.
    pub(crate) fn held(&self) -> bool {
        self.error.is_none() && !self.checks.is_empty() && self.checks.iter().all(|c| c.passed)
    }

    /// The run judged again against `scenario`, nothing run again: what `run --bless` would
    /// write or `run --expect-correct` would say of it. `scenario` is the one that was run with
    /// its pins changed (edited, [`Scenario::expecting_correct`]): each check takes the
    /// expectation of the scenario's check step of its position, as long as the steps' names
    /// are the checks' (from the first that differs, the checks keep their own), and the result
    /// takes the scenario's file.
    pub fn judged_against(&self, scenario: &Scenario) -> ScenarioResult {
        let mut steps = scenario.steps.iter().filter_map(|s| match &s.action {
            Action::Check { name, expect } => Some((name, expect)),
            _ => None,
        });
        let mut judged = self.clone();
        judged.file = scenario.path.clone();
        for check in &mut judged.checks {
            match steps.next() {
                Some((name, expect)) if *name == check.check.at => check.judge(expect.clone()),
                _ => break,
            }
        }
        judged.passed = judged.held();
        judged
    }

    /// The files (not directories) in [`ScenarioResult::kept`] with their names, in name order.
    pub(crate) fn kept_files(&self) -> std::io::Result<Vec<(PathBuf, String)>> {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&self.kept)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        paths.sort();
        Ok(paths
            .into_iter()
            .filter(|p| p.is_file())
            .map(|p| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (p, name)
            })
            .collect())
    }
}
