//! What the commands write to stdout and stderr.
//!
//! What the commands write: stdout through [`print()`] and [`println()`], where a reader that went away
//! (`hermes-e2e check … --history | head -1`) is [`Error::Closed`] — the command stops and the
//! binary exits 0, saying nothing — and stderr through `note` and `Progress`, where a failed
//! write is dropped (there is nowhere left to say it).
//!
//! `--quiet` ([`set_quiet`]) silences the text on stdout, the notes and the progress line; what
//! was asked for as JSON (`json`) and the errors (`error`) are still written.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// `--quiet`: from now on `print()`, `println()`, `note` and `Progress` write nothing.
pub(crate) fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::SeqCst);
}

/// Whether `--quiet` was given.
pub(crate) fn quiet() -> bool {
    QUIET.load(Ordering::SeqCst)
}

/// Writes one JSON document and a newline to stdout, `--quiet` or not (it was asked for).
pub(crate) fn json(line: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(line.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// Writes a document that was asked for (a completion script, the manual page) to stdout as it
/// is, `--quiet` or not.
pub(crate) fn document(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// Writes an error line (made printable) to stderr, `--quiet` or not; a failed write is dropped.
pub(crate) fn error(line: &str) {
    let _ = writeln!(std::io::stderr(), "{}", report::printable(line));
}

use super::Error;
use crate::report;

/// Writes `text` to stdout (nothing with `--quiet`).
pub(crate) fn print(text: &str) -> Result<(), Error> {
    if quiet() {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// Writes `line` and a newline to stdout (nothing with `--quiet`).
pub(crate) fn println(line: &str) -> Result<(), Error> {
    if quiet() {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    out.write_all(line.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// A failed write to stdout: [`Error::Closed`] when its reader went away.
fn stdout_error(e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Error::Closed
    } else {
        Error::Stdout(e)
    }
}

/// Writes `line` (made printable) and a newline to stderr (nothing with `--quiet`); a failed
/// write is dropped.
pub(crate) fn note(line: &str) {
    if quiet() {
        return;
    }
    let _ = writeln!(std::io::stderr(), "{}", report::printable(line));
}

/// Writes `text` (made printable) to stderr as it is (nothing with `--quiet`); a failed write
/// is dropped.
pub(crate) fn note_text(text: &str) {
    if quiet() {
        return;
    }
    let _ = write!(std::io::stderr(), "{}", report::printable(text));
}

/// One line of progress redrawn in place on stderr, shown only when stderr is a terminal (and
/// `--json` is not asked for): a log or a pipe never sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Progress {
    live: bool,
    width: usize,
}

impl Progress {
    /// A progress line of at most `width` characters; silent with `json` or off a terminal.
    pub(crate) fn new(json: bool, width: usize) -> Progress {
        Progress {
            live: !json && !quiet() && std::io::stderr().is_terminal(),
            width,
        }
    }

    /// Whether anything is drawn.
    pub(crate) fn live(self) -> bool {
        self.live
    }

    /// Redraws the line as `line` (made printable, cut to the width).
    pub(crate) fn show(self, line: &str) {
        if self.live {
            let shown: String = report::printable(line).chars().take(self.width).collect();
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K{shown}");
            let _ = err.flush();
        }
    }

    /// Clears the line (before something else is printed).
    pub(crate) fn clear(self) {
        if self.live {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}
