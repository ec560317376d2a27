"""Helpers for the admin API tests: an admin account made by the bootstrap
command of the session service, JSON requests with a bearer token."""
import json
import os
import secrets
import subprocess
import urllib.error
import urllib.request

from geochat_support.stack import read_instance_env
from geochat_support.waiting import wait_until


class JSONResponse:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    @property
    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def __repr__(self):
        return f"<{self.status} {self.body[:400]!r}>"


# A gateway's public URL → its operators' listener (admin API, /status,
# /metrics), filled by the `stack` fixture from stack.env's GATEWAY_ADMIN_URLS.
ADMIN_OF = {}


def admin_url(gateway):
    """The operators' listener of the gateway at this public URL (a URL that is no public one is taken as it is)."""
    return ADMIN_OF.get(gateway, gateway)


def api(gateway, method, path, body=None, token=None, raw=None, timeout=20):
    """One admin API request to the gateway's operators' listener; never raises on 4xx/5xx."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(admin_url(gateway) + "/admin/" + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            response = JSONResponse(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        response = JSONResponse(e.code, e.headers, e.read())
    assert response.headers.get("Content-Type") == "application/json", response
    return response


def assert_api_error(response, status, code):
    assert response.status == status, response
    assert response.json["error"]["code"] == code, response
    assert response.json["error"]["message"], response


def session_env(stack):
    """The environment the session service runs with (PostgreSQL settings)."""
    env = dict(os.environ)
    env.update(read_instance_env(stack, "session-1"))
    env["LD_LIBRARY_PATH"] = os.path.join(stack["ROOT"], ".runtime", "lib")
    return env


# Every admin password the tests made, for the scan of the logs for secrets (log_scan.py).
ISSUED_PASSWORDS = set()


def bootstrap_admin(stack, name=None, password=None, extra=()):
    """`geochat-session bootstrap-admin --name NAME`, the password on standard input."""
    name = name or "adm" + secrets.token_hex(5)
    password = password or secrets.token_urlsafe(18)
    ISSUED_PASSWORDS.add(password)
    run = subprocess.run(
        [os.path.join(stack["BIN_DIR"], "geochat-session"), "bootstrap-admin", "--name", name, *extra],
        input=password + "\n", capture_output=True, text=True, env=session_env(stack), timeout=120)
    return name, password, run


def login(gateway, name, password):
    response = api(gateway, "POST", "login", {"name": name, "password": password})
    assert response.status == 200, response
    return response.json["token"]


def until_status(gateway, method, path, status, token, timeout=10, body=None):
    return wait_until(lambda: api(gateway, method, path, body, token=token).status == status, timeout=timeout,
                      interval=0.2, message=f"{method} {path} answering {status} on {gateway}")
