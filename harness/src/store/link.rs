//! How a session is tied to its parent: a compression continuation or an explicit fork.
//!
//! A fork is a `/branch`, a delegate, a reset or a tool child, read from `sessions.source` and
//! markers in `model_config`.

use super::Session;

/// A session with the columns that decide whether it continues its parent.
pub(super) struct SessionLink {
    /// The session.
    pub(super) session: Session,
    /// `sessions.source` (`tool` for a tool's child session).
    pub(super) source: Option<String>,
    /// `sessions.model_config`, a JSON object that may name the session's fork parent.
    pub(super) model_config: Option<String>,
}

impl SessionLink {
    /// Returns true if and only if this session is a `/branch` (or `/fork`) child of `parent_id`:
    /// a `_branched_from` marker naming it, not a tool session.
    ///
    /// A marker counts only when it names this parent: a compression child inherits its parent's
    /// `model_config` verbatim, so a marker naming some older session was inherited, not set.
    pub(super) fn is_branch_of(&self, parent_id: &str) -> bool {
        self.source.as_deref() != Some("tool") && self.names(&["_branched_from"], parent_id)
    }

    /// Returns true if and only if this session is an explicit fork (branch, delegate, reset or
    /// tool child) of `parent_id` rather than its compression continuation.
    pub(super) fn is_fork_of(&self, parent_id: &str) -> bool {
        self.source.as_deref() == Some("tool")
            || self.names(
                &["_branched_from", "_delegate_from", "_reset_from"],
                parent_id,
            )
    }

    /// Whether `model_config` (a JSON object) names `parent_id` under one of `keys`.
    fn names(&self, keys: &[&str], parent_id: &str) -> bool {
        let Some(cfg) = self.model_config.as_deref() else {
            return false;
        };
        let Ok(serde_json::Value::Object(cfg)) = serde_json::from_str::<serde_json::Value>(cfg)
        else {
            return false;
        };
        keys.iter()
            .any(|k| cfg.get(*k).and_then(|v| v.as_str()) == Some(parent_id))
    }
}
