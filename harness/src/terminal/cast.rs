//! Asciicast v2 recordings (<https://docs.asciinema.org/manual/asciicast/v2/>): a JSON header line
//! (`version`, `width`, `height`, …), then one JSON array per event, `[seconds, kind, data]`, with
//! kind `o` (output), `i` (input), `r` (resize, `COLSxROWS`) or `m` (a marker: the harness writes
//! one named after each `check` step, so a replay can stop where the check read the screen).
//!
//! The driver writes one per client process with [`Writer`] (`asciinema play` replays it);
//! [`replay`] feeds one back into a [`Screen`] (`check --cast`, the fixtures, the benchmarks).

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
    let mut screen = E::create(dim("height", MAX_CAST_ROWS)?, dim("width", MAX_CAST_COLS)?);
    for (i, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let event: (f64, String, String) = serde_json::from_str(line)
            .map_err(|_| bad(i + 2, "expected an event `[time, \"o\"|\"r\"|\"i\", data]`"))?;
        match event.1.as_str() {
            "o" => screen.feed(event.2.as_bytes()),
            "r" => {
                let size = event
                    .2
                    .parse::<Size>()
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
                    })?;
                screen.resize(size.rows, size.cols);
            }
            _ => {}
        }
    }
    Ok(screen)
}
