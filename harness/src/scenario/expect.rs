//! A checkpoint's expectation.
//!
//! The exact findings and causes a `check` step pins ([`Expectation`], re-exported as
//! `scenario::Expectation`), its comparison with a check's findings ([`Expectation::mismatches`])
//! and its raw form as written in a scenario file.
//!
//! Besides the oracle's findings (0 when not named), an expectation may pin the row counts
//! ([`RowCounts`]: `stale_preview_rows`, `prompt_rows`, `max_blank_run`, `questions_not_once`),
//! each only where named — exactly (`prompt_rows = 1`) or as a bound (`max_blank_run = { at_most =
//! 2 }`, [`RowPin`]: upstream's resize test states its row assertions as bounds, and where the
//! client's count moves with where a resize lands a bound is what holds) — and may leave findings that vary with timing out of the comparison:
//! `unpinned`, a list of finding names such as `causes` (they are still reported).
//!
//! The causes of the repeats are compared only where `causes` is written: as a list in screen
//! order (`causes = ["display", "data"]`, one entry per repeat) or as counts
//! (`causes = { display = 11 }`, order not compared). Not written, they are not compared
//! ([`Expectation::causes_unwritten`]; `run --bless` still writes the causes it measured);
//! `causes = []` pins that no repeat has a cause. The same rules hold for a scenario's `expect`,
//! `check --expect FILE` and `check --expect-findings`.
//!
//! A check step's `known_bug = "…"` (beside `expect`, [`Expectation::known_bug`]) says which client
//! defect its numbers pin; when they all drop to zero the check is reported as fixed upstream
//! ([`Expectation::fixed_upstream`]). [`Expectation::correct`] is what `run --expect-correct`
//! compares with instead.

use serde::Deserialize;

use crate::oracle::{Cause, Check, Findings, RowCounts};

/// The oracle's findings by their public names, in [`Findings`] field order.
pub(crate) fn named_findings(f: &Findings) -> [(&'static str, usize); Findings::NAMES.len()] {
    f.named()
}

/// The names `unpinned` accepts: the oracle's findings and `causes`.
const UNPINNABLE: [&str; Findings::NAMES.len() + 1] =
    crate::oracle::joined_names(&[&Findings::NAMES, &["causes"]]);

/// One pinned row count: `N` (exactly) or `{ at_most = N }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowPin {
    /// The count must be exactly this.
    Exactly(usize),
    /// The count must not exceed this.
    AtMost {
        /// The largest count accepted.
        at_most: usize,
    },
}

impl RowPin {
    /// Whether `got` satisfies the pin.
    pub(crate) fn holds(self, got: usize) -> bool {
        match self {
            RowPin::Exactly(n) => got == n,
            RowPin::AtMost { at_most } => got <= at_most,
        }
    }
}

impl<'de> Deserialize<'de> for RowPin {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Pin;
        impl<'de> serde::de::Visitor<'de> for Pin {
            type Value = RowPin;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a row count (`2`) or a bound (`{ at_most = 2 }`)")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<RowPin, E> {
                usize::try_from(n)
                    .map(RowPin::Exactly)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(n), &self))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<RowPin, E> {
                usize::try_from(n)
                    .map(RowPin::Exactly)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(n), &self))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<RowPin, A::Error> {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Bound {
                    at_most: usize,
                }
                let bound =
                    Bound::deserialize(serde::de::value::MapAccessDeserializer::new(&mut map))?;
                Ok(RowPin::AtMost {
                    at_most: bound.at_most,
                })
            }
        }
        d.deserialize_any(Pin)
    }
}

impl std::fmt::Display for RowPin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RowPin::Exactly(n) => write!(f, "{n}"),
            RowPin::AtMost { at_most } => write!(f, "at most {at_most}"),
        }
    }
}

/// Row counts a checkpoint pins: each `None` is not compared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowPins {
    /// Expected [`RowCounts::stale_preview_rows`].
    pub(crate) stale_preview_rows: Option<RowPin>,
    /// Expected [`RowCounts::prompt_rows`].
    pub(crate) prompt_rows: Option<RowPin>,
    /// Expected [`RowCounts::max_blank_run`].
    pub(crate) max_blank_run: Option<RowPin>,
    /// Expected [`RowCounts::questions_not_once`].
    pub(crate) questions_not_once: Option<RowPin>,
}

impl RowPins {
    /// The pins as `(public name, expected)` pairs, in [`RowCounts::named`] order.
    fn named(&self) -> [(&'static str, Option<RowPin>); 4] {
        [
            ("stale_preview_rows", self.stale_preview_rows),
            ("prompt_rows", self.prompt_rows),
            ("max_blank_run", self.max_blank_run),
            ("questions_not_once", self.questions_not_once),
        ]
    }
}

/// Expected findings of a checkpoint; findings not named are expected to be 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expectation {
    /// The numbers expected, by their public names (`words_rendered_more_than_once`, …).
    pub(crate) findings: Findings,
    /// Expected causes of the repeats, in screen order (`display`, `data`, `both`); empty = none.
    /// Compared only when `causes` was written and is not in
    /// [`unpinned`](Expectation::unpinned) ([`Expectation::causes_compared`]).
    pub(crate) causes: Vec<Cause>,
    /// Whether `causes` was written in the compact form, as a count per cause (`causes = {
    /// display = 11 }`): then only how many repeats have each cause is compared, not their
    /// order ([`Expectation::causes_hold`]).
    pub(crate) causes_counted: bool,
    /// `causes` was not written: the causes are not compared (an expectation made in code,
    /// [`Expectation::default`], compares them: no repeat expected).
    pub(crate) causes_unwritten: bool,
    /// Row counts pinned (each only where named).
    pub(crate) rows: RowPins,
    /// Findings (and `causes`) not compared: measured, reported, but varying with timing.
    pub(crate) unpinned: Vec<&'static str>,
    /// The client defect these numbers pin (`known_bug = "…"` beside `expect`), with its
    /// upstream reference where there is one; `None`: the check pins no known defect.
    pub(crate) known_bug: Option<String>,
}

impl Expectation {
    /// Every difference between the expectation and the findings of `found` and the row counts
    /// `rows` (`None`: the check had no terminal history, e.g. an exported file), as
    /// `finding: expected X, got Y` (`causes: expected ["display"], got []`).
    pub(crate) fn mismatches(&self, found: &Check, rows: Option<&RowCounts>) -> Vec<String> {
        let mut out = Vec::new();
        let pairs = named_findings(&self.findings)
            .into_iter()
            .zip(named_findings(&found.findings));
        for ((name, want), (_, got)) in pairs {
            if want != got && !self.unpinned.contains(&name) {
                out.push(format!("{name}: expected {want}, got {got}"));
            }
        }
        let counted: [Option<usize>; 4] = match rows {
            Some(rows) => rows.named().map(|(_, n)| Some(n)),
            None => [None; 4],
        };
        for ((name, want), got) in self.rows.named().into_iter().zip(counted) {
            match (want, got) {
                (Some(want), Some(got)) if !want.holds(got) => {
                    out.push(format!("{name}: expected {want}, got {got}"));
                }
                (Some(want), None) => out.push(format!(
                    "{name}: expected {want}, not counted (no terminal history at this check)"
                )),
                _ => {}
            }
        }
        let causes: Vec<Cause> = found.repeats.iter().map(|r| r.cause).collect();
        if !self.causes_hold(&causes) && self.causes_compared() {
            let (want, got) = if self.causes_counted {
                (counts_text(&self.causes), counts_text(&causes))
            } else {
                let names = |causes: &[Cause]| -> String {
                    format!("{:?}", causes.iter().map(|&c| c.name()).collect::<Vec<_>>())
                };
                (names(&self.causes), names(&causes))
            };
            out.push(format!("causes: expected {want}, got {got}"));
        }
        out
    }

    /// Whether the measured causes `got` (in screen order) are the pinned ones: the same list,
    /// or, for the compact form ([`Expectation::causes_counted`]), as many of each cause.
    pub(crate) fn causes_hold(&self, got: &[Cause]) -> bool {
        if !self.causes_counted {
            return got == self.causes.as_slice();
        }
        let count =
            |causes: &[Cause]| Cause::ALL.map(|c| causes.iter().filter(|&&x| x == c).count());
        count(got) == count(&self.causes)
    }

    /// Whether the causes are compared: written, and not in `unpinned`.
    pub(crate) fn causes_compared(&self) -> bool {
        !self.causes_unwritten && !self.unpinned.contains(&"causes")
    }

    /// Every finding, cause and row count with what was expected and what was found, in the
    /// order of [`Findings`], `causes`, [`RowCounts`]: what `--json` lists under
    /// `comparisons`. A finding or `causes` not compared has `expected: null`; a row count is
    /// listed when pinned or counted.
    pub(crate) fn comparisons(&self, found: &Check, rows: Option<&RowCounts>) -> Vec<Comparison> {
        use serde_json::{json, Value};
        let mut out = Vec::new();
        let pairs = named_findings(&self.findings)
            .into_iter()
            .zip(named_findings(&found.findings));
        for ((name, want), (_, got)) in pairs {
            let compared = !self.unpinned.contains(&name);
            out.push(Comparison {
                name,
                expected: if compared { json!(want) } else { Value::Null },
                got: json!(got),
                held: !compared || want == got,
            });
        }
        let causes: Vec<Cause> = found.repeats.iter().map(|r| r.cause).collect();
        out.push(Comparison {
            name: "causes",
            expected: self.causes_json(),
            got: if self.causes_counted {
                counts_json(&causes)
            } else {
                json!(causes.iter().map(|c| c.name()).collect::<Vec<_>>())
            },
            held: !self.causes_compared() || self.causes_hold(&causes),
        });
        let counted: [Option<usize>; 4] = match rows {
            Some(rows) => rows.named().map(|(_, n)| Some(n)),
            None => [None; 4],
        };
        for ((name, want), got) in self.rows.named().into_iter().zip(counted) {
            if want.is_none() && got.is_none() {
                continue;
            }
            out.push(Comparison {
                name,
                expected: want.map_or(Value::Null, RowPin::json),
                got: got.map_or(Value::Null, |n| json!(n)),
                held: match (want, got) {
                    (Some(want), Some(got)) => want.holds(got),
                    (Some(_), None) => false,
                    (None, _) => true,
                },
            });
        }
        out
    }

    /// The causes and row counts pinned, as a report writes them (`causes = ["display"]`,
    /// `max_blank_run at most 2`).
    pub(crate) fn comparisons_expected(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.causes_compared() {
            out.push(format!("causes = {}", self.causes_json()));
        }
        for (name, pin) in self.rows.named() {
            match pin {
                Some(RowPin::Exactly(n)) => out.push(format!("{name} = {n}")),
                Some(RowPin::AtMost { at_most }) => out.push(format!("{name} at most {at_most}")),
                None => {}
            }
        }
        out
    }

    /// The expected causes as `--json` writes them: `null` when not compared, a list in screen
    /// order, or counts (`{"display": 11}`) when written as counts.
    fn causes_json(&self) -> serde_json::Value {
        if !self.causes_compared() {
            serde_json::Value::Null
        } else if self.causes_counted {
            counts_json(&self.causes)
        } else {
            serde_json::json!(self.causes.iter().map(|c| c.name()).collect::<Vec<_>>())
        }
    }

    /// The [`known_bug`](Expectation::known_bug) when the check's numbers say it is fixed: every
    /// finding pinned non-zero reads 0 in `found`, and nothing else differs — the other compared
    /// findings read 0 as pinned, no repeat has a cause (unless `causes` is unpinned), and each
    /// row pin holds or, an exact non-zero pin, reads 0. `None` when no known bug is named, when
    /// nothing pinned non-zero dropped to 0 (`unpinned` findings do not count), or when the
    /// numbers say anything else (the bug only partly gone, or a new problem beside it).
    pub(crate) fn fixed_upstream(&self, found: &Check, rows: Option<&RowCounts>) -> Option<&str> {
        let bug = self.known_bug.as_deref()?;
        let compared = |name: &str| !self.unpinned.contains(&name);
        let pinned_findings = named_findings(&self.findings)
            .into_iter()
            .filter(|&(name, want)| want > 0 && compared(name))
            .count();
        let findings_zero = named_findings(&found.findings)
            .into_iter()
            .all(|(name, got)| got == 0 || !compared(name));
        let no_causes = found.repeats.is_empty() || !self.causes_compared();
        let counted: [Option<usize>; 4] = match rows {
            Some(rows) => rows.named().map(|(_, n)| Some(n)),
            None => [None; 4],
        };
        let mut rows_dropped = 0;
        let mut rows_fine = true;
        for ((_, want), got) in self.rows.named().into_iter().zip(counted) {
            match (want, got) {
                (None, _) => {}
                (Some(want), Some(got)) if want.holds(got) => {}
                (Some(RowPin::Exactly(_)), Some(0)) => rows_dropped += 1,
                _ => rows_fine = false,
            }
        }
        let dropped = pinned_findings + rows_dropped > 0;
        (dropped && findings_zero && no_causes && rows_fine).then_some(bug)
    }

    /// What `run --expect-correct` compares a check with: a correct display — every finding 0
    /// (`unpinned` ones too: a correct display shows nothing twice at any timing) and no repeat,
    /// so no cause. The row counts keep their pins as bounds: an exact pin `N` becomes `{ at_most
    /// = N }` (each count is a defect's size when it grows — stale previews, prompt rows left in
    /// the history, blank runs, questions not shown once — while its pinned size is the row
    /// layout of the scenario's client, which a correct build may keep or improve on).
    /// [`known_bug`](Expectation::known_bug) is kept, for the report.
    pub(crate) fn correct(&self) -> Expectation {
        let bound = |pin: Option<RowPin>| {
            pin.map(|p| match p {
                RowPin::Exactly(at_most) => RowPin::AtMost { at_most },
                bound => bound,
            })
        };
        Expectation {
            findings: Findings::default(),
            causes: Vec::new(),
            causes_counted: false,
            causes_unwritten: false,
            rows: RowPins {
                stale_preview_rows: bound(self.rows.stale_preview_rows),
                prompt_rows: bound(self.rows.prompt_rows),
                max_blank_run: bound(self.rows.max_blank_run),
                questions_not_once: bound(self.rows.questions_not_once),
            },
            unpinned: Vec::new(),
            known_bug: self.known_bug.clone(),
        }
    }
}

/// An `expect = { … }` table as written; [`RawExpectation::typed`] checks its causes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawExpectation {
    #[serde(default)]
    words_rendered_more_than_once: usize,
    #[serde(default)]
    missing_messages: usize,
    #[serde(default)]
    internal_text_shown: usize,
    #[serde(default)]
    out_of_order: usize,
    #[serde(default)]
    taken_back_shown: usize,
    #[serde(default)]
    code_words_altered: usize,
    #[serde(default)]
    wrong_session: usize,
    #[serde(default)]
    chrome_repeated: usize,
    #[serde(default)]
    stray_text: usize,
    #[serde(default)]
    input_split: usize,
    causes: Option<RawCauses>,
    #[serde(default)]
    unpinned: Vec<String>,
    stale_preview_rows: Option<RowPin>,
    prompt_rows: Option<RowPin>,
    max_blank_run: Option<RowPin>,
    questions_not_once: Option<RowPin>,
}

/// `causes` as written: a list in screen order (`["display", "data"]`) or the compact form, a
/// count per cause (`{ display = 11 }`).
#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "a list of causes in screen order (`[\"display\", \"data\"]`) or a count per cause (`{ display = 11 }`)"
)]
enum RawCauses {
    List(Vec<String>),
    Counts(std::collections::BTreeMap<String, usize>),
}

impl Default for RawCauses {
    fn default() -> RawCauses {
        RawCauses::List(Vec::new())
    }
}

/// One row of `--json`'s `comparisons`: a finding, `causes` or a row count, what was expected
/// (`null`: not compared), what was found (`null`: not counted) and whether it held.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Comparison {
    /// The public name (`words_rendered_more_than_once`, `causes`, `prompt_rows`, …).
    pub(crate) name: &'static str,
    /// What was expected: a number, a bound `{"at_most": N}`, the causes, or `null`.
    pub(crate) expected: serde_json::Value,
    /// What was found: a number, the causes, or `null` (a row count not counted).
    pub(crate) got: serde_json::Value,
    /// Whether the expectation held (always, when not compared).
    pub(crate) held: bool,
}

/// The causes counted by cause, in [`Cause::ALL`] order, zero counts left out.
fn cause_counts(causes: &[Cause]) -> Vec<(Cause, usize)> {
    Cause::ALL
        .into_iter()
        .map(|c| (c, causes.iter().filter(|&&x| x == c).count()))
        .filter(|&(_, n)| n > 0)
        .collect()
}

/// `{display: 11, data: 1}` (`{}` for none).
fn counts_text(causes: &[Cause]) -> String {
    let parts: Vec<String> = cause_counts(causes)
        .into_iter()
        .map(|(c, n)| format!("{} = {n}", c.name()))
        .collect();
    format!("{{ {} }}", parts.join(", "))
}

/// `{"display": 11}` as JSON.
fn counts_json(causes: &[Cause]) -> serde_json::Value {
    serde_json::Value::Object(
        cause_counts(causes)
            .into_iter()
            .map(|(c, n)| (c.name().to_owned(), serde_json::json!(n)))
            .collect(),
    )
}

impl RowPin {
    /// The pin as `--json` writes it: `N` or `{"at_most": N}`.
    fn json(self) -> serde_json::Value {
        match self {
            RowPin::Exactly(n) => serde_json::json!(n),
            RowPin::AtMost { at_most } => serde_json::json!({ "at_most": at_most }),
        }
    }
}

impl serde::Serialize for Expectation {
    /// `{"findings": {…}, "causes": null | [...] | {...}, "rows": {name: pin}, "unpinned": [...],
    /// "known_bug": …}`: what was expected, as written (`causes` `null` when not compared; rows
    /// only where pinned).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let rows: serde_json::Map<String, serde_json::Value> = self
            .rows
            .named()
            .into_iter()
            .filter_map(|(name, pin)| pin.map(|p| (name.to_owned(), p.json())))
            .collect();
        serde_json::json!({
            "findings": self.findings,
            "causes": self.causes_json(),
            "rows": rows,
            "unpinned": self.unpinned,
            "known_bug": self.known_bug,
        })
        .serialize(s)
    }
}

/// Why an `expect` table is not an expectation.
#[derive(Debug, thiserror::Error)]
pub enum ExpectationError {
    /// A cause that is not one.
    #[error("unknown cause `{0}`: expected `display`, `data` or `both`")]
    Cause(String),
    /// A count of repeats no check could have.
    #[error("`causes`: `{name} = {n}` is more repeats than a check can have: expected at most {MAX_REPEATS}")]
    CauseCount {
        /// The cause.
        name: String,
        /// The count given.
        n: usize,
    },
    /// `unpinned` names what is not a finding.
    #[error("`unpinned`: unknown finding `{name}`: expected one of {}", UNPINNABLE.join(", "))]
    Unpinned {
        /// The name given.
        name: String,
    },
    /// Not a table of an expectation's keys (TOML syntax, an unknown key, a wrong type).
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
}

/// The most repeats one cause may be pinned at (`causes = { display = N }`): far above any real
/// check (a repeat is a rendering of a message), far below what would exhaust memory.
const MAX_REPEATS: usize = 100_000;

impl std::str::FromStr for Expectation {
    type Err = ExpectationError;

    /// An `expect` table written as a TOML document (`words_rendered_more_than_once = 169`).
    fn from_str(text: &str) -> Result<Expectation, ExpectationError> {
        toml::from_str::<RawExpectation>(text)?.typed()
    }
}

impl RawExpectation {
    /// The expectation, or what in it is not one.
    pub(super) fn typed(&self) -> Result<Expectation, ExpectationError> {
        let cause = |name: &String| {
            Cause::ALL
                .into_iter()
                .find(|c| c.name() == name)
                .ok_or_else(|| ExpectationError::Cause(name.clone()))
        };
        let (causes, causes_counted) = match &self.causes {
            None => (Vec::new(), false),
            Some(RawCauses::List(names)) => {
                (names.iter().map(cause).collect::<Result<_, _>>()?, false)
            }
            Some(RawCauses::Counts(counts)) => {
                let mut causes = Vec::new();
                for (name, &n) in counts {
                    let c = cause(name)?;
                    if n > MAX_REPEATS {
                        return Err(ExpectationError::CauseCount {
                            name: name.clone(),
                            n,
                        });
                    }
                    causes.extend(std::iter::repeat_n(c, n));
                }
                causes.sort_by_key(|c| Cause::ALL.iter().position(|x| x == c));
                (causes, true)
            }
        };
        let unpinned = self
            .unpinned
            .iter()
            .map(|name| {
                UNPINNABLE
                    .into_iter()
                    .find(|n| n == name)
                    .ok_or_else(|| ExpectationError::Unpinned { name: name.clone() })
            })
            .collect::<Result<_, _>>()?;
        Ok(Expectation {
            findings: Findings {
                words_rendered_more_than_once: self.words_rendered_more_than_once,
                missing_messages: self.missing_messages,
                internal_text_shown: self.internal_text_shown,
                out_of_order: self.out_of_order,
                taken_back_shown: self.taken_back_shown,
                code_words_altered: self.code_words_altered,
                wrong_session: self.wrong_session,
                chrome_repeated: self.chrome_repeated,
                stray_text: self.stray_text,
                input_split: self.input_split,
            },
            causes,
            causes_counted,
            // `causes` not written: not compared.
            causes_unwritten: self.causes.is_none(),
            rows: RowPins {
                stale_preview_rows: self.stale_preview_rows,
                prompt_rows: self.prompt_rows,
                max_blank_run: self.max_blank_run,
                questions_not_once: self.questions_not_once,
            },
            unpinned,
            known_bug: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::Repeat;

    /// A check with `words` words repeated, one repeat per cause in `causes`.
    fn found(words: usize, causes: &[Cause]) -> Check {
        let mut check = Check::empty("x");
        check.findings.words_rendered_more_than_once = words;
        check.repeats = causes
            .iter()
            .map(|&cause| Repeat {
                words: words / causes.len().max(1),
                times: 2,
                cause,
                rows: vec![10],
                message_uids: Vec::new(),
                sessions: Vec::new(),
                excerpt: String::new(),
                screen_rows: Vec::new(),
                surplus_rows: (0, 0),
                allowed_rows: Vec::new(),
                rendered_row: None,
                carrier_of: None,
                stored: 1,
                said: None,
            })
            .collect();
        check
    }

    fn expectation(text: &str) -> Expectation {
        text.parse().unwrap()
    }

    /// `causes` not written is not compared; written as a list it is compared in order, as
    /// counts in any order; an expectation made in code compares it (no repeat expected).
    #[test]
    fn causes_are_compared_only_where_written() {
        let check = found(12, &[Cause::Data, Cause::Display]);
        let mismatches = |e: &Expectation| e.mismatches(&check, None);
        assert!(mismatches(&expectation("words_rendered_more_than_once = 12")).is_empty());
        let listed = "words_rendered_more_than_once = 12\ncauses = [\"display\", \"data\"]";
        assert_eq!(
            mismatches(&expectation(listed)),
            ["causes: expected [\"display\", \"data\"], got [\"data\", \"display\"]"]
        );
        let counted = "words_rendered_more_than_once = 12\ncauses = { display = 1, data = 1 }";
        assert!(mismatches(&expectation(counted)).is_empty());
        let counted = "words_rendered_more_than_once = 12\ncauses = { display = 2 }";
        assert_eq!(
            mismatches(&expectation(counted)),
            ["causes: expected { display = 2 }, got { display = 1, data = 1 }"]
        );
        assert_eq!(
            mismatches(&Expectation::default()),
            [
                "words_rendered_more_than_once: expected 0, got 12",
                "causes: expected [], got [\"data\", \"display\"]"
            ]
        );
    }

    /// `comparisons` and `mismatches` agree: an entry fails exactly where a mismatch is listed,
    /// and a finding or `causes` not compared has `expected: null`.
    #[test]
    fn comparisons_agree_with_mismatches() {
        let check = found(12, &[Cause::Display]);
        for text in [
            "",
            "words_rendered_more_than_once = 12",
            "words_rendered_more_than_once = 12\ncauses = [\"data\"]",
            "unpinned = [\"words_rendered_more_than_once\"]\nprompt_rows = 1",
        ] {
            let e = expectation(text);
            let rows = RowCounts {
                prompt_rows: 2,
                ..RowCounts::default()
            };
            let failed: Vec<&str> = e
                .comparisons(&check, Some(&rows))
                .iter()
                .filter(|c| !c.held)
                .map(|c| c.name)
                .collect();
            let listed: Vec<String> = e
                .mismatches(&check, Some(&rows))
                .iter()
                .map(|m| m.split(':').next().unwrap().to_owned())
                .collect();
            assert_eq!(failed, listed, "{text:?}");
        }
        let e = expectation("unpinned = [\"words_rendered_more_than_once\"]");
        let c = e.comparisons(&check, None);
        assert_eq!(c[0].expected, serde_json::Value::Null);
        let causes = Findings::NAMES.len();
        assert_eq!(c[causes].name, "causes");
        assert_eq!(c[causes].expected, serde_json::Value::Null);
        assert_eq!(
            c.len(),
            causes + 1,
            "row counts neither pinned nor counted are left out"
        );
    }
}
