"""A small keep-alive HTTP client for the legacy protocol, fast enough to drive
hundreds of requests a second from a few threads, and honest about failures:
every call returns an Outcome (status, body, latency) or a connection error."""
import http.client
import re
import time
import urllib.parse

SUCCESS_ID = re.compile(rb'<success id="(\d+)"')
ERROR_CODE = re.compile(rb'<error code="([a-z_]+)">([^<]*)</error>')
MESSAGE = re.compile(rb'<message added="[^"]*" id="(\d+)"><user>[^<]*</user><text>([^<]*)</text></message>')
SESSION = re.compile(rb"<sessionid>([0-9a-v]{26})</sessionid>")
ROOM_ID = re.compile(rb"<chat><id>(\d+)</id>")

# The gateway's text for a 503 whose outcome is unknown (ProtocolError.outcomeUnknown).
OUTCOME_UNKNOWN_TEXT = b"may or may not have been carried out"


class Outcome:
    __slots__ = ("status", "body", "latency", "error", "headers")

    def __init__(self, status=None, body=b"", latency=0.0, error=None, headers=None):
        self.status, self.body, self.latency, self.error, self.headers = status, body, latency, error, headers or {}

    @property
    def ok(self):
        return self.status == 200

    @property
    def code(self):
        m = ERROR_CODE.search(self.body)
        return m.group(1).decode() if m else None

    @property
    def outcome_unknown(self):
        """No answer, or a 503 that says the request may have been carried out."""
        if self.error is not None:
            return True
        return self.status == 503 and OUTCOME_UNKNOWN_TEXT in self.body


class Client:
    """One keep-alive connection to one gateway; reconnects after an error."""

    def __init__(self, base_url, timeout=10.0):
        parsed = urllib.parse.urlsplit(base_url)
        self.host, self.port, self.timeout = parsed.hostname, parsed.port, timeout
        self.conn = None

    def _connection(self):
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
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
            headers = {k.lower(): v for k, v in response.getheaders()}
            if headers.get("connection", "").lower() == "close":
                self.close()
            return Outcome(response.status, body, time.monotonic() - began, headers=headers)
        except (OSError, http.client.HTTPException) as e:
            self.close()
            return Outcome(None, b"", time.monotonic() - began, error=type(e).__name__)

    def chat(self, **params):
        return self.request("/chat.php", params)


def start_session(client, nick):
    out = client.chat(v=5, cmd="start", nick=nick)
    m = SESSION.search(out.body) if out.ok else None
    return (m.group(1).decode() if m else None), out


def create_room(client, session, lon, lat, z, topic):
    out = client.chat(cmd="create", sessionid=session, lon=lon, lat=lat, z=z, topic=topic)
    m = ROOM_ID.search(out.body) if out.ok else None
    return (int(m.group(1)) if m else None), out


def message_ids_and_texts(body):
    return [(int(i), t.decode("utf-8")) for i, t in MESSAGE.findall(body)]
