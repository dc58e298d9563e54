//! Test doubles of the client's data: small `state.db` files built with its real DDL.
//!
//! The DDL is `tests/data/schema_0_*.sql`; the store and display tests share these builders.

use super::{Schema, Store};
use rusqlite::{params, Connection};
use std::path::PathBuf;

pub(crate) use crate::client::stored::{SCHEMA_0_19, SCHEMA_0_22};

/// A state.db under construction in its own temporary directory, or in memory.
pub(crate) struct TestDb {
    /// The temporary directory holding `path` (`None` in memory).
    pub(crate) dir: Option<tempfile::TempDir>,
    pub(crate) path: PathBuf,
    pub(crate) conn: Connection,
    pub(crate) schema: Schema,
    next_ts: f64,
    /// The in-memory database `conn` writes (`None` for a file); after `conn`, so it is
    /// emptied and reused after `conn` closes.
    memory: Option<crate::history::Database>,
}

/// One message to insert; `Msg::new(..)` then adjust fields.
#[derive(Clone, Debug)]
pub(crate) struct Msg {
    pub(crate) session: String,
    pub(crate) role: String,
    pub(crate) content: Option<String>,
    pub(crate) ts: Option<f64>,
    pub(crate) active: i64,
    pub(crate) compacted: i64,
    pub(crate) summary: i64,
    pub(crate) uid: Option<String>,
    pub(crate) kind: Option<String>,
    pub(crate) meta: Option<String>,
    pub(crate) tool_call_id: Option<String>,
    pub(crate) tool_calls: Option<String>,
    pub(crate) tool_name: Option<String>,
}

impl Msg {
    pub(crate) fn new(session: &str, role: &str, content: &str) -> Msg {
        Msg {
            session: session.into(),
            role: role.into(),
            content: Some(content.into()),
            ts: None,
            active: 1,
            compacted: 0,
            summary: 0,
            uid: None,
            kind: None,
            meta: None,
            tool_call_id: None,
            tool_calls: None,
            tool_name: None,
        }
    }
}

impl TestDb {
    pub(crate) fn new(schema: Schema) -> TestDb {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let conn = Connection::open(&path).unwrap();
        TestDb::with_ddl(Some(dir), path, conn, schema)
    }

    /// An in-memory database (no file; see [`crate::history::Database`]): [`TestDb::open`]
    /// reads it through a connection of its own.
    pub(crate) fn in_memory(schema: Schema) -> TestDb {
        let memory = crate::history::Database::new(schema).unwrap();
        TestDb {
            dir: None,
            path: PathBuf::from("in-memory"),
            conn: memory.connect().unwrap(),
            schema,
            next_ts: 1_790_000_000.125,
            memory: Some(memory),
        }
    }

    fn with_ddl(
        dir: Option<tempfile::TempDir>,
        path: PathBuf,
        conn: Connection,
        schema: Schema,
    ) -> TestDb {
        // The client's Python `sqlite3` never enables foreign keys; tests insert dangling
        // parents on purpose.
        // `synchronous = OFF`: test files need no durability, and property tests write many.
        conn.execute_batch("PRAGMA foreign_keys = OFF; PRAGMA synchronous = OFF;")
            .unwrap();
        conn.execute_batch(match schema {
            Schema::Uid => SCHEMA_0_22,
            Schema::Legacy => SCHEMA_0_19,
        })
        .unwrap();
        TestDb {
            dir,
            path,
            conn,
            schema,
            next_ts: 1_790_000_000.125,
            memory: None,
        }
    }

    /// The temporary directory of a file database.
    pub(crate) fn folder(&self) -> &std::path::Path {
        self.dir.as_ref().expect("a file TestDb").path()
    }

    /// A database with the DDL of `schema` and the rows of `rows_sql` (INSERT statements).
    pub(crate) fn with_rows(schema: Schema, rows_sql: &str) -> TestDb {
        let db = TestDb::new(schema);
        db.conn.execute_batch(rows_sql).unwrap();
        db
    }

    /// Inserts a session row.
    pub(crate) fn session(&self, id: &str, parent: Option<&str>, started: f64, end: Option<&str>) {
        self.conn
            .execute(
                "INSERT INTO sessions (id, source, parent_session_id, started_at, end_reason) \
                 VALUES (?1, 'cli', ?2, ?3, ?4)",
                params![id, parent, started, end],
            )
            .unwrap();
    }

    /// Inserts a message row; returns `(id, timestamp)`. A missing timestamp is a fresh one.
    pub(crate) fn msg(&mut self, m: &Msg) -> (i64, f64) {
        let ts = m.ts.unwrap_or_else(|| {
            self.next_ts += 1.5;
            self.next_ts
        });
        let uid = self.schema == Schema::Uid;
        let sql = if uid {
            "INSERT INTO messages (session_id, role, content, timestamp, active, compacted, \
             _compressed_summary, message_uid, display_kind, display_metadata, tool_call_id, \
             tool_calls, tool_name) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
        } else {
            "INSERT INTO messages (session_id, role, content, timestamp, active, compacted, \
             tool_call_id, tool_calls, tool_name) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
        };
        let mut values: Vec<&dyn rusqlite::ToSql> = vec![
            &m.session,
            &m.role,
            &m.content,
            &ts,
            &m.active,
            &m.compacted,
        ];
        if uid {
            values.extend([&m.summary as &dyn rusqlite::ToSql, &m.uid, &m.kind, &m.meta]);
        }
        values.extend([
            &m.tool_call_id as &dyn rusqlite::ToSql,
            &m.tool_calls,
            &m.tool_name,
        ]);
        self.conn
            .prepare_cached(sql)
            .unwrap()
            .execute(values.as_slice())
            .unwrap();
        (self.conn.last_insert_rowid(), ts)
    }

    /// Opens the file through the real [`Store`] (the builder's connection stays open; the
    /// default rollback journal means every committed row is already in the file); an
    /// in-memory database through [`Store::from_connection`].
    pub(crate) fn open(&self) -> Store {
        match &self.memory {
            Some(memory) => Store::from_connection(memory.connect().unwrap(), &self.path).unwrap(),
            None => Store::open(&self.path).unwrap(),
        }
    }

    /// The kept [`Store`] of an in-memory database ([`crate::history::Database::store`]).
    pub(crate) fn memory_store(&self) -> &Store {
        let memory = self.memory.as_ref().expect("an in-memory TestDb");
        memory.store().unwrap()
    }
}
