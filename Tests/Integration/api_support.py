"""The JSON API (/api/v1) and its push streams, for the integration tests."""
import http.client
import json
import socket
import urllib.error
import urllib.parse
import urllib.request

from admin_support import JSONResponse
from geochat_support.protocol import unique_nick


def call(gateway, method, path, body=None, session=None, headers=None, timeout=30):
    """One API request; never raises on 4xx/5xx."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(gateway + "/api/v1" + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if session:
        request.add_header("Authorization", "Bearer " + session)
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return JSONResponse(r.status, r.headers, r.read())
    except urllib.error.HTTPError as e:
        return JSONResponse(e.code, e.headers, e.read())


def assert_problem(response, status, code):
    assert response.status == status, response
    assert response.headers.get("Content-Type") == "application/problem+json", response.headers
    problem = response.json
    assert problem["code"] == code and problem["status"] == status, problem
    assert problem["type"] == "urn:geochat:problem:" + code and problem["title"] and problem["detail"], problem
    return problem


def start(gateway, nick=None):
    response = call(gateway, "POST", "/sessions", {"nick": nick or unique_nick()})
    assert response.status == 201, response
    return response.json["session"]


def create(gateway, session, latitude, longitude, zoom=12, topic="a room"):
    response = call(gateway, "POST", "/rooms", {"latitude": latitude, "longitude": longitude, "zoom": zoom,
                                                "topic": topic}, session=session)
    assert response.status == 201, response
    return response.json


def say(gateway, session, room, text):
    response = call(gateway, "POST", f"/rooms/{room}/messages", {"text": text}, session=session)
    assert response.status == 201, response
    return response.json


class EventStream:
    """A Server-Sent Events subscription read line by line over a raw connection."""

    def __init__(self, gateway, room, last_event_id=None, after=None, timeout=15):
        url = urllib.parse.urlparse(gateway)
        self.connection = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        path = f"/api/v1/rooms/{room}/events" + (f"?after={after}" if after is not None else "")
        self.connection.request("GET", path, headers=headers)
        self.response = self.connection.getresponse()

    def next_event(self):
        """(name, id, data) of the next event; None at the end of the stream. Comments are skipped."""
        name, event_id, data = None, None, []
        while True:
            line = self.response.fp.readline()
            if not line:
                return None
            line = line.decode("utf-8").rstrip("\n")
            if line == "":
                if name or data:
                    return name, event_id, "\n".join(data)
                continue
            if line.startswith(":") or line.startswith("retry:"):
                continue
            field, _, value = line.partition(": ")
            if field == "event":
                name = value
            elif field == "id":
                event_id = int(value)
            elif field == "data":
                data.append(value)

    def messages(self, count):
        """The next `count` message events as dicts (other events skipped)."""
        found = []
        while len(found) < count:
            event = self.next_event()
            assert event is not None, f"the stream ended after {len(found)} of {count} messages"
            name, event_id, data = event
            if name == "message":
                message = json.loads(data)
                assert message["id"] == event_id
                found.append(message)
        return found

    def close(self):
        try:
            self.response.fp.raw._sock.shutdown(socket.SHUT_RDWR)
        except (OSError, AttributeError):
            pass
        self.connection.close()
