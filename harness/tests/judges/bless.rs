//! `run --bless` on the runs of the scenario trials (one trial `bless/NAME` per scenario below,
//! fed by the run of trial `NAME`), nothing run again: the run judged against a copy of its
//! scenario file with a pin changed is what `run --bless` of that copy would bless. A doctored
//! pin of `compress/rotating_resume` is restored byte for byte, and the pins of
//! `v0_19/draft_while_resized` (hermes-agent 0.19.0 replays the history on each resize) taken
//! back to 0 become the measured numbers with `known_bug = "TODO: …"`. That the binary's
//! `--bless` reaches the same blessing is `bless::bless_and_expect_correct_reach_the_run`.

use std::path::{Path, PathBuf};

use hermes_e2e::runner::{self, ScenarioResult};
use hermes_e2e::Scenario;

/// The scenarios judged here.
pub const SCENARIOS: [&str; 2] = ["compress/rotating_resume", "v0_19/draft_while_resized"];

/// Blesses a doctored copy of the scenario `name` (one of [`SCENARIOS`]) with `result`, its
/// passed run; panics with what differs.
pub fn judge(name: &str, result: &ScenarioResult) {
    // With the scenarios' clients overridden, the run is not the scenario's own: blessing it
    // is refused (what `bless::bless_and_expect_correct_reach_the_run` asserts), not tried.
    if std::env::var_os("HERMES_E2E_CLIENT").is_some_and(|c| !c.is_empty()) {
        let mut out = String::new();
        assert!(!runner::bless_into(std::slice::from_ref(result), &mut out));
        assert!(
            out.contains("bless: refused: HERMES_E2E_CLIENT is set"),
            "{out}"
        );
        eprintln!("note: bless/{name}: HERMES_E2E_CLIENT is set, so blessing is refused");
        return;
    }
    if name == "v0_19/draft_while_resized" {
        a_pin_that_becomes_non_zero_gets_a_todo_known_bug(result);
    } else {
        a_doctored_pin_is_restored_and_the_change_printed(result);
    }
}

/// The conversation the scenarios judged here include.
const CONVERSATION: &str = "conversations/lighthouse.steps.toml";

/// The scenario `file` (a path under `scenarios/`) and [`CONVERSATION`] copied side by side into
/// `dir`, as in `scenarios/` (the scenario includes `../conversations/…`): the copy's path and
/// text.
fn copy_scenario(dir: &Path, file: &str) -> (PathBuf, String) {
    let scenarios = runner::workspace_root().join("scenarios");
    for file in [file, CONVERSATION] {
        let to = dir.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(scenarios.join(file), to).unwrap();
    }
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text)
}

/// The 1-based line of the first line of `text` that contains `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("no `{needle}` in the file"))
}

/// `result` judged against the scenario file `path` (under `root`) as it now reads.
fn judged(result: &ScenarioResult, path: &Path, root: &Path) -> ScenarioResult {
    let scenario = Scenario::load(path, root).unwrap_or_else(|e| panic!("{e}"));
    result.judged_against(&scenario)
}

fn a_doctored_pin_is_restored_and_the_change_printed(result: &ScenarioResult) {
    let dir = tempfile::tempdir().unwrap();
    let (path, original) = copy_scenario(dir.path(), "compress/rotating_resume.toml");
    let included = dir.path().join(CONVERSATION);
    let included_before = std::fs::read_to_string(&included).unwrap();
    // One more word rendered twice than the client draws.
    let pin = regex::Regex::new(r"words_rendered_more_than_once = (\d+)").unwrap();
    let pinned: usize = pin.captures(&original).expect("a pinned repeat")[1]
        .parse()
        .unwrap();
    let doctored = pin
        .replace(
            &original,
            format!("words_rendered_more_than_once = {}", pinned + 1).as_str(),
        )
        .into_owned();
    assert_ne!(doctored, original);
    std::fs::write(&path, &doctored).unwrap();

    let judged = judged(result, &path, dir.path());
    // The run fails on the doctored pin …
    let report = hermes_e2e::report::text(&judged);
    assert!(!judged.passed, "{report}");
    assert!(
        report.contains(&format!(
            "words_rendered_more_than_once: expected {}, got {pinned}",
            pinned + 1
        )),
        "{report}"
    );
    let mut out = String::new();
    assert!(runner::bless_into(&[judged], &mut out), "{out}");
    // … and the blessing says what it rewrites, where, with the verdict, before writing.
    let line = line_of(&doctored, &format!("= {}", pinned + 1));
    let at = format!("check `after --resume` ({}:{line})", path.display());
    let change = format!(
        "    words_rendered_more_than_once: {} → {pinned}\n",
        pinned + 1
    );
    let (at_i, change_i, wrote_i) = (
        out.find(&at).unwrap_or_else(|| panic!("{at}: {out}")),
        out.find(&change)
            .unwrap_or_else(|| panic!("{change}: {out}")),
        out.find("bless: wrote ").unwrap_or_else(|| panic!("{out}")),
    );
    assert!(at_i < change_i && change_i < wrote_i, "{out}");
    assert!(
        out[change_i..].contains(&format!("    got: {pinned} words rendered more than once")),
        "{out}"
    );
    assert_eq!(
        out.matches(" → ").count(),
        1,
        "only the doctored pin changes: {out}"
    );
    // The file is the bundled one again, byte for byte; the included conversation untouched.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    assert_eq!(std::fs::read_to_string(&included).unwrap(), included_before);
}

/// A pin that becomes non-zero on a check with no known bug: the blessing writes the numbers,
/// the compact causes and `known_bug = "TODO: …"`, and says so.
fn a_pin_that_becomes_non_zero_gets_a_todo_known_bug(result: &ScenarioResult) {
    let dir = tempfile::tempdir().unwrap();
    let (path, original) = copy_scenario(dir.path(), "v0_19/draft_while_resized.toml");
    let expect = regex::Regex::new(r"(?m)^expect = \{.*\}\nknown_bug = .*\n").unwrap();
    let zeroed = expect
        .replace(&original, "expect = { prompt_rows = 5 }\n")
        .into_owned();
    assert!(!zeroed.contains("known_bug"), "{zeroed}");
    std::fs::write(&path, &zeroed).unwrap();

    let mut out = String::new();
    let settled = runner::bless_into(&[judged(result, &path, dir.path())], &mut out);
    assert!(settled, "{out}");
    let blessed = std::fs::read_to_string(&path).unwrap();
    let pinned = regex::Regex::new(
        r"(?m)^expect = \{ words_rendered_more_than_once = [1-9]\d*, causes = \{ display = [1-9]\d* \}, prompt_rows = 5 \}\nknown_bug = .TODO: ",
    )
    .unwrap();
    assert!(pinned.is_match(&blessed), "{blessed}\n{out}");
    assert!(out.contains("    known_bug: (none) → \"TODO: "), "{out}");
    assert!(
        out.contains("bless: 1 check(s) now pin a non-zero number with no known bug"),
        "{out}"
    );
    // The blessed file loads and holds: the run passes against it.
    let again = judged(result, &path, dir.path());
    assert!(again.passed, "{}", hermes_e2e::report::text(&again));
}
