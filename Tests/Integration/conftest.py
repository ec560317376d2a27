"""Fixtures for the integration tests: they drive the legacy HTTP protocol
against a real stack (gateways, services, PostgreSQL, Kafka) that
deploy/test.sh starts and describes in the file GEOCHAT_STACK_ENV."""
import os
import re
import shlex
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import xml.dom.minidom

import pytest

DECLARATION = '<?xml version="1.0" encoding="UTF-8" ?>'


def _read_stack_env():
    path = os.environ.get("GEOCHAT_STACK_ENV")
    if not path:
        pytest.fail("GEOCHAT_STACK_ENV is not set: run the integration tests through deploy/test.sh")
    values = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, value = line.split("=", 1)
                values[key] = " ".join(shlex.split(value))
    return values


@pytest.fixture(scope="session")
def stack():
    env = _read_stack_env()
    env["gateways"] = env["GATEWAY_URLS"].split()
    assert len(env["gateways"]) >= 2, "the integration tests need two gateways"
    return env


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    @property
    def text(self):
        return self.body.decode("utf-8")

    def dom(self):
        return xml.dom.minidom.parseString(self.body)

    def __repr__(self):
        return f"<{self.status} {self.body[:300]!r}>"


def http(url, data=None, timeout=10, headers=None):
    """GET (or POST when data is given) without raising on 4xx/5xx."""
    body = data.encode() if isinstance(data, str) else data
    request = urllib.request.Request(url, data=body, headers=headers or {})
    if body is not None and not (headers and "Content-Type" in headers):
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return Response(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return Response(e.code, e.headers, e.read())


def check_xml(response):
    """The contract's envelope: declaration first, the content type, well-formed."""
    assert response.headers.get("Content-Type") == "text/xml; charset=utf-8", response
    assert response.text.startswith(DECLARATION), response
    response.dom()  # strict parser: raises on anything not well-formed
    if shutil.which("xmllint"):
        run = subprocess.run(["xmllint", "--noout", "-"], input=response.body, capture_output=True)
        assert run.returncode == 0, run.stderr
    return response


def chat(gateway, method="GET", **params):
    query = urllib.parse.urlencode(params)
    if method == "POST":
        return check_xml(http(gateway + "/chat.php", data=query))
    return check_xml(http(gateway + "/chat.php?" + query))


def raw_chat(gateway, query, body=None):
    """A request whose query string (and body) are sent exactly as given."""
    return check_xml(http(gateway + "/chat.php?" + query, data=body))


def error_code(response):
    root = response.dom().documentElement
    assert root.tagName == "error", response
    return root.getAttribute("code")


def assert_error(response, status, code):
    assert response.status == status, response
    assert error_code(response) == code, response


def text_of(node, tag):
    return node.getElementsByTagName(tag)[0].firstChild.data if node.getElementsByTagName(tag)[0].firstChild else ""


def start(gateway, nick=None):
    response = chat(gateway, v=5, cmd="start", nick=nick or unique_nick())
    assert response.status == 200, response
    session = response.dom().documentElement
    assert session.tagName == "sessionid"
    value = session.firstChild.data
    assert re.fullmatch(r"[0-9a-v]{26}", value), value
    return value


def create(gateway, session, lon, lat, z, topic, **extra):
    response = chat(gateway, cmd="create", sessionid=session, lon=lon, lat=lat, z=z, topic=topic, **extra)
    assert response.status == 200, response
    return room_of(response.dom().documentElement)


def room_of(node):
    return {
        "id": int(text_of(node, "id")),
        "longitude": text_of(node, "longitude"),
        "latitude": text_of(node, "latitude"),
        "z": int(text_of(node, "z")),
        "topic": text_of(node, "topic"),
    }


def rooms_in(response):
    assert response.status == 200, response
    assert response.dom().documentElement.tagName == "chats"
    return [room_of(n) for n in response.dom().getElementsByTagName("chat")]


def say(gateway, session, room, text):
    response = chat(gateway, cmd="say", sessionid=session, chatid=room, msg=text)
    assert response.status == 200, response
    element = response.dom().documentElement
    assert element.tagName == "success"
    return int(element.getAttribute("id"))


def messages(gateway, room, past=0, **extra):
    response = chat(gateway, cmd="messages", chatid=room, past=past, **extra)
    assert response.status == 200, response
    root = response.dom().documentElement
    assert root.tagName == "messages" and root.getAttribute("chatid") == str(room)
    return message_list(root)


def message_list(root):
    """The `<message>` elements of a `<messages>` (or the lobby's `<chat>`) answer."""
    return [
        {
            "id": int(m.getAttribute("id")),
            "added": m.getAttribute("added"),
            "user": text_of(m, "user"),
            "text": text_of(m, "text"),
        }
        for m in root.getElementsByTagName("message")
    ]


def wait_until(condition, timeout=10.0, interval=0.1, message="condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = condition()
        if last:
            return last
        time.sleep(interval)
    pytest.fail(f"{message} not met within {timeout}s (last: {last!r})")


def unique_nick():
    return "u" + uuid.uuid4().hex[:12]


def unique_topic():
    return "topic " + uuid.uuid4().hex[:10]


def sql(stack, statement):
    """One statement through psql; rows as lists of strings."""
    run = subprocess.run(
        ["psql", "-h", stack["PG_HOST"], "-p", stack["PG_PORT"], "-U", stack["PG_USER"], "-d", stack["PG_DATABASE"],
         "-AtF", "\t", "-v", "ON_ERROR_STOP=1", "-c", statement],
        capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    return [line.split("\t") for line in run.stdout.splitlines() if line]


def count(stack, statement):
    return int(sql(stack, statement)[0][0])


def stack_command(stack, *args):
    run = subprocess.run(
        ["bash", os.path.join(stack["ROOT"], "deploy", "stack.sh"), *args, "--state-dir", stack["STATE_DIR"]],
        capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
