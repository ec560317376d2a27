"""When Kafka or PostgreSQL is away, requests get 503 within the request deadline;
when it is back, the stack carries on by itself. Runs last: it stops dependencies."""
import time

from geochat_support.protocol import chat, create, messages, say, start, unique_topic
from geochat_support.stack import run_stack_command
from geochat_support.waiting import wait_until

DEADLINE_S = 3.0  # GEOCHAT_REQUEST_TIMEOUT_MS default


def timed(fn):
    began = time.monotonic()
    result = fn()
    return result, time.monotonic() - began


def assert_unavailable(response, elapsed):
    assert response.status == 503, response
    assert response.dom().documentElement.getAttribute("code") == "unavailable"
    assert response.headers.get("Retry-After"), "503 carries Retry-After"
    assert elapsed < DEADLINE_S + 1.0, f"answered after {elapsed:.1f}s"


def works_again(stack, room_id, session):
    a, b = stack["gateways"][:2]
    fresh = chat(a, cmd="start", nick="Back")
    if fresh.status != 200:
        return False
    text = "back " + unique_topic()
    response = chat(a, cmd="say", sessionid=session, chatid=room_id, msg=text)
    if response.status != 200:
        return False
    return any(m["text"] == text for m in messages(b, room_id, limit=200))


def test_kafka_away_then_back(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    room = create(a, session, 0.66, 0.66, 6, unique_topic())["id"]
    before = say(a, session, room, "before the broker stops")
    wait_until(lambda: messages(b, room), message="the room loaded on gateway B")
    run_stack_command(stack, "stop-kafka")
    try:
        response, elapsed = timed(lambda: chat(a, cmd="say", sessionid=session, chatid=room, msg="while away"))
        assert_unavailable(response, elapsed)
        response, elapsed = timed(lambda: chat(b, cmd="start", nick="Away"))
        assert_unavailable(response, elapsed)
        # Polls are answered from memory meanwhile.
        assert [m["id"] for m in messages(b, room) if m["id"] == before] == [before]
    finally:
        run_stack_command(stack, "start-kafka")
    wait_until(lambda: works_again(stack, room, session), timeout=90, interval=1, message="the stack works again")


def test_postgres_away_then_back(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    room = create(a, session, 0.67, 0.67, 6, unique_topic())["id"]
    acknowledged = [say(a, session, room, f"kept {i}") for i in range(3)]
    wait_until(lambda: len(messages(b, room)) == 3, message="acknowledged messages on B")
    run_stack_command(stack, "stop-postgres")
    try:
        response, elapsed = timed(lambda: chat(a, cmd="say", sessionid=session, chatid=room, msg="while away"))
        assert_unavailable(response, elapsed)
    finally:
        run_stack_command(stack, "start-postgres")
    wait_until(lambda: works_again(stack, room, session), timeout=60, interval=1, message="the stack works again")
    texts = [m["text"] for m in messages(b, room, limit=200)]
    assert [f"kept {i}" for i in range(3)] == texts[:3]
    assert "while away" not in texts
    assert acknowledged == [1, 2, 3]
