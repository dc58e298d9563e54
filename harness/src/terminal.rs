//! The terminal: emulation with the whole history, escapes, recordings, transcripts.
//!
//! Stage `terminal`: the terminal side — a `vt100` emulator that keeps the **whole** rendered
//! history, the one escape-sequence scanner, asciicast recordings and the transcript.
//!
//! Input: the raw bytes the client wrote to its PTY (fed chunk by chunk as they arrive) and resizes.
//! Output: the viewport as text (for the driver's waits) and a [`Transcript`]: every row that was ever
//! drawn — rows that scrolled off the top included — with soft-wrapped rows joined and UI chrome
//! (panel borders, rules, the prompt: `crate::client::chrome` says what is chrome) stripped, each line keeping its row number in the history.
//!
//! How the history is kept:
//! - The `vt100` parser runs with a scrollback capacity of **0**. With no scrollback of its own,
//!   vt100 hands every row leaving the top of the main screen to [`vt100::Callbacks::on_scroll`]
//!   at once, and we append it to our own list, read with `RowContents::write_plain` and
//!   `RowContents::wrapped` — accessors of the vendored, patched vt100 (`vendor/README.md`:
//!   vt100's own API gives the row only as SGR-formatted text, ≈ 250 instructions a cell). That
//!   list is therefore always "everything above the screen", in order; only the erase below
//!   shrinks it.
//! - `CSI 3 J` (erase the scrollback) is honoured **inside a frame** — a synchronized update,
//!   `CSI ? 2026 h` … `CSI ? 2026 l` — and nowhere else. The clients send it at three moments
//!   (measured in the recordings of both pinned clients): at start, before drawing anything
//!   (nothing to erase); at the classic CLI's exit (`CSI 3 J CSI 2 J CSI H`, then the resume
//!   hint); and in every frame the Ink TUI draws after a resize (`CSI ? 2026 h … CSI 2 J CSI 3 J
//!   CSI H`, then its whole transcript again). A terminal (tmux 3.3a, xterm, VTE) erases its
//!   scrollback each time, so after a resize the TUI's conversation is on screen once, and what
//!   was above it is gone (upstream #96372, "TUI history clears on resize"); kept, each resize
//!   would count as one more copy of the conversation, which no terminal shows. The erase at exit
//!   is not honoured: the conversation is over, no check reads the screen after it, and a
//!   recording checked whole (`check --cast`) is judged on what its session showed. Erased rows
//!   are counted (`Screen::erased_rows`) and keep their row numbers.
//! - `CSI 2 J` (and `CSI ? 2 J`, the full reset `ESC c`, and `CSI J` with the cursor at the top
//!   left) blank the visible rows without scrolling them, so xterm loses them. The harness wants
//!   the whole history, so just before such a clear takes effect on the main screen,
//!   `Screen::feed` copies the rows from the top to the last non-blank one into the history.
//!   This is what tmux does (`scroll-on-clear`, on by default), and avt (asciinema's emulator) on
//!   `2J`; tmux is the emulator the harness cross-checks against. To see the clear before vt100
//!   acts on it, a small scanner mirroring vt100's `vte` state machine (`scan`) follows the
//!   bytes; its state survives between calls, so a sequence split across reads is seen like a
//!   whole one.
//!   `CSI J` from anywhere else (prompt_toolkit redrawing its input box) is not a clear.
//! - The alternate screen is a separate canvas that real terminals never put in scrollback (the Ink
//!   TUI draws its frames there): rows scrolling off it, and clears on it, are not recorded. While
//!   it is active its current frame is what `Screen::history_lines` shows after the main history.
//! - Rows leaving a scroll region that does not start at the top row vanish, as in a real
//!   terminal. (The classic CLI uses no scroll regions.)
//! - Wide (CJK) characters occupy two cells; the text produced has each of them once, with no
//!   padding. One vt100 quirk is corrected: a wide character that does not fit in the last column
//!   moves to the next row without the row being marked soft-wrapped (tmux and xterm mark it),
//!   which would split a streamed CJK line; see `Screen::feed`.
//! - Memory is bounded: past `MAX_HISTORY_BYTES` the oldest rows are dropped and counted
//!   (`Screen::dropped_rows`), so row numbers stay absolute.
//!
//! Files:
//! - `terminal.rs`: [`Screen`], the emulator and its history (this page);
//! - `scan`: the one escape-sequence scanner (mirrors vt100's `vte`), used here to see clears and
//!   wide characters, and by the driver to track the text the client printed;
//! - `reflow`: [`ReflowScreen`], the same history on `alacritty_terminal`, which re-wraps
//!   soft-wrapped rows when the width changes (as tmux and other terminals do);
//! - `choice.rs`: [`Terminal`] (which of the two a scenario's checks read), [`Emulator`] (what
//!   the harness needs of either), [`difference`] (how their transcripts differ);
//! - [`cast`]: asciicast recordings — v2 written while the client runs (`cast::Writer`), v2 and
//!   v3 read and replayed into a [`Screen`] ([`cast::replay`]);
//! - `transcript`: [`Transcript`] and [`TranscriptLine`], the history with chrome stripped;
//! - `svg.rs`: [`Screen::svg`], the colour picture of the visible screen;
//! - `size.rs`: [`Size`], the one `COLSxROWS` parser;
//! - `tests.rs` (and `tests/tmux.rs`, the cross-check against tmux): the unit tests.

use std::collections::VecDeque;
use std::fmt;
use std::num::NonZeroU16;

use vt100::capture::RowContents;

use scan::{Event, Scanner};

pub(crate) mod behaviour;
pub mod cast;
mod choice;
pub(crate) mod reflow;
pub(crate) mod scan;
mod size;
mod svg;
#[cfg(any(test, feature = "test-support"))]
pub mod tmux;
pub(crate) mod transcript;

pub(crate) use behaviour::{Answers, Behaviour};
pub use choice::{difference, erase_note, Emulator, Terminal};
pub use reflow::ReflowScreen;
pub use size::{Size, SizeError};
pub use transcript::{Transcript, TranscriptLine};

/// Upper bound on the memory the history may use (text bytes plus a per-row overhead). A whole
/// session is 30–140 KB of output; this only stops absurd inputs from exhausting memory.
pub(crate) const MAX_HISTORY_BYTES: usize = 64 << 20;

/// Bytes charged per history row on top of its text, so that a flood of empty rows is bounded too.
const ROW_OVERHEAD_BYTES: usize = std::mem::size_of::<PhysicalRow>();

/// One physical row of the history, as it was when it left the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PhysicalRow {
    /// Plain text; trailing never-written cells are not included, printed spaces are.
    text: String,
    /// Whether the text continues on the next row (soft wrap).
    wrapped: bool,
}

/// The vt100 callbacks: collects rows leaving the screen and answers terminal queries.
#[derive(Debug)]
struct Recorder {
    /// Rows above the screen, oldest first.
    history: VecDeque<PhysicalRow>,
    /// Memory charged to `history` (see [`MAX_HISTORY_BYTES`]).
    history_bytes: usize,
    /// The bound on `history_bytes`: [`MAX_HISTORY_BYTES`] (smaller in tests).
    history_limit: usize,
    /// Rows dropped from the front of `history` to respect [`MAX_HISTORY_BYTES`].
    dropped_rows: usize,
    /// Rows erased from the history by the client (`CSI 3 J` in a frame, see [`Screen::feed`]).
    erased_rows: usize,
    /// Answers to queries, not yet taken by the driver.
    replies: Vec<u8>,
    /// The window title the client set last (`OSC 0` or `OSC 2`), empty before it sets one.
    title: String,
}

impl Recorder {
    fn new(history_limit: usize) -> Recorder {
        Recorder {
            history: VecDeque::new(),
            history_bytes: 0,
            history_limit,
            dropped_rows: 0,
            erased_rows: 0,
            replies: Vec::new(),
            title: String::new(),
        }
    }

    fn push(&mut self, row: PhysicalRow) {
        self.history_bytes += row.text.len() + ROW_OVERHEAD_BYTES;
        self.history.push_back(row);
        while self.history_bytes > self.history_limit {
            let Some(old) = self.history.pop_front() else {
                break;
            };
            self.history_bytes -= old.text.len() + ROW_OVERHEAD_BYTES;
            self.dropped_rows += 1;
        }
    }
}

/// The first value of the first parameter, as vt100 reads it (0 when absent).
fn first_param(params: &[&[u16]]) -> u16 {
    params.first().and_then(|p| p.first()).copied().unwrap_or(0)
}

impl vt100::Callbacks for Recorder {
    fn on_scroll(&mut self, contents: RowContents<'_>, alternate_screen: bool) {
        // Real terminals keep no history of the alternate screen.
        if alternate_screen {
            return;
        }
        // The row's text as vt100's formatted capture would read with its escape codes
        // stripped, written straight from the cells (the vendored patch, see vendor/README.md).
        let mut text = String::new();
        contents.write_plain(&mut text);
        self.push(PhysicalRow {
            text: without_filler(text),
            wrapped: contents.wrapped(),
        });
    }

    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        match (i1, i2, c, first_param(params)) {
            // DA1, primary device attributes: "VT100 with advanced video option". The client
            // waits ~1.2 s for this answer at start.
            (None, None, 'c', 0) => self.replies.extend_from_slice(b"\x1b[?1;2c"),
            // DSR 5, status report: "OK".
            (None, None, 'n', 5) => self.replies.extend_from_slice(b"\x1b[0n"),
            // DSR 6, cursor position report, 1-based (prompt_toolkit may ask for it).
            (None, None, 'n', 6) => {
                let (rows, cols) = screen.size();
                let (row, col) = screen.cursor_position();
                // The cursor may sit one past the last column (pending wrap); report the
                // last column, as xterm does.
                let row = row.saturating_add(1).min(rows.get());
                let col = col.saturating_add(1).min(cols.get());
                self.replies
                    .extend_from_slice(format!("\x1b[{row};{col}R").as_bytes());
            }
            _ => {}
        }
    }

    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = String::from_utf8_lossy(title).into_owned();
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        match params {
            // Background colour query: answer "black", so the client picks its dark theme.
            [b"11", b"?"] => self
                .replies
                .extend_from_slice(b"\x1b]11;rgb:0000/0000/0000\x1b\\"),
            // Foreground colour query: white on that black.
            [b"10", b"?"] => self
                .replies
                .extend_from_slice(b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\"),
            _ => {}
        }
    }
}

/// A noncharacter (reserved by Unicode for internal use, never meant to be interchanged) put in
/// the last column before a wide character that does not fit there, so that vt100 marks the row
/// soft-wrapped; it is removed from all text this module produces. See [`Screen::feed`].
const WRAP_FILLER: char = '\u{fdd0}';

/// Removes [`WRAP_FILLER`]s from a row's text.
fn without_filler(mut text: String) -> String {
    if text.contains(WRAP_FILLER) {
        text.retain(|c| c != WRAP_FILLER);
    }
    text
}

/// The first character that can be drawn two cells wide (the Hangul Jamo): printed characters
/// below it never need [`Screen::feed`]'s padding.
const FIRST_WIDE: char = '\u{1100}';

/// A terminal emulator of a fixed size that records every row leaving the viewport.
pub struct Screen {
    parser: vt100::Parser<Recorder>,
    scanner: Scanner,
    /// The start of a UTF-8 character cut off at the end of the last input, held back so that
    /// every character reaches vt100 in one piece (see [`Screen::feed`]).
    carry: Vec<u8>,
    /// A one-row vt100 used only to learn whether vt100 draws a character two cells wide.
    width_probe: vt100::Parser,
    /// Whether a synchronized update (DEC mode 2026) is open: the client is drawing a frame.
    in_frame: bool,
}

impl fmt::Debug for Screen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (rows, cols) = self.parser.screen().size();
        f.debug_struct("Screen")
            .field("rows", &rows)
            .field("cols", &cols)
            .field("history_rows", &self.parser.callbacks().history.len())
            .field("dropped_rows", &self.parser.callbacks().dropped_rows)
            .finish_non_exhaustive()
    }
}

/// Clamps a dimension to at least one cell (a zero-sized terminal cannot exist).
fn dimension(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

impl Screen {
    /// A new, empty screen of `rows` × `cols` cells.
    ///
    /// A zero dimension is taken as 1.
    pub fn new(rows: u16, cols: u16) -> Screen {
        Screen::with_history_limit(rows, cols, MAX_HISTORY_BYTES)
    }

    fn with_history_limit(rows: u16, cols: u16, history_limit: usize) -> Screen {
        Screen {
            // Scrollback capacity 0: every row leaving the screen goes to `on_scroll` at once
            // (see the module docs).
            parser: vt100::Parser::new_with_callbacks(
                dimension(rows),
                dimension(cols),
                0,
                Recorder::new(history_limit),
            ),
            scanner: Scanner::default(),
            carry: Vec::new(),
            width_probe: vt100::Parser::new(NonZeroU16::MIN, dimension(4), 0),
            in_frame: false,
        }
    }

    /// Feeds bytes exactly as read from the PTY (may split escape sequences and UTF-8 anywhere).
    ///
    /// Alongside vt100, a scanner follows the stream byte by byte, and the bytes are handed
    /// to vt100 in pieces cut where the scanner sees:
    /// - a full clear of the main screen (`CSI 2 J`, `CSI ? 2 J`, `ESC c`, or `CSI J`
    ///   / `CSI 0 J` with the cursor at the top left, as tmux's `scroll-on-clear` counts it): just
    ///   before its final byte, the rows from the top to the last non-blank one are copied into
    ///   the history;
    /// - an erase of the scrollback (`CSI 3 J`) inside a synchronized update: the history is
    ///   erased (see the module docs);
    /// - a wide character about to be printed with one column left: vt100 moves it to the next
    ///   row but, unlike tmux and xterm, does not mark the row soft-wrapped, which would split a
    ///   streamed CJK line in two. A noncharacter (U+FDD0) is printed in the last column first; the
    ///   cursor ends where it would have, and the filler never shows in the text.
    ///
    /// A UTF-8 character cut off at the end of `bytes` is held back until the next call (vt100
    /// would not draw it before that either).
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        let input = after_carry(&mut self.carry, bytes);
        let input: &[u8] = &input;
        // `input[..fed]` has been given to vt100.
        let mut fed = 0;
        let mut next = 0;
        loop {
            // Printable ASCII needs nothing of the scanner but to be stepped over.
            next += self.scanner.ascii_text_len(&input[next..]);
            let (i, Some(&b)) = (next, input.get(next)) else {
                break;
            };
            next += 1;
            let event = self.scanner.step(i, b);
            let at = match event {
                Event::SyncedUpdate(open) => {
                    self.in_frame = open;
                    continue;
                }
                Event::None | Event::AltScreen | Event::EraseInLine(_) => continue,
                Event::Printed { c, .. } if c < FIRST_WIDE => continue,
                Event::EraseInDisplay(_) | Event::Reset => i,
                Event::Printed { start, .. } => start,
            };
            // Everything before the byte (or character) goes in first: vt100 is then at most
            // mid-sequence, so the screen is exactly as the client left it.
            if at > fed {
                self.parser.process(&input[fed..at]);
                fed = at;
            }
            match event {
                Event::EraseInDisplay(2) | Event::Reset => self.save_screen_before_clear(),
                Event::EraseInDisplay(0) if self.parser.screen().cursor_position() == (0, 0) => {
                    self.save_screen_before_clear();
                }
                Event::EraseInDisplay(3) if self.in_frame => self.erase_history(),
                Event::Printed { c, .. } => self.pad_before_wide(c),
                _ => {}
            }
        }
        let end = input.len() - self.scanner.take_incomplete_char();
        if end > fed {
            self.parser.process(&input[fed..end]);
        }
        self.carry = input[end.max(fed)..].to_vec();
    }

    /// Prints a [`WRAP_FILLER`] in the last column if `c`, about to be printed, is wide and the
    /// cursor is on the last column with nothing under it (see [`Screen::feed`]).
    fn pad_before_wide(&mut self, c: char) {
        let screen = self.parser.screen();
        let cols = screen.size().1.get();
        let (row, col) = screen.cursor_position();
        if cols < 2 || col != cols - 1 {
            return;
        }
        // With something in the last cell vt100 marks the row wrapped by itself.
        if screen
            .cell(row, col)
            .is_some_and(|cell| cell.has_contents() || cell.is_wide_continuation())
        {
            return;
        }
        if !self.draws_wide(c) {
            return;
        }
        let mut filler = [0; 4];
        self.parser
            .process(WRAP_FILLER.encode_utf8(&mut filler).as_bytes());
    }

    /// Whether vt100 draws `c` two cells wide (asked of vt100 itself, so the answer matches).
    fn draws_wide(&mut self, c: char) -> bool {
        let mut encoded = [0; 4];
        // Back to the first column of the probe's only row, cleared.
        self.width_probe.process(b"\r\x1b[K");
        self.width_probe
            .process(c.encode_utf8(&mut encoded).as_bytes());
        self.width_probe
            .screen()
            .cell(0, 0)
            .is_some_and(vt100::Cell::is_wide)
    }

    /// Copies the visible rows, from the top to the last non-blank one, into the history, as
    /// tmux does (`scroll-on-clear`) before the screen is cleared.
    fn save_screen_before_clear(&mut self) {
        let (screen, recorder) = self.parser.screen_and_callbacks_mut();
        if screen.alternate_screen() {
            return;
        }
        let mut rows = visible_rows(screen);
        let Some(last) = rows.iter().rposition(|r| !r.text.is_empty()) else {
            return;
        };
        rows.truncate(last + 1);
        if let Some(row) = rows.last_mut() {
            // The screen is blank after the clear: nothing continues this row.
            row.wrapped = false;
        }
        for row in rows {
            recorder.push(row);
        }
    }

    /// Erases the history, as a terminal does on `CSI 3 J` (the alternate screen has none).
    fn erase_history(&mut self) {
        let (screen, recorder) = self.parser.screen_and_callbacks_mut();
        if screen.alternate_screen() {
            return;
        }
        recorder.erased_rows += recorder.history.len();
        recorder.history.clear();
        recorder.history_bytes = 0;
    }

    /// Bytes a real terminal would answer to queries seen so far (DA1 `CSI c` → `CSI ? 1 ; 2 c`,
    /// OSC 11 background query → a dark background); drained on each call. The driver writes them
    /// back to the PTY.
    ///
    /// Also answered: DSR `CSI 6 n` (cursor position, `CSI row ; col R`), DSR `CSI 5 n`
    /// (`CSI 0 n`) and OSC 10 (foreground: white).
    pub(crate) fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.parser.callbacks_mut().replies)
    }

    /// Whether the client enabled bracketed paste (DEC private mode 2004): a terminal then wraps
    /// a paste in `ESC [200~` … `ESC [201~`.
    pub(crate) fn bracketed_paste(&self) -> bool {
        self.parser.screen().bracketed_paste()
    }

    /// Whether a synchronized update (DEC mode 2026) is open: the client is drawing a frame that
    /// is not complete yet (the Ink TUI draws every frame inside one).
    pub(crate) fn in_frame(&self) -> bool {
        self.in_frame
    }

    /// The window title the client set last (`OSC 0` or `OSC 2`); empty if it never set one.
    /// The Ink TUI says in it whether it is busy (see [`crate::client::is_idle`]).
    pub(crate) fn title(&self) -> &str {
        &self.parser.callbacks().title
    }

    /// Resizes the emulated terminal (the driver resizes the PTY at the same time).
    ///
    /// Shrinking pushes rows off the top into the history (through vt100's `Parser::set_size`,
    /// which reports them; `Screen::set_size` would drop them silently). Growing adds blank rows
    /// at the bottom. (A real terminal pulls scrolled-off rows back down instead; vt100 without
    /// scrollback would insert blank rows at the top, which later scroll into the history as
    /// empty lines, so its count of would-be scrollback is reset first. The history reads the same
    /// either way. While the alternate screen is up only its count can be reset, so the main
    /// screen may still gain blank rows at its top.) Changing the width truncates or pads rows;
    /// nothing is reflowed.
    pub(crate) fn resize(&mut self, rows: u16, cols: u16) {
        let (rows, cols) = (dimension(rows), dimension(cols));
        // Clears vt100's count of rows "above" the screen; its scrollback is empty (capacity 0),
        // so no row is lost.
        self.parser.screen_mut().clear_scrollback();
        self.parser.set_size(rows, cols);
    }

    /// The visible rows as plain text, one string per row, trailing blanks trimmed.
    pub(crate) fn viewport_rows(&self) -> Vec<String> {
        trimmed(visible_rows(self.parser.screen()))
    }
    /// The whole history (scrolled-off rows, then the visible rows), soft-wrapped rows joined,
    /// trailing blank rows dropped; no chrome stripping.
    pub(crate) fn history_lines(&self) -> Vec<String> {
        texts(self.numbered_lines())
    }

    /// `Screen::history_lines` with chrome stripped, as a [`Transcript`].
    ///
    /// Each line's `row` is the index of its first physical row in the whole history (rows
    /// dropped by the memory bound included), so a soft-wrapped line spans several row numbers.
    pub fn transcript(&self) -> Transcript {
        transcript_of(&self.numbered_lines())
    }

    /// Rows dropped from the start of the history because it outgrew [`MAX_HISTORY_BYTES`]
    /// (0 in any realistic session). Row numbers in a [`Transcript`] start at this value plus
    /// [`Screen::erased_rows`].
    #[cfg(test)]
    pub(crate) fn dropped_rows(&self) -> usize {
        self.parser.callbacks().dropped_rows
    }

    /// Rows the client erased from the history (`CSI 3 J` in a frame; see [`Screen::feed`]), in
    /// all. Row numbers in a [`Transcript`] count them too.
    pub(crate) fn erased_rows(&self) -> usize {
        self.parser.callbacks().erased_rows
    }

    /// Joined lines with the history index of their first physical row; trailing blank lines
    /// dropped, trailing spaces trimmed.
    fn numbered_lines(&self) -> Vec<(usize, String)> {
        let recorder = self.parser.callbacks();
        let visible = visible_rows(self.parser.screen());
        join_rows(
            recorder.dropped_rows + recorder.erased_rows,
            recorder.history.iter().chain(visible.iter()),
        )
    }
}

/// Physical rows joined into lines (a soft-wrapped row continues on the next), each with the
/// index of its first row (counted from `first`); trailing blank lines dropped, trailing spaces
/// trimmed. Shared by [`Screen`] and [`reflow::ReflowScreen`].
fn join_rows<'a>(
    first: usize,
    rows: impl IntoIterator<Item = &'a PhysicalRow>,
) -> Vec<(usize, String)> {
    let mut lines: Vec<(usize, String)> = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, row) in rows.into_iter().enumerate() {
        let (_, text) = current.get_or_insert_with(|| (first + i, String::new()));
        text.push_str(&row.text);
        if !row.wrapped {
            lines.extend(current.take());
        }
    }
    lines.extend(current);
    for (_, line) in &mut lines {
        line.truncate(line.trim_end().len());
    }
    while lines.last().is_some_and(|(_, l)| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// Rows' text with trailing blanks trimmed (a viewport).
fn trimmed(rows: Vec<PhysicalRow>) -> Vec<String> {
    rows.into_iter()
        .map(|r| r.text.trim_end().to_owned())
        .collect()
}

/// The text of numbered lines.
fn texts(lines: Vec<(usize, String)>) -> Vec<String> {
    lines.into_iter().map(|(_, l)| l).collect()
}

/// Numbered lines with chrome stripped.
fn transcript_of(lines: &[(usize, String)]) -> Transcript {
    Transcript::from_numbered(lines.iter().map(|(row, l)| (*row, l.as_str())), true)
}

/// The rows of the active screen with their wrap flags.
fn visible_rows(screen: &vt100::Screen) -> Vec<PhysicalRow> {
    let cols = screen.size().1.get();
    screen
        .rows(0, cols)
        .zip(0u16..)
        .map(|(text, i)| PhysicalRow {
            text: without_filler(text),
            wrapped: screen.row_wrapped(i),
        })
        .collect()
}

/// `bytes` after what the last feed held back (`carry`, taken): a character or sequence the end
/// of a feed cut is read again, whole, with the next.
fn after_carry<'a>(carry: &mut Vec<u8>, bytes: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
    if carry.is_empty() {
        std::borrow::Cow::Borrowed(bytes)
    } else {
        let mut joined = std::mem::take(carry);
        joined.extend_from_slice(bytes);
        std::borrow::Cow::Owned(joined)
    }
}

#[cfg(test)]
mod tests;
