"""Secrets in the stack's logs: full session ids (bearer secrets; logs name a
session by its first six characters only, SessionID.description), admin bearer
tokens (`gca_…`, whoever's), and the admin passwords the tests made."""
import os
import re

from geochat_support.db import sql

SESSION_ID = re.compile(r"(?<![0-9a-z])[0-9a-v]{26}(?![0-9a-z])")
ADMIN_TOKEN = re.compile(r"gca_[A-Za-z0-9_-]{16,}")


def session_id_leaks(stack, passwords=()):
    """(leaks, lines scanned): every log line under STATE_DIR/logs that holds a session id this stack
    issued, an admin token, or one of `passwords`, as "file:line: text" (the secret itself cut out)."""
    issued = {row[0] for row in sql(stack, "SELECT id FROM session.sessions")}
    passwords = [p for p in passwords if len(p) >= 12]
    logs = os.path.join(stack["STATE_DIR"], "logs")
    leaks = []
    scanned = 0
    for name in sorted(os.listdir(logs)):
        with open(os.path.join(logs, name), errors="replace") as f:
            for number, line in enumerate(f, 1):
                scanned += 1
                found = [t for t in SESSION_ID.findall(line) if t in issued] + ADMIN_TOKEN.findall(line) \
                    + [p for p in passwords if p in line]
                for secret in found:
                    leaks.append(f"{name}:{number}: {line.strip().replace(secret, '<secret>')[:200]}")
    return leaks, scanned
