//! Unit tests of the read-only store: opening, schemas, lineage and rows.

use super::copy::SQLITE_MAGIC;
use super::testdb::{Msg, TestDb};
use super::*;

fn file_bytes(p: &Path) -> Vec<u8> {
    // The bytes themselves stand in for a hash: test files are tiny.
    std::fs::read(p).unwrap()
}

/// A SQLite file `name` in a fresh temporary directory, created by running `sql`: the directory
/// (kept while it is held) and the file's path.
fn sqlite_file(name: &str, sql: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    Connection::open(&p).unwrap().execute_batch(sql).unwrap();
    (dir, p)
}

/// The error opening `p`, as printed; asserts that it names the file.
fn open_error(p: &Path) -> String {
    let msg = match Store::open(p) {
        Ok(_) => panic!("expected an error"),
        Err(e) => crate::chain::one_line(&e),
    };
    let name = p.file_name().unwrap().to_string_lossy();
    assert!(
        msg.contains(name.as_ref()),
        "the error must name `{name}`: {msg}"
    );
    msg
}

/// The ids of `tip`'s lineage, root first.
fn lineage_ids(store: &Store, tip: &str) -> Vec<String> {
    store
        .lineage(tip)
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect()
}

/// The error opening a file `name` in `dir` holding `bytes`, as [`open_error`] reads it.
fn file_error(dir: &std::path::Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    open_error(&p)
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nope.db");
    let r = Store::open(&p);
    assert!(matches!(r, Err(StoreError::Io { .. })));
    open_error(&p);
}

#[test]
fn directory_is_rejected_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let msg = open_error(dir.path());
    assert!(msg.contains(&dir.path().display().to_string()), "{msg}");
    assert!(msg.contains("directory"), "{msg}");
}

#[test]
fn text_file_is_not_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let msg = file_error(dir.path(), "notes.txt", b"hello, I am not a database\n");
    assert!(msg.contains("SQLite format 3"), "{msg}");
}

#[test]
fn empty_file_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let msg = file_error(dir.path(), "empty.db", b"");
    assert!(msg.contains("empty (0 bytes)"), "{msg}");
}

#[test]
fn truncated_file_is_rejected() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("s", None, 1.0, None);
    for i in 0..200 {
        db.msg(&Msg::new(
            "s",
            "user",
            &format!("message {i} {}", "x".repeat(300)),
        ));
    }
    let bytes = std::fs::read(&db.path).unwrap();
    assert!(bytes.len() > 8192);
    for cut in [50usize, 4096 + 17, bytes.len() / 2] {
        let msg = file_error(db.folder(), &format!("cut{cut}.db"), &bytes[..cut]);
        assert!(msg.contains("truncated"), "{msg}");
    }
}

#[test]
fn garbage_after_a_valid_header_is_an_error_not_a_panic() {
    let db = TestDb::new(Schema::Uid);
    let mut bytes = std::fs::read(&db.path).unwrap();
    for b in bytes.iter_mut().skip(100) {
        *b = 0xA5;
    }
    file_error(db.folder(), "garbled.db", &bytes);
}

#[test]
fn sqlite_without_hermes_tables_is_a_schema_error() {
    let sessions_only = "CREATE TABLE sessions (id TEXT, started_at REAL);";
    let (_dir, p) = sqlite_file("other.db", sessions_only);
    let r = Store::open(&p);
    assert!(matches!(r, Err(StoreError::Schema { .. })));
    let msg = open_error(&p);
    assert!(msg.contains("`messages`"), "{msg}");
}

#[test]
fn missing_required_column_is_named() {
    let (_dir, p) = sqlite_file(
        "cols.db",
        "CREATE TABLE sessions (id TEXT, started_at REAL);
         CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, content TEXT, timestamp REAL);",
    );
    let msg = open_error(&p);
    assert!(msg.contains("table `messages` with column `role`"), "{msg}");
}

#[test]
fn users_file_is_byte_identical_after_open_and_reads() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("s", None, 1.0, None);
    db.msg(&Msg::new("s", "user", "hi"));
    let before = file_bytes(&db.path);
    let mtime = std::fs::metadata(&db.path).unwrap().modified().unwrap();
    {
        let store = db.open();
        let s = store.latest_session().unwrap().unwrap();
        let lineage = store.lineage(&s.id).unwrap();
        let ids: Vec<String> = lineage.iter().map(|s| s.id.clone()).collect();
        assert_eq!(store.rows(&ids).unwrap().len(), 1);
    }
    assert_eq!(file_bytes(&db.path), before);
    assert_eq!(
        std::fs::metadata(&db.path).unwrap().modified().unwrap(),
        mtime
    );
    // No sibling files appear next to the user's file.
    let names: Vec<String> = std::fs::read_dir(db.folder())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["state.db".to_string()]);
}

#[test]
fn wal_sibling_is_copied_and_read() {
    // A database whose newest rows live only in its `-wal`: the copy must include it.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("state.db");
    let c = Connection::open(&p).unwrap();
    c.execute_batch(testdb::SCHEMA_0_22).unwrap();
    c.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    c.execute_batch("PRAGMA wal_autocheckpoint=0;").unwrap();
    c.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES ('w', 'cli', 5.0)",
        [],
    )
    .unwrap();
    c.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('w', 'user', 'only in wal', 6.0)",
        [],
    )
    .unwrap();
    let wal = dir.path().join("state.db-wal");
    assert!(std::fs::metadata(&wal).unwrap().len() > 0);
    let before_db = file_bytes(&p);
    let before_wal = file_bytes(&wal);
    {
        let store = Store::open(&p).unwrap();
        let rows = store.rows(&["w".to_string()]).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].content.as_deref(), Some("only in wal"));
    }
    assert_eq!(file_bytes(&p), before_db);
    assert_eq!(file_bytes(&wal), before_wal);
    drop(c);
}

#[test]
fn detects_uid_and_legacy_schemas_and_defaults_absent_columns() {
    let mut db = TestDb::new(Schema::Legacy);
    db.session("s", None, 1.0, None);
    let mut m = Msg::new("s", "user", "legacy hello");
    m.active = 1;
    db.msg(&m);
    let store = db.open();
    assert_eq!(store.schema(), Schema::Legacy);
    let rows = store.rows(&["s".into()]).unwrap();
    assert_eq!(rows[0].message_uid, None);
    assert!(!rows[0].compressed_summary);
    assert!(rows[0].active && !rows[0].compacted);

    let db = TestDb::new(Schema::Uid);
    assert_eq!(db.open().schema(), Schema::Uid);
}

#[test]
fn very_old_database_without_active_or_compacted_reads_as_live() {
    let (_dir, p) = sqlite_file(
        "old.db",
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, started_at REAL NOT NULL);
         CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL);
         INSERT INTO sessions VALUES ('o', 1.0);
         INSERT INTO messages VALUES (1, 'o', 'user', 'hi', 2.0);",
    );
    let store = Store::open(&p).unwrap();
    let s = store.latest_session().unwrap().unwrap();
    assert_eq!(s.parent_session_id, None);
    let rows = store.rows(&["o".into()]).unwrap();
    assert!(rows[0].active && !rows[0].compacted && rows[0].tool_calls.is_none());
}

#[test]
fn invalid_utf8_and_blob_content_and_null_flags_read_leniently() {
    let db = TestDb::new(Schema::Uid);
    db.session("s", None, 1.0, None);
    db.conn
        .execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', CAST(X'68C3A96CFF6C6F' AS TEXT), 1.0)",
            [],
        )
        .unwrap();
    db.conn
        .execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'assistant', X'6869FE', 2.0)",
            [],
        )
        .unwrap();
    // `active` is NOT NULL in the real DDL; an old reconciled column could hold NULL.
    db.conn
        .execute_batch(
            "CREATE TABLE m2 AS SELECT * FROM messages; DROP TABLE messages; ALTER TABLE m2 RENAME TO messages;
             UPDATE messages SET active = NULL, compacted = NULL WHERE role = 'assistant';",
        )
        .unwrap();
    let store = db.open();
    let rows = store.rows(&["s".into()]).unwrap();
    assert_eq!(rows[0].content.as_deref(), Some("hél\u{FFFD}lo"));
    assert_eq!(rows[1].content.as_deref(), Some("hi\u{FFFD}"));
    assert!(rows[1].active && !rows[1].compacted);
}

#[test]
fn latest_session_with_messages_skips_empty_sessions() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("talk", None, 1.0, None);
    db.session("empty", None, 2.0, None);
    let store = db.open();
    assert_eq!(store.latest_session_with_messages().unwrap(), None);
    db.msg(&Msg::new("talk", "user", "hi"));
    let store = db.open();
    assert_eq!(store.latest_session().unwrap().unwrap().id, "empty");
    assert_eq!(
        store.latest_session_with_messages().unwrap().unwrap().id,
        "talk"
    );
}

#[test]
fn sessions_latest_and_no_such_session() {
    let db = TestDb::new(Schema::Uid);
    db.session("b", None, 20.0, None);
    db.session("a", None, 10.0, None);
    db.session("c", None, 20.0, None); // same started_at as `b`, inserted later
    let store = db.open();
    let ids: Vec<String> = store
        .sessions()
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert_eq!(store.latest_session().unwrap().unwrap().id, "c");
    let e = store.lineage("zzz").unwrap_err();
    assert!(matches!(e, StoreError::NoSuchSession { .. }));
    assert!(e.to_string().contains("`zzz`") && e.to_string().contains("state.db"));
    assert!(TestDb::new(Schema::Uid)
        .open()
        .latest_session()
        .unwrap()
        .is_none());
}

#[test]
fn lineage_follows_compression_parents_and_branches() {
    let db = TestDb::new(Schema::Uid);
    db.session("root", None, 1.0, Some("compression"));
    db.session("mid", Some("root"), 2.0, Some("compression"));
    db.session("tip", Some("mid"), 3.0, None);
    // A /branch child of `tip`'s lineage: its parent did not end by compression.
    db.session("plain", None, 4.0, None);
    db.session("branch", Some("plain"), 5.0, None);
    // A `/branch` child of a compression-ended parent: it continues the parent as of the fork.
    db.session("fork", Some("mid"), 6.0, None);
    db.conn
        .execute(
            "UPDATE sessions SET model_config = '{\"_branched_from\": \"mid\"}' WHERE id = 'fork'",
            [],
        )
        .unwrap();
    // An inherited marker naming another session does not make a fork.
    db.conn
        .execute(
            "UPDATE sessions SET model_config = '{\"_branched_from\": \"elsewhere\"}' WHERE id = 'tip'",
            [],
        )
        .unwrap();
    let store = db.open();
    let ids = |tip: &str| lineage_ids(&store, tip);
    assert_eq!(ids("tip"), ["root", "mid", "tip"]);
    assert_eq!(ids("mid"), ["root", "mid"]);
    assert_eq!(ids("branch"), ["branch"]);
    assert_eq!(ids("fork"), ["root", "mid", "fork"]);
}

/// Rule 9: a parent read with its `/branch` child is read as of the fork — rows written to it
/// after the branch's first row are left out (upstream #77375); read alone it keeps them.
#[test]
fn rows_of_a_branch_lineage_leave_out_the_parents_rows_after_the_fork() {
    let mut db = TestDb::new(Schema::Uid);
    db.session("parent", None, 1.0, Some("branched"));
    db.session("branch", Some("parent"), 5.0, None);
    db.conn
        .execute(
            "UPDATE sessions SET model_config = '{\"_branched_from\": \"parent\"}' WHERE id = 'branch'",
            [],
        )
        .unwrap();
    let before = db
        .msg(&Msg::new("parent", "user", "asked before the fork"))
        .0;
    let copy = db
        .msg(&Msg::new("branch", "user", "asked before the fork"))
        .0;
    let after = db
        .msg(&Msg::new(
            "parent",
            "user",
            "asked in the parent after the fork",
        ))
        .0;
    let store = db.open();
    let lineage = lineage_ids(&store, "branch");
    assert_eq!(lineage, ["parent", "branch"]);
    let ids: Vec<i64> = store.rows(&lineage).unwrap().iter().map(|r| r.id).collect();
    assert_eq!(ids, [before, copy]);
    let parent: Vec<i64> = store
        .rows(&["parent".into()])
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(parent, [before, after]);
}

#[test]
fn lineage_survives_cycles_and_missing_parents() {
    let db = TestDb::new(Schema::Uid);
    db.session("x", Some("y"), 1.0, Some("compression"));
    db.session("y", Some("x"), 2.0, Some("compression"));
    db.session("orphan", Some("gone"), 3.0, None);
    let store = db.open();
    assert_eq!(lineage_ids(&store, "y"), ["x", "y"]);
    assert_eq!(lineage_ids(&store, "orphan"), ["orphan"]);
}

#[test]
fn rows_are_ordered_by_id_across_sessions_and_chunks() {
    let mut db = TestDb::new(Schema::Uid);
    let mut sessions = Vec::new();
    for i in 0..(IN_CHUNK + 3) {
        let id = format!("s{i:04}");
        db.session(&id, None, i as f64, None);
        sessions.push(id);
    }
    // Interleave sessions so id order differs from session order.
    for i in (0..sessions.len()).rev() {
        db.msg(&Msg::new(&sessions[i], "user", "x"));
    }
    let store = db.open();
    let rows = store.rows(&sessions).unwrap();
    assert_eq!(rows.len(), sessions.len());
    assert!(rows.windows(2).all(|w| w[0].id < w[1].id));
    assert!(store.rows(&[]).unwrap().is_empty());
}

#[test]
fn snapshot_keeps_what_only_the_wal_holds_and_needs_no_siblings() {
    // As the 0.19 Ink TUI leaves it while running: the schema and every row only in the `-wal`,
    // the main file a bare header. A file copy of the main file alone has no `messages` table.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("state.db");
    let c = Connection::open(&p).unwrap();
    c.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    c.execute_batch("PRAGMA wal_autocheckpoint=0;").unwrap();
    c.execute_batch(testdb::SCHEMA_0_22).unwrap();
    c.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES ('w', 'cli', 5.0)",
        [],
    )
    .unwrap();
    for i in 0..6 {
        c.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('w', 'user', ?1, ?2)",
            rusqlite::params![format!("row {i}"), 6.0 + f64::from(i)],
        )
        .unwrap();
    }
    let wal = dir.path().join("state.db-wal");
    let shm = dir.path().join("state.db-shm");
    let before = [&p, &wal, &shm].map(|f| file_bytes(f));

    let out = tempfile::tempdir().unwrap();
    let kept = out.path().join("state.db");
    std::fs::write(&kept, b"an older kept file, replaced").unwrap();
    snapshot_database(&p, &kept).unwrap();

    // The client's files are only read, the writer still holding them.
    assert_eq!([&p, &wal, &shm].map(|f| file_bytes(f)), before);
    // One file, rollback journal (header bytes 18 and 19 are 1), nothing beside it.
    let bytes = file_bytes(&kept);
    assert_eq!(&bytes[..16], SQLITE_MAGIC);
    assert_eq!((bytes[18], bytes[19]), (1, 1));
    let names: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["state.db"]);
    // It opens read-only as it is, and holds every row.
    let ro = Connection::open_with_flags(&kept, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let n: i64 = ro
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 6);
    drop(ro);
    assert_eq!(
        Store::open(&kept)
            .unwrap()
            .rows(&["w".to_string()])
            .unwrap()
            .len(),
        6
    );
    drop(c);
}

#[test]
fn snapshot_of_a_file_that_is_not_sqlite_names_it() {
    let (dir, p) = sqlite_file("state.db", "");
    std::fs::write(&p, b"not a database at all, just some text here").unwrap();
    let err = snapshot_database(&p, &dir.path().join("kept.db"))
        .unwrap_err()
        .to_string();
    assert!(err.contains(&p.display().to_string()), "{err}");
}
