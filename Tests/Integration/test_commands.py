"""The six commands of issue #2 (start, create, chats, join, say, messages), as the contract says."""
import re

from geochat_support.db import sql
from geochat_support.protocol import chat, check_xml, create, http, messages, rooms_in, say, start, unique_topic
from geochat_support.waiting import wait_until


def test_chats_field_example_edges_included_and_ordered_by_id(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    on_edge = create(a, session, 0.8, 0.42, 8, "whatwhat")
    inside = create(a, session, 0.53, 0.42, 8, "123")
    corner = create(a, session, 0.4, 0.8, 5, "tt")
    outside_zoom = create(a, session, 0.5, 0.5, 11, unique_topic())
    outside_box = create(a, session, 0.8000001, 0.5, 8, unique_topic())
    # Made through A, read through B: there within a broker hop (docs/protocol.md).
    def listed():
        rooms = rooms_in(chat(b, v=5, cmd="chats", lon1=0, lat1=0.4, lon2=0.8, lat2=1, minz=4, maxz=10))
        return rooms if all(room in rooms for room in (on_edge, inside, corner)) else None

    found = wait_until(listed, timeout=10, interval=0.05, message="the new rooms listed through gateway B")
    ids = [r["id"] for r in found]
    assert ids == sorted(ids)
    for room in (on_edge, inside, corner):
        assert room in found
    assert outside_zoom["id"] not in ids and outside_box["id"] not in ids
    # Corners in the other order give the same answer.
    again = rooms_in(chat(b, cmd="chats", lon1=0.8, lat1=1, lon2=0, lat2=0.4, minz=4, maxz=10))
    assert [r["id"] for r in again if r["id"] in (on_edge["id"], inside["id"], corner["id"])] == \
        sorted([on_edge["id"], inside["id"], corner["id"]])


def test_create_retry_within_ten_seconds_returns_the_same_room(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    topic = unique_topic()
    first = create(a, session, 0.549845, 0.293686, 12, topic)
    assert first["longitude"] == "0.549845" and first["latitude"] == "0.293686" and first["z"] == 12
    again = create(b, session, 0.549845, 0.293686, 12, topic)
    assert again == first
    aliased = chat(a, cmd="create", sessionid=session, longitude=0.549845, latitude=0.293686, z=12, topic=topic)
    assert rooms_in_single(aliased) == first
    other = create(a, session, 0.549845, 0.293686, 12, topic + " 2")
    assert other["id"] != first["id"], "several rooms may stand at one position"


def rooms_in_single(response):
    assert response.status == 200, response
    from geochat_support.protocol import room_of
    return room_of(response.dom().documentElement)


def test_coordinates_are_plain_decimal_and_read_back(stack):
    a = stack["gateways"][0]
    session = start(a)
    tiny = create(a, session, "1e-07", "0", 0, unique_topic())
    assert tiny["longitude"] == "0.0000001" and tiny["latitude"] == "0"
    one = create(a, session, "1", "1.0", 17, unique_topic())
    assert one["longitude"] == "1" and one["latitude"] == "1"


def test_get_and_post_body_wins(stack):
    a = stack["gateways"][0]
    response = check_xml(http(a + "/chat.php?cmd=start&nick=FromQuery", data="nick=FromBody"))
    assert response.status == 200
    session = response.dom().documentElement.firstChild.data
    rows = sql(stack, f"SELECT nick FROM session.sessions WHERE id = '{session}'")
    assert rows == [["FromBody"]]


def test_join_is_idempotent_and_unknown_room_is_404(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    room = create(a, session, 0.2, 0.2, 4, unique_topic())
    for gateway in (a, b, a):
        response = chat(gateway, cmd="join", sessionid=session, chatid=room["id"])
        assert response.status == 200 and response.dom().documentElement.tagName == "success"
    assert sql(stack, f"SELECT count(*) FROM rooms.memberships WHERE room_id = {room['id']}") == [["1"]]
    response = chat(a, cmd="join", sessionid=session, chatid=987654321)
    assert response.status == 404


def test_say_aliases_messages_past_limit_and_format(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    room = create(a, session, 0.6, 0.3, 6, unique_topic())["id"]
    ids = [say(a, session, room, "m1")]
    ids.append(int(chat(a, cmd="say", sessionid=session, chatid=room, message="m2").dom().documentElement.getAttribute("id")))
    ids.append(int(chat(b, "POST", cmd="say", sessionid=session, chatid=room, text="m3").dom().documentElement.getAttribute("id")))
    for i in range(4, 8):
        ids.append(say(a if i % 2 else b, session, room, f"m{i}"))
    assert ids == list(range(1, 8))
    wait_until(lambda: len(messages(b, room)) == 7, message="all seven on gateway B")
    assert [m["id"] for m in messages(b, room, past=0, limit=3)] == [5, 6, 7]
    assert [m["id"] for m in messages(b, room, past=2, limit=3)] == [3, 4, 5]
    assert [m["text"] for m in messages(a, room, past=5)] == ["m6", "m7"]
    assert messages(a, room, past=7) == []
    assert len(messages(a, room, limit=1000)) == 7
    for m in messages(b, room):
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", m["added"])


def test_text_round_trips_exactly(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    topic = "  <Grüße> & \"quotes\" 'apos' 👋  "
    room = create(a, session, 0.45, 0.55, 7, topic)
    assert room["topic"] == topic.strip()
    text = "Grüße 👋 <b>&amp; \"x\" 'y' ]]>"
    message_id = say(a, session, room["id"], "  " + text + "\n")
    seen = wait_until(lambda: messages(b, room["id"]), message="message on B")
    assert seen[0]["id"] == message_id and seen[0]["text"] == text


def test_limit_over_200_is_cut(stack):
    a = stack["gateways"][0]
    session = start(a)
    room = create(a, session, 0.12, 0.34, 5, unique_topic())["id"]
    for i in range(205):
        say(a, session, room, f"n{i}")
    got = messages(a, room, past=0, limit=500)
    assert len(got) == 200 and got[-1]["id"] == 205 and got[0]["id"] == 6
    assert len(messages(a, room, past=1, limit=201)) == 200
