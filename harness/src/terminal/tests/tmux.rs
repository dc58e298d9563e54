//! Cross-check of the emulator against tmux.
//!
//! Cross-check against a second emulator: the same bytes replayed in a tmux pane of the
//! same size must give the same history, line for line (the replay: [`crate::terminal::tmux`]).

use super::*;
use std::path::Path;

use super::super::tmux::{self as tx, Part};

fn tmux_available() -> bool {
    tx::available("the tmux cross-check")
}

/// Replays `bytes` in a detached tmux pane of `rows` × `cols` and returns the pane's
/// whole history, wrapped lines joined, trailing blanks trimmed.
fn tmux_history(name: &str, bytes: &[u8], rows: u16, cols: u16) -> Vec<String> {
    tx::replay(name, &[(bytes.to_vec(), None)], Size { cols, rows })
}

fn paragraph(seed: usize, words: usize) -> String {
    const WORDS: [&str; 12] = [
        "the",
        "keeper",
        "of",
        "lighthouse",
        "climbed",
        "stairs",
        "灯台",
        "守",
        "every",
        "evening",
        "階段を上った",
        "x",
    ];
    (0..words)
        .map(|i| WORDS[(seed * 7 + i * 5 + i / 3) % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Streams shaped like the classic CLI's output: plain lines, long soft-wrapped replies
/// with wide characters, colour, and prompt redraws with relative moves and erases.
fn streams() -> Vec<(&'static str, u16, u16, Vec<u8>)> {
    let mut plain = Vec::new();
    for i in 0..120 {
        plain.extend(format!("line {i}\r\n").into_bytes());
    }

    let mut wrapped = Vec::new();
    for i in 0..40 {
        wrapped.extend(format!("\x1b[1m{}\x1b[m\r\n", paragraph(i, 5 + i % 17)).into_bytes());
    }

    let mut cli = Vec::new();
    for turn in 0..12 {
        // The input box: rule, prompt, rule; then the user types and submits.
        cli.extend(b"\x1b[?2004h\x1b[90m");
        cli.extend("─".repeat(41).into_bytes());
        cli.extend(b"\x1b[m\r\n\xe2\x9d\xaf \r\n\x1b[90m");
        cli.extend("─".repeat(41).into_bytes());
        cli.extend(b"\x1b[m\x1b[1A\r\x1b[2C");
        cli.extend(format!("question {turn}").into_bytes());
        // prompt_toolkit erases its area before the output goes above it.
        cli.extend(b"\x1b[1A\r\x1b[J");
        cli.extend(format!("\u{25cf} question {turn}\r\n").into_bytes());
        cli.extend("╭─ ☤ Hermes ".as_bytes());
        cli.extend("─".repeat(29).into_bytes());
        cli.extend(b"\r\n");
        cli.extend(paragraph(turn, 30 + turn * 3).into_bytes());
        cli.extend(b"\r\n");
        cli.extend("╰".as_bytes());
        cli.extend("─".repeat(39).into_bytes());
        cli.extend("╯\r\n".as_bytes());
    }
    cli.extend(b"\x1b[?2004l");

    // Clears that tmux (`scroll-on-clear`) and we both scroll into the history. No `CSI 3 J`
    // outside a frame: tmux would erase its own history, the harness keeps it (the classic CLI's
    // at exit, see the module docs).
    let mut clears = Vec::new();
    for round in 0..4 {
        for i in 0..(7 + round * 5) {
            clears.extend(format!("round {round} line {i}\r\n").into_bytes());
        }
        clears.extend(match round {
            0 => &b"\x1b[2J\x1b[H"[..],
            1 => b"\x1b[H\x1b[J",
            2 => b"\x1b[2J\x1b[5;1H",
            _ => b"\x1bc",
        });
    }
    clears.extend(b"the end\r\n");

    // The Ink TUI's redraw after a resize: inside a synchronized update, clear the screen and
    // the scrollback, then the whole transcript again (here: three times, a longer one each time).
    // tmux erases its history on every `CSI 3 J`; the harness too, inside a frame.
    let mut redraws = Vec::new();
    for round in 0..3 {
        redraws.extend(b"\x1b[?2026h\x1b[3D\x1b[1B\x1b[2J\x1b[3J\x1b[H");
        for i in 0..(20 + round * 7) {
            redraws.extend(
                format!("\x1b[2m\u{250a}\x1b[22m {}\r\n", paragraph(i, 3 + i % 9)).into_bytes(),
            );
        }
        redraws.extend(b"\x1b[?2026l");
    }

    vec![
        ("plain", 24, 80, plain),
        ("clears", 10, 30, clears),
        ("tui-redraws", 12, 30, redraws),
        ("wrapped", 20, 37, wrapped),
        ("cli", 15, 41, cli),
    ]
}

#[test]
fn history_agrees_with_tmux() {
    if !tmux_available() {
        return;
    }
    for (name, rows, cols, bytes) in streams() {
        let ours = fed(rows, cols, &bytes).history_lines();
        let theirs = tmux_history(name, &bytes, rows, cols);
        assert!(
            ours.len() > usize::from(rows),
            "{name}: the stream must scroll"
        );
        assert_eq!(ours, theirs, "{name}: vt100 and tmux disagree");
        let mut reflow = ReflowScreen::new(rows, cols);
        reflow.feed(&bytes);
        assert_eq!(
            reflow.history_lines(),
            theirs,
            "{name}: reflow and tmux disagree"
        );
    }
}

/// A recording shaped like the classic CLI's (turns with soft-wrapped replies, wide characters,
/// rules, prompt redraws) cut into parts, each followed by a resize: narrower and wider, the
/// history re-wrapped each time.
fn resized_recording() -> (Size, Vec<Part>) {
    let sizes = [(15, 30), (15, 60), (12, 23), (20, 41), (15, 77), (15, 35)];
    let (_, _, _, cli) = streams().pop().expect("the cli stream");
    // Cut after whole turns (each ends with the closing rule's line).
    let turns: Vec<&[u8]> = cli.split_inclusive(|&b| b == b'\n').collect();
    let per = turns.len().div_ceil(sizes.len() + 1);
    let mut parts = Vec::new();
    for (i, chunk) in turns.chunks(per).enumerate() {
        let resize = sizes.get(i).map(|&(rows, cols)| Size { cols, rows });
        parts.push((chunk.concat(), resize));
    }
    (Size { cols: 41, rows: 15 }, parts)
}

#[test]
fn reflowed_history_agrees_with_tmux_through_resizes_and_vt100_does_not() {
    if !tmux_available() {
        return;
    }
    let (size, parts) = resized_recording();
    let theirs = tx::replay("resized", &parts, size);
    let reflowed = tx::replayed::<ReflowScreen>(size, &parts).history_lines();
    assert!(theirs.len() > 40, "the recording must scroll: {theirs:?}");
    // The same text in the same order (spaces aside: a line break drops its trailing space) …
    let squashed = |lines: &[String]| lines.concat().replace(' ', "");
    assert_eq!(
        squashed(&reflowed),
        squashed(&theirs),
        "reflow and tmux disagree"
    );
    // … and the same lines but for two, both tmux 3.3's: re-wrapping a reply whose row ended with
    // a wide character that did not fit, tmux ended the line there ("… every keeper" /
    // "灯台 the stairs …"); and a 41-column rule row written at 41 columns, narrowed and widened
    // again, tmux joined with the reply below it. alacritty keeps both lines as written.
    let only_ours: Vec<&String> = reflowed.iter().filter(|l| !theirs.contains(l)).collect();
    let only_tmux: Vec<&String> = theirs.iter().filter(|l| !reflowed.contains(l)).collect();
    assert_eq!(
        (only_ours.len(), only_tmux.len()),
        (2, 3),
        "{only_ours:#?}\n{only_tmux:#?}"
    );
    assert!(only_tmux[2].starts_with("╭─ ☤ Hermes ─") && only_tmux[2].ends_with("of 守"));
    // vt100 cuts rows when the terminal narrows and never joins them again: the same bytes give
    // another history, with text lost (this is why resize scenarios run on the reflowing
    // terminal).
    let vt100 = tx::replayed::<Screen>(size, &parts).history_lines();
    assert_ne!(squashed(&vt100), squashed(&theirs));
    let lost = theirs.iter().filter(|l| !vt100.contains(l)).count();
    assert_eq!(lost, 10, "lines of tmux's history vt100 does not have");
}

/// The real client's recordings with resizes (`fixtures/iot-0.22.2.post1-reflow-resized`:
/// 100×40 narrowed to 80×30 after six turns, then `/compress`; the resumed client narrowed to
/// 60×30 and widened to 120×50) give tmux's history on the reflowing terminal.
#[test]
fn real_recordings_with_resizes_agree_with_tmux() {
    if !tmux_available() {
        return;
    }
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/iot-0.22.2.post1-reflow-resized");
    for cast in ["session-1.cast", "session-2.cast"] {
        let (size, parts) = tx::cast_parts(&dir.join(cast), None);
        assert!(parts.len() > 1, "{cast} has resizes");
        // The client erases the scrollback at exit (`CSI 3 J`): the harness keeps it, tmux would
        // not, so tmux is not sent it.
        let kept = tx::keeping_history(&parts);
        let theirs = tx::replay(cast, &kept, size);
        let ours = tx::replayed::<ReflowScreen>(size, &parts).history_lines();
        let vt100 = tx::replayed::<Screen>(size, &parts).history_lines();
        let differ = |x: &[String]| x.iter().zip(&theirs).filter(|(a, b)| a != b).count();
        if cast == "session-2.cast" {
            // Resumed, narrowed to 60 columns and widened to 120: line for line tmux's history.
            assert_eq!(ours, theirs, "{cast}: reflow and tmux disagree");
            assert_eq!((vt100.len(), differ(&vt100)), (182, 27), "{cast}: vt100");
            continue;
        }
        // Narrowed from 100 to 80 columns, the client then erases its screen rows and draws them
        // again: tmux keeps 80 more characters of the reply above the screen (one row at 80
        // columns) where alacritty had them on screen, so the client erased them. One line.
        assert_eq!((ours.len(), differ(&ours)), (theirs.len(), 1), "{cast}");
        let (mine, tmux) = ours.iter().zip(&theirs).find(|(a, b)| a != b).unwrap();
        assert!(tmux.starts_with(mine.as_str()), "{mine}\n{tmux}");
        assert_eq!(tmux.chars().count() - mine.chars().count(), 80);
    }
}
