"""Issue #2's done-when list: the stack runs end to end through Kafka and the services."""
import json
import os
import random
import shutil
import subprocess

from admin_support import admin_url
from geochat_support import topics
from geochat_support.db import sql
from geochat_support.protocol import chat, create, http, messages, rooms_in, say, start, unique_topic
from geochat_support.waiting import wait_until


def test_health_and_ready_on_every_instance(stack):
    urls = stack["gateways"] + [u for key in ("SESSION_URLS", "ROOMS_URLS", "MESSAGING_URLS", "EXPIRY_URLS")
                                for u in stack[key].split()]
    for url in urls:
        assert http(url + "/health").status == 200, url
        assert http(url + "/ready").status == 200, url
        status = json.loads(http(admin_url(url) + "/status").body)
        assert status["ready"] is True, status


def test_the_public_listener_serves_only_the_client_protocols(stack):
    """The admin API, /status and /metrics are on each gateway's operators'
    listener (loopback by default), not on the port a load balancer exposes."""
    for public, operators in zip(stack["gateways"], stack["admin_gateways"]):
        assert public != operators
        for path in ("/status", "/metrics", "/admin/rooms", "/admin/audit"):
            assert http(public + path).status == 404, public + path
        login = http(public + "/admin/login", data=json.dumps({"name": "root", "password": "x" * 12}),
                     headers={"Content-Type": "application/json"})
        assert login.status == 404, login
        assert http(public + "/ready").status == 200
        assert http(operators + "/status").status == 200
        assert http(operators + "/metrics").status == 200
        assert http(operators + "/admin/rooms").status == 401, "the admin API answers there, behind its token"
        assert operators.startswith("http://127.0.0.1:"), "loopback by default"


def test_start_answers_a_session_id_as_in_the_field_example(stack):
    response = chat(stack["gateways"][0], v=5, cmd="start", nick="Lydia")
    assert response.status == 200
    assert response.text.splitlines()[0] == '<?xml version="1.0" encoding="UTF-8" ?>'
    assert response.text.splitlines()[1].startswith("<sessionid>")
    start(stack["gateways"][1])  # and through the other gateway


def test_room_created_through_gateway_a_is_found_through_gateway_b(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    x, y = round(random.uniform(0.1, 0.9), 6), round(random.uniform(0.1, 0.9), 6)
    topic = unique_topic()
    room = create(a, session, x, y, 12, topic)
    assert room["topic"] == topic and float(room["longitude"]) == x and float(room["latitude"]) == y

    def found_through_b():
        rooms = rooms_in(chat(b, cmd="chats", lon1=x - 0.001, lat1=y - 0.001, lon2=x + 0.001, lat2=y + 0.001,
                              minz=9, maxz=15))
        return rooms if room in rooms else None

    # Gateway B learns the room from its event, one broker hop after A's answer
    # (docs/protocol.md, "Decisions where the contract is silent"): milliseconds,
    # seconds on a loaded machine.
    found = wait_until(found_through_b, timeout=10, interval=0.02, message="the room is found through gateway B")
    assert [r for r in found if r["id"] == room["id"]] == [room]


def test_message_said_through_a_is_polled_through_b_and_stored_in_postgresql(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    room = create(a, session, 0.31, 0.62, 9, unique_topic())
    text = "hello from A " + unique_topic()
    message_id = say(a, session, room["id"], text)
    assert message_id == 1, "ids are per room and start at 1"
    seen = wait_until(lambda: messages(b, room["id"]), timeout=10, message="message visible on gateway B")
    assert [(m["id"], m["text"]) for m in seen] == [(1, text)]
    rows = sql(stack, f"SELECT id, text FROM messaging.messages WHERE room_id = {room['id']} ORDER BY id")
    assert rows == [["1", text]]


def test_both_messaging_instances_take_partitions(stack):
    urls = stack["MESSAGING_URLS"].split()
    assert len(urls) == 2

    def split():
        parts = [json.loads(http(u + "/status").body)["assignedPartitions"].get("geochat.messaging.commands", [])
                 for u in urls]
        return parts if all(parts) and not set(parts[0]) & set(parts[1]) else None

    parts = wait_until(split, timeout=30, interval=0.5, message="both messaging instances hold partitions")
    assert sorted(parts[0] + parts[1]) == list(range(len(parts[0]) + len(parts[1])))


def test_kcat_shows_readable_records(stack):
    kcat = shutil.which("kcat")
    assert kcat, "kcat is installed by deploy/install.sh"
    a = stack["gateways"][0]
    session = start(a)
    room = create(a, session, 0.77, 0.11, 3, unique_topic())
    text = "kcat can read " + unique_topic()
    say(a, session, room["id"], text)
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(stack["ROOT"], ".runtime", "lib"))

    def records():
        found = []
        for name in topics.recent("geochat.messages.events"):
            run = subprocess.run([kcat, "-b", stack["KAFKA_BROKERS"], "-C", "-t", name, "-o", "beginning",
                                  "-e", "-q"], capture_output=True, text=True, env=env, timeout=30)
            found += [json.loads(line) for line in run.stdout.splitlines() if text in line]
        return found

    found = wait_until(records, timeout=15, interval=1, message="the message event in kcat's output")
    assert found[0]["schema"] == "geochat.messages.event.v1"
    assert found[0]["event"]["message"]["text"] == text
