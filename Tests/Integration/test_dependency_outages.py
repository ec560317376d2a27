"""When Kafka or PostgreSQL is away, requests get 503 within the request deadline;
when it is back, the stack carries on by itself. The `outage` fixture restarts
what a test stopped, whatever its outcome, and waits until every part of the
stack works again: the tests after these, in any order, find the stack as if
nothing had happened."""
import time

import pytest

from geochat_support.protocol import chat, create, messages, say, start, unique_topic
from geochat_support.stack import instance_urls, is_ready, run_stack_command
from geochat_support.waiting import poll_until, wait_until

pytestmark = pytest.mark.disrupts_dependencies

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


def whole_stack_works(stack):
    """Every instance ready; through every gateway a session starts, a room is created and a say in it
    is polled through every gateway."""
    if not all(is_ready(url, timeout=2) for url in instance_urls(stack).values()):
        return False
    gateways = stack["gateways"]
    for gateway in gateways:
        started = chat(gateway, v=5, cmd="start", nick="Whole")
        if started.status != 200:
            return False
        session = started.dom().documentElement.firstChild.data
        created = chat(gateway, cmd="create", sessionid=session, lon=0.68, lat=0.68, z=6, topic=unique_topic())
        if created.status != 200:
            return False
        room = int(created.dom().getElementsByTagName("id")[0].firstChild.data)
        text = "whole " + unique_topic()
        if chat(gateway, cmd="say", sessionid=session, chatid=room, msg=text).status != 200:
            return False
        for other in gateways:
            if not seen_through(other, room, text):
                return False
    return True


def seen_through(gateway, room, text, timeout=5.0):
    def polled():
        answer = chat(gateway, cmd="messages", chatid=room, past=0, limit=200)
        return answer.status == 200 and text in answer.text
    return poll_until(polled, timeout, interval=0.2)


class Outage:
    """stop("kafka" | "postgres") and start it again; remembers what is down."""

    def __init__(self, stack):
        self.stack, self.down = stack, set()

    def stop(self, dependency):
        run_stack_command(self.stack, "stop-" + dependency, timeout=120)
        self.down.add(dependency)

    def start(self, dependency):
        run_stack_command(self.stack, "start-" + dependency, timeout=120)
        self.down.discard(dependency)


def works_steadily(stack, times):
    """A predicate true once `whole_stack_works` held on `times` checks in a row. After the broker
    comes back empty, each consumer finds its topics remade on its own next look (seconds apart), and
    a say can still be answered 503 ("try again") while one catches up: one success is not recovery."""
    streak = 0

    def check():
        nonlocal streak
        streak = streak + 1 if whole_stack_works(stack) else 0
        return streak >= times
    return check


@pytest.fixture
def outage(stack):
    control = Outage(stack)
    yield control
    for dependency in sorted(control.down):
        control.start(dependency)
    wait_until(works_steadily(stack, times=5), timeout=120, interval=1,
               message="every part of the stack working again after the outage, five checks in a row")


@pytest.mark.restarts_the_broker
def test_kafka_away_then_back(stack, outage):
    a, b = stack["gateways"][:2]
    session = start(a)
    room = create(a, session, 0.66, 0.66, 6, unique_topic())["id"]
    before = say(a, session, room, "before the broker stops")
    wait_until(lambda: messages(b, room), message="the room loaded on gateway B")
    outage.stop("kafka")
    response, elapsed = timed(lambda: chat(a, cmd="say", sessionid=session, chatid=room, msg="while away"))
    assert_unavailable(response, elapsed)
    response, elapsed = timed(lambda: chat(b, cmd="start", nick="Away"))
    assert_unavailable(response, elapsed)
    # Polls are answered from memory meanwhile.
    assert [m["id"] for m in messages(b, room) if m["id"] == before] == [before]
    outage.start("kafka")
    wait_until(lambda: works_again(stack, room, session), timeout=90, interval=1, message="the stack works again")


def test_postgres_away_then_back(stack, outage):
    a, b = stack["gateways"][:2]
    session = start(a)
    room = create(a, session, 0.67, 0.67, 6, unique_topic())["id"]
    acknowledged = [say(a, session, room, f"kept {i}") for i in range(3)]
    wait_until(lambda: len(messages(b, room)) == 3, message="acknowledged messages on B")
    outage.stop("postgres")
    response, elapsed = timed(lambda: chat(a, cmd="say", sessionid=session, chatid=room, msg="while away"))
    assert_unavailable(response, elapsed)
    outage.start("postgres")
    wait_until(lambda: works_again(stack, room, session), timeout=60, interval=1, message="the stack works again")
    texts = [m["text"] for m in messages(b, room, limit=200)]
    assert [f"kept {i}" for i in range(3)] == texts[:3]
    assert "while away" not in texts
    assert acknowledged == [1, 2, 3]
