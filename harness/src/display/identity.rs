//! Logical messages of 0.22-style databases, by display identity.
//!
//! Pass 2 on 0.22-style databases: rows grouped into logical messages by display identity
//! (rules 2, 3 and 5).

// foldhash, not SipHash: these maps hash whole message texts (see Cargo.toml).
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use super::{Form, Role, RowView};
use crate::store::Row;

/// Display identity (rule 2) on 0.22-style databases.
///
/// It borrows from the views and rows it identifies: a message's text is compared, never copied.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Identity<'a> {
    /// An assistant row calling tools, with provider ids for every call: the call ids and the
    /// timestamp identify it. Pruning rewrites a carried copy's arguments (and text may be
    /// cleaned), so the full `tool_calls` would split one message in two; ids repeat across turns
    /// on some providers, so the timestamp stays in the key.
    Calls {
        ts: u64,
        call_ids: &'a [String],
        tool_call_id: Option<&'a str>,
        tool_name: Option<&'a str>,
    },
    /// Every other row: role, displayed text, timestamp and tool-call identity.
    Content {
        role: &'a str,
        text: &'a str,
        ts: u64,
        tool_call_id: Option<&'a str>,
        tool_calls: Option<&'a str>,
        tool_name: Option<&'a str>,
    },
}

pub(super) fn ts_bits(ts: f64) -> u64 {
    // +0.0 and -0.0 are one instant.
    if ts == 0.0 {
        0
    } else {
        ts.to_bits()
    }
}

pub(super) fn identity<'a>(v: &'a RowView, row: &'a Row) -> Identity<'a> {
    match &v.call_ids {
        Some(ids) => Identity::Calls {
            ts: ts_bits(row.timestamp),
            call_ids: ids,
            tool_call_id: row.tool_call_id.as_deref(),
            tool_name: row.tool_name.as_deref(),
        },
        None => Identity::Content {
            role: &row.role,
            text: &v.text,
            ts: ts_bits(row.timestamp),
            tool_call_id: row.tool_call_id.as_deref(),
            tool_calls: v.tool_calls.as_deref(),
            tool_name: row.tool_name.as_deref(),
        },
    }
}

/// Pass 2 for 0.22-style databases: groups candidate message views into logical messages.
///
/// - Rule 2: rows with one [`Identity`] are one logical message, in whatever session of the
///   lineage they are: in-place compaction copies the protected head and tail into the next
///   generation of the same session, rotating compaction into the child session — same role,
///   content and timestamp, new id.
/// - Rule 3: a carrier takes the logical message of the newest earlier candidate row with its
///   `message_uid` (and role). Case: rotating compaction leaves the original reply active in the
///   ended parent and writes the carrier, same uid and timestamp, different content, in the child —
///   one reply, shown once, with the carried text. With no such row (in-place compaction
///   supersedes the original) the carrier is its own message, showing the carried reply.
/// - Rule 3, scoped: a pruned stub joins the payload row it replaced (same uid, else same
///   `tool_call_id` and timestamp), so the payload stays expected — the stub never hides it.
/// - Rule 5: a user message cut out of a merged notice joins by uid or identity; failing both (the
///   merged copy has a fresh uid or timestamp) by role and text: it joins the newest earlier user
///   row with the same text if that row is a candidate. If that newest row is superseded, or a
///   superseded user row has its identity (fresh uid, original timestamp), the merged row is that
///   row's carried-forward copy and stands alone. Case (found by the property tests): the same
///   question asked twice, each after a notice; compaction copies the first into the head and the
///   second into the tail — the tail's merged copy must not join the first question. Risk: if the true original was lost
///   and an older, identical user message exists, the merged row is taken for a copy of it.
///
/// - Rule 8: a candidate copy of a message whose newest copy was rewound (`/undo`, `/retry`) is
///   taken back with it (`taken_back`, from `rewind::Rewinds`).
///
/// Returns groups of view indices; non-candidate and non-message views are in no group.
pub(super) fn group_by_identity(
    views: &[RowView],
    rows: &[Row],
    taken_back: &HashSet<usize>,
) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_role: Vec<Role> = Vec::new();
    let mut by_identity: HashMap<Identity, usize> = HashMap::new();
    let mut by_uid: HashMap<&str, usize> = HashMap::new();
    let mut by_tool: HashMap<(&str, u64), usize> = HashMap::new();
    // Newest earlier user row per displayed text: Some(group) for a candidate, None for a
    // superseded row (see rule 5 above).
    let mut last_user_text: HashMap<&str, Option<usize>> = HashMap::new();

    // Identities of superseded user rows: a merged copy with one of them (its original's
    // timestamp, a fresh uid) is that row carried forward, and stands alone.
    let mut superseded_users: HashSet<Identity> = HashSet::new();
    for (vi, v) in views.iter().enumerate() {
        let row = &rows[v.row];
        if !v.candidate || taken_back.contains(&vi) {
            if v.superseded && v.role == Role::User && v.message {
                last_user_text.insert(v.text.as_str(), None);
                superseded_users.insert(identity(v, row));
            }
            continue;
        }
        if !v.message {
            continue;
        }
        let key = identity(v, row);
        let uid = row.message_uid.as_deref();
        let by_uid_same_role = uid
            .and_then(|u| by_uid.get(u).copied())
            .filter(|&g| group_role[g] == v.role);
        let found = match v.form {
            Form::Plain => by_identity.get(&key).copied(),
            Form::Carrier => by_uid_same_role.or_else(|| by_identity.get(&key).copied()),
            Form::Stub => by_uid_same_role
                .or_else(|| {
                    row.tool_call_id
                        .as_deref()
                        .filter(|id| !id.is_empty())
                        .and_then(|id| by_tool.get(&(id, ts_bits(row.timestamp))).copied())
                })
                .or_else(|| by_identity.get(&key).copied()),
            Form::Merged => by_uid_same_role
                .or_else(|| by_identity.get(&key).copied())
                .or_else(|| {
                    if superseded_users.contains(&key) {
                        None
                    } else {
                        last_user_text.get(v.text.as_str()).copied().flatten()
                    }
                }),
        };
        let g = match found {
            Some(g) => g,
            None => {
                groups.push(Vec::new());
                group_role.push(v.role);
                groups.len() - 1
            }
        };
        groups[g].push(vi);
        by_identity.insert(key, g);
        if let Some(u) = uid {
            by_uid.insert(u, g);
        }
        if v.role == Role::Tool {
            if let Some(id) = row.tool_call_id.as_deref().filter(|id| !id.is_empty()) {
                by_tool.entry((id, ts_bits(row.timestamp))).or_insert(g);
            }
        }
        if v.role == Role::User {
            last_user_text.insert(v.text.as_str(), Some(g));
        }
    }
    groups
}
