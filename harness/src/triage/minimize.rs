//! `repro STATE_DB --minimize`: shrink a copy of a user's database to the fewest rows (and
//! sessions) that still misrender *the same way* in the real client.
//!
//! The oracle of a candidate is [`crate::runner::repro()`] on it — the real client, resumed through
//! every display path — and a candidate is interesting only when the [`Signature`] of its verdict
//! equals the original's ([`Matching::Same`]; `--signature any-repeat` loosens that to "some check
//! shows words rendered more than once"). Every candidate the first run accepts is run a second
//! time; a disagreement rejects it. There is no fast offline tier yet: every trial runs the real
//! client (two display paths, a few seconds each).
//!
//! Units are removed in three phases, each by delta debugging ([`ddmin()`]: halves, then quarters,
//! … then single units): (1) whole sessions outside the resumed session's lineage (never one a
//! kept session names as `parent_session_id`; a removed session takes its children), (2) the
//! lineage's exchanges (a user row with the rows up to the next one), (3) single rows. A summary
//! carrier stays with the row it carries (and every row sharing its `message_uid`), a tool result
//! with the row that called it ([`model::Tie`]). Candidates are fresh copies of the current best
//! with rows deleted by rusqlite (`sessions.message_count` follows); the user's file is only read,
//! and its content is checked unchanged at the end.
//!
//! Bounded by `--max-trials` (a trial is one candidate judged: one or two client runs); each trial
//! prints one progress line on stderr. The best so far is kept in `DIR/minimized.db` as it
//! improves, so an interrupted run (the harness's interrupt handler kills the clients) leaves it.
//! At the end: `DIR/minimized.db` (vacuumed: removed text does not survive in free pages), one
//! more verdict of it, and `DIR/REPORT.md` ([`report`]).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::client::Ui;
use crate::runner::{self, ScenarioResult};
use crate::store::{Store, StoreError};

pub mod ddmin;
pub mod model;
pub mod outcome;
pub mod report;

pub use ddmin::{ddmin, Spent};
pub use model::{Model, Removal};
pub use outcome::{KeptRow, Outcome, Phase, Trial, TrialVerdict};

use outcome::{describe_rows, describe_sessions, kept_rows, rows};

use super::signature::{Kind, Signature};

/// The default trial budget (`--max-trials`).
pub const DEFAULT_MAX_TRIALS: usize = 60;

/// When a candidate fails "the same way" as the original.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Matching {
    /// The same signature, check by check (`--signature same`, the default).
    Same,
    /// Any check with words rendered more than once (`--signature any-repeat`).
    AnyRepeat,
}

impl std::str::FromStr for Matching {
    type Err = String;

    fn from_str(s: &str) -> Result<Matching, String> {
        match s {
            "same" => Ok(Matching::Same),
            "any-repeat" => Ok(Matching::AnyRepeat),
            _ => Err(format!("expected `same` or `any-repeat`, got `{s}`")),
        }
    }
}

impl Matching {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Matching::Same => "same",
            Matching::AnyRepeat => "any-repeat",
        }
    }

    /// True when `candidate` fails the way `original` does, as this matching reads it.
    pub fn matches(self, original: &Signature, candidate: &Signature) -> bool {
        match self {
            Matching::Same => candidate == original,
            Matching::AnyRepeat => candidate
                .checks
                .iter()
                .any(|c| c.kinds.contains(&Kind::Repeats)),
        }
    }

    /// True when `original` misrenders at all, as this matching reads it: some finding is
    /// non-zero (`same`), or some check shows repeats (`any-repeat`).
    pub fn misrenders(self, original: &Signature) -> bool {
        match self {
            Matching::Same => original.checks.iter().any(|c| !c.is_clean()),
            Matching::AnyRepeat => self.matches(original, original),
        }
    }

    /// What a candidate must show, in words.
    pub fn describe(self, original: &Signature) -> String {
        match self {
            Matching::Same => format!("the same signature: {original}"),
            Matching::AnyRepeat => {
                "any check with words rendered more than once (`--signature any-repeat`)".into()
            }
        }
    }
}

/// Judges a database: the verdict of resuming `session` of `db` in a client.
pub trait Oracle {
    /// Runs the client on `db` (never written) with artefacts under `out_root`.
    fn judge(
        &mut self,
        db: &Path,
        session: &str,
        out_root: &Path,
    ) -> Result<ScenarioResult, String>;

    /// What to add to `repro DB` to run it as this oracle does (e.g. ` --client …`).
    fn repro_args(&self) -> String;
}

/// The real client through [`runner::repro()`], as `repro` runs it.
#[derive(Debug, Clone)]
pub struct RealClient {
    /// The client spec.
    pub client: String,
    /// The interface.
    pub ui: Ui,
    /// Terminal rows.
    pub rows: u16,
    /// Terminal columns.
    pub cols: u16,
    /// The user's `config.yaml`, if given.
    pub config: Option<PathBuf>,
}

impl Oracle for RealClient {
    fn judge(
        &mut self,
        db: &Path,
        session: &str,
        out_root: &Path,
    ) -> Result<ScenarioResult, String> {
        runner::repro(
            db,
            Some(session),
            &self.client,
            self.ui,
            self.rows,
            self.cols,
            out_root,
            self.config.as_deref(),
        )
        .map_err(|e| e.to_string())
    }

    fn repro_args(&self) -> String {
        let mut args = String::new();
        if self.client != crate::scenario::DEFAULT_CLIENT {
            args.push_str(&format!(" --client {}", self.client));
        }
        let default_rows = if self.ui == Ui::Tui { 300 } else { 40 };
        if self.ui != Ui::Classic {
            args.push_str(&format!(" --ui {}", self.ui.name()));
        }
        if (self.cols, self.rows) != (100, default_rows) {
            args.push_str(&format!(" --size {}x{}", self.cols, self.rows));
        }
        if let Some(c) = &self.config {
            args.push_str(&format!(" --config {}", c.display()));
        }
        args
    }
}

/// How to minimize.
#[derive(Debug, Clone)]
pub struct Options {
    /// The session to resume (default: the most recent one with messages).
    pub session: Option<String>,
    /// What counts as the same failure.
    pub matching: Matching,
    /// Candidates judged at most.
    pub max_trials: usize,
    /// The output directory (default: `target/hermes-e2e/minimize/<session>`).
    pub out: Option<PathBuf>,
}

/// Why a minimization could not be done.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The original does not misrender (as the matching reads it).
    #[error("nothing to minimize: `{}` does not misrender ({signature}; wanted {wanted})", db.display())]
    NothingToMinimize {
        /// The user's file.
        db: PathBuf,
        /// The original's signature.
        signature: String,
        /// What a misrendering would have been.
        wanted: String,
    },
    /// The database could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The database has no session with messages to resume.
    #[error("`{}` has no session with messages", db.display())]
    NoSession {
        /// The user's file.
        db: PathBuf,
    },
    /// The original could not be run.
    #[error("the original could not be reproduced: {0}")]
    Original(String),
    /// The final run of `minimized.db` could not be done (it is kept).
    #[error("the final run of `minimized.db` failed: {0}")]
    Final(String),
    /// A copy could not be made or edited.
    #[error(transparent)]
    Build(#[from] model::BuildError),
    /// An output file could not be written.
    #[error("cannot write `{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The user's file changed while it was minimized (someone else wrote it).
    #[error("`{}` changed during the minimization (it was only read here)", db.display())]
    InputChanged {
        /// The user's file.
        db: PathBuf,
    },
}

/// The state of one minimization between trials.
struct Run<'a> {
    oracle: &'a mut dyn Oracle,
    progress: &'a mut dyn FnMut(&str),
    matching: Matching,
    original: Signature,
    session: String,
    dir: PathBuf,
    best: PathBuf,
    candidate: PathBuf,
    max_trials: usize,
    trials: Vec<Trial>,
    runs: usize,
    /// Everything removed from the original so far.
    removed: Removal,
    /// Removals (cumulative) already judged and rejected: not judged again.
    rejected: HashMap<(Vec<String>, Vec<i64>), String>,
    /// Rows of the lineage in the original.
    lineage_rows: BTreeSet<i64>,
    rows_now: usize,
    /// Why a row is kept: the last rejected removal of the unit holding it alone.
    notes: HashMap<i64, String>,
}

/// Minimizes `db` (never written): see the module documentation. Errors before the first trial
/// (a bad file, nothing to minimize) are returned; trial failures are rejections.
pub fn minimize(
    db: &Path,
    options: &Options,
    oracle: &mut dyn Oracle,
    progress: &mut dyn FnMut(&str),
) -> Result<Outcome, Error> {
    let started = Instant::now();
    let fingerprint = fingerprint(db).map_err(|source| Error::Io {
        path: db.to_owned(),
        source,
    })?;
    let session = resolve_session(db, options.session.as_deref())?;
    let dir = options.out.clone().unwrap_or_else(|| {
        runner::default_out_root()
            .join("minimize")
            .join(runner::slug(&session, "session"))
    });
    let work = dir.join("work");
    for stale in ["work", "trials", "original", "repro"] {
        let _ = std::fs::remove_dir_all(dir.join(stale));
    }
    model::remove_database(&dir.join("minimized.db"));
    std::fs::create_dir_all(&work).map_err(|source| Error::Io {
        path: work.clone(),
        source,
    })?;
    let best = work.join("best.db");
    // A copy of the original, settled (a `-wal` replayed into it) by an edit that removes nothing.
    model::build(db, &best, &Removal::default())?;
    let model = Model::read(&best, &session)?;
    progress(&format!(
        "minimize: the original: {} rows, {} sessions; running it …",
        model.total_rows,
        model.sessions.len()
    ));
    let first = oracle
        .judge(db, &session, &dir.join("original"))
        .map_err(Error::Original)?;
    let original = Signature::of(&first);
    if !options.matching.misrenders(&original) {
        return Err(Error::NothingToMinimize {
            db: db.to_owned(),
            signature: original.to_string(),
            wanted: options.matching.describe(&original),
        });
    }
    progress(&format!("minimize: signature: {original}"));
    let mut run = Run {
        oracle,
        progress,
        matching: options.matching,
        original,
        session: session.clone(),
        candidate: work.join("candidate.db"),
        best,
        dir: dir.clone(),
        max_trials: options.max_trials,
        trials: Vec::new(),
        runs: 1,
        removed: Removal::default(),
        rejected: HashMap::new(),
        lineage_rows: model.rows.iter().map(|r| r.row.id).collect(),
        rows_now: model.total_rows,
        notes: HashMap::new(),
    };
    run.publish()?;
    let spent = run.phases(&model);
    finish(run, db, fingerprint, &model, spent, started)
}

/// The session `repro` would resume.
fn resolve_session(db: &Path, session: Option<&str>) -> Result<String, Error> {
    if let Some(s) = session {
        return Ok(s.to_owned());
    }
    let store = Store::open(db)?;
    store
        .latest_session_with_messages()?
        .map(|s| s.id)
        .ok_or_else(|| Error::NoSession { db: db.to_owned() })
}

impl Run<'_> {
    /// The three phases, in order; true when the budget ran out.
    fn phases(&mut self, model: &Model) -> bool {
        // (1) Sessions outside the lineage: all at once first (usually all go), then ddmin.
        let sessions = model.removable_sessions();
        if !sessions.is_empty() {
            let mut test = |chunk: &[String]| {
                let removal = Removal {
                    sessions: model.with_descendants(chunk),
                    rows: BTreeSet::new(),
                };
                let what = describe_sessions(&removal.sessions);
                Ok(self.judge(Phase::Sessions, removal, what)?.is_none())
            };
            match test(&sessions) {
                Err(Spent) => return true,
                Ok(true) => {}
                Ok(false) => {
                    if ddmin(sessions, &mut test).1 {
                        return true;
                    }
                }
            }
        }
        // (2) Exchanges, (3) single rows: units with no row left are gone already.
        for (phase, units) in [
            (Phase::Exchanges, model.exchange_units()),
            (Phase::Rows, model.row_units()),
        ] {
            let units: Vec<Vec<i64>> = units
                .into_iter()
                .filter(|u| u.iter().any(|id| !self.removed.rows.contains(id)))
                .collect();
            let mut test = |chunk: &[Vec<i64>]| {
                let rows: BTreeSet<i64> = chunk.iter().flatten().copied().collect();
                let what = describe_rows(&rows);
                let removal = Removal {
                    sessions: BTreeSet::new(),
                    rows: rows.clone(),
                };
                let why_not = self.judge(phase, removal, what.clone())?;
                if let (Some(why_not), 1) = (&why_not, chunk.len()) {
                    let note = format!("removing {what} ({} phase): {why_not}", phase.name());
                    for id in &rows {
                        self.notes.insert(*id, note.clone());
                    }
                }
                Ok(why_not.is_none())
            };
            if ddmin(units, &mut test).1 {
                return true;
            }
        }
        false
    }

    /// Judges the removal of `removal` from the best so far: builds the candidate, runs it
    /// (twice when the first run shows the signature) and keeps it when both runs do. `None`
    /// when kept, else why not (a candidate already rejected, or one with no row left in the
    /// lineage, is not run again).
    fn judge(
        &mut self,
        phase: Phase,
        removal: Removal,
        what: String,
    ) -> Result<Option<String>, Spent> {
        let key = {
            let mut s = self.removed.sessions.clone();
            s.extend(removal.sessions.iter().cloned());
            let mut r = self.removed.rows.clone();
            r.extend(removal.rows.iter().copied());
            (
                s.into_iter().collect::<Vec<_>>(),
                r.into_iter().collect::<Vec<_>>(),
            )
        };
        if let Some(why) = self.rejected.get(&key) {
            return Ok(Some(why.clone()));
        }
        // A candidate with no row left in the lineage resumes nothing: not worth a trial.
        if self
            .lineage_rows
            .iter()
            .all(|id| key.1.binary_search(id).is_ok())
        {
            return Ok(Some(
                "not tried: no row of the lineage would be left".into(),
            ));
        }
        if self.trials.len() >= self.max_trials {
            return Err(Spent);
        }
        let number = self.trials.len() + 1;
        let (verdict, runs, rows_after) = self.try_candidate(&removal);
        let kept = verdict == TrialVerdict::Kept;
        let trial = Trial {
            number,
            phase,
            removed: what,
            rows_before: self.rows_now,
            rows_after,
            runs,
            verdict,
        };
        (self.progress)(&format!(
            "minimize: trial {number}: {} → {} (without {}): {}",
            rows(trial.rows_before),
            rows(trial.rows_after),
            trial.removed,
            trial.verdict.text()
        ));
        self.trials.push(trial);
        self.runs += runs;
        if kept {
            self.removed.sessions.extend(removal.sessions);
            self.removed.rows.extend(removal.rows);
            self.rows_now = rows_after;
            model::remove_database(&self.best);
            let moved = std::fs::rename(&self.candidate, &self.best);
            if moved.is_err() || self.publish().is_err() {
                (self.progress)("minimize: could not keep the candidate; stopping");
                return Err(Spent);
            }
        } else {
            let why = self
                .trials
                .last()
                .map(|t| t.verdict.text())
                .unwrap_or_default();
            self.rejected.insert(key, why.clone());
            return Ok(Some(why));
        }
        Ok(None)
    }

    /// Builds the candidate and runs it; its verdict, the runs taken and its rows.
    fn try_candidate(&mut self, removal: &Removal) -> (TrialVerdict, usize, usize) {
        if let Err(e) = model::build(&self.best, &self.candidate, removal) {
            return (TrialVerdict::Failed(e.to_string()), 0, self.rows_now);
        }
        let rows_after = model::count_rows(&self.candidate).unwrap_or(self.rows_now);
        let out = self.dir.join("trials");
        let mut signatures = Vec::new();
        for _ in 0..2 {
            match self.oracle.judge(&self.candidate, &self.session, &out) {
                Ok(result) => {
                    let s = Signature::of(&result);
                    let same = self.matching.matches(&self.original, &s);
                    signatures.push(s);
                    if !same {
                        break;
                    }
                }
                Err(e) => return (TrialVerdict::Failed(e), signatures.len() + 1, rows_after),
            }
        }
        let runs = signatures.len();
        let verdict = match (signatures.len(), signatures.last()) {
            (2, Some(s)) if self.matching.matches(&self.original, s) => TrialVerdict::Kept,
            (2, Some(s)) => TrialVerdict::Disagreed(s.to_string()),
            (_, Some(s)) => TrialVerdict::Other(s.to_string()),
            (_, None) => TrialVerdict::Failed("no run".into()),
        };
        (verdict, runs, rows_after)
    }

    /// Copies the best so far to `DIR/minimized.db` (what an interrupted run leaves).
    fn publish(&self) -> Result<(), Error> {
        let target = self.dir.join("minimized.db");
        model::remove_database(&target);
        crate::store::copy_database(&self.best, &target)?;
        Ok(())
    }
}

/// The final verdict on `minimized.db`, the kept rows and `REPORT.md`.
fn finish(
    mut run: Run<'_>,
    db: &Path,
    fingerprint: u64,
    original: &Model,
    spent: bool,
    started: Instant,
) -> Result<Outcome, Error> {
    let minimized = run.dir.join("minimized.db");
    run.publish()?;
    model::vacuum(&minimized)?;
    (run.progress)("minimize: the verdict of minimized.db …");
    let result = run
        .oracle
        .judge(&minimized, &run.session, &run.dir)
        .map_err(Error::Final)?;
    run.runs += 1;
    let final_signature = Signature::of(&result);
    let model = Model::read(&minimized, &run.session)?;
    let kept = kept_rows(&model, &result, &run.notes);
    let latest = Store::open(&minimized)?
        .latest_session_with_messages()?
        .map(|s| s.id);
    let session_arg = if latest.as_deref() == Some(run.session.as_str()) {
        String::new()
    } else {
        format!(" --session {}", run.session)
    };
    let command = format!(
        "cargo run -p hermes-e2e -- repro {}{session_arg}{}",
        minimized.display(),
        run.oracle.repro_args()
    );
    if fingerprint != self::fingerprint(db).unwrap_or(!fingerprint) {
        return Err(Error::InputChanged { db: db.to_owned() });
    }
    let _ = std::fs::remove_dir_all(run.dir.join("work"));
    let outcome = Outcome {
        db: db.to_owned(),
        session: run.session.clone(),
        signature: run.original.clone(),
        matching: run.matching,
        rows_before: original.total_rows,
        rows_after: model.total_rows,
        sessions_before: original.sessions.len(),
        sessions_after: model.sessions.len(),
        trials: run.trials,
        runs: run.runs,
        max_trials: run.max_trials,
        spent,
        dir: run.dir.clone(),
        minimized,
        kept,
        final_signature,
        command,
        wall_secs: started.elapsed().as_secs_f64(),
        result,
    };
    let path = run.dir.join("REPORT.md");
    std::fs::write(&path, report::markdown(&outcome))
        .map_err(|source| Error::Io { path, source })?;
    Ok(outcome)
}

/// A hash of the file's content and of its `-wal`/`-shm` siblings, to check it unchanged.
fn fingerprint(path: &Path) -> std::io::Result<u64> {
    use std::hash::Hasher;
    use std::io::Read;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let file = match std::fs::File::open(PathBuf::from(p)) {
            Ok(f) => f,
            Err(e) if suffix.is_empty() => return Err(e),
            Err(_) => continue,
        };
        h.write(suffix.as_bytes());
        let mut reader = std::io::BufReader::new(file);
        let mut buf = [0u8; 64 * 1024];
        loop {
            let n = reader.read(&mut buf)?;
            if n == 0 {
                break;
            }
            h.write(&buf[..n]);
        }
    }
    Ok(h.finish())
}

#[cfg(test)]
mod tests;
