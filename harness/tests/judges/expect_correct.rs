//! `run --expect-correct` on the runs of the scenario trials (one trial `expect_correct/NAME`
//! per scenario below, fed by the run of trial `NAME`), nothing run again: the run judged
//! against its scenario expecting a correct display fails where the pinned client has a defect
//! (`compress/rotating_resume`, the carrier's duplicate) and passes where it has none
//! (`faults/http_500_once`). That the binary's flag reaches the same judgement is
//! `bless::bless_and_expect_correct_reach_the_run`.

use hermes_e2e::runner::{self, ScenarioResult};
use hermes_e2e::Scenario;

/// The scenarios judged here.
pub const SCENARIOS: [&str; 2] = ["compress/rotating_resume", "faults/http_500_once"];

/// Judges `result`, the passed run of the scenario `name` (one of [`SCENARIOS`]), expecting a
/// correct display; panics with what differs.
pub fn judge(name: &str, result: &ScenarioResult) {
    let root = runner::workspace_root().join("scenarios");
    let scenario = Scenario::load(&result.file, &root).unwrap_or_else(|e| panic!("{e}"));
    let judged = result.judged_against(&scenario.expecting_correct());
    let report = hermes_e2e::report::text(&judged);
    if name == "faults/http_500_once" {
        assert!(judged.passed, "{report}");
        return;
    }
    assert!(!judged.passed, "{report}");
    let check = judged
        .checks
        .iter()
        .find(|c| c.check.at == "after --resume")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(
        check.mismatches,
        [
            "words_rendered_more_than_once: expected 0, got 169",
            "internal_text_shown: expected 0, got 502",
            "causes: expected [], got [\"display\"]",
        ],
        "{report}"
    );
    // The checks before the resume draw every message once: they hold either way.
    assert!(
        judged
            .checks
            .iter()
            .filter(|c| c.check.at != "after --resume")
            .all(|c| c.passed),
        "{report}"
    );
}
