"""`chats` over the whole world at every zoom makes the gateway's index look at
every non-empty cell it holds (docs/security.md, "What each request costs"):
such a wide query is answered (at most the room cap) but limited per client
address, 10 at once then 1 a second; a phone's screen is never limited. The
rooms are inserted straight into PostgreSQL in a corner no other test uses and
removed after; a gateway of the test's own loads them at start."""
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from gateway_support import extra_gateway
from geochat_support.db import sql
from geochat_support.protocol import assert_error, chat

ROOMS = 30_000


@pytest.fixture(scope="module")
def crowded_gateway(stack):
    tag = "wide " + uuid.uuid4().hex[:8]
    sql(stack, f"""
        INSERT INTO rooms.rooms (x, y, z, topic)
        SELECT 0.90 + (g % 300) * 0.0003, 0.90 + (g / 300) * 0.0003, 16 + g % 2, '{tag} ' || g
        FROM generate_series(1, {ROOMS}) g""")
    try:
        with extra_gateway(stack, "wide") as url:
            yield url
    finally:
        sql(stack, f"DELETE FROM rooms.rooms WHERE topic LIKE '{tag} %'")


def rooms_of(answer):
    return answer.dom().getElementsByTagName("chat")


def timed(call):
    began = time.monotonic()
    answer = call()
    return answer, (time.monotonic() - began) * 1000


def test_a_whole_world_query_is_answered_capped_and_limited_per_address(crowded_gateway):
    g = crowded_gateway
    world = dict(cmd="chats", lon1=0, lat1=0, lon2=1, lat2=1, minz=0, maxz=17)
    # A phone at zoom 14 around room 301 of the crowd (x = y = 0.9003, z = 17): its zoom -3 to the deepest.
    width = 0.625 / 2 ** 14
    phone = dict(cmd="chats", lon1=0.9003 - width / 2, lat1=0.9003 - width, lon2=0.9003 + width / 2,
                 lat2=0.9003 + 0.6 * width, minz=11, maxz=17)
    answer, world_ms = timed(lambda: chat(g, **world))
    assert answer.status == 200 and len(rooms_of(answer)) == 500, answer
    phone_answer, phone_ms = timed(lambda: chat(g, **phone))
    assert phone_answer.status == 200 and len(rooms_of(phone_answer)) > 0
    print(f"whole world over {ROOMS} rooms: {world_ms:.1f} ms; a phone's screen: {phone_ms:.1f} ms")
    # The burst (10, one already taken), then 429 with Retry-After; nothing else is limited.
    # 40 at once: the index answers them one after another, so a slow machine refills a few meanwhile.
    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(lambda _: chat(g, **world), range(40)))
    statuses = [a.status for a in answers]
    assert 200 in statuses and 429 in statuses and set(statuses) <= {200, 429}, statuses
    refused = next(a for a in answers if a.status == 429)
    assert_error(refused, 429, "rate_limited")
    assert int(refused.headers["Retry-After"]) >= 1
    for _ in range(30):
        assert chat(g, **phone).status == 200, "a phone's screen is not a wide query"
