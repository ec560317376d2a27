"""On-demand expiry jobs through the expiry service's Kafka command topic (what
the admin API sends): dry runs, real runs, the lock, the rooms service's batch
removal, and a run killed half-way that resumes after restart."""
import threading
import time
import uuid

from geochat_support.commands import operator_sealed
from geochat_support.db import count, sql
from geochat_support.protocol import assert_error, chat, create, http, messages, say, start, unique_topic
from geochat_support.stack import run_stack_command
from geochat_support.waiting import wait_until
from expiry_support import (DAY, ROOMS_TOPIC, TEST_AGE_S, TEST_LIMIT_S, commands, ids_sql, insert_idle_rooms,
                            remaining, wait_say_recorded)

__all__ = ["commands"]  # the fixture, imported for pytest


def backdate(stack, room, age_s):
    sql(stack, f"UPDATE rooms.rooms SET last_visited_at = now() - make_interval(secs => {age_s}), "
               f"created_at = now() - make_interval(secs => {age_s}) WHERE id = {room}")


def ready(url):
    try:
        return http(url + "/ready", timeout=2).status == 200
    except OSError:
        return False


def idle_now(stack, limit_s):
    """The rooms that are idle for `limit_s`, by the rooms service's table: the truth a run must match."""
    return {int(r[0]) for r in sql(
        stack, f"SELECT id FROM rooms.rooms WHERE NOT is_lobby "
               f"AND last_visited_at < now() - make_interval(secs => {limit_s})")}


def test_dry_run_lists_exactly_the_idle_rooms_and_a_real_run_removes_them(stack, commands):
    a, b = stack["gateways"][:2]
    session = start(a)
    idle = [create(a, session, 0.31, 0.62, 13, unique_topic())["id"] for _ in range(3)]
    joined = create(a, session, 0.31, 0.62, 13, unique_topic())["id"]
    young = create(a, session, 0.31, 0.62, 13, unique_topic())["id"]
    for room in idle:
        say(a, session, room, "words that will go")
        wait_say_recorded(stack, room, session)
    assert messages(b, idle[0])  # gateway B has one of them loaded
    for room in idle + [joined]:
        backdate(stack, room, TEST_AGE_S)
    backdate(stack, young, 20 * DAY)
    other = start(b)
    assert chat(b, cmd="join", sessionid=other, chatid=joined).status == 200  # a recent join is a visit
    wait_until(lambda: count(stack, f"SELECT count(*) FROM rooms.memberships WHERE room_id = {idle[0]}") == 1,
               message="the author's membership recorded")

    me = "pytest-" + uuid.uuid4().hex[:6]
    dry = commands.start_own_run(True, TEST_LIMIT_S, me)
    assert dry["dryRun"] is True
    dry = commands.wait_finished(dry["id"])
    expected = idle_now(stack, TEST_LIMIT_S)
    assert set(idle) <= expected and joined not in expected and young not in expected
    assert dry["status"] == "finished" and dry["removed"] == 0
    assert set(dry["rooms"]) == expected and dry["selected"] == len(expected) == dry["examined"]
    # Nothing changed.
    assert remaining(stack, "rooms.rooms", "id", idle) == 3
    assert remaining(stack, "messaging.messages", "room_id", idle) == 3
    assert chat(b, cmd="messages", chatid=idle[0]).status == 200

    real = commands.wait_finished(commands.start_own_run(False, TEST_LIMIT_S, me)["id"])
    assert real["status"] == "finished" and real["dryRun"] is False, real
    assert real["selected"] == len(expected) and real["removed"] == len(expected) and real["failed"] == 0, real
    assert real.get("rooms") is None and real["finishedAtMs"] >= real["startedAtMs"]
    assert remaining(stack, "rooms.rooms", "id", idle) == 0
    assert remaining(stack, "rooms.memberships", "room_id", idle) == 0
    assert remaining(stack, "messaging.messages", "room_id", idle) == 0
    assert remaining(stack, "rooms.removed_rooms", "id", idle) == 3
    assert count(stack, f"SELECT count(*) FROM rooms.rooms WHERE id IN ({joined}, {young})") == 2
    assert chat(a, cmd="messages", chatid=joined).status == 200

    for gateway in (a, b):
        for room in idle:
            wait_until(lambda: chat(gateway, cmd="messages", chatid=room).status == 404, timeout=10,
                       message="polls of an expired room answer 404")
            assert_error(chat(gateway, cmd="messages", chatid=room), 404, "no_such_chat")
        assert_error(chat(gateway, cmd="join", sessionid=session, chatid=idle[1]), 404, "no_such_chat")
        assert_error(chat(gateway, cmd="say", sessionid=session, chatid=idle[2], msg="x"), 404, "no_such_chat")

    # The cold path: a gateway that never saw the removal (restarted) asks the services, which say 404.
    run_stack_command(stack, "stop", "gateway-2")
    run_stack_command(stack, "start", "gateway-2")
    wait_until(lambda: ready(b), timeout=60, interval=0.5, message="gateway 2 back")
    for room in idle:
        assert_error(chat(b, cmd="messages", chatid=room), 404, "no_such_chat")
    assert_error(chat(b, cmd="join", sessionid=session, chatid=idle[0]), 404, "no_such_chat")

    # A new room never gets an expired room's id.
    fresh = create(a, session, 0.31, 0.62, 13, unique_topic())["id"]
    assert fresh > max(idle)

    listed = commands.jobs(20)
    assert [j["id"] for j in listed] == sorted((j["id"] for j in listed), reverse=True)
    assert real["id"] in [j["id"] for j in listed] and dry["id"] in [j["id"] for j in listed]


def test_bad_requests_are_refused_and_change_nothing(stack, commands):
    admin_jobs = "SELECT count(*) FROM expiry.jobs WHERE trigger <> 'schedule'"
    before = count(stack, admin_jobs)
    for limit, who in ((10, "pytest"), (-5, "pytest"), (TEST_LIMIT_S, ""), (TEST_LIMIT_S, "x" * 65)):
        reply = commands.start_run(False, limit, who)
        assert reply.get("error", {}).get("code") == "bad_param", reply
    missing = commands.request("geochat.expiry.commands", "expiry", {"job": {"id": 999_999_999}})
    assert missing.get("error", {}).get("code") == "no_such_chat", missing
    assert count(stack, admin_jobs) == before


def test_rooms_batch_removal_rechecks_idleness_and_is_idempotent(stack, commands):
    a = stack["gateways"][0]
    session = start(a)
    idle = insert_idle_rooms(stack, 3, TEST_AGE_S)
    visited = create(a, session, 0.2, 0.2, 9, unique_topic())["id"]  # just created: visited now
    cutoff_ms = int(time.time() * 1000) - TEST_LIMIT_S * 1000
    reason = "pytest " + uuid.uuid4().hex[:8]
    # Sealed as expiry seals it: rooms refuses it otherwise (test_attacks.py).
    command = operator_sealed(stack, {"removeIdleRooms": {
        "rooms": idle + [visited], "idleBeforeMs": cutoff_ms, "reason": reason, "job": 0}})
    first = commands.request(ROOMS_TOPIC, "pytest", command)
    assert sorted(first["reply"]) == idle, first
    # The retry after a lost reply: the same answer, nothing removed twice.
    again = commands.request(ROOMS_TOPIC, "pytest", command)
    assert sorted(again["reply"]) == idle, again
    assert count(stack, f"SELECT count(*) FROM rooms.removed_rooms WHERE reason = '{reason}'") == 3
    assert count(stack, f"SELECT count(*) FROM rooms.rooms WHERE id = {visited}") == 1
    assert remaining(stack, "rooms.memberships", "room_id", idle) == 0
    # The lobby is never idle-removed, however old its last visit.
    lobby = int(sql(stack, "SELECT id FROM rooms.rooms WHERE is_lobby")[0][0])
    sql(stack, f"UPDATE rooms.rooms SET last_visited_at = now() - interval '400 days' WHERE id = {lobby}")
    try:
        reply = commands.request(ROOMS_TOPIC, "pytest", operator_sealed(stack, {"removeIdleRooms": {
            "rooms": [lobby], "idleBeforeMs": int(time.time() * 1000), "reason": reason, "job": 0}}))
        assert reply["reply"] == []
        page = commands.request(ROOMS_TOPIC, "pytest", {"idleRoomsAfter": {
            "after": 0, "idleBeforeMs": int(time.time() * 1000) - 300 * DAY * 1000, "limit": 100, "job": 0}})
        assert lobby not in page["reply"]
    finally:
        sql(stack, f"UPDATE rooms.rooms SET last_visited_at = now() WHERE id = {lobby}")
    assert count(stack, f"SELECT count(*) FROM rooms.rooms WHERE id = {lobby}") == 1


def test_two_simultaneous_runs_do_not_both_remove(stack, commands):
    rooms = insert_idle_rooms(stack, 300, TEST_AGE_S)
    me = "pytest-" + uuid.uuid4().hex[:6]
    for _ in range(100):
        replies = [None, None]

        def ask(i):
            replies[i] = commands.start_run(False, TEST_LIMIT_S, f"{me}-{i}")

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        jobs = [r["reply"] for r in replies]
        if all(j["trigger"].startswith("admin:" + me) for j in jobs):
            break
        time.sleep(0.3)  # the 2 s schedule's job was running: ask again
    # One job for both: the second start got the running job back.
    assert jobs[0]["id"] == jobs[1]["id"], jobs
    job = commands.wait_finished(jobs[0]["id"])
    assert job["status"] == "finished" and job["removed"] >= len(rooms), job
    reasons = sql(stack, f"SELECT reason, count(*) FROM rooms.removed_rooms WHERE id = ANY({ids_sql(rooms)}) "
                         f"GROUP BY reason")
    assert reasons == [[f"expiry job {job['id']}", str(len(rooms))]], reasons
    assert count(stack, "SELECT count(*) FROM expiry.jobs WHERE status = 'running'") <= 1


def test_a_run_killed_half_way_resumes_and_removes_every_room_once(stack, commands):
    rooms = insert_idle_rooms(stack, 5000, TEST_AGE_S, messages_per_room=2, members_per_room=1)
    me = "pytest-" + uuid.uuid4().hex[:6]
    job = commands.start_own_run(False, TEST_LIMIT_S, me)
    progress = f"SELECT count(*) FROM expiry.job_batches WHERE job_id = {job['id']} AND state = 'done'"
    pending = f"SELECT count(*) FROM expiry.job_batches WHERE job_id = {job['id']} AND state <> 'done'"
    wait_until(lambda: count(stack, progress) > 0, timeout=60, interval=0.02, message="the first batch done")
    run_stack_command(stack, "kill", "expiry-1")
    left = count(stack, pending)
    done_at_kill = count(stack, progress)
    assert left > 0, "the run finished before it could be killed: raise the room count"
    assert sql(stack, f"SELECT status FROM expiry.jobs WHERE id = {job['id']}") == [["running"]]
    time.sleep(1)
    assert count(stack, progress) == done_at_kill  # nobody works on it while the service is down

    run_stack_command(stack, "start", "expiry-1")
    finished = commands.wait_finished(job["id"], timeout=120)
    assert finished["status"] == "finished", finished
    selected = finished["selected"]
    assert selected >= len(rooms) and finished["removed"] == selected and finished["failed"] == 0, finished
    # Every selected room removed exactly once, by this job, and nothing of it left.
    assert count(stack, f"SELECT count(*) FROM rooms.removed_rooms WHERE reason = 'expiry job {job['id']}'") == selected
    assert count(stack, f"SELECT count(*) FROM expiry.job_rooms WHERE job_id = {job['id']}") == selected
    assert count(stack, f"SELECT count(DISTINCT room_id) FROM expiry.job_rooms WHERE job_id = {job['id']}") == selected
    assert count(stack, f"SELECT count(*) FROM expiry.job_rooms WHERE job_id = {job['id']} AND state <> 'removed'") == 0
    assert remaining(stack, "rooms.rooms", "id", rooms) == 0
    assert remaining(stack, "rooms.memberships", "room_id", rooms) == 0
    assert remaining(stack, "messaging.messages", "room_id", rooms) == 0
    assert count(stack, f"SELECT count(*) FROM messaging.room_logs WHERE room_id = ANY({ids_sql(rooms)}) "
                        f"AND removed_at IS NOT NULL") == len(rooms)
    with open(f"{stack['STATE_DIR']}/logs/expiry-1.log") as f:
        assert "expiry job resumes" in f.read()
