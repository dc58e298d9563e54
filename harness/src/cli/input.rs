//! The files a command reads, as given on the command line.
//!
//! `-` is stdin (written to a private temporary file first, since SQLite and the replay need a
//! path), and a path that cannot be what the flag expects (a directory, a binary recording) is
//! refused saying what was expected.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// A file a command reads: its path on disk and how messages name it.
#[derive(Debug)]
pub(crate) struct Input {
    /// Where to read it (a private copy when it came from stdin).
    pub(crate) path: PathBuf,
    /// The name messages and reports use (`-` is `<stdin>`).
    pub(crate) shown: PathBuf,
    /// Whether it came from stdin.
    pub(crate) stdin: bool,
    /// The private directory holding stdin's copy; removed when dropped.
    _dir: Option<tempfile::TempDir>,
}

/// Why a file given on the command line cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InputError {
    /// `-` given for two files of one command.
    #[error("{flag} -: stdin is already read for another file; give at most one `-`")]
    StdinTwice {
        /// The flag.
        flag: &'static str,
    },
    /// Stdin could not be read or kept.
    #[error("{flag} -: cannot read stdin into a private file")]
    Stdin {
        /// The flag.
        flag: &'static str,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A directory where a file was expected.
    #[error("{flag} `{}` is a directory: expected {expected}{hint}", path.display())]
    Directory {
        /// The flag.
        flag: &'static str,
        /// The directory.
        path: PathBuf,
        /// What the flag expects.
        expected: &'static str,
        /// The candidates inside, when there are some (`; it holds session-1.cast, …`).
        hint: String,
    },
    /// A recording that is not text.
    #[error(
        "{flag} `{}` is not an asciicast recording (v2 or v3): it is not UTF-8 text (byte {at} is not); \
         expected a `.cast` file as `asciinema rec` or `hermes-e2e record` writes it",
        path.display()
    )]
    NotText {
        /// The flag.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// The offset of the first byte that is not UTF-8.
        at: usize,
    },
    /// The file could not be read.
    #[error("{flag} `{}`: cannot read it", path.display())]
    Read {
        /// The flag.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// Whether stdin was taken by an [`Input`] already.
static STDIN_TAKEN: AtomicBool = AtomicBool::new(false);

impl Input {
    /// The file `arg` of `flag`, expected to hold `expected` (for messages): stdin's bytes in a
    /// private file named `name` when `arg` is `-`, else `arg` itself once it is known not to
    /// be a directory.
    pub(crate) fn file(
        arg: &Path,
        flag: &'static str,
        expected: &'static str,
        name: &str,
    ) -> Result<Input, InputError> {
        if arg == Path::new("-") {
            if STDIN_TAKEN.swap(true, Ordering::SeqCst) {
                return Err(InputError::StdinTwice { flag });
            }
            let io = |source| InputError::Stdin { flag, source };
            let dir = tempfile::Builder::new()
                .prefix("hermes-e2e-stdin-")
                .tempdir()
                .map_err(io)?;
            let path = dir.path().join(name);
            let mut bytes = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut bytes)
                .map_err(io)?;
            std::fs::write(&path, bytes).map_err(io)?;
            return Ok(Input {
                path,
                shown: PathBuf::from("<stdin>"),
                stdin: true,
                _dir: Some(dir),
            });
        }
        if arg.is_dir() {
            return Err(InputError::Directory {
                flag,
                path: arg.to_owned(),
                expected,
                hint: String::new(),
            });
        }
        Ok(Input {
            path: arg.to_owned(),
            shown: arg.to_owned(),
            stdin: false,
            _dir: None,
        })
    }

    /// The `--config` file, when one is given.
    pub(crate) fn config(arg: Option<&Path>) -> Result<Option<Input>, InputError> {
        arg.map(|c| Input::file(c, "--config", "a `config.yaml` file", "config.yaml"))
            .transpose()
    }

    /// The recording `arg` of `flag`: as [`Input::file`], and refused unless it is UTF-8 text
    /// (a directory names the `.cast` files in it).
    pub(crate) fn recording(arg: &Path, flag: &'static str) -> Result<Input, InputError> {
        const EXPECTED: &str = "an asciicast recording, v2 or v3 (a `.cast` file)";
        let input = Input::file(arg, flag, EXPECTED, "stdin.cast").map_err(|e| match e {
            InputError::Directory { flag, path, .. } => {
                let mut casts: Vec<String> = std::fs::read_dir(&path)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".cast"))
                    .collect();
                casts.sort();
                let hint = if casts.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; it holds {}: give one, e.g. {flag} {}",
                        casts.join(", "),
                        path.join(&casts[casts.len() - 1]).display()
                    )
                };
                InputError::Directory {
                    flag,
                    path,
                    expected: EXPECTED,
                    hint,
                }
            }
            e => e,
        })?;
        let bytes = std::fs::read(&input.path).map_err(|source| InputError::Read {
            flag,
            path: input.shown.clone(),
            source,
        })?;
        if let Err(e) = std::str::from_utf8(&bytes) {
            return Err(InputError::NotText {
                flag,
                path: input.shown.clone(),
                at: e.valid_up_to(),
            });
        }
        Ok(input)
    }
}

/// A note when `db` is a WAL-mode database with no `-wal` file beside it: the turns the client
/// had not yet written back into the file would be missing. `None` otherwise (and for a file
/// that cannot be read: opening it reports that).
pub(crate) fn wal_note(db: &Path) -> Option<String> {
    let mut header = [0u8; 20];
    let mut file = std::fs::File::open(db).ok()?;
    file.read_exact(&mut header).ok()?;
    // SQLite's header: "SQLite format 3\0", then the write and read versions at 18 and 19
    // (2 = WAL).
    let wal = header.starts_with(b"SQLite format 3\0") && header[18] == 2 && header[19] == 2;
    let mut sibling = db.as_os_str().to_owned();
    sibling.push("-wal");
    let sibling = PathBuf::from(sibling);
    (wal && !sibling.exists()).then(|| {
        format!(
            "`{}` is in WAL mode and has no `-wal` beside it: complete if the client was closed \
             when it was copied, else its last turns are missing (copy `state.db-wal` with it)",
            db.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_refused_naming_its_recordings() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("session-2.cast"), "{}").unwrap();
        std::fs::write(dir.path().join("session-1.cast"), "{}").unwrap();
        let e = Input::recording(dir.path(), "--cast")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is a directory: expected an asciicast recording, v2 or v3"),
            "{e}"
        );
        assert!(e.contains("it holds session-1.cast, session-2.cast"), "{e}");
    }

    #[test]
    fn a_binary_recording_is_refused_saying_what_was_expected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.cast");
        std::fs::write(&path, b"{\"v\xff").unwrap();
        let e = Input::recording(&path, "--cast").unwrap_err().to_string();
        assert!(e.contains("not UTF-8 text (byte 3 is not)"), "{e}");
        assert!(e.contains("expected a `.cast` file"), "{e}");
    }

    #[test]
    fn wal_without_its_file_is_noted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "wal").unwrap();
        conn.execute_batch("create table t(x); insert into t values (1);")
            .unwrap();
        drop(conn);
        // Closed cleanly: the -wal file is gone, the header still says WAL.
        assert!(!dir.path().join("state.db-wal").exists());
        let note = wal_note(&path).expect("a note");
        assert!(note.contains("is in WAL mode and has no `-wal`"), "{note}");
        std::fs::write(dir.path().join("state.db-wal"), b"").unwrap();
        assert_eq!(wal_note(&path), None);
    }
}
