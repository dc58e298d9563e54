//! Cross-check against a second emulator: the same bytes replayed in a tmux pane of the
//! same size must give the same history, line for line.

use super::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Marks the end of the replay in the pane; never part of the compared history.
const SENTINEL: &str = "@@hermes-e2e-replay-done@@";

/// A private tmux server (own socket in a temporary directory), killed on drop.
struct Server {
    socket: PathBuf,
}

impl Server {
    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            // UTF-8 so tmux measures wide characters; no $TMUX so running the tests
            // inside tmux changes nothing.
            .env("LC_ALL", "C.UTF-8")
            .env_remove("TMUX")
            .output()
            .expect("tmux runs")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

fn tmux_available() -> bool {
    match Command::new("tmux").arg("-V").output() {
        Ok(o) if o.status.success() => true,
        _ => {
            eprintln!("note: `tmux` not found; skipping the tmux cross-check");
            false
        }
    }
}

/// Replays `bytes` in a detached tmux pane of `rows` × `cols` and returns the pane's
/// whole history, wrapped lines joined, trailing blanks trimmed.
fn tmux_history(name: &str, bytes: &[u8], rows: u16, cols: u16) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let stream = dir.path().join("stream.bin");
    std::fs::write(&stream, bytes).expect("write stream");
    let conf = dir.path().join("tmux.conf");
    // No status line (it would take a row of the window), history large enough for any
    // stream here.
    std::fs::write(&conf, "set -g status off\nset -g history-limit 100000\n").expect("write conf");
    let server = Server {
        socket: dir.path().join("tmux.sock"),
    };
    let script = format!(
        "cat {}; printf '%s' '{SENTINEL}'; exec sleep 600",
        shell_quote(&stream)
    );
    let out = server.tmux(&[
        "-f",
        conf.to_str().expect("utf-8 path"),
        "new-session",
        "-d",
        "-x",
        &cols.to_string(),
        "-y",
        &rows.to_string(),
        "sh",
        "-c",
        &script,
    ]);
    assert!(
        out.status.success(),
        "{name}: tmux new-session: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let size = server.tmux(&["display-message", "-p", "#{pane_width}x#{pane_height}"]);
    assert_eq!(
        String::from_utf8_lossy(&size.stdout).parse::<Size>(),
        Ok(Size { cols, rows }),
        "{name}: pane size"
    );

    let deadline = Instant::now() + Duration::from_secs(30);
    let captured = loop {
        let out = server.tmux(&["capture-pane", "-p", "-J", "-S", "-"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if let Some(end) = text.find(SENTINEL) {
            break text[..end].to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "{name}: tmux never showed the sentinel; last capture:\n{text}"
        );
        std::thread::yield_now();
    };
    let mut lines: Vec<String> = captured
        .split('\n')
        .map(|l| l.trim_end().to_owned())
        .collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
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

    // Clears that tmux (`scroll-on-clear`) and we both scroll into the history. No
    // `CSI 3 J`: tmux would erase its own history.
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

    vec![
        ("plain", 24, 80, plain),
        ("clears", 10, 30, clears),
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
    }
}
