//! The one escape-sequence scanner.
//!
//! Follows a terminal byte stream as vt100's parser (`vte` 0.15) does, byte by byte, and says where
//! an erase in display, a full reset or a printed character completes — without emulating anything.
//!
//! Its state survives between calls, so a sequence (or a UTF-8 character) split across reads is
//! seen like a whole one. Two users:
//! - [`super::Screen::feed`] cuts the bytes it hands vt100 where a clear or a wide character is
//!   about to take effect (see the [module docs](super));
//! - the driver keeps the letters and digits the client printed, escape sequences left out
//!   (`driver::Printed`), for waits on text that was drawn and erased again.

/// What the [`Scanner`] reports about the byte it was just given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// Nothing of interest.
    None,
    /// This byte is the final byte of an erase in display (`CSI J`, or `CSI ? J`, which vt100
    /// treats alike) with this mode: the screen is still intact before the byte.
    EraseInDisplay(u16),
    /// This byte is the final byte of a full reset (`ESC c`).
    Reset,
    /// This byte is the final byte of an erase in line (`CSI K`, no private marker) with this
    /// mode: the row is still intact before the byte. Used by [`super::reflow::ReflowScreen`].
    EraseInLine(u16),
    /// This byte is the final byte of `CSI ? 1049 h` (save the cursor and switch to the
    /// alternate screen): the main screen is still active before the byte. Used by
    /// [`super::reflow::ReflowScreen`], which must read the main screen before it is hidden.
    AltScreen,
    /// This byte is the final byte of `CSI ? 2026 h` (`true`: a synchronized update begins, the
    /// terminal holds the frame) or `CSI ? 2026 l` (`false`: the frame is complete), DEC mode
    /// 2026. The Ink TUI draws every frame inside such a pair; the driver reads the screen only
    /// between frames.
    SyncedUpdate(bool),
    /// This byte completes a printed character (text in the ground state: not a control, not
    /// part of an escape sequence), whose first byte is at `start` (index in the scanned input;
    /// in an earlier input if the character was split across inputs and the caller did not use
    /// [`Scanner::take_incomplete_char`]).
    Printed {
        /// Index of the character's first byte.
        start: usize,
        /// The character.
        c: char,
    },
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
/// [`Screen::feed`](super::Screen::feed) calls, so sequences split across reads are seen like
/// whole ones.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Scanner {
    state: ScanState,
    utf8: Utf8Partial,
}

impl Scanner {
    /// Advances by the byte `b` found at index `i` of the scanned input.
    pub(crate) fn step(&mut self, i: usize, b: u8) -> Event {
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

    /// How many bytes at the start of `bytes` are printable ASCII (0x20–0x7E) in the ground state
    /// with no UTF-8 character begun: for each of them [`Scanner::step`] would report
    /// [`Event::Printed`] with that character and stay where it is, so a caller interested only
    /// in other events (or in characters past ASCII) may skip them.
    pub(crate) fn ascii_text_len(&self, bytes: &[u8]) -> usize {
        if self.state != ScanState::Ground || self.utf8.len > 0 {
            return 0;
        }
        bytes
            .iter()
            .position(|b| !(0x20..=0x7e).contains(b))
            .unwrap_or(bytes.len())
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
                    Some(c) => Event::Printed { start, c },
                    None => Event::None,
                };
            }
            u.len = 0;
        }
        let need = match b {
            // ASCII text (vte executes C0 controls and ignores DEL).
            0x20..=0x7e => {
                return Event::Printed {
                    start: i,
                    c: char::from(b),
                }
            }
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
    pub(crate) fn take_incomplete_char(&mut self) -> usize {
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
            (_, b'K') if self.first_intermediate.is_none() => Event::EraseInLine(self.first_param),
            (_, b'h') if self.first_intermediate == Some(b'?') && self.first_param == 1049 => {
                Event::AltScreen
            }
            (_, b'h' | b'l')
                if self.first_intermediate == Some(b'?') && self.first_param == 2026 =>
            {
                Event::SyncedUpdate(b == b'h')
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
