"""Full session ids (bearer secrets) in the stack's logs. Logs name a session by
its first six characters only (SessionID.description)."""
import os
import re

from geochat_support.db import sql

SESSION_ID = re.compile(r"(?<![0-9a-z])[0-9a-v]{26}(?![0-9a-z])")


def session_id_leaks(stack):
    """(leaks, lines scanned): every log line under STATE_DIR/logs that holds a session id this stack
    issued, as "file:line: text"."""
    issued = {row[0] for row in sql(stack, "SELECT id FROM session.sessions")}
    logs = os.path.join(stack["STATE_DIR"], "logs")
    leaks = []
    scanned = 0
    for name in sorted(os.listdir(logs)):
        with open(os.path.join(logs, name), errors="replace") as f:
            for number, line in enumerate(f, 1):
                scanned += 1
                for token in SESSION_ID.findall(line):
                    if token in issued:
                        leaks.append(f"{name}:{number}: {line.strip()[:200]}")
    return leaks, scanned
