"""Runs after every other integration test: no full session id issued on this
stack (they are bearer secrets) appears in any of its logs. Logs name a
session by its first six characters only (SessionID.description)."""
import os
import re

from geochat_support.db import sql

TOKEN = re.compile(r"(?<![0-9a-z])[0-9a-v]{26}(?![0-9a-z])")


def test_no_session_id_in_logs(stack):
    issued = {row[0] for row in sql(stack, "SELECT id FROM session.sessions")}
    assert len(issued) > 10, "the other tests started sessions"
    logs = os.path.join(stack["STATE_DIR"], "logs")
    leaks = []
    scanned = 0
    for name in sorted(os.listdir(logs)):
        with open(os.path.join(logs, name), errors="replace") as f:
            for number, line in enumerate(f, 1):
                scanned += 1
                for token in TOKEN.findall(line):
                    if token in issued:
                        leaks.append(f"{name}:{number}: {line.strip()[:200]}")
    assert scanned > 100, "the logs were read"
    assert not leaks, "full session ids in logs:\n" + "\n".join(leaks[:10])
