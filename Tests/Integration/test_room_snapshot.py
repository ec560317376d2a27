"""A gateway restarted from its room snapshot (issue 28, item 4) on the real stack: a graceful stop
writes the snapshot, the restart loads it and asks the rooms service only for what changed while it
was away (rooms made, visited, removed), and a snapshot the rooms service's tally refutes (rows
deleted behind the rooms service) gives way to the full load. Each restart answers `chats` as the
other gateway does."""
import os
import time

import pytest

from admin_support import api, bootstrap_admin, login
from geochat_support.db import sql
from geochat_support.protocol import chat, create, rooms_in, start, unique_topic
from geochat_support.stack import run_stack_command
from geochat_support.waiting import wait_until

BOX = dict(lon1="0.6100", lat1="0.3100", lon2="0.6200", lat2="0.3200", minz="0", maxz="17")


@pytest.fixture(scope="module")
def token(stack):
    name, password, run = bootstrap_admin(stack)
    assert run.returncode == 0, run.stdout + run.stderr
    return login(stack["gateways"][0], name, password)


def ids_in_box(gateway):
    return sorted(room["id"] for room in rooms_in(chat(gateway, cmd="chats", **BOX)))


def log_of(stack, instance):
    with open(os.path.join(stack["STATE_DIR"], "logs", f"{instance}.log"), encoding="utf-8", errors="replace") as f:
        return f.read()


def restart_gateway_2(stack, while_away):
    """Stops gateway 2 (SIGTERM: it writes its snapshot), runs `while_away`, starts it; its new log lines."""
    b = stack["gateways"][1]
    snapshot = os.path.join(stack["STATE_DIR"], "snapshots", "gateway-2.rooms")
    stopped_at = time.time()
    run_stack_command(stack, "stop", "gateway-2")
    assert os.path.getmtime(snapshot) >= stopped_at - 1, "a graceful stop writes the snapshot"
    while_away()
    before = len(log_of(stack, "gateway-2"))
    run_stack_command(stack, "start", "gateway-2")

    def ready():
        try:
            return chat(b, cmd="chats", **BOX).status == 200 and "room index loaded" in log_of(stack, "gateway-2")[before:]
        except OSError:
            return False
    wait_until(ready, timeout=90, interval=0.3, message="gateway 2 back with its index")
    return log_of(stack, "gateway-2")[before:]


def test_a_restart_loads_the_snapshot_and_what_changed_meanwhile(stack, token):
    a, b = stack["gateways"][:2]
    session = start(a)
    kept = create(a, session, 0.611, 0.311, 12, unique_topic())["id"]
    doomed = create(a, session, 0.612, 0.312, 12, unique_topic())["id"]
    wait_until(lambda: {kept, doomed} <= set(ids_in_box(b)), timeout=10, message="both rooms on gateway 2")
    made = []

    def while_away():
        made.append(create(a, session, 0.613, 0.313, 12, unique_topic())["id"])
        response = api(a, "DELETE", f"rooms/{doomed}", token=token)
        assert response.status == 200, response

    log = restart_gateway_2(stack, while_away)
    assert "room index loaded from its snapshot" in log, log[-3000:]
    on_b = ids_in_box(b)
    assert kept in on_b and made[0] in on_b and doomed not in on_b
    assert on_b == ids_in_box(a)


def test_rooms_deleted_behind_the_rooms_service_make_the_restart_load_every_room(stack):
    a, b = stack["gateways"][:2]
    session = start(a)
    room = create(a, session, 0.614, 0.314, 12, unique_topic())["id"]
    wait_until(lambda: room in ids_in_box(b), timeout=10, message="the room on gateway 2")

    def while_away():
        sql(stack, f"DELETE FROM rooms.rooms WHERE id = {room}")  # no event, no removal record: only the tally shows it

    log = restart_gateway_2(stack, while_away)
    assert "room snapshot and the rooms service disagree" in log, log[-3000:]
    assert "room index loaded" in log and "room index loaded from its snapshot" not in log
    assert room not in ids_in_box(b)
    # Gateway 1 saw no event of the deletion: it still holds the room until its own next start.
    assert set(ids_in_box(b)) == set(ids_in_box(a)) - {room}
