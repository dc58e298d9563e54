# The client's own display read, for hermes-e2e's differential test (`harness/src/reference.rs`).
# Runs inside the client's venv, one process for many requests: one JSON request per stdin line,
# one JSON reply per stdout line. Requests:
# - {"db": PATH, "session": ID}: `SessionDB(PATH).get_resume_conversations(ID)`, a fresh SessionDB
#   on that file (a scratch copy: SessionDB may migrate it);
# - {"load": PATH, "session": ID}: the rows of `sessions`, `messages` and `system_prompts` in PATH
#   replace those of the worker's own database, which one SessionDB, opened (and migrated) once
#   per worker, then reads (see `Loaded`). Opening a SessionDB (config, schema, sidecar checks)
#   is most of the cost of a fresh read; the read itself is the same query on the same rows.
# Reply: {"ok": true, "rows": [{"id": ROW_ID, "role": ..., "content": ...}, ...]} — the display
# history in order — or {"ok": false, "error": TEXT}.
import json
import sqlite3
import sys
from pathlib import Path

# Parents before children; deleted in the reverse order.
LOADED_TABLES = ("system_prompts", "sessions", "messages")


def content_text(content):
    if content is None or isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False)


def columns(conn, schema, table):
    return [r[1] for r in conn.execute(f'PRAGMA {schema}.table_info("{table}")')]


class Loaded:
    """The worker's own database: created and migrated by one SessionDB, opened once; each load
    replaces its rows of `sessions`, `messages` and `system_prompts` with those of a generated
    file (the columns both have; ids and row order kept), through a second connection.

    The client's write-side triggers on those tables (FTS index, display order, uid minting) are
    dropped once, so the rows the SessionDB reads are exactly the generated rows — as in a fresh
    open of the generated file, whose trimmed DDL has no triggers (the read uses none of what
    they maintain)."""

    def __init__(self, session_db_class, path):
        self.path = path
        self.db = session_db_class(db_path=path)
        self.conn = sqlite3.connect(path, isolation_level=None)
        # A scratch database: no fsync, and a rollback journal (if the client chose one) in memory.
        self.conn.execute("PRAGMA synchronous = OFF")
        if self.conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete":
            self.conn.execute("PRAGMA journal_mode = MEMORY")
        names = ", ".join("?" * len(LOADED_TABLES))
        triggers = self.conn.execute(
            f"SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ({names})",
            LOADED_TABLES,
        ).fetchall()
        for (name,) in triggers:
            self.conn.execute(f'DROP TRIGGER "{name}"')

    def load(self, source):
        conn = self.conn
        conn.execute("ATTACH DATABASE ? AS src", (str(source),))
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for table in reversed(LOADED_TABLES):
                    conn.execute(f'DELETE FROM main."{table}"')
                for table in LOADED_TABLES:
                    have = set(columns(conn, "main", table))
                    cols = ", ".join(f'"{c}"' for c in columns(conn, "src", table) if c in have)
                    if cols:
                        conn.execute(
                            f'INSERT INTO main."{table}" ({cols}) SELECT {cols} '
                            f'FROM src."{table}" ORDER BY rowid'
                        )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        finally:
            conn.execute("DETACH DATABASE src")


def close_db(db):
    close = getattr(db, "close", None)
    if close is not None:
        close()


def main():
    from hermes_state import SessionDB  # imported once: the slow part

    out = sys.stdout
    # The client logs warnings to stdout/stderr; keep stdout for replies only.
    sys.stdout = sys.stderr
    # The database "load" requests fill: beside this script, opened on the first such request.
    reused_path = Path(__file__).resolve().parent / "loaded.db"
    reused = None
    for line in sys.stdin:
        try:
            request = json.loads(line)
            if "load" in request:
                if reused is None:
                    reused = Loaded(SessionDB, reused_path)
                reused.load(request["load"])
                _, display = reused.db.get_resume_conversations(request["session"])
            else:
                db = SessionDB(db_path=Path(request["db"]))
                try:
                    _, display = db.get_resume_conversations(request["session"])
                finally:
                    close_db(db)
            reply = {
                "ok": True,
                "rows": [
                    {
                        "id": m.get("_row_id"),
                        "role": m.get("role"),
                        "content": content_text(m.get("content")),
                    }
                    for m in display
                ],
            }
        except Exception as e:  # reported, never fatal: the next request still works
            reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply, ensure_ascii=False) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
