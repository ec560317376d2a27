"""Attacks on a gateway with the default limits (issue 26): every public request
that reaches Kafka or PostgreSQL has a bound per client address, push has a
bound per client and per gateway, the address comes only from the header the
trusted proxy writes, failing on purpose locks out no admin elsewhere, and the
browser and display hardening holds. docs/security.md lists each attack with
the test here that covers it.

Each test speaks as its own client: through the trusted proxy 127.0.0.2 with
an X-Forwarded-For of its own, so that the buckets of one test are not those of
another."""
import json
import secrets
import socket
import time
import urllib.parse
import uuid
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection

import pytest

from admin_support import admin_url, bootstrap_admin
from gateway_support import extra_gateway
from geochat_support.commands import CommandClient
from geochat_support.db import count, insert_old_messages
from geochat_support.protocol import Response, start, unique_topic
from geochat_support.waiting import wait_until

PROXY = "127.0.0.2"
PER_ADDRESS_PLACES = 5
STREAM_SECONDS = 3


@pytest.fixture(scope="module")
def guarded(stack):
    """A gateway on the test cluster with every limit at its default, except a
    small per-address place count and a short stream lifetime (so the tests
    are quick); 127.0.0.2 stands for the load balancer in front of it."""
    with extra_gateway(stack, "attacks", GEOCHAT_TRUSTED_PROXIES=PROXY,
                       GEOCHAT_PUSH_MAX_PER_ADDRESS=str(PER_ADDRESS_PLACES),
                       GEOCHAT_PUSH_MAX_STREAM_S=str(STREAM_SECONDS), GEOCHAT_PUSH_KEEPALIVE_S="1") as url:
        yield url


def client_address():
    """A documentation address (RFC 5737) no other test uses."""
    return "198.18.%d.%d" % (secrets.randbelow(256), 1 + secrets.randbelow(254))


def request(gateway, path, client, method="GET", body=None, headers=None, source=PROXY, timeout=30):
    """One request from `client` as the proxy forwards it; never raises on 4xx/5xx."""
    url = urllib.parse.urlparse(gateway)
    connection = HTTPConnection(url.hostname, url.port, timeout=timeout, source_address=(source, 0))
    all_headers = {"X-Forwarded-For": client} if client else {}
    all_headers.update(headers or {})
    data = json.dumps(body).encode() if body is not None else None
    if data is not None:
        all_headers["Content-Type"] = "application/json"
    try:
        began = time.monotonic()
        connection.request(method, path, body=data, headers=all_headers)
        answer = connection.getresponse()
        return Response(answer.status, answer.headers, answer.read(), time.monotonic() - began)
    finally:
        connection.close()


def chat_as(gateway, client, **params):
    return request(gateway, "/chat.php?" + urllib.parse.urlencode(params), client)


def at_once(calls):
    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(lambda call: call(), calls))


def statuses(answers):
    return [a.status for a in answers]


def new_room(gateway, client):
    session = start_as(gateway, client)
    answer = chat_as(gateway, client, cmd="create", sessionid=session, lon=0.4, lat=0.6, z=9, topic=unique_topic())
    assert answer.status == 200, answer
    return session, int(answer.dom().getElementsByTagName("id")[0].firstChild.data)


def start_as(gateway, client):
    answer = chat_as(gateway, client, v=5, cmd="start", nick="Atk" + uuid.uuid4().hex[:8])
    assert answer.status == 200, answer
    return answer.dom().getElementsByTagName("sessionid")[0].firstChild.data


# ---------------------------------------------------------------- item 1: bounded cost per client

def test_participants_reads_are_limited_per_address(guarded):
    """Each `participants` is a command and two queries: 50 at once, then 5 a second, per address."""
    me = client_address()
    _, room = new_room(guarded, me)
    answers = at_once([lambda: chat_as(guarded, me, cmd="participants", chatid=room) for _ in range(70)])
    assert 50 <= statuses(answers).count(200) < 70 and set(statuses(answers)) <= {200, 429}, statuses(answers)
    assert next(a for a in answers if a.status == 429).headers.get("Retry-After")
    # Made-up rooms cost the same bucket; another client is not held back.
    made_up = [chat_as(guarded, me, cmd="participants", chatid=987654321).status for _ in range(15)]
    assert 429 in made_up and set(made_up) <= {404, 429}, made_up
    assert chat_as(guarded, client_address(), cmd="participants", chatid=room).status == 200


def test_guessed_session_ids_are_limited_per_address_and_real_ones_are_not(stack, guarded):
    """An id the gateway never met is a LookupSession: guesses use the bucket up
    (20, then 2 a second) and get 429; ids of real sessions give their token back."""
    me = client_address()
    guesses = ["".join(secrets.choice("0123456789abcdefghijklmnopqrstuv") for _ in range(26)) for _ in range(40)]
    answers = [chat_as(guarded, me, cmd="messages", chatid=1, past=0, sessionid=g) for g in guesses]
    assert statuses(answers)[:20] == [403] * 20, statuses(answers)  # invalid_session
    assert statuses(answers).count(429) >= 15, statuses(answers)
    # An id already found unknown is answered from the gateway's memory: no lookup, no token.
    assert chat_as(guarded, me, cmd="messages", chatid=1, past=0, sessionid=guesses[0]).status == 403
    # New guesses through the JSON API's bearer header take the same bucket.
    fresh = ["".join(secrets.choice("0123456789abcdefghijklmnopqrstuv") for _ in range(26)) for _ in range(10)]
    api_guesses = [request(guarded, "/api/v1/rooms/1", me, headers={"Authorization": "Bearer " + g}).status for g in fresh]
    assert 429 in api_guesses, api_guesses
    # A carrier's NAT: 40 real phones (sessions made through another gateway) meet this one.
    nat = client_address()
    other = stack["gateways"][0]
    real = [start(other) for _ in range(40)]
    answers = [chat_as(guarded, nat, cmd="messages", chatid=1, past=0, sessionid=s) for s in real]
    assert set(statuses(answers)) == {200}, statuses(answers)


def test_joins_leaves_and_renames_are_limited_per_address_across_sessions(guarded):
    """Per session 20 at once; per address 50 at once whatever the number of sessions."""
    me = client_address()
    sessions = [start_as(guarded, me) for _ in range(6)]
    _, room = new_room(guarded, me)
    calls = [lambda s=s: chat_as(guarded, me, cmd="join", sessionid=s, chatid=room) for s in sessions for _ in range(10)]
    answers = at_once(calls)
    assert 50 <= statuses(answers).count(200) < 60 and set(statuses(answers)) <= {200, 429}, statuses(answers)


def open_stream(gateway, client, room, after=None, last_event_id=None, close=False):
    """Opens a push stream and reads its status line: (socket, its reader, status)."""
    url = urllib.parse.urlparse(gateway)
    sock = socket.create_connection((url.hostname, url.port), timeout=10, source_address=(PROXY, 0))
    path = f"/api/v1/rooms/{room}/events" + (f"?after={after}" if after is not None else "")
    head = f"GET {path} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: {client}\r\n"
    if last_event_id is not None:
        head += f"Last-Event-ID: {last_event_id}\r\n"
    if close:
        head += "Connection: close\r\n"
    sock.sendall((head + "\r\n").encode())
    reader = sock.makefile("rb")
    status = int(reader.readline().split()[1])
    return sock, reader, status


def test_streams_and_long_polls_share_one_cap_per_address(guarded):
    me = client_address()
    _, room = new_room(guarded, me)
    streams = [open_stream(guarded, me, room) for _ in range(PER_ADDRESS_PLACES)]
    try:
        assert [s[2] for s in streams] == [200] * PER_ADDRESS_PLACES
        sock, _, status = open_stream(guarded, me, room)
        sock.close()
        assert status == 429, "one stream over the address's places"
        # A long poll over the cap is answered at once, empty, instead of waiting.
        began = time.monotonic()
        poll = chat_as(guarded, me, cmd="messages", chatid=room, past=10**6, wait=5)
        assert poll.status == 200 and time.monotonic() - began < 2.5, (poll, time.monotonic() - began)
        # Another client still gets a place.
        sock, _, status = open_stream(guarded, client_address(), room)
        sock.close()
        assert status == 200
    finally:
        for sock, _, _ in streams:
            sock.close()
    # Places come back with their connections.
    wait_until(lambda: open_stream_status(guarded, me, room) == 200, timeout=10, message="a place again")


def open_stream_status(gateway, client, room):
    sock, _, status = open_stream(gateway, client, room)
    sock.close()
    return status


def test_a_stream_that_never_reads_ends_within_its_lifetime(guarded):
    """Keep-alives never fill a non-reading client's buffers, so the write
    timeout alone would hold its place for ever; the stream lifetime ends it."""
    me = client_address()
    _, room = new_room(guarded, me)
    sock, reader, status = open_stream(guarded, me, room, close=True)
    assert status == 200
    began = time.monotonic()
    time.sleep(STREAM_SECONDS + 2)  # read nothing meanwhile
    sock.settimeout(10)
    rest = reader.read()  # the server ended the response and closed: read() returns
    assert b"this stream ends" in rest, rest[-300:]
    assert time.monotonic() - began < STREAM_SECONDS + 12
    sock.close()


def test_history_through_push_costs_history_tokens(stack, guarded):
    """`Last-Event-ID: 1` on an old room reads a batch from PostgreSQL on
    every open (and on every batch it catches up by); after the address's 50
    history tokens the stream says why and ends."""
    me = client_address()
    _, room = new_room(guarded, me)
    insert_old_messages(stack, room, 600)
    assert chat_as(guarded, me, cmd="messages", chatid=room, past=590).status == 200  # the newest 200 in memory
    outcomes = []
    for _ in range(70):
        sock, reader, status = open_stream(guarded, me, room, last_event_id=1)
        assert status == 200
        event = b""
        while b"event: message" not in event and b"event: error" not in event:
            line = reader.readline()
            assert line, event
            event += line
        outcomes.append("message" if b"event: message" in event else "error")
        sock.close()
        if outcomes[-1] == "error":
            break
    # Each open costs one or two tokens by the time it is closed (the batch after the first is read too).
    assert "error" in outcomes and 20 <= outcomes.count("message") <= 55, outcomes


# ---------------------------------------------------------------- item 3: a compromised public gateway

def test_a_removal_forged_on_the_bus_removes_nothing(stack):
    """What a compromised internet-facing gateway could write (it must write the rooms and messaging
    command topics for create, join and say): an admin removal and expiry's removals without the
    operator key's seal (OperatorSeal) are refused and change nothing."""
    g = stack["gateways"][0]
    session = start(g)
    answer = request(g, "/chat.php?" + urllib.parse.urlencode(
        {"cmd": "create", "sessionid": session, "lon": 0.43, "lat": 0.44, "z": 6, "topic": unique_topic()}), None,
        source="127.0.0.1")
    room = int(answer.dom().getElementsByTagName("id")[0].firstChild.data)
    request(g, "/chat.php?" + urllib.parse.urlencode({"cmd": "say", "sessionid": session, "chatid": room, "msg": "keep me"}),
            None, source="127.0.0.1")
    wire = CommandClient(stack["KAFKA_BROKERS"])
    try:
        forged = [
            ("geochat.rooms.commands", str(room), {"adminRemove": {"room": room, "by": "mallory"}}),
            ("geochat.rooms.commands", str(room), {"adminRemove": {"room": room, "by": "mallory", "seal": "AAAA"}}),
            ("geochat.rooms.commands", "expiry-1", {"removeIdleRooms": {
                "rooms": [room], "idleBeforeMs": int(time.time() * 1000) + 10**9, "reason": "forged", "job": 1}}),
            ("geochat.messaging.commands", "expiry-1-1", {"removeRooms": {"rooms": [room], "job": 1, "batch": 1}}),
        ]
        for topic, key, command in forged:
            reply = wire.request(topic, key, command)
            assert reply.get("error", {}).get("code") == "bad_param" and "operator key" in reply["error"]["text"], reply
    finally:
        wire.close()
    assert count(stack, f"SELECT count(*) FROM rooms.rooms WHERE id = {room}") == 1
    assert count(stack, f"SELECT count(*) FROM messaging.messages WHERE room_id = {room}") == 1


# ---------------------------------------------------------------- item 4: proxy headers

def test_a_forwarding_header_the_proxy_does_not_write_buys_nothing(guarded):
    """nginx appends to X-Forwarded-For and passes a client's own `Forwarded`
    through: a fresh `Forwarded: for=` per request must not be a fresh bucket."""
    me = client_address()
    answers = at_once([lambda i=i: request(
        guarded, "/chat.php?" + urllib.parse.urlencode({"v": 5, "cmd": "start", "nick": "Fw%d%s" % (i, uuid.uuid4().hex[:6])}),
        me, headers={"Forwarded": f"for=203.0.113.{i}", "X-Real-IP": f"203.0.113.{i}"}) for i in range(45)])
    assert 429 in statuses(answers), statuses(answers)


# ---------------------------------------------------------------- item 5: admin lockout

def admin_request(gateway, method, path, source, body=None, token=None):
    url = urllib.parse.urlparse(admin_url(gateway))
    connection = HTTPConnection(url.hostname, url.port, timeout=30, source_address=(source, 0))
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    try:
        connection.request(method, "/admin/" + path, body=json.dumps(body).encode() if body is not None else None,
                           headers=headers)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def test_failing_on_purpose_locks_out_no_admin_elsewhere(stack, guarded):
    name, password, run = bootstrap_admin(stack)
    assert run.returncode == 0, run.stderr
    attacker, admin = "127.0.0.3", "127.0.0.1"
    status, body = admin_request(guarded, "POST", "login", admin, {"name": name, "password": password})
    assert status == 200, body
    token = json.loads(body)["token"]
    assert admin_request(guarded, "GET", "bans", admin, token=token)[0] == 200  # the token is known good here
    # Junk logins: the attacker's address runs out, the admin's does not.
    junk = [admin_request(guarded, "POST", "login", attacker, {"name": "nobody" + secrets.token_hex(3), "password": "x" * 14})[0]
            for _ in range(35)]
    assert junk[:30] == [401] * 30 and 429 in junk[30:], junk
    # The admin's own name, failed on purpose from the attacker's address: throttled there only.
    for _ in range(5):
        assert admin_request(guarded, "POST", "login", attacker, {"name": name, "password": "wrong password!"})[0] in (401, 429)
    assert admin_request(guarded, "POST", "login", attacker, {"name": name, "password": password})[0] == 429
    status, body = admin_request(guarded, "POST", "login", admin, {"name": name, "password": password})
    assert status == 200, body
    # Forged tokens: the attacker's address gets 429, a valid token does not, from either address.
    forged = [admin_request(guarded, "GET", "bans", attacker, token="gca_" + secrets.token_hex(32))[0] for _ in range(65)]
    assert 429 in forged, forged
    assert admin_request(guarded, "GET", "bans", admin, token=token)[0] == 200
    assert admin_request(guarded, "GET", "bans", attacker, token=token)[0] == 200, "a valid token is never refused for others' bad ones"


# ---------------------------------------------------------------- item 6: browser and display hardening

def test_every_answer_carries_the_browser_hardening_headers(stack):
    g = stack["gateways"][0]
    for path in ["/", "/map/app.js", "/api/v1/rooms/1", "/chat.php?cmd=start&nick=Ann", "/no/such/path"]:
        answer = request(g, path, None, source="127.0.0.1")
        policy = answer.headers.get("Content-Security-Policy", "")
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy, (path, policy)
        assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0], policy
        assert answer.headers.get("X-Content-Type-Options") == "nosniff", path
        assert answer.headers.get("Referrer-Policy") == "no-referrer", path
        assert answer.headers.get("X-Frame-Options") == "DENY", path


def test_the_web_route_serves_only_the_pages_assets(stack):
    g = stack["gateways"][0]
    assert request(g, "/map/app.js", None, source="127.0.0.1").status == 200
    for path in ["/map/README.md", "/map/tools/screenshot.py", "/map/tools/make_world_geojson.py"]:
        assert request(g, path, None, source="127.0.0.1").status == 404, path


@pytest.mark.parametrize("spoof", ["\u202egnp.exe", "a\u2066b\u2069", "c1 \u0085", "del \u007f", "line\u2028sep", "\ufeffbom"])
def test_display_spoofing_characters_are_refused_and_nothing_is_stored(stack, spoof):
    g = stack["gateways"][0]
    session = start(g)
    answer = request(g, "/chat.php?" + urllib.parse.urlencode(
        {"cmd": "create", "sessionid": session, "lon": 0.41, "lat": 0.42, "z": 5, "topic": "room " + spoof}), None,
        source="127.0.0.1")
    assert answer.status == 400 and answer.code == "bad_param", answer
    room = int(request(g, "/chat.php?" + urllib.parse.urlencode(
        {"cmd": "create", "sessionid": session, "lon": 0.41, "lat": 0.42, "z": 5, "topic": unique_topic()}), None,
        source="127.0.0.1").dom().getElementsByTagName("id")[0].firstChild.data)
    text = "hello " + uuid.uuid4().hex + spoof
    answer = request(g, "/chat.php?" + urllib.parse.urlencode(
        {"cmd": "say", "sessionid": session, "chatid": room, "msg": text}), None, source="127.0.0.1")
    assert answer.status == 400 and answer.code == "bad_param", answer
    assert count(stack, f"SELECT count(*) FROM messaging.messages WHERE room_id = {room}") == 0
    api = request(g, f"/api/v1/rooms/{room}/messages", None, method="POST", body={"text": text},
                  headers={"Authorization": "Bearer " + session}, source="127.0.0.1")
    assert api.status == 400, api
    assert count(stack, f"SELECT count(*) FROM messaging.messages WHERE room_id = {room}") == 0
