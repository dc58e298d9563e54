//! tmux as a second, independent terminal (test support).
//!
//! tmux as a second, independent terminal (feature `test-support`): bytes replayed in a private
//! tmux server's pane, resized where a recording resized, and read back with
//! `capture-pane -p -J -S -` (the whole history, wrapped rows joined) — what upstream Hermes
//! Agent's own resize test reads. The emulator cross-checks (`terminal/tests/tmux.rs`) and the
//! upstream resize test's assertions on a real run (`tests/judges/upstream_resize.rs`) use it.
//!
//! Test support, not harness logic: a failing tmux command panics with what it printed. Every
//! wait has a deadline ([`DEADLINE`]); the server is killed when the replay returns or panics.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use super::Size;

/// Marks the end of the replay in the pane; never part of the returned history.
const SENTINEL: &str = "@@hermes-e2e-replay-done@@";

/// How long a replay may take, from the pane's start to the sentinel.
pub(crate) const DEADLINE: Duration = Duration::from_secs(60);

/// Bytes to replay, then the size to resize to (if any).
pub(crate) type Part = (Vec<u8>, Option<Size>);

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

/// Whether `tmux` runs here; prints a note naming `what` is skipped when it does not.
pub fn available(what: &str) -> bool {
    match Command::new("tmux").arg("-V").output() {
        Ok(o) if o.status.success() => true,
        _ => {
            eprintln!("note: `tmux` not found; skipping {what}");
            false
        }
    }
}

/// Replays `parts` in a detached tmux pane of `size`, resizing the window after each part that
/// names a size (once tmux has drawn the part: the part is followed by a title change that the
/// harness waits for, and the pane waits on a `wait-for` channel until the resize is done), and
/// returns the pane's whole history, wrapped lines joined, trailing blanks trimmed.
pub fn replay(name: &str, parts: &[Part], size: Size) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let conf = dir.path().join("tmux.conf");
    // No status line (it would take a row of the window), history large enough for any
    // stream here.
    std::fs::write(&conf, "set -g status off\nset -g history-limit 100000\n").expect("write conf");
    let server = Server {
        socket: dir.path().join("tmux.sock"),
    };
    // No echo: tmux answers the queries in the stream by writing to the pane's input, which the
    // tty would otherwise echo into the output.
    let mut script = String::from("stty -echo; ");
    for (i, (bytes, resize)) in parts.iter().enumerate() {
        let part = dir.path().join(format!("part-{i}.bin"));
        std::fs::write(&part, bytes).expect("write part");
        script += &format!("cat {}; ", shell_quote(&part));
        if resize.is_some() {
            script += &format!(
                "printf '\\033]2;drawn-{i}\\033\\\\'; tmux -S {} wait-for resized-{i}; ",
                shell_quote(&server.socket)
            );
        }
    }
    script += &format!("printf '%s' '{SENTINEL}'; exec sleep 600");
    let out = server.tmux(&[
        "-f",
        conf.to_str().expect("utf-8 path"),
        "new-session",
        "-d",
        "-x",
        &size.cols.to_string(),
        "-y",
        &size.rows.to_string(),
        "sh",
        "-c",
        &script,
    ]);
    assert!(
        out.status.success(),
        "{name}: tmux new-session: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_pane_size(&server, name, size);
    let deadline = Instant::now() + DEADLINE;
    for (i, (_, resize)) in parts.iter().enumerate() {
        let Some(to) = resize else { continue };
        let drawn = format!("drawn-{i}");
        while String::from_utf8_lossy(
            &server
                .tmux(&["display-message", "-p", "#{pane_title}"])
                .stdout,
        )
        .trim()
            != drawn
        {
            assert!(
                Instant::now() < deadline,
                "{name}: tmux never drew part {i}"
            );
            std::thread::yield_now();
        }
        let out = server.tmux(&[
            "resize-window",
            "-x",
            &to.cols.to_string(),
            "-y",
            &to.rows.to_string(),
        ]);
        assert!(
            out.status.success(),
            "{name}: resize-window: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_pane_size(&server, name, *to);
        server.tmux(&["wait-for", "-S", &format!("resized-{i}")]);
    }
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

fn assert_pane_size(server: &Server, name: &str, size: Size) {
    let out = server.tmux(&["display-message", "-p", "#{pane_width}x#{pane_height}"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).parse::<Size>(),
        Ok(size),
        "{name}: pane size"
    );
}

fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

/// An asciicast recording cut at its resize events, up to its marker `until` (the whole
/// recording when `None`): its first size and the parts.
pub fn cast_parts(path: &Path, until: Option<&str>) -> (Size, Vec<Part>) {
    let text = std::fs::read_to_string(path).expect("read the recording");
    let mut lines = text.lines();
    let header: serde_json::Value =
        serde_json::from_str(lines.next().expect("a header")).expect("a JSON header");
    let dim = |key: &str| header[key].as_u64().expect("a size in the header") as u16;
    let size = Size {
        cols: dim("width"),
        rows: dim("height"),
    };
    let mut parts: Vec<Part> = vec![(Vec::new(), None)];
    for line in lines {
        let (_, kind, data): (f64, String, String) =
            serde_json::from_str(line).expect("an asciicast event");
        match kind.as_str() {
            "o" => parts
                .last_mut()
                .expect("a part")
                .0
                .extend(data.into_bytes()),
            "r" => {
                parts.last_mut().expect("a part").1 = Some(data.parse().expect("COLSxROWS"));
                parts.push((Vec::new(), None));
            }
            "m" if until == Some(data.as_str()) => return (size, parts),
            _ => {}
        }
    }
    assert!(until.is_none(), "{}: no marker {until:?}", path.display());
    (size, parts)
}

/// `parts` as tmux should be sent them: without `CSI 3 J` (erase scrollback, which the client
/// sends at exit: the harness's emulators keep the history, tmux would erase it).
pub fn keeping_history(parts: &[Part]) -> Vec<Part> {
    parts
        .iter()
        .map(|(bytes, resize)| (without(bytes, b"\x1b[3J"), *resize))
        .collect()
}

/// `bytes` with every occurrence of `cut` removed.
fn without(bytes: &[u8], cut: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(cut) {
            i += cut.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// Replays `parts` into an emulator of `size`, resizing after each part that names a size.
pub fn replayed<E: super::Emulator>(size: Size, parts: &[Part]) -> E {
    let mut screen = E::create(size.rows, size.cols);
    for (bytes, resize) in parts {
        screen.feed(bytes);
        if let Some(to) = resize {
            screen.resize(to.rows, to.cols);
        }
    }
    screen
}
