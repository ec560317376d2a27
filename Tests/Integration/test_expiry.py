"""Rooms nobody visited for longer than the idle limit (30 days) are removed by the
scheduled expiry run (every 2 s in the test stack), with their messages and memberships."""
from geochat_support.db import count, sql
from geochat_support.protocol import assert_error, chat, create, messages, rooms_in, say, start, unique_topic
from geochat_support.waiting import wait_until
from expiry_support import wait_say_recorded


def backdate(stack, room, days):
    sql(stack, f"UPDATE rooms.rooms SET last_visited_at = now() - interval '{days} days', "
               f"created_at = now() - interval '{days} days' WHERE id = {room}")


def test_idle_rooms_expire_and_visited_ones_survive(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    idle = create(a, session, 0.91, 0.19, 14, unique_topic())
    young = create(a, session, 0.91, 0.19, 14, unique_topic())
    rescued = create(a, session, 0.91, 0.19, 14, unique_topic())
    say(a, session, idle["id"], "old words")
    wait_say_recorded(stack, idle["id"], session)
    assert messages(b, idle["id"])  # gateway B has the room loaded
    backdate(stack, idle["id"], 31)
    backdate(stack, young["id"], 29)
    backdate(stack, rescued["id"], 31)
    assert chat(a, cmd="join", sessionid=session, chatid=rescued["id"]).status == 200

    wait_until(lambda: count(stack, f"SELECT count(*) FROM rooms.rooms WHERE id = {idle['id']}") == 0,
               timeout=30, interval=0.5, message="the idle room removed")
    wait_until(lambda: count(stack, f"SELECT count(*) FROM messaging.messages WHERE room_id = {idle['id']}") == 0,
               timeout=15, interval=0.5, message="its messages removed")
    assert count(stack, f"SELECT count(*) FROM rooms.memberships WHERE room_id = {idle['id']}") == 0
    for gateway in (a, b):
        wait_until(lambda: chat(gateway, cmd="messages", chatid=idle["id"]).status == 404, timeout=10,
                   message="polls of the expired room answer 404")
        assert_error(chat(gateway, cmd="messages", chatid=idle["id"]), 404, "no_such_chat")
        assert_error(chat(gateway, cmd="say", sessionid=session, chatid=idle["id"], msg="x"), 404, "no_such_chat")
    found = [r["id"] for r in rooms_in(chat(b, cmd="chats", lon1=0.9, lat1=0.18, lon2=0.92, lat2=0.2, minz=14, maxz=14))]
    assert idle["id"] not in found and young["id"] in found and rescued["id"] in found
    assert count(stack, "SELECT count(*) FROM expiry.jobs WHERE status = 'finished' AND removed > 0") >= 1
