//! Unit tests of scenario parsing: files, includes, steps, expectations and their errors.

use super::*;

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(text, Path::new("s.toml"), "s".into())
}

/// The error parsing `text`, as printed.
fn error_in(text: &str) -> String {
    parse(text).unwrap_err().to_string()
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
    assert_eq!(
        scenario_name(Path::new("/tmp/x/probe.toml"), root),
        "tmp/x/probe"
    );
    assert_eq!(scenario_name(Path::new("../up/b.toml"), root), "up/b");
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
fn unknown_key_is_an_error_with_its_line() {
    let err = error_in(&OK.replace("reply = \"hello\"", "reply = \"hello\"\nrepyl = 1"));
    assert!(err.contains("repyl") && err.contains("s.toml"), "{err}");
}

#[test]
fn unknown_finding_is_an_error() {
    let text = OK.replace("expect = {}", "expect = { words_rendered_twice = 3 }");
    let err = parse(&text).unwrap_err().to_string();
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
