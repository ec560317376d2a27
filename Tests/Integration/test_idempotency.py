"""Idempotency end to end, at the level where retries happen: the same command
record (same idempotency key) delivered to its owner more than once, as Kafka
redelivery and gateway retries do, creates one message, one session, one room.
A phone repeats a `say` it got no answer for as a new request (a new key): the
same session, room, nick and text within 15 s is answered with the first
message's id and stored once (docs/protocol.md, "say"); so is an `add.php`
post repeated under the same name.

The commands are produced with confluent_kafka straight onto the command
topics, in the services' own wire format (docs/architecture.md), and the
replies read from a reply topic of the test's own."""
import threading
import time
import urllib.parse
import uuid

import pytest

from geochat_support.commands import CommandClient
from geochat_support.db import count, sql
from geochat_support.protocol import create, http, say, start, unique_topic
from geochat_support.stack import run_stack_command
from geochat_support.waiting import wait_until



@pytest.fixture
def wire(stack):
    w = CommandClient(stack["KAFKA_BROKERS"])
    yield w
    w.close()


def posted_id(reply):
    assert "reply" in reply, reply
    return reply["reply"]["id"]


def test_say_redelivered_is_one_message(stack, wire):
    g = stack["gateways"][0]
    session = start(g)
    room = create(g, session, 0.41, 0.41, 7, unique_topic())["id"]
    say(g, session, room, "first, through HTTP")
    key = "redelivered-" + uuid.uuid4().hex
    command = {"say": {"room": room, "session": session, "nick": "Redo", "text": "said once " + key}}
    # Three deliveries of one command: twice on the room's own partition (as a
    # redelivery after a crash), once on another partition, so that the second
    # messaging instance may run it at the same moment as the first.
    ids = []
    correlations = [wire.send("geochat.messaging.commands", str(room), command, key)]
    correlations.append(wire.send("geochat.messaging.commands", str(room), command, key))
    correlations += [wire.send("geochat.messaging.commands", str(room), command, key, partition=p)
                     for p in range(int(stack["PARTITIONS"]))]
    wire.flush()
    for reply in wire.wait(correlations):
        ids.append(posted_id(reply))
    assert len(set(ids)) == 1, ids
    assert count(stack, f"SELECT count(*) FROM messaging.messages WHERE idempotency_key = '{key}'") == 1
    assert count(stack, f"SELECT count(*) FROM messaging.messages WHERE text = 'said once {key}'") == 1


def test_say_repeated_by_a_phone_is_one_message(stack, wire):
    """The phone's repeat, over HTTP through both gateways, and as new commands
    (new keys) on the wire at once, some on another partition so that both
    messaging instances may run them side by side: one message, one id."""
    a, b = stack["gateways"][:2]
    session = start(a)
    room = create(a, session, 0.4343, 0.4343, 7, unique_topic())["id"]
    text = "did this arrive? " + uuid.uuid4().hex
    first = say(a, session, room, text)
    assert say(b, session, room, text) == first, "a repeat through the other gateway"
    assert say(a, session, room, "  " + text + " ") == first, "trimmed, it is the same text"
    nick = sql(stack, f"SELECT nick FROM messaging.messages WHERE room_id = {room} AND id = {first}")[0][0]
    command = {"say": {"room": room, "session": session, "nick": nick, "text": text}}
    correlations = [wire.send("geochat.messaging.commands", str(room), command, "repeat-" + uuid.uuid4().hex)
                    for _ in range(2)]
    correlations += [wire.send("geochat.messaging.commands", str(room), command, "repeat-" + uuid.uuid4().hex,
                               partition=p) for p in range(int(stack["PARTITIONS"]))]
    wire.flush()
    assert {posted_id(r) for r in wire.wait(correlations)} == {first}
    assert count(stack, f"SELECT count(*) FROM messaging.messages WHERE room_id = {room} AND text = '{text}'") == 1
    # Not a repeat: another text, or the same words from another session.
    assert say(b, session, room, text + "!") == first + 1
    other = start(b)
    assert say(b, other, room, text) == first + 2
    # An add.php post repeated under the same name is one post; under another name, two.
    lobby_text = "lobby repeat " + uuid.uuid4().hex
    for user in ("jack", "jack", "jill"):
        assert http(a + "/add.php", data=urllib.parse.urlencode({"user": user, "message": lobby_text})).status == 200
    assert count(stack, f"SELECT count(*) FROM messaging.messages WHERE text = '{lobby_text}'") == 2


def test_start_redelivered_is_one_session(stack, wire):
    key = "start-" + uuid.uuid4().hex
    before = count(stack, "SELECT count(*) FROM session.sessions")
    correlations = [wire.send("geochat.session.commands", key, {"start": {"nick": "Twice"}}, key) for _ in range(3)]
    wire.flush()
    sessions = {r["reply"]["id"] for r in wire.wait(correlations)}
    assert len(sessions) == 1, sessions
    assert count(stack, f"SELECT count(*) FROM session.sessions WHERE start_key = '{key}'") == 1
    assert count(stack, "SELECT count(*) FROM session.sessions") == before + 1


def test_create_retried_is_one_room(stack, wire):
    g = stack["gateways"][0]
    session = start(g)
    topic = unique_topic()
    command = {"create": {"session": session, "position": {"x": 0.123, "y": 0.456}, "zoom": 9, "topic": topic}}
    # A gateway retry carries a new correlation id; the rooms service knows the
    # repeat by its content within 10 s (the legacy create has no key).
    correlations = [wire.send("geochat.rooms.commands", session, command, "create-" + uuid.uuid4().hex)
                    for _ in range(3)]
    wire.flush()
    rooms = {r["reply"]["id"] for r in wire.wait(correlations)}
    assert len(rooms) == 1, rooms
    assert count(stack, f"SELECT count(*) FROM rooms.rooms WHERE topic = '{topic}'") == 1
    # And through HTTP on the other gateway, spelled with the aliases: still the same room.
    again = create(stack["gateways"][1], session, 0.123, 0.456, 9, topic)
    assert again["id"] in rooms


def test_messaging_killed_mid_stream_then_redelivered(stack, wire):
    """Commands produced while a messaging instance is killed and restarted, then
    all produced again (what a redelivery after the crash does): each stored once."""
    g = stack["gateways"][0]
    session = start(g)
    rooms = [create(g, session, 0.2 + i / 100, 0.3, 8, unique_topic())["id"] for i in range(8)]
    for r in rooms:
        say(g, session, r, "opens the log")
    tag = "mid-" + uuid.uuid4().hex[:8]
    commands = [(rooms[i % len(rooms)], f"{tag}-{i}") for i in range(300)]

    def produce_all(deadline_s):
        cs = []
        for room, key in commands:
            cs.append(wire.send("geochat.messaging.commands", str(room),
                                {"say": {"room": room, "session": session, "nick": "Mid", "text": key}},
                                key, timeout=deadline_s))
            time.sleep(0.005)
        wire.flush()
        return cs

    killer = threading.Timer(0.5, lambda: run_stack_command(stack, "kill", "messaging-1"))
    killer.start()
    produce_all(60)
    killer.join()
    run_stack_command(stack, "start", "messaging-1")
    wait_until(lambda: _ready(stack, "messaging", 0), timeout=60, interval=0.5, message="messaging-1 ready again")
    second = produce_all(60)
    replies = wire.wait(second, timeout=60)
    ids = {}
    for (room, key), reply in zip(commands, replies):
        ids[key] = (room, posted_id(reply))
    rows = sql(stack, f"SELECT text, room_id, id FROM messaging.messages WHERE text LIKE '{tag}-%'")
    assert len(rows) == len(commands), f"{len(rows)} rows for {len(commands)} commands"
    for text, room, msg_id in rows:
        assert ids[text] == (int(room), int(msg_id))


def _ready(stack, kind, index):
    import urllib.request
    url = stack[kind.upper() + "_URLS"].split()[index]
    try:
        with urllib.request.urlopen(url + "/ready", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False
