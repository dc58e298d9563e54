//! Stage `screen`: a `vt100` terminal emulator that keeps the **whole** rendered history.
//!
//! Input: the raw bytes the client wrote to its PTY (fed chunk by chunk as they arrive) and resizes.
//! Output: the viewport as text (for the driver's waits) and a [`Transcript`]: every row that was ever
//! drawn — rows that scrolled off the top included — with soft-wrapped rows joined and UI chrome
//! (panel borders, rules, the prompt) stripped, each line keeping its row number in the history.
//!
//! OWNER: helper "screen" — contract below is fixed; implementation pending.

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
    /// Used by [`Screen::transcript`] and by tests that start from text rather than bytes.
    pub fn from_history_lines(lines: &[String]) -> Transcript {
        let _ = lines;
        unimplemented!("screen helper")
    }

    /// All lines joined with `\n` (for snapshots and debugging).
    pub fn text(&self) -> String {
        self.lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n")
    }
}

/// A terminal emulator of a fixed size that records every row leaving the viewport.
pub struct Screen {
    _private: (),
}

impl Screen {
    /// A new, empty screen of `rows` × `cols` cells.
    pub fn new(rows: u16, cols: u16) -> Screen {
        let _ = (rows, cols);
        unimplemented!("screen helper")
    }

    /// Feeds bytes exactly as read from the PTY (may split escape sequences and UTF-8 anywhere).
    pub fn feed(&mut self, bytes: &[u8]) {
        let _ = bytes;
        unimplemented!("screen helper")
    }

    /// Bytes a real terminal would answer to queries seen so far (DA1 `CSI c` → `CSI ? 1 ; 2 c`,
    /// OSC 11 background query → a dark background); drained on each call. The driver writes them
    /// back to the PTY.
    pub fn take_replies(&mut self) -> Vec<u8> {
        unimplemented!("screen helper")
    }

    /// Resizes the emulated terminal (the driver resizes the PTY at the same time).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let _ = (rows, cols);
        unimplemented!("screen helper")
    }

    /// The visible rows as plain text, one string per row, trailing blanks trimmed.
    pub fn viewport_rows(&self) -> Vec<String> {
        unimplemented!("screen helper")
    }

    /// The whole history (scrolled-off rows, then the visible rows), soft-wrapped rows joined,
    /// trailing blank rows dropped; no chrome stripping.
    pub fn history_lines(&self) -> Vec<String> {
        unimplemented!("screen helper")
    }

    /// [`Screen::history_lines`] with chrome stripped, as a [`Transcript`].
    pub fn transcript(&self) -> Transcript {
        Transcript::from_history_lines(&self.history_lines())
    }
}
