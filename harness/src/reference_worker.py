# The client's own display read, for hermes-e2e's differential test (`harness/src/reference.rs`).
# Runs inside the client's venv, one process for many requests: one JSON request per stdin line,
# one JSON reply per stdout line. Request: {"db": PATH, "session": ID}. Reply:
# {"ok": true, "rows": [{"id": ROW_ID, "role": ..., "content": ...}, ...]} — the display history
# of `SessionDB(PATH).get_resume_conversations(ID)` in order — or {"ok": false, "error": TEXT}.
# The database is a scratch copy: SessionDB may migrate it.
import json
import sys
from pathlib import Path


def content_text(content):
    if content is None or isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False)


def main():
    from hermes_state import SessionDB  # imported once: the slow part

    out = sys.stdout
    # The client logs warnings to stdout/stderr; keep stdout for replies only.
    sys.stdout = sys.stderr
    for line in sys.stdin:
        try:
            request = json.loads(line)
            db = SessionDB(db_path=Path(request["db"]))
            try:
                _, display = db.get_resume_conversations(request["session"])
            finally:
                close = getattr(db, "close", None)
                if close is not None:
                    close()
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
