"""Moderation benchmark driver (run by deploy/bench-moderation.sh against a running stack).

Part 1, a sender's messages: one session's N messages (default 10,000, in R
rooms, stored in bulk by SQL) are removed with `POST /admin/messages/removals`
(`--batch` a request, 500 by default as `geochat-admin messages remove-by-session` asks),
while pollers follow live rooms and the sender's rooms through both gateways.
Prints how long the removal took, when no gateway showed any of the messages
any more, and the poll latency p50/p99 before and during.

Part 2, one message under a say load: sayers post through both gateways at a
steady rate; K times a message is said, seen on both gateways, then removed
with `DELETE /admin/rooms/{id}/messages/{id}`. Prints, from the request's
start, when the removal answered and when the message was gone from a poll on
every gateway and a push stream on the other gateway had sent `removed`: p50/p99.

  GEOCHAT_STACK_ENV=.data/bench-moderation/stack.env python -m geochat_bench.moderation […]
"""
import argparse
import http.client
import json
import threading
import time
import urllib.parse
import uuid

from geochat_support import admin
from geochat_support.db import sql
from geochat_support.protocol import Client, create, say, start
from geochat_support.stack import read_stack_env

from .polling import PollingPhases, ms


def shown_ids(gateway_client, room):
    answer = gateway_client.chat(cmd="messages", chatid=room, past=0, limit=200)
    if not answer.ok:
        return None
    return [int(m.getAttribute("id")) for m in answer.dom().getElementsByTagName("message")]


class Sayers(threading.Thread):
    """Posts `rate` says a second in total, round robin over gateways and rooms, until stopped."""

    def __init__(self, gateways, session, rooms, rate, stop):
        super().__init__(daemon=True)
        self.clients = [Client(g, timeout=10) for g in gateways]
        self.session, self.rooms, self.rate, self.stop = session, rooms, rate, stop
        self.said = self.failed = 0

    def run(self):
        next_at = time.monotonic()
        i = 0
        while not self.stop.is_set():
            client = self.clients[i % len(self.clients)]
            answer = client.chat(cmd="say", sessionid=self.session, chatid=self.rooms[i % len(self.rooms)],
                                 msg=f"load {i} {uuid.uuid4().hex[:6]}")
            if answer.ok:
                self.said += 1
            else:
                self.failed += 1
            i += 1
            next_at += 1 / self.rate
            time.sleep(max(0.0, next_at - time.monotonic()))


class RemovedEvents(threading.Thread):
    """A push stream of one room on one gateway; notes when each `removed` id arrived."""

    def __init__(self, gateway, room):
        super().__init__(daemon=True)
        url = urllib.parse.urlsplit(gateway)
        self.connection = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
        self.connection.request("GET", f"/api/v1/rooms/{room}/events", headers={"Accept": "text/event-stream"})
        self.response = self.connection.getresponse()
        self.arrived = {}  # id -> monotonic time
        self.lock = threading.Lock()

    def run(self):
        name = None
        for raw in self.response:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and name == "removed":
                now = time.monotonic()
                with self.lock:
                    for removed in json.loads(line[6:])["ids"]:
                        self.arrived.setdefault(removed, now)
            elif line == "":
                name = None

    def when(self, message):
        with self.lock:
            return self.arrived.get(message)


def wait_for(condition, timeout, interval=0.005):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return time.monotonic()
        time.sleep(interval)
    return None


def part_one(stack, gateways, token, args):
    operators = stack["GATEWAY_ADMIN_URLS"].split()[0]
    spammer = start(gateways[0])
    rooms = [create(gateways[0], spammer, 0.61, 0.39, 11, "spam " + uuid.uuid4().hex[:8])["id"]
             for _ in range(args.sender_rooms)]
    per_room = args.sender_messages // args.sender_rooms
    # In bulk, as if said: the rooms' logs are open (their `created` events did it) and empty.
    wait_for(lambda: sql(stack, f"SELECT count(*) FROM messaging.room_logs WHERE room_id = ANY(ARRAY{rooms})")[0][0]
             == str(len(rooms)), 30, 0.1)
    sql(stack, f"""
        INSERT INTO messaging.messages (room_id, id, nick, text, author_session, idempotency_key, added_at)
        SELECT r, g, 'spammer', 'spam ' || g, '{spammer}', 'bench-' || r || '-' || g,
               now() - interval '1 minute' + g * interval '1 millisecond'
        FROM unnest(ARRAY{rooms}::bigint[]) r, generate_series(1, {per_room}) g""", timeout=None)
    sql(stack, f"UPDATE messaging.room_logs SET last_id = {per_room} WHERE room_id = ANY(ARRAY{rooms})")
    sql(stack, "ANALYZE messaging.messages", timeout=None)

    owner = start(gateways[1])
    live = [create(gateways[1], owner, 0.7, 0.3, 11, "live " + uuid.uuid4().hex[:8])["id"]
            for _ in range(args.live_rooms)]
    for room in live:
        say(gateways[1], owner, room, "alive")
    polling = PollingPhases(stack, gateways, live + rooms, args.pollers, args.poll_interval)
    polling.baseline(args.baseline_s)
    polling.begin()
    began = time.monotonic()
    removed, requests = 0, 0
    while True:
        answer = admin.request(operators, "POST", "messages/removals",
                               {"session": spammer, "reason": "bench", "limit": args.batch}, token=token, timeout=120)
        assert answer.status == 200, answer
        removed += answer.json["removed"]
        requests += 1
        if not answer.json["more"]:
            break
    answered = time.monotonic() - began
    clients = [Client(g) for g in gateways]
    gone = wait_for(lambda: all(shown_ids(c, r) == [] for c in clients for r in rooms), 60, 0.02)
    polling.end()
    polling.stop()
    print(f"part 1: {removed} messages of one session in {len(rooms)} rooms removed in {requests} request(s): "
          f"answered after {answered:.2f} s; gone from every poll of both gateways after "
          + (f"{gone - began:.2f} s" if gone else "more than 60 s (not seen gone)"))
    polling.report(f"{len(live)} live and {len(rooms)} removal rooms", {"live rooms": live, "removal rooms": rooms})


def part_two(stack, gateways, token, args):
    operators = stack["GATEWAY_ADMIN_URLS"].split()[0]
    talker = start(gateways[0])
    busy = [create(gateways[0], talker, 0.5, 0.5, 11, "load " + uuid.uuid4().hex[:8])["id"] for _ in range(16)]
    victim_room = create(gateways[0], talker, 0.52, 0.52, 11, "victim " + uuid.uuid4().hex[:8])["id"]
    say(gateways[0], talker, victim_room, "first")
    stop = threading.Event()
    sayers = [Sayers(gateways, start(gateways[i % 2]), busy, args.say_rate / 4, stop) for i in range(4)]
    for s in sayers:
        s.start()
    events = RemovedEvents(gateways[1], victim_room)
    events.start()
    clients = [Client(g) for g in gateways]
    time.sleep(2)
    answers, visible = [], []
    for trial in range(args.trials):
        message = say(gateways[trial % 2], talker, victim_room, f"to remove {trial}")
        assert wait_for(lambda: all(message in (shown_ids(c, victim_room) or []) for c in clients), 10), \
            f"message {message} not seen on both gateways"
        time.sleep(0.05)  # the push stream has sent it
        began = time.monotonic()
        answer = admin.request(operators, "DELETE", f"rooms/{victim_room}/messages/{message}", token=token)
        assert answer.status == 200 and answer.json["removed"] == 1, answer
        answers.append(time.monotonic() - began)
        polled = wait_for(lambda: all(message not in (shown_ids(c, victim_room) or [message]) for c in clients), 10)
        pushed = wait_for(lambda: events.when(message) is not None, 10)
        if polled is None or pushed is None:
            print(f"trial {trial}: message {message} not gone within 10 s (polls: {polled}, push: {pushed})")
            visible.append(10.0)
        else:
            visible.append(max(polled, events.when(message)) - began)
    stop.set()
    for s in sayers:
        s.join()
    said = sum(s.said for s in sayers)
    print(f"part 2: {args.trials} single removals under ~{args.say_rate} says/s through both gateways "
          f"({said} said, {sum(s.failed for s in sayers)} failed)")
    print(f"  answered:                                  p50={ms(answers, 50)} p99={ms(answers, 99)} "
          f"max={max(answers) * 1000:.1f} ms")
    print(f"  gone from polls on both gateways and push: p50={ms(visible, 50)} p99={ms(visible, 99)} "
          f"max={max(visible) * 1000:.1f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sender-messages", type=int, default=10_000)
    parser.add_argument("--sender-rooms", type=int, default=20)
    parser.add_argument("--batch", type=int, default=500,
                        help="messages per removal request (geochat-admin's --batch default: 500; at most 10,000)")
    parser.add_argument("--live-rooms", type=int, default=20)
    parser.add_argument("--pollers", type=int, default=40)
    parser.add_argument("--poll-interval", type=float, default=0.1)
    parser.add_argument("--baseline-s", type=float, default=15)
    parser.add_argument("--say-rate", type=float, default=200)
    parser.add_argument("--trials", type=int, default=50)
    args = parser.parse_args()
    stack = read_stack_env()
    gateways = stack["GATEWAY_URLS"].split()
    name, password, run = admin.bootstrap_admin(stack)
    assert run.returncode == 0, run.stdout + run.stderr
    login = admin.request(stack["GATEWAY_ADMIN_URLS"].split()[0], "POST", "login",
                          {"name": name, "password": password})
    assert login.status == 200, login
    token = login.json["token"]
    part_one(stack, gateways, token, args)
    print()
    part_two(stack, gateways, token, args)


if __name__ == "__main__":
    main()
