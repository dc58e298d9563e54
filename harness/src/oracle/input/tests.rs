//! `stray_text` and `input_split` on planted defects, at exact size.

use proptest::prelude::*;

use super::*;
use crate::display::{InternalText, LogicalMessage};

fn message(role: Role, text: &str) -> LogicalMessage {
    LogicalMessage {
        role,
        text: text.to_owned(),
        rows: Vec::new(),
        shown: 0,
    }
}

fn expected(messages: Vec<LogicalMessage>) -> Expected {
    Expected {
        session_id: "s".into(),
        lineage: vec!["s".into()],
        stored_rows: messages.len(),
        messages,
        internal: Vec::<InternalText>::new(),
        taken_back: Vec::new(),
    }
}

fn lines(text: &[&str]) -> Vec<String> {
    text.iter().map(|s| s.to_string()).collect()
}

#[test]
fn reports_the_terminal_sends_are_stray_where_drawn() {
    let e = expected(vec![message(Role::User, "hello")]);
    let screen = lines(&[
        "❯ 20;1R21;1R",
        "^[[200~pasted^[[201~",
        "<35;12;5M<35;13;5M",
        "^[[?1;2c",
        "]11;rgb:0000/0000/0000\\",
    ]);
    let stray = stray_text(&screen, &e, &[]);
    let kinds: Vec<&str> = stray.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            "cursor_position",
            "cursor_position",
            "paste_marker",
            "paste_marker",
            "mouse",
            "mouse",
            "device_attributes",
            "colour"
        ]
    );
    // 5 + 5, 7 + 7, 9 + 9, 8, 23 characters.
    assert_eq!(stray_chars(&stray), 73);
    assert_eq!(stray[0].row, 1);
}

#[test]
fn ordinary_text_is_not_stray() {
    let e = expected(Vec::new());
    let screen = lines(&[
        "Meet at 10;30 or at 12:45R?",
        "nor is x20;1R or 20;1Rx, nor ?1;2cm",
        "C:\\path [0n] <b> 0n",
        "│ ◆ Hermes │ gpt-4 │ 12% │ 3 msgs │",
        "arrays a[200] and ~200~",
    ]);
    assert_eq!(stray_text(&screen, &e, &[]), Vec::new());
}

#[test]
fn a_run_a_message_quotes_is_not_stray() {
    let e = expected(vec![message(
        Role::Assistant,
        "A terminal answers `ESC[6n` with ESC[20;1R, e.g. 20;1R.",
    )]);
    let screen = lines(&["with ESC[20;1R, e.g. 20;1R.", "^[[200~"]);
    let stray = stray_text(&screen, &e, &[]);
    assert_eq!(stray_chars(&stray), 7, "{stray:?}");
}

#[test]
fn a_run_the_user_typed_is_not_stray_but_one_the_client_put_in_a_message_is() {
    // The client sent the terminal's answers inside the user's message.
    let e = expected(vec![message(
        Role::User,
        "]11;rgb:0000/0000/0000What did a keeper do?[40;1R",
    )]);
    let screen = lines(&[
        "● ]11;rgb:0000/0000/0000What did a keeper do?[40;1R",
        "❯ [36;1R",
    ]);
    let stray = stray_text(&screen, &e, &[]);
    assert_eq!(stray_chars(&stray), 22 + 6 + 6, "{stray:?}");
    // What the user typed excuses it.
    let typed = lines(&["my terminal printed [36;1R"]);
    // A late colour answer and device attributes typed in front of the question (iot 0.22).
    let late = lines(&["● ]11;rgb:0000/0000/0000[?1;2cWhat did a keeper do?"]);
    assert_eq!(stray_chars(&stray_text(&late, &e, &[])), 22 + 6);
    assert_eq!(stray_chars(&stray_text(&screen, &e, &typed)), 22 + 6);
}

#[test]
fn an_echoed_answer_is_taken_out_of_the_line_it_landed_in() {
    // Measured on hermes-agent 0.19.0 answering 1.5 s late: a report echoed inside a reply.
    assert_eq!(
        without_echoes("^[[38;1R    the published characteristic."),
        "    the published characteristic."
    );
    assert_eq!(
        without_echoes("a beam^[[38;1R^[[39;1R instead"),
        "a beam instead"
    );
    assert_eq!(without_echoes("\u{241b}[12;1Rdone"), "done");
    // Only echoes drawn with their ESC: a reply quoting a report keeps it, as do a caret alone
    // and a caret that starts no answer.
    assert_eq!(
        without_echoes("it printed 36;1R here"),
        "it printed 36;1R here"
    );
    assert_eq!(without_echoes("x ^ y and ^[[A"), "x ^ y and ^[[A");
}

#[test]
fn a_composer_of_stray_runs_alone_is_idle() {
    assert!(only_stray("[36;1R"));
    assert!(only_stray("^[[12;1R^[[13;1R "));
    assert!(!only_stray(""));
    assert!(!only_stray("[36;1R hello"));
}

#[test]
fn a_paste_sent_whole_is_not_split() {
    let paste = vec!["one line\ntwo line\nthree\n".to_owned()];
    let e = expected(vec![message(Role::User, "one line\ntwo line\nthree")]);
    assert_eq!(split_inputs(&paste, &e, None), Vec::new());
    // A piece alone (the rest lost) is not a split either.
    let e = expected(vec![message(Role::User, "one line")]);
    assert_eq!(splits(&split_inputs(&paste, &e, None)), 0);
    // One line is no paste of lines.
    let one = vec!["one line\n".to_owned()];
    let e = expected(vec![message(Role::User, "one line")]);
    assert_eq!(split_inputs(&one, &e, None), Vec::new());
}

#[test]
fn a_split_is_read_from_what_was_said_when_the_store_has_less() {
    let paste = vec!["a b\nc d\ne f\n".to_owned()];
    let e = expected(vec![message(Role::User, "a b")]);
    let said = lines(&["a b", "c d", "e f"]);
    let split = split_inputs(&paste, &e, Some(&said));
    assert_eq!(splits(&split), 2);
    assert_eq!(split[0].messages, 3);
    assert_eq!(split[0].first_line, "a b");
}

/// A word of planted prose: letters only, so it never reads as a report.
fn word() -> impl Strategy<Value = String> {
    "[a-z]{1,8}"
}

/// A planted report, as drawn.
fn planted() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u16..200, 1u16..300).prop_map(|(r, c)| format!("{r};{c}R")),
        (1u16..200, 1u16..300).prop_map(|(r, c)| format!("^[[{r};{c}R")),
        Just("^[[200~".to_owned()),
        Just("[201~".to_owned()),
        (0u16..64, 1u16..300, 1u16..200).prop_map(|(b, x, y)| format!("<{b};{x};{y}M")),
        Just("?1;2c".to_owned()),
    ]
}

proptest! {
    /// m reports planted among prose words, alone or run together, read exactly: their
    /// characters.
    #[test]
    fn planted_reports_are_counted_exactly(
        prose in proptest::collection::vec(word(), 1..40),
        plants in proptest::collection::vec((planted(), any::<prop::sample::Index>(), any::<bool>()), 0..8),
    ) {
        let mut words = prose.clone();
        let mut is_plant = vec![false; words.len()];
        let mut want = 0;
        for (run, at, glued) in &plants {
            want += run.chars().count();
            let i = at.index(words.len() + 1);
            if *glued && i > 0 && is_plant[i - 1] {
                // Glued to the report before it (`20;1R21;1R`).
                words[i - 1].push_str(run);
            } else {
                words.insert(i, run.clone());
                is_plant.insert(i, true);
            }
        }
        let screen = vec![words.join(" ")];
        let e = expected(vec![message(Role::User, &prose.join(" "))]);
        prop_assert_eq!(stray_chars(&stray_text(&screen, &e, &[])), want);
    }

    /// A paste of n lines stored as k consecutive pieces is split exactly k − 1 times.
    #[test]
    fn planted_splits_are_counted_exactly(
        n in 2usize..8,
        cuts in proptest::collection::btree_set(1usize..8, 0..7),
    ) {
        let lines: Vec<String> = (0..n).map(|i| format!("line number {i}")).collect();
        let cuts: Vec<usize> = cuts.into_iter().filter(|&c| c < n).collect();
        let mut bounds = vec![0];
        bounds.extend(&cuts);
        bounds.push(n);
        let pieces: Vec<LogicalMessage> = bounds
            .windows(2)
            .map(|w| message(Role::User, &lines[w[0]..w[1]].join("\n")))
            .collect();
        let k = pieces.len();
        let paste = vec![lines.join("\n") + "\n"];
        let e = expected(pieces);
        prop_assert_eq!(splits(&split_inputs(&paste, &e, None)), k - 1);
    }
}
