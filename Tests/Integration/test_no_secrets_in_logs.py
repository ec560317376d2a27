"""No full session id issued on this stack (they are bearer secrets), no admin
token and no admin password appears in any of its logs. This test makes session traffic of its own (start, create,
join, say, polls and presence with the session id, end) through both gateways,
sees it named in the logs by prefix, and scans every log; conftest.py scans
them once more after the last test, for the traffic of every other test."""
import os

from geochat_support.protocol import chat, create, messages, say, start, unique_topic
from geochat_support.waiting import wait_until
from admin_support import ISSUED_PASSWORDS, api, bootstrap_admin, login
from log_scan import session_id_leaks

SESSIONS = 6


def test_no_session_id_in_logs(stack):
    a, b = stack["gateways"][:2]
    sessions = [start((a, b)[i % 2]) for i in range(SESSIONS)]
    rooms = []
    for i, session in enumerate(sessions):
        gateway, other = (a, b) if i % 2 == 0 else (b, a)
        room = create(gateway, session, 0.4242, 0.2424, 9, unique_topic())["id"]
        rooms.append(room)
        assert chat(other, cmd="join", sessionid=session, chatid=room).status == 200
        say(other, session, room, f"words of session {i}")
        messages(gateway, room, sessionid=session)
        assert chat(other, cmd="participants", chatid=room, sessionid=session).status == 200
        assert chat(gateway, cmd="end", sessionid=session).status == 200
    # The rooms service logs each creation with the session's prefix: the traffic reached the logs.
    rooms_log = os.path.join(stack["STATE_DIR"], "logs", "rooms-1.log")

    def logged_prefixes():
        with open(rooms_log, errors="replace") as f:
            created = [line for line in f if "room created" in line]
        return all(any(session[:6] in line for line in created) for session in sessions)
    wait_until(logged_prefixes, timeout=10, message="the rooms service logging each creation by session prefix")

    # An admin logs in (right and wrong passwords), uses the token and logs out.
    name, password, _ = bootstrap_admin(stack)
    assert api(a, "POST", "login", {"name": name, "password": password + "x"}).status == 401
    token = login(b, name, password)
    assert api(a, "GET", "rooms", token=token).status == 200
    assert api(b, "GET", "rooms", token=token + "x").status == 401
    assert api(a, "POST", "logout", {}, token=token).status == 200

    leaks, scanned = session_id_leaks(stack, ISSUED_PASSWORDS)
    assert scanned >= SESSIONS, "the logs holding this traffic were read"
    assert not leaks, "secrets in logs (session ids, admin tokens or passwords):\n" + "\n".join(leaks[:10])
