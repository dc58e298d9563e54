//! `--json`: one JSON object per scenario, one per line. The object is the serde form of
//! [`ScenarioResult`] (causes by their serde names, see `oracle/wording.rs`).

use crate::runner::ScenarioResult;

/// One JSON object (no newline) for `--json`.
pub fn json_line(result: &ScenarioResult) -> String {
    serde_json::to_string(result).unwrap_or_else(|e| {
        // Serialising plain data cannot fail; if it ever does, still emit valid JSON.
        serde_json::json!({"scenario": result.scenario, "passed": false, "error": e.to_string()})
            .to_string()
    })
}
