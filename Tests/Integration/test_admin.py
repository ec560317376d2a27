"""The admin API (issue 4, parts 2-4) on the real stack: tokens, logins and
their throttle, bans on every gateway, live settings, room removal, sessions,
the audit log. Expiry runs through the API are in test_admin_expiry.py."""
import secrets
import time
import urllib.parse

import pytest

from admin_support import admin_url, api, assert_api_error, bootstrap_admin, login, until_status
from geochat_support.db import count, sql
from geochat_support.protocol import (assert_error, chat, check_xml, http, trickled_answer, create, messages, rooms_in, say, start, unique_nick,
    unique_topic)
from geochat_support.stack import run_stack_command
from geochat_support.waiting import wait_until


@pytest.fixture(scope="module")
def admin(stack):
    name, password, run = bootstrap_admin(stack)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"admin {name} created" in run.stdout
    return {"name": name, "password": password, "token": login(stack["gateways"][0], name, password)}


def test_bootstrap_refuses_an_existing_name_and_a_short_password(stack, admin):
    _, _, again = bootstrap_admin(stack, name=admin["name"])
    assert again.returncode == 1 and "exists already" in again.stdout
    _, _, short = bootstrap_admin(stack, password="short")
    assert short.returncode == 2 and "password must be" in short.stdout
    _, _, bad = bootstrap_admin(stack, name="1bad-name")
    assert bad.returncode == 2
    assert count(stack, f"SELECT count(*) FROM session.admins WHERE name = '{admin['name']}'") == 1
    stored = sql(stack, f"SELECT password_hash FROM session.admins WHERE name = '{admin['name']}'")[0][0]
    assert stored.startswith("$2") and admin["password"] not in stored


def test_every_endpoint_refuses_requests_without_a_valid_token(stack, admin):
    a, b = stack["gateways"][:2]
    forged = "gca_" + secrets.token_hex(32)
    for gateway in (a, b):
        for method, path in [("GET", "rooms"), ("GET", "settings"), ("PUT", "settings"), ("POST", "bans"),
                             ("GET", "sessions"), ("DELETE", "rooms/1"), ("POST", "expiry/runs"), ("GET", "audit"),
                             ("POST", "logout")]:
            response = api(gateway, method, path, {} if method in ("PUT", "POST") else None)
            assert_api_error(response, 401, "unauthorized")
            assert response.headers.get("WWW-Authenticate", "").startswith("Bearer")
            assert_api_error(api(gateway, method, path, token=forged), 401, "unauthorized")
            assert_api_error(api(gateway, method, path, token="not a token"), 401, "unauthorized")
        assert api(gateway, "GET", "settings", token=admin["token"]).status == 200


def test_login_logout_and_a_revoked_token(stack, admin):
    a, b = stack["gateways"][:2]
    token = login(b, admin["name"], admin["password"])
    assert token != admin["token"]
    assert api(a, "GET", "sessions", token=token).status == 200
    assert api(b, "GET", "sessions", token=token).status == 200
    assert api(a, "POST", "logout", {}, token=token).json == {"loggedOut": True}
    for gateway in (a, b):
        assert_api_error(api(gateway, "GET", "sessions", token=token), 401, "unauthorized")
    # The other token of the same admin still works; the stored hash is not the token.
    assert api(b, "GET", "sessions", token=admin["token"]).status == 200
    assert count(stack, f"SELECT count(*) FROM session.admin_tokens WHERE token_hash = '{token}'") == 0
    assert count(stack, f"SELECT count(*) FROM session.admin_tokens WHERE admin = '{admin['name']}' "
                        "AND revoked_at IS NOT NULL") >= 1


def test_an_expired_token_is_refused(stack, admin):
    a = stack["gateways"][0]
    token = login(a, admin["name"], admin["password"])
    assert api(a, "GET", "bans", token=token).status == 200
    sql(stack, f"UPDATE session.admin_tokens SET expires_at = now() - interval '1 second' "
               f"WHERE admin = '{admin['name']}' AND created_at = (SELECT max(created_at) FROM session.admin_tokens "
               f"WHERE admin = '{admin['name']}')")
    assert_api_error(api(a, "GET", "bans", token=token), 401, "unauthorized")


def test_wrong_passwords_are_refused_audited_and_throttled(stack):
    a, b = stack["gateways"][:2]
    name, password, run = bootstrap_admin(stack)
    assert run.returncode == 0, run.stderr
    for gateway in (a, b, a, b, a):
        assert_api_error(api(gateway, "POST", "login", {"name": name, "password": "wrong password!"}), 401, "unauthorized")
    # Five failures of this name in five minutes: even the right password waits.
    assert_api_error(api(b, "POST", "login", {"name": name, "password": password}), 429, "rate_limited")
    assert count(stack, f"SELECT count(*) FROM session.audit_log WHERE action = 'login' AND target = '{name}' "
                        "AND outcome = 'denied'") == 5
    assert count(stack, f"SELECT count(*) FROM session.audit_log WHERE action = 'login' AND target = '{name}' "
                        "AND outcome = 'throttled'") == 1
    # An unknown name is refused the same way.
    assert_api_error(api(a, "POST", "login", {"name": "nobody" + secrets.token_hex(3), "password": "x" * 14}),
                     401, "unauthorized")
    # Malformed bodies are 400, not a crash.
    assert_api_error(api(a, "POST", "login", raw=b"{not json"), 400, "bad_request")
    assert_api_error(api(a, "POST", "login", {"name": name}), 400, "bad_request")


def participants(gateway, room):
    response = chat(gateway, cmd="participants", chatid=room)
    assert response.status == 200, response
    return [p.firstChild.data for p in response.dom().getElementsByTagName("user") if p.firstChild]


def test_a_banned_nick_gets_403_on_every_gateway_and_leaves_participant_lists(stack, admin):
    a, b = stack["gateways"][:2]
    nick = unique_nick()
    session = start(a, nick)
    other = start(b)
    room = create(a, session, 0.31, 0.62, 11, unique_topic())
    say(a, session, room["id"], "before the ban")
    say(b, other, room["id"], "hello")
    wait_until(lambda: nick in participants(b, room["id"]), message="the nick listed on B")

    response = api(a, "POST", "bans", {"nick": nick.upper(), "reason": "spam"}, token=admin["token"])
    assert response.status == 201, response
    assert response.json["ban"]["target"] == {"kind": "nick", "value": nick.upper()}

    for gateway in (a, b):
        wait_until(lambda: chat(gateway, cmd="say", sessionid=session, chatid=room["id"], msg="x").status == 403,
                   timeout=10, message="the ban reaching " + gateway)
        assert_error(chat(gateway, cmd="say", sessionid=session, chatid=room["id"], msg="x"), 403, "banned")
        assert_error(chat(gateway, cmd="messages", chatid=room["id"], sessionid=session), 403, "banned")
        assert_error(chat(gateway, cmd="join", sessionid=session, chatid=room["id"]), 403, "banned")
        assert_error(chat(gateway, v=5, cmd="start", nick=nick), 403, "banned")
        assert nick not in participants(gateway, room["id"])
        # The lobby dialect has no session, only the name: it is banned there too.
        for user in (nick, nick.upper()):
            posted = http(gateway + "/add.php", data=urllib.parse.urlencode({"user": user, "message": "still here"}).encode())
            assert_error(check_xml(posted), 403, "banned")
    assert say(b, other, room["id"], "others carry on") > 0
    bans = api(b, "GET", "bans", token=admin["token"]).json["bans"]
    assert any(ban["target"]["value"].lower() == nick for ban in bans)

    response = api(b, "DELETE", f"bans/nick/{nick}", token=admin["token"])
    assert response.status == 200 and response.json["ban"]["active"] is False, response
    for gateway in (a, b):
        wait_until(lambda: chat(gateway, cmd="say", sessionid=session, chatid=room["id"], msg="back").status == 200,
                   timeout=10, message="the unban reaching " + gateway)
        wait_until(lambda: nick in participants(gateway, room["id"]), message="the nick listed again")
    assert_api_error(api(a, "DELETE", f"bans/nick/{nick}", token=admin["token"]), 400, "bad_request")
    rows = sql(stack, f"SELECT action, outcome FROM session.audit_log WHERE actor = '{admin['name']}' "
                      f"AND lower(target) = 'nick {nick}' ORDER BY id")
    assert ["ban", "ok"] in rows and ["unban", "ok"] in rows


def test_a_banned_session_gets_403_and_other_sessions_of_the_nick_do_not(stack, admin):
    a, b = stack["gateways"][:2]
    nick = unique_nick()
    banned = start(a, nick)
    spared = start(b, nick)
    room = create(a, banned, 0.32, 0.61, 11, unique_topic())
    response = api(b, "POST", "bans", {"session": banned}, token=admin["token"])
    assert response.status == 201, response
    for gateway in (a, b):
        wait_until(lambda: chat(gateway, cmd="join", sessionid=banned, chatid=room["id"]).status == 403, timeout=10,
                   message="the session ban reaching " + gateway)
        assert chat(gateway, cmd="join", sessionid=spared, chatid=room["id"]).status == 200
    sessions = api(a, "GET", f"sessions?nick={nick}", token=admin["token"]).json["sessions"]
    assert {s["id"]: s["banned"] for s in sessions} == {banned: True, spared: False}
    assert api(a, "DELETE", f"bans/session/{banned}", token=admin["token"]).status == 200
    for gateway in (a, b):
        wait_until(lambda: chat(gateway, cmd="join", sessionid=banned, chatid=room["id"]).status == 200, timeout=10,
                   message="the session unban reaching " + gateway)


def test_ban_requests_are_checked(stack, admin):
    a = stack["gateways"][0]
    for body in ({}, {"nick": "bob", "session": "x" * 26}, {"nick": "no spaces"}, {"session": "short"},
                 {"nick": "bob", "reason": "r" * 201}):
        assert_api_error(api(a, "POST", "bans", body, token=admin["token"]), 400, "bad_request")
    assert_api_error(api(a, "DELETE", "bans/ip/1.2.3.4", token=admin["token"]), 400, "bad_request")


def test_settings_are_checked_and_a_change_reaches_the_other_gateway_and_survives_its_restart(stack, admin):
    a, b = stack["gateways"][:2]
    token = admin["token"]
    stored_before = sql(stack, "SELECT value, version FROM session.settings WHERE name IN ('room.cap', 'presence.timeout.s') "
                               "ORDER BY name")
    for body, raw in [({"room.cap": 0}, None), ({"room.cap": 5001}, None), ({"no.such.setting": 1}, None),
                      ({}, None), (None, b"[1, 2]"), (None, b'{"room.cap": "ten"}')]:
        assert_api_error(api(a, "PUT", "settings", body, token=token, raw=raw), 400, "bad_request")
    # A refused change changes nothing, and all of a change is refused when one part is bad.
    assert_api_error(api(a, "PUT", "settings", {"room.cap": 3, "presence.timeout.s": 0}, token=token), 400, "bad_request")
    assert sql(stack, "SELECT value, version FROM session.settings WHERE name IN ('room.cap', 'presence.timeout.s') "
                      "ORDER BY name") == stored_before

    session = start(a)
    topic = unique_topic()
    for i in range(3):
        create(a, session, 0.71 + i * 0.001, 0.27, 9, topic)

    def rooms_on(gateway):
        return [r for r in rooms_in(chat(gateway, cmd="chats", lon1=0.709, lat1=0.269, lon2=0.714, lat2=0.271,
                                         minz=9, maxz=9)) if r["topic"] == topic]

    # Through the other gateway a new room is there within a broker hop (docs/protocol.md).
    wait_until(lambda: len(rooms_on(b)) == 3, timeout=5, interval=0.05, message="the new rooms reaching gateway B")
    try:
        response = api(a, "PUT", "settings", {"room.cap": 1}, token=token)
        assert response.status == 200, response
        cap = next(s for s in response.json["settings"] if s["name"] == "room.cap")
        assert cap["value"] == 1 and cap["updatedBy"] == admin["name"] and cap["defaultValue"] == 500
        changed_at = time.monotonic()
        wait_until(lambda: len(rooms_on(b)) == 1, timeout=5, interval=0.05, message="room.cap reaching gateway B")
        print(f"room.cap reached gateway B after {time.monotonic() - changed_at:.2f} s")
        assert len(rooms_on(a)) == 1
        got = api(b, "GET", "settings", token=token).json["settings"]
        assert next(s for s in got if s["name"] == "room.cap")["value"] == 1

        # Stored in PostgreSQL and read again from the topic by a restarted gateway.
        assert sql(stack, "SELECT value FROM session.settings WHERE name = 'room.cap'") == [["1"]]
        run_stack_command(stack, "stop", "gateway-2")
        run_stack_command(stack, "start", "gateway-2")
        wait_until(lambda: _ready(b), timeout=60, interval=0.5, message="gateway B ready again")
        assert len(rooms_on(b)) == 1
    finally:
        assert api(a, "PUT", "settings", {"room.cap": 500}, token=token).status == 200
    wait_until(lambda: len(rooms_on(b)) == 3, timeout=5, message="room.cap 500 reaching gateway B")
    rows = sql(stack, f"SELECT outcome, detail FROM session.audit_log WHERE actor = '{admin['name']}' "
                      "AND action = 'settings' ORDER BY id")
    assert ["ok", "room.cap=1"] in rows and ["ok", "room.cap=500"] in rows
    assert any(outcome == "refused" for outcome, _ in rows)


def _ready(gateway):
    import urllib.request
    try:
        with urllib.request.urlopen(gateway + "/ready", timeout=2) as r:
            return r.status == 200
    except Exception:
        return False


def test_presence_timeout_setting_reaches_the_other_gateway(stack, admin):
    a, b = stack["gateways"][:2]
    token = admin["token"]
    quiet = start(a)
    talker = start(b)
    room = create(a, quiet, 0.33, 0.63, 11, unique_topic())
    say(a, quiet, room["id"], "then silence")
    say(b, talker, room["id"], "hi")
    try:
        # The test stack runs with a 4 s presence timeout: the quiet one drops off, in the admin API
        # and on B, while the talker shows signs of life (a request carrying its session)...
        def only_the_talker_present():
            assert chat(b, cmd="participants", chatid=room["id"], sessionid=talker).status == 200
            listed = api(a, "GET", f"rooms/{room['id']}", token=token).json["room"]["participants"]
            return len(listed) == 1 and len(participants(b, room["id"])) == 1
        wait_until(only_the_talker_present, timeout=12, interval=0.5, message="only the talker present")
        # ...until an admin raises the timeout to 5 minutes on gateway A: B lists it again.
        assert api(a, "PUT", "settings", {"presence.timeout.s": 300}, token=token).status == 200
        wait_until(lambda: len(participants(b, room["id"])) == 2, timeout=5, message="presence timeout reaching B")
    finally:
        assert api(a, "PUT", "settings", {"presence.timeout.s": 4}, token=token).status == 200


def test_rooms_are_listed_with_visits_members_and_messages_and_removed_now(stack, admin):
    a, b = stack["gateways"][:2]
    token = admin["token"]
    session = start(a)
    topic = unique_topic()
    room = create(a, session, 0.41, 0.52, 13, topic)
    say(a, session, room["id"], "one")
    say(a, session, room["id"], "two")
    assert len(messages(b, room["id"])) == 2

    found = api(b, "GET", "rooms?q=" + topic.split()[1], token=token).json["rooms"]
    assert [r["id"] for r in found] == [room["id"]]
    listed = found[0]
    assert listed["topic"] == topic and listed["messages"] == 2 and listed["members"] == 1 and listed["z"] == 13
    assert abs(listed["lastVisitedAtMs"] / 1000 - time.time()) < 60
    one = api(a, "GET", f"rooms/{room['id']}", token=token).json["room"]
    assert one["participants"] and one["messages"] == 2
    assert_api_error(api(a, "GET", "rooms?limit=0", token=token), 400, "bad_request")
    assert_api_error(api(a, "GET", "rooms/abc", token=token), 400, "bad_request")

    response = api(a, "DELETE", f"rooms/{room['id']}", token=token)
    assert response.status == 200 and response.json == {"removed": room["id"]}, response
    for gateway in (a, b):
        wait_until(lambda: chat(gateway, cmd="messages", chatid=room["id"]).status == 404, timeout=10,
                   message="the removed room answering 404 on " + gateway)
        assert_error(chat(gateway, cmd="say", sessionid=session, chatid=room["id"], msg="x"), 404, "no_such_chat")
    wait_until(lambda: count(stack, f"SELECT count(*) FROM messaging.messages WHERE room_id = {room['id']}") == 0,
               timeout=10, message="its messages deleted")
    assert count(stack, f"SELECT count(*) FROM rooms.rooms WHERE id = {room['id']}") == 0
    assert count(stack, f"SELECT count(*) FROM rooms.memberships WHERE room_id = {room['id']}") == 0
    assert sql(stack, f"SELECT reason FROM rooms.removed_rooms WHERE id = {room['id']}") == [["admin"]]
    assert_api_error(api(b, "DELETE", f"rooms/{room['id']}", token=token), 404, "not_found")
    assert_api_error(api(b, "GET", f"rooms/{room['id']}", token=token), 404, "not_found")
    lobby = sql(stack, "SELECT id FROM rooms.rooms WHERE is_lobby")[0][0]
    assert_api_error(api(a, "DELETE", f"rooms/{lobby}", token=token), 400, "bad_request")
    outcomes = sql(stack, f"SELECT target, outcome FROM session.audit_log WHERE actor = '{admin['name']}' "
                          "AND action = 'remove-room' ORDER BY id")
    assert [f"room {room['id']}", "ok"] in outcomes and [f"room {room['id']}", "refused"] in outcomes


def test_expiry_run_requests_are_checked_before_they_reach_the_expiry_service(stack, admin):
    a = stack["gateways"][0]
    for body in ({"dryRun": True, "idleSeconds": 5}, {"idleSeconds": 86400}, {"dryRun": "yes"}):
        assert_api_error(api(a, "POST", "expiry/runs", body, token=admin["token"]), 400, "bad_request")
    assert_api_error(api(a, "GET", "expiry/runs/zero", token=admin["token"]), 400, "bad_request")
    assert_api_error(api(a, "GET", "expiry/runs?limit=5000", token=admin["token"]), 400, "bad_request")


def test_the_audit_log_is_readable_through_the_api(stack, admin):
    b = stack["gateways"][1]
    entries = api(b, "GET", "audit?limit=1000", token=admin["token"]).json["entries"]
    mine = [e for e in entries if e["actor"] == admin["name"]]
    assert any(e["action"] == "login" and e["outcome"] == "ok" and e["gateway"].startswith("gateway-") for e in mine)
    assert all(e["id"] and e["atMs"] for e in mine)
    ids = [e["id"] for e in entries]
    assert ids == sorted(ids, reverse=True)


def test_the_audit_log_pages_and_filters(stack, admin):
    """Junk cannot hide real rows: pages walk the whole log by `before`, and a
    filter by actor, action or outcome finds an admin's rows among any number of others."""
    a, b = stack["gateways"][:2]
    name, password, _ = bootstrap_admin(stack)
    for _ in range(3):
        assert api(a, "POST", "login", {"name": name, "password": password + "x"}).status == 401
    token = login(b, name, password)
    denied = api(a, "GET", f"audit?actor={name}&outcome=denied&limit=2", token=token).json
    assert [(e["actor"], e["action"], e["outcome"]) for e in denied["entries"]] == [(name, "login", "denied")] * 2
    assert denied["next"] == denied["entries"][-1]["id"]
    rest = api(b, "GET", f"audit?actor={name}&outcome=denied&limit=2&before={denied['next']}", token=token).json
    assert [e["outcome"] for e in rest["entries"]] == ["denied"] and "next" not in rest
    assert rest["entries"][0]["id"] < denied["next"]
    logins = api(a, "GET", f"audit?actor={name}&action=login", token=token).json["entries"]
    assert [e["outcome"] for e in logins] == ["ok", "denied", "denied", "denied"]
    # Every row of the log, page by page: each page older than the one before, none twice.
    seen, before = [], None
    while True:
        page = api(a, "GET", "audit?limit=50" + (f"&before={before}" if before else ""), token=token).json
        seen += [e["id"] for e in page["entries"]]
        before = page.get("next")
        if before is None:
            break
    assert seen == sorted(set(seen), reverse=True)
    assert count(stack, "SELECT count(*) FROM session.audit_log") == len(seen)
    for bad in ("before=zero", "before=0", "actor=" + "x" * 65, "outcome=%1B%5B2J", "action="):
        assert_api_error(api(a, "GET", "audit?" + bad, token=token), 400, "bad_request")


def test_a_trickled_admin_body_is_cut_off(stack):
    """The admin JSON body has a deadline (10 s): a client sending a byte now and
    then cannot hold the request open."""
    answer, elapsed = trickled_answer(
        admin_url(stack["gateways"][0]),
        b"POST /admin/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{",
        until=b"\r\n\r\n")
    assert b" 408 " in answer.split(b"\r\n")[0], answer
    assert 8 <= elapsed < 16, elapsed
