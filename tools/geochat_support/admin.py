"""The admin API from Python: an admin account made by the session service's
bootstrap command, and JSON requests with a bearer token (the integration
tests' admin_support.py and the moderation benchmark)."""
import json
import os
import secrets
import subprocess
import urllib.error
import urllib.request

from .stack import read_instance_env


class JSONResponse:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    @property
    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def __repr__(self):
        return f"<{self.status} {self.body[:400]!r}>"


def session_env(stack):
    """The environment the session service runs with (PostgreSQL settings)."""
    env = dict(os.environ)
    env.update(read_instance_env(stack, "session-1"))
    env["LD_LIBRARY_PATH"] = os.path.join(stack["ROOT"], ".runtime", "lib")
    return env


def bootstrap_admin(stack, name=None, password=None, extra=()):
    """`geochat-session bootstrap-admin --name NAME`, the password on standard input: (name, password, run)."""
    name = name or "adm" + secrets.token_hex(5)
    password = password or secrets.token_urlsafe(18)
    run = subprocess.run(
        [os.path.join(stack["BIN_DIR"], "geochat-session"), "bootstrap-admin", "--name", name, *extra],
        input=password + "\n", capture_output=True, text=True, env=session_env(stack), timeout=120)
    return name, password, run


def request(operators_url, method, path, body=None, token=None, raw=None, timeout=20):
    """One admin API request to a gateway's operators' listener; never raises on 4xx/5xx."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    call = urllib.request.Request(operators_url + "/admin/" + path, data=data, method=method)
    if data is not None:
        call.add_header("Content-Type", "application/json")
    if token:
        call.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(call, timeout=timeout) as r:
            return JSONResponse(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return JSONResponse(e.code, e.headers, e.read())
