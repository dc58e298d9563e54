//! Both sides as word ids over one vocabulary.
//!
//! The oracle's first stage: both sides as word ids over one vocabulary (the expectation's), the
//! excerpts findings quote from the original text, and the fast hash map the stages key on
//! word-id slices. The expectation's side ([`Vocabulary`]) is made on its own, so that it can be
//! made once and while the transcript is read (`super::PreparedExpected`); a large one on two threads.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

use crate::display::Expected;
use crate::terminal::{Transcript, TranscriptLine};
use crate::words::each_word;

use super::{halfway, on_two_threads};

/// Words shown in an excerpt.
const EXCERPT_WORDS: usize = 8;

/// Characters an excerpt is capped at (a "word" can be a 10 kB URL).
const EXCERPT_CHARS: usize = 120;

/// Transcript lines from which the words of a transcript are looked up on two threads (a 1M-word
/// transcript has ~35,000 lines; a session's, a few hundred).
pub(super) const PARALLEL_LINES: usize = 4096;

/// Word id that never matches: transcript / provider words that no expected text contains.
const UNKNOWN: u32 = u32::MAX;

/// The words of one expected-side text as ids. (Their byte ranges, which only an excerpt
/// needs, are found again for the texts quoted ([`word_ranges`]): keeping them for every word was
/// a quarter of a 1M-word check's memory.)
#[derive(Clone)]
pub(super) struct Tokens {
    pub(super) ids: Vec<u32>,
}
/// The expectation's side as word ids: the vocabulary, and every message's, internal text's and
/// taken-back message's words. It depends on the expectation alone, so it can be made while the transcript is still
/// being read ([`super::PreparedExpected`]).
#[derive(Clone, Default)]
pub(super) struct Vocabulary {
    pub(super) vocab: FastMap<String, u32>,
    pub(super) messages: Vec<Tokens>,
    pub(super) internal: Vec<Tokens>,
    pub(super) taken_back: Vec<Tokens>,
}

impl Vocabulary {
    pub(super) fn new(expected: &Expected) -> Vocabulary {
        let texts: Vec<&str> = (expected.messages.iter().map(|m| m.text.as_str()))
            .chain(expected.internal.iter().map(|t| t.text.as_str()))
            .chain(expected.taken_back.iter().map(|t| t.text.as_str()))
            .collect();
        let (vocab, mut tokens) = tokenize_all(&texts);
        let taken_back = tokens.split_off(expected.messages.len() + expected.internal.len());
        let internal = tokens.split_off(expected.messages.len());
        Vocabulary {
            vocab,
            messages: tokens,
            internal,
            taken_back,
        }
    }
}

/// Bytes of expected text from which the vocabulary is made on two threads (a 10,000-message
/// session has 6 MB; a few hundred messages, a few kB).
const PARALLEL_BYTES: usize = 1 << 20;

/// The words of `texts` as ids, numbered in order of first appearance, and that numbering.
/// Large inputs are read on two threads ([`tokenize_split`]).
fn tokenize_all(texts: &[&str]) -> (FastMap<String, u32>, Vec<Tokens>) {
    let total: usize = texts.iter().map(|t| t.len()).sum();
    if total < PARALLEL_BYTES {
        return tokenize_split(texts, texts.len());
    }
    let half = halfway(texts, |t| t.len());
    tokenize_split(texts, half)
}

/// [`tokenize_all`] with `texts[half..]` read on a second thread, with its own numbering, and
/// its words renumbered into the first half's in order of first appearance: the same ids as one
/// pass over all of them (`half == texts.len()`: one pass, on this thread).
pub(super) fn tokenize_split(texts: &[&str], half: usize) -> (FastMap<String, u32>, Vec<Tokens>) {
    let read = |texts: &[&str]| {
        let mut numbering = Numbering::default();
        let tokens: Vec<Tokens> = texts.iter().map(|t| numbering.tokenize(t)).collect();
        (numbering, tokens)
    };
    if half >= texts.len() {
        let (numbering, tokens) = read(texts);
        return (numbering.ids, tokens);
    }
    let ((mut first, mut tokens), (second, rest)) =
        on_two_threads(|| read(&texts[..half]), || read(&texts[half..]));
    let renumber: Vec<u32> = second.words().into_iter().map(|w| first.id(w)).collect();
    tokens.extend(rest.into_iter().map(|mut t| {
        for id in &mut t.ids {
            *id = renumber[*id as usize];
        }
        t
    }));
    (first.ids, tokens)
}

/// Words numbered in order of first appearance.
#[derive(Default)]
struct Numbering {
    ids: FastMap<String, u32>,
}

impl Numbering {
    /// The id of `word`, a new one (the next number) the first time.
    fn id(&mut self, word: &str) -> u32 {
        if let Some(&id) = self.ids.get(word) {
            return id;
        }
        let next = u32::try_from(self.ids.len())
            .unwrap_or(UNKNOWN - 1)
            .min(UNKNOWN - 1);
        self.ids.insert(word.to_owned(), next);
        next
    }

    /// The words of an expected-side text, numbered.
    fn tokenize(&mut self, text: &str) -> Tokens {
        let mut ids = Vec::new();
        each_word(text, &mut |_, word| ids.push(self.id(word)));
        Tokens { ids }
    }

    /// The words, in id order.
    fn words(&self) -> Vec<&str> {
        let mut words = vec![""; self.ids.len()];
        for (w, &id) in &self.ids {
            words[id as usize] = w;
        }
        words
    }
}

/// Both sides as word ids; the vocabulary is the expectation's (a transcript or provider word
/// no expected text holds is [`UNKNOWN`]).
pub(super) struct Words<'a> {
    pub(super) vocab: &'a FastMap<String, u32>,
    pub(super) messages: &'a [Tokens],
    pub(super) internal: &'a [Tokens],
    pub(super) taken_back: &'a [Tokens],
    /// The transcript as one word stream.
    pub(super) transcript: Vec<u32>,
    /// The transcript line of each word of the stream.
    pub(super) line_of: Vec<usize>,
}

impl<'a> Words<'a> {
    pub(super) fn new(transcript: &Transcript, expected: &'a Vocabulary) -> Words<'a> {
        let mut words = Words {
            vocab: &expected.vocab,
            messages: &expected.messages,
            internal: &expected.internal,
            taken_back: &expected.taken_back,
            transcript: Vec::new(),
            line_of: Vec::new(),
        };
        let lines = &transcript.lines;
        let (transcript, line_of) = if lines.len() < PARALLEL_LINES {
            words.stream(lines, 0)
        } else {
            // The second half on another thread (the vocabulary is only read): the same stream.
            let half = lines.len() / 2;
            let (first, second) = on_two_threads(
                || words.stream(&lines[..half], 0),
                || words.stream(&lines[half..], half),
            );
            ([first.0, second.0].concat(), [first.1, second.1].concat())
        };
        words.transcript = transcript;
        words.line_of = line_of;
        words
    }

    /// The word ids of `lines` (the transcript's lines from index `first`), with the line of
    /// each word.
    pub(super) fn stream(&self, lines: &[TranscriptLine], first: usize) -> (Vec<u32>, Vec<usize>) {
        let (mut ids, mut line_of) = (Vec::new(), Vec::new());
        for (k, line) in lines.iter().enumerate() {
            for id in self.lookup(&line.text) {
                ids.push(id);
                line_of.push(first + k);
            }
        }
        (ids, line_of)
    }

    /// The words of a screen or provider text, as ids of the vocabulary.
    pub(super) fn lookup(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        each_word(text, &mut |_, w| {
            ids.push(self.vocab.get(w).copied().unwrap_or(UNKNOWN))
        });
        ids
    }
}

/// The first text (index) with the same words, for each text.
pub(super) fn same_as(tokens: &[Tokens]) -> Vec<usize> {
    let mut first: FastMap<&[u32], usize> = FastMap::default();
    tokens
        .iter()
        .enumerate()
        .map(|(i, t)| *first.entry(&t.ids).or_insert(i))
        .collect()
}

/// The byte range of each word of `text`, in order.
pub(super) fn word_ranges(text: &str) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    each_word(text, &mut |range, _| ranges.push(range));
    ranges
}

/// The original text of the words `range` of `text` (at most [`EXCERPT_WORDS`]), whitespace
/// collapsed and control characters removed, with `…` when the passage goes on. Only the quoted
/// words' ranges are kept, so a long text costs one pass and no memory.
pub(super) fn excerpt(text: &str, range: Range<usize>) -> String {
    let last = range.end.min(range.start + EXCERPT_WORDS);
    let (mut quoted, mut count) = (Vec::new(), 0);
    each_word(text, &mut |span, _| {
        if (range.start..last).contains(&count) {
            quoted.push(span);
        }
        count += 1;
    });
    let (Some(from), Some(to)) = (quoted.first(), quoted.last()) else {
        return String::new();
    };
    let reaches_end = range.start + quoted.len() == count;
    passage(
        text,
        from.start,
        to.end,
        reaches_end,
        range.start + quoted.len() < range.end,
    )
}

/// [`excerpt`] with the text's [`word_ranges`] at hand (several excerpts of one text).
pub(super) fn excerpt_in(text: &str, spans: &[Range<usize>], range: Range<usize>) -> String {
    let end = range.end.min(spans.len()).min(range.start + EXCERPT_WORDS);
    if range.start >= end {
        return String::new();
    }
    let (from, to) = (spans[range.start].start, spans[end - 1].end);
    passage(text, from, to, end == spans.len(), end < range.end)
}

/// The excerpt of `text[from..to]` (a passage reaching the end of the text keeps its closing
/// punctuation), with `…` when `cut` (more words were asked for) or it is capped.
fn passage(text: &str, from: usize, to: usize, reaches_end: bool, cut: bool) -> String {
    let to = if reaches_end { text.len() } else { to };
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
    if cut || out.chars().count() == EXCERPT_CHARS {
        out.push_str(" …");
    }
    out
}

/// A small, fast, non-cryptographic hasher (FxHash) for word-id slices: the keys are not
/// attacker-chosen in a way that matters here, and SipHash would dominate the run time.
#[derive(Default)]
pub(super) struct FxHasher(u64);

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

pub(super) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
