//! The oracle: a transcript against the expected display, as findings.
//!
//! Stage `oracle`: pure functions, no I/O. Compares a [`Transcript`] with the [`Expected`] display
//! (and, when there is one, what the provider log says was said) and produces a [`Check`] whose
//! findings carry numbers and a diagnosis for every surplus rendering.
//!
//! Input: the transcript (the whole rendered history, chrome stripped), the expectation (logical
//! messages and internal texts from `state.db`) and optionally [`Said`]. Output: a [`Check`].
//!
//! # Words
//! Both sides are turned into words by [`crate::words`] (UAX-29, case-folded, CJK one each), so
//! wrapping, panel borders, markdown markers and punctuation never matter. The transcript becomes
//! one word stream (all lines, in order, each word remembering its line).
//!
//! # Align first, then count
//! The stream is aligned to the expectation's texts (`oracle/align.rs`): every stretch of the screen that
//! draws a logical message (or an internal text) becomes a *rendering* of that one message — the
//! whole message, or the part the client's truncation leaves — with, for each of its words, the
//! word position of the message it draws. Each screen word belongs to at most one rendering. Where
//! several messages hold the same text, the rendering goes to the holder the screen follows
//! furthest, then to a holder that has not yet had its allowed renderings, in display order (the
//! alignment's module docs give the rule and its limits).
//!
//! # Counting rule for `words_rendered_more_than_once`
//! Every logical message has an *allowance*: how many renderings of it a correct display draws —
//! one; zero for a *data duplicate* (below). Renderings are taken in screen order; a word position
//! covered by a rendering beyond the allowance is one surplus word. The finding is the sum over all
//! word positions of all messages:
//!
//! `words_rendered_more_than_once = Σ_messages Σ_positions max(0, renderings covering it − allowance)`
//!
//! So one surplus rendering of a 180-word reply is 180 whatever else the conversation repeats, two
//! are 360, and a reply shown in full and again cut to its first 25 words is 25.
//!
//! *Why this is exact* (sketch): a surplus word is a pair (position of a message, rendering beyond
//! the allowance) and the alignment gives every screen word at most one such pair, so nothing is
//! counted twice — not a paragraph held by k messages (each screen word of it belongs to one
//! holder's rendering), not a passage whose edges touch other messages. Every word the client drew
//! once more than the display model expects is counted once, provided the alignment attributes
//! the extra rendering to the message it draws; when the screen cannot tell holders of equal text
//! apart (equal words up to where the rendering stops), any attribution gives the same sum as long
//! as each holder first receives its allowance, which the tie-break guarantees.
//!
//! A rendering counts only when it is *strong*: at least [`SHINGLE_WORDS`] words, or the whole
//! message. A shorter run at a message's start (a recap that cut the message after a few words)
//! makes the message rendered, for `missing_messages` and order, but never counts as a repeat.
//!
//! ## Data duplicates
//! With a provider log, logical messages with identical words that the provider said fewer times
//! than they are stored (`1 <= said < stored`) are a data problem: the first `said` of them (in
//! display order) are allowed one rendering, the rest none, so each rendering of a data duplicate
//! counts. A text the provider never said (tool output, notices, no provider log) is judged by the
//! stored rows alone. Without a provider log, the database itself can show a data duplicate: an
//! utterance it stores twice in one generation ([`crate::integrity`], passed in [`Context`]) — its
//! second logical message is allowed no rendering, and drawing it counts with cause `data`.
//!
//! ## Display settings
//! Messages the client's display settings keep off its resume recap ([`Context::optional`], from
//! [`crate::settings::not_on_recap`]) are never missing; a message the recap cuts is rendered as
//! far as it is drawn (a truncated rendering covers what it covers).
//!
//! # Other findings
//! - `missing_messages`: messages (with words) that have no rendering, except a data duplicate
//!   (showing the utterance once is what was said) and a message off the recap. A message whose
//!   text also
//!   appears inside another message is still missing when it is not rendered itself: the other
//!   message's rendering owns those screen words. `n` identical messages need `n` renderings.
//! - `internal_text_shown`: word positions of internal texts (summaries, handoff markers) covered
//!   by a rendering of that internal text; identical internal texts count once. A summary drawn
//!   raw is one rendering of the summary, so the user messages it quotes belong to this finding,
//!   not to `words_rendered_more_than_once`: one client bug is counted once.
//! - `taken_back_shown`: messages the user took back ([`Expected::taken_back`]: rewound, and no kept
//!   message has their text; display contract rule 10) with a strong rendering, each counted once.
//!   They are aligned like internal texts, allowed no rendering.
//! - `out_of_order`: every rendered message gets a position — its first rendering at or after the
//!   previous message's position (or its first rendering if there is none after) — and the count
//!   is the number of rendered messages outside one longest non-decreasing subsequence of those
//!   positions in expected order ([`Check::out_of_order_messages`] names them).
//!
//! Every rendering the alignment found is in [`Check::drawn`], so a report can show each message
//! where the oracle saw it, and nowhere else.
//!
//! # Known limits
//! - A message shorter than [`SHINGLE_WORDS`] words is matched as a whole wherever it occurs
//!   outside another rendering (in chrome, a banner, an unexpected text); such a coincidence can
//!   hide a missing short message or count a short message as repeated.
//! - Messages with no words at all (emoji only) cannot be checked and are ignored.
//! - The alignment is greedy; its limits are in the docs of `oracle/align.rs`.
//!
//! Cost: tokenising both sides, hashing them, and one left-to-right scan of the transcript —
//! `O(n log n)` in the transcript and conversation sizes (see `oracle/align.rs`).
//!
//! # Files
//! [`check_prepared`] runs the stages in order, one file each: `oracle/vocabulary.rs` (both sides as
//! word ids; the expectation's side can be made beforehand, [`PreparedExpected`]), `oracle/holders.rs` (who holds which text, allowances and causes), `oracle/align.rs`
//! (renderings), `oracle/coverage.rs` (what they cover, missing messages, order) and
//! `oracle/repeat.rs` (one [`Repeat`] per surplus run). They only count: every sentence about a
//! [`Check`] — the verdict, the diagnosis, the names of each [`Cause`] — is in [`wording`], which
//! the reports use too.

mod align;
mod chrome;
pub(crate) use chrome::repeated_chrome;
mod code;
pub(crate) use code::AlteredCode;
mod opened;
pub(crate) use opened::{listing_counts, opened_session, wrong_session, Opened};
mod coverage;
mod holders;
pub(crate) mod input;
mod repeat;
mod rows;
mod vocabulary;
pub(crate) mod wording;

use crate::display::{Expected, Role};
use crate::integrity::DataProblem;
use crate::terminal::Transcript;

use align::{Rendering, SourceKind, Texts};
use coverage::{missing_and_positions, outside_longest_run, Coverage};
use holders::{identical_holders_in_order, Holders};
use repeat::{repeats, Surplus};
use vocabulary::{excerpt, Vocabulary, Words};

pub use rows::{count_rows, is_stale_preview, RowCounts};
pub(crate) use wording::verdict_sentence;

/// Words that make a rendering *strong* (counted as a repeat) when it is not a whole message, and
/// that any rendering starting inside a message needs; see the module docs.
pub(crate) const SHINGLE_WORDS: usize = 8;

/// Leading words that count a message as rendered when the client truncated it before
/// [`SHINGLE_WORDS`] of its words (a recap of a few short lines).
pub(crate) const PREFIX_WORDS: usize = 4;

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
    /// Surplus word renderings: for every word position of every logical message, the renderings
    /// covering it beyond its allowance (see the module docs), summed.
    pub words_rendered_more_than_once: usize,
    /// Expected messages not rendered at all.
    pub missing_messages: usize,
    /// Words of summaries / handoff markers that reached the screen.
    pub internal_text_shown: usize,
    /// Logical messages rendered in a different order than expected.
    pub out_of_order: usize,
    /// Messages the user took back (`/undo`, `/retry`, `/rollback`) that are drawn though no kept
    /// message has their text (rule 10; [`Check::taken_back`] names them).
    #[serde(default)]
    pub taken_back_shown: usize,
    /// Code words of replies drawn whole that are not drawn verbatim (rule 11;
    /// [`Check::altered_code`] names them): `__init__` drawn as `init` inside a code block.
    #[serde(default)]
    pub code_words_altered: usize,
    /// 1 when the screen names as the client's own session one outside the judged session's
    /// compression lineage (rule 12; [`Check::opened`] names both), else 0: every number above
    /// then compares the wrong conversation.
    #[serde(default)]
    pub wrong_session: usize,
    /// Rows of client chrome drawn again in one history (rule 14; `repeated_chrome`): a second
    /// status bar, a separator rule right below another. Counted on the checkpoint's history,
    /// not per view; 0 for an export.
    #[serde(default)]
    pub chrome_repeated: usize,
    /// Characters of text drawn that spell what the terminal sends to the client — cursor
    /// position reports, paste markers, mouse reports (rule 15; [`Check::stray`] names them):
    /// `20;1R21;1R` in the prompt is 10.
    #[serde(default)]
    pub stray_text: usize,
    /// Extra user messages made of one pasted input (rule 16; [`Check::split_inputs`] names
    /// them): a three-line paste sent as three messages is 2.
    #[serde(default)]
    pub input_split: usize,
}

impl Findings {
    /// Every finding's public name (scenario files, `--json`, `--expect-findings`), in field
    /// order: the one list the others are made from.
    pub const NAMES: [&'static str; 10] = [
        "words_rendered_more_than_once",
        "missing_messages",
        "internal_text_shown",
        "out_of_order",
        "taken_back_shown",
        "code_words_altered",
        "wrong_session",
        "chrome_repeated",
        "stray_text",
        "input_split",
    ];

    /// Each finding with its public name, in [`Findings::NAMES`] order.
    pub(crate) fn named(&self) -> [(&'static str, usize); Self::NAMES.len()] {
        let n = [
            self.words_rendered_more_than_once,
            self.missing_messages,
            self.internal_text_shown,
            self.out_of_order,
            self.taken_back_shown,
            self.code_words_altered,
            self.wrong_session,
            self.chrome_repeated,
            self.stray_text,
            self.input_split,
        ];
        let mut out = [("", 0); Self::NAMES.len()];
        for (i, (name, value)) in Self::NAMES.into_iter().zip(n).enumerate() {
            out[i] = (name, value);
        }
        out
    }

    /// Adds `other`'s numbers to these (the views of one check).
    pub(crate) fn add(&mut self, other: &Findings) {
        self.words_rendered_more_than_once += other.words_rendered_more_than_once;
        self.missing_messages += other.missing_messages;
        self.internal_text_shown += other.internal_text_shown;
        self.out_of_order += other.out_of_order;
        self.taken_back_shown += other.taken_back_shown;
        self.code_words_altered += other.code_words_altered;
        self.wrong_session = self.wrong_session.max(other.wrong_session);
        self.chrome_repeated += other.chrome_repeated;
        self.stray_text += other.stray_text;
        self.input_split += other.input_split;
    }
}

/// The names of `parts`, in order, as one array of `N`: the lists of names the scenario files,
/// `--expect-findings` and `--bless` accept, built from [`Findings::NAMES`] and
/// [`RowCounts::NAMES`]. A wrong `N` fails the build (a panic in a constant).
pub(crate) const fn joined_names<const N: usize>(parts: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut at = 0;
    let mut p = 0;
    while p < parts.len() {
        let mut i = 0;
        while i < parts[p].len() {
            out[at] = parts[p][i];
            at += 1;
            i += 1;
        }
        p += 1;
    }
    assert!(at == N, "joined_names: N is not the number of names");
    out
}

/// Why a message was rendered more often than allowed.
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

impl Cause {
    /// Every cause.
    pub(crate) const ALL: [Cause; 3] = [Cause::Display, Cause::Data, Cause::Both];

    /// The cause's name in scenario files, `--json` (as serialised) and signatures.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Cause::Display => "display",
            Cause::Data => "data",
            Cause::Both => "both",
        }
    }
}

/// One surplus rendering: a logical message (or part of it) drawn beyond its allowance.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Repeat {
    /// Surplus words: positions of the message this rendering covers beyond the allowance.
    pub words: usize,
    /// How many renderings cover the passage.
    pub times: usize,
    /// Display, data or both.
    pub cause: Cause,
    /// Stored rows of the logical message rendered too often (`messages.id`); for a data
    /// duplicate, the rows of every logical message holding the same text.
    pub rows: Vec<i64>,
    /// Their `message_uid`s (distinct, in row order).
    pub message_uids: Vec<String>,
    /// Their sessions (distinct, in row order).
    pub sessions: Vec<String>,
    /// The first words of the passage, for humans.
    pub excerpt: String,
    /// History row ranges (first, last; inclusive) of every rendering of the passage, in screen
    /// order: the allowed ones and the surplus one. In `--json` each range is an object
    /// `{"first": …, "last": …}`, as in every `*_rows` field of a repeat.
    #[serde(serialize_with = "history_ranges")]
    pub screen_rows: Vec<(usize, usize)>,
    /// History rows of the surplus rendering (the part of it that is surplus); one range, an
    /// object `{"first": …, "last": …}` in `--json`.
    #[serde(serialize_with = "history_range")]
    pub surplus_rows: (usize, usize),
    /// History rows of the renderings of the passage within the allowance, in screen order; in
    /// `--json` a list of `{"first": …, "last": …}` objects.
    #[serde(serialize_with = "history_ranges")]
    pub allowed_rows: Vec<(usize, usize)>,
    /// The stored row the surplus rendering is attributed to: the k-th rendering of a message
    /// stored as several copies is attributed to its k-th row (a carrier, when the message has
    /// one and more renderings than the carrier's original).
    pub rendered_row: Option<i64>,
    /// When `rendered_row` is a summary carrier: the row whose reply it carries (the message's
    /// first row).
    pub carrier_of: Option<i64>,
    /// How many logical messages hold the passage's text (a data duplicate is stored twice).
    pub stored: usize,
    /// How many times the provider said it (`None` without a provider log).
    pub said: Option<usize>,
}

/// History rows `first` to `last` (inclusive) as `--json` writes them: `{"first": 40, "last": 44}`,
/// numbered from 1 as every report numbers them (the oracle's own ranges count from 0:
/// [`TranscriptLine::row`](crate::terminal::TranscriptLine) is an index).
#[derive(serde::Serialize)]
struct HistoryRange {
    first: usize,
    last: usize,
}

/// Serialises one `(first, last)` range as a [`HistoryRange`] object.
pub(crate) fn history_range<S: serde::Serializer>(
    &(first, last): &(usize, usize),
    s: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(
        &HistoryRange {
            first: first + 1,
            last: last + 1,
        },
        s,
    )
}

/// Serialises `(first, last)` ranges as a list of [`HistoryRange`] objects.
pub(crate) fn history_ranges<S: serde::Serializer>(
    ranges: &[(usize, usize)],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(ranges.iter().map(|&(first, last)| HistoryRange {
        first: first + 1,
        last: last + 1,
    }))
}

/// An expected message that was not rendered; also a taken-back message that was
/// ([`Check::taken_back`]: there `rows` are the rows it was taken back in).
///
/// A message counts as rendered when some rendering of it exists: at least `oracle::SHINGLE_WORDS`
/// of its words, the whole message, or its first `oracle::PREFIX_WORDS` words, aligned to it (see
/// the module docs). `n` messages with identical words need `n` renderings; when there are fewer, the
/// later ones are missing. Messages without words are never missing.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Missing {
    /// Its role.
    pub role: Role,
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
    /// Every surplus rendering with its diagnosis, in screen order.
    pub repeats: Vec<Repeat>,
    /// Every missing message.
    pub missing: Vec<Missing>,
    /// Every taken-back message drawn ([`Findings::taken_back_shown`]), in the order they were
    /// taken back.
    pub taken_back: Vec<Missing>,
    /// Every reply whose code was drawn altered ([`Findings::code_words_altered`]), in the order
    /// of [`Expected::messages`] (view by view, for a live screen's check).
    #[serde(default)]
    pub altered_code: Vec<AlteredCode>,
    /// What the database alone shows is wrong (see `integrity.rs`); empty when not known.
    pub data_problems: Vec<DataProblem>,
    /// The session the screen named as the client's own when it is not the judged one's
    /// ([`Findings::wrong_session`]); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened: Option<Opened>,
    /// Every rendering the alignment found, in screen order (for reports; not in `--json`).
    #[serde(skip)]
    pub drawn: Vec<Drawn>,
    /// The messages counted in `out_of_order` (indexes into [`Expected::messages`]): those outside
    /// one longest run of rendered messages in display order.
    #[serde(skip)]
    pub out_of_order_messages: Vec<usize>,
    /// Words of each internal text counted in `internal_text_shown` (indexes into
    /// [`Expected::internal`]; identical texts count at the first).
    #[serde(skip)]
    pub internal_words: Vec<usize>,
    /// Every run of stray text ([`Findings::stray_text`]), in screen order.
    #[serde(default)]
    pub stray: Vec<input::StrayText>,
    /// Every paste made into several user messages ([`Findings::input_split`]).
    #[serde(default)]
    pub split_inputs: Vec<input::SplitInput>,
}

impl Check {
    /// Adds the findings about the user's input, which belong to the whole check rather than to
    /// one view of the screen (rules 15 and 16): the stray text on `history` (the whole rendered
    /// history, as the row counts read it; what the user `typed` excuses a run) and the pastes
    /// (`pasted`) made into several user messages, stored in `expected` or said (`said_user`).
    pub(crate) fn with_input(
        mut self,
        history: &[String],
        (typed, pasted): (&[String], &[String]),
        expected: &Expected,
        said_user: Option<&[String]>,
    ) -> Check {
        self.stray = input::stray_text(history, expected, typed);
        self.split_inputs = input::split_inputs(pasted, expected, said_user);
        self.findings.stray_text = input::stray_chars(&self.stray);
        self.findings.input_split = input::splits(&self.split_inputs);
        self
    }
}

impl Check {
    /// A check at `at` that found nothing and saw nothing.
    pub(crate) fn empty(at: &str) -> Check {
        Check {
            at: at.to_string(),
            findings: Findings::default(),
            repeats: Vec::new(),
            missing: Vec::new(),
            taken_back: Vec::new(),
            altered_code: Vec::new(),
            data_problems: Vec::new(),
            opened: None,
            drawn: Vec::new(),
            out_of_order_messages: Vec::new(),
            internal_words: Vec::new(),
            stray: Vec::new(),
            split_inputs: Vec::new(),
        }
    }
}

/// Compares `transcript` with `expected` (and `said`, when a provider log exists), nothing else
/// known: the unit tests' shorthand for [`check_prepared`]. Every other caller goes through
/// [`crate::Basis`].
#[cfg(test)]
pub(crate) fn check(
    at: &str,
    transcript: &Transcript,
    expected: &Expected,
    said: Option<&Said>,
) -> Check {
    let cx = Context {
        said,
        ..Context::default()
    };
    check_prepared(
        at,
        transcript,
        expected,
        &PreparedExpected::new(expected),
        &cx,
    )
}

/// What is known besides the transcript and the expectation.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Context<'a> {
    /// What the provider log says was said (scenario runs).
    pub(crate) said: Option<&'a Said>,
    /// The data problems the database alone shows ([`crate::integrity::data_problems`]). They are
    /// listed in the [`Check`] and its verdict, and an utterance the database stores twice
    /// ([`DataProblemKind::StoredTwice`](crate::integrity::DataProblemKind::StoredTwice)) is a data duplicate even without a provider log: when
    /// its copies are two logical messages, the second is allowed no rendering (so the screen
    /// showing the data problem faithfully counts, as `data`); when the display model made them
    /// one message, a surplus rendering of it is `data` as long as it is not rendered more often
    /// than it is stored.
    pub(crate) data_problems: &'a [DataProblem],
    /// Messages (indexes into [`Expected::messages`]) the display may leave out: the client's
    /// display settings keep them off its resume recap (see [`crate::settings::not_on_recap`]).
    /// They are never missing; drawn, they are allowed once like any message.
    pub(crate) optional: &'a [usize],
    /// How many renderings of each message (by index into [`Expected::messages`]) this part of
    /// the screen may draw, where that is not one each (`None`): a view of a live screen only
    /// adds to what earlier views drew, so it draws the messages it adds once, none of the
    /// messages before them — unless it redraws what the client erased ([`crate::views`]).
    /// A message allowed none is never missing, and has no place in the order.
    pub(crate) allowed: Option<&'a [usize]>,
    /// Internal texts (indexes into [`Expected::internal`]) this part of the screen redraws where
    /// the client erased them: not counted again.
    pub(crate) internal_redrawn: &'a [usize],
    /// Taken-back messages (indexes into [`Expected::taken_back`]) this part of the screen may
    /// draw once: the view of the command that took them back (`/undo` puts the user's words
    /// back in the composer; [`crate::views`]).
    pub(crate) taken_back_here: &'a [usize],
}

/// The expectation's side of a check, made once from an [`Expected`]: its vocabulary, the words
/// of each of its texts as ids, and those texts hashed and indexed for the alignment
/// (`align::Index`). It depends on the expectation alone, so it can be made while the
/// transcript is still being read, and serve several transcripts ([`crate::verdict::Basis`]).
#[derive(Clone)]
pub(crate) struct PreparedExpected {
    words: Vocabulary,
    index: align::Index,
}

impl PreparedExpected {
    /// The words of `expected`, and its texts indexed.
    pub(crate) fn new(expected: &Expected) -> PreparedExpected {
        let words = Vocabulary::new(expected);
        let index = align::Index::new(sources(&words));
        PreparedExpected { words, index }
    }
}

impl std::fmt::Debug for PreparedExpected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedExpected")
            .field("vocabulary", &self.words.vocab.len())
            .field("messages", &self.words.messages.len())
            .finish_non_exhaustive()
    }
}

/// The oracle: compares `transcript` with `expected` under everything else that is known (`cx`);
/// `prepared` must be [`PreparedExpected::new`] of this `expected`. Called by
/// [`Basis::check_view`](crate::Basis::check_view), the one public path to a [`Check`].
pub(crate) fn check_prepared(
    at: &str,
    transcript: &Transcript,
    expected: &Expected,
    prepared: &PreparedExpected,
    cx: &Context<'_>,
) -> Check {
    let words = Words::new(transcript, &prepared.words);
    let holders = Holders::new(&words, expected, cx);
    let kinds = prepared.index.kinds();
    let allowance = allowance(kinds, &holders, cx);
    let texts = Texts::new(words.transcript.clone(), &prepared.index);
    let mut renderings = align::align(&texts, &allowance);
    identical_holders_in_order(&mut renderings, kinds, &holders.group);
    let cov = Coverage::new(
        &renderings,
        kinds,
        &words,
        &holders.group_internal,
        &allowance,
    );
    let causes = holders.causes(&cov.by_message, &renderings, &words);

    let row_of = |pos: usize| -> usize {
        words
            .line_of
            .get(pos)
            .and_then(|&line| transcript.lines.get(line))
            .map_or(0, |l| l.row)
    };
    let rows_of = |(a, b): (usize, usize)| (row_of(a), row_of(b));
    let repeats = repeats(
        &Surplus {
            expected,
            holders: &holders,
            cov: &cov,
            renderings: &renderings,
            kinds,
            causes: &causes,
        },
        &rows_of,
    );

    let not_here = |m: usize| cx.allowed.is_some_and(|a| a.get(m) == Some(&0));
    let may_be_absent: Vec<usize> = (0..expected.messages.len())
        .filter(|&m| not_here(m))
        .chain(cx.optional.iter().copied())
        .collect();
    let (missing, mut positions) = missing_and_positions(
        expected,
        &words,
        &holders,
        &may_be_absent,
        &cov,
        &renderings,
    );
    // A message this view must not draw has no place in its order: drawing it is a repeat.
    positions.retain(|&(m, _)| !not_here(m));
    let at_positions: Vec<usize> = positions.iter().map(|p| p.1).collect();
    let out_of_order_messages: Vec<usize> = outside_longest_run(&at_positions)
        .into_iter()
        .map(|i| positions[i].0)
        .collect();
    let internal_words = internal_words(&cov, &holders, cx);
    let drawn = drawn(&renderings, kinds, &rows_of);
    let taken_back = taken_back_drawn(expected, &words, &cov);
    let altered_code = code::altered_replies(expected, prepared, &drawn, transcript);
    let findings = Findings {
        words_rendered_more_than_once: repeats.iter().map(|r| r.words).sum(),
        missing_messages: missing.len(),
        internal_text_shown: internal_words.iter().sum(),
        out_of_order: out_of_order_messages.len(),
        taken_back_shown: taken_back.len(),
        code_words_altered: altered_code.iter().map(AlteredCode::count).sum(),
        wrong_session: 0,
        // Read on the history, not the transcript: set where the history is known.
        chrome_repeated: 0,
        // Read from the whole check's input and history: [`Check::with_input`].
        stray_text: 0,
        input_split: 0,
    };
    Check {
        at: at.to_string(),
        findings,
        repeats,
        missing,
        taken_back,
        altered_code,
        data_problems: cx.data_problems.to_vec(),
        opened: None,
        drawn,
        out_of_order_messages,
        internal_words,
        stray: Vec::new(),
        split_inputs: Vec::new(),
    }
}

/// The words of each internal-text group drawn, 0 for a group an earlier view drew or the view
/// redraws where the client erased it (`cx.internal_redrawn`).
fn internal_words(cov: &Coverage, holders: &Holders, cx: &Context<'_>) -> Vec<usize> {
    let redrawn: Vec<usize> = cx
        .internal_redrawn
        .iter()
        .filter_map(|&x| holders.group_internal.get(x).copied())
        .collect();
    cov.internal
        .iter()
        .enumerate()
        .map(|(g, c)| {
            if redrawn.contains(&g) {
                0
            } else {
                c.iter().filter(|b| **b).count()
            }
        })
        .collect()
}

/// The texts the alignment looks for: messages, then internal texts, then taken-back messages
/// (those with words).
fn sources(words: &Vocabulary) -> Vec<(SourceKind, Vec<u32>)> {
    fn with_words(texts: &[vocabulary::Tokens]) -> impl Iterator<Item = (usize, Vec<u32>)> + '_ {
        texts
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.ids.is_empty())
            .map(|(i, t)| (i, t.ids.clone()))
    }
    let messages = with_words(&words.messages);
    let internal = with_words(&words.internal);
    let taken_back = with_words(&words.taken_back);
    messages
        .map(|(m, ids)| (SourceKind::Message(m), ids))
        .chain(internal.map(|(x, ids)| (SourceKind::Internal(x), ids)))
        .chain(taken_back.map(|(x, ids)| (SourceKind::TakenBack(x), ids)))
        .collect()
}

/// How many renderings of each source (in [`sources`] order) a correct display draws: a data
/// duplicate (`Holders::data_duplicate`) and a taken-back message none — but one of a
/// taken-back message this view may draw ([`Context::taken_back_here`]) — a message what
/// [`Context::allowed`] says, every other source one.
fn allowance(kinds: &[SourceKind], holders: &Holders, cx: &Context<'_>) -> Vec<usize> {
    kinds
        .iter()
        .map(|k| match k {
            SourceKind::Message(m) if holders.data_duplicate[*m] => 0,
            SourceKind::Message(m) => cx.allowed.map_or(1, |a| a.get(*m).copied().unwrap_or(1)),
            SourceKind::Internal(_) => 1,
            SourceKind::TakenBack(x) => usize::from(cx.taken_back_here.contains(x)),
        })
        .collect()
}

/// The taken-back messages the screen draws (a strong rendering of each), with their rows.
fn taken_back_drawn(expected: &Expected, words: &Words, cov: &Coverage) -> Vec<Missing> {
    expected
        .taken_back
        .iter()
        .zip(words.taken_back)
        .zip(&cov.taken_back)
        .filter(|(_, &drawn)| drawn)
        .map(|((t, tokens), _)| Missing {
            role: t.role,
            excerpt: excerpt(&t.text, 0..tokens.ids.len()),
            rows: t.rows.iter().map(|r| r.id).collect(),
        })
        .collect()
}

/// Every rendering the alignment found, as history rows.
fn drawn(
    renderings: &[Rendering],
    kinds: &[SourceKind],
    rows_of: &impl Fn((usize, usize)) -> (usize, usize),
) -> Vec<Drawn> {
    renderings
        .iter()
        .filter_map(|r| {
            let first = r.pieces.first()?;
            let last = r.pieces.last()?;
            let (message, internal, taken_back) = match kinds[r.source] {
                SourceKind::Message(m) => (Some(m), None, None),
                SourceKind::Internal(x) => (None, Some(x), None),
                SourceKind::TakenBack(x) => (None, None, Some(x)),
            };
            Some(Drawn {
                message,
                internal,
                taken_back,
                rows: rows_of((first.t, last.t + last.len - 1)),
                words: r.words(),
            })
        })
        .collect()
}

/// Where the screen draws a logical message or an internal text, as the alignment found it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Drawn {
    /// The logical message drawn (index into [`Expected::messages`]).
    pub message: Option<usize>,
    /// The internal text drawn (index into [`Expected::internal`]).
    pub internal: Option<usize>,
    /// The taken-back message drawn (index into [`Expected::taken_back`]).
    pub taken_back: Option<usize>,
    /// History rows (first, last; inclusive).
    pub rows: (usize, usize),
    /// Words of the text this rendering draws.
    pub words: usize,
}

/// `a()` on this thread and `b()` on a second one, at once; both results (a panic in `b` is
/// resumed here). How the oracle's large stages use both cores.
fn on_two_threads<A, B: Send>(a: impl FnOnce() -> A, b: impl FnOnce() -> B + Send) -> (A, B) {
    std::thread::scope(|scope| {
        let second = scope.spawn(b);
        let first = a();
        let second = second
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (first, second)
    })
}

/// Where to split `items` so that each side holds about half of their total `weight`: the count
/// of items up to the one at which half the weight has been passed.
fn halfway<T>(items: &[T], weight: impl Fn(&T) -> usize) -> usize {
    let total: usize = items.iter().map(&weight).sum();
    let mut passed = 0;
    items
        .iter()
        .position(|item| {
            passed += weight(item);
            passed >= total / 2
        })
        .map_or(items.len(), |i| i + 1)
}

#[cfg(test)]
mod tests;
