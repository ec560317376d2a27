"""Helpers for the expiry tests: the Kafka command client (geochat_support.expiry) as
a fixture, and rooms inserted in bulk by SQL, backdated past an idle limit."""
import pytest

from geochat_support.db import count, sql
from geochat_support.expiry import EXPIRY_TOPIC, ROOMS_TOPIC, Commands, idle_rooms_statement

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


def ids_sql(ids):
    return "ARRAY[" + ",".join(str(i) for i in ids) + "]::bigint[]"


def remaining(stack, table, column, ids):
    return count(stack, f"SELECT count(*) FROM {table} WHERE {column} = ANY({ids_sql(ids)})")


__all__ = ["DAY", "EXPIRY_TOPIC", "ROOMS_TOPIC", "SCHEDULED_LIMIT_S", "TEST_AGE_S", "TEST_LIMIT_S", "commands",
           "ids_sql", "insert_idle_rooms", "remaining"]
