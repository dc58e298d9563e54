//! Logical messages of 0.19-style databases, by aligning generations.
//!
//! Pass 2 on 0.19-style databases: rows grouped into logical messages by aligning compaction
//! generations (rule 6), whose clones carry fresh timestamps.

use std::collections::{HashMap, HashSet};

use super::identity::ts_bits;
use super::{Form, Role, RowView};
use crate::store::Row;

/// Returns true if and only if two views are copies of one message on a 0.19-style database,
/// where clones carry fresh timestamps: same role, same tool identity, same displayed text — except
/// that a pruned tool stub equals the payload with its `tool_call_id`.
fn legacy_same(a: &RowView, ra: &Row, b: &RowView, rb: &Row) -> bool {
    if a.role != b.role || ra.tool_call_id != rb.tool_call_id || ra.tool_name != rb.tool_name {
        return false;
    }
    if a.role == Role::Tool
        && (a.form == Form::Stub || b.form == Form::Stub)
        && ra.tool_call_id.as_deref().is_some_and(|id| !id.is_empty())
    {
        return true;
    }
    let calls_same = match (&a.call_ids, &b.call_ids) {
        (Some(x), Some(y)) => x == y,
        _ => a.tool_calls == b.tool_calls,
    };
    calls_same && a.text == b.text
}

/// Upper bound, per row of distance, on how far apart the timestamps of one 0.19 compaction batch
/// are: the writer adds 1 µs per row; ten times that absorbs float rounding. Messages written by
/// a person or a model turn are milliseconds or more apart.
const BATCH_STEP: f64 = 1e-5;

/// One compaction generation on a 0.19-style database: a run of candidate views.
#[derive(Debug, Default)]
struct Generation {
    /// View indices, in id order.
    members: Vec<usize>,
    /// Position in `members` of the summary this generation's compaction wrote.
    owner: Option<usize>,
    /// Whether a summary seen in this generation may be its own (a rotated child's first
    /// summary) rather than the mark of a new in-place generation.
    may_own: bool,
    /// Written by in-place compaction (`archive_and_compact`), which inserts head copies, summary
    /// and tail copies in one batch stamped with ONE fresh timestamp (0.19 stamps every row of the
    /// batch with the same `time.time()`; a dict that still carries its timestamp keeps it).
    in_place: bool,
}

/// Pass 2 for 0.19-style databases (rule 6): no `message_uid`, and compaction clones get FRESH
/// timestamps, so identity cannot include the timestamp — but two identical messages typed twice
/// ("ok", "ok") must stay two. A copy is therefore defined structurally, by where compaction puts
/// it, and matched one-to-one:
///
/// 1. Split the lineage into generations. A new session starts one (rotating compaction); inside
///    a session, a summary row (standalone or carrier, recognised by content) that is not a copy
///    of an earlier one starts one (in-place compaction) — together with the head copies right
///    before it: the longest run ending there that repeats the start of the generation.
///    A rotated child's first summary belongs to the child's first generation.
/// 2. Each generation is `[head copies] summary [tail copies] [new rows]`. The head copies are
///    matched in order against the previous generation's first messages; the tail (starting with
///    the carrier's carried reply, if the summary is a carrier) against its LAST messages: the
///    longest run that equals the previous generation's suffix.
/// 3. A matched view joins the logical message of its counterpart; every other view starts one.
///
/// In an in-place generation a copy must also carry the batch's timestamp (the summary's) or its
/// original's: a message typed before or after the compaction has its own. That keeps "ok" typed
/// right before a compaction, or an exchange repeated right after it, from being taken for a copy.
/// Identical messages inside one generation are never matched with each other.
/// Risk: a rotated child (0.19 flushes it row by row, timestamps unknown) is matched on content
/// alone, so new rows typed right after the rotation that repeat the protected tail exactly are
/// taken for copies.
pub(super) fn group_by_alignment(views: &[RowView], rows: &[Row]) -> Vec<Vec<usize>> {
    let aligner = Aligner::new(views, rows);
    let gens = aligner.generations();
    aligner.groups(&gens)
}

/// What the two steps of [`group_by_alignment`] share: the views, their rows, and which
/// timestamps are batch stamps.
struct Aligner<'a> {
    views: &'a [RowView],
    rows: &'a [Row],
    /// The `(role, displayed text)`s of candidate rows at each timestamp.
    contents_at: HashMap<u64, HashSet<(&'a str, &'a str)>>,
}

impl<'a> Aligner<'a> {
    fn new(views: &'a [RowView], rows: &'a [Row]) -> Aligner<'a> {
        // A timestamp that rows with different contents share is a batch stamp (one compaction
        // wrote them all), not a message's own: equal batch stamps prove nothing about identity.
        // Displayed text, not stored content: a merged copy (notice + user text, rule 5) that
        // kept its original's timestamp holds the same message as the original.
        let mut contents_at: HashMap<u64, HashSet<(&str, &str)>> = HashMap::new();
        for v in views.iter().filter(|v| v.candidate) {
            contents_at
                .entry(ts_bits(rows[v.row].timestamp))
                .or_default()
                .insert((rows[v.row].role.as_str(), v.text.as_str()));
        }
        Aligner {
            views,
            rows,
            contents_at,
        }
    }

    fn batch_stamp(&self, ts: u64) -> bool {
        self.contents_at.get(&ts).is_some_and(|c| c.len() > 1)
    }

    /// Whether view `copy` is a copy of view `orig`.
    ///
    /// `batch`: the summary row of the copy's generation when it was written in place (None:
    /// match on content alone). 0.19 writes the whole compacted list in one call that stamps the
    /// first row `now` and every next row 1 µs later; a row whose dict still carries a timestamp
    /// (a user turn, or anything after a resume) keeps it. So a copy either lies in the batch's
    /// microsecond run — within `BATCH_STEP` per row of the summary — or carries its original's
    /// exact timestamp.
    fn same(&self, copy: usize, orig: usize, batch: Option<usize>) -> bool {
        let (views, rows) = (self.views, self.rows);
        let (rc, ro) = (&rows[views[copy].row], &rows[views[orig].row]);
        let (tc, to) = (ts_bits(rc.timestamp), ts_bits(ro.timestamp));
        legacy_same(&views[copy], rc, &views[orig], ro)
            && batch.is_none_or(|b| {
                let rb = &rows[views[b].row];
                let distance = rc.id.abs_diff(rb.id) as f64 + 1.0;
                (rc.timestamp - rb.timestamp).abs() <= BATCH_STEP * distance
                    || (tc == to && !self.batch_stamp(to))
            })
    }

    /// The message views among `range`.
    fn messages_in(&self, range: &[usize]) -> Vec<usize> {
        range
            .iter()
            .copied()
            .filter(|&m| self.views[m].message)
            .collect()
    }

    /// Step 1: the generations of the lineage.
    fn generations(&self) -> Vec<Generation> {
        let mut gens: Vec<Generation> = Vec::new();
        let mut cur = Generation::default();
        let mut cur_seg: Option<usize> = None;
        let mut seen_summaries: HashSet<&str> = HashSet::new();
        for (vi, v) in self.views.iter().enumerate() {
            if !v.candidate || !(v.message || v.summary) {
                continue;
            }
            if cur_seg != Some(v.seg) {
                if cur_seg.is_some() {
                    gens.push(std::mem::take(&mut cur));
                }
                // The root session's first generation is the conversation itself: any summary in
                // it comes from an in-place compaction. A later session is a rotated child.
                cur.may_own = cur_seg.is_some() || v.seg > 0;
                cur_seg = Some(v.seg);
            }
            // A summary identical to an earlier one of the lineage is a copy of it (inside a
            // protected head or tail, or carried into a rotated child), not the mark of a new
            // compaction. Case: compress twice in a row, the second time rotating — the child
            // holds its own summary and then a copy of the first one in its protected tail.
            let raw = self.rows[v.row].content.as_deref().unwrap_or("");
            let new_summary = v.summary && seen_summaries.insert(raw);
            if !new_summary {
                cur.members.push(vi);
                continue;
            }
            if cur.owner.is_none() && cur.may_own {
                cur.owner = Some(cur.members.len());
                cur.members.push(vi);
                continue;
            }
            let next = self.in_place(&mut cur, vi);
            gens.push(std::mem::replace(&mut cur, next));
        }
        if !cur.members.is_empty() {
            gens.push(cur);
        }
        gens
    }

    /// An in-place compaction whose summary is view `vi`: the head copies right before this
    /// summary repeat the start of the current generation `cur`. Takes the longest such run that
    /// does not overlap that start off `cur`, and returns the new generation: those copies and the
    /// summary.
    fn in_place(&self, cur: &mut Generation, vi: usize) -> Generation {
        let batch = Some(vi);
        let msgs = self.messages_in(&cur.members);
        let head = (1..=msgs.len() / 2)
            .rev()
            .find(|&h| (0..h).all(|k| self.same(msgs[msgs.len() - h + k], msgs[k], batch)))
            .unwrap_or(0);
        let split_at = match head {
            0 => cur.members.len(),
            _ => {
                let first_copy = msgs[msgs.len() - head];
                cur.members
                    .iter()
                    .position(|&m| m == first_copy)
                    .unwrap_or(cur.members.len())
            }
        };
        let mut next = Generation {
            members: cur.members.split_off(split_at),
            owner: None,
            may_own: false,
            in_place: true,
        };
        next.owner = Some(next.members.len());
        next.members.push(vi);
        next
    }

    /// Steps 2 and 3: matches each generation against the previous one; returns the groups.
    fn groups(&self, gens: &[Generation]) -> Vec<Vec<usize>> {
        let mut group_of: HashMap<usize, usize> = HashMap::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut prev_msgs: Vec<usize> = Vec::new();
        for generation in gens {
            let matched = self.matches(generation, &prev_msgs);
            let mut this_msgs = Vec::new();
            for &m in &generation.members {
                if !self.views[m].message {
                    continue;
                }
                this_msgs.push(m);
                let g = match matched.get(&m).and_then(|p| group_of.get(p)).copied() {
                    Some(g) => g,
                    None => {
                        groups.push(Vec::new());
                        groups.len() - 1
                    }
                };
                groups[g].push(m);
                group_of.insert(m, g);
            }
            prev_msgs = this_msgs;
        }
        groups
    }

    /// Step 2 for one generation: its head and tail copies, each with its counterpart among
    /// `prev_msgs` (the previous generation's messages).
    fn matches(&self, generation: &Generation, prev_msgs: &[usize]) -> HashMap<usize, usize> {
        let (head, tail) = match generation.owner {
            Some(o) => (
                self.messages_in(&generation.members[..o]),
                self.messages_in(&generation.members[o..]),
            ),
            None => (Vec::new(), self.messages_in(&generation.members)),
        };
        let batch = generation
            .owner
            .filter(|_| generation.in_place)
            .map(|o| generation.members[o]);
        let same = |copy: usize, orig: usize| self.same(copy, orig, batch);
        let mut matched: HashMap<usize, usize> = HashMap::new();
        let mut head_len = 0;
        while head_len < head.len()
            && head_len < prev_msgs.len()
            && same(head[head_len], prev_msgs[head_len])
        {
            matched.insert(head[head_len], prev_msgs[head_len]);
            head_len += 1;
        }
        // The tail is the longest run at the start of the rest that equals the previous
        // generation's suffix (after the head copies matched above). When the summary is a
        // carrier, the run may also end before that suffix: the carried reply is a copy of an
        // earlier message, which places the run. Case (hermes-agent 0.19.0, measured):
        // `/compress here 2` writes head copies, a carrier of the third reply and copies of the
        // fourth exchange, and leaves the last two exchanges out of the child.
        let room = prev_msgs.len() - head_len;
        let ends_at_suffix = (1..=tail.len().min(room)).rev().find_map(|k| {
            let base = prev_msgs.len() - k;
            (0..k)
                .all(|j| same(tail[j], prev_msgs[base + j]))
                .then_some((k, base))
        });
        let carrier_tail = || {
            let owner = generation.owner.map(|o| generation.members[o])?;
            if tail.first() != Some(&owner) || self.views[owner].form != Form::Carrier {
                return None;
            }
            (1..=tail.len().min(room)).rev().find_map(|k| {
                (head_len..=prev_msgs.len() - k)
                    .rev()
                    .find(|&base| (0..k).all(|j| same(tail[j], prev_msgs[base + j])))
                    .map(|base| (k, base))
            })
        };
        if let Some((k, base)) = ends_at_suffix.or_else(carrier_tail) {
            for j in 0..k {
                matched.insert(tail[j], prev_msgs[base + j]);
            }
        }
        matched
    }
}
