//! Stage `screen`: a `vt100` terminal emulator that keeps the **whole** rendered history.
//!
//! Input: the raw bytes the client wrote to its PTY (fed chunk by chunk as they arrive) and resizes.
//! Output: the viewport as text (for the driver's waits) and a [`Transcript`]: every row that was ever
//! drawn — rows that scrolled off the top included — with soft-wrapped rows joined and UI chrome
//! (panel borders, rules, the prompt) stripped, each line keeping its row number in the history.
//!
//! How the history is kept:
//! - The `vt100` parser runs with a scrollback capacity of **0**. With no scrollback of its own,
//!   vt100 hands every row leaving the top of the main screen to [`vt100::Callbacks::on_scroll`]
//!   at once, and we append it to our own list. That list is therefore always "everything above the
//!   screen", in order, and nothing the client sends can shrink it: `CSI 3 J` (erase scrollback,
//!   sent by the client at exit) has nothing to erase in vt100.
//! - `CSI 2 J` (and `CSI ? 2 J`, the full reset `ESC c`, and `CSI J` with the cursor at the top
//!   left) blank the visible rows without scrolling them, so xterm loses them. The harness wants
//!   the whole history, so just before such a clear takes effect on the main screen,
//!   [`Screen::feed`] copies the rows from the top to the last non-blank one into the history.
//!   This is what tmux does (`scroll-on-clear`, on by default), and avt (asciinema's emulator) on
//!   `2J`; tmux is the emulator the harness cross-checks against. To see the clear before vt100
//!   acts on it, a small scanner mirroring vt100's `vte` state machine follows the bytes; its
//!   state survives between calls, so a sequence split across reads is seen like a whole one.
//!   `CSI J` from anywhere else (prompt_toolkit redrawing its input box) is not a clear.
//! - The alternate screen is a separate canvas that real terminals never put in scrollback (the Ink
//!   TUI draws its frames there): rows scrolling off it, and clears on it, are not recorded. While
//!   it is active its current frame is what [`Screen::history_lines`] shows after the main history.
//! - Rows leaving a scroll region that does not start at the top row vanish, as in a real
//!   terminal. (The classic CLI uses no scroll regions.)
//! - Wide (CJK) characters occupy two cells; the text produced has each of them once, with no
//!   padding. One vt100 quirk is corrected: a wide character that does not fit in the last column
//!   moves to the next row without the row being marked soft-wrapped (tmux and xterm mark it),
//!   which would split a streamed CJK line; see [`Screen::feed`].
//! - Memory is bounded: past [`MAX_HISTORY_BYTES`] the oldest rows are dropped and counted
//!   ([`Screen::dropped_rows`]), so row numbers stay absolute.

use std::collections::VecDeque;
use std::fmt;
use std::num::NonZeroU16;

use vt100::capture::{basic_formatted_to_plain, BasicFormattedCaptureState, RowContents};

/// Upper bound on the memory the history may use (text bytes plus a per-row overhead). A whole
/// session is 30–140 KB of output; this only stops absurd inputs from exhausting memory.
pub const MAX_HISTORY_BYTES: usize = 64 << 20;

/// Bytes charged per history row on top of its text, so that a flood of empty rows is bounded too.
const ROW_OVERHEAD_BYTES: usize = std::mem::size_of::<PhysicalRow>();

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
    /// What is chrome:
    /// - rules: lines made of box-drawing characters only (`────`, `╰───╯`), or a rule with a title
    ///   embedded (`╭─ Hermes ────╮`, `─── Title ───`): dropped entirely, title included;
    /// - panel borders: a leading `│`/`┃`/`║` (and one space of padding) and, on such a row, the
    ///   trailing one with its padding: removed, the text inside kept;
    /// - the prompt marker `❯` at the start of a line: removed with one space; any text typed after
    ///   it is kept (it is on screen), a bare prompt line is dropped.
    ///
    /// Blank lines are kept as paragraph breaks, but runs of them collapse to one and none are kept
    /// at the start or the end.
    pub fn from_history_lines(lines: &[String]) -> Transcript {
        Transcript::from_numbered(lines.iter().enumerate().map(|(i, l)| (i, l.as_str())))
    }

    /// Builds a transcript from `(row, text)` pairs in display order.
    fn from_numbered<'a>(lines: impl IntoIterator<Item = (usize, &'a str)>) -> Transcript {
        let mut out: Vec<TranscriptLine> = Vec::new();
        for (row, line) in lines {
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

/// The client's status bar (` ☤ fake-model │ 12.2K/131.1K … │ 9% │ ◷ … ─ Title`): model, context
/// use, timers and the session title. It is chrome, and its title may repeat a conversation word.
fn is_status_bar(line: &str) -> bool {
    line.trim_start().starts_with('☤') && line.contains('│')
}

/// Strips UI chrome from one history line: `None` if the line is chrome only (a rule, a bare
/// prompt), else the text that remains (possibly empty: a blank line or a blank panel row).
///
/// Borders are peeled repeatedly so that a panel nested in a panel is handled too.
fn strip_chrome(line: &str) -> Option<String> {
    let mut text = line.trim_end();
    if is_status_bar(text) {
        return None;
    }
    // A few levels are plenty: Rich nests panels rarely and never deeply.
    for _ in 0..4 {
        if is_rule(text) {
            return None;
        }
        match strip_vertical_borders(text) {
            Some(inner) => text = inner,
            None => break,
        }
    }
    if is_rule(text) {
        return None;
    }
    if let Some(rest) = text.trim_start().strip_prefix(PROMPT) {
        // The input box: the marker is chrome, text typed after it is legitimately on screen.
        let typed = rest.strip_prefix(' ').unwrap_or(rest).trim_end();
        if typed.trim().is_empty() {
            return None;
        }
        return Some(typed.to_owned());
    }
    Some(text.to_owned())
}

/// The classic CLI's prompt marker (prompt_toolkit input box).
const PROMPT: char = '❯';

/// Box-drawing characters that draw horizontal lines.
fn is_horizontal(c: char) -> bool {
    "─━═╌╍┄┅┈┉╴╶╸╺╼╾".contains(c)
}

/// Box-drawing characters that draw vertical lines (panel sides).
fn is_vertical(c: char) -> bool {
    "│┃║╎╏┆┇┊┋".contains(c)
}

/// Any character of the Unicode "Box Drawing" block (corners, tees, lines).
fn is_box(c: char) -> bool {
    ('\u{2500}'..='\u{257f}').contains(&c)
}

/// Whether `line` is a rule: a panel's top/bottom border or a horizontal rule, possibly with a
/// title embedded (`╭─ ☤ Hermes ─────╮`, `──── Title ────`).
///
/// It must start and end with a non-vertical box-drawing character, and either hold nothing but
/// box-drawing characters and spaces, or end with at least three horizontal strokes — text merely
/// quoted between two dashes (`─ a ─`) is not a rule.
fn is_rule(line: &str) -> bool {
    let t = line.trim();
    let (Some(first), Some(last)) = (t.chars().next(), t.chars().last()) else {
        return false;
    };
    if !is_box(first) || is_vertical(first) || !is_box(last) || is_vertical(last) {
        return false;
    }
    if t.chars().all(|c| is_box(c) || c == ' ') {
        return true;
    }
    let leading_stroke = t.chars().take_while(|&c| is_box(c)).any(is_horizontal);
    let trailing_strokes = t
        .chars()
        .rev()
        .take_while(|&c| is_box(c))
        .filter(|&c| is_horizontal(c))
        .count();
    leading_stroke && trailing_strokes >= 3
}

/// Removes a panel's side borders: a leading vertical stroke (after any indentation) with one
/// space of padding, and then a trailing vertical stroke with the padding before it. `None` if the
/// line does not start with a vertical stroke.
fn strip_vertical_borders(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix(is_vertical)?;
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    let rest = rest.trim_end();
    // Only a row that opened with a border loses its closing one: a `│` ending ordinary text is
    // left alone.
    let rest = rest.strip_suffix(is_vertical).map_or(rest, str::trim_end);
    Some(rest)
}

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
    /// Answers to queries, not yet taken by the driver.
    replies: Vec<u8>,
}

impl Recorder {
    fn new(history_limit: usize) -> Recorder {
        Recorder {
            history: VecDeque::new(),
            history_bytes: 0,
            history_limit,
            dropped_rows: 0,
            replies: Vec::new(),
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

/// A `fmt::Write` that records whether the first thing written is a newline, then stops the
/// writer. Used to read a scrolled row's wrap flag, which `RowContents` only exposes through the
/// newline it writes before the *next* row.
#[derive(Default)]
struct NewlineProbe {
    starts_with_newline: bool,
}

impl fmt::Write for NewlineProbe {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.starts_with_newline = s.starts_with('\n');
        Err(fmt::Error)
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
        let mut formatted = String::new();
        let mut state = BasicFormattedCaptureState::new();
        // Writing into a String cannot fail.
        let _ = contents.write_formatted_basic(&mut formatted, &mut state);
        // After a row, the capture state remembers "newline pending" iff the row was not
        // wrapped; writing the row again shows whether that newline comes first.
        let mut probe = NewlineProbe::default();
        let _ = contents.write_formatted_basic(&mut probe, &mut state);
        let text = without_filler(basic_formatted_to_plain(&formatted).collect());
        self.push(PhysicalRow {
            text,
            wrapped: !probe.starts_with_newline,
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

/// What the [`Scanner`] reports about the byte it was just given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    /// Nothing of interest.
    None,
    /// This byte is the final byte of an erase in display (`CSI J`, or `CSI ? J`, which vt100
    /// treats alike) with this mode: the screen is still intact before the byte.
    EraseInDisplay(u16),
    /// This byte is the final byte of a full reset (`ESC c`).
    Reset,
    /// This byte completes a printed character at least U+1100 (the first that can be wide),
    /// whose first byte is at `start` (index in the scanned input).
    Printed { start: usize, c: char },
}

/// Where the [`Scanner`] is; mirrors the `vte` 0.15 state machine (the parser inside vt100)
/// closely enough to see erases, resets and printed characters exactly where vt100 does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum ScanState {
    /// Printable text; may be inside a UTF-8 sequence.
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and an intermediate byte: the final byte does not make a reset.
    EscapeIntermediate,
    /// Inside a CSI sequence.
    Csi(CsiScan),
    /// Inside an OSC string: ends at BEL (or ESC, CAN, SUB, like every state).
    Osc,
    /// A DCS sequence before its final byte.
    DcsHead(CsiScan),
    /// A DCS string: ends at the 8-bit ST byte (or ESC, CAN, SUB).
    DcsPassthrough,
    /// SOS, PM or APC string: ends only at ESC, CAN or SUB.
    SosPmApc,
}

/// What the scanner remembers of a CSI sequence: only what vt100 reads to pick the `ED` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct CsiScan {
    phase: CsiPhase,
    /// First collected byte (private marker like `?`, or intermediate), as vt100's `i1`.
    first_intermediate: Option<u8>,
    /// Value of the first parameter's first sub-parameter, saturating like `vte`.
    first_param: u16,
    /// Whether the first parameter is complete (a `;` or `:` was seen).
    first_param_done: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum CsiPhase {
    #[default]
    Entry,
    Param,
    Intermediate,
    Ignore,
}

/// A UTF-8 sequence being decoded in the ground state.
#[derive(Debug, Clone, Copy, Default)]
struct Utf8Partial {
    bytes: [u8; 4],
    len: usize,
    need: usize,
    start: usize,
}

/// Follows the byte stream alongside vt100 (see [`Event`]). Its state survives between
/// [`Screen::feed`] calls, so sequences split across reads are seen like whole ones.
#[derive(Debug, Clone, Copy, Default)]
struct Scanner {
    state: ScanState,
    utf8: Utf8Partial,
}

impl Scanner {
    /// Advances by the byte `b` found at index `i` of the scanned input.
    fn step(&mut self, i: usize, b: u8) -> Event {
        use ScanState::*;
        // "Anywhere" transitions of the vte state machine: ESC starts a new escape sequence
        // and CAN / SUB cancel, whatever the state (also in the middle of a UTF-8 sequence).
        match b {
            0x1b => {
                self.utf8.len = 0;
                self.state = Escape;
                return Event::None;
            }
            0x18 | 0x1a => {
                self.utf8.len = 0;
                self.state = Ground;
                return Event::None;
            }
            _ => {}
        }
        match self.state {
            Ground => self.ground(i, b),
            Escape => {
                self.state = match b {
                    // C0 controls are executed without leaving the state; DEL and 8-bit bytes
                    // are ignored.
                    0x00..=0x1f | 0x7f..=0xff => Escape,
                    0x20..=0x2f => EscapeIntermediate,
                    b'[' => Csi(CsiScan::default()),
                    b']' => Osc,
                    b'P' => DcsHead(CsiScan::default()),
                    b'X' | b'^' | b'_' => SosPmApc,
                    _ => Ground,
                };
                if b == b'c' {
                    Event::Reset
                } else {
                    Event::None
                }
            }
            EscapeIntermediate => {
                if (0x30..=0x7e).contains(&b) {
                    self.state = Ground;
                }
                Event::None
            }
            Csi(mut csi) => {
                let event = csi.step(b);
                self.state = if (0x40..=0x7e).contains(&b) {
                    Ground
                } else {
                    Csi(csi)
                };
                event
            }
            Osc => {
                if b == 0x07 {
                    self.state = Ground;
                }
                Event::None
            }
            DcsHead(mut head) => {
                // The head of a DCS moves through the same phases as a CSI; a malformed one
                // (`Ignore`) then waits for ESC, CAN or SUB, a final byte starts the string.
                if head.phase != CsiPhase::Ignore && (0x40..=0x7e).contains(&b) {
                    self.state = DcsPassthrough;
                } else {
                    head.step(b);
                    self.state = DcsHead(head);
                }
                Event::None
            }
            DcsPassthrough => {
                if b == 0x9c {
                    self.state = Ground;
                }
                Event::None
            }
            SosPmApc => Event::None,
        }
    }

    /// UTF-8 decoding with the boundaries `str::from_utf8` (and so vte) finds: a byte that
    /// cannot continue the sequence abandons it and is looked at afresh.
    fn ground(&mut self, i: usize, b: u8) -> Event {
        let u = &mut self.utf8;
        if u.len > 0 {
            if b & 0xc0 == 0x80 {
                u.bytes[u.len] = b;
                u.len += 1;
                if u.len < u.need {
                    return Event::None;
                }
                let (len, start) = (u.len, u.start);
                u.len = 0;
                return match std::str::from_utf8(&u.bytes[..len])
                    .ok()
                    .and_then(|s| s.chars().next())
                {
                    Some(c) if c >= '\u{1100}' => Event::Printed { start, c },
                    _ => Event::None,
                };
            }
            u.len = 0;
        }
        let need = match b {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => return Event::None,
        };
        *u = Utf8Partial {
            bytes: [b, 0, 0, 0],
            len: 1,
            need,
            start: i,
        };
        Event::None
    }

    /// Bytes at the end of the input that start a character not yet complete; the scanner
    /// forgets them (they will be scanned again, whole, with the next input).
    fn take_incomplete_char(&mut self) -> usize {
        if self.state == ScanState::Ground {
            std::mem::take(&mut self.utf8.len)
        } else {
            0
        }
    }
}

impl CsiScan {
    /// Advances within a CSI sequence (ESC, CAN and SUB were handled by the caller).
    fn step(&mut self, b: u8) -> Event {
        match (self.phase, b) {
            // Executed controls, DEL and 8-bit bytes leave the sequence as it is.
            (_, 0x00..=0x1f | 0x7f..=0xff) => Event::None,
            (CsiPhase::Ignore, 0x40..=0x7e) => Event::None,
            (_, b'J') if matches!(self.first_intermediate, None | Some(b'?')) => {
                Event::EraseInDisplay(self.first_param)
            }
            (_, 0x40..=0x7e) => Event::None,
            (CsiPhase::Ignore, _) => Event::None,
            (_, 0x20..=0x2f) => {
                self.collect(b);
                self.phase = CsiPhase::Intermediate;
                Event::None
            }
            (CsiPhase::Intermediate, _) => {
                self.phase = CsiPhase::Ignore;
                Event::None
            }
            (CsiPhase::Entry, 0x3c..=0x3f) => {
                self.collect(b);
                self.phase = CsiPhase::Param;
                Event::None
            }
            (CsiPhase::Param, 0x3c..=0x3f) => {
                self.phase = CsiPhase::Ignore;
                Event::None
            }
            (_, b'0'..=b'9') => {
                if !self.first_param_done {
                    self.first_param = self
                        .first_param
                        .saturating_mul(10)
                        .saturating_add(u16::from(b - b'0'));
                }
                self.phase = CsiPhase::Param;
                Event::None
            }
            // `:` and `;` end the first (sub-)parameter.
            _ => {
                self.first_param_done = true;
                self.phase = CsiPhase::Param;
                Event::None
            }
        }
    }

    fn collect(&mut self, b: u8) {
        if self.first_intermediate.is_none() {
            self.first_intermediate = Some(b);
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

/// A terminal emulator of a fixed size that records every row leaving the viewport.
/// Background of the pictures ([`Screen::svg`]) where the client sets none.
const DEFAULT_BG: &str = "#111111";

/// Foreground where the client sets none.
const DEFAULT_FG: &str = "#dddddd";

/// How one cell is drawn in a picture.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CellStyle {
    fg: String,
    bg: String,
    bold: bool,
}

impl CellStyle {
    fn of(cell: &vt100::Cell) -> CellStyle {
        let (mut fg, mut bg) = (
            css_color(cell.fgcolor(), DEFAULT_FG),
            css_color(cell.bgcolor(), DEFAULT_BG),
        );
        if cell.inverse() {
            std::mem::swap(&mut fg, &mut bg);
        }
        CellStyle {
            fg,
            bg,
            bold: cell.bold(),
        }
    }
}

/// A terminal colour as CSS: the xterm palette for indexed colours.
fn css_color(color: vt100::Color, default: &str) -> String {
    const BASE: [&str; 16] = [
        "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
        "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
    ];
    match color {
        vt100::Color::Default => default.to_owned(),
        vt100::Color::Idx(i) if i < 16 => BASE[usize::from(i)].to_owned(),
        vt100::Color::Idx(i) if i < 232 => {
            let i = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            format!(
                "#{:02x}{:02x}{:02x}",
                level(i / 36),
                level((i / 6) % 6),
                level(i % 6)
            )
        }
        vt100::Color::Idx(i) => {
            let v = 8 + 10 * (i - 232);
            format!("#{v:02x}{v:02x}{v:02x}")
        }
        vt100::Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
    }
}

pub struct Screen {
    parser: vt100::Parser<Recorder>,
    scanner: Scanner,
    /// The start of a UTF-8 character cut off at the end of the last input, held back so that
    /// every character reaches vt100 in one piece (see [`Screen::feed`]).
    carry: Vec<u8>,
    /// A one-row vt100 used only to learn whether vt100 draws a character two cells wide.
    width_probe: vt100::Parser,
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
        }
    }

    /// Feeds bytes exactly as read from the PTY (may split escape sequences and UTF-8 anywhere).
    ///
    /// Alongside vt100, a scanner follows the stream byte by byte, and the bytes are handed
    /// to vt100 in pieces cut where the scanner sees:
    /// - a full clear of the main screen (`CSI 2 J`, `CSI ? 2 J`, `ESC c`, or `CSI J` / `CSI 0 J`
    ///   with the cursor at the top left, as tmux's `scroll-on-clear` counts it): just before
    ///   its final byte, the rows from the top to the last non-blank one are copied into the
    ///   history;
    /// - a wide character about to be printed with one column left: vt100 moves it to the next
    ///   row but, unlike tmux and xterm, does not mark the row soft-wrapped, which would split a
    ///   streamed CJK line in two. A noncharacter (U+FDD0) is printed in the last column first; the
    ///   cursor ends where it would have, and the filler never shows in the text.
    ///
    /// A UTF-8 character cut off at the end of `bytes` is held back until the next call (vt100
    /// would not draw it before that either).
    pub fn feed(&mut self, bytes: &[u8]) {
        let joined;
        let input: &[u8] = if self.carry.is_empty() {
            bytes
        } else {
            let mut carry = std::mem::take(&mut self.carry);
            carry.extend_from_slice(bytes);
            joined = carry;
            &joined
        };
        // `input[..fed]` has been given to vt100.
        let mut fed = 0;
        for (i, &b) in input.iter().enumerate() {
            let event = self.scanner.step(i, b);
            let at = match event {
                Event::None => continue,
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

    /// Bytes a real terminal would answer to queries seen so far (DA1 `CSI c` → `CSI ? 1 ; 2 c`,
    /// OSC 11 background query → a dark background); drained on each call. The driver writes them
    /// back to the PTY.
    ///
    /// Also answered: DSR `CSI 6 n` (cursor position, `CSI row ; col R`), DSR `CSI 5 n`
    /// (`CSI 0 n`) and OSC 10 (foreground: white).
    pub fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.parser.callbacks_mut().replies)
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
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let (rows, cols) = (dimension(rows), dimension(cols));
        // Clears vt100's count of rows "above" the screen; its scrollback is empty (capacity 0),
        // so no row is lost.
        self.parser.screen_mut().clear_scrollback();
        self.parser.set_size(rows, cols);
    }

    /// The visible rows as plain text, one string per row, trailing blanks trimmed.
    pub fn viewport_rows(&self) -> Vec<String> {
        visible_rows(self.parser.screen())
            .into_iter()
            .map(|r| r.text.trim_end().to_owned())
            .collect()
    }

    /// The visible screen as an SVG picture with its colours (foreground, background, bold,
    /// inverse): what the terminal showed at this moment, small enough to paste into an issue.
    /// `title` names it (escaped).
    pub fn svg(&self, title: &str) -> String {
        use fmt::Write as _;
        const CELL_W: f64 = 8.4;
        const CELL_H: usize = 17;
        let screen = self.parser.screen();
        let (rows, cols) = screen.size();
        let (rows, cols): (u16, u16) = (rows.into(), cols.into());
        let width = (f64::from(cols) * CELL_W).ceil() as usize + 16;
        let height = usize::from(rows) * CELL_H + 16;
        let esc = |t: &str| {
            t.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
        };
        let mut o = String::new();
        let _ = writeln!(
            o,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
             viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{t}\">\n<title>{t}</title>\n\
             <rect width=\"100%\" height=\"100%\" fill=\"{}\"/>\n\
             <g font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"14\" \
             xml:space=\"preserve\">",
            DEFAULT_BG,
            t = esc(title)
        );
        for row in 0..rows {
            let y = 8 + usize::from(row) * CELL_H;
            // Runs of cells with one style: a background rectangle, then the text.
            let mut col = 0;
            while col < cols {
                let Some(cell) = screen.cell(row, col) else {
                    break;
                };
                let style = CellStyle::of(cell);
                let start = col;
                let mut text = String::new();
                while col < cols {
                    let Some(c) = screen.cell(row, col) else {
                        break;
                    };
                    if CellStyle::of(c) != style {
                        break;
                    }
                    if !c.is_wide_continuation() {
                        text.push_str(if c.has_contents() { c.contents() } else { " " });
                    }
                    col += 1;
                }
                let x = 8.0 + f64::from(start) * CELL_W;
                let w = f64::from(col - start) * CELL_W;
                if style.bg != DEFAULT_BG {
                    let _ = writeln!(
                        o,
                        "<rect x=\"{x:.1}\" y=\"{y}\" width=\"{w:.1}\" height=\"{CELL_H}\" fill=\"{}\"/>",
                        style.bg
                    );
                }
                if !text.trim().is_empty() {
                    let _ = writeln!(
                        o,
                        "<text x=\"{x:.1}\" y=\"{}\" fill=\"{}\"{}>{}</text>",
                        y + CELL_H - 4,
                        style.fg,
                        if style.bold {
                            " font-weight=\"bold\""
                        } else {
                            ""
                        },
                        esc(&text)
                    );
                }
            }
        }
        o.push_str("</g>\n</svg>\n");
        o
    }

    /// The whole history (scrolled-off rows, then the visible rows), soft-wrapped rows joined,
    /// trailing blank rows dropped; no chrome stripping.
    pub fn history_lines(&self) -> Vec<String> {
        self.numbered_lines().into_iter().map(|(_, l)| l).collect()
    }

    /// [`Screen::history_lines`] with chrome stripped, as a [`Transcript`].
    ///
    /// Each line's `row` is the index of its first physical row in the whole history (rows
    /// dropped by the memory bound included), so a soft-wrapped line spans several row numbers.
    pub fn transcript(&self) -> Transcript {
        let lines = self.numbered_lines();
        Transcript::from_numbered(lines.iter().map(|(row, l)| (*row, l.as_str())))
    }

    /// Rows dropped from the start of the history because it outgrew [`MAX_HISTORY_BYTES`]
    /// (0 in any realistic session). Row numbers in a [`Transcript`] start at this value.
    pub fn dropped_rows(&self) -> usize {
        self.parser.callbacks().dropped_rows
    }

    /// Joined lines with the history index of their first physical row; trailing blank lines
    /// dropped, trailing spaces trimmed.
    fn numbered_lines(&self) -> Vec<(usize, String)> {
        let recorder = self.parser.callbacks();
        let visible = visible_rows(self.parser.screen());
        let rows = recorder.history.iter().chain(visible.iter());
        let mut lines: Vec<(usize, String)> = Vec::new();
        let mut current: Option<(usize, String)> = None;
        for (i, row) in rows.enumerate() {
            let (_, text) =
                current.get_or_insert_with(|| (recorder.dropped_rows + i, String::new()));
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fed(rows: u16, cols: u16, bytes: &[u8]) -> Screen {
        let mut s = Screen::new(rows, cols);
        s.feed(bytes);
        s
    }

    fn numbered(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("line {i} of the history")).collect()
    }

    fn as_crlf(lines: &[String]) -> Vec<u8> {
        lines
            .iter()
            .flat_map(|l| format!("{l}\r\n").into_bytes())
            .collect()
    }

    #[test]
    fn rows_scrolled_off_the_top_are_kept() {
        let lines = numbered(100);
        let s = fed(24, 80, &as_crlf(&lines));
        assert_eq!(s.history_lines(), lines);
        // 100 lines and a blank cursor row: the last 23 lines are still visible.
        assert_eq!(s.viewport_rows()[0], "line 77 of the history");
        assert_eq!(s.viewport_rows()[23], "");
    }

    #[test]
    fn erase_scrollback_and_screen_at_exit_lose_nothing() {
        let lines = numbered(100);
        let mut bytes = as_crlf(&lines);
        bytes.extend_from_slice(b"\x1b[3J\x1b[2J\x1b[H");
        let s = fed(24, 80, &bytes);
        assert_eq!(s.history_lines(), lines);
        assert!(s.viewport_rows().iter().all(String::is_empty));
    }

    #[test]
    fn clear_split_across_feeds_is_seen() {
        let mut bytes = as_crlf(&numbered(3));
        bytes.extend_from_slice(b"\x1b[2J\x1b[Hafter\r\n");
        let mut s = Screen::new(24, 80);
        for b in &bytes {
            s.feed(std::slice::from_ref(b));
        }
        let mut expected = numbered(3);
        expected.push("after".into());
        assert_eq!(s.history_lines(), expected);
    }

    #[test]
    fn clear_saves_rows_from_the_top_to_the_last_non_blank_one() {
        // Like tmux: blank rows above the content are kept, blank rows below it are not.
        let s = fed(10, 20, b"\r\n\r\none\r\n\r\ntwo\r\n\x1b[2J\x1b[Hthree");
        assert_eq!(s.history_lines(), ["", "", "one", "", "two", "three"]);
    }

    #[test]
    fn clears_that_vt100_also_treats_as_erase_all_are_saved() {
        // DECSED 2, ED 2 with a leading zero and a second parameter, and the full reset.
        for clear in [&b"\x1b[?2J"[..], b"\x1b[02;7J", b"\x1bc"] {
            let mut bytes = b"kept\r\n".to_vec();
            bytes.extend_from_slice(clear);
            bytes.extend_from_slice(b"\x1b[Hnext");
            let s = fed(5, 20, &bytes);
            assert_eq!(s.history_lines(), ["kept", "next"], "{clear:?}");
        }
    }

    #[test]
    fn erase_below_is_a_clear_only_from_the_top_left() {
        // `CSI H CSI J` is the classic clear-screen idiom (tmux scrolls the screen away too).
        let s = fed(5, 20, b"old\x1b[H\x1b[Jnew");
        assert_eq!(s.history_lines(), ["old", "new"]);
        // From anywhere else it is a partial erase (prompt_toolkit redraws its input box so).
        let s = fed(5, 20, b"kept\r\ndraft\r\x1b[J\x1b[1Jfinal\x1b[3J\x1b[K");
        assert_eq!(s.history_lines(), ["", "final"]);
    }

    #[test]
    fn clear_inside_a_string_or_cancelled_is_not_a_clear() {
        // A CAN cancels the CSI: the `J` after it is text.
        let s = fed(5, 20, b"one\x1b]0;x\x07two\x1b[2\x18Jthree");
        assert_eq!(s.history_lines(), ["onetwoJthree"]);
        // An ESC ends an OSC string (as in vte), so the `ESC [ 2 J` in it is a real clear.
        let s = fed(5, 20, b"one\x1b]0;x\x1b[2Jtwo");
        assert_eq!(s.history_lines(), ["one", "   two"]);
        // An intermediate byte makes it another sequence (`CSI 2 $ J` is unknown to vt100).
        let s = fed(5, 20, b"one\x1b[2$Jtwo");
        assert_eq!(s.history_lines(), ["onetwo"]);
    }

    #[test]
    fn alternate_screen_is_not_recorded() {
        let main: Vec<String> = (0..7).map(|i| format!("main {i}")).collect();
        let mut bytes = as_crlf(&main);
        bytes.extend_from_slice(b"\x1b[?1049h");
        for i in 0..30 {
            bytes.extend_from_slice(format!("frame {i}\r\n").as_bytes());
        }
        bytes.extend_from_slice(b"\x1b[2J\x1b[Hlast frame");
        let mut s = fed(5, 20, &bytes);
        // While the alternate screen is up, its frame follows the main screen's scrolled rows;
        // frames that scrolled or were cleared away are not kept.
        assert_eq!(
            s.history_lines(),
            ["main 0", "main 1", "main 2", "last frame"]
        );
        s.feed(b"\x1b[?1049l");
        assert_eq!(s.history_lines(), main);
    }

    #[test]
    fn soft_wrapped_rows_are_joined() {
        let text = "The keeper of the lighthouse climbed the stairs every evening.";
        let s = fed(24, 10, format!("{text}\r\nnext\r\n").as_bytes());
        assert_eq!(s.history_lines(), [text, "next"]);
    }

    #[test]
    fn wrapped_line_split_between_history_and_screen_is_joined() {
        let text = "a".repeat(25) + &"b".repeat(25);
        // 3 rows of 10 columns: the first rows of the line scroll off, the rest stays visible.
        let s = fed(3, 10, text.as_bytes());
        assert_eq!(s.history_lines(), [text]);
        let t = s.transcript();
        assert_eq!(
            t.lines,
            [TranscriptLine {
                row: 0,
                text: "a".repeat(25) + &"b".repeat(25)
            }]
        );
    }

    #[test]
    fn wrap_at_a_space_keeps_the_space() {
        // "hello " fills 6 columns exactly; the space is printed, so it survives the join.
        let s = fed(4, 6, b"hello world\r\n");
        assert_eq!(s.history_lines(), ["hello world"]);
        let s = fed(2, 6, b"hello world\r\nmore\r\nand more\r\n");
        assert_eq!(s.history_lines(), ["hello world", "more", "and more"]);
    }

    #[test]
    fn wide_characters_are_rendered_once() {
        let text = "灯台守は毎晩階段を上った。The keeper 日本語";
        let s = fed(24, 80, format!("{text}\r\n").as_bytes());
        assert_eq!(s.history_lines(), [text]);
        assert_eq!(s.viewport_rows()[0], text);
    }

    #[test]
    fn wide_character_wrapping_with_one_column_left_joins_the_rows() {
        // At 7 columns three ideographs fill 6; the fourth starts the next row, and the row is
        // soft-wrapped (tmux and xterm agree), so the line is joined with no padding.
        let text = "灯台守は毎晩階段を上った。";
        let s = fed(3, 7, format!("{text}\r\n").as_bytes());
        assert_eq!(s.history_lines(), [text]);
        // The filler that makes vt100 mark the row never shows, and the cursor is where it
        // would be without it.
        let mut s = fed(3, 7, "abc灯台守\x1b[6n".as_bytes());
        assert_eq!(s.viewport_rows(), ["abc灯台", "守", ""]);
        assert_eq!(s.take_replies(), b"\x1b[2;3R");
        assert_eq!(s.history_lines(), ["abc灯台守"]);
    }

    #[test]
    fn narrow_character_in_the_last_column_is_not_pushed_down() {
        let s = fed(3, 7, "abcdef✓g".as_bytes());
        assert_eq!(s.viewport_rows(), ["abcdef✓", "g", ""]);
        assert_eq!(s.history_lines(), ["abcdef✓g"]);
    }

    #[test]
    fn wide_character_split_across_feeds_is_drawn_once() {
        let text = "abc灯台守は";
        let mut s = Screen::new(3, 7);
        for b in text.as_bytes() {
            s.feed(std::slice::from_ref(b));
        }
        assert_eq!(s.history_lines(), [text]);
        // A character still incomplete is not drawn yet, as in vt100.
        let mut s = Screen::new(3, 7);
        s.feed(&"灯".as_bytes()[..2]);
        assert_eq!(s.viewport_rows(), ["", "", ""]);
        s.feed(&"灯".as_bytes()[2..]);
        assert_eq!(s.viewport_rows(), ["灯", "", ""]);
    }

    #[test]
    fn device_attributes_query_is_answered() {
        let mut s = fed(24, 80, b"\x1b[c");
        assert_eq!(s.take_replies(), b"\x1b[?1;2c");
        s.feed(b"\x1b[0c");
        assert_eq!(s.take_replies(), b"\x1b[?1;2c");
        assert_eq!(s.take_replies(), b"");
        // DA2 (`CSI > c`) and DA1 with another parameter are not ours to answer.
        s.feed(b"\x1b[>c\x1b[1c");
        assert_eq!(s.take_replies(), b"");
    }

    #[test]
    fn background_colour_query_is_answered_dark() {
        let mut s = Screen::new(24, 80);
        for query in [&b"\x1b]11;?\x07"[..], b"\x1b]11;?\x1b\\"] {
            s.feed(query);
            assert_eq!(s.take_replies(), b"\x1b]11;rgb:0000/0000/0000\x1b\\");
        }
        // Setting the colour is not a query.
        s.feed(b"\x1b]11;rgb:1111/2222/3333\x07");
        assert_eq!(s.take_replies(), b"");
    }

    #[test]
    fn queries_split_across_feeds_are_answered_in_order() {
        let mut s = Screen::new(24, 80);
        for b in b"\x1b]11;?\x07\x1b[c" {
            s.feed(std::slice::from_ref(b));
        }
        assert_eq!(
            s.take_replies(),
            b"\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[?1;2c"
        );
    }

    #[test]
    fn cursor_position_report_is_one_based() {
        let mut s = fed(24, 80, b"\r\n\r\nabc\x1b[6n");
        assert_eq!(s.take_replies(), b"\x1b[3;4R");
        // Pending wrap at the last column reports the last column.
        let mut s = fed(5, 10, b"0123456789\x1b[6n");
        assert_eq!(s.take_replies(), b"\x1b[1;10R");
        s.feed(b"\x1b[5n");
        assert_eq!(s.take_replies(), b"\x1b[0n");
    }

    #[test]
    fn the_picture_keeps_colours_and_escapes_text() {
        let s = fed(
            3,
            20,
            b"a <b> \x1b[31mred\x1b[m \x1b[1;44mbold\x1b[m\r\n\x1b[7minv\x1b[m",
        );
        let svg = s.svg("t <1>");
        assert!(svg.contains("<title>t &lt;1&gt;</title>"));
        assert!(svg.contains(">a &lt;b&gt; </text>"), "{svg}");
        assert!(svg.contains("fill=\"#cd0000\">red</text>"), "{svg}");
        assert!(
            svg.contains("fill=\"#0000ee\"/>"),
            "a blue background: {svg}"
        );
        assert!(svg.contains("font-weight=\"bold\">bold</text>"), "{svg}");
        // Inverse: the default colours swapped.
        assert!(svg.contains("fill=\"#111111\">inv</text>"), "{svg}");
    }

    #[test]
    fn viewport_rows_are_trimmed() {
        let s = fed(3, 20, b"a  \x1b[31mred\x1b[m   \r\n\x1b[44m\x1b[K\x1b[m");
        assert_eq!(s.viewport_rows(), ["a  red", "", ""]);
    }

    #[test]
    fn shrinking_pushes_rows_into_the_history() {
        let lines = numbered(10);
        let mut s = fed(10, 40, &as_crlf(&lines[..9]));
        s.feed(lines[9].as_bytes());
        s.resize(4, 40);
        assert_eq!(s.viewport_rows()[3], lines[9]);
        assert_eq!(s.history_lines(), lines);
    }

    #[test]
    fn growing_adds_no_blank_rows_to_the_history() {
        let lines = numbered(30);
        let mut s = fed(5, 40, &as_crlf(&lines));
        s.resize(20, 40);
        s.feed(b"after\r\n");
        for i in 0..40 {
            s.feed(format!("more {i}\r\n").as_bytes());
        }
        let mut expected = lines.clone();
        expected.push("after".into());
        expected.extend((0..40).map(|i| format!("more {i}")));
        assert_eq!(s.history_lines(), expected);
    }

    #[test]
    fn zero_sizes_do_not_panic() {
        let mut s = Screen::new(0, 0);
        s.feed("x日本\r\n\x1b[6n".as_bytes());
        s.resize(0, 0);
        s.resize(3, 1);
        s.feed("日本語".as_bytes());
        let _ = (
            s.history_lines(),
            s.viewport_rows(),
            s.transcript(),
            s.take_replies(),
        );
    }

    #[test]
    fn history_is_bounded() {
        let limit = 100 * (ROW_OVERHEAD_BYTES + 10);
        let mut s = Screen::with_history_limit(2, 20, limit);
        for i in 0..1000 {
            s.feed(format!("row {i:>6}\r\n").as_bytes());
        }
        let r = s.parser.callbacks();
        assert!(r.history_bytes <= limit);
        assert_eq!(s.dropped_rows() + r.history.len(), 999);
        let t = s.transcript();
        assert_eq!(t.lines[0].row, s.dropped_rows());
        assert_eq!(t.lines[0].text, format!("row {:>6}", s.dropped_rows()));
        assert_eq!(
            s.history_lines().last().map(String::as_str),
            Some("row    999")
        );
    }

    const SAMPLE_PANEL: &str = "\
╭─ Hermes ───────────────────────────╮
│ The keeper of the lighthouse       │
│ climbed the stairs.                │
╰────────────────────────────────────╯
────────────────────────────────────────
❯
────────────────────────────────────────";

    fn lines_of(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    #[test]
    fn status_bar_is_chrome() {
        let lines = vec![
            "● hello there".to_owned(),
            " ☤ fake-model │ 12.2K/131.1K │ [█░░░░░░░░░] 9% │ ◷ 1s ─ Lighthouse notes".to_owned(),
        ];
        assert_eq!(
            Transcript::from_history_lines(&lines).text(),
            "● hello there"
        );
    }

    #[test]
    fn sample_panel_is_stripped_to_its_text() {
        let t = Transcript::from_history_lines(&lines_of(SAMPLE_PANEL));
        assert_eq!(
            t.lines,
            [
                TranscriptLine {
                    row: 1,
                    text: "The keeper of the lighthouse".into()
                },
                TranscriptLine {
                    row: 2,
                    text: "climbed the stairs.".into()
                },
            ]
        );
    }

    #[test]
    fn sample_panel_from_bytes_keeps_physical_rows() {
        let mut bytes = b"\x1b[1mbanner\x1b[m\r\n".to_vec();
        bytes.extend(SAMPLE_PANEL.replace('\n', "\r\n").into_bytes());
        let s = fed(4, 40, &bytes);
        assert_eq!(
            s.transcript().text(),
            "banner\nThe keeper of the lighthouse\nclimbed the stairs."
        );
        assert_eq!(s.transcript().lines[2].row, 3);
    }

    #[test]
    fn hermes_reply_panel_without_sides_is_stripped() {
        // As measured: the reply is plain text between a titled top rule and a bottom rule.
        let t = Transcript::from_history_lines(&lines_of(
            "● Tell me about the lighthouse keeper\n\
             cli.chat.initializing_agent\n\
             ────────────────────────\n\n\n\
             ╭─ ☤ Hermes ───────────────\n\
             The keeper climbed the stairs.\n\
             ╰──────────────────────────╯\n \
             ☤ fake-model │ 12.2K/131.1K │ [█░░░░░░░░░] 9%\n\
             ────────────────────────\n\
             ❯\n\
             ────────────────────────",
        ));
        assert_eq!(
            t.text(),
            "● Tell me about the lighthouse keeper\ncli.chat.initializing_agent\n\n\
             The keeper climbed the stairs."
        );
    }

    #[test]
    fn typed_text_in_the_input_box_is_kept() {
        let t = Transcript::from_history_lines(&lines_of("──────\n❯ hello there\n──────"));
        assert_eq!(
            t.lines,
            [TranscriptLine {
                row: 1,
                text: "hello there".into()
            }]
        );
    }

    #[test]
    fn nested_and_other_box_styles_are_stripped() {
        let t = Transcript::from_history_lines(&lines_of(
            "┏━━━━━━━━━━┓\n┃  Title   ┃\n┗━━━━━━━━━━┛\n\
             ╔═ x ══════╗\n║ double   ║\n╚══════════╝\n\
             │ ┌──────┐ │\n│ │ deep │ │\n│ └──────┘ │\n\
             ├──────────┤\n│          │\n│ after    │",
        ));
        assert_eq!(t.text(), " Title\ndouble\ndeep\n\nafter");
    }

    #[test]
    fn text_with_box_characters_inside_is_kept() {
        for line in [
            "a │ b │ c",
            "─ not a rule ─",
            "x ──────",
            "cost ─ 3 ─── 4 x",
            "│",
        ] {
            let t = Transcript::from_history_lines(&[line.to_owned()]);
            let expected = strip_vertical_borders(line).unwrap_or(line);
            assert_eq!(t.text(), expected, "{line:?}");
        }
    }

    #[test]
    fn blank_lines_collapse_and_are_trimmed_at_the_ends() {
        let t = Transcript::from_history_lines(&lines_of("\n\none\n\n\n│    │\n──\ntwo\n\n"));
        assert_eq!(t.text(), "one\n\ntwo");
        assert_eq!(t.lines[0].row, 2);
        assert_eq!(t.lines[2].row, 7);
    }

    /// Byte streams that exercise the clear watcher and the parser: fragments of escape
    /// sequences, clears, queries, wide characters, wrapping text and raw bytes.
    fn stream() -> impl Strategy<Value = Vec<u8>> {
        let token = prop_oneof![
            Just(b"\x1b[2J".to_vec()),
            Just(b"\x1b[3J".to_vec()),
            Just(b"\x1b[?2J".to_vec()),
            Just(b"\x1bc".to_vec()),
            Just(b"\x1b[".to_vec()),
            Just(b"\x1b]11;?\x07".to_vec()),
            Just(b"\x1b]0;t".to_vec()),
            Just(b"\x1b[c".to_vec()),
            Just(b"\x1b[6n".to_vec()),
            Just(b"\x1b[?1049h".to_vec()),
            Just(b"\x1b[?1049l".to_vec()),
            Just(b"\x1b[2A\x1b[J".to_vec()),
            Just(b"\x1b[31m".to_vec()),
            Just(b"\r\n".to_vec()),
            Just("灯台守は".as_bytes().to_vec()),
            Just("│ panel │".as_bytes().to_vec()),
            "[a-z ]{1,30}".prop_map(String::into_bytes),
            proptest::collection::vec(any::<u8>(), 1..8),
        ];
        proptest::collection::vec(token, 0..60).prop_map(|t| t.concat())
    }

    fn fed_in_chunks(rows: u16, cols: u16, bytes: &[u8], cuts: &[usize]) -> Screen {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut s = Screen::new(rows, cols);
        let mut start = 0;
        for cut in cuts.into_iter().chain([bytes.len()]) {
            s.feed(&bytes[start..cut]);
            start = cut;
        }
        s
    }

    proptest! {
        #[test]
        fn chunking_does_not_change_the_history(
            bytes in stream(),
            cuts in proptest::collection::vec(any::<usize>(), 0..20),
            rows in 1u16..8,
            cols in 1u16..12,
        ) {
            let mut whole = fed(rows, cols, &bytes);
            let mut split = fed_in_chunks(rows, cols, &bytes, &cuts);
            prop_assert_eq!(whole.history_lines(), split.history_lines());
            prop_assert_eq!(whole.viewport_rows(), split.viewport_rows());
            prop_assert_eq!(whole.take_replies(), split.take_replies());
            prop_assert_eq!(whole.transcript(), split.transcript());
        }

        #[test]
        fn every_printed_line_is_in_the_history_exactly_once(
            ops in proptest::collection::vec(0u8..8, 0..80),
            rows in 2u16..8,
            cols in 8u16..30,
        ) {
            // Lines interleaved with every kind of clear the client or a shell may send.
            let mut bytes = Vec::new();
            let mut printed = Vec::new();
            for (i, op) in ops.into_iter().enumerate() {
                match op {
                    0 => bytes.extend_from_slice(b"\x1b[2J"),
                    1 => bytes.extend_from_slice(b"\x1b[3J\x1b[2J\x1b[H"),
                    2 => bytes.extend_from_slice(b"\x1b[H\x1b[J"),
                    3 => bytes.extend_from_slice(b"\x1bc"),
                    _ => {
                        let line = format!("L{i}");
                        bytes.extend(format!("{line}\r\n").into_bytes());
                        printed.push(line);
                    }
                }
            }
            let s = fed(rows, cols, &bytes);
            let seen: Vec<String> =
                s.history_lines().into_iter().filter(|l| !l.is_empty()).collect();
            prop_assert_eq!(seen, printed);
        }

        #[test]
        fn arbitrary_bytes_and_resizes_never_panic(
            chunks in proptest::collection::vec(
                (proptest::collection::vec(any::<u8>(), 0..200), 0u16..30, 0u16..30),
                0..10,
            ),
        ) {
            let mut s = Screen::new(5, 10);
            for (bytes, rows, cols) in chunks {
                s.feed(&bytes);
                s.resize(rows, cols);
                let _ = (s.history_lines(), s.viewport_rows(), s.transcript(), s.take_replies());
            }
        }

        #[test]
        fn strip_chrome_never_panics(line in "\\PC{0,40}") {
            let _ = strip_chrome(&line);
        }
    }

    mod tmux {
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
            std::fs::write(&conf, "set -g status off\nset -g history-limit 100000\n")
                .expect("write conf");
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
            let size = server.tmux(&["display-message", "-p", "#{pane_height}x#{pane_width}"]);
            assert_eq!(
                String::from_utf8_lossy(&size.stdout).trim(),
                format!("{rows}x{cols}"),
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
                wrapped
                    .extend(format!("\x1b[1m{}\x1b[m\r\n", paragraph(i, 5 + i % 17)).into_bytes());
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
    }
}

/// Why a recording could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum CastError {
    /// The file could not be read.
    #[error("cannot read `{path}`: {source}")]
    Io {
        /// The recording.
        path: std::path::PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Not an asciicast v2 file.
    #[error("`{path}:{line}` is not asciicast v2: {message}")]
    Format {
        /// The recording.
        path: std::path::PathBuf,
        /// 1-based line.
        line: usize,
        /// What was expected.
        message: String,
    },
}

/// The largest terminal a recording may declare: a header claiming more (65535 × 65535 cells would
/// need gigabytes) is an error, not an allocation.
const MAX_CAST_ROWS: u16 = 1000;
/// See [`MAX_CAST_ROWS`].
const MAX_CAST_COLS: u16 = 2000;

/// Replays an asciicast v2 recording (header with `width`/`height`, then `[t, "o", data]` output
/// and `[t, "r", "COLSxROWS"]` resize events) into a [`Screen`] and returns the screen.
pub fn replay_cast(path: &std::path::Path) -> Result<Screen, CastError> {
    let text = std::fs::read_to_string(path).map_err(|source| CastError::Io {
        path: path.to_owned(),
        source,
    })?;
    let bad = |line: usize, message: &str| CastError::Format {
        path: path.to_owned(),
        line,
        message: message.to_owned(),
    };
    let mut lines = text.lines();
    let header: serde_json::Value = lines
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| bad(1, "expected a JSON header line"))?;
    if header["version"] != 2 {
        return Err(bad(1, "expected `\"version\": 2`"));
    }
    let dim = |key: &str, max: u16| {
        header[key]
            .as_u64()
            .and_then(|v| u16::try_from(v).ok())
            .filter(|v| (1..=max).contains(v))
            .ok_or_else(|| bad(1, &format!("expected a `{key}` from 1 to {max}")))
    };
    let mut screen = Screen::new(dim("height", MAX_CAST_ROWS)?, dim("width", MAX_CAST_COLS)?);
    for (i, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let event: (f64, String, String) = serde_json::from_str(line)
            .map_err(|_| bad(i + 2, "expected an event `[time, \"o\"|\"r\"|\"i\", data]`"))?;
        match event.1.as_str() {
            "o" => screen.feed(event.2.as_bytes()),
            "r" => {
                let (c, r): (u16, u16) = event
                    .2
                    .split_once('x')
                    .and_then(|(c, r)| Some((c.parse().ok()?, r.parse().ok()?)))
                    .filter(|&(c, r)| {
                        (1..=MAX_CAST_COLS).contains(&c) && (1..=MAX_CAST_ROWS).contains(&r)
                    })
                    .ok_or_else(|| {
                        bad(
                            i + 2,
                            &format!(
                                "expected a resize `COLSxROWS` of at most \
                                 {MAX_CAST_COLS}x{MAX_CAST_ROWS}"
                            ),
                        )
                    })?;
                screen.resize(r, c);
            }
            _ => {}
        }
    }
    Ok(screen)
}
