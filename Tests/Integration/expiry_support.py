"""Helpers for the expiry tests: the Kafka command client (geochat_support.expiry) as
a fixture, and rooms inserted in bulk by SQL, backdated past an idle limit."""
import pytest

from geochat_support.db import count, sql
from geochat_support.expiry import EXPIRY_TOPIC, ROOMS_TOPIC, Commands, idle_rooms_statement
from geochat_support.waiting import wait_until

DAY = 86_400
# The test stack's schedule expires rooms idle for 30 days; the on-demand runs of
# these tests use a slightly shorter limit, so their rooms are theirs alone.
SCHEDULED_LIMIT_S = 30 * DAY
TEST_LIMIT_S = 30 * DAY - 3600
TEST_AGE_S = 30 * DAY - 1800  # idle for TEST_LIMIT_S, not for SCHEDULED_LIMIT_S


@pytest.fixture
def commands(stack):
    client = Commands(stack)
    yield client
    client.close()


def insert_idle_rooms(stack, n, age_s, messages_per_room=2, members_per_room=1):
    """`n` rooms (with messages and memberships) last visited `age_s` ago, in one
    statement straight into the owners' tables. Returns their ids."""
    rows = sql(stack, idle_rooms_statement(n, age_s, messages_per_room, members_per_room))
    return [int(row[0]) for row in rows]


def wait_say_recorded(stack, room, session):
    """Waits until the rooms service has taken a say in `room` by `session`: its `JoinBySaying`
    (posted by the gateway beside the say, the one path; docs/architecture.md, "Sessions and
    presence") made the membership and marked the room visited, so a backdate made after this is
    not undone by it."""
    wait_until(lambda: count(stack, f"SELECT count(*) FROM rooms.memberships WHERE room_id = {room} "
                                    f"AND session_id = '{session}'") == 1,
               timeout=15, interval=0.1, message=f"the say in room {room} recorded")


def ids_sql(ids):
    return "ARRAY[" + ",".join(str(i) for i in ids) + "]::bigint[]"


def remaining(stack, table, column, ids):
    return count(stack, f"SELECT count(*) FROM {table} WHERE {column} = ANY({ids_sql(ids)})")


__all__ = ["DAY", "EXPIRY_TOPIC", "ROOMS_TOPIC", "SCHEDULED_LIMIT_S", "TEST_AGE_S", "TEST_LIMIT_S", "commands",
           "ids_sql", "insert_idle_rooms", "remaining", "wait_say_recorded"]
