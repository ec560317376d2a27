"""Statements through psql against the stack's PostgreSQL (PG_HOST, PG_PORT,
PG_USER, PG_DATABASE of stack.env)."""
import subprocess


class PsqlError(RuntimeError):
    pass


def sql(env, statement, timeout=30):
    """Runs `statement` (one or several, `;`-separated: the last one's rows come back) and returns
    the rows as lists of strings. Raises PsqlError with psql's message when it fails.
    `timeout`: seconds, or None for bulk work that takes as long as it takes."""
    run = subprocess.run(
        ["psql", "-h", env["PG_HOST"], "-p", env["PG_PORT"], "-U", env["PG_USER"], "-d", env["PG_DATABASE"],
         "-AtqF", "\t", "-v", "ON_ERROR_STOP=1", "-c", statement],
        capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        raise PsqlError(run.stderr.strip())
    return [line.split("\t") for line in run.stdout.splitlines() if line]


def count(env, statement, timeout=30):
    """The single number a `SELECT count(*) …` returns."""
    return int(sql(env, statement, timeout=timeout)[0][0])
