//! Judging one candidate on the two tiers.
//!
//! Judging one candidate on the two tiers (see the module documentation of
//! [`crate::triage::minimize`]): the offline read first, the real client to confirm; keeping,
//! confirming and going back to the last confirmed state.

use std::path::Path;
use std::time::Instant;

use super::outcome::rows;
use super::{model, Phase, Removal, Run, Spent, Stop, Trial, TrialVerdict};
use crate::chain::one_line;
use crate::triage::signature::Signature;

impl Run<'_> {
    /// Judges the removal of `removal` from the best so far: builds the candidate (a fresh copy),
    /// judges it on the tiers and keeps it when they say so. `None` when kept, else why not (a
    /// candidate already rejected, or one with no row left in the lineage, is not judged again).
    pub(super) fn judge(
        &mut self,
        phase: Phase,
        removal: Removal,
        what: String,
    ) -> Result<Option<String>, Spent> {
        let key = self.removed.then(&removal);
        if let Some(why) = self.rejected.get(&key) {
            return Ok(Some(why.clone()));
        }
        // A candidate with no row left in the lineage resumes nothing: not worth a trial.
        if self.lineage_rows.iter().all(|id| key.rows.contains(id)) {
            return Ok(Some(
                "not tried: no row of the lineage would be left".into(),
            ));
        }
        self.check_limits()?;
        let (verdict, runs, rows_after, offline) = self.try_candidate(&removal);
        self.record(phase, what, rows_after, offline, runs, verdict.clone());
        match verdict {
            TrialVerdict::Kept | TrialVerdict::KeptOffline => {
                self.accept(removal, rows_after, verdict == TrialVerdict::Kept)?;
                Ok(None)
            }
            other => {
                if matches!(other, TrialVerdict::Refuted(_)) {
                    self.revert()?;
                }
                let why = other.text();
                self.rejected.insert(key, why.clone());
                Ok(Some(why))
            }
        }
    }

    /// `Err(Spent)` (and the reason kept) when the trial budget or the time is spent.
    fn check_limits(&mut self) -> Result<(), Spent> {
        let judged = self
            .trials
            .iter()
            .filter(|t| t.phase != Phase::Confirm)
            .count();
        if judged >= self.max_trials {
            self.stop = Some(Stop::Budget);
            return Err(Spent);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.stop = Some(Stop::Timeout);
            return Err(Spent);
        }
        Ok(())
    }

    /// Adds a trial and prints its progress line.
    fn record(
        &mut self,
        phase: Phase,
        what: String,
        rows_after: usize,
        offline: bool,
        runs: usize,
        verdict: TrialVerdict,
    ) {
        let trial = Trial {
            number: self.trials.len() + 1,
            phase,
            removed: what,
            rows_before: self.rows_now,
            rows_after,
            offline,
            runs,
            verdict,
        };
        let budget = if phase == Phase::Confirm {
            String::new()
        } else {
            format!("/{}", self.max_trials)
        };
        let tier = match (offline, runs) {
            (true, 0) => "offline",
            (true, _) => "offline+pty",
            (false, _) => "pty",
        };
        (self.progress)(&format!(
            "minimize: trial {}{budget} [{:.0} s, {tier}]: {} → {} ({}{}): {}",
            trial.number,
            self.started.elapsed().as_secs_f64(),
            rows(trial.rows_before),
            rows(trial.rows_after),
            if phase == Phase::Texts || phase == Phase::Confirm {
                ""
            } else {
                "without "
            },
            trial.removed,
            trial.verdict.text()
        ));
        self.trials.push(trial);
        self.runs += runs;
    }

    /// Builds the candidate and judges it: its verdict, the real client's runs, its rows, and
    /// whether the offline tier judged it.
    fn try_candidate(&mut self, removal: &Removal) -> (TrialVerdict, usize, usize, bool) {
        if let Err(e) = model::build(&self.best, &self.candidate, removal) {
            return (TrialVerdict::Failed(one_line(&e)), 0, self.rows_now, false);
        }
        let rows_after = model::count_rows(&self.candidate).unwrap_or(self.rows_now);
        let (Some(tier), Some(original)) = (self.offline.as_mut(), &self.original_offline) else {
            let candidate = self.candidate.clone();
            let (verdict, runs) = self.on_pty(&candidate);
            return (verdict, runs, rows_after, false);
        };
        let read = Instant::now();
        let signature = tier.signature(&self.candidate, &self.session);
        self.offline_secs += read.elapsed().as_secs_f64();
        let verdict = match signature {
            Err(e) => TrialVerdict::Failed(format!("offline: {}", one_line(&e))),
            Ok(s) if !self.matching.matches(original, &s) => {
                TrialVerdict::Other(format!("offline: {s}"))
            }
            Ok(_) if self.unconfirmed + 1 < self.confirm_every => TrialVerdict::KeptOffline,
            Ok(_) => {
                let candidate = self.candidate.clone();
                let (verdict, runs) = self.on_pty(&candidate);
                return (refuted(verdict), runs, rows_after, true);
            }
        };
        (verdict, 0, rows_after, true)
    }

    /// Two runs of the real client on `db` (each on a fresh copy in a fresh home): kept when
    /// both show the signature. The verdict and the runs taken.
    fn on_pty(&mut self, db: &Path) -> (TrialVerdict, usize) {
        let out = self.dir.join("trials");
        let mut signatures: Vec<Signature> = Vec::new();
        for _ in 0..2 {
            match self.oracle.judge(db, &self.session, &out) {
                Ok(result) => {
                    let s = Signature::of(&result);
                    let same = self.matching.matches(&self.original, &s);
                    signatures.push(s);
                    if !same {
                        break;
                    }
                }
                Err(e) => return (TrialVerdict::Failed(one_line(&e)), signatures.len() + 1),
            }
        }
        let runs = signatures.len();
        let verdict = match (signatures.len(), signatures.last()) {
            (2, Some(s)) if self.matching.matches(&self.original, s) => TrialVerdict::Kept,
            (2, Some(s)) => TrialVerdict::Disagreed(s.to_string()),
            (_, Some(s)) => TrialVerdict::Other(s.to_string()),
            (_, None) => TrialVerdict::Failed("no run".into()),
        };
        (verdict, runs)
    }

    /// Makes the candidate the best; `confirmed` when the real client confirmed it.
    fn accept(
        &mut self,
        removal: Removal,
        rows_after: usize,
        confirmed: bool,
    ) -> Result<(), Spent> {
        self.removed = self.removed.then(&removal);
        self.rows_now = rows_after;
        model::remove_database(&self.best);
        if std::fs::rename(&self.candidate, &self.best).is_err() {
            return self.give_up();
        }
        if confirmed {
            self.mark_confirmed()
        } else {
            self.unconfirmed += 1;
            Ok(())
        }
    }

    /// The best is confirmed: it becomes the confirmed state and `DIR/minimized.db`.
    fn mark_confirmed(&mut self) -> Result<(), Spent> {
        let (best, confirmed) = (self.best.clone(), self.confirmed.clone());
        self.overwrite(&best, &confirmed)?;
        self.confirmed_removed = self.removed.clone();
        self.confirmed_rows = self.rows_now;
        self.unconfirmed = 0;
        if self.publish().is_err() {
            return self.give_up();
        }
        Ok(())
    }

    /// Back to the last confirmed state; from now on every step kept offline is confirmed.
    fn revert(&mut self) -> Result<(), Spent> {
        let dropped = self.unconfirmed;
        let (best, confirmed) = (self.best.clone(), self.confirmed.clone());
        self.overwrite(&confirmed, &best)?;
        self.removed = self.confirmed_removed.clone();
        self.rows_now = self.confirmed_rows;
        self.unconfirmed = 0;
        self.confirm_every = 1;
        self.reverted |= dropped > 0;
        (self.progress)(&format!(
            "minimize: back to the last confirmed state ({}; {dropped} step(s) kept offline \
             dropped); from now on the real client confirms every step",
            rows(self.rows_now)
        ));
        Ok(())
    }

    /// Confirms the last candidate (the best, kept offline) on the real client; true when
    /// confirmed, false when refuted (the run went back to the last confirmed state). Not counted
    /// against `--max-trials`.
    pub(super) fn confirm_last(&mut self) -> bool {
        let best = self.best.clone();
        let (verdict, runs) = self.on_pty(&best);
        let verdict = refuted(verdict);
        let what = format!(
            "the last candidate: {} step(s) kept offline since the last confirmation",
            self.unconfirmed
        );
        self.record(
            Phase::Confirm,
            what,
            self.rows_now,
            false,
            runs,
            verdict.clone(),
        );
        if verdict == TrialVerdict::Kept {
            return self.mark_confirmed().is_ok();
        }
        let _ = self.revert();
        false
    }

    /// Replaces the database `to` with a copy of `from` (both in the work directory).
    fn overwrite(&mut self, from: &Path, to: &Path) -> Result<(), Spent> {
        model::remove_database(to);
        match crate::store::copy_database(from, to) {
            Ok(_) => Ok(()),
            Err(_) => self.give_up(),
        }
    }

    /// Stops the minimization: a file of the work directory could not be written.
    fn give_up(&mut self) -> Result<(), Spent> {
        (self.progress)("minimize: could not keep the candidate; stopping");
        self.stop = Some(Stop::Budget);
        Err(Spent)
    }
}

/// A real client's verdict on a candidate the offline tier kept: any rejection refutes it.
fn refuted(verdict: TrialVerdict) -> TrialVerdict {
    match verdict {
        TrialVerdict::Other(s) | TrialVerdict::Disagreed(s) => TrialVerdict::Refuted(s),
        TrialVerdict::Failed(e) => TrialVerdict::Refuted(format!("could not run: {e}")),
        v => v,
    }
}
