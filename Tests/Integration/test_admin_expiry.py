"""Expiry runs through the admin API and the CLI: start a dry run and a real
run, follow their progress, read their reports and the job list; the expiry
service following the live idle limit and schedule."""
import os
import subprocess
import time

import pytest

from admin_support import admin_url, api, bootstrap_admin, login
from expiry_support import wait_say_recorded
from geochat_support.db import count, sql
from geochat_support.protocol import assert_error, chat, create, say, start, unique_topic
from geochat_support.waiting import wait_until


@pytest.fixture(scope="module")
def admin(stack):
    name, password, run = bootstrap_admin(stack)
    assert run.returncode == 0, run.stdout + run.stderr
    return {"name": name, "password": password, "token": login(stack["gateways"][0], name, password)}


def backdate(stack, room, days):
    sql(stack, f"UPDATE rooms.rooms SET last_visited_at = now() - interval '{days} days' WHERE id = {room}")


def start_run(gateway, token, body):
    """POST a run; while another one is under way (409: the scheduled run, every 2 s here), wait and ask again."""
    for _ in range(20):
        response = api(gateway, "POST", "expiry/runs", body, token=token)
        if response.status != 409:
            return response
        assert response.json["error"]["code"] == "run_under_way", response
        follow(gateway, token, response.json["job"]["id"])
    pytest.fail("other expiry runs kept starting first")


def follow(gateway, token, job_id, timeout=60):
    def finished():
        job = api(gateway, "GET", f"expiry/runs/{job_id}", token=token).json["job"]
        return job if job["status"] != "running" else None
    return wait_until(finished, timeout=timeout, interval=0.3, message=f"expiry job {job_id} finished")


def test_a_dry_run_lists_and_a_real_run_removes_through_the_api(stack, admin):
    a, b = stack["gateways"][:2]
    token = admin["token"]
    session = start(a)
    idle = create(a, session, 0.61, 0.39, 15, unique_topic())
    fresh = create(a, session, 0.61, 0.39, 15, unique_topic())
    say(a, session, idle["id"], "soon gone")
    wait_say_recorded(stack, idle["id"], session)
    # 10 days idle: under the scheduled run's 30-day limit, over the 7 days asked here.
    backdate(stack, idle["id"], 10)

    started = start_run(a, token, {"dryRun": True, "idleSeconds": 7 * 86400})
    assert started.status == 202, started
    job = started.json["job"]
    assert job["dryRun"] is True and admin["name"] in job["trigger"]
    report = follow(b, token, job["id"])
    assert report["status"] == "finished" and report["removed"] == 0
    assert idle["id"] in report["rooms"] and fresh["id"] not in report["rooms"]
    assert count(stack, f"SELECT count(*) FROM rooms.rooms WHERE id = {idle['id']}") == 1

    real = start_run(b, token, {"dryRun": False, "idleSeconds": 7 * 86400})
    assert real.status == 202, real
    report = follow(a, token, real.json["job"]["id"])
    assert report["status"] == "finished" and report["removed"] >= 1 and report["failed"] == 0
    assert report["finishedAtMs"] >= report["startedAtMs"]
    assert count(stack, f"SELECT count(*) FROM rooms.rooms WHERE id = {idle['id']}") == 0
    assert count(stack, f"SELECT count(*) FROM rooms.rooms WHERE id = {fresh['id']}") == 1
    wait_until(lambda: chat(b, cmd="messages", chatid=idle["id"]).status == 404, message="404 for the expired room")

    jobs = api(a, "GET", "expiry/runs?limit=50", token=token).json["jobs"]
    ids = [j["id"] for j in jobs]
    assert job["id"] in ids and real.json["job"]["id"] in ids
    audited = sql(stack, f"SELECT outcome, detail FROM session.audit_log WHERE actor = '{admin['name']}' "
                         "AND action = 'expiry-run' ORDER BY id")
    assert ["ok", "dry run, idle 7d"] in audited and ["ok", "real run, idle 7d"] in audited


def test_the_cli_runs_expiry_with_progress_and_a_report(stack, admin, tmp_path):
    a = stack["gateways"][0]
    session = start(a)
    room = create(a, session, 0.62, 0.38, 15, unique_topic())
    backdate(stack, room["id"], 12)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOCHAT_ADMIN_")}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), GEOCHAT_ADMIN_URL=admin_url(a),
               GEOCHAT_ADMIN_TOKEN=admin["token"])
    binary = os.path.join(stack["BIN_DIR"], "geochat-admin")
    dry = subprocess.run([binary, "expire", "--idle", "7d", "--dry-run"], capture_output=True, text=True, env=env,
                         timeout=120)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "(dry run: nothing was removed)" in dry.stdout and str(room["id"]) in dry.stdout
    assert count(stack, f"SELECT count(*) FROM rooms.rooms WHERE id = {room['id']}") == 1
    real = subprocess.run([binary, "expire", "--idle", "7d"], capture_output=True, text=True, env=env, timeout=120)
    assert real.returncode == 0, real.stdout + real.stderr
    assert ": finished" in real.stdout and "removed" in real.stdout
    assert count(stack, f"SELECT count(*) FROM rooms.rooms WHERE id = {room['id']}") == 0
    jobs = subprocess.run([binary, "jobs"], capture_output=True, text=True, env=env, timeout=60)
    assert jobs.returncode == 0 and "dry run" in jobs.stdout, jobs.stdout + jobs.stderr


def test_the_expiry_service_follows_the_live_idle_limit_and_schedule(stack, admin):
    """room.idle.limit.s and expiry.interval.s stored by an admin reach the
    expiry service: a room idle for 3 hours survives the configured 30 days,
    goes once the limit is 1 hour; a long interval stops the scheduled runs."""
    a, b = stack["gateways"][:2]
    token = admin["token"]
    session = start(a)
    old = create(a, session, 0.61, 0.29, 13, unique_topic())["id"]
    fresh = create(a, session, 0.61, 0.29, 13, unique_topic())["id"]
    sql(stack, f"UPDATE rooms.rooms SET last_visited_at = now() - interval '3 hours', "
               f"created_at = now() - interval '3 hours' WHERE id = {old}")
    room_count = f"SELECT count(*) FROM rooms.rooms WHERE id = {old}"
    scheduled = "SELECT count(*) FROM expiry.jobs WHERE trigger = 'schedule'"
    try:
        before = count(stack, scheduled)
        wait_until(lambda: count(stack, scheduled) >= before + 2, timeout=20, message="scheduled runs every 2 s")
        assert count(stack, room_count) == 1, "3 hours idle is alive under the configured 30 days"

        assert api(b, "PUT", "settings", {"room.idle.limit.s": 3600}, token=token).status == 200
        wait_until(lambda: count(stack, room_count) == 0, timeout=30, interval=0.5,
                   message="a scheduled run under the stored 1-hour limit removing the room")
        assert count(stack, f"SELECT count(*) FROM rooms.rooms WHERE id = {fresh}") == 1
        assert_error(chat(b, cmd="messages", chatid=old), 404, "no_such_chat")

        assert api(b, "PUT", "settings", {"expiry.interval.s": 3600}, token=token).status == 200
        # The setting has arrived when the 2 s schedule (a 1 s tick) skips its runs: none running and
        # none started for 5 s.
        quiet = ("SELECT count(*) FROM expiry.jobs WHERE trigger = 'schedule' "
                 "AND (status = 'running' OR started_at > now() - interval '5 seconds')")
        wait_until(lambda: count(stack, quiet) == 0, timeout=30, interval=0.5,
                   message="the scheduled runs stopping under the stored 1-hour interval")
        settled = count(stack, scheduled)
        time.sleep(6)  # a run that does not start can only be watched for: three 2 s intervals
        assert count(stack, scheduled) == settled, "no scheduled run within an interval of an hour"
    finally:
        assert api(b, "PUT", "settings", {"room.idle.limit.s": 2_592_000, "expiry.interval.s": 2},
                   token=token).status == 200
    wait_until(lambda: count(stack, scheduled) > settled, timeout=20, message="the 2 s schedule back")
