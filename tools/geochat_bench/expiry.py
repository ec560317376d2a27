"""Expiry benchmark driver (run by deploy/bench-expiry.sh against a running stack).

Inserts N idle rooms with messages and memberships in bulk by SQL, keeps
pollers on live rooms through both gateways, measures their poll latency for a
baseline, then starts an on-demand expiry run over Kafka and measures the poll
latency during it. Prints the run's duration and p50/p99 before and during,
and the cores each process of the stack used in both phases (what the polls
wait for on a shared machine).

  GEOCHAT_STACK_ENV=.data/bench-expiry/stack.env python -m geochat_bench.expiry [--rooms N] …
"""
import argparse
import re
import time
import urllib.request
import uuid

from geochat_support.db import sql
from geochat_support.expiry import Commands, idle_rooms_statement
from geochat_support.protocol import chat, create, say, start
from geochat_support.stack import instance_urls, read_stack_env

from .polling import PollingPhases

IDLE_AGE_S = 60 * 86_400  # well past the default 30-day limit


def psql(stack, statement):
    """The single-column integer rows of a statement, without a time limit: bulk work on a busy machine
    takes as long as it takes."""
    return [int(row[0]) for row in sql(stack, statement, timeout=None)]


def psql1(stack, statement):
    return psql(stack, statement)[0]


def wait_for_the_start_up_job(commands, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = commands.jobs(10)
        if any(j["trigger"] == "schedule" and j["status"] != "running" for j in jobs):
            return
        time.sleep(0.5)
    raise SystemExit("the expiry service's start-up job did not finish")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=1_000_000)
    parser.add_argument("--messages-per-room", type=int, default=2)
    parser.add_argument("--insert-chunk", type=int, default=50_000)
    parser.add_argument("--live-rooms", type=int, default=40)
    parser.add_argument("--pollers", type=int, default=40)
    parser.add_argument("--poll-interval", type=float, default=0.1)
    parser.add_argument("--baseline-s", type=float, default=20)
    parser.add_argument("--timeout-s", type=float, default=900)
    args = parser.parse_args()
    stack = read_stack_env()
    gateways = stack["GATEWAY_URLS"].split()

    # The service runs its scheduled job at start-up (the next is a day away): inserting before that job
    # ended let it remove the first chunk, and the run measured fewer rooms than asked for.
    commands = Commands(stack)
    wait_for_the_start_up_job(commands)
    began = time.monotonic()
    first = None
    for offset in range(0, args.rooms, args.insert_chunk):
        ids = psql(stack, idle_rooms_statement(min(args.insert_chunk, args.rooms - offset), IDLE_AGE_S,
                                               args.messages_per_room, 1))
        first = first or ids[0]
        print(f"inserted {offset + len(ids)} idle rooms", flush=True)
    psql(stack, "ANALYZE")
    idle_rooms = psql1(stack, "SELECT count(*) FROM rooms.rooms WHERE last_visited_at < now() - interval '30 days' "
                              "AND NOT is_lobby")
    idle_messages = psql1(stack, f"SELECT count(*) FROM messaging.messages WHERE room_id >= {first}")
    assert idle_rooms == args.rooms, f"{idle_rooms} idle rooms found of the {args.rooms} inserted"
    print(f"setup: {idle_rooms} idle rooms, {idle_messages} of their messages, in {time.monotonic() - began:.0f} s",
          flush=True)

    session = start(gateways[0])
    live = [create(gateways[0], session, 0.7, 0.3, 11, "live " + uuid.uuid4().hex[:8])["id"]
            for _ in range(args.live_rooms)]
    for room in live:
        say(gateways[0], session, room, "alive")
    polling = PollingPhases(stack, gateways, live, args.pollers, args.poll_interval)
    polling.baseline(args.baseline_s)
    polling.begin()
    job = commands.start_own_run(False, None, "bench")
    job = commands.wait_finished(job["id"], timeout=args.timeout_s)
    polling.end()
    polling.stop()
    commands.close()

    duration_s = (job["finishedAtMs"] - job["startedAtMs"]) / 1000
    left_rooms = psql1(stack, f"SELECT count(*) FROM rooms.rooms WHERE id >= {first} AND NOT (id = ANY(ARRAY[{','.join(map(str, live))}]::bigint[]))")
    left_messages = psql1(stack, f"SELECT count(*) FROM messaging.messages WHERE room_id >= {first} AND room_id < {min(live)}")
    alive = all(chat(gateways[1], cmd="messages", chatid=room).status == 200 for room in live)

    print()
    print(f"job {job['id']}: status {job['status']}, selected {job['selected']}, removed {job['removed']}, "
          f"failed {job['failed']}, duration {duration_s:.1f} s")
    print(f"left of the idle rooms: {left_rooms} rooms, {left_messages} messages; live rooms still answer: {alive}")
    polling.report(f"{args.live_rooms} live rooms")
    print_command_durations(stack)


# The owners' side of a batch: what each spent on it, from its own geochat_command_duration_seconds.
BATCH_COMMANDS = ("idleRoomsAfter", "removeIdleRooms", "removeRooms")


def print_command_durations(stack):
    print()
    print("the owners' time per command (geochat_command_duration_seconds, every instance, since it started):")
    for instance, url in sorted(instance_urls(stack).items()):
        if instance.startswith("gateway-"):
            continue  # a gateway owns no command (and serves /metrics on its operators' listener only)
        try:
            text = urllib.request.urlopen(url + "/metrics", timeout=5).read().decode()
        except OSError as e:
            print(f"  {instance}: metrics not read ({e})")
            continue
        for command in BATCH_COMMANDS:
            found = {kind: float(m.group(1)) for kind in ("sum", "count") for m in re.finditer(
                rf'geochat_command_duration_seconds_{kind}{{command="{command}"}} ([\d.e+-]+)', text)}
            if found.get("count"):
                print(f"  {instance:12s} {command:16s} n={int(found['count']):5d} "
                      f"mean {found['sum'] / found['count'] * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
