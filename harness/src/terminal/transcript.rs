//! The transcript: the rendered history as lines, chrome stripped.
//!
//! The transcript: the whole rendered history of one client process as lines, soft-wrapped rows
//! joined and client chrome stripped ([`crate::client::chrome`] says what is chrome), each line
//! with the row number where it starts. [`super::Screen::transcript`] makes one from its history;
//! [`Transcript::from_history_lines`] from plain text.

use crate::client::chrome::{is_queue_dock_row, strip_chrome, QUEUE_DOCK_HEADING};
use crate::oracle::is_stale_preview;

/// One line of the rendered history after soft-wrapped rows were joined and chrome stripped.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TranscriptLine {
    /// Index of the (first) physical row of this line in the whole history, 0 = oldest row.
    pub row: usize,
    /// The text with panel borders / rules / prompt chrome removed (may be empty).
    pub text: String,
}

/// The whole rendered history of one client process as the user could have scrolled through it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Transcript {
    /// Lines in display order, oldest first.
    pub lines: Vec<TranscriptLine>,
}

impl Transcript {
    /// Builds a transcript from plain history lines (one per joined row), stripping chrome.
    /// For tests and tools that start from text rather than bytes; [`Screen::transcript`] does
    /// the same on its own history.
    ///
    /// Here each input line counts as one row, so `row` is the index of the line in `lines`;
    /// [`Screen::transcript`] numbers physical rows instead.
    ///
    /// What is chrome ([`crate::client::chrome`]):
    /// - rules: lines made of box-drawing characters only (`────`, `╰───╯`), or a rule with a title
    ///   embedded (`╭─ Hermes ────╮`, `─── Title ───`): dropped entirely, title included;
    /// - panel borders: a leading `│`/`┃`/`║` (and one space of padding) and, on such a row, the
    ///   trailing one with its padding: removed, the text inside kept;
    /// - the prompt marker `❯` at the start of a line: removed with one space; any text typed after
    ///   it is kept (it is on screen), a bare prompt line is dropped;
    /// - the queue dock: its heading ([`QUEUE_DOCK_HEADING`]) and the item rows right below it
    ///   ([`is_queue_dock_row`]) are dropped;
    /// - on a terminal's screen only ([`Screen::transcript`], not these lines): a stale status-bar
    ///   preview row (`  …  t2w033 t2w034`, [`is_stale_preview`]: the classic CLI's preview of
    ///   the reply line being streamed, left in the history when the terminal re-wrapped or
    ///   clipped it) is dropped: the row counts report it once, as `stale_preview_rows`, and its
    ///   words are not a message drawn again. An export or a text given as lines keeps it.
    ///
    /// Blank lines are kept as paragraph breaks, but runs of them collapse to one and none are kept
    /// at the start or the end.
    ///
    /// [`Screen::transcript`]: super::Screen::transcript
    pub(crate) fn from_history_lines(lines: &[String]) -> Transcript {
        Transcript::from_numbered(
            lines.iter().enumerate().map(|(i, l)| (i, l.as_str())),
            false,
        )
    }

    /// Builds a transcript from `(row, text)` pairs in display order; `screen`: the lines are a
    /// terminal's, whose stale status-bar preview rows are dropped.
    pub(super) fn from_numbered<'a>(
        lines: impl IntoIterator<Item = (usize, &'a str)>,
        screen: bool,
    ) -> Transcript {
        let mut out: Vec<TranscriptLine> = Vec::new();
        let mut in_dock = false;
        for (row, line) in lines {
            in_dock = if line.trim_start().starts_with(QUEUE_DOCK_HEADING) {
                true
            } else {
                in_dock && is_queue_dock_row(line)
            };
            if in_dock || (screen && is_stale_preview(line)) {
                continue;
            }
            let Some(text) = strip_chrome(line) else {
                continue;
            };
            let blank = text.is_empty();
            // Collapse runs of blank lines and skip leading ones: they carry no words, and long
            // runs of them (a cleared screen scrolling away) only make snapshots noisy.
            let after_text = out.last().is_some_and(|l| !l.text.is_empty());
            if blank && !after_text {
                continue;
            }
            out.push(TranscriptLine { row, text });
        }
        while out.last().is_some_and(|l| l.text.is_empty()) {
            out.pop();
        }
        Transcript { lines: out }
    }

    /// All lines joined with `\n` (for snapshots and debugging).
    pub fn text(&self) -> String {
        self.lines
            .iter()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}
