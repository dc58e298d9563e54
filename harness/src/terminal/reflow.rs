//! A terminal that re-wraps rows when its width changes.
//!
//! [`ReflowScreen`]: a terminal that re-wraps soft-wrapped rows when its width changes, as real
//! terminals (tmux, VTE, kitty, WezTerm, iTerm2, alacritty, Windows Terminal) do; the harness's
//! [`Screen`](super::Screen) (vt100) only truncates or pads rows.
//!
//! Built on `alacritty_terminal` (the emulator inside the alacritty terminal, maintained with it):
//! its `Term::resize` reflows the main screen *and* its scrollback, and its grid marks soft-wrapped
//! rows (`Flags::WRAPLINE` on the last cell). It offers what the harness needs from `Screen`, with
//! the same rules where a rule is the harness's own:
//!
//! - **The whole history.** The grid's scrollback is the history: rows scrolled off the top,
//!   reflowed on every width change. Its bound is set from [`MAX_HISTORY_BYTES`] (a row costs its
//!   width in cells of `size_of::<Cell>()` bytes, 24): [`history_rows`] rows at the current width,
//!   so about 28 000 rows at 100 columns — two orders of magnitude above a session's. Past it
//!   alacritty drops the oldest rows, which are not counted (unlike `Screen::dropped_rows`);
//!   [`ReflowScreen::history_full`] says whether the bound was reached.
//! - **Clears lose nothing**, by the rule of `Screen` (tmux's `scroll-on-clear`). alacritty
//!   already scrolls the visible rows, top to the last non-blank one, into its scrollback on
//!   `CSI 2 J`; the harness does the same itself (and drops the sequence) so that a clear of a
//!   blank screen adds no blank row, and also on `CSI ? 2 J` and on `CSI J` with the cursor at the
//!   top left, which alacritty would erase. `CSI 3 J` (erase the scrollback) is honoured
//!   inside a synchronized update (a frame: the TUI's redraw after a resize) and dropped
//!   elsewhere (the classic CLI's exit), the rule of `Screen` and why. A full reset (`ESC c`) resets
//!   alacritty's grid, scrollback included, so the history is first copied out as text into an
//!   archive that precedes the grid (archived rows no longer reflow). The cut points are found by
//!   the one escape scanner ([`super::scan`]; alacritty's parser is the same `vte` 0.15 state
//!   machine), and a sequence is dropped by sending CAN (`0x18`) before its final byte, which
//!   cancels it in `vte`.
//! - **The alternate screen** is not recorded (alacritty keeps no scrollback for it). While it is
//!   up, the history is the main screen's scrolled-off rows as they were when it was entered
//!   (alacritty does not expose the hidden main grid, so they are copied at `CSI ? 1049 h`), then
//!   the alternate screen's rows — what `Screen::history_lines` shows too.
//! - **Erasing a whole row** (`CSI 2 K`, or `CSI K` from the first column) ends the line above
//!   it, as in tmux (`grid_clear_lines` drops the wrap flag of the row above): alacritty would
//!   keep that row soft-wrapped, and when the client erases and rewrites the rows of its screen
//!   (the classic CLI after a resize) their new text would be joined to the unrelated row above.
//! - One alacritty deviation is corrected: `CSI 1 J` (erase above) with the cursor on the second
//!   row leaves the first row (alacritty 0.26 clears rows above only from the third row on).
//! - **Synchronized updates** (`CSI ? 2026 h`) are not buffered: alacritty would hold the bytes
//!   until the end of the update or a wall-clock timeout, so what the screen shows would depend on
//!   timing. Drawn as they come, as vt100 draws them.
//! - **Queries** are answered by alacritty (`Event::PtyWrite`): DA1 (`CSI ? 6 c`, where vt100's
//!   screen says `CSI ? 1 ; 2 c`), DA2, DSR 5 and 6 (cursor position), DECRQM, XTVERSION; colour
//!   queries (`OSC 10/11/12 ; ?`) are answered here as `Screen` answers them (white on black).
//! - **Measured against tmux 3.3a** (`capture-pane -p -J -S -`, `tests/tmux.rs`): the harness's
//!   client-shaped streams give tmux's history line for line; a client-shaped recording through
//!   six resizes (narrower and wider) the same text, with two lines that tmux 3.3 breaks or joins
//!   differently (a wide character that did not fit when re-wrapping; a row exactly as wide as the
//!   terminal); the real client's recordings (`fixtures/iot-0.22.2.post1-reflow-resized`) the
//!   resumed session line for line, and the first session but one line: narrowed from 100 to 80
//!   columns, tmux keeps one more row of a reply above the screen, which the client then erases.
//!   vt100 differs from tmux on 27 lines of the resumed session.
//! - Row numbers in [`ReflowScreen::transcript`] are those of the layout at the current width
//!   (reflowing renumbers them), archived rows first.

use std::fmt;
use std::sync::{Arc, Mutex};

use alacritty_terminal::event::{Event as TermEvent, EventListener};
use alacritty_terminal::grid::{Dimensions, GridCell, Row};
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi::{NamedColor, Processor, Rgb, Timeout};

use super::scan::{Event, Scanner};
use super::{join_rows, texts, transcript_of, trimmed, PhysicalRow, Transcript, MAX_HISTORY_BYTES};

/// The history bound in rows at `cols` columns: [`MAX_HISTORY_BYTES`] worth of cells.
pub(crate) fn history_rows(cols: u16) -> usize {
    MAX_HISTORY_BYTES / (usize::from(cols.max(1)) * std::mem::size_of::<Cell>())
}

/// Answers to queries, collected from alacritty's events until the driver takes them.
#[derive(Clone, Default)]
struct Replies(Arc<Mutex<Vec<u8>>>);

impl EventListener for Replies {
    fn send_event(&self, event: TermEvent) {
        let text = match event {
            TermEvent::PtyWrite(text) => text,
            TermEvent::ColorRequest(index, format) => {
                let white = Rgb {
                    r: 0xff,
                    g: 0xff,
                    b: 0xff,
                };
                match index {
                    i if i == NamedColor::Background as usize => format(Rgb { r: 0, g: 0, b: 0 }),
                    i if i == NamedColor::Foreground as usize
                        || i == NamedColor::Cursor as usize =>
                    {
                        format(white)
                    }
                    _ => return,
                }
            }
            _ => return,
        };
        // A poisoned lock only means another thread panicked mid-push; the bytes are still ours.
        let mut replies = self.0.lock().unwrap_or_else(|e| e.into_inner());
        replies.extend_from_slice(text.as_bytes());
    }
}

/// A synchronized-update timeout that never pends: `vte` then draws every byte as it comes
/// instead of buffering an update until its end or a wall-clock timeout.
#[derive(Default)]
struct NoSync;

impl Timeout for NoSync {
    fn set_timeout(&mut self, _: std::time::Duration) {}
    fn clear_timeout(&mut self) {}
    fn pending_timeout(&self) -> bool {
        false
    }
}

/// A size for alacritty (`Dimensions`).
#[derive(Clone, Copy)]
struct Cells {
    rows: usize,
    cols: usize,
}

impl Dimensions for Cells {
    fn total_lines(&self) -> usize {
        self.rows
    }
    fn screen_lines(&self) -> usize {
        self.rows
    }
    fn columns(&self) -> usize {
        self.cols
    }
}

/// The narrowest screen: alacritty panics drawing a wide character one column wide (its own
/// window is never that narrow).
const MIN_COLS: u16 = 2;

impl Cells {
    fn new(rows: u16, cols: u16) -> Cells {
        Cells {
            rows: usize::from(rows.max(1)),
            cols: usize::from(cols.max(MIN_COLS)),
        }
    }
}

/// CAN: cancels the escape sequence in progress (`vte`'s "anywhere" transition).
const CANCEL: &[u8] = b"\x18";

/// A terminal emulator that reflows on resize and keeps the whole history (see the module docs).
pub struct ReflowScreen {
    term: Term<Replies>,
    parser: Processor<NoSync>,
    scanner: Scanner,
    /// The start of a UTF-8 character cut by the end of the last feed, given to neither the parser
    /// nor the scanner yet ([`Scanner::take_incomplete_char`]): vte decodes a character split
    /// across two `advance` calls differently from a whole one when it is a C1 control (found by
    /// the chunking property), so a character reaches it whole.
    carry: Vec<u8>,
    replies: Replies,
    /// History rows copied out before a full reset erased alacritty's scrollback, oldest first.
    archive: Vec<PhysicalRow>,
    /// The main screen's scrolled-off rows when the alternate screen was entered.
    main_history: Vec<PhysicalRow>,
    /// Whether a synchronized update (DEC mode 2026) is open: the client is drawing a frame.
    in_frame: bool,
    /// Rows the client erased from the history (`CSI 3 J` in a frame).
    erased_rows: usize,
}

impl fmt::Debug for ReflowScreen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReflowScreen")
            .field("rows", &self.term.screen_lines())
            .field("cols", &self.term.columns())
            .field("history_rows", &self.term.history_size())
            .field("archived_rows", &self.archive.len())
            .finish_non_exhaustive()
    }
}

impl ReflowScreen {
    /// A new, empty screen of `rows` × `cols` cells (a zero dimension is taken as 1, and fewer
    /// than 2 columns as 2).
    pub(crate) fn new(rows: u16, cols: u16) -> ReflowScreen {
        let replies = Replies::default();
        let config = Config {
            scrolling_history: history_rows(cols),
            ..Config::default()
        };
        ReflowScreen {
            term: Term::new(config, &Cells::new(rows, cols), replies.clone()),
            parser: Processor::new(),
            scanner: Scanner::default(),
            carry: Vec::new(),
            replies,
            archive: Vec::new(),
            main_history: Vec::new(),
            in_frame: false,
            erased_rows: 0,
        }
    }

    /// Feeds bytes exactly as read from the PTY (may split escape sequences and UTF-8 anywhere:
    /// alacritty's parser and the scanner both keep their state between calls).
    ///
    /// The bytes go to alacritty in pieces cut just before the final byte of a clear, a full reset
    /// or the switch to the alternate screen, where the history rules of the module docs apply.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        // As `Screen::feed`: a character cut by the end of the last feed is scanned again, whole,
        // with this one.
        let bytes = super::after_carry(&mut self.carry, bytes);
        let bytes: &[u8] = &bytes;
        // `bytes[..fed]` has been given to alacritty (or dropped).
        let mut fed = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let event = self.scanner.step(i, b);
            if let Event::SyncedUpdate(open) = event {
                self.in_frame = open;
                continue;
            }
            if !matches!(
                event,
                Event::EraseInDisplay(0..=3)
                    | Event::EraseInLine(0 | 2)
                    | Event::Reset
                    | Event::AltScreen
            ) {
                continue;
            }
            self.parser.advance(&mut self.term, &bytes[fed..i]);
            fed = i;
            let alternate = self.term.mode().contains(TermMode::ALT_SCREEN);
            match event {
                // Erase the scrollback: done here inside a frame (the archive goes too), else
                // dropped (see `Screen`'s rule).
                Event::EraseInDisplay(3) => {
                    if self.in_frame && !alternate {
                        self.erased_rows += self.archive.len() + self.term.grid().history_size();
                        self.archive.clear();
                        self.term.grid_mut().clear_history();
                    }
                    self.drop_sequence(&mut fed);
                }
                Event::EraseInDisplay(2) if !alternate => {
                    self.save_viewport();
                    self.drop_sequence(&mut fed);
                }
                Event::EraseInDisplay(0) if !alternate && self.cursor_at_home() => {
                    self.save_viewport();
                }
                // alacritty erases the rows above the cursor's only from the third row on.
                Event::EraseInDisplay(1) if self.term.grid().cursor.point.line == Line(1) => {
                    self.term.grid_mut().reset_region(..Line(1));
                }
                Event::EraseInLine(2) => self.end_line_above(),
                Event::EraseInLine(0) if self.term.grid().cursor.point.column == Column(0) => {
                    self.end_line_above();
                }
                Event::Reset => self.archive_history(alternate),
                Event::AltScreen if !alternate => {
                    self.main_history = self.rows_above();
                }
                _ => {}
            }
        }
        let end = bytes.len() - self.scanner.take_incomplete_char();
        if end > fed {
            self.parser.advance(&mut self.term, &bytes[fed..end]);
        }
        self.carry = bytes[end.max(fed)..].to_vec();
    }

    /// A whole row is about to be erased: the row above it no longer continues into it (tmux's
    /// rule, `grid_clear_lines`; alacritty keeps the wrap flag, so a row the client erases and
    /// rewrites would be joined to unrelated text).
    fn end_line_above(&mut self) {
        let line: Line = self.term.grid().cursor.point.line - 1i32;
        if line.0 < -(self.term.grid().history_size() as i32) {
            return;
        }
        let last = self.term.last_column();
        self.term.grid_mut()[line][last]
            .flags
            .remove(Flags::WRAPLINE);
    }

    /// Cancels the sequence whose final byte is at `fed` and skips that byte.
    fn drop_sequence(&mut self, fed: &mut usize) {
        self.parser.advance(&mut self.term, CANCEL);
        *fed += 1;
    }

    fn cursor_at_home(&self) -> bool {
        let point = self.term.grid().cursor.point;
        point.line == Line(0) && point.column == Column(0)
    }

    /// Scrolls the visible rows, from the top to the last non-blank one, into the scrollback and
    /// blanks the screen; nothing when the screen is blank.
    fn save_viewport(&mut self) {
        let grid = self.term.grid();
        let blank = (0..grid.screen_lines()).all(|line| {
            grid[Line(line as i32)]
                .into_iter()
                .all(|cell| cell.is_empty())
        });
        if !blank {
            self.term.grid_mut().clear_viewport();
        }
    }

    /// Copies the history out before a full reset erases it: on the main screen its scrolled-off
    /// rows and its visible rows down to the last non-blank one; on the alternate screen the main
    /// screen's rows saved when it was entered.
    fn archive_history(&mut self, alternate: bool) {
        if alternate {
            self.archive.append(&mut self.main_history);
            return;
        }
        self.save_viewport();
        let rows = self.rows_above();
        self.archive.extend(rows);
    }

    /// The active grid's rows above the screen, oldest first.
    fn rows_above(&self) -> Vec<PhysicalRow> {
        let grid = self.term.grid();
        (1..=grid.history_size())
            .rev()
            .map(|back| physical_row(&grid[Line(-(back as i32))]))
            .collect()
    }

    /// The active grid's visible rows.
    fn visible(&self) -> Vec<PhysicalRow> {
        let grid = self.term.grid();
        (0..grid.screen_lines())
            .map(|line| physical_row(&grid[Line(line as i32)]))
            .collect()
    }

    /// Bytes a real terminal would answer to queries seen so far (see the module docs); drained
    /// on each call. The driver writes them back to the PTY.
    pub(crate) fn take_replies(&mut self) -> Vec<u8> {
        let mut replies = self.replies.0.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *replies)
    }

    /// Resizes the terminal: alacritty re-wraps soft-wrapped rows, in the scrollback too, to the
    /// new width; shrinking the height pushes rows into the scrollback and growing pulls them back
    /// (as tmux does). The history bound follows the width ([`history_rows`]).
    pub(crate) fn resize(&mut self, rows: u16, cols: u16) {
        self.term.resize(Cells::new(rows, cols));
        let config = Config {
            scrolling_history: history_rows(cols),
            ..Config::default()
        };
        // (`set_options` also reports the title, which is not a reply.)
        self.term.set_options(config);
    }

    /// The visible rows as plain text, one string per row, trailing blanks trimmed.
    pub(crate) fn viewport_rows(&self) -> Vec<String> {
        trimmed(self.visible())
    }

    /// The whole history (archived rows, rows above the screen, then the visible rows),
    /// soft-wrapped rows joined, trailing blank rows dropped; no chrome stripping.
    pub fn history_lines(&self) -> Vec<String> {
        texts(self.numbered_lines())
    }

    /// [`ReflowScreen::history_lines`] with chrome stripped, as a [`Transcript`] (the same
    /// stripping as [`Screen::transcript`](super::Screen::transcript)).
    pub fn transcript(&self) -> Transcript {
        transcript_of(&self.numbered_lines())
    }

    /// Rows the client erased from the history (`CSI 3 J` in a frame, the rule of
    /// [`Screen`](super::Screen)), in all. Row numbers in a [`Transcript`] count them too.
    pub(crate) fn erased_rows(&self) -> usize {
        self.erased_rows
    }

    /// Whether the scrollback reached its bound ([`history_rows`]), so that its oldest rows may
    /// have been dropped (never in a realistic session).
    #[cfg(test)]
    pub(crate) fn history_full(&self) -> bool {
        let grid = self.term.grid();
        !self.term.mode().contains(TermMode::ALT_SCREEN)
            && grid.history_size() >= history_rows(grid.columns() as u16)
    }

    fn numbered_lines(&self) -> Vec<(usize, String)> {
        let main_history = if self.term.mode().contains(TermMode::ALT_SCREEN) {
            self.main_history.clone()
        } else {
            self.rows_above()
        };
        let visible = self.visible();
        join_rows(
            self.erased_rows,
            self.archive
                .iter()
                .chain(main_history.iter())
                .chain(visible.iter()),
        )
    }
}

/// One grid row as text: each character once (the spacer cells of wide characters left out),
/// with its combining characters; whether it continues on the next row. A row that does not wrap
/// loses its trailing blanks (alacritty cannot tell printed spaces from empty cells; a wrapped
/// row was written up to its last column, so its spaces are kept).
fn physical_row(row: &Row<Cell>) -> PhysicalRow {
    let mut text = String::new();
    let mut wrapped = false;
    for cell in row {
        wrapped = cell.flags.contains(Flags::WRAPLINE);
        if cell
            .flags
            .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
        {
            continue;
        }
        text.push(cell.c);
        if let Some(marks) = cell.zerowidth() {
            text.extend(marks);
        }
    }
    if !wrapped {
        text.truncate(text.trim_end_matches(' ').len());
    }
    PhysicalRow { text, wrapped }
}
