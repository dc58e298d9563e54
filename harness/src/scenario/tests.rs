//! Unit tests of scenario parsing: files, includes, steps, expectations and their errors.

use super::*;

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(text, Path::new("s.toml"), "s".into())
}

/// The error parsing `text`, as printed.
fn error_in(text: &str) -> String {
    crate::chain::one_line(&parse(text).unwrap_err())
}

const OK: &str = "# pins nothing\n[scenario]\nsize = { rows = 40, cols = 100 }\n\n[[step]]\nlaunch = []\n\n[[step]]\nsay = \"hi\"\nreply = \"hello\"\n\n[[step]]\ncheck = \"end\"\nexpect = {}\n";

#[test]
fn parses_a_minimal_scenario() {
    let s = parse(OK).unwrap();
    assert_eq!(s.client, DEFAULT_CLIENT);
    assert_eq!(s.steps.len(), 3);
    assert_eq!(s.steps[1].line, 8);
    assert_eq!(s.summary, "pins nothing");
    assert_eq!(s.script().turns[0].reply, "hello");
}

#[test]
fn terminal_is_vt100_unless_named_and_parsed_strictly() {
    assert_eq!(parse(OK).unwrap().terminal, Terminal::Vt100);
    let reflow = OK.replace("[scenario]\n", "[scenario]\nterminal = \"reflow\"\n");
    assert_eq!(parse(&reflow).unwrap().terminal, Terminal::Reflow);
    let wrong = OK.replace("[scenario]\n", "[scenario]\nterminal = \"xterm\"\n");
    let error = error_in(&wrong);
    assert!(error.contains("unknown variant `xterm`"), "{error}");
}

#[test]
fn names_stay_inside_the_output_directory() {
    let root = Path::new("/work/scenarios");
    assert_eq!(
        scenario_name(Path::new("/work/scenarios/compress/a.toml"), root),
        "compress/a"
    );
    // Outside the root: the file stem, whatever the path.
    assert_eq!(scenario_name(Path::new("/tmp/x/probe.toml"), root), "probe");
    assert_eq!(scenario_name(Path::new("../up/b.toml"), root), "b");
    // Two with one stem run together: the second gets a suffix.
    let mut two = vec![parse(OK).unwrap(), parse(OK).unwrap(), parse(OK).unwrap()];
    two[0].name = "probe".into();
    two[1].name = "probe".into();
    two[2].name = "probe-2".into();
    unique_names(&mut two);
    let names: Vec<&str> = two.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["probe", "probe-2", "probe-2-2"]);
}

#[test]
fn tool_calls_and_files_are_parsed_and_checked() {
    let text = OK.replace(
        "reply = \"hello\"",
        "reply = \"hello\"\ntools = [{ name = \"read_file\", arguments = { path = \"a.txt\" } }]",
    ) + "\n[files]\n\"a.txt\" = \"abc\"\n";
    let s = parse(&text).unwrap();
    let turn = &s.script().turns[0];
    assert_eq!(turn.tool_calls[0].name, "read_file");
    assert_eq!(turn.tool_calls[0].arguments["path"], "a.txt");
    assert_eq!(s.files, vec![(PathBuf::from("a.txt"), "abc".to_owned())]);
    let escape = OK.to_owned() + "\n[files]\n\"../a.txt\" = \"abc\"\n";
    let err = error_in(&escape);
    assert!(err.contains("relative path inside"), "{err}");
    let stray = OK.replace(
        "check = \"end\"",
        "check = \"end\"\ntools = [{ name = \"read_file\" }]",
    );
    let err = error_in(&stray);
    assert!(err.contains("`tools` does not belong"), "{err}");
}

#[test]
fn a_narration_goes_with_tool_calls_only() {
    let tools = "reply = \"hello\"\ntools = [{ name = \"read_file\" }]";
    let text = OK.replace(
        "reply = \"hello\"",
        &format!("{tools}\nnarration = \"Let me look.\""),
    );
    let s = parse(&text).unwrap();
    assert_eq!(s.script().turns[0].narration, "Let me look.");
    assert_eq!(parse(OK).unwrap().script().turns[0].narration, "");
    let alone = OK.replace("reply = \"hello\"", "reply = \"hello\"\nnarration = \"x\"");
    let err = error_in(&alone);
    assert!(err.contains("`narration` does not belong"), "{err}");
    let empty = OK.replace("reply = \"hello\"", &format!("{tools}\nnarration = \" \""));
    let err = error_in(&empty);
    assert!(
        err.contains("s.toml:8") && err.contains("`narration` must not be empty"),
        "{err}"
    );
}

#[test]
fn more_tools_are_further_rounds() {
    let text = OK.replace(
        "reply = \"hello\"",
        "reply = \"hello\"\ntools = [{ name = \"read_file\" }]\nmore_tools = [{ narration = \"Now the clock.\", tools = [{ name = \"terminal\", arguments = { command = \"date\" } }] }]",
    );
    let turn = parse(&text).unwrap().script().turns[0].clone();
    assert_eq!(turn.rounds.len(), 1);
    assert_eq!(turn.rounds[0].narration, "Now the clock.");
    assert_eq!(turn.rounds[0].tool_calls[0].name, "terminal");
    let alone = OK.replace(
        "reply = \"hello\"",
        "reply = \"hello\"\nmore_tools = [{ tools = [{ name = \"terminal\" }] }]",
    );
    assert!(error_in(&alone).contains("`more_tools` does not belong"));
    let empty = OK.replace(
        "reply = \"hello\"",
        "reply = \"hello\"\ntools = [{ name = \"read_file\" }]\nmore_tools = [{ tools = [] }]",
    );
    assert!(error_in(&empty).contains("each `more_tools` round needs"));
}

#[test]
fn unknown_key_is_an_error_with_its_line() {
    let err = error_in(&OK.replace("reply = \"hello\"", "reply = \"hello\"\nrepyl = 1"));
    assert!(err.contains("repyl") && err.contains("s.toml"), "{err}");
}

#[test]
fn unknown_finding_is_an_error() {
    let text = OK.replace("expect = {}", "expect = { words_rendered_twice = 3 }");
    let err = error_in(&text);
    assert!(err.contains("words_rendered_twice"), "{err}");
}

#[test]
fn a_step_with_two_actions_names_its_line() {
    let err = error_in(&OK.replace("say = \"hi\"", "say = \"hi\"\nquit = true"));
    assert!(
        err.contains("s.toml:8") && err.contains("exactly one"),
        "{err}"
    );
}

#[test]
fn say_without_reply_is_an_error() {
    assert!(error_in(&OK.replace("reply = \"hello\"\n", "")).contains("reply"));
}

#[test]
fn first_line_must_say_what_is_pinned() {
    assert!(error_in(&OK.replacen("# pins nothing\n", "", 1)).contains("first line"));
}

#[test]
fn unknown_cause_is_an_error() {
    let text = OK.replace("expect = {}", "expect = { causes = [\"screen\"] }");
    assert!(parse(&text)
        .unwrap_err()
        .to_string()
        .contains("unknown cause"));
}

#[test]
fn merge_is_deep() {
    let mut base = serde_json::json!({"a": {"b": 1, "c": 2}, "d": 3});
    merge_json(&mut base, &serde_json::json!({"a": {"b": 9}, "e": 4}));
    assert_eq!(
        base,
        serde_json::json!({"a": {"b": 9, "c": 2}, "d": 3, "e": 4})
    );
}

#[test]
fn discover_rejects_an_empty_directory() {
    let dir = tempfile::tempdir().unwrap();
    let err = discover(&[dir.path().to_owned()]).unwrap_err();
    assert!(matches!(err, ScenarioError::NoScenarios { .. }));
}

#[test]
fn a_paced_say_step_with_during_entries_is_parsed() {
    let text = OK.replace(
        "reply = \"hello\"",
        "reply = \"hello there, keeper of the light\"\n\
         stream = { chunk_chars = 10, delay_ms = 30 }\n\
         during = [\n\
           { after_word = \"keeper\", drag = [\"90x40\", \"80x30\"], gap_ms = 50 },\n\
           { after_ms = 200, key = \"ctrl-c\" },\n\
           { after_ms = 300, type = \"more\" },\n\
           { after_ms = 400, command = \"/queue And the fog?\", reply = \"Fog horns.\" },\n\
         ]",
    );
    let s = parse(&text).unwrap();
    let Action::Say { stream, during, .. } = &s.steps[1].action else {
        panic!("not a say step");
    };
    let pace = stream.expect("paced");
    assert_eq!((pace.chunk_chars, pace.delay.as_millis()), (10, 30));
    assert_eq!(during.len(), 4);
    assert_eq!(during[0].trigger, Trigger::AfterWord("keeper".into()));
    assert_eq!(
        during[0].action,
        DuringAction::Drag {
            sizes: vec![
                crate::terminal::Size { cols: 90, rows: 40 },
                crate::terminal::Size { cols: 80, rows: 30 }
            ],
            gap_ms: 50
        }
    );
    assert_eq!(during[1].action, DuringAction::Key(Key::CtrlC));
    // The queued message's reply is scripted after the step's own turn.
    let turns = s.script().turns;
    assert_eq!(turns.len(), 2);
    assert_eq!(
        (turns[1].user.as_str(), turns[1].reply.as_str()),
        ("And the fog?", "Fog horns.")
    );
    assert_eq!(turns[0].stream, Some(pace));
}

#[test]
fn during_entries_are_checked_strictly() {
    let with = |extra: &str| {
        error_in(&OK.replace(
            "reply = \"hello\"",
            &format!("reply = \"hello there, keeper of the light\"\n{extra}"),
        ))
    };
    let paced = "stream = { chunk_chars = 10, delay_ms = 30 }\n";
    let cases = [
        (
            "during = [{ after_ms = 1, key = \"enter\" }]".to_owned(),
            "`during` needs `stream",
        ),
        (
            format!("{paced}during = [{{ key = \"enter\" }}]"),
            "exactly one trigger",
        ),
        (
            format!(
                "{paced}during = [{{ after_ms = 1, after_word = \"light\", key = \"enter\" }}]"
            ),
            "exactly one trigger",
        ),
        (
            format!("{paced}during = [{{ after_ms = 1 }}]"),
            "exactly one action",
        ),
        (
            format!("{paced}during = [{{ after_word = \"lamp\", key = \"enter\" }}]"),
            "must occur once in the reply",
        ),
        (
            format!("{paced}during = [{{ after_word = \"hi\", key = \"enter\" }}]"),
            "must occur once in the reply",
        ),
        (
            format!("{paced}during = [{{ after_ms = 1, key = \"ctrl-z\" }}]"),
            "ctrl-z",
        ),
        (
            format!("{paced}during = [{{ after_ms = 1, drag = [\"80x24\", \"70x24\"] }}]"),
            "`drag` and `gap_ms` go together",
        ),
        (
            format!("{paced}during = [{{ after_ms = 1, resize = \"30x24\" }}]"),
            "40..=1000 cols",
        ),
        (
            format!("{paced}during = [{{ after_ms = 1, type = \"x\", reply = \"y\" }}]"),
            "`reply` belongs to",
        ),
        (
            format!("{paced}during = [{{ after_ms = 1, command = \"queue x\" }}]"),
            "starting with `/`",
        ),
        (
            format!("{paced}fault = \"http_500\"\nduring = [{{ after_ms = 1, key = \"enter\" }}]"),
            "the reply never streams",
        ),
        (
            "stream = { chunk_chars = 0, delay_ms = 30 }".to_owned(),
            "1..=10000 `chunk_chars`",
        ),
        (
            format!("{paced}fault = \"drop_stream\""),
            "does not combine",
        ),
    ];
    for (extra, wanted) in cases {
        let err = with(&extra);
        assert!(err.contains(wanted), "{extra}: {err}");
        assert!(err.contains("s.toml"), "{err}");
    }
    let stray = OK.replace(
        "check = \"end\"",
        "check = \"end\"\nstream = { chunk_chars = 1, delay_ms = 1 }",
    );
    assert!(error_in(&stray).contains("`stream` does not belong"));
}

#[test]
fn model_switch_commands_name_the_models_the_fake_serves() {
    assert_eq!(
        model_switch_target("/model other-model"),
        Some("other-model".into())
    );
    assert_eq!(
        model_switch_target("/model --provider custom big-model --global"),
        Some("big-model".into())
    );
    assert_eq!(
        model_switch_target("/model --reasoning high m2"),
        Some("m2".into())
    );
    assert_eq!(model_switch_target("/model"), None);
    assert_eq!(model_switch_target("/model --provider custom"), None);
    assert_eq!(model_switch_target("/models x"), None);
    assert_eq!(model_switch_target("/compress"), None);
    let text = OK.replace(
        "[[step]]\nsay",
        "[[step]]\ncommand = \"/model m-2\"\nwait_for = \"switched\"\n\n[[step]]\nsay",
    );
    let s = parse(&text).unwrap();
    assert_eq!(s.script().models, ["m-2"]);
    assert!(parse(OK).unwrap().script().models.is_empty());
}

#[test]
fn an_include_splices_all_or_a_range_of_the_shared_steps() {
    let dir = tempfile::tempdir().unwrap();
    let shared: String = (1..=3)
        .map(|i| format!("[[step]]\nsay = \"q{i}\"\nreply = \"a{i}\"\n\n"))
        .collect();
    std::fs::write(dir.path().join("c.steps.toml"), shared).unwrap();
    let scenario = |include: &str| {
        let text = format!(
            "# pins nothing\n[scenario]\nsize = {{ rows = 40, cols = 100 }}\n\n[[step]]\nlaunch = []\n\n\
             [[step]]\n{include}\n\n[[step]]\ncheck = \"end\"\nexpect = {{}}\n"
        );
        Scenario::parse(&text, &dir.path().join("s.toml"), "s".into())
    };
    let said =
        |s: Scenario| -> Vec<String> { s.script().turns.into_iter().map(|t| t.user).collect() };
    assert_eq!(
        said(scenario("include = \"c.steps.toml\"").unwrap()),
        ["q1", "q2", "q3"]
    );
    let part = scenario("include = \"c.steps.toml\"\nsteps = [2, 3]").unwrap();
    assert_eq!(
        part.steps[1].line, 8,
        "included steps are reported at the include"
    );
    assert_eq!(said(part), ["q2", "q3"]);
    assert_eq!(
        said(scenario("include = \"c.steps.toml\"\nsteps = [1, 1]").unwrap()),
        ["q1"]
    );
    for bad in ["[0, 1]", "[3, 2]", "[2, 4]"] {
        let e = scenario(&format!("include = \"c.steps.toml\"\nsteps = {bad}"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("has steps 1 to 3"), "{bad}: {e}");
    }
    let e = scenario("say = \"hi\"\nreply = \"ho\"\nsteps = [1, 1]")
        .unwrap_err()
        .to_string();
    assert!(e.contains("`steps` does not belong to this step"), "{e}");
}

#[test]
fn a_command_may_name_the_text_it_puts_back_into_the_composer() {
    let undo = OK.replace(
        "[[step]]\ncheck",
        "[[step]]\ncommand = \"/undo 1 now\"\nwait_for = \"undo\"\nprefill = \"hi\"\n\n[[step]]\ncheck",
    );
    let s = parse(&undo).unwrap();
    assert_eq!(
        s.steps[2].action,
        Action::Command {
            text: "/undo 1 now".into(),
            wait_for: "undo".into(),
            prefill: Some("hi".into()),
        }
    );
    let plain = parse(&OK.replace(
        "[[step]]\ncheck",
        "[[step]]\ncommand = \"/compress\"\nwait_for = \"Compressed:\"\n\n[[step]]\ncheck",
    ))
    .unwrap();
    assert!(matches!(
        &plain.steps[2].action,
        Action::Command { prefill: None, .. }
    ));
    let empty = error_in(&undo.replace("prefill = \"hi\"", "prefill = \" \""));
    assert!(
        empty.contains("s.toml:12") && empty.contains("`prefill` must not be empty"),
        "{empty}"
    );
    let stray = error_in(&OK.replace(
        "reply = \"hello\"\n",
        "reply = \"hello\"\nprefill = \"hi\"\n",
    ));
    assert!(
        stray.contains("`prefill` does not belong to this step"),
        "{stray}"
    );
}

/// The expectation of the only `check` step of `text`.
fn expectation(text: &str) -> Expectation {
    parse(text)
        .unwrap()
        .steps
        .into_iter()
        .find_map(|s| match s.action {
            Action::Check { expect, .. } => Some(expect),
            _ => None,
        })
        .expect("a check step")
}

/// A check at `end` with these findings and nothing else.
fn check_with(findings: crate::oracle::Findings) -> crate::oracle::Check {
    crate::oracle::Check {
        findings,
        ..crate::oracle::Check::empty("end")
    }
}

#[test]
fn taken_back_shown_is_pinned_like_the_other_findings() {
    use crate::oracle::Findings;
    let e = expectation(&OK.replace("expect = {}", "expect = { taken_back_shown = 4 }"));
    assert_eq!(e.findings.taken_back_shown, 4);
    let mut check = check_with(Findings {
        taken_back_shown: 2,
        ..Findings::default()
    });
    assert_eq!(
        e.mismatches(&check, None),
        ["taken_back_shown: expected 4, got 2"]
    );
    check.findings.taken_back_shown = 4;
    assert!(e.mismatches(&check, None).is_empty());
    let unpinned = expectation(&OK.replace(
        "expect = {}",
        "expect = { unpinned = [\"taken_back_shown\"] }",
    ));
    assert!(unpinned.mismatches(&check, None).is_empty());
}

#[test]
fn row_counts_are_compared_only_where_named_and_unpinned_findings_not_at_all() {
    use crate::oracle::{Findings, RowCounts};
    let e = expectation(&OK.replace(
        "expect = {}",
        "expect = { unpinned = [\"words_rendered_more_than_once\", \"causes\"], prompt_rows = 1, max_blank_run = { at_most = 2 } }",
    ));
    assert_eq!(e.rows.prompt_rows, Some(RowPin::Exactly(1)));
    assert_eq!(e.rows.max_blank_run, Some(RowPin::AtMost { at_most: 2 }));
    assert_eq!(e.rows.stale_preview_rows, None);
    let check = check_with(Findings {
        words_rendered_more_than_once: 56,
        missing_messages: 1,
        ..Findings::default()
    });
    let rows = RowCounts {
        stale_preview_rows: 4,
        prompt_rows: 2,
        max_blank_run: 2,
        questions_not_once: 1,
    };
    assert_eq!(
        e.mismatches(&check, Some(&rows)),
        [
            "missing_messages: expected 0, got 1",
            "prompt_rows: expected 1, got 2"
        ]
    );
    assert_eq!(
        e.mismatches(&check, None)[1..],
        [
            "prompt_rows: expected 1, not counted (no terminal history at this check)",
            "max_blank_run: expected at most 2, not counted (no terminal history at this check)"
        ]
    );
    let over = RowCounts {
        max_blank_run: 3,
        ..rows
    };
    assert_eq!(
        e.mismatches(&check, Some(&over))[2],
        "max_blank_run: expected at most 2, got 3"
    );
}

#[test]
fn a_row_pin_is_a_count_or_a_bound_and_nothing_else() {
    for (pin, message) in [
        (
            "\"two\"",
            "expected a row count (`2`) or a bound (`{ at_most = 2 }`)",
        ),
        (
            "-1",
            "expected a row count (`2`) or a bound (`{ at_most = 2 }`)",
        ),
        (
            "{ at_least = 2 }",
            "unknown field `at_least`, expected `at_most`",
        ),
    ] {
        let text = OK.replace(
            "expect = {}",
            &format!("expect = {{ prompt_rows = {pin} }}"),
        );
        let error = error_in(&text);
        assert!(error.contains(message), "{pin}: {error}");
    }
}

#[test]
fn unknown_unpinned_finding_is_an_error() {
    let text = OK.replace("expect = {}", "expect = { unpinned = [\"words\"] }");
    assert!(error_in(&text).contains("`unpinned`: unknown finding `words`"));
}

#[test]
fn a_launch_takes_resizes_during_its_first_screen_and_nothing_else() {
    let launch = |during: &str| {
        OK.replace(
            "launch = []\n",
            &format!("launch = []\nduring = [{during}]\n"),
        )
    };
    let s = parse(&launch(
        "{ after_word = \"recap\", drag = [\"90x40\", \"80x40\"], gap_ms = 50 }",
    ))
    .unwrap();
    let Action::Launch { during, .. } = &s.steps[0].action else {
        panic!("a launch");
    };
    assert_eq!(during.len(), 1);
    assert_eq!(during[0].trigger, Trigger::AfterWord("recap".into()));
    assert!(error_in(&launch("{ after_ms = 10, resize = \"80x40\" }"))
        .contains("`during` entry 1 of a `launch`: needs `after_word"));
    assert!(
        error_in(&launch("{ after_word = \"recap\", key = \"ctrl-c\" }"))
            .contains("a `launch` takes only `resize` or `drag`")
    );
}

#[test]
fn known_bug_belongs_to_a_check_and_says_something() {
    let bug = "the carrier is drawn twice (upstream PR #142187)";
    let e = expectation(&OK.replace(
        "expect = {}\n",
        &format!("expect = {{ words_rendered_more_than_once = 3 }}\nknown_bug = \"{bug}\"\n"),
    ));
    assert_eq!(e.known_bug.as_deref(), Some(bug));
    assert_eq!(expectation(OK).known_bug, None);
    let stray = error_in(&OK.replace(
        "reply = \"hello\"\n",
        "reply = \"hello\"\nknown_bug = \"x\"\n",
    ));
    assert!(
        stray.contains("s.toml:8") && stray.contains("`known_bug` does not belong to this step"),
        "{stray}"
    );
    let empty = error_in(&OK.replace("expect = {}\n", "expect = {}\nknown_bug = \" \"\n"));
    assert!(
        empty.contains("s.toml:12") && empty.contains("`known_bug` must not be empty"),
        "{empty}"
    );
    let typo = error_in(&OK.replace("expect = {}\n", "expect = {}\nknown_bugs = \"x\"\n"));
    assert!(typo.contains("unknown field `known_bugs`"), "{typo}");
    // Inside `expect` it is an unknown finding, not the step's key.
    let inside = error_in(&OK.replace("expect = {}", "expect = { known_bug = \"x\" }"));
    assert!(inside.contains("unknown field `known_bug`"), "{inside}");
}

#[test]
fn a_known_bug_reads_fixed_only_when_every_number_it_pins_dropped_to_zero() {
    use crate::oracle::{Findings, RowCounts};
    let pinned = |expect: &str| {
        expectation(&OK.replace(
            "expect = {}\n",
            &format!("expect = {expect}\nknown_bug = \"carrier\"\n"),
        ))
    };
    let e = pinned("{ words_rendered_more_than_once = 169, internal_text_shown = 502, causes = [\"display\"], prompt_rows = 1, questions_not_once = 6 }");
    let zero = check_with(Findings::default());
    let rows = |prompt_rows, questions_not_once| RowCounts {
        prompt_rows,
        questions_not_once,
        ..RowCounts::default()
    };
    assert_eq!(e.fixed_upstream(&zero, Some(&rows(1, 0))), Some("carrier"));
    assert_eq!(
        e.fixed_upstream(&zero, Some(&rows(1, 6))),
        Some("carrier"),
        "a row pin that still holds is no difference"
    );
    assert_eq!(
        e.fixed_upstream(&zero, Some(&rows(1, 3))),
        None,
        "a row pin off, not to 0"
    );
    assert_eq!(
        e.fixed_upstream(&zero, Some(&rows(2, 0))),
        None,
        "a row pin broken another way"
    );
    let partly = check_with(Findings {
        internal_text_shown: 502,
        ..Findings::default()
    });
    assert_eq!(
        e.fixed_upstream(&partly, Some(&rows(1, 0))),
        None,
        "only part of it gone"
    );
    let other = check_with(Findings {
        missing_messages: 1,
        ..Findings::default()
    });
    assert_eq!(
        e.fixed_upstream(&other, Some(&rows(1, 0))),
        None,
        "a new problem"
    );
    // No known bug, or nothing pinned non-zero: never "fixed".
    let mut unnamed = e.clone();
    unnamed.known_bug = None;
    assert_eq!(unnamed.fixed_upstream(&zero, Some(&rows(1, 0))), None);
    assert_eq!(pinned("{}").fixed_upstream(&zero, None), None);
    // Unpinned findings neither count as pinned nor stop it.
    let unpinned = pinned(
        "{ unpinned = [\"words_rendered_more_than_once\", \"causes\"], internal_text_shown = 4 }",
    );
    let words = check_with(Findings {
        words_rendered_more_than_once: 9,
        ..Findings::default()
    });
    assert_eq!(unpinned.fixed_upstream(&words, None), Some("carrier"));
    assert_eq!(
        pinned("{ unpinned = [\"words_rendered_more_than_once\"] }").fixed_upstream(&zero, None),
        None
    );
}

#[test]
fn a_correct_display_is_every_finding_zero_and_the_row_pins_as_bounds() {
    use crate::oracle::{Findings, RowCounts};
    let e = expectation(&OK.replace(
        "expect = {}\n",
        "expect = { unpinned = [\"words_rendered_more_than_once\", \"causes\"], internal_text_shown = 502, prompt_rows = 1, max_blank_run = { at_most = 2 }, questions_not_once = 6 }\nknown_bug = \"carrier\"\n",
    ));
    let correct = e.correct();
    assert_eq!(correct.findings, Findings::default());
    assert!(correct.causes.is_empty() && correct.unpinned.is_empty());
    assert_eq!(
        correct.rows.prompt_rows,
        Some(RowPin::AtMost { at_most: 1 })
    );
    assert_eq!(
        correct.rows.max_blank_run,
        Some(RowPin::AtMost { at_most: 2 })
    );
    assert_eq!(
        correct.rows.questions_not_once,
        Some(RowPin::AtMost { at_most: 6 })
    );
    assert_eq!(correct.rows.stale_preview_rows, None);
    assert_eq!(correct.known_bug.as_deref(), Some("carrier"));
    let rows = RowCounts {
        prompt_rows: 1,
        max_blank_run: 1,
        questions_not_once: 0,
        ..RowCounts::default()
    };
    let words = check_with(Findings {
        words_rendered_more_than_once: 9,
        ..Findings::default()
    });
    assert_eq!(
        correct.mismatches(&words, Some(&rows)),
        ["words_rendered_more_than_once: expected 0, got 9"],
        "what the scenario left unpinned is compared"
    );
    assert!(correct
        .mismatches(&check_with(Findings::default()), Some(&rows))
        .is_empty());
    assert_eq!(
        correct.fixed_upstream(&check_with(Findings::default()), None),
        None
    );
    // The scenario: every check, nothing else.
    let scenario =
        parse(&OK.replace("expect = {}\n", "expect = { missing_messages = 2 }\n")).unwrap();
    let corrected = scenario.expecting_correct();
    assert_eq!(corrected.steps.len(), scenario.steps.len());
    assert!(matches!(
        &corrected.steps[2].action,
        Action::Check { expect, .. } if expect.findings == Findings::default()
    ));
    assert_eq!(corrected.steps[1], scenario.steps[1]);
}

#[test]
fn type_steps_model_the_composer_and_a_draft_blocks_a_line() {
    let text = OK.replace(
        "[[step]]\ncheck",
        "[[step]]\ntype = \"unsent draft\"\nkeys = [\"ctrl-w\", \"backspace\"]\n\n\
         [[step]]\ntype = \"ed\"\n\n[[step]]\nresize = \"80x30\"\n\n[[step]]\nsettle = 400\n\n[[step]]\ncheck",
    );
    let s = parse(&text).unwrap();
    assert_eq!(
        s.steps[2].action,
        Action::Type {
            text: "unsent draft".into(),
            typed: "unsent draft".into(),
            keys: vec![
                (EditKey::CtrlW, "unsent ".into()),
                (EditKey::Backspace, "unsent".into())
            ],
        }
    );
    let Action::Type { typed, .. } = &s.steps[3].action else {
        panic!("{:?}", s.steps[3]);
    };
    assert_eq!(typed, "unsented");
    assert_eq!(s.steps[5].action, Action::Settle { quiet_ms: 400 });
    // A line sent over the draft is refused, with the way out.
    let over = text.replace(
        "[[step]]\ncheck",
        "[[step]]\ncommand = \"/help\"\nwait_for = \"x\"\n\n[[step]]\ncheck",
    );
    let err = error_in(&over);
    assert!(
        err.contains("still holds `unsented`") && err.contains("ctrl-u"),
        "{err}"
    );
    // Cleared first, it is accepted; a quit clears it too.
    let cleared = over.replace(
        "[[step]]\ncommand",
        "[[step]]\ntype = \"\"\nkeys = [\"ctrl-e\", \"ctrl-u\"]\n\n[[step]]\ncommand",
    );
    parse(&cleared).unwrap();
    let err = error_in(&OK.replace(
        "[[step]]\ncheck",
        "[[step]]\ntype = \"a\\n\"\n\n[[step]]\ncheck",
    ));
    assert!(err.contains("without Enter"), "{err}");
    let err = error_in(&OK.replace(
        "[[step]]\ncheck",
        "[[step]]\nsettle = 20\n\n[[step]]\ncheck",
    ));
    assert!(err.contains("50..=10000"), "{err}");
    let err = error_in(&OK.replace(
        "[[step]]\ncheck",
        "[[step]]\nresize = \"80x30\"\nkeys = [\"left\"]\n\n[[step]]\ncheck",
    ));
    assert!(err.contains("`keys` does not belong"), "{err}");
}

#[test]
fn kill_ends_a_turn_or_is_a_step_of_its_own() {
    let paced = "reply = \"hello there, keeper of the light\"\n\
                 stream = { chunk_chars = 10, delay_ms = 30 }\n";
    let killed = parse(&OK.replace(
        "reply = \"hello\"",
        &format!("{paced}during = [{{ after_ms = 100, key = \"enter\" }}, {{ after_word = \"keeper\", kill = true }}]"),
    ))
    .unwrap();
    let Action::Say { during, .. } = &killed.steps[1].action else {
        panic!("not a say step");
    };
    assert_eq!(during[1].action, DuringAction::Kill);
    assert!(killed_mid_turn(&killed.steps[1].action));
    assert!(!killed_mid_turn(&parse(OK).unwrap().steps[1].action));

    let step = parse(&OK.replace(
        "check = \"end\"",
        "kill = true\n\n[[step]]\ncheck = \"end\"",
    ))
    .unwrap();
    assert_eq!(step.steps[2].action, Action::Kill);

    let cases = [
        (
            format!("{paced}during = [{{ after_ms = 1, kill = true }}, {{ after_ms = 2, key = \"enter\" }}]"),
            "`kill` must be the last entry",
        ),
        (
            format!("{paced}during = [{{ after_ms = 1, kill = false }}]"),
            "`kill = false` is not an action",
        ),
        (
            format!("{paced}during = [{{ after_ms = 1, kill = true, key = \"enter\" }}]"),
            "exactly one action",
        ),
    ];
    for (extra, wanted) in cases {
        let err = error_in(&OK.replace("reply = \"hello\"", &extra));
        assert!(err.contains(wanted), "{extra}: {err}");
    }
    let err = error_in(&OK.replace(
        "check = \"end\"",
        "kill = false\n\n[[step]]\ncheck = \"end\"",
    ));
    assert!(err.contains("`kill = false` is not a step"), "{err}");
    let err = error_in(&OK.replace(
        "launch = []",
        "launch = []\nduring = [{ after_word = \"x\", kill = true }]",
    ));
    assert!(err.contains("a `launch` takes only"), "{err}");
}

#[test]
fn the_terminal_table_says_when_answers_come_and_whether_pastes_are_bracketed() {
    use crate::terminal::{Answers, Behaviour};
    use std::time::Duration;
    assert_eq!(parse(OK).unwrap().behaviour, Behaviour::default());
    let with = |table: &str| {
        OK.replace(
            "\n[[step]]\nlaunch",
            &format!("\n[terminal]\n{table}\n\n[[step]]\nlaunch"),
        )
    };
    let late = parse(&with("answer_after_ms = 400\nbracketed_paste = false")).unwrap();
    assert_eq!(
        late.behaviour.answers,
        Answers::After(Duration::from_millis(400))
    );
    assert!(!late.behaviour.bracketed_paste);
    let never = parse(&with("answers = false")).unwrap();
    assert_eq!(never.behaviour.answers, Answers::Never);
    let split = parse(&with("split_answers_ms = 600")).unwrap();
    assert_eq!(
        split.behaviour.answers,
        Answers::Split(Duration::from_millis(600))
    );
    assert!(error_in(&with("answers = false\nanswer_after_ms = 5")).contains("contradict"));
    assert!(error_in(&with("answer_after_ms = 0")).contains("1..=10000"));
    assert!(error_in(&with("split_answers_ms = 5\nanswers = true")).contains("goes alone"));
    assert!(parse(&with("answer_soon = true")).is_err());
}

#[test]
fn a_paste_step_needs_its_reply_and_scripts_each_line() {
    let paste = OK.replace(
        "say = \"hi\"\nreply = \"hello\"",
        "paste = \"one line\\ntwo line\\n\"\nreply = \"both\"",
    );
    let s = parse(&paste).unwrap();
    assert_eq!(
        s.steps[1].action,
        Action::Paste {
            text: "one line\ntwo line\n".into(),
            reply: "both".into()
        }
    );
    let users: Vec<String> = s.script().turns.iter().map(|t| t.user.clone()).collect();
    assert_eq!(users, ["one line\ntwo line", "one line", "two line"]);
    let bare = OK.replace("say = \"hi\"\nreply = \"hello\"", "paste = \"a\\nb\"");
    assert!(error_in(&bare).contains("`paste` needs the model's `reply`"));
}
