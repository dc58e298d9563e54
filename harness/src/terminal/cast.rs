//! Asciicast v2 recordings (<https://docs.asciinema.org/manual/asciicast/v2/>): a JSON header line
//! (`version`, `width`, `height`, …), then one JSON array per event, `[seconds, kind, data]`, with
//! kind `o` (output), `i` (input), `r` (resize, `COLSxROWS`) or `m` (a marker: the harness writes
//! one named after each `check` step, so a replay can stop where the check read the screen).
//!
//! The driver writes one per client process with [`Writer`] (`asciinema play` replays it);
//! [`Recording::read`] reads one whole, events and all (`check --cast` cuts it into views at its
//! input events), and [`replay`] feeds one back into a [`Screen`] (the fixtures, the benchmarks).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use super::{Emulator, Screen, Size};

/// An asciicast v2 writer (`asciinema play` can replay it): the header, then output (`o`), input
/// (`i`) and resize (`r`) events timed from its creation.
pub struct Writer {
    out: BufWriter<File>,
    started: Instant,
    /// Bytes of an incomplete UTF-8 sequence carried to the next chunk (events must be strings).
    carry: Vec<u8>,
}

impl Writer {
    /// Creates the recording at `path` (and its directory) for a terminal of `rows` × `cols`,
    /// writing the header; `env`'s `TERM` goes into it.
    pub fn create(
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
    pub fn event(&mut self, kind: &str, data: &str) -> std::io::Result<()> {
        let t = self.started.elapsed().as_secs_f64();
        writeln!(self.out, "{}", serde_json::json!([t, kind, data]))
    }

    /// Records bytes the program wrote (an `o` event), holding back an incomplete UTF-8
    /// character for the next call.
    pub fn output(&mut self, bytes: &[u8]) -> std::io::Result<()> {
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
    pub fn input(&mut self, text: &str) -> std::io::Result<()> {
        self.event("i", text)
    }

    /// Records a resize of the terminal (an `r` event, `COLSxROWS`).
    pub fn resize(&mut self, size: Size) -> std::io::Result<()> {
        self.event("r", &size.to_string())
    }

    /// Records a marker (an `m` event) labelled `label`: the harness marks each checkpoint.
    pub fn marker(&mut self, label: &str) -> std::io::Result<()> {
        self.event("m", label)
    }

    /// Flushes what was written so far to the file.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
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
pub enum Event {
    /// Bytes the program wrote (`o`).
    Output(String),
    /// What a person typed (`i`).
    Input(String),
    /// The terminal resized (`r`).
    Resize(Size),
    /// A marker (`m`), with its label.
    Marker(String),
    /// An event of a kind this harness does not read.
    Other,
}

/// An asciicast v2 recording, read whole: its terminal size, its start and its timed events.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The terminal's size when the recording started.
    pub size: Size,
    /// The header's `timestamp` (unix seconds, whole), when it has one.
    pub timestamp: Option<f64>,
    /// The header's `command`, when it has one (`asciinema rec -c "hermes --resume ID"`).
    pub command: Option<String>,
    /// The events, in order.
    pub events: Vec<Timed>,
}

/// An event of a recording, with when and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Timed {
    /// Seconds since the recording started.
    pub time: f64,
    /// Its 1-based line in the file (the header is line 1).
    pub line: usize,
    /// The event.
    pub event: Event,
}

impl Recording {
    /// Reads and checks the recording at `path`.
    pub fn read(path: &Path) -> Result<Recording, CastError> {
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
        let size = Size {
            rows: dim("height", MAX_CAST_ROWS)?,
            cols: dim("width", MAX_CAST_COLS)?,
        };
        let mut events = Vec::new();
        for (i, line) in lines.enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let (time, kind, data): (f64, String, String) = serde_json::from_str(line)
                .map_err(|_| bad(i + 2, "expected an event `[time, \"o\"|\"r\"|\"i\", data]`"))?;
            let event = match kind.as_str() {
                "o" => Event::Output(data),
                "i" => Event::Input(data),
                "m" => Event::Marker(data),
                "r" => Event::Resize(
                    data.parse::<Size>()
                        .ok()
                        .filter(|s| {
                            (1..=MAX_CAST_COLS).contains(&s.cols)
                                && (1..=MAX_CAST_ROWS).contains(&s.rows)
                        })
                        .ok_or_else(|| {
                            bad(
                                i + 2,
                                &format!(
                                    "expected a resize `COLSxROWS` of at most \
                                     {MAX_CAST_COLS}x{MAX_CAST_ROWS}"
                                ),
                            )
                        })?,
                ),
                _ => Event::Other,
            };
            events.push(Timed {
                time,
                line: i + 2,
                event,
            });
        }
        Ok(Recording {
            size,
            timestamp: header["timestamp"].as_f64(),
            command: header["command"].as_str().map(str::to_owned),
            events,
        })
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
                Event::Input(_) | Event::Marker(_) | Event::Other => {}
            }
        }
    }
}
