//! A checkpoint's expectation: the exact findings and causes a `check` step pins
//! ([`Expectation`], re-exported as `scenario::Expectation`), its comparison with a check's
//! findings ([`Expectation::mismatches`]) and its raw form as written in a scenario file.
//!
//! Besides the oracle's findings (0 when not named), an expectation may pin the row counts
//! ([`RowCounts`]: `stale_preview_rows`, `prompt_rows`, `max_blank_run`, `questions_not_once`),
//! each only where named — exactly (`prompt_rows = 1`) or as a bound (`max_blank_run = { at_most =
//! 2 }`, [`RowPin`]: upstream's resize test states its row assertions as bounds, and where the
//! client's count moves with where a resize lands a bound is what holds) — and may leave findings that vary with timing out of the comparison:
//! `unpinned = ["words_rendered_more_than_once", "causes"]` (they are still reported).

use serde::Deserialize;

use crate::oracle::{Cause, Check, Findings, RowCounts};

/// The names `unpinned` accepts: the oracle's findings and `causes`.
const UNPINNABLE: [&str; 6] = [
    "words_rendered_more_than_once",
    "missing_messages",
    "internal_text_shown",
    "out_of_order",
    "taken_back_shown",
    "causes",
];

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
    pub fn holds(self, got: usize) -> bool {
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
    pub stale_preview_rows: Option<RowPin>,
    /// Expected [`RowCounts::prompt_rows`].
    pub prompt_rows: Option<RowPin>,
    /// Expected [`RowCounts::max_blank_run`].
    pub max_blank_run: Option<RowPin>,
    /// Expected [`RowCounts::questions_not_once`].
    pub questions_not_once: Option<RowPin>,
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
    pub findings: Findings,
    /// Expected causes of the repeats, in screen order (`display`, `data`, `both`); empty = none.
    pub causes: Vec<Cause>,
    /// Row counts pinned (each only where named).
    pub rows: RowPins,
    /// Findings (and `causes`) not compared: measured, reported, but varying with timing.
    pub unpinned: Vec<&'static str>,
}

impl Expectation {
    /// Every difference between the expectation and the findings of `found` and the row counts
    /// `rows` (`None`: the check had no terminal history, e.g. an exported file), as
    /// `finding: expected X, got Y` (`causes: expected ["display"], got []`).
    pub fn mismatches(&self, found: &Check, rows: Option<&RowCounts>) -> Vec<String> {
        let (want, got) = (&self.findings, &found.findings);
        let mut out = Vec::new();
        let pairs = [
            (
                "words_rendered_more_than_once",
                want.words_rendered_more_than_once,
                got.words_rendered_more_than_once,
            ),
            (
                "missing_messages",
                want.missing_messages,
                got.missing_messages,
            ),
            (
                "internal_text_shown",
                want.internal_text_shown,
                got.internal_text_shown,
            ),
            ("out_of_order", want.out_of_order, got.out_of_order),
            (
                "taken_back_shown",
                want.taken_back_shown,
                got.taken_back_shown,
            ),
        ];
        for (name, want, got) in pairs {
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
        if causes != self.causes && !self.unpinned.contains(&"causes") {
            let names =
                |causes: &[Cause]| -> Vec<&str> { causes.iter().map(|&c| c.name()).collect() };
            out.push(format!(
                "causes: expected {:?}, got {:?}",
                names(&self.causes),
                names(&causes)
            ));
        }
        out
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
    causes: Vec<String>,
    #[serde(default)]
    unpinned: Vec<String>,
    stale_preview_rows: Option<RowPin>,
    prompt_rows: Option<RowPin>,
    max_blank_run: Option<RowPin>,
    questions_not_once: Option<RowPin>,
}

/// Why an `expect` table is not an expectation.
#[derive(Debug, thiserror::Error)]
pub enum ExpectationError {
    /// A cause that is not one.
    #[error("unknown cause `{0}`: expected `display`, `data` or `both`")]
    Cause(String),
    /// `unpinned` names what is not a finding.
    #[error("`unpinned`: unknown finding `{name}`: expected one of {}", UNPINNABLE.join(", "))]
    Unpinned {
        /// The name given.
        name: String,
    },
    /// Not a table of an expectation's keys (TOML syntax, an unknown key, a wrong type).
    #[error("{0}")]
    Toml(#[from] toml::de::Error),
}

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
        let causes = self
            .causes
            .iter()
            .map(|cause| {
                Cause::ALL
                    .into_iter()
                    .find(|c| c.name() == cause)
                    .ok_or_else(|| ExpectationError::Cause(cause.clone()))
            })
            .collect::<Result<_, _>>()?;
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
            },
            causes,
            rows: RowPins {
                stale_preview_rows: self.stale_preview_rows,
                prompt_rows: self.prompt_rows,
                max_blank_run: self.max_blank_run,
                questions_not_once: self.questions_not_once,
            },
            unpinned,
        })
    }
}
