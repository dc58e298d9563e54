//! Stage `driver`: the real client in a real PTY.
//!
//! Input: a [`Launch`] (executable, arguments, an allowlisted environment, terminal size).
//! Output: every byte the client writes, fed to a [`Screen`] (vt100) and a [`ReflowScreen`] and
//! appended to an asciicast v2 recording; the transcript of the [`Terminal`] the launch chose, with
//! a note when the other one's differs; waits that are conditions on the rendered screen with deadlines; typing that waits for
//! the echo before Enter (prompt_toolkit takes text + Enter in one burst as a paste).
//!
//! Waits end on positive signals: a condition on the screen (the idle prompt with what a step
//! waits for, the reply panel's closing border, the echo of typed text), read only between the
//! frames of a client that brackets its frames in synchronized updates (DEC mode 2026: the Ink
//! TUI does, prompt_toolkit does not), so a half-drawn frame is never judged. A quiet time (no
//! output for a while) is only a fallback, where the client draws nothing that says it is done.
//! The time a wait spends after the client's last byte is the harness's own
//! ([`Driver::take_harness_wait`]); `--json` reports it per step beside the client's busy time.
//!
//! The PTY comes from `expectrl` (ptyprocess). The client is the leader of its own session and
//! process group (ptyprocess calls `setsid`), so the whole group — the client and anything it
//! started — is killed with `killpg` when the [`Driver`] is dropped: no orphan processes.
//!
//! What the client looks like on screen — when it is idle or busy, its interfaces, how long its
//! output must be quiet — is [`crate::client`]'s (`client/profile.rs`); the emulator and the
//! asciicast format are [`crate::terminal`]'s. This module holds the process, the PTY and the waits;
//! its unit tests are in `driver/tests.rs`.

use std::io::{ErrorKind, Write};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::process::unix::WaitStatus;
use expectrl::session::OsSession;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use crate::client::profile::{squash, SETTLE};
use crate::client::{composer_text, is_idle, BeforeEnter, Ui};
use crate::settings::ClientVersion;
use crate::terminal::scan::{Event, Scanner};
use crate::terminal::{
    behaviour::paste_bytes, cast, difference, erase_note, Answers, Behaviour, ReflowScreen, Screen,
    Size, Terminal, Transcript,
};

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
    /// The terminal's size.
    pub size: Size,
    /// Where to write the asciicast v2 recording.
    pub cast: PathBuf,
    /// The interface `program` starts (what its idle prompt looks like).
    pub ui: Ui,
    /// The emulator the run selected: its screen is what every wait reads (`Shown`) and its
    /// history what [`Driver::transcript`] gives (both are fed; the picture and the window title
    /// are vt100's).
    pub terminal: Terminal,
    /// The client's release, when its spec names one: which of its own signals say a step is
    /// done ([`Ui::command_settle`]). `None` (an executable path): the safe, slower waits.
    pub release: Option<ClientVersion>,
}

/// The harness could not drive the client as asked; carries the last screen for the report.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// Spawning failed.
    #[error("cannot start `{program}`")]
    Spawn {
        /// The executable.
        program: PathBuf,
        /// What failed.
        source: expectrl::Error,
    },
    /// The PTY of the started client could not be given its size.
    #[error("cannot set the window size of `{program}`'s terminal")]
    WindowSize {
        /// The executable.
        program: PathBuf,
        /// What failed.
        source: std::io::Error,
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
    /// Processes the client started were still running after `kill` (their ids).
    #[error("processes the killed client started still run: {pids:?}")]
    Orphans {
        /// Their process ids.
        pids: Vec<i32>,
    },
    /// Reading or writing the PTY or the recording failed.
    #[error("PTY i/o failed while {what}")]
    Io {
        /// What was being done.
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// A running client in a PTY with its emulated screen.
pub struct Driver {
    session: OsSession,
    screen: Screen,
    /// The same bytes on a terminal that reflows (fed always: in `benches/pipeline.rs` it ingests
    /// at 0.7–1.1× vt100's rate, 15–30 MiB/s on a loaded machine: a few milliseconds a session).
    reflow: ReflowScreen,
    /// Which of the two answers queries and gives the transcript.
    terminal: Terminal,
    cast: cast::Writer,
    pid: Pid,
    eof: bool,
    status: Option<String>,
    /// Total bytes read from the PTY.
    bytes: usize,
    /// The interface running (what its idle prompt looks like).
    ui: Ui,
    /// The client's release, if known.
    release: Option<ClientVersion>,
    /// Everything printed so far, squashed: text that was drawn even if it was since erased.
    printed: Printed,
    /// The client's process group, killed by [`crate::interrupt`] if the harness is interrupted.
    _registered: crate::interrupt::Registered,
    /// When the last byte came from the client.
    last_byte: Instant,
    /// When the last turn ended, if no line was typed since ([`Driver::turn_ended`]).
    turn_ended: Option<Instant>,
    /// Time the waits spent after the client's last byte (see [`Driver::take_harness_wait`]).
    waited: Duration,
    /// The part of `waited` spent holding Enter back by the client's clock rules (see
    /// [`Driver::take_clock_rule_wait`]).
    held: Duration,
    /// What the harness typed into the composer without Enter (a scenario's `type` step) and
    /// left there: the idle prompt may hold exactly this ([`Driver::draft`]).
    draft: String,
    /// When the terminal answers queries and whether it honours bracketed paste.
    behaviour: Behaviour,
    /// Answers held back by [`Answers::After`]: when each is due, and its bytes.
    late_replies: std::collections::VecDeque<(Instant, Vec<u8>)>,
    /// What was pasted ([`Driver::paste`]), in order, as the scenario wrote it.
    pasted: Vec<String>,
    /// Everything the harness sent as a person would ([`Driver::type_raw`]), in order.
    typed: Vec<String>,
}

/// What a wait reads: the screen of the emulator the run selected ([`Launch::terminal`]) — its
/// visible rows and its history — and the window title (vt100's: both emulators see the same
/// title sequences).
pub(crate) struct Shown<'a> {
    vt100: &'a Screen,
    reflow: &'a ReflowScreen,
    terminal: Terminal,
}

impl Shown<'_> {
    /// The selected emulator's visible rows, trailing blanks trimmed.
    pub(crate) fn viewport_rows(&self) -> Vec<String> {
        match self.terminal {
            Terminal::Vt100 => self.vt100.viewport_rows(),
            Terminal::Reflow => self.reflow.viewport_rows(),
        }
    }

    /// The selected emulator's whole history, soft-wrapped rows joined.
    pub(crate) fn history_lines(&self) -> Vec<String> {
        match self.terminal {
            Terminal::Vt100 => self.vt100.history_lines(),
            Terminal::Reflow => self.reflow.history_lines(),
        }
    }

    /// The window title the client set last.
    pub(crate) fn title(&self) -> &str {
        self.vt100.title()
    }
}

/// How long a synchronized update (DEC mode 2026) may stay open before the screen is read
/// anyway, as terminals do (kitty and foot give up after 150 ms or more): a client that never
/// closes one must not stall the waits.
const SYNC_TIMEOUT: Duration = Duration::from_millis(150);

/// The longest one read of the client's output blocks inside a wait.
const POLL: Duration = Duration::from_millis(250);

/// How a wait with a fallback ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// On its positive signal.
    Signal,
    /// On the fallback: the weaker condition held and the output was quiet for the quiet time.
    Quiet,
}

/// What a wait's condition sees on one look at the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    /// The positive signal: the wait is over.
    Done,
    /// Not yet, but the wait may end if the output stays quiet for its quiet time.
    Ready,
    /// Not yet.
    No,
}

impl Driver {
    /// Spawns the client in a PTY of the launch's size.
    pub fn spawn(launch: &Launch) -> Result<Driver, DriverError> {
        let mut cmd = Command::new(&launch.program);
        cmd.args(&launch.args)
            .env_clear()
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&launch.cwd);
        let mut session = OsSession::spawn(cmd).map_err(|source| DriverError::Spawn {
            program: launch.program.clone(),
            source,
        })?;
        // ptyprocess starts the child at 80×24: set the real size before it draws anything.
        session
            .get_process_mut()
            .set_window_size(launch.size.cols, launch.size.rows)
            .map_err(|e| DriverError::WindowSize {
                program: launch.program.clone(),
                source: e.into(),
            })?;
        // ptyprocess uses an older `nix`; convert its pid to ours.
        let pid = Pid::from_raw(session.get_process().pid().as_raw());
        let registered = crate::interrupt::register(pid.as_raw());
        let Size { rows, cols } = launch.size;
        let cast =
            cast::Writer::create(&launch.cast, rows, cols, &launch.env).map_err(|source| {
                DriverError::Io {
                    what: format!("creating `{}`", launch.cast.display()),
                    source,
                }
            })?;
        Ok(Driver {
            session,
            screen: Screen::new(rows, cols),
            reflow: ReflowScreen::new(rows, cols),
            terminal: launch.terminal,
            cast,
            pid,
            eof: false,
            status: None,
            bytes: 0,
            ui: launch.ui,
            release: launch.release,
            printed: Printed::default(),
            _registered: registered,
            last_byte: Instant::now(),
            turn_ended: None,
            waited: Duration::ZERO,
            held: Duration::ZERO,
            draft: String::new(),
            behaviour: Behaviour::default(),
            late_replies: std::collections::VecDeque::new(),
            pasted: Vec::new(),
            typed: Vec::new(),
        })
    }

    /// The time the harness's waits have spent, since the last call, after the client's last
    /// byte: confirming quiet output, holding Enter back, noticing a signal. The harness's
    /// overhead, as opposed to the time the client was drawing or working.
    pub(crate) fn take_harness_wait(&mut self) -> Duration {
        std::mem::take(&mut self.waited)
    }

    /// The part of the harness's wait (since the last call) that held Enter back by the client's
    /// clock rules ([`BeforeEnter::Hold`]: its paste window, its bookkeeping after a turn), which
    /// nothing the client draws can replace: time the client needs, though it draws nothing.
    pub(crate) fn take_clock_rule_wait(&mut self) -> Duration {
        std::mem::take(&mut self.held)
    }

    /// Charges to the harness the time since the client's last byte (or since `since`, a wait's
    /// start, if nothing came during the wait).
    fn charge_wait(&mut self, since: Instant) {
        self.waited += self.last_byte.max(since).elapsed();
    }

    /// Whether the screen holds a whole frame: no synchronized update is open (or one has been
    /// open without output for [`SYNC_TIMEOUT`]).
    fn frame_complete(&self) -> bool {
        !self.screen.in_frame() || self.last_byte.elapsed() >= SYNC_TIMEOUT
    }

    /// The vt100 screen (the picture a check keeps); waits read [`Driver::shown`].
    pub(crate) fn screen(&self) -> &Screen {
        &self.screen
    }

    /// The screen of the emulator the run selected, as the waits read it.
    pub(crate) fn shown(&self) -> Shown<'_> {
        Shown {
            vt100: &self.screen,
            reflow: &self.reflow,
            terminal: self.terminal,
        }
    }

    /// What the harness typed into the composer without Enter and left there ("" for none).
    pub(crate) fn draft(&self) -> &str {
        &self.draft
    }

    /// Notes what the composer holds now that the harness typed (a `type` step): the idle
    /// waits accept a composer holding exactly this ([`ready`]).
    pub(crate) fn set_draft(&mut self, draft: &str) {
        self.draft = draft.to_owned();
    }

    /// Whether the client is idle: [`is_idle`], or — after a `type` step — a classic composer
    /// holding exactly what the harness typed.
    pub(crate) fn idle_now(&self) -> bool {
        ready(self.ui, &self.draft, &self.shown())
    }

    /// The transcript of the chosen [`Terminal`], and a note saying how the other emulator's
    /// differs and whether the client erased the scrollback ([`erase_note`]; `None` when the
    /// emulators agree and nothing was erased).
    pub(crate) fn transcript(&self) -> (Transcript, Option<String>) {
        let vt100 = (Terminal::Vt100.name(), &self.screen.transcript());
        let reflow = (Terminal::Reflow.name(), &self.reflow.transcript());
        let (chosen, other, erased) = match self.terminal {
            Terminal::Vt100 => (vt100, reflow, self.screen.erased_rows()),
            Terminal::Reflow => (reflow, vt100, self.reflow.erased_rows()),
        };
        let notes: Vec<String> = [difference(chosen, other), erase_note(erased)]
            .into_iter()
            .flatten()
            .collect();
        (
            chosen.1.clone(),
            (!notes.is_empty()).then(|| notes.join("; ")),
        )
    }

    /// The chosen [`Terminal`]'s whole history, soft-wrapped rows joined, nothing stripped (what
    /// [`crate::oracle::count_rows`] counts).
    pub(crate) fn history_lines(&self) -> Vec<String> {
        match self.terminal {
            Terminal::Vt100 => self.screen.history_lines(),
            Terminal::Reflow => self.reflow.history_lines(),
        }
    }

    /// Marks the recording at this point with `label` (an asciicast `m` event): a checkpoint.
    pub(crate) fn mark(&mut self, label: &str) -> Result<(), DriverError> {
        self.cast.marker(label).map_err(|source| DriverError::Io {
            what: "writing the recording".into(),
            source,
        })
    }

    /// The visible screen of the selected emulator as text, for error messages: a first line
    /// names the emulator and says what the composer holds (and what the harness typed into
    /// it, if anything), then the rows.
    pub fn screen_text(&self) -> String {
        let shown = self.shown();
        let rows = shown.viewport_rows();
        format!(
            "[{} terminal; {}]\n{}",
            self.terminal.name(),
            composer_note(self.ui, &rows, &self.draft),
            rows.join("\n")
        )
    }

    /// Waits up to `timeout` for output, then reads everything available into the screen and the
    /// recording, answering terminal queries. Returns false once the client closed the PTY.
    pub(crate) fn pump(&mut self, timeout: Duration) -> Result<bool, DriverError> {
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
        self.send_due_replies()?;
        let timeout = match self.late_replies.front() {
            Some((due, _)) => timeout.min(due.saturating_duration_since(Instant::now())),
            None => timeout,
        };
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
        self.send_due_replies()?;
        Ok(!self.eof)
    }

    /// Sets how the terminal behaves towards the client from now on (a scenario's `[terminal]`).
    pub(crate) fn set_behaviour(&mut self, behaviour: Behaviour) {
        self.behaviour = behaviour;
    }

    /// Pastes `text` as a terminal does: in one write, its line breaks as Enter, wrapped in the
    /// bracketed-paste markers when the client enabled bracketed paste and the terminal honours
    /// it ([`Behaviour::bracketed_paste`]). Recorded as one input event.
    pub(crate) fn paste(&mut self, text: &str) -> Result<(), DriverError> {
        let bracketed = self.behaviour.bracketed_paste && self.screen.bracketed_paste();
        self.pasted.push(text.to_owned());
        self.type_raw(paste_bytes(text, bracketed).as_bytes())
    }

    /// What was pasted so far, in order ([`Driver::paste`]).
    pub(crate) fn pasted(&self) -> &[String] {
        &self.pasted
    }

    /// Everything sent as typed or pasted so far, in order ([`Driver::type_raw`]).
    pub(crate) fn typed(&self) -> &[String] {
        &self.typed
    }

    /// Writes the held-back answers that are due ([`Answers::After`]).
    fn send_due_replies(&mut self) -> Result<(), DriverError> {
        let now = Instant::now();
        while self
            .late_replies
            .front()
            .is_some_and(|(due, _)| *due <= now)
        {
            if let Some((_, bytes)) = self.late_replies.pop_front() {
                if !self.eof {
                    self.write_raw(&bytes)?;
                }
            }
        }
        Ok(())
    }

    fn ingest(&mut self, bytes: &[u8]) -> Result<(), DriverError> {
        self.bytes += bytes.len();
        self.last_byte = Instant::now();
        self.screen.feed(bytes);
        self.reflow.feed(bytes);
        self.printed.feed(bytes);
        self.cast.output(bytes).map_err(|source| DriverError::Io {
            what: "writing the recording".into(),
            source,
        })?;
        // The chosen terminal answers; the other's answers are dropped.
        let (vt100, reflow) = (self.screen.take_replies(), self.reflow.take_replies());
        let replies = match self.terminal {
            Terminal::Vt100 => vt100,
            Terminal::Reflow => reflow,
        };
        if !replies.is_empty() {
            match self.behaviour.answers {
                Answers::AtOnce => self.write_raw(&replies)?,
                Answers::After(late) => self
                    .late_replies
                    .push_back((Instant::now() + late, replies)),
                Answers::Never => {}
                Answers::Split(late) => {
                    self.write_raw(&replies[..1])?;
                    self.late_replies
                        .push_back((Instant::now() + late, replies[1..].to_vec()));
                }
            }
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

    /// How long the client has printed nothing.
    pub(crate) fn quiet_for(&self) -> Duration {
        self.last_byte.elapsed()
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
    pub(crate) fn wait_until(
        &mut self,
        what: &str,
        deadline: Duration,
        mut cond: impl FnMut(&Shown<'_>) -> bool,
    ) -> Result<(), DriverError> {
        self.wait_until_printed(what, deadline, self.printed_mark(), |s, _| cond(s))
    }

    /// [`Driver::wait_until`] whose condition also sees what the client has printed since `mark`
    /// (squashed as [`squash`] squashes: drawn, even if erased again).
    pub(crate) fn wait_until_printed(
        &mut self,
        what: &str,
        deadline: Duration,
        mark: usize,
        mut cond: impl FnMut(&Shown<'_>, &str) -> bool,
    ) -> Result<(), DriverError> {
        self.wait_look(what, deadline, mark, Duration::MAX, |s, printed| {
            if cond(s, printed) {
                Look::Done
            } else {
                Look::No
            }
        })
        .map(drop)
    }

    /// Waits until `done` holds on the screen — the positive signal — or, the fallback, until
    /// `ready` holds and the output has been quiet for `quiet`; `done` is only looked at while
    /// `ready` holds. Says which of the two ended the wait.
    pub(crate) fn wait_done(
        &mut self,
        what: &str,
        deadline: Duration,
        quiet: Duration,
        mut ready: impl FnMut(&Shown<'_>) -> bool,
        mut done: impl FnMut(&Shown<'_>) -> bool,
    ) -> Result<Ending, DriverError> {
        self.wait_look(what, deadline, self.printed_mark(), quiet, |s, _| {
            if !ready(s) {
                Look::No
            } else if done(s) {
                Look::Done
            } else {
                Look::Ready
            }
        })
    }

    /// The one wait loop: pumps output until `look` says [`Look::Done`], or [`Look::Ready`] with
    /// no output for `quiet`; looks only at whole frames ([`Driver::frame_complete`]); fails at
    /// `deadline` (with the last screen) or when the client exits first. `look` also sees what
    /// the client printed since `mark`. The time after the client's last byte is charged to the
    /// harness.
    fn wait_look(
        &mut self,
        what: &str,
        deadline: Duration,
        mark: usize,
        quiet: Duration,
        mut look: impl FnMut(&Shown<'_>, &str) -> Look,
    ) -> Result<Ending, DriverError> {
        let start = Instant::now();
        loop {
            let seen = if self.frame_complete() {
                look(&self.shown(), self.printed.since(mark))
            } else {
                Look::No
            };
            let quiet_for = self.last_byte.max(start).elapsed();
            let ending = match seen {
                Look::Done => Some(Ending::Signal),
                Look::Ready if quiet_for >= quiet => Some(Ending::Quiet),
                _ => None,
            };
            if let Some(ending) = ending {
                self.charge_wait(start);
                return Ok(ending);
            }
            let elapsed = start.elapsed();
            if elapsed >= deadline {
                return Err(DriverError::Timeout {
                    what: what.to_owned(),
                    secs: elapsed.as_secs_f64(),
                    screen: self.screen_text(),
                });
            }
            let mut slice = (deadline - elapsed).min(POLL);
            if seen == Look::Ready {
                slice = slice.min(quiet - quiet_for);
            }
            if self.screen.in_frame() {
                slice = slice.min(SYNC_TIMEOUT);
            }
            if !self.pump(slice)? {
                // The client closed the PTY: what it drew last decides.
                if look(&self.shown(), self.printed.since(mark)) == Look::Done {
                    self.charge_wait(start);
                    return Ok(Ending::Signal);
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

    /// What an idle wait waits for, as its timeout says it: the idle prompt, with what the
    /// harness typed into the composer if anything.
    pub(crate) fn idle_what(&self) -> String {
        if self.draft.is_empty() {
            "the idle prompt".to_owned()
        } else {
            format!(
                "the idle prompt with the composer holding exactly `{}` (typed by the harness, \
                 not sent)",
                excerpt(&self.draft)
            )
        }
    }

    /// Waits until the prompt is idle ([`ready`]: holding exactly what the harness typed, if
    /// anything) and `text` (compared without whitespace, punctuation or box-drawing, so
    /// wrapping and panels don't matter) is visible.
    pub(crate) fn wait_idle_with(
        &mut self,
        text: &str,
        deadline: Duration,
    ) -> Result<(), DriverError> {
        let needle = squash(text);
        let prompt = self.idle_what();
        let what = if needle.is_empty() {
            prompt
        } else {
            format!("{prompt} with `{}` on screen", excerpt(text))
        };
        let (ui, draft) = (self.ui, self.draft.clone());
        self.wait_until(&what, deadline, |s| {
            ready(ui, &draft, s) && squash(&s.viewport_rows().join("")).contains(&needle)
        })
    }

    /// Waits until the idle prompt is shown and the output has been quiet for 3 s: the
    /// end of a turn whose reply never came (the client retried, then gave up with an error).
    pub(crate) fn wait_settled_idle(&mut self, deadline: Duration) -> Result<(), DriverError> {
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
            let (ui, draft) = (self.ui, self.draft.clone());
            self.wait_until(what, left, |s| ready(ui, &draft, s))
                .map_err(whole)?;
            let left = deadline.saturating_sub(start.elapsed());
            self.wait_quiet(quiet, left).map_err(whole)?;
            if self.idle_now() {
                return Ok(());
            }
        }
    }

    /// Types `text`, waits for its echo, then presses Enter — as a person does, into a finished
    /// screen and with a pause before Enter, both as the interface needs ([`Ui::before_typing`],
    /// [`Ui::before_enter`]).
    pub fn type_line(&mut self, text: &str, deadline: Duration) -> Result<(), DriverError> {
        // Keys typed while the client is still drawing the end of the last step can land in the
        // history (hermes-agent 0.19.0 echoed them before a reply panel's closing border, and the
        // user's message appeared twice): every classic step ends on the client's own signal
        // that it is done; the TUI's output must also be quiet.
        let start = Instant::now();
        let left = || deadline.saturating_sub(start.elapsed());
        let settle = self.ui.before_typing();
        if !settle.is_zero() {
            self.wait_quiet(settle, left())?;
        }
        // The echo is one more drawing of the text than before it was typed: the same words may
        // be on screen already (a resumed recap that mentions the session's "history" before
        // `/history` is typed, a question asked again after `/undo`), and taking them for the
        // echo sent Enter before the client had the line (it was lost, or taken as a paste).
        let (needle, last) = (squash(text), visible(echo_end(text)));
        let drawings = |s: &Shown<'_>| squash(&s.history_lines().concat()).matches(&needle).count();
        let before = drawings(&self.shown());
        self.type_raw(text.as_bytes())?;
        self.wait_until(&format!("the echo of `{}`", excerpt(text)), left(), |s| {
            drawings(s) > before && visible(&s.viewport_rows().concat()).contains(&last)
        })?;
        match self.ui.before_enter() {
            BeforeEnter::Hold {
                after_echo,
                after_turn,
            } => {
                let since_turn = self.turn_ended.take().map(|t| t.elapsed());
                let hold = since_turn.map_or(after_echo, |since| {
                    after_echo.max(after_turn.saturating_sub(since))
                });
                let waited = self.waited;
                self.read_for(hold.min(left()))?;
                self.held += self.waited.saturating_sub(waited);
            }
            BeforeEnter::Quiet(quiet) => self.wait_quiet(quiet, left())?,
        }
        self.type_raw(b"\r")
    }

    /// Notes that a turn has just ended: the next line's Enter keeps the interface's distance
    /// from it ([`BeforeEnter::Hold`]).
    pub(crate) fn turn_ended(&mut self) {
        self.turn_ended = Some(Instant::now());
    }

    /// Reads the client's output for `span` (a hold the harness itself decides: the pause
    /// before Enter, a drag's gap), charged to the harness after the client's last byte.
    pub(crate) fn read_for(&mut self, span: Duration) -> Result<(), DriverError> {
        let start = Instant::now();
        loop {
            let left = span.saturating_sub(start.elapsed());
            if left.is_zero() {
                self.charge_wait(start);
                return Ok(());
            }
            if !self.pump(left)? {
                let status = self.reap(Duration::from_secs(2));
                return Err(DriverError::Exited {
                    what: "the client's output".into(),
                    status,
                    screen: self.screen_text(),
                });
            }
        }
    }

    /// Sends what a person types (text or a key's bytes) at once, and records it as an input
    /// event (asciicast `i`), so a replay shows what was typed and when. (Answers to the
    /// terminal's queries are not recorded.)
    pub(crate) fn type_raw(&mut self, bytes: &[u8]) -> Result<(), DriverError> {
        self.typed.push(String::from_utf8_lossy(bytes).into_owned());
        self.cast
            .input(&String::from_utf8_lossy(bytes))
            .map_err(|source| DriverError::Io {
                what: "writing the recording".into(),
                source,
            })?;
        self.write_raw(bytes)
    }

    /// Waits until the client has written nothing for `quiet`, or fails at `deadline`. The quiet
    /// time itself (from the client's last byte to the return) is the harness's own wait.
    pub(crate) fn wait_quiet(
        &mut self,
        quiet: Duration,
        deadline: Duration,
    ) -> Result<(), DriverError> {
        self.wait_look(
            "a pause in the client's output",
            deadline,
            self.printed_mark(),
            quiet,
            |_, _| Look::Ready,
        )
        .map(drop)
    }

    /// The interface running.
    pub(crate) fn ui(&self) -> Ui {
        self.ui
    }

    /// The client's release, if its spec named one.
    pub(crate) fn release(&self) -> Option<ClientVersion> {
        self.release
    }

    /// Resizes the PTY and the emulated screen together.
    pub(crate) fn resize(&mut self, size: Size) -> Result<(), DriverError> {
        let Size { rows, cols } = size;
        self.session
            .get_process_mut()
            .set_window_size(cols, rows)
            .map_err(|e| DriverError::Io {
                what: "resizing the PTY".into(),
                source: e.into(),
            })?;
        self.screen.resize(rows, cols);
        self.reflow.resize(rows, cols);
        self.cast
            .resize(Size { cols, rows })
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
    pub(crate) fn kill(&mut self) {
        let _ = killpg(self.pid, Signal::SIGKILL);
        if self.status.is_none() {
            let _ = self.session.get_process().wait();
            self.status = Some("killed".into());
        }
    }

    /// Kills the client as a crash or a closed terminal would (a scenario's `kill`): SIGKILL to
    /// every process it started — its process group, and each descendant in a group or session
    /// of its own (a tool's shell started with `setsid`), found through `/proc` before the first
    /// signal — then reaps the client and waits until none of them is left. Fails, naming the
    /// survivors, when one still runs at the deadline: the next launch must not share the home
    /// with an orphan of this one.
    pub(crate) fn kill_tree(&mut self, deadline: Duration) -> Result<(), DriverError> {
        let tree = descendants(self.pid.as_raw());
        let _ = killpg(self.pid, Signal::SIGKILL);
        for &pid in &tree {
            let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
            if let Ok(group) = nix::unistd::getpgid(Some(Pid::from_raw(pid))) {
                let _ = killpg(group, Signal::SIGKILL);
            }
        }
        self.kill();
        // Drain the PTY: what the client wrote before the signal stays in the recording.
        let _ = self.pump(Duration::from_millis(50));
        let start = Instant::now();
        loop {
            let left: Vec<i32> = tree.iter().copied().filter(|&p| alive(p)).collect();
            if left.is_empty() {
                return Ok(());
            }
            if start.elapsed() >= deadline {
                return Err(DriverError::Orphans { pids: left });
            }
            // Orphans are reaped by init: no fd signals it; poll briefly.
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Flushes the recording.
    pub fn finish_recording(&mut self) -> Result<(), DriverError> {
        self.cast.flush().map_err(|source| DriverError::Io {
            what: "writing the recording".into(),
            source,
        })
    }
}

/// Every live descendant of `root` (children, their children, …), read from `/proc/*/stat`.
fn descendants(root: i32) -> Vec<i32> {
    let parents: Vec<(i32, i32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, parent_of(pid)?)))
        .collect();
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    tree.remove(0);
    tree
}

/// The parent of `pid` and whether it still runs (not a zombie), from `/proc/PID/stat`.
fn stat_of(pid: i32) -> Option<(i32, char)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `PID (COMM) STATE PPID …`: COMM may hold spaces and parentheses; it ends at the last `)`.
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    Some((parent, state))
}

fn parent_of(pid: i32) -> Option<i32> {
    stat_of(pid).map(|(parent, _)| parent)
}

/// Whether `pid` exists and is not a zombie.
fn alive(pid: i32) -> bool {
    stat_of(pid).is_some_and(|(_, state)| state != 'Z' && state != 'X')
}

impl Drop for Driver {
    fn drop(&mut self) {
        // Kill the group even when the client itself exited: a background child may survive it.
        let _ = killpg(self.pid, Signal::SIGKILL);
        if self.status.is_none() {
            let _ = self.session.get_process().wait();
        }
        let _ = self.cast.flush();
    }
}

/// The letters and digits a terminal program printed, lower-cased, with escape sequences (CSI,
/// OSC, DCS and the others) left out as the terminal's [`Scanner`] sees them — fed chunk by chunk,
/// so a sequence or a character split across reads is still recognised.
#[derive(Debug, Default)]
struct Printed {
    text: String,
    scanner: Scanner,
}

impl Printed {
    /// What was printed since `mark` (a length of `text` once; "" for a mark past the end).
    fn since(&self, mark: usize) -> &str {
        self.text.get(mark..).unwrap_or_default()
    }

    fn feed(&mut self, bytes: &[u8]) {
        for (i, &b) in bytes.iter().enumerate() {
            if let Event::Printed { c, .. } = self.scanner.step(i, b) {
                if c.is_alphanumeric() {
                    self.text.extend(c.to_lowercase());
                }
            }
        }
    }
}

/// Whether `shown` is idle for a client whose composer should hold `draft` (what the harness
/// typed without Enter): with no draft, [`is_idle`]; with one, the classic CLI's composer holds
/// exactly the draft ([`composer_text`], whitespace aside) — the TUI's composer is not read, so
/// its ready status bar counts.
pub(crate) fn ready(ui: Ui, draft: &str, shown: &Shown<'_>) -> bool {
    let rows = shown.viewport_rows();
    if draft.is_empty() || ui == Ui::Tui {
        return is_idle(ui, &rows, shown.title());
    }
    let bare = |s: &str| s.split_whitespace().collect::<String>();
    composer_text(ui, &rows).is_some_and(|held| bare(&held) == bare(draft))
}

/// What a timeout says about the composer: what it holds on `rows`, and what the harness typed
/// into it without Enter (`draft`), if anything.
fn composer_note(ui: Ui, rows: &[String], draft: &str) -> String {
    let held = match composer_text(ui, rows) {
        Some(t) if t.trim().is_empty() => "the composer is empty".to_owned(),
        Some(t) => format!("the composer holds `{}`", excerpt(t.trim())),
        None if ui == Ui::Tui => "the composer is not read (TUI)".to_owned(),
        None => "no composer on screen".to_owned(),
    };
    if draft.is_empty() {
        format!("{held}; the harness typed nothing into it")
    } else {
        format!("{held}; the harness typed `{}` into it", excerpt(draft))
    }
}

/// Text as an echo is compared: whitespace and box-drawing characters (panel borders, the edges
/// of a wrapped composer) left out, punctuation kept.
fn visible(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && !('\u{2500}'..='\u{257f}').contains(c))
        .collect()
}

/// The end of a typed line from its last letter or digit on (`y?` of `… all day?`): with
/// [`squash`], which leaves punctuation out, it proves the last key typed was echoed.
fn echo_end(text: &str) -> &str {
    let text = text.trim_end();
    text.char_indices()
        .rev()
        .find(|(_, c)| c.is_alphanumeric())
        .map_or(text, |(i, _)| &text[i..])
}

fn excerpt(text: &str) -> String {
    let mut s: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        s.push('…');
    }
    s.replace('\n', " ")
}

#[cfg(test)]
pub(crate) mod tests;
