"""Writes a small state.db through the REAL client storage API of hermes-agent 0.19.0 (~/.cache/hermes-e2e/legacy-probe/bin/python): plain turns, then
compaction rows shaped like the compressor's output. Dumped to SQL with dump_rows.py."""
import os
os.environ["HERMES_HOME"] = "/tmp/probe3/home"
os.makedirs("/tmp/probe3/home", exist_ok=True)
from pathlib import Path
from hermes_state import SessionDB
from agent.context_compressor import SUMMARY_PREFIX, _SUMMARY_END_MARKER
db = SessionDB(db_path=Path("/tmp/probe3/home/state.db"))
sid = "legacy"
db.create_session(sid, source="cli")
said = [("user","hi"),("assistant","Hello!"),("user","ok"),("assistant","A"),("user","ok"),("assistant","B")]
for r, c in said:
    db.append_message(session_id=sid, role=r, content=c)
summary = SUMMARY_PREFIX + "\nThe user said ok twice.\n\n" + _SUMMARY_END_MARKER
compacted = [{"role":"user","content":"hi"},{"role":"assistant","content":"Hello!"},{"role":"user","content":summary},{"role":"user","content":"ok"},{"role":"assistant","content":"B"}]
db.archive_and_compact(sid, compacted)
db.append_message(session_id=sid, role="user", content="ok")
db.append_message(session_id=sid, role="assistant", content="C")
model, disp = db.get_resume_conversations(sid)
print("client display:", [(m["role"], m["content"][:30]) for m in disp])
