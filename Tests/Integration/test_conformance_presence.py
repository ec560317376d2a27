"""Conformance, contract 3 `participants` and presence: byte order, duplicates,
leave, and the presence timeout (GEOCHAT_PRESENCE_TIMEOUT_S=4 in the test
stack) across both gateways."""
import itertools

from geochat_support.protocol import assert_error, chat, create, messages, say, start, unique_topic
from geochat_support.waiting import wait_until
from conformance import Alternating, participants, success

TIMEOUT_S = 4  # deploy/test.sh starts the stack with GEOCHAT_PRESENCE_TIMEOUT_S=4


def alive(gateway, room, sessions):
    """A sign of life for each session (a slow machine must not let the 4 s pass)."""
    for session in sessions:
        assert chat(gateway, cmd="participants", chatid=room, sessionid=session).status == 200


def test_participants_byte_order_duplicates_and_leave(stack):
    gw = Alternating(stack["gateways"])
    owner = start(gw(), "zed")
    room = create(gw(), owner, 0.1928, 0.3746, 6, unique_topic())["id"]
    assert participants(gw(), room) == [], "creating a room does not join it"
    nicks = ["bob", "Lydia", "bob", "Zoe", "a_1", "B", "a1", "A_"]
    sessions = [start(gw(), nick) for nick in nicks]
    for session in sessions:
        success(chat(gw(), cmd="join", sessionid=session, chatid=room))
    expected = sorted(nicks, key=lambda n: n.encode())  # plain byte order: capitals first
    assert expected[:4] == ["A_", "B", "Lydia", "Zoe"]
    for g in stack["gateways"]:
        wait_until(lambda: alive(g, room, sessions) or participants(g, room) == expected,
                   message="all joined, in byte order")
    success(chat(gw(), cmd="leave", sessionid=sessions[0], chatid=room))
    expected.remove("bob")
    for g in stack["gateways"]:
        alive(g, room, sessions)
        assert participants(g, room) == expected, "one of the two bobs left"
    # Saying in a room joins it.
    say(gw(), owner, room, "hello")
    expected = sorted(expected + ["zed"], key=lambda n: n.encode())
    for g in stack["gateways"]:
        wait_until(lambda: alive(g, room, sessions + [owner]) or participants(g, room) == expected, timeout=20,
                   message="the speaker joined (through the message's event)")
    assert_error(chat(gw(), cmd="participants", chatid=987654321), 404, "no_such_chat")
    assert_error(chat(gw(), cmd="participants"), 400, "missing_param")


def test_presence_timeout_on_both_gateways_and_sign_of_life_through_either(stack):
    a, b = stack["gateways"][:2]
    quiet_nick, busy_nick = "Quiet", "Busy"
    quiet = start(a, quiet_nick)
    busy = start(b, busy_nick)
    room = create(a, busy, 0.5555, 0.4444, 12, unique_topic())["id"]
    success(chat(a, cmd="join", sessionid=quiet, chatid=room))
    success(chat(b, cmd="join", sessionid=busy, chatid=room))
    for g in (a, b):
        wait_until(lambda: participants(g, room) == [busy_nick, quiet_nick], message="both listed")

    # Busy keeps showing signs of life, alternately through each gateway; Quiet is silent.
    turns = itertools.count()

    def busy_alive_and_quiet_gone():
        messages((a, b)[next(turns) % 2], room, sessionid=busy)
        return all(participants(g, room) == [busy_nick] for g in (a, b))

    # Bound: the timeout, the sweep's lag, and 3 s per gateway for the news to spread.
    dropped_within = TIMEOUT_S + 1.5 + 6
    wait_until(busy_alive_and_quiet_gone, timeout=dropped_within, interval=0.5,
               message="the silent participant dropped off on both gateways")
    # A sign of life through B (a poll with the session id, B's first of that session) brings Quiet
    # back on both as soon as it is answered: the poll waited for its mark at the rooms service.
    messages(b, room, sessionid=quiet)
    for g in (a, b):
        assert participants(g, room) == [busy_nick, quiet_nick], "back after a sign of life through gateway B"
    wait_until(busy_alive_and_quiet_gone, timeout=dropped_within, interval=0.5, message="silent again, gone again")
    # … and through A, with a command that takes no session: any request carrying it counts.
    assert chat(a, cmd="participants", chatid=room, sessionid=quiet).status == 200
    for g in (b, a):
        assert participants(g, room) == [busy_nick, quiet_nick], "back after a sign of life through gateway A"
