"""Conformance, contract 3 `start`, `nick`, `end` (and `logout`, `quit`), `v`,
GET and POST: every request alternates between the two gateways."""
import re
import urllib.parse

from geochat_support.db import sql
from geochat_support.protocol import (assert_error, chat, check_xml, create, DECLARATION, http, messages, say, start,
    unique_nick, unique_topic)
from geochat_support.waiting import wait_until
from conformance import Alternating, element, participants, success


def test_start_field_example_byte_for_byte_shape(stack):
    gw = Alternating(stack["gateways"])
    seen = set()
    for _ in range(4):
        response = check_xml(http(gw() + "/chat.php?v=5&cmd=start&nick=Lydia"))
        assert response.status == 200
        lines = response.text.splitlines()
        assert lines[0] == DECLARATION
        match = re.fullmatch(r"<sessionid>([0-9a-v]{26})</sessionid>", lines[1])
        assert match, response.text
        seen.add(match.group(1))
    assert len(seen) == 4, "every start is a new session, even with the same nickname"


def test_version_missing_or_5_and_get_or_post(stack):
    gw = Alternating(stack["gateways"])
    for query in ("cmd=start&nick=Ann", "v=5&cmd=start&nick=Ann"):
        assert element(check_xml(http(gw() + "/chat.php?" + query)), "sessionid")
        assert element(check_xml(http(gw() + "/chat.php", data=query)), "sessionid")
    # Split between query and body.
    assert element(check_xml(http(gw() + "/chat.php?v=5", data="cmd=start&nick=Ann")), "sessionid")
    # Unknown parameters (cache busters) are ignored.
    assert element(check_xml(http(gw() + "/chat.php?v=5&cmd=start&nick=Ann&t=1700000000&_=x")), "sessionid")
    for bad in ("4", "6", "", "5.0", "v5"):
        assert_error(check_xml(http(gw() + "/chat.php?cmd=start&nick=Ann&v=" + urllib.parse.quote(bad))),
                     400, "unsupported_version")


def test_body_wins_over_query(stack):
    gw = Alternating(stack["gateways"])
    response = check_xml(http(gw() + "/chat.php?cmd=start&nick=FromQuery", data="nick=FromBody"))
    session = element(response, "sessionid").firstChild.data
    assert sql(stack, f"SELECT nick FROM session.sessions WHERE id = '{session}'") == [["FromBody"]]
    # The version in the body wins too: a bad v in the query is overruled.
    assert element(check_xml(http(gw() + "/chat.php?v=4&cmd=start&nick=A", data="v=5")), "sessionid")
    assert_error(check_xml(http(gw() + "/chat.php?v=5&cmd=start&nick=A", data="v=4")), 400, "unsupported_version")


def test_nickname_rule(stack):
    gw = Alternating(stack["gateways"])
    for good in ("a", "Z", "a" * 32, "L_y_d_1_a", "x_", "Q9"):
        assert element(chat(gw(), cmd="start", nick=good), "sessionid"), good
    for bad in ("", "1abc", "_abc", "a" * 33, "a-b", "a b", "Grüße", "a.b", " a", "a\t"):
        assert_error(chat(gw(), cmd="start", nick=bad), 400, "invalid_nick")
    assert_error(chat(gw(), cmd="start"), 400, "missing_param")


def test_nick_change_later_messages_and_participants_carry_the_new_nick(stack):
    a, b = stack["gateways"][:2]
    old = unique_nick()
    session = start(a, old)
    room = create(b, session, 0.3131, 0.6262, 9, unique_topic())["id"]
    success(chat(a, cmd="join", sessionid=session, chatid=room))
    first = say(b, session, room, "before")
    for here, there in ((a, b), (b, a), (a, b)):
        new = unique_nick()
        success(chat(here, cmd="nick", sessionid=session, nick=new))
        # The gateway that renamed knows at once; the other learns from the
        # session events within milliseconds (docs/protocol.md, decisions).
        said_here = say(here, session, room, "here")
        wait_until(lambda: participants(there, room) == [new], message="the other gateway knows the new nick")
        said_there = say(there, session, room, "there")
        for g in (a, b):
            got = wait_until(lambda: (lambda ms: ms if said_there in ms else None)(
                {m["id"]: m for m in messages(g, room, past=first - 1, limit=200)}), message="messages seen")
            assert got[said_here]["user"] == new and got[said_there]["user"] == new
            assert got[first]["user"] == old, "earlier messages keep the nick they were written under"
            wait_until(lambda: participants(g, room) == [new], message="participants show the new nick")
    gw = Alternating(stack["gateways"])
    assert_error(chat(gw(), cmd="nick", sessionid=session, nick="9lives"), 400, "invalid_nick")
    assert_error(chat(gw(), cmd="nick", sessionid=session, nick=""), 400, "invalid_nick")
    assert_error(chat(gw(), cmd="nick", sessionid=session), 400, "missing_param")


def test_end_and_its_aliases_invalidate_the_session_on_both_gateways(stack):
    gw = Alternating(stack["gateways"])
    owner = start(gw())
    room = create(gw(), owner, 0.4242, 0.2424, 11, unique_topic())["id"]
    for alias in ("end", "logout", "quit"):
        session = start(gw())
        success(chat(gw(), cmd="join", sessionid=session, chatid=room))
        say(gw(), session, room, "bye")
        here, there = gw(), gw()
        success(chat(here, cmd=alias, sessionid=session))
        refused = [
            dict(cmd="say", sessionid=session, chatid=room, msg="x"),
            dict(cmd="join", sessionid=session, chatid=room),
            dict(cmd="leave", sessionid=session, chatid=room),
            dict(cmd="create", sessionid=session, lon=0.1, lat=0.1, z=1, topic="t"),
            dict(cmd="messages", sessionid=session, chatid=room),
            dict(cmd="nick", sessionid=session, nick="Again"),
            dict(cmd=alias, sessionid=session),
        ]
        # At once on the gateway that ended it; on the other as soon as the
        # session event arrives (milliseconds; docs/protocol.md, decisions):
        # a poll shows when it did, then every command is refused there too.
        for params in refused:
            assert_error(chat(here, **params), 403, "invalid_session")
        wait_until(lambda: chat(there, cmd="messages", sessionid=session, chatid=room).status == 403, timeout=2,
                   message="the other gateway learned of the end")
        for params in refused:
            assert_error(chat(there, **params), 403, "invalid_session")
        # The session left every room.
        wait_until(lambda: sql(stack, f"SELECT count(*) FROM rooms.memberships WHERE session_id = '{session}'")
                   == [["0"]], message="memberships removed")
    assert_error(chat(gw(), cmd="end"), 400, "missing_param")
    assert_error(chat(gw(), cmd="end", sessionid="0" * 26), 403, "invalid_session")
