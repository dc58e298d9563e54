//! What a minimization did.
//!
//! Its trials (phase, what each removed, how it ended), the rows kept with why, and the whole
//! [`Outcome`] that `REPORT.md` is written from.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use super::{Matching, Model};
use crate::runner::ScenarioResult;
use crate::triage::signature::Signature;

/// The phase a trial belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Phase {
    /// Whole sessions outside the lineage.
    Sessions,
    /// Exchanges of the lineage.
    Exchanges,
    /// Single rows of the lineage.
    Rows,
    /// Shortening the texts of the rows kept.
    Texts,
    /// The real client's confirmation of the steps kept offline since the last one.
    Confirm,
}

impl Phase {
    /// Its name in reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Phase::Sessions => "sessions",
            Phase::Exchanges => "exchanges",
            Phase::Rows => "rows",
            Phase::Texts => "texts",
            Phase::Confirm => "confirm",
        }
    }
}

/// How a trial ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TrialVerdict {
    /// Both runs of the real client showed the signature: the removal is kept (confirmed).
    Kept,
    /// The offline tier read the original's offline signature: kept, to be confirmed by the real
    /// client later.
    KeptOffline,
    /// The first judge (the offline tier, when there is one) read another signature.
    Other(String),
    /// The offline tier read the signature (`offline: true`) or the real client's first run
    /// did, then the real client this one.
    Disagreed(String),
    /// The offline tier read the signature, the real client this one: rejected, and the run went
    /// back to the last confirmed state (the steps kept offline since were dropped).
    Refuted(String),
    /// The candidate could not be built or run.
    Failed(String),
}

impl TrialVerdict {
    /// As a progress line says it.
    pub(crate) fn text(&self) -> String {
        match self {
            TrialVerdict::Kept => "same signature (kept, confirmed by the real client)".into(),
            TrialVerdict::KeptOffline => "same offline signature (kept, to be confirmed)".into(),
            TrialVerdict::Refuted(s) => format!(
                "the real client disagreed: {s} (rejected; back to the last confirmed state)"
            ),
            TrialVerdict::Other(s) => format!("other signature: {s} (rejected)"),
            TrialVerdict::Disagreed(s) => {
                format!("same signature, then on the second run: {s} (rejected)")
            }
            TrialVerdict::Failed(e) => format!("could not run: {e} (rejected)"),
        }
    }
}

/// One candidate judged.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Trial {
    /// 1-based.
    pub(crate) number: usize,
    /// Its phase.
    pub(crate) phase: Phase,
    /// What it removed from the best so far (`rows 3–8`, `session X`).
    pub(crate) removed: String,
    /// Rows of the file before the removal.
    pub(crate) rows_before: usize,
    /// Rows of the candidate.
    pub(crate) rows_after: usize,
    /// Judged by the offline tier first.
    pub(crate) offline: bool,
    /// Runs of the real client it took (0, 1 or 2).
    pub(crate) runs: usize,
    /// How it ended.
    pub(crate) verdict: TrialVerdict,
}

/// A row of the minimized database and why it is there.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct KeptRow {
    /// `messages.id` (the original's).
    pub(crate) id: i64,
    /// Its session.
    pub(crate) session_id: String,
    /// Stored role.
    pub(crate) role: String,
    /// Kind (as `inspect` names it).
    pub(crate) kind: String,
    /// State (as `inspect` names it).
    pub(crate) state: String,
    /// The start of its content.
    pub(crate) excerpt: String,
    /// Why it is kept, as far as known.
    pub(crate) why: Vec<String>,
}

/// What a minimization did.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Outcome {
    /// The user's file.
    pub(crate) db: PathBuf,
    /// The resumed session.
    pub(crate) session: String,
    /// The original's signature.
    pub(crate) signature: Signature,
    /// What counted as the same failure.
    pub(crate) matching: Matching,
    /// Rows of the original file.
    pub(crate) rows_before: usize,
    /// Rows of `minimized.db`.
    pub(crate) rows_after: usize,
    /// Sessions of the original file.
    pub(crate) sessions_before: usize,
    /// Sessions of `minimized.db`.
    pub(crate) sessions_after: usize,
    /// Every candidate judged.
    pub(crate) trials: Vec<Trial>,
    /// Client runs in all (the original, the trials, the final verdict).
    pub(crate) runs: usize,
    /// The trial budget.
    pub(crate) max_trials: usize,
    /// True when the budget (`--max-trials` or `--timeout`) ran out before every unit was tried.
    pub(crate) spent: bool,
    /// True when it was `--timeout` that ran out.
    pub(crate) timed_out: bool,
    /// `--timeout`, seconds.
    pub(crate) timeout_secs: Option<f64>,
    /// The offline tier, if it judged candidates: its signature of the original.
    pub(crate) offline_signature: Option<Signature>,
    /// Seconds the offline tier's reads of candidates took in all.
    pub(crate) offline_secs: f64,
    /// Why there was no offline tier (when there was none).
    pub(crate) offline_absent: Option<String>,
    /// Characters of message text in the original file.
    pub(crate) chars_before: usize,
    /// Characters of message text in `minimized.db`.
    pub(crate) chars_after: usize,
    /// The `record`-style fixture written (`state.db`, casts, `PROVENANCE.md`).
    pub(crate) fixture: PathBuf,
    /// The output directory.
    pub(crate) dir: PathBuf,
    /// `DIR/minimized.db`.
    pub(crate) minimized: PathBuf,
    /// The rows left, with why.
    pub(crate) kept: Vec<KeptRow>,
    /// The signature of the final run on `minimized.db`.
    pub(crate) final_signature: Signature,
    /// The command that reproduces it.
    pub(crate) command: String,
    /// Wall time, seconds.
    pub(crate) wall_secs: f64,
    /// The final verdict on `minimized.db` (as `repro` prints it).
    #[serde(skip)]
    pub(crate) result: ScenarioResult,
}

/// The rows of `model` with why each is kept: what the final verdict names it for, its
/// relations, and the last rejected removal of it alone.
pub(super) fn kept_rows(
    model: &Model,
    result: &ScenarioResult,
    notes: &HashMap<i64, String>,
) -> Vec<KeptRow> {
    // Row → what the final verdict says of it → the checks saying it.
    let mut repeated: HashMap<i64, Vec<(String, Vec<&str>)>> = HashMap::new();
    for c in &result.checks {
        for r in &c.check.repeats {
            let why = match r.carrier_of {
                Some(of) => format!("its reply is drawn twice: row {of} and its carrier"),
                None => format!(
                    "rendered more than once ({})",
                    describe_rows(&r.rows.iter().copied().collect())
                ),
            };
            for id in &r.rows {
                let list = repeated.entry(*id).or_default();
                match list.iter_mut().find(|(w, _)| *w == why) {
                    Some((_, at)) if !at.contains(&c.check.at.as_str()) => at.push(&c.check.at),
                    Some(_) => {}
                    None => list.push((why.clone(), vec![&c.check.at])),
                }
            }
        }
    }
    let internal_shown = result
        .checks
        .iter()
        .any(|c| c.check.findings.internal_text_shown > 0);
    model
        .rows
        .iter()
        .map(|m| {
            let r = &m.row;
            let mut why: Vec<String> = repeated
                .remove(&r.id)
                .unwrap_or_default()
                .into_iter()
                .map(|(w, at)| format!("{w} ({})", at.join(", ")))
                .collect();
            if r.class.internal_words > 0 && internal_shown {
                why.push(format!(
                    "holds {} words of internal text (the client showed internal text)",
                    r.class.internal_words
                ));
            }
            why.extend(
                model
                    .ties
                    .iter()
                    .filter(|t| t.a == r.id || t.b == r.id)
                    .map(|t| t.why.clone()),
            );
            why.push(
                notes
                    .get(&r.id)
                    .cloned()
                    .unwrap_or_else(|| "its removal alone was not tried".into()),
            );
            KeptRow {
                id: r.id,
                session_id: r.session_id.clone(),
                role: r.role.clone(),
                kind: json_name(&r.class.kind),
                state: json_name(&r.class.state),
                excerpt: r.preview.clone(),
                why,
            }
        })
        .collect()
}

/// A unit enum's name as `inspect --json` writes it.
fn json_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

impl Outcome {
    /// Trials the offline tier judged.
    pub(crate) fn offline_trials(&self) -> usize {
        self.trials.iter().filter(|t| t.offline).count()
    }

    /// `18 → 2 rows, 2 → 2 sessions, 12121 → 173 characters of text in 23 trials (22 offline,
    /// 2 on the PTY)`.
    pub(crate) fn summary(&self) -> String {
        format!(
            "{} → {} rows, {} → {} sessions, {} → {} characters of text in {} trials ({} offline, \
             {} on the PTY)",
            self.rows_before,
            self.rows_after,
            self.sessions_before,
            self.sessions_after,
            self.chars_before,
            self.chars_after,
            self.trials.len(),
            self.offline_trials(),
            self.pty_trials()
        )
    }

    /// Trials that ran the real client in the PTY.
    pub(crate) fn pty_trials(&self) -> usize {
        self.trials.iter().filter(|t| t.runs > 0).count()
    }
}

/// `1 row`, `9 rows`.
pub(super) fn rows(n: usize) -> String {
    format!("{n} row{}", if n == 1 { "" } else { "s" })
}

/// `session A, B` (at most three named).
pub(super) fn describe_sessions(sessions: &BTreeSet<String>) -> String {
    let names: Vec<&str> = sessions.iter().map(String::as_str).take(3).collect();
    let more = sessions.len().saturating_sub(names.len());
    let s = if sessions.len() == 1 { "" } else { "s" };
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("session{s} {}{more}", names.join(", "))
}

/// `rows 3–8, 11`: runs of consecutive ids as ranges.
pub(crate) fn describe_rows(rows: &BTreeSet<i64>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut iter = rows.iter().copied().peekable();
    while let Some(first) = iter.next() {
        let mut last = first;
        while iter.peek() == Some(&(last + 1)) {
            last = iter.next().unwrap_or(last);
        }
        parts.push(if first == last {
            first.to_string()
        } else {
            format!("{first}–{last}")
        });
    }
    let s = if rows.len() == 1 { "" } else { "s" };
    format!("row{s} {}", parts.join(", "))
}
