//! Which stretch of the screen renders which text.
//!
//! Alignment of the transcript's word stream to the expectation's texts: which stretch of the
//! screen renders which logical message (or internal text), and at which word of it.
//!
//! Input: word ids of the transcript and of every *source* (the expected logical messages, then
//! the internal texts). Output: [`Rendering`]s — each one source's words, drawn once, as pieces
//! of consecutive equal words, in screen order. Counting (see the parent module) happens on the
//! renderings; nothing here knows about allowances beyond the tie-breaks.
//!
//! # The scan
//! The transcript is read once, left to right. While the current rendering's next word equals the
//! transcript's, the rendering extends (a whole run at a time: [`Texts::lcp`], by hashing). Where
//! it stops — a *break* — three kinds of options are weighed:
//! - **continue** the current rendering after skipping at most [`GAP`] transcript words (chrome,
//!   a label, a word split by a panel border) and at most [`GAP`] words of its source (a code fence
//!   or a word the client drops), when at least [`ANCHOR`] words match there;
//! - **resume** a rendering that a shorter one interrupted (the same reattachment rule);
//! - **start** a new rendering at this position: any source position whose next
//!   [`SHINGLE_WORDS`] words match, a whole source shorter than that, or the first
//!   [`PREFIX_WORDS`] words of a message (a recap that cut a message early).
//!
//! Every option is scored by the words it explains from here on: a *walk* that follows the same
//! continuation rule until it cannot go on. A new rendering that interrupts the current one also
//! earns the words of the current one it lets resume afterwards. Going on after skipped screen
//! words is refused where a message is drawn among them ([`Texts::starts_instead`]: a whole
//! source from its first word to its last, or a rendering that explains more of the words from
//! where the continuation would land — as many, when it starts at a source's first word): the
//! current rendering was cut, and the skipped words are the next message, not chrome. The option
//! explaining most words wins; ties go to continuing, then resuming, then (between new renderings)
//! to a message over an
//! internal text, to a source not yet rendered as often as it is allowed (then: rendered fewer
//! times), to a whole source drawn from its first word to its last, to a start at a source's first
//! word, to the message next in display order, and to the earlier source position.
//!
//! # Why this finds the renderings
//! A rendering of a message is a stretch of the screen equal to that message's words, up to chrome
//! between them and the client's own edits (dropped fences, cut words); the gap rule bridges those,
//! and nothing else, because a bridge needs [`ANCHOR`] matching words at most [`GAP`] words away.
//! Where several sources hold the text at the break, the longest walk is the source the screen
//! follows furthest, which is the one being rendered unless the screen stops before the sources
//! differ (a truncated recap of a shared paragraph). Then nothing on the screen tells the holders
//! apart, and the tie-breaks give the rendering to a holder that has not had its allowed
//! renderings yet, in display order — which is how a correct display would have drawn them. Each
//! transcript word belongs to at most one rendering, so text that is on the screen once is never
//! counted for two messages, and a paragraph held by k messages is never counted k times.
//!
//! # Limits
//! - The scan is greedy: it never revisits a choice. A new rendering is preferred over a
//!   continuation only when it explains more words, so a message whose text is rendered with more
//!   than [`GAP`] foreign words inside it continues as a second rendering of the same message
//!   (disjoint positions: nothing counted twice).
//! - At most [`MAX_CANDIDATES`] start positions are weighed at one transcript position, and a walk
//!   scores at most [`WALK_PIECES`] pieces; only text that repeats itself hundreds of times at one
//!   place reaches either, and then the choice among equals is arbitrary, not the count.
//! - Message boundaries are seen only through words: two consecutive messages with no word
//!   between them on the screen (only borders, bullets, blank lines) read as one stream, so when
//!   their concatenation is another message's text, that message may be read instead. The real
//!   client draws a label or a panel title between messages (`cli.resume.label_you`, `Hermes`).
//! - A word the terminal or a panel splits inside (a URL longer than the panel) is two words on
//!   the screen and one in the source: the rendering bridges it as a gap, but the word itself is
//!   not covered.
//! - Equal words are decided by a 61-bit polynomial hash of word ids; a collision would need two
//!   different word sequences with equal hashes (probability ~ n / 2^61).
//!
//! Cost: the transcript is hashed once; each break weighs the candidates found at one position,
//! each by `O(WALK_PIECES · GAP² · log n)` hash probes; every transcript word is consumed once.

use std::ops::Range;

use super::{halfway, on_two_threads, PREFIX_WORDS, SHINGLE_WORDS};

/// Words a continuation may skip on either side (transcript chrome, dropped source words).
pub(super) const GAP: usize = SHINGLE_WORDS;

/// Words that must match after a skipped gap (fewer at the end of a source: all that remain).
pub(super) const ANCHOR: usize = 4;

/// Start positions weighed at one transcript position.
pub(super) const MAX_CANDIDATES: usize = 512;

/// Pieces a scoring walk follows.
pub(super) const WALK_PIECES: usize = 32;

const MODULUS: u64 = (1 << 61) - 1;
const BASE: u64 = 0x1f3d_5b79_a3c1_e5b7 % MODULUS;

fn mul_mod(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    let r = (p & u128::from(MODULUS)) + (p >> 61);
    let r = r as u64;
    if r >= MODULUS {
        r - MODULUS
    } else {
        r
    }
}

/// Prefix hashes of a word-id sequence.
#[derive(Clone, Debug, PartialEq)]
struct Hashed {
    ids: Vec<u32>,
    prefix: Vec<u64>,
}

impl Hashed {
    fn new(ids: Vec<u32>) -> Hashed {
        let mut prefix = Vec::with_capacity(ids.len() + 1);
        let mut h = 0u64;
        prefix.push(h);
        for &id in &ids {
            h = mul_mod(h, BASE) + u64::from(id) + 1;
            if h >= MODULUS {
                h -= MODULUS;
            }
            prefix.push(h);
        }
        Hashed { ids, prefix }
    }

    /// Hash of `ids[a..a + len]` (`pow[len]` = BASE^len).
    fn window(&self, a: usize, len: usize, pow: &[u64]) -> u64 {
        let hi = self.prefix[a + len];
        let lo = mul_mod(self.prefix[a], pow[len]);
        if hi >= lo {
            hi - lo
        } else {
            hi + MODULUS - lo
        }
    }
}

/// What a source is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SourceKind {
    /// Expected logical message (index into `Expected::messages`).
    Message(usize),
    /// Internal text (index into `Expected::internal`).
    Internal(usize),
    /// A message the user took back (index into `Expected::taken_back`).
    TakenBack(usize),
}

/// One piece of a rendering: `len` words from transcript position `t` equal to the source's words
/// from `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Piece {
    pub t: usize,
    pub at: usize,
    pub len: usize,
}

/// One rendering of one source: its pieces, in order (source positions increase).
#[derive(Debug, Clone)]
pub(super) struct Rendering {
    pub source: usize,
    pub pieces: Vec<Piece>,
}

impl Rendering {
    /// Source words covered.
    pub(super) fn words(&self) -> usize {
        self.pieces.iter().map(|p| p.len).sum()
    }

    /// First transcript position.
    pub(super) fn start(&self) -> usize {
        self.pieces.first().map_or(0, |p| p.t)
    }

    /// Transcript positions covering the source positions `range` (first, last inclusive).
    pub(super) fn screen_span(&self, range: &Range<usize>) -> Option<(usize, usize)> {
        let mut first = None;
        let mut last = None;
        for p in &self.pieces {
            let lo = p.at.max(range.start);
            let hi = (p.at + p.len).min(range.end);
            if lo < hi {
                first.get_or_insert(p.t + (lo - p.at));
                last = Some(p.t + (hi - p.at) - 1);
            }
        }
        Some((first?, last?))
    }
}

/// The expectation's side of the alignment: its texts hashed, with the start index. It depends on
/// the expectation alone, so it is made with [`super::PreparedExpected`] (while the transcript is read).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Index {
    sources: Vec<Hashed>,
    kinds: Vec<SourceKind>,
    /// How many of the sources are messages (counted once: every break of the alignment asks).
    messages: usize,
    /// `pow[n]` = BASE^n, up to the longest source (and at least to [`SHINGLE_WORDS`]).
    pow: Vec<u64>,
    /// (hash of a SHINGLE_WORDS window, source, position), sorted.
    shingles: Vec<Shingle>,
    /// (length, hash, source) of whole sources shorter than SHINGLE_WORDS, sorted.
    short: Vec<(usize, u64, u32)>,
    /// Lengths present in `short`, ascending.
    short_lengths: Vec<usize>,
    /// (hash of the first PREFIX_WORDS words, source) of messages longer than PREFIX_WORDS.
    prefixes: Vec<(u64, u32)>,
}

/// The texts being aligned: the transcript hashed, and the expectation's [`Index`].
pub(super) struct Texts<'a> {
    transcript: Hashed,
    /// `pow[n]` = BASE^n: the index's own (no window is longer than a source, or than
    /// [`SHINGLE_WORDS`]).
    pow: &'a [u64],
    index: &'a Index,
}

/// BASE^0 … BASE^`longest`.
fn powers(longest: usize) -> Vec<u64> {
    let mut pow = Vec::with_capacity(longest + 1);
    let mut x = 1u64;
    for _ in 0..=longest {
        pow.push(x);
        x = mul_mod(x, BASE);
    }
    pow
}

/// A candidate option at a break, with its walk.
#[derive(Debug, Clone, Copy)]
struct Walk {
    matched: usize,
    end_t: usize,
}

/// Words of sources from which an [`Index`] is made on two threads (a 10,000-message session has
/// a million; a few hundred messages, tens of thousands).
const PARALLEL_WORDS: usize = 1 << 18;

/// A `(hash, source, position)` entry of the shingle index.
pub(super) type Shingle = (u64, u32, u32);

/// Some consecutive sources hashed, with their index entries (unsorted).
#[derive(Default)]
struct Part {
    kinds: Vec<SourceKind>,
    hashed: Vec<Hashed>,
    shingles: Vec<Shingle>,
    short: Vec<(usize, u64, u32)>,
    prefixes: Vec<(u64, u32)>,
}

impl Part {
    /// Hashes `sources`, the first of which is source number `first`, and lists their index
    /// entries in (source, position) order.
    fn new(sources: Vec<(SourceKind, Vec<u32>)>, first: usize, pow: &[u64]) -> Part {
        let windows: usize = sources
            .iter()
            .map(|(_, ids)| (ids.len() + 1).saturating_sub(SHINGLE_WORDS))
            .sum();
        let mut part = Part {
            kinds: Vec::with_capacity(sources.len()),
            hashed: Vec::with_capacity(sources.len()),
            shingles: Vec::with_capacity(windows),
            ..Part::default()
        };
        for (k, (kind, ids)) in sources.into_iter().enumerate() {
            let h = Hashed::new(ids);
            let len = h.ids.len();
            let s32 = (first + k) as u32;
            if len >= SHINGLE_WORDS {
                for i in 0..=len - SHINGLE_WORDS {
                    part.shingles
                        .push((h.window(i, SHINGLE_WORDS, pow), s32, i as u32));
                }
            } else if len > 0 {
                part.short.push((len, h.window(0, len, pow), s32));
            }
            if len > PREFIX_WORDS && matches!(kind, SourceKind::Message(_)) {
                part.prefixes.push((h.window(0, PREFIX_WORDS, pow), s32));
            }
            part.kinds.push(kind);
            part.hashed.push(h);
        }
        part
    }
}

impl Index {
    /// Hashes the sources and indexes every start position (on two threads when they are many
    /// words: the same index).
    pub(super) fn new(sources: Vec<(SourceKind, Vec<u32>)>) -> Index {
        let total: usize = sources.iter().map(|(_, ids)| ids.len()).sum();
        Index::made(sources, total >= PARALLEL_WORDS)
    }

    /// [`Index::new`], on two threads or on this one: the same index.
    pub(super) fn made(mut sources: Vec<(SourceKind, Vec<u32>)>, two_threads: bool) -> Index {
        let longest = sources.iter().map(|(_, ids)| ids.len()).max().unwrap_or(0);
        // Every window a transcript is hashed in is at most a source long, or SHINGLE_WORDS.
        let pow = powers(longest.max(SHINGLE_WORDS).max(PREFIX_WORDS));
        let (mut first, second) = if !two_threads {
            (Part::new(sources, 0, &pow), Part::default())
        } else {
            let half = halfway(&sources, |(_, ids)| ids.len());
            let rest = sources.split_off(half);
            on_two_threads(
                || Part::new(sources, 0, &pow),
                || Part::new(rest, half, &pow),
            )
        };
        let shingles = sort_by_hash(&[&first.shingles, &second.shingles], two_threads);
        first.kinds.extend(second.kinds);
        first.hashed.extend(second.hashed);
        first.short.extend(second.short);
        first.prefixes.extend(second.prefixes);
        let Part {
            kinds,
            hashed,
            mut short,
            mut prefixes,
            ..
        } = first;
        short.sort_unstable();
        prefixes.sort_unstable();
        let mut short_lengths: Vec<usize> = short.iter().map(|s| s.0).collect();
        short_lengths.dedup();
        Index {
            sources: hashed,
            messages: kinds
                .iter()
                .filter(|k| matches!(k, SourceKind::Message(_)))
                .count(),
            kinds,
            pow,
            shingles,
            short,
            short_lengths,
            prefixes,
        }
    }

    /// What each source is, in source order.
    pub(super) fn kinds(&self) -> &[SourceKind] {
        &self.kinds
    }
}

impl<'a> Texts<'a> {
    /// Hashes the transcript, to be aligned to the sources of `index`.
    pub(super) fn new(transcript: Vec<u32>, index: &'a Index) -> Texts<'a> {
        Texts {
            transcript: Hashed::new(transcript),
            pow: &index.pow,
            index,
        }
    }

    fn t_len(&self) -> usize {
        self.transcript.ids.len()
    }

    fn s_len(&self, s: usize) -> usize {
        self.index.sources[s].ids.len()
    }

    /// Longest common run of the transcript from `t` and source `s` from `at`.
    fn lcp(&self, t: usize, s: usize, at: usize) -> usize {
        let src = &self.index.sources[s];
        let max = (self.t_len() - t.min(self.t_len())).min(src.ids.len() - at.min(src.ids.len()));
        if max == 0 || self.transcript.ids[t] != src.ids[at] {
            return 0;
        }
        // Short runs directly; long ones by galloping over hashes.
        let direct = max.min(16);
        let mut k = 1;
        while k < direct && self.transcript.ids[t + k] == src.ids[at + k] {
            k += 1;
        }
        if k < direct || k == max {
            return k;
        }
        let same =
            |len: usize| self.transcript.window(t, len, self.pow) == src.window(at, len, self.pow);
        let mut good = k;
        let mut step = k;
        loop {
            let probe = (good + step).min(max);
            if same(probe) {
                good = probe;
                if good == max {
                    return max;
                }
                step *= 2;
            } else {
                // Binary search in (good, probe).
                let (mut lo, mut hi) = (good, probe);
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if same(mid) {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                return lo;
            }
        }
    }

    /// Where source `s`, expected next at `at`, goes on after transcript position `t`: the
    /// nearest (`dt`, `ds`) with `dt, ds <= GAP` and `dt + ds >= min_d` at which at least
    /// [`ANCHOR`] words (or all that remain) match.
    fn reattach(&self, t: usize, s: usize, at: usize, min_d: usize) -> Option<(usize, usize)> {
        let s_len = self.s_len(s);
        if at >= s_len || t >= self.t_len() {
            return None;
        }
        for d in min_d..=2 * GAP {
            for dt in d.saturating_sub(GAP)..=d.min(GAP) {
                let ds = d - dt;
                if t + dt >= self.t_len() || at + ds >= s_len {
                    continue;
                }
                let need = ANCHOR.min(s_len - (at + ds));
                if self.lcp(t + dt, s, at + ds) >= need {
                    return Some((dt, ds));
                }
            }
        }
        None
    }

    /// Words explained by following source `s` from (`t`, `at`) with the continuation rule. With
    /// `boundaries`, the walk stops where skipping screen words would run into a new rendering
    /// that explains more (see [`Texts::starts_instead`]).
    fn walk(&self, mut t: usize, s: usize, mut at: usize, boundaries: bool) -> Walk {
        let mut matched = 0;
        for _ in 0..WALK_PIECES {
            let run = self.lcp(t, s, at);
            matched += run;
            t += run;
            at += run;
            match self.reattach(t, s, at, 1) {
                Some((dt, ds)) => {
                    if boundaries && dt > 0 {
                        let rest = self.walk(t + dt, s, at + ds, false).matched;
                        if self.starts_instead(t, t + dt, rest).is_some() {
                            break;
                        }
                    }
                    t += dt;
                    at += ds;
                }
                None => break,
            }
        }
        Walk { matched, end_t: t }
    }

    /// Where a new rendering begins among the screen words `from..=land` that a continuation
    /// would skip to go on at `land` (explaining `rest` words from there), if one does: a whole
    /// source drawn from its first word to its last, or a rendering that explains more of the
    /// words from `land` on than the continuation (as many, when it starts at a source's first
    /// word). Continuing after skipped screen words is how
    /// a rendering crosses chrome; a message drawn among those words, or where the continuation
    /// would land, is the likelier reading.
    fn starts_instead(&self, from: usize, land: usize, rest: usize) -> Option<usize> {
        (from..=land).find(|&t| {
            self.candidates(t).into_iter().any(|(s, at)| {
                if !self.start_matches(t, s, at) {
                    return false;
                }
                let w = self.walk(t, s, at, false);
                let whole = at == 0 && w.matched == self.s_len(s);
                // Words explained from `land` on (the walk is contiguous in the common case).
                let beyond = w.matched.saturating_sub(land - t);
                // A source's first word is where renderings begin: there, as many words win.
                whole || beyond > rest || (at == 0 && beyond > 0 && beyond == rest)
            })
        })
    }

    /// Source positions whose text may start a rendering at transcript position `t`.
    fn candidates(&self, t: usize) -> Vec<(usize, usize)> {
        let left = self.t_len() - t;
        let mut out: Vec<(usize, usize)> = Vec::new();
        if left >= SHINGLE_WORDS {
            let h = self.transcript.window(t, SHINGLE_WORDS, self.pow);
            out.extend(
                entries(&self.index.shingles, h, |e| e.0).map(|e| (e.1 as usize, e.2 as usize)),
            );
        }
        for &len in &self.index.short_lengths {
            if len > left {
                break;
            }
            let h = self.transcript.window(t, len, self.pow);
            out.extend(
                entries(&self.index.short, (len, h), |e| (e.0, e.1)).map(|e| (e.2 as usize, 0)),
            );
        }
        if left >= PREFIX_WORDS {
            let h = self.transcript.window(t, PREFIX_WORDS, self.pow);
            out.extend(entries(&self.index.prefixes, h, |e| e.0).map(|e| (e.1 as usize, 0)));
        }
        out.sort_unstable();
        out.dedup();
        out.truncate(MAX_CANDIDATES);
        out
    }

    /// Whether a start at (`s`, `at`) found by [`Texts::candidates`] really matches at `t`.
    fn start_matches(&self, t: usize, s: usize, at: usize) -> bool {
        let s_len = self.s_len(s);
        let run = self.lcp(t, s, at);
        if s_len < SHINGLE_WORDS {
            run == s_len
        } else if at == 0 {
            run >= PREFIX_WORDS
        } else {
            run >= SHINGLE_WORDS
        }
    }
}

/// The entries of `parts`, in order, sorted as `sort_unstable` of the tuples would sort them, for
/// the shingle index: one counting pass on each hash's top bits, then each bucket sorted on its
/// own. The hashes are spread evenly below 2^61 (a polynomial hash modulo 2^61 − 1), so with
/// about four entries a bucket the whole sort is two passes over memory, where a radix sort on
/// 16-bit digits scatters its writes over 65,536 buckets a pass (docs/performance.md). Skewed
/// hashes only make the buckets larger: each is still sorted. With `two_threads`, the lower and
/// the upper half of the buckets are filled and sorted on two threads.
pub(super) fn sort_by_hash(parts: &[&[Shingle]], two_threads: bool) -> Vec<Shingle> {
    let n: usize = parts.iter().map(|p| p.len()).sum();
    // About four entries a bucket: 2^(floor(log2 n) - 2) buckets, at most 2^20.
    let bits = (usize::BITS - 1 - n.max(1).leading_zeros())
        .saturating_sub(2)
        .clamp(1, 20);
    let buckets = 1usize << bits;
    let shift = 61 - bits;
    let bucket = |e: &Shingle| ((e.0 >> shift) as usize).min(buckets - 1);
    let all = || parts.iter().flat_map(|p| p.iter());
    let mut starts = vec![0usize; buckets + 1];
    for e in all() {
        starts[bucket(e) + 1] += 1;
    }
    for b in 1..=buckets {
        starts[b] += starts[b - 1];
    }
    // Buckets `lo..hi`, into `out` (the part of the result where they go).
    let fill = |out: &mut [Shingle], lo: usize, hi: usize| {
        let base = starts[lo];
        let mut next: Vec<usize> = starts[lo..hi].iter().map(|s| s - base).collect();
        for e in all() {
            let b = bucket(e);
            if (lo..hi).contains(&b) {
                out[next[b - lo]] = *e;
                next[b - lo] += 1;
            }
        }
        for b in lo..hi {
            let (from, to) = (starts[b] - base, starts[b + 1] - base);
            if to - from > 1 {
                out[from..to].sort_unstable();
            }
        }
    };
    let mut sorted = vec![(0u64, 0u32, 0u32); n];
    if two_threads {
        let mid = buckets / 2;
        let (low, high) = sorted.split_at_mut(starts[mid]);
        on_two_threads(|| fill(low, 0, mid), || fill(high, mid, buckets));
    } else {
        fill(&mut sorted, 0, buckets);
    }
    sorted
}

/// The entries of `index` (sorted) whose `key` is `want`, at most [`MAX_CANDIDATES`] of them: one
/// lookup in [`Texts`]'s shingle, short-source and prefix indexes.
fn entries<E, K: Ord>(index: &[E], want: K, key: impl Fn(&E) -> K) -> impl Iterator<Item = &E> {
    let from = index.partition_point(|e| key(e) < want);
    index[from..]
        .iter()
        .take_while(move |e| key(e) == want)
        .take(MAX_CANDIDATES)
}

/// A rendering being built.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// Index into the renderings.
    r: usize,
    s: usize,
    /// Next source position expected.
    at: usize,
}

/// Aligns the transcript to the sources. `allowance[s]` is how often source `s` may be rendered
/// (used only to break ties between holders of equal text).
pub(super) fn align(texts: &Texts, allowance: &[usize]) -> Vec<Rendering> {
    let n = texts.t_len();
    let mut out: Vec<Rendering> = Vec::new();
    let mut uses = vec![0usize; texts.index.sources.len()];
    let mut last_message = 0usize;
    let mut cur: Option<Open> = None;
    // A rendering interrupted by another one, and where it was interrupted.
    let mut suspended: Option<(Open, usize)> = None;
    let mut t = 0;
    while t < n {
        if let Some(c) = &mut cur {
            let run = texts.lcp(t, c.s, c.at);
            if run > 0 {
                out[c.r].pieces.push(Piece {
                    t,
                    at: c.at,
                    len: run,
                });
                t += run;
                c.at += run;
                continue;
            }
        }
        // A break: weigh continuing, resuming and starting anew. Going on after skipped screen
        // words is refused where a new rendering begins among them (`starts_instead`): the
        // current one was cut (as a recap cuts a reply) and a message was drawn there.
        let unfinished = cur.filter(|c| c.at < texts.s_len(c.s));
        let go_on = |c: Open, min_d: usize| -> Option<(usize, usize, usize)> {
            let (dt, ds) = texts.reattach(t, c.s, c.at, min_d)?;
            let score = texts.walk(t + dt, c.s, c.at + ds, true).matched;
            if dt > 0 && texts.starts_instead(t, t + dt, score).is_some() {
                return None;
            }
            Some((dt, ds, score))
        };
        let cont = unfinished.and_then(|c| go_on(c, 1));
        let resume = suspended.and_then(|(c, _)| go_on(c, 0));
        let pending = unfinished.or(suspended.map(|(c, _)| c));
        let fresh = best_start(texts, t, pending, allowance, &uses, last_message);
        let cont_score = cont.map_or(0, |c| c.2);
        let resume_score = resume.map_or(0, |c| c.2);
        let fresh_score = fresh.map_or(0, |f| f.score);
        if cont_score > 0 && cont_score >= resume_score && cont_score >= fresh_score {
            let (dt, ds, _) = cont.expect("scored");
            let c = cur.as_mut().expect("unfinished");
            t += dt;
            c.at += ds;
        } else if resume_score > 0 && resume_score >= fresh_score {
            let (dt, ds, _) = resume.expect("scored");
            let (mut c, _) = suspended.take().expect("suspended");
            t += dt;
            c.at += ds;
            cur = Some(c);
        } else if let Some(Start { s, at, .. }) = fresh {
            if let Some(c) = unfinished {
                suspended = Some((c, t));
            }
            out.push(Rendering {
                source: s,
                pieces: Vec::new(),
            });
            uses[s] += 1;
            if let SourceKind::Message(m) = texts.index.kinds[s] {
                last_message = m;
            }
            cur = Some(Open {
                r: out.len() - 1,
                s,
                at,
            });
        } else {
            if let Some(c) = unfinished {
                suspended = Some((c, t));
            }
            cur = None;
            t += 1;
            // A suspended rendering goes on within a gap of screen words, or not at all.
            if suspended.is_some_and(|(_, since)| t > since + 2 * GAP) {
                suspended = None;
            }
        }
    }
    out.retain(|r| !r.pieces.is_empty());
    out
}

/// How a new rendering is ranked: words explained, a message over internal text, a holder below
/// its allowance, fewer renderings so far, the whole source drawn, a start at its first word,
/// display order after the previous message.
type StartKey = (
    usize,
    bool,
    bool,
    std::cmp::Reverse<usize>,
    bool,
    bool,
    std::cmp::Reverse<usize>,
);

/// A new rendering weighed at a break.
#[derive(Debug, Clone, Copy)]
struct Start {
    s: usize,
    at: usize,
    /// Words its walk explains (plus those of an interrupted rendering it lets resume).
    score: usize,
}

/// The best new rendering starting at `t`.
fn best_start(
    texts: &Texts,
    t: usize,
    interrupted: Option<Open>,
    allowance: &[usize],
    uses: &[usize],
    last_message: usize,
) -> Option<Start> {
    let messages = texts.index.messages;
    let mut best: Option<(StartKey, usize, usize)> = None;
    for (s, at) in texts.candidates(t) {
        if !texts.start_matches(t, s, at) {
            continue;
        }
        let w = texts.walk(t, s, at, true);
        // Interrupting a rendering earns the words it lets resume afterwards.
        let resumed = interrupted
            .and_then(|c| {
                let (dt, ds) = texts.reattach(w.end_t, c.s, c.at, 0)?;
                Some(texts.walk(w.end_t + dt, c.s, c.at + ds, true).matched)
            })
            .unwrap_or(0);
        let score = w.matched + resumed;
        let (is_message, order) = match texts.index.kinds[s] {
            SourceKind::Message(m) => {
                let distance = if m >= last_message {
                    m - last_message
                } else {
                    messages + (last_message - m)
                };
                (true, distance)
            }
            SourceKind::Internal(_) | SourceKind::TakenBack(_) => (false, usize::MAX),
        };
        let key = (
            score,
            is_message,
            uses[s] < allowance[s],
            std::cmp::Reverse(uses[s]),
            at == 0 && w.matched == texts.s_len(s),
            at == 0,
            std::cmp::Reverse(order),
        );
        let better = match &best {
            None => true,
            Some((k, bs, bat)) => {
                (key, std::cmp::Reverse((s, at))) > (*k, std::cmp::Reverse((*bs, *bat)))
            }
        };
        if better {
            best = Some((key, s, at));
        }
    }
    best.map(|(k, s, at)| Start { s, at, score: k.0 })
}

/// How often each message's text was said: the number of utterances of its role (`roles[m]`:
/// `Some(true)` user, `Some(false)` assistant, `None` neither) that hold its words contiguously.
/// Too much work (many distinct lengths over long logs) gives zeros: no data cause is claimed.
pub(super) fn said_counts(
    messages: &[&[u32]],
    roles: &[Option<bool>],
    user: &[Vec<u32>],
    assistant: &[Vec<u32>],
) -> Vec<usize> {
    const MAX_WORK: usize = 50_000_000;
    let mut out = vec![0usize; messages.len()];
    let longest = messages
        .iter()
        .map(|m| m.len())
        .chain(user.iter().chain(assistant).map(Vec::len))
        .max()
        .unwrap_or(0);
    let mut pow = Vec::with_capacity(longest + 1);
    let mut x = 1u64;
    for _ in 0..=longest {
        pow.push(x);
        x = mul_mod(x, BASE);
    }
    for (role, utterances) in [(true, user), (false, assistant)] {
        let hashed: Vec<Hashed> = utterances.iter().map(|u| Hashed::new(u.clone())).collect();
        // Messages of this role by length.
        let mut by_len: std::collections::BTreeMap<usize, Vec<(u64, usize)>> = Default::default();
        for (m, ids) in messages.iter().enumerate() {
            if roles[m] == Some(role) && !ids.is_empty() {
                let h = Hashed::new(ids.to_vec()).window(0, ids.len(), &pow);
                by_len.entry(ids.len()).or_default().push((h, m));
            }
        }
        let total: usize = hashed.iter().map(|h| h.ids.len()).sum();
        if by_len.len().saturating_mul(total) > MAX_WORK {
            continue;
        }
        for (len, wanted) in &by_len {
            for u in &hashed {
                if u.ids.len() < *len {
                    continue;
                }
                let mut found: Vec<u64> = (0..=u.ids.len() - len)
                    .map(|a| u.window(a, *len, &pow))
                    .collect();
                found.sort_unstable();
                found.dedup();
                for (h, m) in wanted {
                    if found.binary_search(h).is_ok() {
                        out[*m] += 1;
                    }
                }
            }
        }
    }
    out
}
