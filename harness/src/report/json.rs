//! The JSON verdict, one object per line.
//!
//! `--json`: one JSON object per scenario, one per line — the same shape for `run`, `repro` and
//! `check` (docs/counting.md, "The JSON verdict"). The object is [`SCHEMA_VERSION`] then the
//! serde form of [`ScenarioResult`] (causes by their serde names, see `oracle/wording.rs`).

use crate::runner::ScenarioResult;

/// The version of the `--json` shape: raised when a field is removed or changes meaning (a new
/// field does not raise it).
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// A [`ScenarioResult`] with the schema version first.
#[derive(serde::Serialize)]
struct Line<'a> {
    schema_version: u32,
    #[serde(flatten)]
    result: &'a ScenarioResult,
}

/// One JSON object (no newline) for `--json`.
pub(crate) fn json_line(result: &ScenarioResult) -> String {
    let line = Line {
        schema_version: SCHEMA_VERSION,
        result,
    };
    serde_json::to_string(&line).unwrap_or_else(|e| {
        // Serialising plain data cannot fail; if it ever does, still emit valid JSON.
        serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "scenario": result.scenario,
            "passed": false,
            "error": e.to_string()
        })
        .to_string()
    })
}
