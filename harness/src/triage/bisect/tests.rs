//! The bisection algorithm against a test double of the probe.
//!
//! The bisection algorithm against a test double of the probe (no client runs here; the real
//! probes are in `tests/suite/cli.rs`).

use super::*;
use crate::triage::signature::{CheckSignature, Kind};
use std::collections::BTreeSet;

fn line(n: usize) -> Vec<Release> {
    (0..n)
        .map(|i| Release {
            package: "hermes-agent".to_owned(),
            version: format!("0.{i}.0"),
        })
        .collect()
}

/// A test double of a probe: release `i` is judged `marks[i]`, with a signature naming `kinds[i]`.
struct FakeProbe {
    marks: Vec<Mark>,
    kinds: Vec<Vec<Kind>>,
    calls: Vec<usize>,
}

impl FakeProbe {
    fn new(marks: &str) -> FakeProbe {
        let marks: Vec<Mark> = marks
            .chars()
            .map(|c| match c {
                'g' => Mark::Good,
                'b' => Mark::Bad,
                _ => Mark::Skip,
            })
            .collect();
        let kinds = marks
            .iter()
            .map(|m| {
                if *m == Mark::Bad {
                    vec![Kind::Repeats]
                } else {
                    vec![]
                }
            })
            .collect();
        FakeProbe {
            marks,
            kinds,
            calls: Vec::new(),
        }
    }

    fn probe(&mut self, r: &Release) -> Probe {
        let i: usize = r.version[2..r.version.len() - 2].parse().unwrap();
        self.calls.push(i);
        Probe {
            release: r.clone(),
            mark: self.marks[i],
            reason: (self.marks[i] == Mark::Skip).then(|| "timed out".to_owned()),
            checks: Vec::new(),
            signature: Some(Signature {
                checks: vec![CheckSignature {
                    at: "after --resume".to_owned(),
                    kinds: self.kinds[i].iter().copied().collect(),
                    causes: BTreeSet::new(),
                    repeated: BTreeSet::new(),
                }],
                stopped: self.marks[i] == Mark::Skip,
            }),
            tries: 1,
            secs: 0.0,
            kept: None,
        }
    }
}

fn run(marks: &str, by: By) -> (Outcome, Vec<usize>) {
    let mut fake = FakeProbe::new(marks);
    let versions = line(marks.len());
    let outcome = bisect(&versions, by, Bad::Repeats, &mut |r| fake.probe(r));
    (outcome, fake.calls)
}

fn first_bad_of(outcome: &Outcome) -> (String, String, usize) {
    match &outcome.answer {
        Answer::FirstBad {
            last_good,
            first_bad,
            skipped_between,
        } => (
            last_good.version.clone(),
            first_bad.version.clone(),
            skipped_between.len(),
        ),
        other => panic!("no first bad release: {other:?}"),
    }
}

#[test]
fn the_first_bad_release_is_found_in_logarithmic_probes() {
    let (outcome, calls) = run("gggggggggggbbbbbbbbbbb", By::Verdict);
    assert_eq!(
        first_bad_of(&outcome),
        ("0.10.0".into(), "0.11.0".into(), 0)
    );
    // 2 endpoints + ⌈log2 20⌉ = 5 probes between them.
    assert!(calls.len() <= 7, "{calls:?}");
    assert_eq!(&calls[..2], &[0, 21], "the endpoints are confirmed first");
    let sorted: Vec<String> = outcome
        .probes
        .iter()
        .map(|p| p.release.version.clone())
        .collect();
    let mut again = sorted.clone();
    again.sort_by(|a, b| crate::triage::versions::compare_versions(a, b));
    assert_eq!(sorted, again, "probes are listed in line order");
}

#[test]
fn a_skipped_release_is_retried_once_then_stepped_around() {
    let (outcome, calls) = run("gggsgbbb", By::Verdict);
    assert_eq!(first_bad_of(&outcome), ("0.4.0".into(), "0.5.0".into(), 0));
    assert_eq!(calls.iter().filter(|&&i| i == 3).count(), 2, "{calls:?}");
    let skipped = outcome
        .probes
        .iter()
        .find(|p| p.mark == Mark::Skip)
        .unwrap();
    assert_eq!(
        (skipped.tries, skipped.reason.as_deref()),
        (2, Some("timed out"))
    );
}

#[test]
fn skips_next_to_the_change_leave_the_answer_open_among_them() {
    let (outcome, _) = run("ggsssbb", By::Verdict);
    assert_eq!(first_bad_of(&outcome), ("0.1.0".into(), "0.5.0".into(), 3));
}

#[test]
fn endpoints_that_do_not_hold_stop_with_the_reason() {
    let (outcome, calls) = run("bbbb", By::Verdict);
    let Answer::Stopped(why) = &outcome.answer else {
        panic!("{:?}", outcome.answer)
    };
    assert_eq!(
        why,
        "the oldest release hermes-agent==0.0.0 is already bad: nothing to bisect between the endpoints"
    );
    assert_eq!(calls, [0]);
    let (outcome, _) = run("gggg", By::Verdict);
    assert!(
        matches!(&outcome.answer, Answer::Stopped(w) if w.contains("newest release hermes-agent==0.3.0 is already good"))
    );
    let (outcome, _) = run("sgb", By::Verdict);
    assert!(
        matches!(&outcome.answer, Answer::Stopped(w) if w.contains("hermes-agent==0.0.0 cannot run the probe (timed out)"))
    );
    let (outcome, _) = run("g", By::Verdict);
    assert!(matches!(&outcome.answer, Answer::Stopped(w) if w.contains("at least two releases")));
}

#[test]
fn every_signature_change_is_a_change_point_and_skips_are_named() {
    let (outcome, calls) = run("ggbbsgbb", By::Signature);
    assert_eq!(calls.len(), 9, "every release once, the skip twice");
    let Answer::ChangePoints(points) = &outcome.answer else {
        panic!("{:?}", outcome.answer)
    };
    let points: Vec<(String, String, usize, String)> = points
        .iter()
        .map(|p| {
            (
                p.before.version.clone(),
                p.after.version.clone(),
                p.skipped_between.len(),
                p.to.clone(),
            )
        })
        .collect();
    assert_eq!(
        points,
        [
            (
                "0.1.0".into(),
                "0.2.0".into(),
                0,
                "after --resume: repeats".into()
            ),
            (
                "0.3.0".into(),
                "0.5.0".into(),
                1,
                "after --resume: clean".into()
            ),
            (
                "0.5.0".into(),
                "0.6.0".into(),
                0,
                "after --resume: repeats".into()
            ),
        ]
    );
}
