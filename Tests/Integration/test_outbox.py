"""The outbox of state changes (docs/architecture.md, "The outbox of state
changes"): a change committed together with its event, whose handler never got
the event to the broker (an instance killed between commit and publish, or a
broker that refused it), is published from PostgreSQL by the outbox relay, and
every gateway and service that follows such events catches up by itself."""
import json
import time

from geochat_support.db import sql
from geochat_support.protocol import chat, create, start, unique_nick, unique_topic
from geochat_support.waiting import wait_until


def test_an_end_committed_but_never_published_reaches_every_gateway_and_the_rooms_service(stack):
    a, b = stack["gateways"][:2]
    session = start(a, unique_nick())
    room = create(a, session, 0.3141, 0.5926, 9, unique_topic())["id"]
    for gateway in (a, b):  # both gateways now hold the session, live
        assert chat(gateway, cmd="join", sessionid=session, chatid=room).status == 200
    assert sql(stack, f"SELECT count(*) FROM rooms.memberships WHERE session_id = '{session}'") == [["1"]]

    # What the session service's `end` commits: the row and its staged event,
    # in one transaction; its handler then "died" before publishing.
    (nick, version), = sql(stack, f"""
        UPDATE session.sessions SET ended_at = now(), end_reason = 'end', version = version + 1
        WHERE id = '{session}' RETURNING nick, version""")
    envelope = {"schema": "geochat.session.event.v1", "atMs": int(time.time() * 1000),
                "event": {"ended": {"_0": {"id": session, "nick": nick, "version": int(version), "ended": True},
                                    "reason": "end"}}}
    value = json.dumps(envelope).replace("'", "''")
    sql(stack, f"""
        INSERT INTO outbox.events (service, topic, key, value, stored_at)
        VALUES ('session', 'geochat.session.events', '{session}', '{value}', now() - interval '3 seconds')""")

    # Without the relay both gateways would accept the session for as long as
    # they hold it (an hour unused); with it, within a pass (500 ms) or so.
    for gateway in (a, b):
        wait_until(lambda: chat(gateway, cmd="messages", sessionid=session, chatid=room).status == 403, timeout=5,
                   message=f"{gateway} refuses the ended session")
    wait_until(lambda: sql(stack, f"SELECT count(*) FROM rooms.memberships WHERE session_id = '{session}'")
               == [["0"]], timeout=5, message="the rooms service removed the ended session's memberships")
    wait_until(lambda: sql(stack, f"SELECT count(*) FROM outbox.events WHERE key = '{session}'") == [["0"]],
               timeout=5, message="the relay removed the row once the broker took the event")


def test_changes_leave_nothing_behind_in_the_outbox(stack):
    """The handlers' own publishes are acknowledged and their rows deleted (batched every 500 ms)."""
    a, b = stack["gateways"][:2]
    session = start(a, unique_nick())
    room = create(b, session, 0.2718, 0.2818, 7, unique_topic())["id"]
    assert chat(a, cmd="join", sessionid=session, chatid=room).status == 200
    assert chat(b, cmd="nick", sessionid=session, nick=unique_nick()).status == 200
    assert chat(a, cmd="leave", sessionid=session, chatid=room).status == 200
    assert chat(b, cmd="end", sessionid=session).status == 200
    wait_until(lambda: sql(stack, f"SELECT count(*) FROM outbox.events WHERE key IN ('{session}', '{room}')")
               == [["0"]], timeout=5, message="no event of these changes left in the outbox")
