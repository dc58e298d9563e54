//! Bisection over published client versions.
//!
//! `bisect`: find the first published client version that misrenders, or every version where the
//! verdict's signature changes — on the real client, one probe a version.
//!
//! A probe runs the scenario (or resumes the saved database through `repro`) on one release and
//! marks it as `git bisect run` would: **good**, **bad**, or **skip** when the release cannot run
//! it (it does not install, refuses a step, crashes, or a step times out — the reason is kept). A
//! probe that ends in a skip is retried once before it is called. What "bad" means is [`Bad`]: by
//! default a check with words rendered more than once.
//!
//! - [`By::Verdict`]: the endpoints are confirmed first — the oldest release must be good and the
//!   newest bad, else the bisection stops with the reason (as `cargo-bisect-rustc` and mozregression
//!   do); then binary search, stepping around skipped releases (nearest to the middle first). The
//!   answer is the last good and first bad release, and the skipped releases between them if any
//!   (then the first bad one is among those).
//! - [`By::Signature`]: every release is probed, oldest first, and each place where the
//!   [`Signature`] differs from the previous release that ran is a change point.

use std::fmt;

use super::signature::Signature;
use super::versions::Release;
use crate::oracle::Findings;
use crate::runner::ScenarioResult;

/// What the bisection looks for (`--by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub(crate) enum By {
    /// The first release whose verdict is bad.
    Verdict,
    /// Every release where the verdict's signature changes (every release is probed).
    Signature,
}

impl By {
    /// Its name on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            By::Verdict => "verdict",
            By::Signature => "signature",
        }
    }
}

/// Which findings make a verdict bad (`--bad`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Bad {
    /// Words rendered more than once ("shows a reply twice").
    Repeats,
    /// Messages missing.
    Missing,
    /// Internal text (summaries, handoff markers) shown.
    Internal,
    /// Messages out of order.
    OutOfOrder,
    /// Messages the user took back shown.
    TakenBack,
    /// Any finding.
    Any,
}

impl Bad {
    /// True when `findings` make a verdict bad.
    pub(crate) fn holds(self, f: &Findings) -> bool {
        match self {
            Bad::Repeats => f.words_rendered_more_than_once > 0,
            Bad::Missing => f.missing_messages > 0,
            Bad::Internal => f.internal_text_shown > 0,
            Bad::OutOfOrder => f.out_of_order > 0,
            Bad::TakenBack => f.taken_back_shown > 0,
            Bad::Any => *f != Findings::default(),
        }
    }
}

/// A probe's mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Mark {
    /// The verdict is good.
    Good,
    /// The verdict is bad.
    Bad,
    /// The release could not run the probe.
    Skip,
}

impl fmt::Display for Mark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mark::Good => "good",
            Mark::Bad => "bad",
            Mark::Skip => "skip",
        })
    }
}

/// What one probe of one release found.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Probe {
    /// The release probed.
    pub(crate) release: Release,
    /// Good, bad or skip.
    pub(crate) mark: Mark,
    /// Why a probe was skipped (the harness's error, first line).
    pub(crate) reason: Option<String>,
    /// The findings of each check reached (checkpoint, numbers).
    pub(crate) checks: Vec<(String, Findings)>,
    /// The verdict's signature (`None` when the release could not be started at all).
    pub(crate) signature: Option<Signature>,
    /// Runs it took (a skip is retried once).
    pub(crate) tries: usize,
    /// Wall time of the last run, seconds.
    pub(crate) secs: f64,
    /// Where the last run's artefacts are.
    pub(crate) kept: Option<std::path::PathBuf>,
}

impl Probe {
    /// Judges one run of `release`: its result, or the error that kept it from running.
    pub(crate) fn judge(
        release: &Release,
        run: Result<ScenarioResult, crate::runner::Error>,
        bad: Bad,
    ) -> Probe {
        match run {
            Err(reason) => Probe {
                release: release.clone(),
                mark: Mark::Skip,
                reason: Some(first_line(&reason.to_string())),
                checks: Vec::new(),
                signature: None,
                tries: 1,
                secs: 0.0,
                kept: None,
            },
            Ok(result) => {
                let checks: Vec<(String, Findings)> = result
                    .checks
                    .iter()
                    .map(|c| (c.check.at.clone(), c.check.findings))
                    .collect();
                let mark = if result.error.is_some() {
                    Mark::Skip
                } else if checks.iter().any(|(_, f)| bad.holds(f)) {
                    Mark::Bad
                } else {
                    Mark::Good
                };
                Probe {
                    release: release.clone(),
                    mark,
                    reason: result.error.as_deref().map(first_line),
                    signature: Some(Signature::of(&result)),
                    checks,
                    tries: 1,
                    secs: result.wall_secs,
                    kept: Some(result.kept.clone()),
                }
            }
        }
    }
}

impl Probe {
    /// One line for a progress display: the release, its mark, each check's numbers, the time
    /// and why it was skipped.
    pub(crate) fn summary(&self) -> String {
        let numbers: Vec<String> = self.checks.iter().map(|(_, f)| numbers(f)).collect();
        format!(
            "{} {} ({}) in {:.1} s{}",
            self.release,
            self.mark,
            numbers.join(", "),
            self.secs,
            self.reason
                .as_ref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        )
    }
}

/// A check's numbers as `repeated/missing/internal/out-of-order`.
fn numbers(f: &Findings) -> String {
    format!(
        "{}/{}/{}/{}",
        f.words_rendered_more_than_once, f.missing_messages, f.internal_text_shown, f.out_of_order
    )
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_owned()
}

/// A place where the signature changes.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct ChangePoint {
    /// The last release before the change that ran.
    pub(crate) before: Release,
    /// The first release after it that ran.
    pub(crate) after: Release,
    /// The releases between them that were skipped (the change is at one of them or at `after`).
    pub(crate) skipped_between: Vec<Release>,
    /// The signature before.
    pub(crate) from: String,
    /// The signature after.
    pub(crate) to: String,
}

/// The answer of a bisection.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Answer {
    /// `--by verdict`: the last good and the first bad release.
    FirstBad {
        /// The newest good release.
        last_good: Release,
        /// The oldest bad release.
        first_bad: Release,
        /// Skipped releases between them: the first bad release is one of these or `first_bad`.
        skipped_between: Vec<Release>,
    },
    /// `--by signature`: every change point, oldest first (none: the same everywhere).
    ChangePoints(Vec<ChangePoint>),
    /// The bisection could not answer (why).
    Stopped(String),
}

/// A bisection: its probes (in line order) and its answer.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Outcome {
    /// What was looked for.
    pub(crate) by: By,
    /// What counts as bad.
    pub(crate) bad: Bad,
    /// Every release considered, oldest first.
    pub(crate) versions: Vec<Release>,
    /// The probes run, in line order.
    pub(crate) probes: Vec<Probe>,
    /// The answer.
    pub(crate) answer: Answer,
}

/// Runs a bisection over `versions` (oldest first). `probe` runs one release once and judges it
/// ([`Probe::judge`]); a skip is retried once.
pub(crate) fn bisect(
    versions: &[Release],
    by: By,
    bad: Bad,
    probe: &mut dyn FnMut(&Release) -> Probe,
) -> Outcome {
    let mut probes: Vec<Option<Probe>> = vec![None; versions.len()];
    let mut run = |i: usize, probes: &mut Vec<Option<Probe>>| -> Mark {
        if let Some(p) = &probes[i] {
            return p.mark;
        }
        let mut p = probe(&versions[i]);
        if p.mark == Mark::Skip {
            let again = probe(&versions[i]);
            p = Probe { tries: 2, ..again };
        }
        let mark = p.mark;
        probes[i] = Some(p);
        mark
    };
    let answer = if versions.len() < 2 {
        Answer::Stopped(format!(
            "a bisection needs at least two releases; {} given",
            versions.len()
        ))
    } else {
        match by {
            By::Verdict => first_bad(
                versions,
                &mut |i, p: &mut Vec<Option<Probe>>| run(i, p),
                &mut probes,
            ),
            By::Signature => {
                for i in 0..versions.len() {
                    run(i, &mut probes);
                }
                Answer::ChangePoints(change_points(versions, &probes))
            }
        }
    };
    Outcome {
        by,
        bad,
        versions: versions.to_vec(),
        probes: probes.into_iter().flatten().collect(),
        answer,
    }
}

type Run<'a> = dyn FnMut(usize, &mut Vec<Option<Probe>>) -> Mark + 'a;

fn first_bad(versions: &[Release], run: &mut Run<'_>, probes: &mut Vec<Option<Probe>>) -> Answer {
    let (oldest, newest) = (0, versions.len() - 1);
    let endpoint =
        |i: usize, want: Mark, probes: &Vec<Option<Probe>>| -> Option<String> {
            let p = probes[i].as_ref()?;
            (p.mark != want).then(|| match p.mark {
                Mark::Skip => format!(
                    "{} cannot run the probe ({}); pick another endpoint",
                    p.release,
                    p.reason.as_deref().unwrap_or("no reason given")
                ),
                other => {
                    format!(
                "the {} release {} is already {other}: nothing to bisect between the endpoints",
                if want == Mark::Good { "oldest" } else { "newest" },
                p.release
            )
                }
            })
        };
    run(oldest, probes);
    if let Some(why) = endpoint(oldest, Mark::Good, probes) {
        return Answer::Stopped(why);
    }
    run(newest, probes);
    if let Some(why) = endpoint(newest, Mark::Bad, probes) {
        return Answer::Stopped(why);
    }
    let (mut good, mut bad) = (oldest, newest);
    while let Some(i) = next_probe(good, bad, probes) {
        match run(i, probes) {
            Mark::Good => good = i,
            Mark::Bad => bad = i,
            Mark::Skip => {}
        }
    }
    Answer::FirstBad {
        last_good: versions[good].clone(),
        first_bad: versions[bad].clone(),
        skipped_between: versions[good + 1..bad].to_vec(),
    }
}

/// The untested release between `good` and `bad` nearest to the middle (`None`: all tested).
fn next_probe(good: usize, bad: usize, probes: &[Option<Probe>]) -> Option<usize> {
    let mid = (good + bad) / 2;
    let mut candidates: Vec<usize> = (good + 1..bad).filter(|&i| probes[i].is_none()).collect();
    candidates.sort_by_key(|&i| (i.abs_diff(mid), i));
    candidates.first().copied()
}

fn change_points(versions: &[Release], probes: &[Option<Probe>]) -> Vec<ChangePoint> {
    let mut points = Vec::new();
    let mut last: Option<(usize, &Signature)> = None;
    for (i, p) in probes.iter().enumerate() {
        let Some(p) = p else { continue };
        let Some(sig) = p.signature.as_ref().filter(|_| p.mark != Mark::Skip) else {
            continue;
        };
        if let Some((j, before)) = last {
            if before != sig {
                points.push(ChangePoint {
                    before: versions[j].clone(),
                    after: versions[i].clone(),
                    skipped_between: versions[j + 1..i].to_vec(),
                    from: before.to_string(),
                    to: sig.to_string(),
                });
            }
        }
        last = Some((i, sig));
    }
    points
}

impl Outcome {
    /// The answer in one or two sentences.
    pub(crate) fn answer_text(&self) -> String {
        match &self.answer {
            Answer::FirstBad {
                last_good,
                first_bad,
                skipped_between,
            } if skipped_between.is_empty() => format!(
                "first bad release: {first_bad} (last good: {last_good}); bad = {}",
                self.bad_text()
            ),
            Answer::FirstBad {
                last_good,
                first_bad,
                skipped_between,
            } => format!(
                "first bad release: one of {}, {first_bad} (last good: {last_good}; the others could not run the probe); bad = {}",
                list(skipped_between),
                self.bad_text()
            ),
            Answer::ChangePoints(points) if points.is_empty() => {
                "no change: every release that ran shows the same signature".to_owned()
            }
            Answer::ChangePoints(points) => {
                let mut text = format!("{} change points:", points.len());
                for p in points {
                    text.push_str(&format!("\n- {} → {}", p.before, p.after));
                    if !p.skipped_between.is_empty() {
                        text.push_str(&format!(" (skipped between: {})", list(&p.skipped_between)));
                    }
                    text.push_str(&format!(": {} ⇒ {}", p.from, p.to));
                }
                text
            }
            Answer::Stopped(why) => format!("no answer: {why}"),
        }
    }

    fn bad_text(&self) -> &'static str {
        match self.bad {
            Bad::Repeats => "words rendered more than once",
            Bad::Missing => "messages missing",
            Bad::Internal => "internal text shown",
            Bad::OutOfOrder => "messages out of order",
            Bad::TakenBack => "messages the user took back shown",
            Bad::Any => "any finding",
        }
    }

    /// A Markdown table of the probes: release, mark, each check's numbers (words rendered more
    /// than once / messages missing / internal words shown / out of order), seconds, and the
    /// signature or the reason of a skip.
    pub(crate) fn table(&self) -> String {
        let mut names: Vec<&str> = Vec::new();
        for p in &self.probes {
            for (at, _) in &p.checks {
                if !names.contains(&at.as_str()) {
                    names.push(at);
                }
            }
        }
        let mut out = String::from("| release | mark |");
        for n in &names {
            out.push_str(&format!(" {n} |"));
        }
        out.push_str(" secs | signature |\n|---|---|");
        out.push_str(&"---:|".repeat(names.len()));
        out.push_str("---:|---|\n");
        for p in &self.probes {
            out.push_str(&format!("| {} | {} |", p.release, p.mark));
            for n in &names {
                match p.checks.iter().find(|(at, _)| at == n) {
                    Some((_, f)) => out.push_str(&format!(" {} |", numbers(f))),
                    None => out.push_str(" – |"),
                }
            }
            let what = match (&p.reason, &p.signature) {
                (Some(r), _) => format!("skipped: {r}"),
                (None, Some(s)) => s.to_string(),
                (None, None) => String::new(),
            };
            out.push_str(&format!(
                " {:.1} | {} |\n",
                p.secs,
                what.replace('|', "\\|")
            ));
        }
        out
    }
}

/// `REPORT.md` of a bisection, ready to paste into an issue: what was probed and how, the
/// answer, the table of probes, and the commands that rerun the bisection and each probe.
pub(crate) fn report_md(
    outcome: &Outcome,
    subject: &str,
    rerun: &str,
    rerun_probe: &dyn Fn(&Release) -> String,
) -> String {
    let mut md = format!("# Bisection of {subject}\n\n");
    let (first, last) = (outcome.versions.first(), outcome.versions.last());
    if let (Some(first), Some(last)) = (first, last) {
        md.push_str(&format!(
            "{} releases from {first} to {last}, by {}; {} probed.\n\n",
            outcome.versions.len(),
            match outcome.by {
                By::Verdict =>
                    "verdict (bad = the probe shows ".to_owned() + outcome.bad_text() + ")",
                By::Signature => "signature".to_owned(),
            },
            outcome.probes.len()
        ));
    }
    match outcome.answer {
        // A list of change points is a Markdown list, not one bold line.
        Answer::ChangePoints(_) => md.push_str(&format!("{}\n\n", outcome.answer_text())),
        _ => md.push_str(&format!("**{}**\n\n", outcome.answer_text())),
    }
    md.push_str("## Probes\n\nEach check: words rendered more than once / messages missing / words of internal text shown / messages out of order.\n\n");
    md.push_str(&outcome.table());
    md.push_str(&format!(
        "\n## Reproduce\n\nThe whole bisection:\n\n```sh\n{rerun}\n```\n\nOne probe:\n\n```sh\n"
    ));
    for p in &outcome.probes {
        md.push_str(&rerun_probe(&p.release));
        md.push('\n');
    }
    md.push_str("```\n");
    md
}

fn list(releases: &[Release]) -> String {
    releases
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
