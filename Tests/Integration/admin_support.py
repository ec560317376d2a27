"""Helpers for the admin API tests: an admin account made by the bootstrap
command of the session service, JSON requests with a bearer token."""
from geochat_support import admin
from geochat_support.admin import JSONResponse, session_env  # noqa: F401 (the tests' names)
from geochat_support.waiting import wait_until


# A gateway's public URL → its operators' listener (admin API, /status,
# /metrics), filled by the `stack` fixture from stack.env's GATEWAY_ADMIN_URLS.
ADMIN_OF = {}


def admin_url(gateway):
    """The operators' listener of the gateway at this public URL (a URL that is no public one is taken as it is)."""
    return ADMIN_OF.get(gateway, gateway)


def api(gateway, method, path, body=None, token=None, raw=None, timeout=20):
    """One admin API request to the gateway's operators' listener; never raises on 4xx/5xx."""
    response = admin.request(admin_url(gateway), method, path, body, token=token, raw=raw, timeout=timeout)
    assert response.headers.get("Content-Type") == "application/json", response
    return response


def assert_api_error(response, status, code):
    assert response.status == status, response
    assert response.json["error"]["code"] == code, response
    assert response.json["error"]["message"], response


# Every admin password the tests made, for the scan of the logs for secrets (log_scan.py).
ISSUED_PASSWORDS = set()


def bootstrap_admin(stack, name=None, password=None, extra=()):
    """`geochat-session bootstrap-admin --name NAME`, the password on standard input."""
    name, password, run = admin.bootstrap_admin(stack, name, password, extra)
    ISSUED_PASSWORDS.add(password)
    return name, password, run


def login(gateway, name, password):
    response = api(gateway, "POST", "login", {"name": name, "password": password})
    assert response.status == 200, response
    return response.json["token"]


def until_status(gateway, method, path, status, token, timeout=10, body=None):
    return wait_until(lambda: api(gateway, method, path, body, token=token).status == status, timeout=timeout,
                      interval=0.2, message=f"{method} {path} answering {status} on {gateway}")
