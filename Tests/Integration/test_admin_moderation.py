"""Moderation (issue 41) on the real stack: an operator removes one message,
or a session's messages in one room or everywhere, through the admin API and
geochat-admin. A removed message is gone from every later poll, history read,
push stream and transcript, through both gateways; the phones' `past` polling
goes on past it; every removal is audited with its reason."""
import json
import os
import subprocess

import pytest

from admin_support import admin_url, api, assert_api_error, bootstrap_admin, login
from api_support import EventStream, call
from geochat_support.db import sql
from geochat_support.protocol import (assert_error, chat, create, messages, rooms_in, say, start, unique_nick,
    unique_topic)
from geochat_support.waiting import wait_until


@pytest.fixture(scope="module")
def admin(stack):
    name, password, run = bootstrap_admin(stack)
    assert run.returncode == 0, run.stdout + run.stderr
    return {"name": name, "password": password, "token": login(stack["gateways"][0], name, password)}


def ids(gateway, room, past=0):
    return [m["id"] for m in messages(gateway, room, past=past)]


def test_a_removed_message_is_gone_from_every_reader_on_every_gateway(stack, admin):
    a, b = stack["gateways"][:2]
    token = admin["token"]
    phone = start(a)
    room = create(a, phone, 0.31, 0.47, 12, unique_topic())["id"]
    for text in ("first", "abusive", "third"):
        say(a, phone, room, text)
    wait_until(lambda: ids(b, room) == [1, 2, 3], message="three messages on B")
    stream = EventStream(b, room)
    assert [m["id"] for m in stream.messages(3)] == [1, 2, 3]

    removed = api(a, "DELETE", f"rooms/{room}/messages/2?reason=insults", token=token)
    assert removed.status == 200 and removed.json == {"removed": 1, "more": False}, removed
    for gateway in (a, b):
        wait_until(lambda: ids(gateway, room) == [1, 3], timeout=5, message="the removal seen on " + gateway)
        assert ids(gateway, room, past=1) == [3], "a phone at past 1 goes on past the removed id"
        page = call(gateway, "GET", f"/rooms/{room}/messages").json["messages"]
        assert [m["id"] for m in page] == [1, 3]
        transcript = call(gateway, "GET", f"/rooms/{room}/transcript").body.decode()
        assert "abusive" not in transcript and "first" in transcript and "third" in transcript
    name, _, data = next(e for e in iter(stream.next_event, None) if e[0] != "participants")
    assert name == "removed" and json.loads(data) == {"room": room, "ids": [2]}, (name, data)
    stream.close()
    # A subscriber that was away (a browser resuming with Last-Event-ID) is told at once, on either gateway.
    for gateway in (a, b):
        resumed = EventStream(gateway, room, last_event_id=3)
        name, _, data = next(e for e in iter(resumed.next_event, None) if e[0] != "participants")
        assert name == "removed" and json.loads(data) == {"room": room, "ids": [2]}, (gateway, name, data)
        resumed.close()
    # A new message after the removal: ids go on, nothing reused.
    say(b, phone, room, "fourth")
    wait_until(lambda: ids(a, room) == [1, 3, 4], message="the next message on A")
    pages = api(b, "GET", f"rooms/{room}/transcript", token=token).json
    assert [m["id"] for m in pages["messages"]] == [1, 3, 4]
    assert sql(stack, f"SELECT text, removed_at IS NOT NULL FROM messaging.messages WHERE room_id = {room} AND id = 2") \
        == [["", "t"]], "the text is gone from the database"
    assert api(a, "GET", f"rooms/{room}", token=token).json["room"]["messages"] == 3

    again = api(b, "DELETE", f"rooms/{room}/messages/2", token=token)
    assert again.status == 200 and again.json == {"removed": 0, "more": False}, "removed already: no change"
    assert_api_error(api(a, "DELETE", f"rooms/{room}/messages/99", token=token), 404, "not_found")
    assert_api_error(api(a, "DELETE", f"rooms/{room}/messages/abc", token=token), 400, "bad_request")
    assert_api_error(api(a, "DELETE", f"rooms/{room}/messages/1?reason=" + "x" * 501, token=token), 400, "bad_request")
    assert ids(a, room) == [1, 3, 4], "a refused removal changes nothing"
    audit = sql(stack, "SELECT target, outcome, detail, source FROM session.audit_log "
                       f"WHERE actor = '{admin['name']}' AND action = 'remove-messages' ORDER BY id")
    target = f"message 2 in room {room}"
    assert [target, "ok", "1 removed; reason: insults"] in [row[:3] for row in audit], audit
    assert all(row[3] for row in audit if row[0] == target), "where it came from"
    assert [f"message 99 in room {room}", "refused"] in [row[:2] for row in audit]
    logged = api(a, "GET", "audit?action=remove-messages", token=token).json["entries"]
    assert any(e["target"] == target and "insults" in e["detail"] for e in logged)


def test_a_sessions_messages_go_in_one_room_then_everywhere(stack, admin):
    a, b = stack["gateways"][:2]
    token = admin["token"]
    spammer, neighbour = start(a), start(b)
    first = create(a, spammer, 0.32, 0.48, 12, unique_topic())["id"]
    second = create(a, spammer, 0.33, 0.49, 12, unique_topic())["id"]
    for i in range(3):
        say(a, spammer, first, f"buy {i}")
    say(b, neighbour, first, "hello")
    for i in range(2):
        say(b, spammer, second, f"cheap {i}")
    wait_until(lambda: len(ids(b, first)) == 4 and len(ids(a, second)) == 2, message="all said")

    body = {"session": spammer, "room": first, "reason": "spam", "limit": 2}
    batch = api(a, "POST", "messages/removals", body, token=token)
    assert batch.status == 200 and batch.json == {"removed": 2, "more": True}, batch
    rest = api(a, "POST", "messages/removals", body, token=token)
    assert rest.json == {"removed": 1, "more": False}
    for gateway in (a, b):
        wait_until(lambda: ids(gateway, first) == [4], message="only the neighbour's left on " + gateway)
        assert ids(gateway, second) == [1, 2], "the other room is untouched"
    everywhere = api(b, "POST", "messages/removals", {"session": spammer}, token=token)
    assert everywhere.json == {"removed": 2, "more": False}
    wait_until(lambda: ids(a, second) == [] and ids(b, second) == [], message="everywhere")
    assert ids(a, first) == [4]

    for bad in ({"session": "nope"}, {"session": spammer, "limit": 0}, {"session": spammer, "limit": 10_001},
                {"session": spammer, "room": -1}, {"session": spammer, "sinceMs": -5}, {}):
        assert_api_error(api(a, "POST", "messages/removals", bad, token=token), 400, "bad_request")


def test_geochat_admin_removes_messages(stack, admin, tmp_path):
    a = stack["gateways"][0]
    phone = start(a)
    room = create(a, phone, 0.34, 0.46, 12, unique_topic())["id"]
    for i in range(5):
        say(a, phone, room, f"line {i}")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("GEOCHAT_ADMIN_")}
    environment.update({"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config"),
                        "GEOCHAT_ADMIN_URL": admin_url(a), "GEOCHAT_ADMIN_TOKEN": admin["token"]})

    def geochat_admin(*args):
        return subprocess.run([os.path.join(stack["BIN_DIR"], "geochat-admin"), *args], capture_output=True,
                              text=True, env=environment, timeout=60)

    one = geochat_admin("messages", "remove", str(room), "1", "--reason", "test")
    assert one.returncode == 0 and f"message 1 in room {room} removed" in one.stdout, one.stdout + one.stderr
    many = geochat_admin("messages", "remove-by-session", phone, "--room", str(room), "--since", "1h", "--batch", "2")
    assert many.returncode == 0 and "4 messages of session" in many.stdout, many.stdout + many.stderr
    assert "removed 2 so far" in many.stderr, "progress"
    wait_until(lambda: ids(a, room) == [], message="all removed")
    missing = geochat_admin("messages", "remove", str(room), "77")
    assert missing.returncode != 0 and "no message 77" in missing.stderr

    changed = geochat_admin("rooms", "change", str(room), "--topic", "Changed by the CLI", "--zoom", "9")
    assert changed.returncode == 0 and "Changed by the CLI" in changed.stdout and "zoom 9" in changed.stdout, changed
    assert geochat_admin("rooms", "change", str(room)).returncode != 0, "nothing to change"
    renamed = geochat_admin("sessions", "rename", phone, "CliRenamed", "--reason", "test")
    assert renamed.returncode == 0 and "CliRenamed" in renamed.stdout, renamed.stdout + renamed.stderr
    ended = geochat_admin("sessions", "end", phone, "--reason", "test")
    assert ended.returncode == 0 and "session of CliRenamed ended" in ended.stdout, ended.stdout + ended.stderr
    wait_until(lambda: chat(a, cmd="say", sessionid=phone, chatid=room, msg="x").status == 403, message="ended")
    listed = geochat_admin("sessions", "--nick", "CliRenamed")
    assert listed.returncode == 0 and phone not in listed.stdout, "an ended session is not listed"


def test_an_operator_ends_and_renames_sessions(stack, admin):
    a, b = stack["gateways"][:2]
    token = admin["token"]
    nick = unique_nick()
    phone, other = start(a, nick), start(b, nick + "x")
    room = create(a, phone, 0.35, 0.45, 12, unique_topic())["id"]
    listed = api(b, "GET", "sessions?nick=" + nick, token=token).json["sessions"]
    assert phone in [s["id"] for s in listed]

    renamed = api(b, "PUT", f"sessions/{phone}", {"nick": "Renamed" + nick[-4:], "reason": "offensive nick"}, token=token)
    assert renamed.status == 200 and renamed.json["nick"] == "Renamed" + nick[-4:], renamed
    say(a, phone, room, "after the rename")
    wait_until(lambda: [m["user"] for m in messages(b, room)] == ["Renamed" + nick[-4:]], message="the new nick")
    assert_api_error(api(b, "PUT", f"sessions/{phone}", {"nick": "<b>"}, token=token), 400, "invalid_nick")

    ended = api(a, "DELETE", f"sessions/{phone}?reason=abuse", token=token)
    assert ended.status == 200 and ended.json["ended"] is True, ended
    for gateway in (a, b):
        wait_until(lambda: chat(gateway, cmd="say", sessionid=phone, chatid=room, msg="x").status == 403,
                   timeout=5, message="the ended session refused on " + gateway)
        assert_error(chat(gateway, cmd="say", sessionid=phone, chatid=room, msg="x"), 403, "invalid_session")
    assert chat(a, cmd="say", sessionid=other, chatid=room, msg="still here").status == 200, "other sessions go on"
    assert_api_error(api(a, "DELETE", f"sessions/{phone}", token=token), 404, "not_found")
    assert_api_error(api(a, "DELETE", "sessions/not-a-session", token=token), 400, "bad_request")
    audit = sql(stack, "SELECT action, outcome, detail FROM session.audit_log "
                       f"WHERE actor = '{admin['name']}' AND action IN ('end-session', 'rename-session') ORDER BY id")
    assert ["rename-session", "ok", f"nick Renamed{nick[-4:]}; reason: offensive nick"] in audit, audit
    assert ["end-session", "ok", f"nick Renamed{nick[-4:]}; reason: abuse"] in audit
    assert ["end-session", "refused"] in [row[:2] for row in audit]
    assert all(phone not in row[2] for row in audit), "a session id is a secret: the audit keeps a prefix"


def test_an_operator_changes_a_rooms_topic_place_and_zoom_on_every_gateway(stack, admin):
    a, b = stack["gateways"][:2]
    token = admin["token"]
    phone = start(a)
    topic = unique_topic()
    room = create(a, phone, 0.612, 0.388, 10, topic)["id"]

    def found(gateway, x, y, z, wanted):
        box = dict(lon1=x - 0.001, lat1=y - 0.001, lon2=x + 0.001, lat2=y + 0.001, minz=z, maxz=z)
        return [r for r in rooms_in(chat(gateway, cmd="chats", **box)) if r["topic"] == wanted]

    wait_until(lambda: len(found(b, 0.612, 0.388, 10, topic)) == 1, message="the room on B")
    changed = api(a, "PATCH", f"rooms/{room}", {"topic": "Moved here", "latitude": 48.85, "longitude": 2.35,
                                                 "zoom": 12, "reason": "wrong place"}, token=token)
    assert changed.status == 200, changed
    moved = changed.json
    assert moved["topic"] == "Moved here" and moved["zoom"] == 12 and abs(moved["latitude"] - 48.85) < 1e-9
    for gateway in (a, b):
        wait_until(lambda: len(found(gateway, moved["x"], moved["y"], 12, "Moved here")) == 1, timeout=5,
                   message="the room at its new place on " + gateway)
        assert found(gateway, 0.612, 0.388, 10, topic) == [], "and no longer at the old one"
        assert call(gateway, "GET", f"/rooms/{room}").json["topic"] == "Moved here"
    say(b, phone, room, "still the same room")
    assert [m["text"] for m in messages(a, room)] == ["still the same room"]

    topic_only = api(b, "PATCH", f"rooms/{room}", {"topic": "Renamed again"}, token=token)
    assert topic_only.status == 200 and topic_only.json["zoom"] == 12 and topic_only.json["topic"] == "Renamed again"
    for bad in ({}, {"latitude": 10}, {"zoom": 18}, {"topic": ""}, {"latitude": 89.9, "longitude": 0},
                {"topic": "x" * 500}):
        response = api(a, "PATCH", f"rooms/{room}", bad, token=token)
        assert response.status == 400, (bad, response)
    assert_api_error(api(a, "PATCH", "rooms/999999", {"topic": "nowhere"}, token=token), 404, "not_found")
    lobby = sql(stack, "SELECT id FROM rooms.rooms WHERE is_lobby")[0][0]
    assert_api_error(api(a, "PATCH", f"rooms/{lobby}", {"topic": "no"}, token=token), 400, "bad_request")
    assert call(a, "GET", f"/rooms/{room}").json["topic"] == "Renamed again", "refused changes change nothing"
    audit = sql(stack, "SELECT outcome, detail FROM session.audit_log "
                       f"WHERE actor = '{admin['name']}' AND action = 'change-room' AND target = 'room {room}' ORDER BY id")
    assert audit[0] == ["ok", "topic Moved here, place, zoom 12; reason: wrong place"], audit
