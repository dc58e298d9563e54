//! Copying a `state.db` with its siblings, and checking its header first.

use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::{sqlite_err, StoreError};

/// The 16-byte magic every SQLite 3 database file starts with.
pub(super) const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// The sibling files SQLite may keep next to a database; copied with it when present.
/// `-journal` is included because a hot rollback journal changes what a reader sees.
const SIBLING_SUFFIXES: &[&str] = &["-wal", "-shm", "-journal"];

/// Copies the database `from` to `to`, with whichever of its `-wal`, `-shm` and `-journal`
/// siblings exist (to `to` plus the same suffix): the file as SQLite would read it. Returns
/// whether a sibling was copied. Only reads `from`; an error names the file that failed.
pub fn copy_database(from: &Path, to: &Path) -> Result<bool, StoreError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::Io { path, source }
    };
    std::fs::copy(from, to).map_err(io_err(from))?;
    let mut has_sibling = false;
    for suffix in SIBLING_SUFFIXES {
        let with = |p: &Path| {
            let mut s = p.as_os_str().to_owned();
            s.push(suffix);
            PathBuf::from(s)
        };
        let sibling = with(from);
        if sibling.is_file() {
            std::fs::copy(&sibling, with(to)).map_err(io_err(&sibling))?;
            has_sibling = true;
        }
    }
    Ok(has_sibling)
}

/// Writes `to`: one self-contained SQLite file holding everything a reader of `from` sees,
/// the rows still only in its write-ahead log (`-wal`) or hot journal included, in rollback
/// (`DELETE`) journal mode so it opens read-only with no siblings beside it.
///
/// Every database the harness hands to a person is written this way (the run's kept
/// `state.db`, a `record` fixture, a `minimize` fixture, a `check` report's copy): a file copy
/// of the main file alone loses what the client has not checkpointed — the 0.19 Ink TUI keeps
/// every row in the WAL while it runs. `from` and its siblings are copied to a private
/// directory first and replayed there (SQLite's recovery writes), so the client's own files are
/// only ever read; the copy is then written out with the online-backup API. An existing `to`
/// and its siblings are replaced. Errors name the file that failed.
pub fn snapshot_database(from: &Path, to: &Path) -> Result<(), StoreError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::Io { path, source }
    };
    let dir = tempfile::Builder::new()
        .prefix("hermes-e2e-snapshot-")
        .tempdir()
        .map_err(io_err(from))?;
    let copy = dir.path().join("state.db");
    copy_database(from, &copy)?;
    let source =
        open_copy(&copy, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(|e| sqlite_err(from, e))?;
    for path in std::iter::once(to.to_path_buf()).chain(SIBLING_SUFFIXES.iter().map(|s| {
        let mut p = to.as_os_str().to_owned();
        p.push(s);
        PathBuf::from(p)
    })) {
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&path)(e)),
        }
    }
    let mut dest = Connection::open(to).map_err(|e| sqlite_err(to, e))?;
    rusqlite::backup::Backup::new(&source, &mut dest)
        .and_then(|b| b.run_to_completion(1024, std::time::Duration::ZERO, None))
        .map_err(|e| sqlite_err(from, e))?;
    // The backup copies page 1 as the source has it, WAL flag included: switch the copy to a
    // rollback journal so it needs no `-wal`/`-shm` to be read.
    let mode: String = dest
        .query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))
        .map_err(|e| sqlite_err(to, e))?;
    if !mode.eq_ignore_ascii_case("delete") {
        return Err(StoreError::Journal {
            path: to.to_path_buf(),
            mode,
        });
    }
    dest.close().map_err(|(_, e)| sqlite_err(to, e))
}

/// Rejects what is certainly not a usable SQLite file before copying it: empty, wrong magic,
/// or shorter than its own header says (a truncated download or copy).
pub(super) fn check_header(path: &Path, len: u64) -> Result<(), StoreError> {
    let not_sqlite = |reason: String| StoreError::NotSqlite {
        path: path.to_path_buf(),
        reason,
    };
    if len == 0 {
        return Err(not_sqlite(
            "the file is empty (0 bytes); expected a SQLite database starting with `SQLite format 3`"
                .into(),
        ));
    }
    let mut header = Vec::with_capacity(100);
    std::fs::File::open(path)
        .and_then(|f| f.take(100).read_to_end(&mut header))
        .map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if header.len() < SQLITE_MAGIC.len() || &header[..16] != SQLITE_MAGIC {
        return Err(not_sqlite(format!(
            "the file does not start with `SQLite format 3` ({len} bytes); expected a SQLite 3 database"
        )));
    }
    if header.len() < 100 {
        return Err(not_sqlite(format!(
            "the file is truncated: {len} bytes, shorter than the 100-byte SQLite header"
        )));
    }
    // Page size: bytes 16..18, big-endian; the value 1 means 65536.
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536u64,
        n => u64::from(n),
    };
    if page_size < 512 || !page_size.is_power_of_two() {
        return Err(not_sqlite(format!(
            "the header names an invalid page size ({page_size}); the file is damaged"
        )));
    }
    // In-header database size (bytes 28..32) is valid only when the "version-valid-for" number
    // (92..96) equals the change counter (24..28); older writers leave it stale.
    let page_count = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    let valid = header[92..96] == header[24..28];
    if valid && page_count > 0 && len < page_count.saturating_mul(page_size) {
        return Err(not_sqlite(format!(
            "the file is truncated: {len} bytes, but its header says {page_count} pages of {page_size} bytes ({} bytes)",
            page_count.saturating_mul(page_size)
        )));
    }
    Ok(())
}

pub(super) fn open_copy(copy: &Path, mode: OpenFlags) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(copy, mode | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    // Opening is lazy: read the schema now so a refusal (WAL recovery on a read-only handle,
    // a malformed image) surfaces here.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })?;
    Ok(conn)
}
