//! Who holds which text, and how often each may be drawn.
//!
//! The oracle's second stage: who holds which text (groups of messages with identical words), how
//! often the provider said it and the database stores it, so how many renderings each message is
//! allowed and, for a surplus one, its [`Cause`].

use crate::display::{Expected, Role};
use crate::integrity::{DataProblem, DataProblemKind};

use super::align::{self, Rendering, SourceKind};
use super::vocabulary::{same_as, FastMap, Words};
use super::{Cause, Context, SHINGLE_WORDS};

/// Who holds which text, and how often each text may be drawn.
pub(super) struct Holders {
    /// For each message, the first message with identical words (its group).
    pub(super) group: Vec<usize>,
    /// The same for internal texts.
    pub(super) group_internal: Vec<usize>,
    /// Messages in each message's group (how many logical messages hold its words).
    pub(super) stored: Vec<usize>,
    /// How often the provider said each message's words (with a provider log).
    pub(super) said: Option<Vec<usize>>,
    /// A data duplicate: allowed no rendering (said fewer times than stored, or stored twice by
    /// the database).
    pub(super) data_duplicate: Vec<bool>,
    /// Copies of a message the database stores twice, when the message is nothing but them.
    pub(super) stored_twice: Vec<usize>,
    /// A data duplicate known from the database alone.
    pub(super) db_duplicate: Vec<bool>,
}

impl Holders {
    pub(super) fn new(words: &Words, expected: &Expected, cx: &Context<'_>) -> Holders {
        let n = words.messages.len();
        let group = same_as(words.messages);
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
            group_internal: same_as(words.internal),
            stored,
            said,
            data_duplicate,
            stored_twice,
            db_duplicate,
        }
    }

    /// The messages holding `m`'s words (its group), in display order.
    pub(super) fn members(&self, m: usize) -> Vec<usize> {
        (0..self.group.len())
            .filter(|&k| self.group[k] == self.group[m])
            .collect()
    }

    /// Why each message's surplus renderings happened (per group of identical messages).
    pub(super) fn causes(
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
pub(super) fn identical_holders_in_order(
    renderings: &mut [Rendering],
    kinds: &[SourceKind],
    group: &[usize],
) {
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
