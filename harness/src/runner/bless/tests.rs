//! Unit tests of `--bless`.
//!
//! Unit tests of `--bless` on scenario files in a temporary directory, no client: the rewrite
//! of each kind of pin, what is kept byte for byte, included files, and what is refused or left.

use super::*;
use crate::scenario::{Action, Scenario};

/// A scenario with comments and odd spacing around its checks; `{EXPECT1}`/`{EXPECT2}` are
/// replaced by each test.
const SCENARIO: &str = r#"# Pins a display defect (upstream PR #1).
#
# A comment block that must survive.

[scenario]
size = { rows = 40, cols = 100 }   # trailing comment

[[step]]
launch = []

[[step]]
say = "hi"
reply = """
a multi-line
reply"""

[[step]]
check = "first"
expect = {EXPECT1}   # the first check
known_bug = "the carrier is drawn twice (upstream PR #1)"

[[step]]
quit = true

[[step]]
launch = ["--resume", "{session}"]

# before the second check
[[step]]
check = "second"
expect = {EXPECT2}
"#;

fn scenario_text(first: &str, second: &str) -> String {
    SCENARIO
        .replace("{EXPECT1}", first)
        .replace("{EXPECT2}", second)
}

/// A measured check: findings, causes, rows.
fn measured(findings: Findings, causes: &[Cause], rows: Option<RowCounts>) -> Outcome {
    Outcome {
        findings,
        causes: causes.to_vec(),
        rows,
        fixed: false,
    }
}

/// What a test says a check measured.
#[derive(Clone)]
struct Outcome {
    findings: Findings,
    causes: Vec<Cause>,
    rows: Option<RowCounts>,
    fixed: bool,
}

/// The checks of the scenario at `path` (read as the runner does), with these outcomes.
fn run_of(path: &Path, outcomes: &[Outcome]) -> Run {
    let scenario = Scenario::load(path, path.parent().unwrap()).unwrap();
    let checks: Vec<(String, Expectation)> = scenario
        .steps
        .iter()
        .filter_map(|s| match &s.action {
            Action::Check { name, expect } => Some((name.clone(), expect.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(checks.len(), outcomes.len(), "one outcome per check");
    Run {
        scenario: scenario.name.clone(),
        file: path.to_owned(),
        error: None,
        checks: checks
            .into_iter()
            .zip(outcomes)
            .map(|((name, expected), o)| Measured {
                name,
                fixed_upstream: o.fixed.then(|| expected.known_bug.clone()).flatten(),
                expected,
                findings: o.findings,
                causes: o.causes.clone(),
                rows: o.rows,
                verdict: "the verdict sentence".into(),
            })
            .collect(),
    }
}

fn words(n: usize) -> Findings {
    Findings {
        words_rendered_more_than_once: n,
        ..Findings::default()
    }
}

fn clean() -> Outcome {
    measured(Findings::default(), &[], Some(RowCounts::default()))
}

/// Blesses `runs` and returns the report and whether it settled.
fn bless_runs(runs: &[Run]) -> (String, bool) {
    let blessing = Blessing::plan(runs);
    let mut out = String::new();
    blessing.print(&mut out);
    let written = blessing.write(&mut out);
    (out, blessing.settled() && written)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn changed_numbers_are_rewritten_in_place_and_the_rest_of_the_file_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        &scenario_text(
            "{ words_rendered_more_than_once = 169, internal_text_shown = 502, causes = [\"display\"] }",
            "{}",
        ),
    );
    let run = run_of(
        &path,
        &[
            measured(
                Findings {
                    words_rendered_more_than_once: 170,
                    internal_text_shown: 502,
                    ..Findings::default()
                },
                &[Cause::Display],
                Some(RowCounts::default()),
            ),
            clean(),
        ],
    );
    let (out, settled) = bless_runs(&[run]);
    assert!(settled, "{out}");
    // Only the number changed: spacing, the comment after the table, the other keys kept.
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        scenario_text(
            "{ words_rendered_more_than_once = 170, internal_text_shown = 502, causes = [\"display\"] }",
            "{}",
        )
    );
    let shown = format!("check `first` ({}:19)", path.display());
    assert!(out.contains(&shown), "{out}");
    assert!(
        out.contains("    words_rendered_more_than_once: 169 → 170\n"),
        "{out}"
    );
    assert!(out.contains("    got: the verdict sentence\n"), "{out}");
    assert!(
        !out.contains("internal_text_shown:"),
        "unchanged pins are not listed: {out}"
    );
    assert!(out.contains("bless: wrote"), "{out}");
}

#[test]
fn findings_that_become_zero_are_removed_and_new_ones_added_beside_the_findings() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        &scenario_text(
            "{ words_rendered_more_than_once = 169, internal_text_shown = 502, causes = [\"display\"] }",
            "{ prompt_rows = 1, max_blank_run = { at_most = 2 } }",
        ),
    );
    let rows = RowCounts {
        prompt_rows: 1,
        max_blank_run: 2,
        ..RowCounts::default()
    };
    let run = run_of(
        &path,
        &[
            measured(
                Findings {
                    internal_text_shown: 502,
                    ..Findings::default()
                },
                &[],
                Some(rows),
            ),
            measured(
                Findings {
                    words_rendered_more_than_once: 12,
                    missing_messages: 2,
                    ..Findings::default()
                },
                &[Cause::Data, Cause::Display],
                Some(rows),
            ),
        ],
    );
    let (out, settled) = bless_runs(&[run]);
    assert!(settled, "{out}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        scenario_text(
            "{ internal_text_shown = 502 }",
            "{ words_rendered_more_than_once = 12, missing_messages = 2, causes = [\"data\", \"display\"], prompt_rows = 1, max_blank_run = { at_most = 2 } }",
        ) + &format!("known_bug = {UNEXPLAINED:?}\n")
    );
    assert!(
        out.contains("    words_rendered_more_than_once: 169 → 0\n"),
        "{out}"
    );
    assert!(out.contains("    causes: [\"display\"] → []\n"), "{out}");
    assert!(
        out.contains("    causes: [] → [\"data\", \"display\"]\n"),
        "causes in screen order: {out}"
    );
    assert!(out.contains("    missing_messages: 0 → 2\n"), "{out}");
    // The scenario parses again, with the measured numbers.
    let again = run_of(
        &path,
        &[
            measured(
                Findings {
                    internal_text_shown: 502,
                    ..Findings::default()
                },
                &[],
                Some(rows),
            ),
            clean(),
        ],
    );
    assert_eq!(again.checks[1].expected.findings.missing_messages, 2);
    assert_eq!(
        again.checks[1].expected.causes,
        [Cause::Data, Cause::Display]
    );
}

#[test]
fn exact_row_pins_are_rewritten_failed_bounds_left_and_unpinned_findings_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let first = "{ unpinned = [\"words_rendered_more_than_once\", \"causes\"], stale_preview_rows = 0, prompt_rows = 1, max_blank_run = { at_most = 2 } }";
    let second = "{ prompt_rows = 1, questions_not_once = 6 }";
    let path = write(dir.path(), "s.toml", &scenario_text(first, second));
    let run = run_of(
        &path,
        &[
            // Unpinned words changed, a bound broken: nothing to write, one thing left.
            measured(
                words(40),
                &[Cause::Display],
                Some(RowCounts {
                    prompt_rows: 1,
                    max_blank_run: 3,
                    ..RowCounts::default()
                }),
            ),
            // An exact pin that became 0 stays named: a named row count is compared.
            measured(
                Findings::default(),
                &[],
                Some(RowCounts {
                    prompt_rows: 2,
                    questions_not_once: 0,
                    ..RowCounts::default()
                }),
            ),
        ],
    );
    let (out, settled) = bless_runs(&[run]);
    assert!(
        !settled,
        "a bound that does not hold is left to a person: {out}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        scenario_text(first, "{ prompt_rows = 2, questions_not_once = 0 }")
    );
    assert!(
        out.contains("    left: max_blank_run: `{ at_most = 2 }` does not hold, got 3"),
        "{out}"
    );
    assert!(!out.contains("words_rendered_more_than_once:"), "{out}");
    assert!(out.contains("    prompt_rows: 1 → 2\n"), "{out}");
    assert!(out.contains("    questions_not_once: 6 → 0\n"), "{out}");
}

#[test]
fn a_check_in_an_included_file_is_rewritten_there() {
    let dir = tempfile::tempdir().unwrap();
    let shared = "# shared steps\n[[step]]\nsay = \"q\"\nreply = \"a\"\n\n[[step]]\ncheck = \"shared\"\nexpect = { missing_messages = 1 } # pinned\n";
    let shared_path = write(dir.path(), "conversations/c.steps.toml", shared);
    let text = "# pins the shared check\n[scenario]\nsize = { rows = 40, cols = 100 }\n\n[[step]]\nlaunch = []\n\n[[step]]\ninclude = \"../conversations/c.steps.toml\"\n\n[[step]]\ncheck = \"own\"\nexpect = {}\n";
    let path = write(dir.path(), "area/s.toml", text);
    let run = run_of(
        &path,
        &[
            measured(
                Findings {
                    missing_messages: 3,
                    ..Findings::default()
                },
                &[],
                Some(RowCounts::default()),
            ),
            clean(),
        ],
    );
    assert_eq!(run.checks[0].name, "shared");
    let (out, settled) = bless_runs(&[run]);
    assert!(settled, "{out}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "the scenario is untouched"
    );
    assert_eq!(
        std::fs::read_to_string(&shared_path).unwrap(),
        shared.replace("missing_messages = 1", "missing_messages = 3")
    );
    // The included file, its `..` resolved, at the line of the check's `expect`.
    let shown = normalised(&dir.path().join("area/../conversations/c.steps.toml"));
    assert!(
        out.contains(&format!("check `shared` ({}:8)", shown.display())),
        "{out}"
    );
    assert!(out.contains("    missing_messages: 1 → 3\n"), "{out}");
}

#[test]
fn two_scenarios_that_disagree_on_a_shared_check_leave_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    let shared = "[[step]]\ncheck = \"shared\"\nexpect = {}\n";
    let shared_path = write(dir.path(), "c.steps.toml", shared);
    let text = "# pins it\n[scenario]\nsize = { rows = 40, cols = 100 }\n\n[[step]]\nlaunch = []\n\n[[step]]\ninclude = \"c.steps.toml\"\n";
    let a = write(dir.path(), "a.toml", text);
    let b = write(dir.path(), "b.toml", text);
    let runs = [
        run_of(&a, &[measured(words(3), &[Cause::Display], None)]),
        run_of(&b, &[measured(words(4), &[Cause::Display], None)]),
    ];
    let (out, settled) = bless_runs(&runs);
    assert!(!settled, "{out}");
    assert_eq!(std::fs::read_to_string(&shared_path).unwrap(), shared);
    assert!(out.contains("shared by a, b"), "{out}");
    // When they agree, the check is rewritten once.
    let runs = [
        run_of(&a, &[measured(words(3), &[Cause::Display], None)]),
        run_of(&b, &[measured(words(3), &[Cause::Display], None)]),
    ];
    let (out, settled) = bless_runs(&runs);
    assert!(settled, "{out}");
    assert_eq!(
        std::fs::read_to_string(&shared_path).unwrap(),
        "[[step]]\ncheck = \"shared\"\nexpect = { words_rendered_more_than_once = 3, causes = { display = 1 } }\n\
         known_bug = \"TODO: name the client defect these numbers pin, with its upstream reference\"\n"
    );
}

#[test]
fn a_scenario_that_errored_is_refused_and_its_file_kept() {
    let dir = tempfile::tempdir().unwrap();
    let text = scenario_text("{ words_rendered_more_than_once = 169 }", "{}");
    let path = write(dir.path(), "s.toml", &text);
    let mut run = run_of(&path, &[measured(words(1), &[], None), clean()]);
    run.error = Some((
        "step `launch`: the client exited before its prompt\nlast screen: …".into(),
        Some(26),
    ));
    let (out, settled) = bless_runs(&[run]);
    assert!(!settled);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    assert!(
        out.contains(&format!(
            "bless s: refused: the run errored at {}:26 (step `launch`: the client exited before its prompt)",
            path.display()
        )),
        "{out}"
    );
    assert!(out.contains("0 check(s) rewritten in 0 file(s)"), "{out}");
}

#[test]
fn a_file_whose_checks_changed_since_the_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", &scenario_text("{}", "{}"));
    let run = run_of(&path, &[measured(words(2), &[], None), clean()]);
    let edited = scenario_text("{}", "{}").replace("check = \"second\"", "check = \"renamed\"");
    std::fs::write(&path, &edited).unwrap();
    let (out, settled) = bless_runs(&[run]);
    assert!(!settled);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
    assert!(out.contains("the file changed since"), "{out}");
}

#[test]
fn a_fixed_known_bug_is_blessed_to_a_clean_check_without_its_known_bug() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        &scenario_text(
            "{ words_rendered_more_than_once = 169, causes = [\"display\"] }",
            "{}",
        ),
    );
    let mut fixed = clean();
    fixed.fixed = true;
    let run = run_of(&path, &[fixed, clean()]);
    assert_eq!(
        run.checks[0].fixed_upstream.as_deref(),
        Some("the carrier is drawn twice (upstream PR #1)")
    );
    let (out, settled) = bless_runs(&[run]);
    assert!(settled, "{out}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        scenario_text("{}", "{}").replace(
            "known_bug = \"the carrier is drawn twice (upstream PR #1)\"\n",
            ""
        )
    );
    assert!(
        out.contains(
            "    known_bug: \"the carrier is drawn twice (upstream PR #1)\" → (removed)\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("    FIXED upstream: the carrier is drawn twice (upstream PR #1)\n"),
        "{out}"
    );
}

#[test]
fn nothing_changed_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let text = scenario_text("{ words_rendered_more_than_once = 5 }", "{}");
    let path = write(dir.path(), "s.toml", &text);
    let run = run_of(&path, &[measured(words(5), &[], None), clean()]);
    let blessing = Blessing::plan(&[run]);
    assert!(blessing.checks.is_empty() && blessing.settled());
    assert!(blessing.rewritten().is_empty());
}

#[test]
fn an_expect_that_is_not_an_inline_table_is_left_to_a_person() {
    let dir = tempfile::tempdir().unwrap();
    let text = "# pins\n[scenario]\nsize = { rows = 40, cols = 100 }\n\n[[step]]\nlaunch = []\n\n[[step]]\ncheck = \"end\"\n[step.expect]\nmissing_messages = 1\n";
    let path = write(dir.path(), "s.toml", text);
    let run = run_of(
        &path,
        &[measured(
            Findings {
                missing_messages: 2,
                ..Findings::default()
            },
            &[],
            None,
        )],
    );
    let (out, settled) = bless_runs(&[run]);
    assert!(!settled, "{out}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    assert!(out.contains("not an inline table"), "{out}");
}

/// Every bundled scenario and shared steps file comes out of the editor byte for byte: what
/// bless does not rewrite, it keeps.
#[test]
fn every_bundled_scenario_file_round_trips_unchanged() {
    let root = super::super::workspace_root().join("scenarios");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 50, "{} files", files.len());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let doc = toml_edit::Document::parse(text.clone()).unwrap();
        assert_eq!(doc.into_mut().to_string(), text, "{}", file.display());
    }
}

#[test]
fn paths_are_shown_with_their_dot_dots_resolved() {
    assert_eq!(
        normalised(Path::new(
            "scenarios/compress/../conversations/l.steps.toml"
        )),
        Path::new("scenarios/conversations/l.steps.toml")
    );
    assert_eq!(normalised(Path::new("../a/./b")), Path::new("../a/b"));
    assert_eq!(normalised(Path::new("/x/../y")), Path::new("/y"));
}

#[test]
fn a_pin_that_becomes_non_zero_gets_a_todo_known_bug_and_compact_causes() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.toml", &scenario_text("{}", "{}"));
    let run = run_of(
        &path,
        &[
            // The first check names a known bug already: no TODO beside it.
            measured(
                words(5),
                &[Cause::Display, Cause::Display],
                Some(RowCounts::default()),
            ),
            measured(words(11), &[Cause::Display; 11], Some(RowCounts::default())),
        ],
    );
    let (out, settled) = bless_runs(&[run]);
    assert!(settled, "{out}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        scenario_text(
            "{ words_rendered_more_than_once = 5, causes = { display = 2 } }",
            "{ words_rendered_more_than_once = 11, causes = { display = 11 } }",
        ) + &format!("known_bug = {UNEXPLAINED:?}\n")
    );
    assert_eq!(text.matches("TODO").count(), 1, "{text}");
    assert!(
        out.contains(&format!("    known_bug: (none) → {UNEXPLAINED:?}\n")),
        "{out}"
    );
    assert!(out.contains("    causes: [] → { display = 11 }\n"), "{out}");
    assert!(out.contains("bless: 1 check(s) now pin a non-zero number with no known bug"));
    // The file reads back: the compact causes are eleven `display` repeats, in any order.
    let again = run_of(&path, &[clean(), clean()]);
    let second = &again.checks[1].expected;
    assert!(second.causes_counted);
    assert_eq!(second.causes, [Cause::Display; 11]);
    assert_eq!(second.known_bug.as_deref(), Some(UNEXPLAINED));
    // Blessed again with the same numbers: nothing to rewrite.
    let same = run_of(
        &path,
        &[
            measured(words(5), &[Cause::Display; 2], Some(RowCounts::default())),
            measured(words(11), &[Cause::Display; 11], Some(RowCounts::default())),
        ],
    );
    let (out, settled) = bless_runs(&[same]);
    assert!(
        settled && out.contains("bless: 0 check(s) rewritten"),
        "{out}"
    );
}

#[test]
fn compact_causes_compare_counts_and_mixed_causes_keep_the_list() {
    let e: Expectation = "causes = { data = 1, display = 2 }".parse().unwrap();
    assert!(e.causes_counted);
    assert!(e.causes_hold(&[Cause::Display, Cause::Data, Cause::Display]));
    assert!(!e.causes_hold(&[Cause::Display, Cause::Data]));
    let list: Expectation = "causes = [\"display\", \"data\"]".parse().unwrap();
    assert!(!list.causes_counted);
    assert!(!list.causes_hold(&[Cause::Data, Cause::Display]));
    assert!("causes = { displayed = 1 }".parse::<Expectation>().is_err());
    // Mixed causes measured on a list pin are written as a list, in screen order.
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.toml",
        &scenario_text(
            "{ words_rendered_more_than_once = 5, causes = [\"display\"] }",
            "{}",
        ),
    );
    let run = run_of(
        &path,
        &[
            measured(words(5), &[Cause::Data, Cause::Display], None),
            clean(),
        ],
    );
    let (out, _) = bless_runs(&[run]);
    assert!(
        out.contains("    causes: [\"display\"] → [\"data\", \"display\"]\n"),
        "{out}"
    );
}

/// A refusal's message says what failed; its cause is its source (the chain says it once).
#[test]
fn a_refusal_keeps_its_cause_out_of_its_message() {
    use std::error::Error as _;
    let file = PathBuf::from("scenarios/x.toml");
    let errors = [
        BlessError::Read {
            file: file.clone(),
            source: std::fs::read("/nonexistent/hermes-e2e/bless").unwrap_err(),
        },
        BlessError::Parse {
            file,
            source: toml_edit::Document::parse("key = ".to_owned()).unwrap_err(),
        },
    ];
    for error in errors {
        let cause = error.source().expect("a cause").to_string();
        assert!(!error.to_string().contains(&cause), "{error}: {cause}");
        assert!(crate::chain::one_line(&error).contains(&cause), "{error}");
    }
}
