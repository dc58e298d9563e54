//! Unit tests of the reflowing terminal.
//!
//! Unit tests of [`ReflowScreen`]: the same history rules as [`Screen`] (scrolling, clears, the
//! wide characters, queries; the alternate screen is tested on both in `tests.rs`), and what only it does: re-wrapping on resize.
//! `tmux.rs` measures both against tmux with resizes.

use super::*;

fn reflowed(rows: u16, cols: u16, bytes: &[u8]) -> ReflowScreen {
    let mut s = ReflowScreen::new(rows, cols);
    s.feed(bytes);
    s
}

#[test]
fn history_bound_is_far_above_a_session() {
    // 64 MiB of 24-byte cells: about 28 000 rows at 100 columns.
    assert_eq!(crate::terminal::reflow::history_rows(100), 27_962);
    let s = reflowed(24, 100, &as_crlf(&numbered(5000)));
    assert_eq!(s.history_lines().len(), 5000);
    assert!(!s.history_full());
}

#[test]
fn clears_save_rows_like_screen_and_tmux() {
    let bytes = b"\r\n\r\none\r\n\r\ntwo\r\n\x1b[2J\x1b[Hthree";
    assert_eq!(
        reflowed(10, 20, bytes).history_lines(),
        fed(10, 20, bytes).history_lines()
    );
    for clear in [&b"\x1b[?2J"[..], b"\x1b[02;7J", b"\x1bc", b"\x1b[H\x1b[J"] {
        let mut bytes = b"kept\r\n".to_vec();
        bytes.extend_from_slice(clear);
        bytes.extend_from_slice(b"\x1b[Hnext");
        let s = reflowed(5, 20, &bytes);
        assert_eq!(s.history_lines(), ["kept", "next"], "{clear:?}");
    }
    // A clear of a blank screen adds no blank row; a partial erase is no clear.
    assert_eq!(
        reflowed(5, 20, b"\x1b[2J\x1b[Hfirst").history_lines(),
        ["first"]
    );
    let s = reflowed(5, 20, b"kept\r\ndraft\r\x1b[J\x1b[1Jfinal\x1b[3J\x1b[K");
    assert_eq!(s.history_lines(), ["", "final"]);
}

#[test]
fn reset_keeps_the_history_before_it() {
    let mut bytes = as_crlf(&numbered(30));
    bytes.extend_from_slice(b"\x1bcafter");
    let mut expected = numbered(30);
    expected.push("after".into());
    assert_eq!(reflowed(5, 40, &bytes).history_lines(), expected);
}

#[test]
fn a_width_change_rewraps_rows_vt100_truncates_them() {
    let text = "The keeper of the lighthouse climbed the stairs every evening.";
    let bytes = format!("{text}\r\nnext\r\n");
    let mut s = reflowed(24, 20, bytes.as_bytes());
    let mut old = fed(24, 20, bytes.as_bytes());
    s.resize(24, 10);
    old.resize(24, 10);
    assert_eq!(s.history_lines(), [text, "next"]);
    let rows = s.viewport_rows();
    assert!(rows.iter().all(|r| r.chars().count() <= 10), "{rows:?}");
    assert!(rows.iter().any(|r| r == " stairs ev"), "{rows:?}");
    // vt100 cut each 20-column row to its first 10 columns, and the rows no longer join.
    assert_eq!(
        old.history_lines(),
        ["The keeper", "ghthouse c", " stairs ev", "g.", "next"]
    );
    s.resize(24, 80);
    assert_eq!(s.viewport_rows()[0], text);
    assert_eq!(s.history_lines(), [text, "next"]);
}

#[test]
fn rows_in_the_scrollback_are_rewrapped_too() {
    let long = "word ".repeat(30);
    let mut bytes = format!("{long}\r\n").into_bytes();
    bytes.extend(as_crlf(&numbered(20)));
    let mut s = reflowed(5, 30, &bytes);
    s.resize(5, 17);
    s.resize(5, 61);
    let mut expected = vec![long.trim_end().to_owned()];
    expected.extend(numbered(20));
    assert_eq!(s.history_lines(), expected);
    assert_eq!(s.transcript().lines[0].text, long.trim_end());
}

#[test]
fn wide_characters_wrap_and_join_once() {
    let text = "灯台守".repeat(9);
    let mut s = reflowed(10, 7, text.as_bytes());
    assert_eq!(s.history_lines(), std::slice::from_ref(&text));
    s.resize(10, 12);
    assert_eq!(s.history_lines(), [text]);
}

#[test]
fn queries_are_answered() {
    let mut s = reflowed(24, 80, b"\r\n\r\nabc\x1b[6n");
    assert_eq!(s.take_replies(), b"\x1b[3;4R");
    s.feed(b"\x1b[c");
    assert_eq!(s.take_replies(), b"\x1b[?6c");
    s.feed(b"\x1b]11;?\x1b\\\x1b]10;?\x07");
    assert_eq!(
        s.take_replies(),
        b"\x1b]11;rgb:0000/0000/0000\x1b\\\x1b]10;rgb:ffff/ffff/ffff\x07"
    );
    s.feed(b"\x1b[5n");
    assert_eq!(s.take_replies(), b"\x1b[0n");
}

#[test]
fn synchronized_updates_are_drawn_at_once() {
    let s = reflowed(5, 20, b"\x1b[?2026hinside\x1b[?2026l");
    assert_eq!(s.viewport_rows()[0], "inside");
    let s = reflowed(5, 20, b"\x1b[?2026hnever ended");
    assert_eq!(s.viewport_rows()[0], "never ended");
}

#[test]
fn erasing_a_whole_row_ends_the_line_above_it() {
    // A 15-character line at 10 columns, its second row erased and rewritten: tmux ends the first
    // row's line there; so does the reflowing terminal (alacritty alone would join them).
    let rewritten = |erase: &str| {
        reflowed(
            5,
            10,
            format!("0123456789abcde{erase}\rnew text").as_bytes(),
        )
        .history_lines()
    };
    assert_eq!(rewritten("\r\x1b[K"), ["0123456789", "new text"]);
    assert_eq!(rewritten("\x1b[2K"), ["0123456789", "new text"]);
    assert_eq!(rewritten("\r\x1b[0K"), ["0123456789", "new text"]);
    // Erasing from the middle of the row keeps the line.
    let s = reflowed(5, 10, b"0123456789abcde\x1b[3D\x1b[K!");
    assert_eq!(s.history_lines(), ["0123456789ab!"]);
}
