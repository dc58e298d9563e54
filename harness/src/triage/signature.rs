//! The signature of a verdict: the shape of a failure, apart from its exact numbers.
//!
//! Two runs fail "the same way" when, check by check, the same kinds of finding are non-zero
//! (words rendered more than once, messages missing, internal text shown, messages out of order,
//! messages the user took back shown),
//! the repeats have the same causes (display, data, both) and the same kind of message is repeated
//! (a summary carrier's reply, or a message drawn again as itself), and the same steps fail to run.
//! The numbers themselves are left out: a release that shows 287 words of summary where the one
//! before showed 274 has not changed what it gets wrong.

use std::collections::BTreeSet;
use std::fmt;

use crate::oracle::Check;
use crate::runner::ScenarioResult;

/// A kind of finding with a non-zero number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    /// `words_rendered_more_than_once` > 0.
    Repeats,
    /// `missing_messages` > 0.
    Missing,
    /// `internal_text_shown` > 0.
    Internal,
    /// `out_of_order` > 0.
    OutOfOrder,
    /// `taken_back_shown` > 0.
    TakenBack,
    /// `code_words_altered` > 0.
    CodeAltered,
    /// `wrong_session` > 0.
    WrongSession,
    /// `chrome_repeated` > 0.
    ChromeRepeated,
    /// `stray_text` > 0.
    Stray,
    /// `input_split` > 0.
    InputSplit,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Repeats => "repeats",
            Kind::Missing => "missing",
            Kind::Internal => "internal",
            Kind::OutOfOrder => "out-of-order",
            Kind::TakenBack => "taken-back",
            Kind::CodeAltered => "code-altered",
            Kind::WrongSession => "wrong-session",
            Kind::ChromeRepeated => "chrome-repeated",
            Kind::Stray => "stray",
            Kind::InputSplit => "input-split",
        }
    }
}

/// What was drawn again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Repeated {
    /// A summary carrier's copy of a reply (the carrier of another row).
    CarrierReply,
    /// A message drawn again as itself.
    Message,
}

/// The signature of one check.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub(crate) struct CheckSignature {
    /// The checkpoint (`after --resume`).
    pub(crate) at: String,
    /// The kinds of finding with a non-zero number.
    pub(crate) kinds: BTreeSet<Kind>,
    /// The causes of the repeats.
    pub(crate) causes: BTreeSet<&'static str>,
    /// What was repeated.
    pub(crate) repeated: BTreeSet<Repeated>,
}

/// The signature of a run: each check's, in order, and whether the run stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Signature {
    /// Each check reached, in order.
    pub(crate) checks: Vec<CheckSignature>,
    /// The run stopped with an error before its last step.
    pub(crate) stopped: bool,
}

impl CheckSignature {
    /// The signature of one check.
    pub(crate) fn of(check: &Check) -> CheckSignature {
        let f = &check.findings;
        let kinds = [
            (Kind::Repeats, f.words_rendered_more_than_once),
            (Kind::Missing, f.missing_messages),
            (Kind::Internal, f.internal_text_shown),
            (Kind::OutOfOrder, f.out_of_order),
            (Kind::TakenBack, f.taken_back_shown),
            (Kind::CodeAltered, f.code_words_altered),
            (Kind::WrongSession, f.wrong_session),
            (Kind::ChromeRepeated, f.chrome_repeated),
            (Kind::Stray, f.stray_text),
            (Kind::InputSplit, f.input_split),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, _)| k)
        .collect();
        CheckSignature {
            at: check.at.clone(),
            kinds,
            causes: check.repeats.iter().map(|r| r.cause.name()).collect(),
            repeated: check
                .repeats
                .iter()
                .map(|r| {
                    if r.carrier_of.is_some() {
                        Repeated::CarrierReply
                    } else {
                        Repeated::Message
                    }
                })
                .collect(),
        }
    }

    /// True when no finding is non-zero.
    pub(crate) fn is_clean(&self) -> bool {
        self.kinds.is_empty()
    }
}

impl Signature {
    /// The signature of a run's result.
    pub fn of(result: &ScenarioResult) -> Signature {
        Signature {
            checks: result
                .checks
                .iter()
                .map(|c| CheckSignature::of(&c.check))
                .collect(),
            stopped: result.error.is_some(),
        }
    }
}

impl fmt::Display for CheckSignature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.at)?;
        if self.kinds.is_empty() {
            return f.write_str("clean");
        }
        let mut first = true;
        for kind in &self.kinds {
            if !first {
                f.write_str(" + ")?;
            }
            first = false;
            f.write_str(kind.name())?;
            if *kind == Kind::Repeats && !(self.causes.is_empty() && self.repeated.is_empty()) {
                let causes: Vec<&str> = self.causes.iter().copied().collect();
                let what: Vec<&str> = self
                    .repeated
                    .iter()
                    .map(|r| match r {
                        Repeated::CarrierReply => "a carrier's reply",
                        Repeated::Message => "a message",
                    })
                    .collect();
                write!(f, " ({}; {})", causes.join("/"), what.join(", "))?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.checks.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join("; "))?;
        if self.stopped {
            if !parts.is_empty() {
                f.write_str("; ")?;
            }
            f.write_str("stopped before the end")?;
        }
        Ok(())
    }
}
