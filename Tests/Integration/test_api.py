"""The JSON API (/api/v1) on the two-gateway cluster: the same rooms, messages,
rules and limits as the phones' protocol, in degrees and JSON; push over
Server-Sent Events, resumable on another gateway; long polls in both APIs;
transcripts; errors as problem documents."""
import json
import os
import random
import re
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request

from admin_support import admin_url, api as admin_api, bootstrap_admin, login
from api_support import EventStream, assert_problem, call, create, say, start
from gateway_support import extra_gateway
from geochat_support.protocol import assert_error, chat, message_ids_and_texts, raw_chat
from geochat_support.waiting import wait_until


def a_place():
    """Somewhere of the test's own, away from other tests' rooms."""
    return random.uniform(-60, 60), random.uniform(-170, 170)


def test_the_api_creates_finds_says_and_reads_across_gateways(stack):
    a, b = stack["gateways"][:2]
    session = start(a, "Lydia")
    latitude, longitude = a_place()
    room = create(a, session, latitude, longitude, zoom=12, topic="Harbour & <Pier>")
    assert abs(room["latitude"] - latitude) < 1e-9 and abs(room["longitude"] - longitude) < 1e-9
    assert 0 <= room["x"] <= 1 and 0 <= room["y"] <= 1 and room["topic"] == "Harbour & <Pier>"

    # The other gateway finds it in a box (degrees) and as the Mercator box, and nearby.
    box = f"south={latitude - 0.01}&west={longitude - 0.01}&north={latitude + 0.01}&east={longitude + 0.01}"
    wait_until(lambda: [r["id"] for r in call(b, "GET", f"/rooms?{box}&minZoom=9&maxZoom=15").json["rooms"]]
               == [room["id"]], timeout=10, message="the room is in gateway B's box")
    x1, y1 = room["x"] - 1e-4, room["y"] - 1e-4
    mercator = call(b, "GET", f"/rooms?x1={x1}&y1={y1}&x2={x1 + 2e-4}&y2={y1 + 2e-4}").json["rooms"]
    assert [r["id"] for r in mercator] == [room["id"]]
    near = call(b, "GET", f"/rooms/nearest?latitude={latitude + 0.001}&longitude={longitude}&radius=1000").json
    assert [r["room"]["id"] for r in near["rooms"]] == [room["id"]]
    found = near["rooms"][0]
    assert abs(found["distance"] - 111.2) < 1 and abs(found["bearing"] - 180) < 0.5, found
    assert call(b, "GET", f"/rooms/nearest?latitude={latitude + 0.001}&longitude={longitude}&radius=100").json[
        "rooms"] == [], "beyond the radius"
    looking_north = f"/rooms/nearest?latitude={latitude + 0.001}&longitude={longitude}&direction=0&fieldOfView=90"
    assert call(b, "GET", looking_north).json["rooms"] == [], "the room is behind"
    assert call(b, "GET", f"/rooms/{room['id']}").json == room

    # Say through B; read on A (JSON) and as a phone (XML).
    said = say(b, session, room["id"], "hello <b>&</b>")
    assert said["id"] == 1 and said["nick"] == "Lydia" and said["addedAt"].endswith("Z")
    wait_until(lambda: [m["id"] for m in call(a, "GET", f"/rooms/{room['id']}/messages").json["messages"]] == [1],
               timeout=5, message="A holds the message")
    answer = chat(a, v=5, cmd="messages", chatid=room["id"], past=0)
    assert message_ids_and_texts(answer.body) == [(1, "hello &lt;b&gt;&amp;&lt;/b&gt;")]
    assert call(a, "GET", f"/rooms/{room['id']}/participants").json == {"room": room["id"], "participants": ["Lydia"]}

    # Join, rename, leave, end.
    other = start(a)
    assert call(b, "POST", f"/rooms/{room['id']}/join", session=other).status == 204
    renamed = call(b, "PATCH", "/session", {"nick": "Bob_2"}, session=other)
    assert renamed.status == 200 and renamed.json["nick"] == "Bob_2"
    wait_until(lambda: "Bob_2" in call(a, "GET", f"/rooms/{room['id']}/participants").json["participants"],
               timeout=5, message="the renamed member is listed")
    assert call(a, "POST", f"/rooms/{room['id']}/leave", session=other).status == 204
    assert "Bob_2" not in call(b, "GET", f"/rooms/{room['id']}/participants").json["participants"]
    assert call(a, "DELETE", "/session", session=other).status == 204
    assert_problem(call(b, "POST", f"/rooms/{room['id']}/join", session=other), 401, "invalid_session")


def test_transcripts_page_from_the_first_message_as_json_and_text(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    room = create(a, session, *a_place(), topic="transcript")["id"]
    texts = [f"line {i}" for i in range(1, 6)] + ["two\nlines"]
    for text in texts:
        say(a, session, room, text)
    # A C1 control (a terminal's CSI) is refused on the way in (ChatText.isDisplaySafe); rows
    # stored before that rule are still shown escaped (ControlCharacters, ControlCharacterTests).
    assert_problem(call(a, "POST", f"/rooms/{room}/messages", {"text": "clear \x9b2J"}, session=session), 400, "bad_param")
    pages, after = [], 0
    while after is not None:
        page = call(b, "GET", f"/rooms/{room}/transcript?after={after}&limit=2").json
        pages.append([m["id"] for m in page["messages"]])
        after = page["next"]
    assert pages == [[1, 2], [3, 4], [5, 6], []] or pages == [[1, 2], [3, 4], [5, 6]], pages
    text = call(b, "GET", f"/rooms/{room}/transcript?format=text&limit=4")
    assert text.headers.get("Content-Type") == "text/plain; charset=utf-8"
    assert 'rel="next"' in text.headers.get("Link") and "after=4" in text.headers.get("Link")
    lines = text.body.decode().splitlines()
    assert len(lines) == 4 and lines[0].endswith(" <" + lines[0].split("<")[1].split(">")[0] + "> line 1")
    rest = call(b, "GET", f"/rooms/{room}/transcript?after=4", headers={"Accept": "text/plain"}).body.decode()
    assert rest.endswith("> two\n  lines\n"), rest  # a line break inside a message stays inside its entry
    assert_problem(call(b, "GET", "/rooms/99999999/transcript"), 404, "no_such_chat")


def test_the_admin_cli_exports_a_whole_transcript(stack):
    a = stack["gateways"][0]
    session = start(a)
    room = create(a, session, *a_place(), topic="export")["id"]
    for i in range(1, 206):  # more than one page (200)
        say(a, session, room, f"message {i}")
    name, password, _ = bootstrap_admin(stack)
    token = login(a, name, password)
    cli = os.path.join(stack["BIN_DIR"], "geochat-admin")
    env = dict(os.environ, GEOCHAT_ADMIN_URL=admin_url(a), GEOCHAT_ADMIN_TOKEN=token)
    text = subprocess.run([cli, "rooms", "export", str(room)], env=env, capture_output=True, timeout=60)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.decode().splitlines()
    assert len(lines) == 205 and lines[0].endswith("message 1") and lines[-1].endswith("message 205")
    exported = subprocess.run([cli, "rooms", "export", str(room), "--format", "json"], env=env, capture_output=True,
                              timeout=60)
    document = json.loads(exported.stdout)
    assert document["room"] == room and [m["id"] for m in document["messages"]] == list(range(1, 206))
    missing = subprocess.run([cli, "rooms", "export", "99999999"], env=env, capture_output=True, timeout=60)
    assert missing.returncode != 0 and b"no such chat room" in missing.stderr, missing.stderr


def test_push_delivers_in_order_and_resumes_on_the_other_gateway(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    room = create(a, session, *a_place(), topic="push")["id"]
    say(a, session, room, "before")
    stream = EventStream(b, room)
    assert stream.response.status == 200
    assert stream.response.getheader("Content-Type") == "text/event-stream; charset=utf-8"
    assert stream.messages(1)[0]["text"] == "before", "a stream without a resume point starts with the latest"
    sent = []
    # Through both gateways and both protocols, from two threads at once.
    def post(gateway, prefix, phone):
        for i in range(10):
            if phone:
                chat(gateway, v=5, cmd="say", sessionid=session, chatid=room, msg=f"{prefix}{i}")
            else:
                say(gateway, session, room, f"{prefix}{i}")
    threads = [threading.Thread(target=post, args=(a, "json", False)), threading.Thread(target=post, args=(b, "xml", True))]
    for t in threads:
        t.start()
    first = stream.messages(8)
    stream.close()
    for t in threads:
        t.join()
    # Resume on the other gateway from the last id seen: the rest, nothing twice, nothing missed.
    resumed = EventStream(a, room, last_event_id=first[-1]["id"])
    rest = resumed.messages(21 - first[-1]["id"])
    resumed.close()
    ids = [m["id"] for m in first + rest]
    assert ids == list(range(2, 22)), ids
    texts = {m["text"] for m in first + rest}
    assert texts == {f"json{i}" for i in range(10)} | {f"xml{i}" for i in range(10)}
    # ?after= works the same way.
    again = EventStream(b, room, after=19)
    assert [m["id"] for m in again.messages(2)] == [20, 21]
    again.close()


def test_push_sends_participant_changes_and_says_when_a_room_goes(stack):
    a, b = stack["gateways"][:2]
    session = start(a, "Owner")
    room = create(a, session, *a_place(), topic="members")["id"]
    stream = EventStream(b, room)
    other = start(b, "Visitor")
    assert call(a, "POST", f"/rooms/{room}/join", session=other).status == 204
    deadline = time.monotonic() + 10
    while True:
        event = stream.next_event()
        assert event is not None and time.monotonic() < deadline, "no participants event with the visitor"
        if event[0] == "participants" and "Visitor" in json.loads(event[2])["participants"]:
            break
    name, password, _ = bootstrap_admin(stack)
    token = login(a, name, password)
    assert admin_api(a, "DELETE", f"rooms/{room}", token=token).status == 200
    while True:
        event = stream.next_event()
        assert event is not None, "the stream ended without saying why"
        if event[0] == "gone":
            assert json.loads(event[2])["code"] == "no_such_chat"
            break
    assert stream.next_event() is None, "the stream ends after 'gone'"


def test_push_refuses_bad_requests_clearly(stack):
    a = stack["gateways"][0]
    assert_problem(call(a, "GET", "/rooms/99999999/events"), 404, "no_such_chat")
    assert_problem(call(a, "GET", "/rooms/1/events", headers={"Last-Event-ID": "banana"}), 400, "bad_param")
    assert_problem(call(a, "GET", "/rooms/1/events?after=-3"), 400, "bad_param")
    assert_problem(call(a, "GET", "/rooms/abc/events"), 400, "bad_param")


def test_subscribers_per_gateway_are_capped(stack):
    a = stack["gateways"][0]
    session = start(a)
    room = create(a, session, *a_place(), topic="cap")["id"]
    with extra_gateway(stack, "push-cap", GEOCHAT_PUSH_MAX_SUBSCRIBERS="2") as gateway:
        streams = [EventStream(gateway, room) for _ in range(2)]
        assert all(s.response.status == 200 for s in streams)
        problem = assert_problem(call(gateway, "GET", f"/rooms/{room}/events"), 503, "unavailable")
        assert "push subscribers" in problem["detail"]
        # A client that goes away is let go at once, not at the next keep-alive (30 s), whether
        # it only closes its side (its socket kept open) or closes the connection.
        streams[0].response.fp.raw._sock.shutdown(socket.SHUT_WR)
        wait_until(lambda: _opens(gateway, room), timeout=10, interval=0.5,
                   message="the place of a subscriber that closed its side is given back")
        for s in streams:
            s.close()
        wait_until(lambda: _opens(gateway, room, together=2), timeout=10, interval=0.5,
                   message="closed subscribers' places are given back")


def _opens(gateway, room, together=1):
    streams = [EventStream(gateway, room) for _ in range(together)]
    statuses = [stream.response.status for stream in streams]
    for stream in streams:
        stream.close()
    return statuses == [200] * together


def test_long_polls_wait_for_the_next_message_in_both_apis(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    room = create(a, session, *a_place(), topic="long poll")["id"]
    say(a, session, room, "first")

    def later(gateway, text, delay):
        time.sleep(delay)
        say(gateway, session, room, text)

    threading.Thread(target=later, args=(a, "second", 1.0)).start()
    began = time.monotonic()
    answer = call(b, "GET", f"/rooms/{room}/messages?after=1&wait=10").json
    waited = time.monotonic() - began
    assert [m["text"] for m in answer["messages"]] == ["second"] and 0.8 < waited < 5, (answer, waited)

    threading.Thread(target=later, args=(b, "third", 1.0)).start()
    began = time.monotonic()
    answer = chat(a, v=5, cmd="messages", chatid=room, past=2, wait=10)
    waited = time.monotonic() - began
    assert [t for _, t in message_ids_and_texts(answer.body)] == ["third"] and 0.8 < waited < 5, waited

    began = time.monotonic()
    assert call(b, "GET", f"/rooms/{room}/messages?after=3&wait=1").json["messages"] == []
    assert 0.9 < time.monotonic() - began < 3, "an empty long poll answers after its wait"
    assert_problem(call(b, "GET", f"/rooms/{room}/messages?wait=26"), 400, "bad_param")
    assert_error(raw_chat(a, f"v=5&cmd=messages&chatid={room}&wait=99"), 400, "bad_param")


def test_api_input_is_checked_and_changes_nothing(stack):
    a = stack["gateways"][0]
    session = start(a)
    assert_problem(call(a, "POST", "/sessions", {"nick": "9lives"}), 400, "invalid_nick")
    assert_problem(call(a, "POST", "/sessions", {}), 400, "missing_param")
    assert_problem(call(a, "POST", "/rooms", {"latitude": 89, "longitude": 0, "zoom": 3, "topic": "t"},
                        session=session), 400, "bad_param")
    assert_problem(call(a, "POST", "/rooms", {"latitude": 1, "longitude": 2, "zoom": 18, "topic": "t"},
                        session=session), 400, "bad_param")
    assert_problem(call(a, "POST", "/rooms", {"latitude": 1, "longitude": 2, "zoom": 3, "topic": "  "},
                        session=session), 400, "empty")
    assert_problem(call(a, "POST", "/rooms", {"latitude": 1, "longitude": 2, "zoom": 3, "topic": "x" * 101},
                        session=session), 400, "too_long")
    assert_problem(call(a, "POST", "/rooms", {"latitude": 1, "longitude": 2, "zoom": 3, "topic": "t"},
                        session="not-a-session"), 401, "invalid_session")
    assert_problem(call(a, "GET", "/rooms?south=1&west=2&north=0&east=3"), 400, "bad_param")
    assert_problem(call(a, "GET", "/rooms/nearest?latitude=0&longitude=0&radius=30000000"), 400, "bad_param")
    assert_problem(call(a, "GET", "/rooms/nearest?latitude=0&longitude=0&semiMajor=100"), 400, "missing_param")
    big = call(a, "POST", "/sessions", None, headers={"Content-Type": "application/json"})
    assert_problem(big, 400, "missing_param")
    assert_problem(call(a, "GET", "/no/such/thing"), 404, "unknown_command")
    box = "south=-85&west=-180&north=85&east=180&minZoom=0&maxZoom=17"
    assert call(a, "GET", f"/rooms?{box}").status == 200


def test_a_subscriber_that_stops_reading_is_cut_off_and_resumes_without_a_gap(stack):
    """A client that opens a stream and stops reading, with a small receive window, fills its
    connection: the kernel's send buffer (GEOCHAT_PUSH_SEND_BUFFER_BYTES, 64 KiB) and NIO's. The
    gateway's next write then waits, and once it has waited longer than GEOCHAT_PUSH_WRITE_TIMEOUT_S
    the gateway closes the connection and counts it (about 300 messages of 480 characters here).
    Resuming by the last id the client read gets every later message once, in order."""
    a = stack["gateways"][0]
    session = start(a)
    room = create(a, session, *a_place(), topic="stall")["id"]
    with extra_gateway(stack, "push-stall", GEOCHAT_PUSH_WRITE_TIMEOUT_S="1") as gateway:
        url = urllib.parse.urlparse(gateway)
        reader = socket.socket()
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: the window stays small
        reader.connect((url.hostname, url.port))
        reader.sendall(f"GET /api/v1/rooms/{room}/events HTTP/1.1\r\nHost: stall\r\n\r\n".encode())
        assert b" 200 " in reader.recv(200), "the stream opened"
        # From here on the client reads nothing. Messages of 480 characters, until the gateway gives up.
        padding = "x" * 480
        said = []
        while _stalled(gateway) == 0 and len(said) < 2000:
            for _ in range(25):
                said.append(say(a, session, room, f"{len(said):04d} {padding}")["id"])
        wait_until(lambda: _stalled(gateway) >= 1, timeout=15, interval=0.3,
                   message="the gateway cuts off a subscriber that stopped reading")
        # The client now finds what was sent before the cut, then the end of the connection.
        received = b""
        reader.settimeout(10)
        while chunk := _recv(reader):
            received += chunk
        reader.close()
        # Whole events only: the cut may fall inside one.
        ids = [int(n) for n in re.findall(r"\nid: (\d+)\ndata: [^\n]*\n\n", received.decode("utf-8", "replace"))]
        assert ids and ids == said[:len(ids)] and len(ids) < len(said), (len(ids), len(said))
        resumed = EventStream(gateway, room, last_event_id=ids[-1])
        rest = [m["id"] for m in resumed.messages(len(said) - len(ids))]
        resumed.close()
        assert rest == said[len(ids):]


def _stalled(gateway):
    for line in urllib.request.urlopen(admin_url(gateway) + "/metrics", timeout=10).read().decode().splitlines():
        if line.startswith("geochat_push_stalled_total"):
            return float(line.split()[-1])
    return 0


def _recv(sock):
    try:
        return sock.recv(65536)
    except (ConnectionResetError, socket.timeout):
        return b""
