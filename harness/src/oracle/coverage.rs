//! What the renderings cover; missing messages and their order.
//!
//! The oracle's third stage: what the renderings cover — each message's word positions and how
//! often they are drawn, the runs beyond the allowance — then the missing messages and the
//! positions `out_of_order` is counted on.

use std::ops::Range;

use crate::display::Expected;

use super::align::{Rendering, SourceKind};
use super::holders::Holders;
use super::vocabulary::{excerpt, Words};
use super::{Missing, SHINGLE_WORDS};

/// What the renderings cover.
pub(super) struct Coverage {
    /// Renderings of each message, in screen order.
    pub(super) by_message: Vec<Vec<usize>>,
    /// How many strong renderings cover each word position of each message.
    pub(super) cover: Vec<Vec<u32>>,
    /// Word positions of each internal text (per group of identical texts) drawn at least once.
    pub(super) internal: Vec<Vec<bool>>,
    /// Each rendering with word positions beyond the allowance, and those positions as runs.
    pub(super) surplus: Vec<(usize, Vec<Range<usize>>)>,
    /// Each taken-back message has a strong rendering (at least [`SHINGLE_WORDS`] of its words,
    /// or all of them).
    pub(super) taken_back: Vec<bool>,
}

impl Coverage {
    pub(super) fn new(
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
            taken_back: vec![false; words.taken_back.len()],
        };
        let mut strong_taken_back = vec![0; words.taken_back.len()];
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
                SourceKind::TakenBack(x) => {
                    let strong = SHINGLE_WORDS.min(words.taken_back[x].ids.len());
                    if rendering.words() >= strong {
                        // Drawn beyond what this view may draw of it (none, or the composer's
                        // one copy after `/undo`).
                        strong_taken_back[x] += 1;
                        cov.taken_back[x] |= strong_taken_back[x] > allowance[rendering.source];
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
pub(super) fn missing_and_positions(
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
                excerpt: excerpt(&msg.text, 0..tokens.ids.len()),
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

/// Indexes of `seq` outside one longest non-decreasing subsequence (patience sorting with back
/// links, O(k log k)): equal positions may follow each other.
pub(super) fn outside_longest_run(seq: &[usize]) -> Vec<usize> {
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
