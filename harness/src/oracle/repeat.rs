//! One repeat for each surplus run of a rendering.
//!
//! The oracle's last stage: one [`Repeat`] for each surplus run of a rendering — its words, how
//! often the passage is drawn, its screen rows (allowed and surplus), the stored rows it is
//! attributed to, and its excerpt.

use std::ops::Range;

use crate::display::{Expected, LogicalMessage, RowRef};

use super::align::{Rendering, SourceKind};
use super::coverage::Coverage;
use super::holders::Holders;
use super::vocabulary::{excerpt, excerpt_in, word_ranges, FastMap};
use super::{Cause, Repeat};

/// Earlier renderings examined per repeat to list the allowed ones (a message rendered thousands of
/// times lists the first ones only; the counts are not capped).
const MAX_LISTED: usize = 64;

/// Bytes of a message's text up to which its word ranges are kept while its repeats are
/// described (16 bytes a word: a 1 GB message would need gigabytes).
const RANGED_BYTES: usize = 1 << 20;

/// What the stages before found, for [`repeats`].
pub(super) struct Surplus<'a> {
    pub(super) expected: &'a Expected,
    pub(super) holders: &'a Holders,
    pub(super) cov: &'a Coverage,
    pub(super) renderings: &'a [Rendering],
    pub(super) kinds: &'a [SourceKind],
    /// Why each message's surplus renderings happened.
    pub(super) causes: &'a [Cause],
}

/// One [`Repeat`] for each surplus run of each rendering, in screen order.
pub(super) fn repeats<F: Fn((usize, usize)) -> (usize, usize)>(
    x: &Surplus<'_>,
    rows_of: &F,
) -> Vec<Repeat> {
    let Surplus {
        expected,
        holders,
        cov,
        renderings,
        kinds,
        causes,
    } = *x;
    let mut repeats = Vec::new();
    // The word ranges of each message quoted, found once however many runs quote it (up to
    // RANGED_BYTES of text: a longer message is segmented again for each excerpt, in no memory).
    let mut ranges: FastMap<usize, Vec<Range<usize>>> = FastMap::default();
    for (r, runs) in &cov.surplus {
        let SourceKind::Message(m) = kinds[renderings[*r].source] else {
            continue;
        };
        let text = &expected.messages[m].text;
        let spans = (text.len() <= RANGED_BYTES).then(|| {
            ranges
                .entry(m)
                .or_insert_with(|| word_ranges(text))
                .as_slice()
        });
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
                renderings,
                by_message: of_text.clone(),
                cover: &cov.cover,
                spans,
                cause: causes[m],
                stored: holders.stored[m],
                said: holders.said.as_ref().map(|c| c[m]),
                group_members: members.clone(),
                rows_of,
            }));
        }
    }
    repeats.sort_by_key(|r| r.surplus_rows);
    repeats
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
    /// The message's [`word_ranges`], unless it is longer than [`RANGED_BYTES`].
    spans: Option<&'a [Range<usize>]>,
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
        excerpt: match x.spans {
            Some(spans) => excerpt_in(&msg.text, spans, x.run.clone()),
            None => excerpt(&msg.text, x.run.clone()),
        },
        screen_rows,
        surplus_rows,
        allowed_rows,
        rendered_row,
        carrier_of,
        stored: x.stored,
        said: x.said,
    }
}
