//! Asciicast recordings, v2 and v3.
//!
//! Asciicast recordings. Version 2 (<https://docs.asciinema.org/manual/asciicast/v2/>, asciinema
//! 2.x and this harness): a JSON header line (`version`, `width`, `height`, …), then one JSON
//! array per event, `[seconds, kind, data]`, with kind `o` (output), `i` (input), `r` (resize,
//! `COLSxROWS`) or `m` (a marker: the harness writes one named after each `check` step, so a
//! replay can stop where the check read the screen). Version 3
//! (<https://docs.asciinema.org/manual/asciicast/v3/>, asciinema 3.x's default): the header's size
//! is `term: {cols, rows, type, version}`, each event's time is the *interval* since the previous
//! event, lines starting with `#` are comments, and an `x` event says the program exited.
//!
//! The driver writes v2, one per client process, with `Writer` (`asciinema play` replays it);
//! [`Recording::read`] reads either whole, events and all (`check --cast` cuts it into views at
//! its input events), `Recording::read_screen` reads a screen without timing (text copied from
//! a terminal, asciinema's `txt` or `raw` output: `check --screen`), and [`replay`] feeds a
//! recording back into a [`Screen`] (the fixtures, the benchmarks). `docs/views.md` ("Saved
//! recordings") says what each format holds.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use super::{Emulator, Screen, Size};

/// An asciicast v2 writer (`asciinema play` can replay it): the header, then output (`o`), input
/// (`i`) and resize (`r`) events timed from its creation.
pub(crate) struct Writer {
    out: BufWriter<File>,
    started: Instant,
    /// Bytes of an incomplete UTF-8 sequence carried to the next chunk (events must be strings).
    carry: Vec<u8>,
}

impl Writer {
    /// Creates the recording at `path` (and its directory) for a terminal of `rows` × `cols`,
    /// writing the header; `env`'s `TERM` goes into it.
    pub(crate) fn create(
        path: &Path,
        rows: u16,
        cols: u16,
        env: &[(String, String)],
    ) -> std::io::Result<Writer> {
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
        Ok(Writer {
            out,
            started: Instant::now(),
            carry: Vec::new(),
        })
    }

    /// Writes one event of `kind` (`o`, `i`, `r`) with its time since the start.
    pub(crate) fn event(&mut self, kind: &str, data: &str) -> std::io::Result<()> {
        let t = self.started.elapsed().as_secs_f64();
        writeln!(self.out, "{}", serde_json::json!([t, kind, data]))
    }

    /// Records bytes the program wrote (an `o` event), holding back an incomplete UTF-8
    /// character for the next call.
    pub(crate) fn output(&mut self, bytes: &[u8]) -> std::io::Result<()> {
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

    /// Records what a person typed (an `i` event).
    pub(crate) fn input(&mut self, text: &str) -> std::io::Result<()> {
        self.event("i", text)
    }

    /// Records a resize of the terminal (an `r` event, `COLSxROWS`).
    pub(crate) fn resize(&mut self, size: Size) -> std::io::Result<()> {
        self.event("r", &size.to_string())
    }

    /// Records a marker (an `m` event) labelled `label`: the harness marks each checkpoint.
    pub(crate) fn marker(&mut self, label: &str) -> std::io::Result<()> {
        self.event("m", label)
    }

    /// Flushes what was written so far to the file.
    pub(crate) fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Why a recording could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum CastError {
    /// The file could not be read.
    #[error("cannot read `{path}`")]
    Io {
        /// The recording.
        path: std::path::PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Not an asciicast v2 or v3 file.
    #[error("`{path}:{line}` is not asciicast v2 or v3: {message}")]
    Format {
        /// The recording.
        path: std::path::PathBuf,
        /// 1-based line.
        line: usize,
        /// What was expected.
        message: String,
    },
    /// A pasted screen that is not one.
    #[error("`{path}` is not a screen: {message}")]
    Screen {
        /// The file.
        path: std::path::PathBuf,
        /// What was expected.
        message: String,
    },
}

/// The largest terminal a recording may declare: a header claiming more (65535 × 65535 cells would
/// need gigabytes) is an error, not an allocation.
const MAX_CAST_ROWS: u16 = 1000;
/// See [`MAX_CAST_ROWS`].
const MAX_CAST_COLS: u16 = 2000;

/// Replays an asciicast v2 or v3 recording (a header with the terminal's size, then output,
/// input, resize and marker events) into a [`Screen`] and returns the screen.
pub fn replay(path: &Path) -> Result<Screen, CastError> {
    replay_into(path)
}

/// [`replay`] into any [`Emulator`] (e.g. a [`super::ReflowScreen`]).
pub fn replay_into<E: Emulator>(path: &Path) -> Result<E, CastError> {
    let recording = Recording::read(path)?;
    let mut screen = recording.screen();
    recording.play(&mut screen, 0..recording.events.len());
    Ok(screen)
}

/// One event of a recording.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event {
    /// Bytes the program wrote (`o`).
    Output(String),
    /// What the terminal sent the program (`i`): what a person typed, and the terminal's own
    /// replies to the program's queries.
    Input(String),
    /// The terminal resized (`r`).
    Resize(Size),
    /// A marker (`m`), with its label.
    Marker(String),
    /// The recorded program exited (`x`, asciicast v3), with its status as written.
    Exit(String),
    /// An event of a kind this harness does not read.
    Other,
}

impl Event {
    /// Whether this is output that only erases (a line, the rest of the screen) and moves the
    /// cursor, drawing nothing: the first half of a clear and repaint.
    pub(crate) fn only_erases(&self) -> bool {
        use std::sync::OnceLock;
        static ESCAPE: OnceLock<regex::Regex> = OnceLock::new();
        static ERASE: OnceLock<regex::Regex> = OnceLock::new();
        let Event::Output(data) = self else {
            return false;
        };
        let erase =
            ERASE.get_or_init(|| regex::Regex::new(r"\x1b\[[0-9;?]*[JK]").expect("valid regex"));
        let escape = ESCAPE.get_or_init(|| {
            // CSI, OSC (to BEL or ST), and the other two- or three-byte escapes.
            regex::Regex::new(
                r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[ -/]*[0-~])",
            )
            .expect("valid regex")
        });
        erase.is_match(data) && escape.replace_all(data, "").chars().all(char::is_control)
    }
}

/// What a [`Recording`] was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Format {
    /// asciicast v2: event times in seconds since the start (asciinema 2.x, this harness).
    V2,
    /// asciicast v3: event times as intervals since the previous event (asciinema 3.x).
    V3,
    /// The terminal's bytes without timing: asciinema 3's `--output-format raw`, `script`'s
    /// typescript. Read by [`Recording::read_screen`].
    Raw,
    /// Text copied from a terminal (a paste, `tmux capture-pane -pJ`, asciinema 3's
    /// `--output-format txt`). Read by [`Recording::read_screen`].
    Text,
}

/// An asciicast recording, read whole: its terminal size, its start and its timed events.
#[derive(Debug, Clone)]
pub struct Recording {
    /// What it was read from.
    pub(crate) format: Format,
    /// The terminal's size when the recording started.
    pub(crate) size: Size,
    /// The header's `timestamp` (unix seconds, whole), when it has one.
    pub(crate) timestamp: Option<f64>,
    /// The header's `command`, when it has one (`asciinema rec -c "hermes --resume ID"`).
    pub(crate) command: Option<String>,
    /// The events, in order.
    pub events: Vec<Timed>,
}

/// An event of a recording, with when and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Timed {
    /// Seconds since the recording started (v3's intervals added up; an untimed screen's
    /// events are all at 0).
    pub(crate) time: f64,
    /// Its 1-based line in the file (the header is line 1).
    pub(crate) line: usize,
    /// The event.
    pub(crate) event: Event,
}

impl Recording {
    /// Reads and checks the asciicast v2 or v3 recording at `path` (the header's `version` says
    /// which).
    pub fn read(path: &Path) -> Result<Recording, CastError> {
        let text = std::fs::read_to_string(path).map_err(|source| CastError::Io {
            path: path.to_owned(),
            source,
        })?;
        let bad = |line: usize, message: &str| format_error(path, line, message);
        let mut lines = text.lines();
        let (header, format, size) = header(path, lines.next())?;
        let expected = match format {
            Format::V3 => {
                "expected an event `[interval, \"o\"|\"i\"|\"r\"|\"m\"|\"x\", data]` with a \
                 non-negative interval, or a `#` comment"
            }
            _ => {
                "expected an event `[time, \"o\"|\"i\"|\"r\"|\"m\", data]` with a time not before \
                  the last event's"
            }
        };
        let mut events = Vec::new();
        let mut clock = 0.0_f64;
        for (i, line) in lines.enumerate() {
            let at = i + 2;
            if line.trim().is_empty() || (format == Format::V3 && line.starts_with('#')) {
                continue;
            }
            let (time, kind, data): (f64, String, String) =
                serde_json::from_str(line).map_err(|_| bad(at, expected))?;
            // v2's times only grow (asciinema writes them so; a file edited by hand may hold
            // equal ones); v3's intervals are never negative.
            let time = match format {
                Format::V3 if time >= 0.0 && time.is_finite() => clock + time,
                Format::V2 if time.is_finite() && time >= clock - 1e-6 => time.max(clock),
                _ => return Err(bad(at, expected)),
            };
            clock = time;
            events.push(Timed {
                time,
                line: at,
                event: event(format, &kind, data).map_err(|message| bad(at, &message))?,
            });
        }
        Ok(Recording {
            format,
            size,
            timestamp: header["timestamp"].as_f64(),
            command: header["command"].as_str().map(str::to_owned),
            events,
        })
    }

    /// Reads a screen that is not a recording: the terminal's bytes without timing
    /// ([`Format::Raw`]: the file holds escape sequences) or text copied from a terminal
    /// ([`Format::Text`]). Each line is one output event, all at time 0 (nothing says when it
    /// was drawn). `size` is the terminal's, when known; otherwise a text is as wide as its
    /// longest line (at least 80 columns: a paste joined its soft wraps) and raw bytes are read
    /// at 80 × 24, asciinema's default.
    pub(crate) fn read_screen(path: &Path, size: Option<Size>) -> Result<Recording, CastError> {
        let bytes = std::fs::read(path).map_err(|source| CastError::Io {
            path: path.to_owned(),
            source,
        })?;
        let bad = |message: String| CastError::Screen {
            path: path.to_owned(),
            message,
        };
        if bytes.contains(&0) {
            return Err(bad(
                "expected text or a terminal's bytes, found NUL bytes (a binary file)".into(),
            ));
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if text.trim().is_empty() {
            return Err(bad("expected the text of a screen, found nothing".into()));
        }
        if text.starts_with('{')
            && serde_json::from_str::<serde_json::Value>(text.lines().next().unwrap_or(""))
                .is_ok_and(|h| h.get("version").is_some())
        {
            return Err(bad(
                "it is an asciicast recording: read it with `--cast`".into()
            ));
        }
        let format = if text.contains('\u{1b}') {
            Format::Raw
        } else {
            Format::Text
        };
        let size = match (size, format) {
            (Some(size), _) => size,
            (None, Format::Raw) => Size { cols: 80, rows: 24 },
            (None, _) => {
                let widest = text
                    .lines()
                    .map(|l| text_width(l.trim_end()))
                    .max()
                    .unwrap_or(0);
                Size {
                    cols: u16::try_from(widest.clamp(80, usize::from(MAX_CAST_COLS)))
                        .unwrap_or(MAX_CAST_COLS),
                    rows: 40,
                }
            }
        };
        if !(1..=MAX_CAST_COLS).contains(&size.cols) || !(1..=MAX_CAST_ROWS).contains(&size.rows) {
            return Err(bad(format!(
                "expected a size of at most {MAX_CAST_COLS}x{MAX_CAST_ROWS}, got {size}"
            )));
        }
        let events = text
            .split_inclusive('\n')
            .enumerate()
            .map(|(i, line)| {
                let data = match format {
                    // Text lines go back to the left margin: a pasted file ends its lines
                    // with `\n` (or `\r\n`).
                    Format::Text => format!("{}\r\n", line.trim_end_matches(['\r', '\n'])),
                    _ => line.to_owned(),
                };
                Timed {
                    time: 0.0,
                    line: i + 1,
                    event: Event::Output(data),
                }
            })
            .collect();
        Ok(Recording {
            format,
            size,
            timestamp: None,
            command: None,
            events,
        })
    }

    /// The data of its input events (`i`: what was typed or pasted), in order.
    pub(crate) fn inputs(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|t| match &t.event {
                Event::Input(data) => Some(data.clone()),
                _ => None,
            })
            .collect()
    }

    /// Whether the events carry their times (a recording) or not (a screen).
    pub(crate) fn timed(&self) -> bool {
        matches!(self.format, Format::V2 | Format::V3)
    }

    /// A terminal of the recording's starting size, with nothing drawn yet.
    pub fn screen<E: Emulator>(&self) -> E {
        E::create(self.size.rows, self.size.cols)
    }

    /// Plays the events `range` (indexes into [`Recording::events`]) into `screen`: output is
    /// fed, resizes resize it, the rest is skipped.
    pub fn play<E: Emulator>(&self, screen: &mut E, range: std::ops::Range<usize>) {
        for timed in &self.events[range] {
            match &timed.event {
                Event::Output(data) => screen.feed(data.as_bytes()),
                Event::Resize(size) => screen.resize(size.rows, size.cols),
                Event::Input(_) | Event::Marker(_) | Event::Exit(_) | Event::Other => {}
            }
        }
    }
}

/// A line's width in cells, near enough to size a pasted screen: wide (East Asian, emoji)
/// characters count two cells, a little too often rather than too rarely (a line one cell
/// narrower than the terminal does not wrap).
fn text_width(line: &str) -> usize {
    line.chars()
        .map(|c| if u32::from(c) >= 0x1100 { 2 } else { 1 })
        .sum()
}

/// A recording's line `line` of `path` that is not what was expected.
fn format_error(path: &Path, line: usize, message: &str) -> CastError {
    CastError::Format {
        path: path.to_owned(),
        line,
        message: message.to_owned(),
    }
}

/// The header line `first` of the recording `path`: the header, its version and the terminal's
/// size (v2 `width`/`height`, v3 `term`).
fn header(
    path: &Path,
    first: Option<&str>,
) -> Result<(serde_json::Value, Format, Size), CastError> {
    let bad = |message: &str| format_error(path, 1, message);
    let header: serde_json::Value = first
        .and_then(|l| serde_json::from_str(l).ok())
        .filter(serde_json::Value::is_object)
        .ok_or_else(|| {
            bad(
                "expected a JSON header line (`{\"version\": 2, …}` or `{\"version\": 3, …}`); \
                 a screen copied from a terminal, or asciinema's `txt` or `raw` output, is \
                 read with `--screen`",
            )
        })?;
    let format = match header["version"].as_u64() {
        Some(2) => Format::V2,
        Some(3) => Format::V3,
        _ => {
            return Err(bad(
                "expected `\"version\": 2` or `\"version\": 3` in the header",
            ))
        }
    };
    let dim = |value: &serde_json::Value, key: &str, max: u16| {
        value
            .as_u64()
            .and_then(|v| u16::try_from(v).ok())
            .filter(|v| (1..=max).contains(v))
            .ok_or_else(|| bad(&format!("expected a `{key}` from 1 to {max}")))
    };
    let size = match format {
        Format::V3 => {
            if !header["term"].is_object() {
                return Err(bad(
                    "expected a `term` object with `cols` and `rows` (asciicast v3)",
                ));
            }
            Size {
                rows: dim(&header["term"]["rows"], "term.rows", MAX_CAST_ROWS)?,
                cols: dim(&header["term"]["cols"], "term.cols", MAX_CAST_COLS)?,
            }
        }
        _ => Size {
            rows: dim(&header["height"], "height", MAX_CAST_ROWS)?,
            cols: dim(&header["width"], "width", MAX_CAST_COLS)?,
        },
    };
    Ok((header, format, size))
}

/// The event of kind `kind` with `data` in a recording of `format`, or what was expected.
fn event(format: Format, kind: &str, data: String) -> Result<Event, String> {
    Ok(match kind {
        "o" => Event::Output(data),
        "i" => Event::Input(data),
        "m" => Event::Marker(data),
        "x" if format == Format::V3 => Event::Exit(data),
        "r" => Event::Resize(
            data.parse::<Size>()
                .ok()
                .filter(|s| {
                    (1..=MAX_CAST_COLS).contains(&s.cols) && (1..=MAX_CAST_ROWS).contains(&s.rows)
                })
                .ok_or_else(|| {
                    format!(
                        "expected a resize `COLSxROWS` of at most {MAX_CAST_COLS}x{MAX_CAST_ROWS}"
                    )
                })?,
        ),
        _ => Event::Other,
    })
}
