"""Conformance, contract 1 (the path prefix) and the configurable room cap: a
third gateway of our own joins the shared stack with GEOCHAT_PATH_PREFIX and
GEOCHAT_ROOM_CAP set, and talks with clients of the two shared gateways."""
import urllib.parse
import uuid

import pytest

from geochat_support.db import sql
from geochat_support.protocol import (assert_error, chat, check_xml, create, http, messages, room_of, rooms_in, say,
    start, unique_topic)
from geochat_support.waiting import wait_until
from conformance import OwnGateway, element, lobby_messages, lobby_room, success

PREFIX = "/~rost/geochat"


@pytest.fixture(scope="module")
def prefixed(stack):
    gateway = OwnGateway(stack, GEOCHAT_PATH_PREFIX=PREFIX + "/", GEOCHAT_ROOM_CAP="3")
    yield gateway.url
    gateway.close()


def prefixed_chat(base, **params):
    return check_xml(http(base + PREFIX + "/chat.php?" + urllib.parse.urlencode(params)))


def test_all_three_endpoints_under_the_prefix(stack, prefixed):
    shared = stack["gateways"][0]
    session = element(prefixed_chat(prefixed, v=5, cmd="start", nick="Rost"), "sessionid").firstChild.data
    room = room_of(element(prefixed_chat(prefixed, cmd="create", sessionid=session, lon=0.25, lat=0.125, z=2,
                                         topic=unique_topic()), "chat"))
    # The session and the room are the cluster's: a shared gateway knows them.
    message_id = say(shared, session, room["id"], "through a shared gateway")
    got = wait_until(lambda: [m for m in (element(prefixed_chat(prefixed, cmd="messages", chatid=room["id"]), "messages")
                                          .getElementsByTagName("message"))], message="message under the prefix")
    assert [int(m.getAttribute("id")) for m in got] == [message_id]
    # POST works under the prefix too, and a percent-encoded tilde is the same path.
    response = check_xml(http(prefixed + PREFIX + "/chat.php", data=f"cmd=say&sessionid={session}&chatid={room['id']}"
                                                                     "&msg=posted"))
    assert success_id(response) == message_id + 1
    response = check_xml(http(prefixed + "/%7Erost/geochat/chat.php?cmd=messages&chatid=" + str(room["id"])))
    assert response.status == 200, response
    # The add/messages dialect under the prefix, bridged with the lobby room.
    tag = uuid.uuid4().hex[:8]
    response = check_xml(http(prefixed + PREFIX + "/add.php", data=f"user=rost&message={tag}"))
    assert success(response)
    lobby = lobby_room(stack)
    wait_until(lambda: [m for m in messages(shared, lobby, past=0, limit=200) if m["text"] == tag],
               message="prefixed add.php in the lobby")
    wait_until(lambda: [m for m in lobby_messages(prefixed, prefix=PREFIX) if m["text"] == tag],
               message="prefixed messages.php")
    # Without the prefix there is nothing there.
    for path in ("/chat.php?cmd=start&nick=Ann", "/add.php", "/messages.php"):
        assert http(prefixed + path).status == 404


def success_id(response):
    assert response.status == 200, response
    return int(element(response, "success").getAttribute("id"))


def test_configured_room_cap(stack, prefixed):
    """GEOCHAT_ROOM_CAP=3 on our gateway, unless an admin stored a live `room.cap`
    (it wins over the configured value, and reaches every gateway)."""
    stored = sql(stack, "SELECT value FROM session.settings WHERE name = 'room.cap'")
    cap = int(stored[0][0]) if stored else 3
    session = start(stack["gateways"][1])
    y = 0.0123456 + uuid.uuid4().int % 1000 * 1e-9
    rooms = [create(stack["gateways"][i % 2], session, 0.875, y, 15, unique_topic()) for i in range(5)]
    box = dict(cmd="chats", lon1=0.875, lat1=y, lon2=0.875, lat2=y, minz=15, maxz=15)

    def expected(by_recency):  # the `cap` most recently active, ordered by id
        return sorted(by_recency[-cap:], key=lambda r: r["id"])

    assert rooms_in(prefixed_chat(prefixed, **box)) == expected(rooms)
    assert chat(stack["gateways"][0], cmd="join", sessionid=session, chatid=rooms[0]["id"]).status == 200
    assert rooms_in(prefixed_chat(prefixed, **box)) == expected(rooms[1:] + rooms[:1])
    if not stored:
        assert rooms_in(chat(stack["gateways"][0], **box)) == rooms, "the shared gateways keep the default cap"
    assert_error(prefixed_chat(prefixed, cmd="dance"), 400, "unknown_command")
