"""Bad input on the six commands gets the contract's error and changes nothing."""
import pytest

from geochat_support.db import count
from geochat_support.protocol import assert_error, chat, check_xml, create, http, raw_chat, start, unique_topic

COUNTS = {
    "sessions": "SELECT count(*) FROM session.sessions",
    "rooms": "SELECT count(*) FROM rooms.rooms",
    "messages": "SELECT count(*) FROM messaging.messages",
    "memberships": "SELECT count(*) FROM rooms.memberships",
}


@pytest.fixture
def world(stack):
    a = stack["gateways"][0]
    session = start(a)
    room = create(a, session, 0.25, 0.75, 10, unique_topic())
    return {"gateway": a, "session": session, "room": room["id"]}


def snapshot(stack):
    return {name: count(stack, query) for name, query in COUNTS.items()}


def test_errors_change_nothing(stack, world):
    g, s, r = world["gateway"], world["session"], world["room"]
    big = "a" * 5000
    cases = [
        # (query, status, code)
        ("v=4&cmd=start&nick=Ann", 400, "unsupported_version"),
        ("v=5", 400, "missing_param"),
        ("v=5&cmd=dance", 400, "unknown_command"),
        ("cmd=start", 400, "missing_param"),
        ("cmd=start&nick=", 400, "invalid_nick"),
        ("cmd=start&nick=1abc", 400, "invalid_nick"),
        ("cmd=start&nick=a-b", 400, "invalid_nick"),
        ("cmd=start&nick=" + "a" * 33, 400, "invalid_nick"),
        ("cmd=start&nick=" + big, 413, "too_large"),
        ("cmd=chats&lon1=0&lat1=0&lon2=1&lat2=1&minz=1", 400, "missing_param"),
        ("cmd=chats&lon1=abc&lat1=0&lon2=1&lat2=1&minz=1&maxz=2", 400, "bad_param"),
        ("cmd=chats&lon1=nan&lat1=0&lon2=1&lat2=1&minz=1&maxz=2", 400, "bad_param"),
        ("cmd=chats&lon1=inf&lat1=0&lon2=1&lat2=1&minz=1&maxz=2", 400, "bad_param"),
        ("cmd=chats&lon1=-0.1&lat1=0&lon2=1&lat2=1&minz=1&maxz=2", 400, "bad_param"),
        ("cmd=chats&lon1=0&lat1=0&lon2=1&lat2=1.5&minz=1&maxz=2", 400, "bad_param"),
        ("cmd=chats&lon1=0&lat1=0&lon2=1&lat2=1&minz=1&maxz=18", 400, "bad_param"),
        ("cmd=chats&lon1=0&lat1=0&lon2=1&lat2=1&minz=2.5&maxz=4", 400, "bad_param"),
        ("cmd=chats&lon1=0&lat1=0&lon2=1&lat2=1&minz=5&maxz=4", 400, "bad_param"),
        ("cmd=chats&lon1=&lat1=0&lon2=1&lat2=1&minz=1&maxz=4", 400, "bad_param"),
        (f"cmd=create&sessionid={s}&lon=0.5&lat=0.5&z=3", 400, "missing_param"),
        (f"cmd=create&sessionid={s}&lon=0.5&lat=0.5&z=3&topic=%20%20", 400, "empty"),
        (f"cmd=create&sessionid={s}&lon=0.5&lat=0.5&z=3&topic=" + "t" * 101, 400, "too_long"),
        (f"cmd=create&sessionid={s}&lon=0.5&lat=2&z=3&topic=x", 400, "bad_param"),
        (f"cmd=create&sessionid={s}&lon=0.5&lat=0.5&z=-1&topic=x", 400, "bad_param"),
        (f"cmd=create&sessionid={s}&lon=0.5&longitude=0.6&lat=0.5&z=3&topic=x", 400, "bad_param"),
        ("cmd=create&sessionid=00000000000000000000000000&lon=0.5&lat=0.5&z=3&topic=x", 403, "invalid_session"),
        ("cmd=create&sessionid=not-a-session&lon=0.5&lat=0.5&z=3&topic=x", 403, "invalid_session"),
        (f"cmd=join&sessionid={s}", 400, "missing_param"),
        (f"cmd=join&sessionid={s}&chatid=x", 400, "bad_param"),
        (f"cmd=join&sessionid={s}&chatid=987654321", 404, "no_such_chat"),
        (f"cmd=join&sessionid=00000000000000000000000000&chatid={r}", 403, "invalid_session"),
        (f"cmd=say&sessionid={s}&chatid={r}", 400, "missing_param"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=", 400, "empty"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=%20%0A%20", 400, "empty"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=" + "m" * 501, 400, "too_long"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=" + big, 413, "too_large"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=a&text=b", 400, "bad_param"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=a&msg=b", 400, "bad_param"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=%FF%FE", 400, "bad_param"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=a%01b", 400, "bad_param"),
        (f"cmd=say&sessionid={s}&chatid={r}&msg=broken%E", 400, "bad_param"),
        (f"cmd=say&sessionid={s}&chatid=987654321&msg=hello", 404, "no_such_chat"),
        (f"cmd=say&sessionid=00000000000000000000000000&chatid={r}&msg=hello", 403, "invalid_session"),
        ("cmd=messages", 400, "missing_param"),
        ("cmd=messages&chatid=987654321", 404, "no_such_chat"),
        (f"cmd=messages&chatid={r}&limit=0", 400, "bad_param"),
        (f"cmd=messages&chatid={r}&limit=-3", 400, "bad_param"),
        (f"cmd=messages&chatid={r}&past=x", 400, "bad_param"),
        (f"cmd=messages&chatid={r}&sessionid=00000000000000000000000000", 403, "invalid_session"),
    ]
    before = snapshot(stack)
    for query, status, code in cases:
        response = raw_chat(g, query)
        assert response.status == status, (query, response)
        assert response.dom().documentElement.getAttribute("code") == code, (query, response)
        assert response.dom().documentElement.firstChild.data.strip(), "an error has a text for people"
    assert snapshot(stack) == before


def test_body_over_64_kib_is_too_large(stack, world):
    # Just under 64 KiB is read in full: the command's own checks answer (no session given).
    body = "&".join(f"p{i}=" + "x" * 1000 for i in range(60)) + "&pad=" + "y" * 4000
    assert len(body) < 64 * 1024
    response = check_xml(http(world["gateway"] + "/chat.php?cmd=say", data=body))
    assert_error(response, 400, "missing_param")
    before = snapshot(stack)
    over = f"cmd=say&sessionid={world['session']}&chatid={world['room']}&msg=hi&" + "z=" + "q" * 70000
    response = check_xml(http(world["gateway"] + "/chat.php", data=over))
    assert_error(response, 413, "too_large")
    assert snapshot(stack) == before


def test_ended_session_is_invalid(stack, world):
    g = world["gateway"]
    session = start(g)
    assert chat(g, cmd="end", sessionid=session).status == 200
    for gateway in stack["gateways"]:
        assert_error(chat(gateway, cmd="say", sessionid=session, chatid=world["room"], msg="x"), 403, "invalid_session")
    assert_error(chat(g, cmd="end", sessionid=session), 403, "invalid_session")
