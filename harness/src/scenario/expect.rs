//! A checkpoint's expectation: the exact findings and causes a `check` step pins
//! ([`Expectation`], re-exported as `scenario::Expectation`), its comparison with a check's
//! findings ([`Expectation::mismatches`]) and its raw form as written in a scenario file.

use serde::Deserialize;

use crate::oracle::{Cause, Check, Findings};

/// Expected findings of a checkpoint; findings not named are expected to be 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expectation {
    /// The numbers expected, by their public names (`words_rendered_more_than_once`, …).
    pub findings: Findings,
    /// Expected causes of the repeats, in screen order (`display`, `data`, `both`); empty = none.
    pub causes: Vec<Cause>,
}

impl Expectation {
    /// Every difference between the expectation and the findings of `found`, as
    /// `finding: expected X, got Y` (`causes: expected ["display"], got []`).
    pub fn mismatches(&self, found: &Check) -> Vec<String> {
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
        ];
        for (name, want, got) in pairs {
            if want != got {
                out.push(format!("{name}: expected {want}, got {got}"));
            }
        }
        let causes: Vec<Cause> = found.repeats.iter().map(|r| r.cause).collect();
        if causes != self.causes {
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
    causes: Vec<String>,
}

impl RawExpectation {
    /// The expectation, or the message naming a cause that is not one.
    pub(super) fn typed(&self) -> Result<Expectation, String> {
        let causes = self
            .causes
            .iter()
            .map(|cause| {
                Cause::ALL
                    .into_iter()
                    .find(|c| c.name() == cause)
                    .ok_or_else(|| {
                        format!("unknown cause `{cause}`: expected `display`, `data` or `both`")
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(Expectation {
            findings: Findings {
                words_rendered_more_than_once: self.words_rendered_more_than_once,
                missing_messages: self.missing_messages,
                internal_text_shown: self.internal_text_shown,
                out_of_order: self.out_of_order,
            },
            causes,
        })
    }
}
