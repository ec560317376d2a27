"""Conformance, contract 2 and 3 `chats`, `create`, `join`, `leave`: the field
example, aliases, the retry window, plain-decimal coordinates, the room cap.
Requests alternate between the two gateways."""
import random

from geochat_support.db import count, sql
from geochat_support.stack import restart_gateways
from geochat_support.protocol import assert_error, chat, create, room_of, rooms_in, start, unique_topic
from geochat_support.waiting import wait_until
from conformance import Alternating, element, stored_room, success


def single_room(response):
    assert response.status == 200, response
    return room_of(element(response, "chat"))


def test_chats_field_example(stack):
    gw = Alternating(stack["gateways"])
    session = start(gw())
    five = create(gw(), session, 0.8, 0.42, 8, "whatwhat")
    six = create(gw(), session, 0.53, 0.42, 8, "123")
    fifty_eight = create(gw(), session, 0.4, 0.8, 5, "tt")
    reader = gw()

    def all_three():
        rooms = rooms_in(chat(reader, v=5, cmd="chats", lon1=0, lat1=0.4, lon2=0.8, lat2=1, minz=4, maxz=10))
        return rooms if all(r in rooms for r in (five, six, fifty_eight)) else None

    # Two of the rooms were made through the other gateway: its index learns them from the room
    # events, milliseconds later (seconds on a loaded machine).
    found = wait_until(all_three, timeout=10, interval=0.2, message="the rooms made through both gateways are listed")
    ids = [r["id"] for r in found]
    assert ids == sorted(ids), "ordered by id"
    # The room at longitude 0.8 lies on the box edge: edges are inside.
    assert five in found and six in found and fifty_eight in found
    assert {"id": five["id"], "longitude": "0.8", "latitude": "0.42", "z": 8, "topic": "whatwhat"} in found
    assert {"id": six["id"], "longitude": "0.53", "latitude": "0.42", "z": 8, "topic": "123"} in found
    assert {"id": fifty_eight["id"], "longitude": "0.4", "latitude": "0.8", "z": 5, "topic": "tt"} in found


def test_chats_box_corners_any_order_zoom_inclusive_and_empty(stack):
    gw = Alternating(stack["gateways"])
    session = start(gw())
    x, y = round(random.uniform(0.05, 0.08), 9), round(random.uniform(0.9, 0.95), 9)  # a spot of its own
    rooms = {z: create(gw(), session, x, y, z, unique_topic()) for z in (3, 4, 6, 7)}
    outside = create(gw(), session, x + 0.0001, y, 5, unique_topic())
    for corners in ((x, y, x, y), (x - 0.00001, y + 0.00001, x, y - 0.00001), (x, y - 0.00001, x - 0.00001, y + 0.00001)):
        found = rooms_in(chat(gw(), cmd="chats", lon1=corners[0], lat1=corners[1], lon2=corners[2], lat2=corners[3],
                              minz=4, maxz=6))
        ids = {r["id"] for r in found}
        assert rooms[4]["id"] in ids and rooms[6]["id"] in ids
        assert rooms[3]["id"] not in ids and rooms[7]["id"] not in ids and outside["id"] not in ids
    found = rooms_in(chat(gw(), cmd="chats", lon1=x, lat1=y, lon2=x, lat2=y, minz=7, maxz=7))
    assert [r["id"] for r in found] == [rooms[7]["id"]]
    empty = chat(gw(), cmd="chats", lon1=x, lat1=y, lon2=x, lat2=y, minz=17, maxz=17)
    assert rooms_in(empty) == [] and element(empty, "chats")


def test_create_aliases_several_rooms_per_position_and_topic_trimmed(stack):
    gw = Alternating(stack["gateways"])
    session = start(gw())
    topic = unique_topic()
    by_alias = single_room(chat(gw(), cmd="create", sessionid=session, longitude=0.549845, latitude=0.293686, z=12,
                                topic=topic))
    assert by_alias == {"id": by_alias["id"], "longitude": "0.549845", "latitude": "0.293686", "z": 12, "topic": topic}
    mixed = single_room(chat(gw(), "POST", cmd="create", sessionid=session, lon=0.549845, latitude=0.293686, z=12,
                             topic=topic + "b"))
    assert mixed["id"] != by_alias["id"]
    other = create(gw(), start(gw()), 0.549845, 0.293686, 12, topic)
    assert other["id"] not in (by_alias["id"], mixed["id"]), "another session's same create is a new room"
    padded = create(gw(), session, 0.1, 0.2, 3, " \t " + topic + "  \n")
    assert padded["topic"] == topic
    assert create(gw(), session, 0.1, 0.2, 3, "x" * 100)["topic"] == "x" * 100
    assert create(gw(), session, 0.1, 0.2, 3, "ü" * 100)["topic"] == "ü" * 100, "lengths count code points"
    assert_error(chat(gw(), cmd="create", sessionid=session, lon=0.1, lat=0.2, z=3, topic="ü" * 101), 400, "too_long")


def test_create_retry_within_ten_seconds_is_the_same_room(stack):
    gw = Alternating(stack["gateways"])
    session = start(gw())
    topic = unique_topic()
    first = create(gw(), session, 0.6543, 0.3456, 10, topic)
    before = count(stack, "SELECT count(*) FROM rooms.rooms")
    assert create(gw(), session, 0.6543, 0.3456, 10, topic) == first
    assert single_room(chat(gw(), "POST", cmd="create", sessionid=session, longitude="0.6543", latitude="0.3456",
                            z=10, topic=topic)) == first, "a retry spelled with the aliases is the same create"
    assert create(gw(), session, "0.65430", "3.456e-1", 10, "  " + topic) == first, "same numbers, same trimmed topic"
    assert count(stack, "SELECT count(*) FROM rooms.rooms") == before
    # Anything different is a new room.
    for changed in ((0.6544, 0.3456, 10, topic), (0.6543, 0.3457, 10, topic), (0.6543, 0.3456, 11, topic),
                    (0.6543, 0.3456, 10, topic + "!")):
        assert create(gw(), session, *changed)["id"] != first["id"]
    # After the window the same create is a new room.
    sql(stack, f"UPDATE rooms.rooms SET created_at = now() - interval '11 seconds' WHERE id = {first['id']}")
    assert create(gw(), session, 0.6543, 0.3456, 10, topic)["id"] != first["id"]


def test_coordinates_plain_decimal_read_back_to_the_stored_value(stack):
    gw = Alternating(stack["gateways"])
    session = start(gw())
    rng = random.Random(20261123)
    values = [0, 1, 0.5, 1e-7, 5e-324, 0.1 + 0.2, 1 / 3, 0.000123456789, 0.999999999999999] + \
             [rng.random() for _ in range(6)]
    for i, x in enumerate(values):
        y = values[-1 - i]
        room = create(gw(), session, repr(x), repr(y), 17, unique_topic())
        for written, sent in ((room["longitude"], x), (room["latitude"], y)):
            assert "e" not in written.lower(), written
            assert float(written) == sent, (written, sent)
        sx, sy, _, _ = stored_room(stack, room["id"])
        assert float(room["longitude"]) == float(sx) and float(room["latitude"]) == float(sy)
        found = rooms_in(chat(gw(), cmd="chats", lon1=x, lat1=y, lon2=x, lat2=y, minz=17, maxz=17))
        assert room in found
    zero_one = create(gw(), session, "0.0", "1.000", 0, unique_topic())
    assert zero_one["longitude"] == "0" and zero_one["latitude"] == "1"


def test_join_and_leave_are_idempotent_and_join_visits(stack):
    gw = Alternating(stack["gateways"])
    session = start(gw())
    room = create(gw(), session, 0.7171, 0.1717, 13, unique_topic())["id"]
    sql(stack, f"UPDATE rooms.rooms SET last_visited_at = now() - interval '1 day' WHERE id = {room}")
    for _ in range(2):
        success(chat(gw(), cmd="join", sessionid=session, chatid=room))
    assert count(stack, f"SELECT count(*) FROM rooms.memberships WHERE room_id = {room}") == 1
    assert count(stack, f"SELECT count(*) FROM rooms.rooms WHERE id = {room} "
                        "AND last_visited_at > now() - interval '1 minute'") == 1, "join marks the room visited"
    for _ in range(2):
        success(chat(gw(), "POST", cmd="leave", sessionid=session, chatid=room))
    assert count(stack, f"SELECT count(*) FROM rooms.memberships WHERE room_id = {room}") == 0
    for command in ("join", "leave"):
        assert_error(chat(gw(), cmd=command, sessionid=session, chatid=987654321), 404, "no_such_chat")
        assert_error(chat(gw(), cmd=command, sessionid=session), 400, "missing_param")
        assert_error(chat(gw(), cmd=command, chatid=room), 400, "missing_param")


def test_room_cap_500_keeps_the_most_recently_active(stack):
    """600 rooms in one small box (inserted into the rooms service's own table, then the gateways restarted),
    the 500 most recently active are returned, ordered by id."""
    gw = Alternating(stack["gateways"])
    # 500 unless an admin stored a live `room.cap` (test_admin.py sets it and puts 500 back).
    stored = sql(stack, "SELECT value FROM session.settings WHERE name = 'room.cap'")
    cap = int(stored[0][0]) if stored else 500
    assert 3 <= cap <= 590, cap
    tag = "cap " + unique_topic()
    y = round(random.uniform(0.02, 0.04), 9)  # a row of its own, whatever ran before
    sql(stack, f"""
        INSERT INTO rooms.rooms (x, y, z, topic, created_at, last_visited_at)
        SELECT 0.97 + g * 0.00001, {y}, 16, '{tag} ' || g, now() - interval '2 days',
               now() - interval '2 days' + g * interval '1 second'
        FROM generate_series(1, 600) g""")
    ids = [int(r[0]) for r in sql(stack, f"SELECT id FROM rooms.rooms WHERE topic LIKE '{tag} %' ORDER BY id")]
    assert len(ids) == 600
    restart_gateways(stack)  # rooms written behind the rooms service's back reach a gateway's index at its start
    box = dict(cmd="chats", lon1=0.97, lat1=y, lon2=0.98, lat2=y, minz=16, maxz=16)
    found = [r["id"] for r in rooms_in(chat(gw(), **box))]
    # Rooms inserted with g = 101…600 are the most recent (later activity).
    assert found == ids[600 - cap:], (len(found), found[:3])
    # Activity brings old rooms back in: a join (its visit reaches the other
    # gateway's index by the room's event, which the join does not wait for:
    # docs/architecture.md, "The outbox of state changes"), a say (the visit
    # follows from the message's event).
    session = start(gw())
    success(chat(gw(), cmd="join", sessionid=session, chatid=ids[0]))
    wait_until(lambda: all(ids[0] in [r["id"] for r in rooms_in(chat(g, **box))] for g in stack["gateways"][:2]),
               timeout=5, message="the joined room among the 500 on both gateways")
    for _ in range(2):
        found = [r["id"] for r in rooms_in(chat(gw(), **box))]
        assert len(found) == cap and found == sorted(found)
        assert ids[0] in found and ids[600 - cap] not in found, "the least recently active room dropped out"
    assert chat(gw(), cmd="say", sessionid=session, chatid=ids[1], msg="wake up").status == 200
    wait_until(lambda: [r["id"] for r in rooms_in(chat(gw(), **box))] == sorted([ids[0], ids[1]] + ids[602 - cap:]),
               message="the room said into is among the 500")
