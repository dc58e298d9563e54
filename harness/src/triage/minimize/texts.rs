//! The text phase of `minimize`: once no row can go, shorten the texts of the rows kept.
//!
//! A text is shortened by halving it ([`halve`]): the middle half of its words is dropped, the
//! first and last quarters stay with their own spacing, so a marker at either end (a summary
//! prefix, a handoff line) survives while the words between go. Each unit ([`TextUnit`]) is
//! halved again and again until the shortened candidate no longer fails the same way (or has one
//! word left): the words the signature needs are the ones a rejected halving would have dropped.
//!
//! A summary carrier and the row it carries are shortened together: the carried reply is halved
//! in the original row and the same new text replaces its copy inside the carrier, so the carrier
//! still carries it (the display model and the client recognise the copy by its text); the
//! carrier's own text before and after the copy (summary, markers) are two more units. A carrier
//! whose copy of the reply is not found verbatim is shortened as a plain row. Rows with the same
//! text (a message the database stores twice, e.g. a user message copied into the continuation
//! session) are shortened together, so they stay copies of each other.

use std::collections::{BTreeMap, BTreeSet};

use super::Model;

/// A text the phase shortens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TextUnit {
    /// The whole text of these rows (one row, or rows holding the same text), in id order.
    Plain(Vec<i64>),
    /// A carried reply: in the row `carried` and, the same, inside its `carrier`.
    Reply {
        /// The original row.
        carried: i64,
        /// The summary carrier holding a copy of it.
        carrier: i64,
    },
    /// The carrier's own text before (`after: false`) or after the copy of the reply.
    Around {
        /// The original row.
        carried: i64,
        /// The summary carrier.
        carrier: i64,
        /// After the copy (else before it).
        after: bool,
    },
}

impl TextUnit {
    /// What shortening it does, for the trial table.
    pub(crate) fn describe(&self) -> String {
        match self {
            TextUnit::Plain(ids) => match ids.as_slice() {
                [id] => format!("the middle half of row {id}'s text"),
                _ => format!(
                    "the middle half of the text of {} (copies of each other)",
                    super::describe_rows(&ids.iter().copied().collect())
                ),
            },
            TextUnit::Reply { carried, carrier } => format!(
                "the middle half of row {carried}'s text (and of its copy in carrier row {carrier})"
            ),
            &TextUnit::Around { carrier, after, .. } => format!(
                "the middle half of carrier row {carrier}'s text {} the reply it carries",
                if after { "after" } else { "before" }
            ),
        }
    }
}

/// The text units of the lineage rows of `model` that have a text in `contents`: each carried
/// reply with its carrier's copy (and the carrier's text around it), then every other row.
pub(crate) fn units(model: &Model, contents: &BTreeMap<i64, String>) -> Vec<TextUnit> {
    let mut out = Vec::new();
    let mut paired: BTreeSet<i64> = BTreeSet::new();
    for t in model.ties.iter().filter(|t| t.carrier) {
        let (carried, carrier) = (t.a, t.b);
        let (Some(reply), Some(whole)) = (contents.get(&carried), contents.get(&carrier)) else {
            continue;
        };
        let reply = reply.trim();
        if reply.is_empty() || !whole.contains(reply) || paired.contains(&carrier) {
            continue;
        }
        paired.extend([carried, carrier]);
        out.push(TextUnit::Reply { carried, carrier });
        for after in [false, true] {
            out.push(TextUnit::Around {
                carried,
                carrier,
                after,
            });
        }
    }
    let mut copies: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for r in &model.rows {
        let id = r.row.id;
        let Some(text) = contents.get(&id).filter(|_| !paired.contains(&id)) else {
            continue;
        };
        let ids = copies.entry(text.trim()).or_default();
        if ids.is_empty() {
            order.push(text.trim());
        }
        ids.push(id);
    }
    out.extend(
        order
            .into_iter()
            .filter_map(|t| copies.remove(t))
            .map(TextUnit::Plain),
    );
    out
}

/// The new texts of the rows of `unit` halved once, or `None` when there is nothing left to halve
/// (fewer than two words, or the carrier no longer holds the reply verbatim).
pub(crate) fn shorten(
    unit: &TextUnit,
    contents: &BTreeMap<i64, String>,
) -> Option<BTreeMap<i64, String>> {
    match *unit {
        TextUnit::Plain(ref ids) => {
            let short = halve(contents.get(ids.first()?)?)?;
            Some(ids.iter().map(|&id| (id, short.clone())).collect())
        }
        TextUnit::Reply { carried, carrier } => {
            let reply = contents.get(&carried)?.trim();
            let whole = contents.get(&carrier)?;
            let at = whole.find(reply)?;
            let short = halve(reply)?;
            let new_whole = format!("{}{short}{}", &whole[..at], &whole[at + reply.len()..]);
            Some([(carried, short), (carrier, new_whole)].into())
        }
        TextUnit::Around {
            carried,
            carrier,
            after,
        } => {
            let reply = contents.get(&carried)?.trim();
            let whole = contents.get(&carrier)?;
            let at = whole.find(reply)?;
            let (before, rest) = whole.split_at(at);
            let (reply, tail) = rest.split_at(reply.len());
            let new_whole = if after {
                format!("{before}{reply}{}", halve(tail)?)
            } else {
                format!("{}{reply}{tail}", halve(before)?)
            };
            Some([(carrier, new_whole)].into())
        }
    }
}

/// `text` without the middle half of its words (whitespace-separated): the first ⌈k/2⌉ and the
/// last ⌊k/2⌋ of the k = ⌊n/2⌋ words kept, each with the spacing it had (the gap between them is
/// the spacing that followed the last word of the first part). Leading and trailing spacing is
/// kept. `None` with fewer than two words.
pub(crate) fn halve(text: &str) -> Option<String> {
    let words = word_spans(text);
    let n = words.len();
    if n < 2 {
        return None;
    }
    let keep = n / 2;
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let head_end = words[head - 1].1;
    let gap = &text[head_end..words[head].0];
    let mut out = String::with_capacity(text.len() / 2 + 8);
    out.push_str(&text[..head_end]);
    if tail > 0 {
        out.push_str(gap);
        out.push_str(&text[words[n - tail].0..]);
    } else {
        out.push_str(&text[words[n - 1].1..]);
    }
    Some(out)
}

/// The byte ranges of the whitespace-separated words of `text`.
fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}

/// Characters of text in `contents` (for the report: texts before and after).
pub(crate) fn chars(contents: &BTreeMap<i64, String>) -> usize {
    contents.values().map(|t| t.chars().count()).sum()
}
