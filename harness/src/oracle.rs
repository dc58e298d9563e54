//! Stage `oracle`: pure functions, no I/O. Compares a [`Transcript`] with the [`Expected`] display
//! (and, when there is one, what the provider log says was said) and produces a [`Check`] whose
//! findings carry numbers and a diagnosis for every repeated passage.
//!
//! OWNER: helper "model" — contract below is fixed; implementation pending.

use crate::display::Expected;
use crate::screen::Transcript;

/// What the provider log says was said in the conversation, each utterance once, in order.
/// The ground truth for telling a data problem (stored twice) from a display problem.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Said {
    /// Texts of user messages, in the order they were first sent.
    pub user: Vec<String>,
    /// Texts of assistant replies the provider produced for chat turns, in order.
    pub assistant: Vec<String>,
}

/// The numbers of one check. Field names are the public names of the findings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Findings {
    /// Words of expected messages whose rendered multiplicity exceeds what was said.
    pub words_rendered_more_than_once: usize,
    /// Expected messages not rendered at all.
    pub missing_messages: usize,
    /// Words of summaries / handoff markers that reached the screen.
    pub internal_text_shown: usize,
    /// Logical messages rendered in a different order than expected.
    pub out_of_order: usize,
}

/// Why a passage was rendered more than once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Stored once as a logical message, shown more than once.
    Display,
    /// Stored as more than one logical message although it was said once.
    Data,
    /// Stored more than once, and shown even more often.
    Both,
}

/// One repeated passage.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Repeat {
    /// Words of the passage rendered more than expected.
    pub words: usize,
    /// How many times the passage was rendered.
    pub times: usize,
    /// Display, data or both.
    pub cause: Cause,
    /// Stored rows holding the passage (`messages.id`).
    pub rows: Vec<i64>,
    /// Their `message_uid`s (distinct, in row order).
    pub message_uids: Vec<String>,
    /// Their sessions (distinct, in row order).
    pub sessions: Vec<String>,
    /// The first words of the passage, for humans.
    pub excerpt: String,
    /// History row ranges (first, last; inclusive) of each rendering, in screen order.
    pub screen_rows: Vec<(usize, usize)>,
}

/// An expected message that was not rendered.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Missing {
    /// Its role.
    pub role: crate::display::Role,
    /// Its first words.
    pub excerpt: String,
    /// The stored rows of the message.
    pub rows: Vec<i64>,
}

/// The result of comparing one rendered history with its expectation, at one checkpoint.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Check {
    /// The checkpoint name (scenario step or display path).
    pub at: String,
    /// The numbers.
    pub findings: Findings,
    /// Every repeated passage with its diagnosis.
    pub repeats: Vec<Repeat>,
    /// Every missing message.
    pub missing: Vec<Missing>,
}

/// Compares `transcript` with `expected` (and `said`, when a provider log exists).
pub fn check(at: &str, transcript: &Transcript, expected: &Expected, said: Option<&Said>) -> Check {
    let _ = (at, transcript, expected, said);
    unimplemented!("model helper")
}
