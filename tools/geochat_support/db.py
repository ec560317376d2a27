"""Statements through psql against the stack's PostgreSQL (PG_HOST, PG_PORT,
PG_USER, PG_DATABASE and PG_PASSWORD_FILE of stack.env)."""
import os
import subprocess
import uuid


def psql_environment(env):
    """This process's environment with the stack's PostgreSQL password (a stack made before
    passwords has no password file, and needs none)."""
    environment = dict(os.environ)
    file = env.get("PG_PASSWORD_FILE")
    if file and os.path.exists(file):
        with open(file) as f:
            environment["PGPASSWORD"] = f.readline().strip()
    return environment


class PsqlError(RuntimeError):
    pass


def sql(env, statement, timeout=30):
    """Runs `statement` (one or several, `;`-separated: the last one's rows come back) and returns
    the rows as lists of strings. Raises PsqlError with psql's message when it fails.
    `timeout`: seconds, or None for bulk work that takes as long as it takes."""
    run = subprocess.run(
        ["psql", "-h", env["PG_HOST"], "-p", env["PG_PORT"], "-U", env["PG_USER"], "-d", env["PG_DATABASE"],
         "-AtqF", "\t", "-v", "ON_ERROR_STOP=1", "-c", statement],
        capture_output=True, text=True, timeout=timeout, env=psql_environment(env))
    if run.returncode != 0:
        raise PsqlError(run.stderr.strip())
    return [line.split("\t") for line in run.stdout.splitlines() if line]


def count(env, statement, timeout=30):
    """The single number a `SELECT count(*) …` returns."""
    return int(sql(env, statement, timeout=timeout)[0][0])


def insert_old_messages(env, room, n):
    """Gives `room` a history of `n` messages (ids 1…n, "old words <id>") written straight into
    messaging's tables, as if said long ago: what a gateway does not hold must be read from PostgreSQL."""
    tag = uuid.uuid4().hex[:8]
    sql(env, f"""
        INSERT INTO messaging.room_logs (room_id, last_id) VALUES ({room}, {n})
        ON CONFLICT (room_id) DO UPDATE SET last_id = {n};
        INSERT INTO messaging.messages (room_id, id, nick, text, idempotency_key)
        SELECT {room}, k, 'old', 'old words ' || k, 'old-{tag}-' || k FROM generate_series(1, {n}) k""")
