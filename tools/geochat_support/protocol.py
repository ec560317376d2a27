"""The legacy (phone) protocol over HTTP: `/chat.php?cmd=…` answered with XML.

One answer type, `Response`, for three ways of sending:
- `http` / `chat`: one request on its own connection (urllib), for the integration tests;
- `Client`: a keep-alive connection to one gateway, for load from threads (fault harness, benchmarks);
- `AsyncPool`: keep-alive connections on asyncio streams, for the benchmarks' high-rate load.

Reading answers: the checked helpers (`check_xml`, `start`, `create`, `say`, `messages`, …) parse with
a strict XML parser and assert the contract; the `*_in(body)` functions are regular expressions over the
bytes, cheap enough for thousands of answers a second, and return None (or []) when there is no match."""
import asyncio
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import xml.dom.minidom
from http.client import HTTPConnection, HTTPException, HTTPMessage

DECLARATION = '<?xml version="1.0" encoding="UTF-8" ?>'
CONTENT_TYPE = "text/xml; charset=utf-8"
# The gateway's text for a 503 whose outcome is unknown (ProtocolError.outcomeUnknown).
OUTCOME_UNKNOWN_TEXT = b"may or may not have been carried out"

_SUCCESS_ID = re.compile(rb'<success id="(\d+)"')
_ERROR_CODE = re.compile(rb'<error code="([a-z_]+)">([^<]*)</error>')
_MESSAGE = re.compile(rb'<message added="[^"]*" id="(\d+)"><user>[^<]*</user><text>([^<]*)</text></message>')
_SESSION = re.compile(rb"<sessionid>([0-9a-v]{26})</sessionid>")
_ROOM_ID = re.compile(rb"<chat><id>(\d+)</id>")


class Response:
    """An answer (status, headers, body), how long it took, or the connection error instead of one
    (status None, `error` the exception's class name)."""
    __slots__ = ("status", "headers", "body", "latency", "error")

    def __init__(self, status, headers=None, body=b"", latency=0.0, error=None):
        self.status, self.headers, self.body, self.latency, self.error = status, headers, body, latency, error
        if self.headers is None:
            self.headers = HTTPMessage()

    @property
    def ok(self):
        return self.status == 200

    @property
    def text(self):
        return self.body.decode("utf-8")

    def dom(self):
        return xml.dom.minidom.parseString(self.body)

    @property
    def code(self):
        """The error code of an `<error>` answer, else None."""
        m = _ERROR_CODE.search(self.body)
        return m.group(1).decode() if m else None

    @property
    def outcome_unknown(self):
        """No answer, or a 503 that says the request may have been carried out."""
        if self.error is not None:
            return True
        return self.status == 503 and OUTCOME_UNKNOWN_TEXT in self.body

    def __repr__(self):
        if self.error is not None:
            return f"<no answer: {self.error}>"
        return f"<{self.status} {self.body[:300]!r}>"


def chat_path(**params):
    return "/chat.php?" + urllib.parse.urlencode(params)


# ---------------------------------------------------------------- answers parsed by regular expressions

def session_id_in(body):
    m = _SESSION.search(body)
    return m.group(1).decode() if m else None


def room_id_in(body):
    """The id of the room a `create` answer describes."""
    m = _ROOM_ID.search(body)
    return int(m.group(1)) if m else None


def success_id_in(body):
    """The message id of a `say` answer."""
    m = _SUCCESS_ID.search(body)
    return int(m.group(1)) if m else None


def message_ids_and_texts(body):
    """[(id, text)] of the messages in a `messages` answer (text with XML escapes as sent)."""
    return [(int(i), t.decode("utf-8")) for i, t in _MESSAGE.findall(body)]


# ---------------------------------------------------------------- one request, one connection

def http(url, data=None, timeout=10, headers=None):
    """GET (or POST when data is given) without raising on 4xx/5xx."""
    body = data.encode() if isinstance(data, str) else data
    request = urllib.request.Request(url, data=body, headers=headers or {})
    if body is not None and not (headers and "Content-Type" in headers):
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
    began = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return Response(r.status, r.headers, r.read(), time.monotonic() - began)
    except urllib.error.HTTPError as e:
        return Response(e.code, e.headers, e.read(), time.monotonic() - began)


def check_xml(response):
    """The contract's envelope: declaration first, the content type, well-formed."""
    assert response.headers.get("Content-Type") == CONTENT_TYPE, response
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


def say_as_a_phone(gateway, session, room, text, repeats=3):
    """A `say` as a phone makes it: one answered `503` (no answer in time) is repeated, the same
    text, up to `repeats` times a second apart, and the server stores it once (docs/protocol.md,
    `say`). For tests that build a room's messages, not for those that test the answers."""
    for _ in range(repeats):
        response = chat(gateway, cmd="say", sessionid=session, chatid=room, msg=text)
        if response.status != 503:
            break
        time.sleep(1)
    else:
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


def unique_nick():
    return "u" + uuid.uuid4().hex[:12]


def unique_topic():
    return "topic " + uuid.uuid4().hex[:10]


# ---------------------------------------------------------------- keep-alive, from threads

class Client:
    """One keep-alive connection to one gateway; reconnects after an error. Never raises on a
    failed request: the Response carries the error instead."""

    def __init__(self, base_url, timeout=10.0):
        parsed = urllib.parse.urlsplit(base_url)
        self.host, self.port, self.timeout = parsed.hostname, parsed.port, timeout
        self.conn = None

    def _connection(self):
        if self.conn is None:
            self.conn = HTTPConnection(self.host, self.port, timeout=self.timeout)
        return self.conn

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except OSError:
                pass
            self.conn = None

    def request(self, path, params=None, method="GET"):
        query = urllib.parse.urlencode(params or {})
        began = time.monotonic()
        try:
            conn = self._connection()
            if method == "POST":
                conn.request("POST", path, body=query,
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
            else:
                conn.request("GET", path + ("?" + query if query else ""))
            response = conn.getresponse()
            body = response.read()
            if (response.headers.get("Connection") or "").lower() == "close":
                self.close()
            return Response(response.status, response.headers, body, time.monotonic() - began)
        except (OSError, HTTPException) as e:
            self.close()
            return Response(None, None, b"", time.monotonic() - began, error=type(e).__name__)

    def chat(self, **params):
        return self.request("/chat.php", params)


def start_session(client, nick):
    """(session id or None, the answer)."""
    out = client.chat(v=5, cmd="start", nick=nick)
    return (session_id_in(out.body) if out.ok else None), out


def create_room(client, session, lon, lat, z, topic):
    """(room id or None, the answer)."""
    out = client.chat(cmd="create", sessionid=session, lon=lon, lat=lat, z=z, topic=topic)
    return (room_id_in(out.body) if out.ok else None), out


# ---------------------------------------------------------------- keep-alive on asyncio streams

class AsyncConnection:
    """A keep-alive HTTP/1.1 connection on asyncio streams, GET only; bodies are read by
    Content-Length, which is what the gateway (Hummingbird) sends, or in chunks (nginx)."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.reader = self.writer = None

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def get(self, path):
        """The Response (headers not kept). Reconnects once if the server closed the connection."""
        for attempt in range(2):
            if self.writer is None:
                await self.open()
            began = time.monotonic()
            try:
                self.writer.write(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: bench\r\n\r\n")
                head = await self.reader.readuntil(b"\r\n\r\n")
                status = int(head[9:12])
                length, chunked = 0, False
                for line in head.split(b"\r\n")[1:]:
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                    elif line.lower().replace(b" ", b"") == b"transfer-encoding:chunked":
                        chunked = True
                body = await self._chunked_body() if chunked else (
                    await self.reader.readexactly(length) if length else b"")
                return Response(status, None, body, time.monotonic() - began)
            except (ConnectionError, asyncio.IncompleteReadError):
                self.close()
                if attempt == 1:
                    raise
        raise ConnectionError("unreachable")

    async def _chunked_body(self):
        """A body sent in chunks (nginx: the PHP reference server)."""
        body = b""
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
            if size == 0:
                while await self.reader.readuntil(b"\r\n") != b"\r\n":  # trailers, then the blank line
                    pass
                return body
            body += await self.reader.readexactly(size)
            await self.reader.readexactly(2)

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


class AsyncPool:
    """A fixed number of connections to one server; `get` waits for a free one."""

    def __init__(self, url, size):
        parsed = urllib.parse.urlsplit(url)
        self.free = asyncio.Queue()
        for _ in range(size):
            self.free.put_nowait(AsyncConnection(parsed.hostname, parsed.port))

    async def get(self, path):
        connection = await self.free.get()
        try:
            return await connection.get(path)
        finally:
            self.free.put_nowait(connection)

    def close(self):
        while not self.free.empty():
            self.free.get_nowait().close()


async def gather_limited(pool, paths, concurrency):
    """GETs every path with at most `concurrency` in flight; the answers in order."""
    results = [None] * len(paths)
    index = 0

    async def worker():
        nonlocal index
        while index < len(paths):
            i = index
            index += 1
            results[i] = await pool.get(paths[i])

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return results


def trickled_answer(url, head, until, byte=b" ", seconds=20):
    """Sends `head` to the server of `url`, then one `byte` at a time (slowloris on
    the body) until the answer holds `until`, the server closes, or `seconds`
    pass. Returns (what came back, seconds it took)."""
    parts = urllib.parse.urlsplit(url)
    s = socket.create_connection((parts.hostname, parts.port), timeout=10)
    s.sendall(head)
    began = time.monotonic()
    answer = b""
    s.settimeout(0.5)
    while time.monotonic() - began < seconds and until not in answer:
        try:
            s.sendall(byte)
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
        except socket.timeout:
            continue
        except OSError:
            break
    s.close()
    return answer, time.monotonic() - began
