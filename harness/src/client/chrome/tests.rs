//! Unit tests of the chrome rules, through the transcript they shape.

use super::*;
use crate::terminal::{Transcript, TranscriptLine};
use proptest::prelude::*;

/// A reply panel above the classic CLI's input box, as the history holds it.
pub(crate) const SAMPLE_PANEL: &str = "\
╭─ Hermes ───────────────────────────╮
│ The keeper of the lighthouse       │
│ climbed the stairs.                │
╰────────────────────────────────────╯
────────────────────────────────────────
❯
────────────────────────────────────────";

/// One line per line of `text`.
pub(crate) fn lines_of(text: &str) -> Vec<String> {
    text.lines().map(str::to_owned).collect()
}

#[test]
fn status_bar_is_chrome() {
    let lines = vec![
        "● hello there".to_owned(),
        " ☤ fake-model │ 12.2K/131.1K │ [█░░░░░░░░░] 9% │ ◷ 1s ─ Lighthouse notes".to_owned(),
    ];
    assert_eq!(
        Transcript::from_history_lines(&lines).text(),
        "● hello there"
    );
}

#[test]
fn sample_panel_is_stripped_to_its_text() {
    let t = Transcript::from_history_lines(&lines_of(SAMPLE_PANEL));
    assert_eq!(
        t.lines,
        [
            TranscriptLine {
                row: 1,
                text: "The keeper of the lighthouse".into()
            },
            TranscriptLine {
                row: 2,
                text: "climbed the stairs.".into()
            },
        ]
    );
}

#[test]
fn hermes_reply_panel_without_sides_is_stripped() {
    // As measured: the reply is plain text between a titled top rule and a bottom rule.
    let t = Transcript::from_history_lines(&lines_of(
        "● Tell me about the lighthouse keeper\n\
         cli.chat.initializing_agent\n\
         ────────────────────────\n\n\n\
         ╭─ ☤ Hermes ───────────────\n\
         The keeper climbed the stairs.\n\
         ╰──────────────────────────╯\n \
         ☤ fake-model │ 12.2K/131.1K │ [█░░░░░░░░░] 9%\n\
         ────────────────────────\n\
         ❯\n\
         ────────────────────────",
    ));
    assert_eq!(
        t.text(),
        "● Tell me about the lighthouse keeper\ncli.chat.initializing_agent\n\n\
         The keeper climbed the stairs."
    );
}

#[test]
fn typed_text_in_the_input_box_is_kept() {
    let t = Transcript::from_history_lines(&lines_of("──────\n❯ hello there\n──────"));
    assert_eq!(
        t.lines,
        [TranscriptLine {
            row: 1,
            text: "hello there".into()
        }]
    );
}

#[test]
fn nested_and_other_box_styles_are_stripped() {
    let t = Transcript::from_history_lines(&lines_of(
        "┏━━━━━━━━━━┓\n┃  Title   ┃\n┗━━━━━━━━━━┛\n\
         ╔═ x ══════╗\n║ double   ║\n╚══════════╝\n\
         │ ┌──────┐ │\n│ │ deep │ │\n│ └──────┘ │\n\
         ├──────────┤\n│          │\n│ after    │",
    ));
    assert_eq!(t.text(), " Title\ndouble\ndeep\n\nafter");
}

#[test]
fn text_with_box_characters_inside_is_kept() {
    for line in [
        "a │ b │ c",
        "─ not a rule ─",
        "x ──────",
        "cost ─ 3 ─── 4 x",
        "│",
    ] {
        let t = Transcript::from_history_lines(&[line.to_owned()]);
        let expected = strip_vertical_borders(line).unwrap_or(line);
        assert_eq!(t.text(), expected, "{line:?}");
    }
}

proptest! {
    #[test]
    fn strip_chrome_never_panics(line in "\\PC{0,40}") {
        let _ = strip_chrome(&line);
    }
}
