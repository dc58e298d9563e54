//! Unit tests of the driver, with a shell standing in for the client.

use super::*;
use std::path::Path;

#[test]
fn printed_text_leaves_escape_sequences_out_even_split_across_reads() {
    let mut p = Printed::default();
    p.feed(b"\x1b[1;31mHel");
    p.feed(b"lo\x1b[2");
    p.feed(b"Cwor\x1b]0;title\x07ld \x1b]8;;http://x\x1b\\link\x1bM!");
    assert_eq!(p.text, "helloworldlink");
}

/// A shell standing in for the client (a test double of the harness's own machinery).
pub(crate) fn shell(script: &str, dir: &Path) -> Launch {
    Launch {
        program: PathBuf::from("/bin/sh"),
        args: vec!["-c".into(), script.into()],
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        cwd: dir.to_owned(),
        size: crate::terminal::Size { cols: 80, rows: 24 },
        cast: dir.join("t.cast"),
        ui: Ui::Classic,
        terminal: crate::terminal::Terminal::Vt100,
        release: None,
    }
}

fn alive(pid: i32) -> bool {
    // Signal 0 checks existence; a zombie still counts, so also read its state.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && !stat.contains(") Z ")
}

/// A driver running a shell that starts `sleep 300` in the background through `launcher` (`""`
/// or `"setsid "`), and that child's pid, once the shell says it is ready.
fn with_background_child(dir: &std::path::Path, launcher: &str) -> (Driver, i32) {
    let pidfile = dir.join("bg.pid");
    let script = format!(
        "{launcher}sleep 300 & echo $! > {}; echo ready; sleep 300",
        pidfile.display()
    );
    let mut d = Driver::spawn(&shell(&script, dir)).unwrap();
    d.wait_until("ready", Duration::from_secs(10), |s| {
        s.viewport_rows().iter().any(|r| r == "ready")
    })
    .unwrap();
    let bg: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(bg));
    (d, bg)
}

#[test]
fn dropping_the_driver_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let (d, bg) = with_background_child(dir.path(), "");
    drop(d);
    let start = Instant::now();
    while alive(bg) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(bg), "background child {bg} survived the driver");
}

#[test]
fn kill_tree_kills_a_child_in_a_session_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    // `setsid` puts the child in a new session and group: `killpg` on the client's group alone
    // would leave it running.
    let (mut d, bg) = with_background_child(dir.path(), "setsid ");
    // `$!` is known before `setsid` has run in the child: wait until it leads its own group.
    let group = || nix::unistd::getpgid(Some(nix::unistd::Pid::from_raw(bg))).map(|g| g.as_raw());
    let start = Instant::now();
    while group() != Ok(bg) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(group(), Ok(bg), "the child leads a group of its own");
    d.kill_tree(Duration::from_secs(5)).unwrap();
    assert!(
        !alive(bg),
        "the child in its own session survived kill_tree"
    );
}

/// The error of waiting up to `deadline` for the idle prompt from a shell running `script`.
fn prompt_wait_error(script: &str, deadline: Duration) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::spawn(&shell(script, dir.path())).unwrap();
    d.wait_until("the prompt", deadline, |s| {
        is_idle(Ui::Classic, &s.viewport_rows(), s.title())
    })
    .unwrap_err()
    .to_string()
}

#[test]
fn a_wait_past_its_deadline_reports_the_last_screen() {
    let err = prompt_wait_error("echo still booting; sleep 300", Duration::from_millis(500));
    assert!(
        err.contains("timed out") && err.contains("the prompt"),
        "{err}"
    );
    assert!(err.contains("still booting"), "{err}");
}

#[test]
fn a_client_that_exits_early_is_reported_with_its_status() {
    let err = prompt_wait_error("echo crashed; exit 3", Duration::from_secs(10));
    assert!(err.contains("exited (exit code 3)"), "{err}");
    assert!(err.contains("crashed"), "{err}");
}

#[test]
fn the_recording_is_asciicast_v2() {
    let dir = tempfile::tempdir().unwrap();
    let launch = shell("printf 'h\\303\\251llo\\n'", dir.path());
    let mut d = Driver::spawn(&launch).unwrap();
    let _ = d.wait_exit(Duration::from_secs(10));
    drop(d);
    let text = std::fs::read_to_string(&launch.cast).unwrap();
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(
        (header["version"].as_u64(), header["width"].as_u64()),
        (Some(2), Some(80))
    );
    let out: String = lines
        .map(|l| serde_json::from_str::<(f64, String, String)>(l).unwrap().2)
        .collect();
    assert!(out.contains("héllo"), "{out:?}");
}

#[test]
fn squash_ignores_wrapping_and_borders() {
    assert_eq!(
        squash("│ The keeper │\n│ of the lamp │"),
        squash("the keeper of the lamp")
    );
}

#[test]
fn the_echo_of_a_typed_line_is_compared_to_its_last_key() {
    assert_eq!(echo_end("What did a keeper do all day?"), "y?");
    assert_eq!(echo_end("/compress"), "s");
    assert_eq!(echo_end("(ok). "), "k).");
    assert_eq!(echo_end("?!"), "?!");
    assert_eq!(visible("│ … all da │\n│ y? │"), "…allday?");
}

#[test]
fn a_frame_left_open_is_read_after_the_sync_timeout() {
    let dir = tempfile::tempdir().unwrap();
    // The frame opens and is never closed: the screen is read once the client has been silent
    // for SYNC_TIMEOUT, as a terminal gives up on a synchronized update.
    let script = r"printf '\033[?2026hhalf'; read x";
    let mut d = Driver::spawn(&shell(script, dir.path())).unwrap();
    let start = Instant::now();
    d.wait_until("half", Duration::from_secs(10), |s| {
        s.viewport_rows().iter().any(|r| r.contains("half"))
    })
    .unwrap();
    assert!(start.elapsed() >= SYNC_TIMEOUT, "{:?}", start.elapsed());
}

#[test]
fn a_wait_done_ends_on_its_signal_or_on_quiet_output() {
    let dir = tempfile::tempdir().unwrap();
    let has = |s: &Shown<'_>, t: &str| s.viewport_rows().iter().any(|r| r.contains(t));
    // Waits for `done` after `ready`, falling back to 200 ms of quiet output.
    let wait = |script: &str| {
        let mut d = Driver::spawn(&shell(script, dir.path())).unwrap();
        let start = Instant::now();
        let quiet = Duration::from_millis(200);
        let ending = d.wait_done(
            "done",
            Duration::from_secs(10),
            quiet,
            |s| has(s, "ready"),
            |s| has(s, "done"),
        );
        (ending.unwrap(), start.elapsed(), d.take_harness_wait())
    };
    let (ending, _, _) = wait("echo ready; echo done; read x");
    assert_eq!(ending, Ending::Signal);
    let (ending, took, waited) = wait("echo ready; read x");
    assert_eq!(ending, Ending::Quiet);
    assert!(took >= Duration::from_millis(200) && waited >= Duration::from_millis(200));
}

/// A shell drawing the classic CLI's composer between its two rules, holding `held`.
fn composer_script(held: &str) -> String {
    let rule = "─".repeat(40);
    format!("printf '%s\\n❯ {held}\\n%s\\n' '{rule}' '{rule}'; read x")
}

#[test]
fn an_idle_timeout_says_what_the_composer_holds_and_what_was_awaited() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Driver::spawn(&shell(&composer_script("unsent draft"), dir.path())).unwrap();
    // Text the harness did not type: the prompt is not idle, and the timeout says why.
    let err = d
        .wait_idle_with("", Duration::from_millis(600))
        .unwrap_err()
        .to_string();
    assert!(err.contains("waiting for the idle prompt\n"), "{err}");
    assert!(
        err.contains(
            "[vt100 terminal; the composer holds `unsent draft`; the harness typed nothing into it]"
        ),
        "{err}"
    );
    // Typed by the harness (a `type` step): the same composer is idle.
    d.set_draft("unsent draft");
    d.wait_idle_with("", Duration::from_secs(5)).unwrap();
    // Not exactly what it typed: not idle, and both texts are named.
    d.set_draft("unsent");
    let err = d
        .wait_idle_with("", Duration::from_millis(600))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the idle prompt with the composer holding exactly `unsent` (typed by the harness, not sent)"),
        "{err}"
    );
    assert!(
        err.contains("the composer holds `unsent draft`; the harness typed `unsent` into it"),
        "{err}"
    );
}

#[test]
fn waits_read_the_emulator_the_run_selected() {
    // A 100-character line soft-wrapped at 80 columns, then the terminal widened to 120: the
    // reflowing terminal re-wraps it onto one row; vt100 keeps the two rows it had.
    let line: String = (0..20)
        .map(|i| format!("w{i:03}"))
        .collect::<Vec<_>>()
        .join(" ");
    let script = format!("printf '%s\\n' '{line}'; read x");
    let wait = |terminal: crate::terminal::Terminal| {
        let dir = tempfile::tempdir().unwrap();
        let launch = Launch {
            terminal,
            ..shell(&script, dir.path())
        };
        let mut d = Driver::spawn(&launch).unwrap();
        d.wait_until("the line drawn", Duration::from_secs(10), |s| {
            s.viewport_rows().concat().contains("w019")
        })
        .unwrap();
        d.resize(crate::terminal::Size {
            cols: 120,
            rows: 24,
        })
        .unwrap();
        d.wait_until(
            "the line whole on one row",
            Duration::from_millis(600),
            |s| s.viewport_rows().iter().any(|r| r.contains(&line)),
        )
        .map_err(|e| e.to_string())
    };
    assert_eq!(wait(crate::terminal::Terminal::Reflow), Ok(()));
    let err = wait(crate::terminal::Terminal::Vt100).unwrap_err();
    assert!(err.contains("[vt100 terminal; "), "{err}");
}

#[test]
fn the_last_screen_of_a_reflow_run_names_its_emulator() {
    let dir = tempfile::tempdir().unwrap();
    let launch = Launch {
        terminal: crate::terminal::Terminal::Reflow,
        ..shell(&composer_script(""), dir.path())
    };
    let mut d = Driver::spawn(&launch).unwrap();
    d.wait_idle_with("", Duration::from_secs(5)).unwrap();
    assert!(
        d.screen_text().starts_with(
            "[reflow terminal; the composer is empty; the harness typed nothing into it]\n"
        ),
        "{}",
        d.screen_text()
    );
}
