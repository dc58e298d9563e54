//! Minimization of a user's `state.db`.
//!
//! `minimize STATE_DB`: shrink a copy of a user's database to the fewest rows (and
//! sessions), and the shortest texts, that still misrender *the same way* in the real client.
//!
//! **The same way.** The oracle of a candidate is [`crate::runner::repro()`] on it — the real
//! client, resumed through every display path — and a candidate is interesting only when the
//! [`Signature`] of its verdict equals the original's ([`Matching::Same`]; `--signature
//! any-repeat` loosens that to "some check shows words rendered more than once").
//!
//! **Two tiers.** Candidates are judged first by the fast offline tier ([`offline`]: the client's
//! own display read, `get_resume_conversations`, through one long-lived worker, on a fresh copy;
//! its rows judged by the same oracle), whose signature is compared with the *offline* signature
//! of the original; a candidate it rejects is rejected. A candidate it keeps is kept
//! provisionally; the real client in the PTY confirms — two runs, each on a fresh copy in a fresh
//! home, both showing the original's signature — every [`CONFIRM_EVERY`]th step kept offline and
//! the last candidate. When the real client disagrees, the candidate is rejected and the run goes
//! back to the last confirmed state (the steps kept offline since are dropped); from then on every
//! step is confirmed (the offline tier was wrong once on this database). Without an offline tier
//! (the worker could not start, or the original's offline signature shows no failure: the tier
//! cannot tell candidates apart) every candidate runs the real client twice. Only confirmed
//! states are ever written to `DIR/minimized.db`.
//!
//! **Units.** Removed in phases, each by delta debugging ([`ddmin()`]: halves, then quarters, …
//! then single units): (1) whole sessions outside the resumed session's lineage (never one a kept
//! session names as `parent_session_id`; a removed session takes its children), (2) the lineage's
//! exchanges (a user row with the rows up to the next one), (3) single rows; then (4) the texts of
//! the rows kept are halved until a halving changes the signature ([`texts`]: a carried reply and
//! its carrier's copy together). A summary carrier stays with the row it carries (and every row
//! sharing its `message_uid`), a tool result with the row that called it ([`model::Tie`]).
//! Candidates are fresh copies of the current best with rows deleted and texts replaced by
//! rusqlite (`sessions.message_count` follows); the user's file is only read, and its content is
//! checked unchanged at the end.
//!
//! **Bounded.** `--max-trials` (a trial is one candidate judged: an offline read and/or one or two
//! client runs; the last candidate's confirmation is not counted against it) and `--timeout` (the
//! whole minimization: on expiry it stops with the best confirmed database, unconfirmed steps
//! dropped, and says so). Each trial prints one progress line on stderr (trial number of the
//! budget, time spent, rows). SIGINT/SIGTERM: the harness's interrupt handler kills the clients and
//! the offline worker (both registered process groups); `DIR/minimized.db` holds the best
//! confirmed state. At the end: `DIR/minimized.db` (vacuumed: removed text does not survive in
//! free pages), one more verdict of it, `DIR/REPORT.md` ([`report`]) and a `record`-style fixture
//! ([`fixture`]).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::client::Ui;
use crate::runner::{self, ScenarioResult};
use crate::store::{Store, StoreError};
use crate::terminal::Size;

pub(crate) mod ddmin;
pub(crate) mod fixture;
pub(crate) mod model;
pub(crate) mod offline;
pub(crate) mod outcome;
pub(crate) mod report_md;
pub(crate) mod texts;
mod tiers;

pub(crate) use ddmin::{ddmin, Spent};
pub(crate) use model::{Model, Removal};
pub(crate) use offline::{Offline, Reference};
pub(crate) use outcome::{Outcome, Phase, Trial, TrialVerdict};

use outcome::{describe_rows, describe_sessions, kept_rows};
use texts::TextUnit;

use super::signature::{Kind, Signature};

/// Steps kept offline between two confirmations by the real client.
pub(crate) const CONFIRM_EVERY: usize = 10;

/// The default trial budget (`--max-trials`).
pub(crate) const DEFAULT_MAX_TRIALS: usize = 200;

/// When a candidate fails "the same way" as the original (`--signature`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Matching {
    /// The original's signature, check by check.
    Same,
    /// Any check with words rendered more than once.
    AnyRepeat,
}

impl Matching {
    /// Its name on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Matching::Same => "same",
            Matching::AnyRepeat => "any-repeat",
        }
    }

    /// True when `candidate` fails the way `original` does, as this matching reads it.
    pub(crate) fn matches(self, original: &Signature, candidate: &Signature) -> bool {
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
    pub(crate) fn misrenders(self, original: &Signature) -> bool {
        match self {
            Matching::Same => original.checks.iter().any(|c| !c.is_clean()),
            Matching::AnyRepeat => self.matches(original, original),
        }
    }

    /// What a candidate must show, in words.
    pub(crate) fn describe(self, original: &Signature) -> String {
        match self {
            Matching::Same => format!("the same signature: {original}"),
            Matching::AnyRepeat => {
                "any check with words rendered more than once (`--signature any-repeat`)".into()
            }
        }
    }
}

/// Judges a database: the verdict of resuming `session` of `db` in a client.
pub(crate) trait Oracle {
    /// Runs the client on `db` (never written) with artefacts under `out_root`.
    fn judge(
        &mut self,
        db: &Path,
        session: &str,
        out_root: &Path,
    ) -> Result<ScenarioResult, runner::Error>;

    /// What to add to `repro DB` to run it as this oracle does (e.g. ` --client …`).
    fn repro_args(&self) -> String;
}

/// The real client through [`runner::repro()`], as `repro` runs it.
#[derive(Debug, Clone)]
pub(crate) struct RealClient {
    /// The client spec.
    pub(crate) client: String,
    /// The interface.
    pub(crate) ui: Ui,
    /// The terminal.
    pub(crate) size: Size,
    /// The user's `config.yaml`, if given.
    pub(crate) config: Option<PathBuf>,
}

impl Oracle for RealClient {
    fn judge(
        &mut self,
        db: &Path,
        session: &str,
        out_root: &Path,
    ) -> Result<ScenarioResult, runner::Error> {
        runner::repro(
            db,
            Some(session),
            &self.client,
            self.ui,
            self.size,
            out_root,
            self.config.as_deref(),
        )
    }

    fn repro_args(&self) -> String {
        let mut args = String::new();
        if self.client != crate::scenario::DEFAULT_CLIENT {
            args.push_str(&format!(" --client {}", self.client));
        }
        if self.ui != Ui::Classic {
            args.push_str(&format!(" --ui {}", self.ui.name()));
        }
        if self.size != super::probe::default_size(self.ui) {
            args.push_str(&format!(" --size {}", self.size));
        }
        if let Some(c) = &self.config {
            args.push_str(&format!(" --config {}", c.display()));
        }
        args
    }
}

/// How to minimize.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// The session to resume (default: the most recent one with messages).
    pub(crate) session: Option<String>,
    /// What counts as the same failure.
    pub(crate) matching: Matching,
    /// Candidates judged at most.
    pub(crate) max_trials: usize,
    /// The whole minimization's deadline (`--timeout`): on expiry it stops with the best
    /// confirmed database.
    pub(crate) timeout: Option<Duration>,
    /// The output directory (default: `target/hermes-e2e/minimize/<session>`).
    pub(crate) out: Option<PathBuf>,
    /// Where the `record`-style fixture goes (default: `DIR/fixture`).
    pub(crate) fixture: Option<PathBuf>,
}

/// Why a minimization could not be done.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
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
    #[error("the original could not be reproduced")]
    Original(#[source] runner::Error),
    /// The final run of `minimized.db` could not be done (it is kept).
    #[error("the final run of `minimized.db` failed")]
    Final(#[source] runner::Error),
    /// A copy could not be made or edited.
    #[error(transparent)]
    Build(#[from] model::BuildError),
    /// An output file could not be written.
    #[error("cannot write `{}`", path.display())]
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

/// Why the trials stopped before every unit was tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// `--max-trials`.
    Budget,
    /// `--timeout`.
    Timeout,
}

/// The state of one minimization between trials.
struct Run<'a> {
    oracle: &'a mut dyn Oracle,
    offline: Option<&'a mut dyn Offline>,
    progress: &'a mut dyn FnMut(&str),
    matching: Matching,
    original: Signature,
    /// The offline tier's signature of the original (what its candidates are compared with).
    original_offline: Option<Signature>,
    session: String,
    dir: PathBuf,
    /// The best so far (confirmed or kept offline).
    best: PathBuf,
    /// The last state the real client confirmed.
    confirmed: PathBuf,
    candidate: PathBuf,
    max_trials: usize,
    started: Instant,
    deadline: Option<Instant>,
    stop: Option<Stop>,
    trials: Vec<Trial>,
    /// Seconds spent in offline reads.
    offline_secs: f64,
    runs: usize,
    /// Everything removed from the original so far (the best's), and the confirmed state's.
    removed: Removal,
    confirmed_removed: Removal,
    /// Steps kept offline since the last confirmation, and how many trigger one.
    unconfirmed: usize,
    confirm_every: usize,
    /// This round went back to the last confirmed state, dropping steps kept offline.
    reverted: bool,
    /// Removals (cumulative) already judged and rejected: not judged again.
    rejected: HashMap<Removal, String>,
    /// Rows of the lineage in the original.
    lineage_rows: BTreeSet<i64>,
    rows_now: usize,
    confirmed_rows: usize,
    /// Why a row is kept: the last rejected removal of the unit holding it alone.
    notes: HashMap<i64, String>,
}

/// Minimizes `db` (never written): see the module documentation. `offline` is the fast tier (none:
/// every candidate runs `oracle`). Errors before the first trial (a bad file, nothing to
/// minimize) are returned; trial failures are rejections.
pub(crate) fn minimize<'a>(
    db: &Path,
    options: &Options,
    oracle: &'a mut dyn Oracle,
    offline: Option<&'a mut dyn Offline>,
    progress: &'a mut dyn FnMut(&str),
) -> Result<Outcome, Error> {
    let started = Instant::now();
    let fingerprint = fingerprint(db).map_err(|source| Error::Io {
        path: db.to_owned(),
        source,
    })?;
    let session = resolve_session(db, options.session.as_deref())?;
    let (dir, work) = work_dirs(options, &session)?;
    let best = work.join("best.db");
    // A copy of the original, settled (a `-wal` replayed into it) by an edit that removes nothing.
    model::build(db, &best, &Removal::default())?;
    let confirmed = work.join("confirmed.db");
    crate::store::copy_database(&best, &confirmed)?;
    let model = Model::read(&best, &session)?;
    let chars_before = model::contents(&best)
        .map(|c| texts::chars(&c))
        .unwrap_or(0);
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
    let (offline, original_offline, offline_absent) =
        offline_tier(offline, &best, &session, options.matching, progress);
    let mut run = Run {
        oracle,
        offline,
        progress,
        matching: options.matching,
        original,
        original_offline,
        session: session.clone(),
        candidate: work.join("candidate.db"),
        best,
        confirmed,
        dir: dir.clone(),
        max_trials: options.max_trials,
        started,
        deadline: options.timeout.map(|t| started + t),
        stop: None,
        trials: Vec::new(),
        offline_secs: 0.0,
        runs: 1,
        removed: Removal::default(),
        confirmed_removed: Removal::default(),
        unconfirmed: 0,
        confirm_every: CONFIRM_EVERY,
        reverted: false,
        rejected: HashMap::new(),
        lineage_rows: model.rows.iter().map(|r| r.row.id).collect(),
        rows_now: model.total_rows,
        confirmed_rows: model.total_rows,
        notes: HashMap::new(),
    };
    run.publish()?;
    let spent = run.rounds(&model);
    let ends = Ends {
        db,
        fingerprint,
        original: &model,
        spent,
        timeout: options.timeout,
        offline_absent,
        fixture: options.fixture.clone(),
        chars_before,
    };
    finish(run, ends)
}

/// The output directory (`--out`, default `target/hermes-e2e/minimize/<session>`) cleared of a
/// previous run's work, and its fresh `work/` directory.
fn work_dirs(options: &Options, session: &str) -> Result<(PathBuf, PathBuf), Error> {
    let dir = options.out.clone().unwrap_or_else(|| {
        runner::default_out_root()
            .join("minimize")
            .join(runner::slug(session, "session"))
    });
    let work = dir.join("work");
    for stale in ["work", "trials", "original", "repro"] {
        let path = dir.join(stale);
        match std::fs::remove_dir_all(&path) {
            Err(source) if source.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::Io { path, source })
            }
            _ => {}
        }
    }
    model::remove_database(&dir.join("minimized.db"));
    std::fs::create_dir_all(&work).map_err(|source| Error::Io {
        path: work.clone(),
        source,
    })?;
    Ok((dir, work))
}

/// The offline tier, if it can judge: its signature of the original must show the failure.
/// Returns the tier, that signature, and why there is no tier (when there is none).
fn offline_tier<'a>(
    offline: Option<&'a mut dyn Offline>,
    best: &Path,
    session: &str,
    matching: Matching,
    progress: &mut dyn FnMut(&str),
) -> (
    Option<&'a mut dyn Offline>,
    Option<Signature>,
    Option<String>,
) {
    let Some(tier) = offline else {
        return (None, None, Some("no offline tier was given".into()));
    };
    let why = match tier.signature(best, session) {
        Ok(s) if matching.misrenders(&s) => {
            progress(&format!("minimize: offline signature: {s}"));
            return (Some(tier), Some(s), None);
        }
        Ok(s) => format!(
            "the offline read of the original shows no failure ({s}): it cannot tell candidates \
             apart"
        ),
        Err(e) => format!(
            "the offline read of the original failed: {:#}",
            crate::chain::Chain(&e)
        ),
    };
    progress(&format!(
        "minimize: no offline tier ({why}); every candidate runs the real client"
    ));
    (None, None, Some(why))
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
    /// The phases until the last state is confirmed: when the real client refutes a step kept
    /// offline, the run goes back to the last confirmed state and, budget left, runs the phases
    /// again with every step confirmed. True when the budget or the time ran out.
    fn rounds(&mut self, model: &Model) -> bool {
        loop {
            self.reverted = false;
            let spent = self.phases(model);
            if self.stop == Some(Stop::Timeout) {
                return spent;
            }
            let confirmed = self.unconfirmed == 0 || self.confirm_last();
            if spent || (confirmed && !self.reverted) {
                return spent;
            }
        }
    }

    /// The four phases, in order; true when the budget ran out.
    fn phases(&mut self, model: &Model) -> bool {
        // (1) Sessions outside the lineage: all at once first (usually all go), then ddmin.
        let sessions: Vec<String> = model
            .removable_sessions()
            .into_iter()
            .filter(|s| !self.removed.sessions.contains(s))
            .collect();
        if !sessions.is_empty() {
            let mut test = |chunk: &[String]| {
                let removal = Removal {
                    sessions: model.with_descendants(chunk),
                    ..Removal::default()
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
            if self.remove_units(phase, units) {
                return true;
            }
        }
        // (4) Texts.
        self.shorten_texts(model)
    }

    /// Removes what it can of `units` (rows) by ddmin; true when the budget ran out.
    fn remove_units(&mut self, phase: Phase, units: Vec<Vec<i64>>) -> bool {
        let units: Vec<Vec<i64>> = units
            .into_iter()
            .filter(|u| u.iter().any(|id| !self.removed.rows.contains(id)))
            .collect();
        let mut test = |chunk: &[Vec<i64>]| {
            let rows: BTreeSet<i64> = chunk.iter().flatten().copied().collect();
            let what = describe_rows(&rows);
            let removal = Removal {
                rows: rows.clone(),
                ..Removal::default()
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
        ddmin(units, &mut test).1
    }

    /// Halves each text unit of the rows left until a halving is rejected; true when the budget
    /// ran out.
    fn shorten_texts(&mut self, model: &Model) -> bool {
        let Ok(contents) = model::contents(&self.best) else {
            return false;
        };
        let lineage: BTreeSet<i64> = model.rows.iter().map(|r| r.row.id).collect();
        let contents = contents
            .into_iter()
            .filter(|(id, _)| lineage.contains(id))
            .collect();
        for unit in texts::units(model, &contents) {
            if self.shorten(&unit) {
                return true;
            }
        }
        false
    }

    /// Halves `unit` while the halvings are kept; true when the budget ran out.
    fn shorten(&mut self, unit: &TextUnit) -> bool {
        loop {
            let Ok(contents) = model::contents(&self.best) else {
                return false;
            };
            let Some(texts) = texts::shorten(unit, &contents) else {
                return false;
            };
            let removal = Removal {
                texts,
                ..Removal::default()
            };
            match self.judge(Phase::Texts, removal, unit.describe()) {
                Err(Spent) => return true,
                Ok(Some(_)) => return false,
                Ok(None) => {}
            }
        }
    }

    /// Copies the last confirmed state to `DIR/minimized.db` (what an interrupted run leaves).
    fn publish(&self) -> Result<(), Error> {
        let target = self.dir.join("minimized.db");
        model::remove_database(&target);
        crate::store::copy_database(&self.confirmed, &target)?;
        Ok(())
    }
}

/// What [`finish`] needs besides the run.
struct Ends<'a> {
    db: &'a Path,
    fingerprint: u64,
    original: &'a Model,
    spent: bool,
    timeout: Option<Duration>,
    offline_absent: Option<String>,
    fixture: Option<PathBuf>,
    chars_before: usize,
}

/// The final verdict on `minimized.db`, the kept rows, `REPORT.md` and the fixture.
fn finish(mut run: Run<'_>, ends: Ends<'_>) -> Result<Outcome, Error> {
    let minimized = run.dir.join("minimized.db");
    run.publish()?;
    model::vacuum(&minimized)?;
    if run.stop == Some(Stop::Timeout) {
        (run.progress)(&format!(
            "minimize: --timeout ran out: stopping with the best confirmed database ({})",
            outcome::rows(run.confirmed_rows)
        ));
    }
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
    if ends.fingerprint != fingerprint(ends.db).unwrap_or(!ends.fingerprint) {
        return Err(Error::InputChanged {
            db: ends.db.to_owned(),
        });
    }
    let chars = |p: &Path| model::contents(p).map(|c| texts::chars(&c)).unwrap_or(0);
    let _ = std::fs::remove_dir_all(run.dir.join("work"));
    let fixture_dir = ends
        .fixture
        .clone()
        .unwrap_or_else(|| run.dir.join("fixture"));
    let mut outcome = Outcome {
        db: ends.db.to_owned(),
        session: run.session.clone(),
        signature: run.original.clone(),
        matching: run.matching,
        rows_before: ends.original.total_rows,
        rows_after: model.total_rows,
        sessions_before: ends.original.sessions.len(),
        sessions_after: model.sessions.len(),
        trials: std::mem::take(&mut run.trials),
        runs: run.runs,
        max_trials: run.max_trials,
        spent: ends.spent,
        timed_out: run.stop == Some(Stop::Timeout),
        timeout_secs: ends.timeout.map(|t| t.as_secs_f64()),
        offline_signature: run.original_offline.clone(),
        offline_secs: run.offline_secs,
        offline_absent: ends.offline_absent,
        chars_before: ends.chars_before,
        chars_after: chars(&minimized),
        fixture: fixture_dir,
        dir: run.dir.clone(),
        minimized,
        kept,
        final_signature,
        command,
        wall_secs: run.started.elapsed().as_secs_f64(),
        result,
    };
    fixture::write(&outcome, &run.oracle.repro_args())?;
    outcome.wall_secs = run.started.elapsed().as_secs_f64();
    let path = run.dir.join("REPORT.md");
    std::fs::write(&path, report_md::markdown(&outcome))
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
