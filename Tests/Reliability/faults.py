"""Fault-injection harness: a steady load of posts and pollers against a local
cluster while service processes are SIGKILLed and restarted and PostgreSQL and
the Kafka broker are stopped and started. Afterwards it checks, against
PostgreSQL, what the protocol promises:

- every `say` answered `<success>` is stored exactly once, under the id it was given,
  also when the client repeats it as a phone does (the same text after a `503` or
  a cut connection, up to three times, a second apart: stored twice counts as
  duplicated);
- every acknowledged message becomes visible through every live gateway (one
  watcher per gateway follows some rooms through that gateway alone), with the
  delay reported as p50/p99/max: from the acknowledgement, or from the return
  of that gateway or of the broker if it was down meanwhile (`visibility`);
- the load is not simply refused: acknowledged posts per second during the
  fault window reach a floor (`--ack-floor`, default a quarter of the rate
  acknowledged before the first fault; the issue's target is a half);
- every poller saw every stored message of the rooms it follows, in order
  (the polling contract: never an id below one it already saw), but those an
  operator removed: an operator removes acknowledged messages throughout the
  load (`Remover`); a removed message is not lost, every acknowledged removal
  is stored (a tombstone), and no poller is shown a removed message longer than
  `--max-visibility-s` after its removal was acknowledged;
- no `say` answered with an error is stored (the 503 that says "the outcome is
  unknown", and connection errors, are counted apart: stored at most once);
- each restart is followed by the service answering again (recovery time);
- while a dependency was away, requests got a prompt 503, never a hang.

Run through deploy/faults.sh, which starts the cluster. Writes a JSON result.
"""
import argparse
import json
import os
import random
import sys
import threading
import time
import uuid

from geochat_support import admin
from geochat_support.protocol import Client, create_room, message_ids_and_texts, start_session, success_id_in
from geochat_support.stack import Stack
from geochat_support.stats import percentile
from geochat_support.waiting import poll_until

REQUEST_DEADLINE_S = 3.0  # GEOCHAT_REQUEST_TIMEOUT_MS of the gateways
HANG_S = REQUEST_DEADLINE_S + 2.0  # an answer later than this counts as hanging


class Record:
    """Everything the load saw, appended from many threads (list.append is atomic)."""

    def __init__(self):
        # One row per say as the client sees it, its repeats included:
        # (text, room, gateway, t_start, latency, status, code, id, unknown, attempts, t_answered)
        self.says = []
        self.others = []      # (kind, gateway, t_start, latency, status, code, unknown)
        self.polls = 0
        self.poll_errors = 0
        self.order_violations = []
        # One row per removal asked for: (room, id, t_start, status, removed count or None, t_answered)
        self.removals = []


class Poster(threading.Thread):
    """Says like a phone on a bad network: a say answered `503` or whose
    connection was cut is repeated (the same session, room and text, as a new
    request) up to `retries` times, a second apart; after a cut connection
    through the next gateway, as a load balancer would."""

    def __init__(self, run, index, gateways, sessions, rooms, interval, stop, record, retries=3):
        super().__init__(daemon=True)
        self.run_tag, self.index = run, index
        self.clients = [Client(g) for g in gateways]
        self.gateways = gateways
        self.sessions, self.rooms, self.interval, self.stop, self.record = sessions, rooms, interval, stop, record
        self.retries = retries

    def run(self):
        rng = random.Random(self.index)
        seq = 0
        next_at = time.monotonic() + rng.random() * self.interval
        while not self.stop.is_set():
            now = time.monotonic()
            if next_at > now:
                time.sleep(next_at - now)
            elif now - next_at > 1.0:
                next_at = now  # fell behind (a fault): do not burst to catch up
            next_at += self.interval
            seq += 1
            g = (self.index + seq) % len(self.clients)
            session = self.sessions[(self.index + seq) % len(self.sessions)]
            room = rng.choice(self.rooms)
            text = f"{self.run_tag}-{self.index}-{seq}"
            began = time.time()
            attempts = []
            while True:
                out = self.clients[g].chat(cmd="say", sessionid=session, chatid=room, msg=text)
                attempts.append(out)
                repeat = out.error is not None or out.status == 503
                if not repeat or len(attempts) > self.retries or self.stop.is_set():
                    break
                time.sleep(1.0)
                if out.error is not None:
                    g = (g + 1) % len(self.clients)
            msg_id = success_id_in(out.body) if out.ok else None
            self.record.says.append((text, room, g, began, out.latency, out.status, out.code, msg_id,
                                     any(a.outcome_unknown for a in attempts), len(attempts), time.time()))
            if out.error:
                time.sleep(0.2)  # the gateway is away: do not spin


class Watcher(threading.Thread):
    """Follows rooms through one gateway only, often: when each message first
    became visible through that gateway."""

    def __init__(self, gateway_index, gateway, rooms, interval, stop):
        super().__init__(daemon=True)
        self.gateway_index, self.rooms, self.interval, self.stop = gateway_index, rooms, interval, stop
        self.client = Client(gateway, timeout=5)
        self.last = {r: 0 for r in rooms}
        self.first_seen = {}  # (room, id) -> wall time

    def run(self):
        while not self.stop.is_set():
            began = time.monotonic()
            for room in self.rooms:
                out = self.client.chat(cmd="messages", chatid=room, past=self.last[room], limit=200)
                if not out.ok:
                    time.sleep(0.05)
                    continue
                now = time.time()
                for msg_id, _ in message_ids_and_texts(out.body):
                    if msg_id > self.last[room]:
                        self.first_seen[(room, msg_id)] = now
                        self.last[room] = msg_id
            rest = self.interval - (time.monotonic() - began)
            if rest > 0:
                time.sleep(rest)


class Poller(threading.Thread):
    """Follows rooms like a phone: polls each with the highest id it saw,
    through a different gateway each time."""

    def __init__(self, index, gateways, rooms, interval, stop, record):
        super().__init__(daemon=True)
        self.index, self.rooms, self.interval, self.stop, self.record = index, rooms, interval, stop, record
        self.clients = [Client(g) for g in gateways]
        self.seen = {r: [] for r in rooms}      # ids in the order seen
        self.texts = {}                         # (room, id) -> text
        self.seen_at = {}                       # (room, id) -> wall time it was shown
        self.last = {r: 0 for r in rooms}
        self.turn = index

    def poll_once(self, room):
        self.turn += 1
        out = self.clients[self.turn % len(self.clients)].chat(cmd="messages", chatid=room, past=self.last[room],
                                                               limit=200)
        self.record.polls += 1
        if not out.ok:
            self.record.poll_errors += 1
            return
        for msg_id, text in message_ids_and_texts(out.body):
            if msg_id <= self.last[room]:
                self.record.order_violations.append((self.index, room, self.last[room], msg_id))
                continue
            self.seen[room].append(msg_id)
            self.texts[(room, msg_id)] = text
            self.seen_at[(room, msg_id)] = time.time()
            self.last[room] = msg_id

    def run(self):
        while not self.stop.is_set():
            began = time.monotonic()
            for room in self.rooms:
                if self.stop.is_set():
                    break
                self.poll_once(room)
            rest = self.interval - (time.monotonic() - began)
            if rest > 0:
                time.sleep(rest)


class Remover(threading.Thread):
    """An operator removing acknowledged messages during the load, one at a time through the admin
    API of each gateway in turn (a message said at least `age` seconds before, in a room the
    watchers do not follow, so the visibility figure stays about new messages)."""

    def __init__(self, operators, token, record, unwatched, interval, stop, age=2.0):
        super().__init__(daemon=True)
        self.operators, self.token, self.record = operators, token, record
        self.unwatched, self.interval, self.stop, self.age = set(unwatched), interval, stop, age

    def run(self):
        rng = random.Random(41)
        turn = 0
        chosen = set()
        while not self.stop.wait(self.interval):
            now = time.time()
            candidates = [s for s in self.record.says[-2000:] if s[5] == 200 and s[7] and s[1] in self.unwatched
                          and s[10] < now - self.age and (s[1], s[7]) not in chosen]
            if not candidates:
                continue
            say = rng.choice(candidates)
            room, msg_id = say[1], say[7]
            chosen.add((room, msg_id))
            turn += 1
            began = time.time()
            try:
                out = admin.request(self.operators[turn % len(self.operators)], "DELETE",
                                    f"rooms/{room}/messages/{msg_id}?reason=fault+harness", token=self.token,
                                    timeout=10)
                status, removed = out.status, (out.json.get("removed") if out.status == 200 else None)
            except OSError:
                status, removed = None, None
            self.record.removals.append((room, msg_id, began, status, removed, time.time()))


class Churn(threading.Thread):
    """Light traffic on the other services: start/end sessions, create rooms,
    region queries. Shows 503 latencies while session or rooms are away."""

    def __init__(self, gateways, stop, record, interval=0.25):
        super().__init__(daemon=True)
        self.clients = [Client(g) for g in gateways]
        self.stop, self.record, self.interval = stop, record, interval

    def note(self, kind, g, began, out):
        self.record.others.append((kind, g, began, out.latency, out.status, out.code, out.outcome_unknown))

    def run(self):
        i = 0
        rng = random.Random(7)
        while not self.stop.is_set():
            i += 1
            g = i % len(self.clients)
            c = self.clients[g]
            began = time.time()
            session, out = start_session(c, "churn%d" % i)
            self.note("start", g, began, out)
            if session:
                began = time.time()
                _, out = create_room(c, session, round(rng.random(), 4), round(rng.random(), 4), rng.randint(0, 17),
                                     "churn %d" % i)
                self.note("create", g, began, out)
                began = time.time()
                out = c.chat(cmd="end", sessionid=session)
                self.note("end", g, began, out)
            began = time.time()
            out = c.chat(cmd="chats", lon1=0, lat1=0, lon2=1, lat2=1, minz=0, maxz=17)
            self.note("chats", g, began, out)
            time.sleep(self.interval)


class Faults:
    """Injects one fault at a time and measures how long until the system answers again."""

    def __init__(self, stack, probe_session, probe_room):
        self.stack = stack
        self.session, self.room = probe_session, probe_room
        self.clients = [Client(g, timeout=6) for g in stack.gateways]
        self.results = []

    def say_works(self, gateway_index):
        c = self.clients[gateway_index]
        text = "probe-" + uuid.uuid4().hex[:10]
        out = c.chat(cmd="say", sessionid=self.session, chatid=self.room, msg=text)
        return out.ok

    def seen_everywhere(self):
        """A fresh message posted through one gateway is polled through every gateway."""
        text = "probe-" + uuid.uuid4().hex[:10]
        out = self.clients[0].chat(cmd="say", sessionid=self.session, chatid=self.room, msg=text)
        if not out.ok:
            return False
        for c in self.clients:
            ok = poll_until(lambda: any(t == text for _, t in message_ids_and_texts(
                c.chat(cmd="messages", chatid=self.room, past=0, limit=20).body)), 5, 0.2)
            if not ok:
                return False
        return True

    def answering(self, target):
        """The probe for 'answering again' after `target` restarted."""
        if target.startswith("gateway-"):
            i = int(target.split("-")[1]) - 1
            return self.stack.ready(target) and self.clients[i].chat(
                cmd="chats", lon1=0, lat1=0, lon2=1, lat2=1, minz=0, maxz=17).ok
        if target.startswith("session-"):
            return self.stack.ready(target) and start_session(self.clients[0], "probe")[0] is not None
        if target.startswith("rooms-"):
            return self.stack.ready(target) and self.clients[0].chat(
                cmd="chats", lon1=0, lat1=0, lon2=1, lat2=1, minz=0, maxz=17).ok
        if target.startswith("messaging-"):
            return self.stack.ready(target) and self.say_works(0) and self.say_works(1)
        if target.startswith("expiry-"):
            return self.stack.ready(target)
        if target in ("postgres", "kafka"):
            return start_session(self.clients[0], "probe")[0] is not None and self.seen_everywhere()
        raise ValueError(target)

    def inject(self, target, down_s):
        began = time.time()
        if target == "postgres":
            self.stack.command("stop-postgres")
        elif target == "kafka":
            self.stack.command("stop-kafka")
        else:
            self.stack.command("kill", target)
        stopped = time.time()
        time.sleep(down_s)
        restart = time.time()
        if target == "postgres":
            self.stack.command("start-postgres")
        elif target == "kafka":
            self.stack.command("start-kafka")
        else:
            self.stack.command("start", target)
        limit = 120 if target == "kafka" else 60
        ok = poll_until(lambda: self.answering(target), limit, 0.1)
        answered = time.time()
        result = {
            "target": target, "kind": "kill -9" if target not in ("postgres", "kafka") else "stop/start",
            "began": began, "stopped": stopped, "restarted": restart, "answered": answered if ok else None,
            "recovery_s": round(answered - restart, 2) if ok else None, "down_s": round(restart - stopped, 2),
        }
        self.results.append(result)
        print(f"  fault {len(self.results):2d}: {target:12s} down {result['down_s']:.1f}s, "
              f"answering again {result['recovery_s']}s after restart", flush=True)
        return result


def schedule(stack, short):
    services = [i for i in stack.urls]
    kinds = {}
    for inst in services:
        kinds.setdefault(inst.split("-")[0], []).append(inst)
    if short:
        order = ["messaging-1", "gateway-2", "session-1", "rooms-1", "expiry-1", "postgres", "kafka"]
    else:
        order = []
        for round_ in range(3):
            for kind in ("messaging", "gateway", "session", "rooms", "expiry"):
                insts = kinds[kind]
                order.append(insts[round_ % len(insts)])
            order.append("postgres" if round_ != 1 else "kafka")
        order += ["messaging-2", "gateway-1", "kafka", "postgres"]
    if stack.env.get("KAFKA_PROFILE") == "kafka":
        # Stopping the local broker loses every topic (Tansu keeps them in memory); the kafka
        # profile is for clusters that keep them, so its run has every other fault.
        order = [target for target in order if target != "kafka"]
    return order


def visibility(acked, watchers, faults, t0=0.0):
    """Acknowledged → visible through every live gateway, for the says into the
    watched rooms: per say, the latest of the gateways' first sightings, each
    counted from the acknowledgement or, when that gateway or the broker was
    down at some point between the acknowledgement and the sighting, from when
    it answered again: a message reaches another gateway only across the
    broker (its event, or the head check that finds it), and this broker
    forgets the events it held when it restarts. `max_from_ack_ms` is the same
    figure counted from the acknowledgement alone. A message one gateway never
    showed is counted apart."""
    down = {}
    for f in faults.results:
        outage = (f["stopped"], f["answered"] or float("inf"))
        if f["target"].startswith("gateway-"):
            down.setdefault(int(f["target"].split("-")[1]) - 1, []).append(outage)
        elif f["target"] == "kafka":
            for w in watchers:
                down.setdefault(w.gateway_index, []).append(outage)
    watched = {r for w in watchers for r in w.rooms}
    delays, never, slowest, from_ack = [], [], [], []
    for s in acked:
        room, msg_id, answered = s[1], s[7], s[10]
        if room not in watched:
            continue
        worst = 0.0
        for w in watchers:
            seen = w.first_seen.get((room, msg_id))
            if seen is None:
                never.append((w.gateway_index, room, msg_id))
                worst = None
                break
            start = answered
            for stopped, back in down.get(w.gateway_index, []):
                if stopped <= seen and back >= answered:  # down for part of the wait: count from its return
                    start = max(start, back)
            worst = max(worst, seen - start)
        if worst is not None:
            delays.append(worst)
            from_ack.append(max(w.first_seen[(room, msg_id)] for w in watchers) - answered)
            slowest.append((round(worst, 3), room, msg_id, round(answered - t0, 3),
                            [round(w.first_seen[(room, msg_id)] - answered, 3) for w in watchers]))

    def ms(p):
        return round(percentile(delays, p) * 1000, 1) if delays else None
    slowest.sort(reverse=True)
    return {"measured": len(delays), "p50_ms": ms(50), "p99_ms": ms(99), "max_ms": ms(100),
            "max_from_ack_ms": round(max(from_ack) * 1000, 1) if from_ack else None,
            "never_visible": len(never), "never_visible_samples": never[:5],
            # (delay s, room, id, acknowledged at s since the load began, seen through each gateway s after)
            "slowest_samples": slowest[:8]}


def analyse(stack, run_tag, record, pollers, watchers, faults, timing, args):
    rows = stack.sql(f"SELECT room_id, id, text FROM messaging.messages WHERE text LIKE '{run_tag}-%'")
    stored = {}
    for room, msg_id, text in rows:
        stored.setdefault(text, []).append((int(room), int(msg_id)))
    acked = [s for s in record.says if s[5] == 200]
    # What operators removed: tombstones, their text gone; a removed message is not lost.
    tombstones = {(int(room), int(msg_id)) for room, msg_id in stack.sql(
        "SELECT room_id, id FROM messaging.messages WHERE removed_at IS NOT NULL")}
    removals_acked = [r for r in record.removals if r[3] == 200]
    removal_lost = [r for r in removals_acked if r[4] == 1 and (r[0], r[1]) not in tombstones]
    removed_at = {(r[0], r[1]): r[5] for r in removals_acked}
    refused = [s for s in record.says if s[5] is not None and s[5] != 200 and not s[8]]
    unknown = [s for s in record.says if s[8]]
    lost = [s for s in acked if s[0] not in stored and (s[1], s[7]) not in tombstones]
    wrong_id = [s for s in acked if s[0] in stored and stored[s[0]] != [(s[1], s[7])]]
    duplicated = [t for t, places in stored.items() if len(places) > 1]
    refused_but_stored = [s for s in refused if s[0] in stored]
    unknown_stored = sum(1 for s in unknown if s[0] in stored)

    # Polling contract: per poller and followed room, every stored id seen, in order.
    heads = {int(r): int(h) for r, h in stack.sql("SELECT room_id, last_id FROM messaging.room_logs")}
    acked_by_room = {}
    for s in acked:
        acked_by_room.setdefault(s[1], set()).add(s[7])
    misses, missed_acked, text_mismatch = 0, 0, 0
    removed_shown = []
    # After the load, every room read whole through every gateway: removed ones absent, the others all there.
    removed_in_final, missing_in_final, unread_in_final = [], [], 0
    for (g, room), ids in timing["final_reads"].items():
        if ids is None:
            unread_in_final += 1
            continue
        gone, shown = {msg_id for r, msg_id in tombstones if r == room}, set(ids)
        removed_in_final += [(g, room, msg_id) for msg_id in ids if msg_id in gone]
        missing_in_final += [(g, room, msg_id) for msg_id in range(2, heads.get(room, 0) + 1)
                             if msg_id not in gone and msg_id not in shown]
    texts_by_place = {place: t for t, places in stored.items() for place in places}
    for p in pollers:
        for room in p.rooms:
            seen = set(p.seen[room])
            gone = {msg_id for r, msg_id in tombstones if r == room}
            expected = set(range(1, heads.get(room, 0) + 1)) - gone
            misses += len(expected - seen)
            missed_acked += len((acked_by_room.get(room, set()) - gone) - seen)
            for msg_id in seen & gone:
                acknowledged = removed_at.get((room, msg_id))
                if acknowledged is not None and p.seen_at[(room, msg_id)] > acknowledged + args.max_visibility_s:
                    removed_shown.append((p.index, room, msg_id, round(p.seen_at[(room, msg_id)] - acknowledged, 2)))
            for msg_id in seen:
                want = texts_by_place.get((room, msg_id))
                if want is not None and p.texts[(room, msg_id)] != want:
                    text_mismatch += 1

    all_requests = [(s[5], s[4], s[8]) for s in record.says] + [(o[4], o[3], o[6]) for o in record.others]
    lat_503 = [lat for status, lat, _ in all_requests if status == 503]
    hangs = [lat for status, lat, unknown_ in all_requests if status != 200 and lat > HANG_S]
    conn_errors = sum(1 for status, _, _ in all_requests if status is None)
    statuses = {}
    for status, _, _ in all_requests:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    ok_lat = [s[4] for s in acked]

    def ms(p):
        return round(percentile(ok_lat, p) * 1000, 1) if ok_lat else None

    kill_recoveries = [f["recovery_s"] for f in faults.results if f["kind"] == "kill -9"]
    # The floor: acknowledged in the fault window against what the same load got before the first fault.
    warm_began, window = timing["warm_began"], timing["fault_window"]
    warm_acked = sum(1 for s in acked if warm_began <= s[3] < window[0])
    warm_rate = warm_acked / max(window[0] - warm_began, 1e-9)
    window_acked = sum(1 for s in acked if window[0] <= s[3] < window[1])
    window_rate = window_acked / max(window[1] - window[0], 1e-9)
    retried = [s for s in record.says if s[9] > 1]
    return {
        "run": run_tag, "short": args.short, "target_rate": args.rate,
        "load_seconds": round(timing["load_s"], 1),
        "says_attempted": len(record.says),
        "attempted_rate": round(len(record.says) / timing["load_s"], 1),
        "acknowledged": len(acked),
        "acknowledged_rate": round(len(acked) / timing["load_s"], 1),
        "acknowledged_rate_before_faults": round(warm_rate, 1),
        "acknowledged_rate_fault_window": round(window_rate, 1),
        "fault_window_s": round(window[1] - window[0], 1),
        "fault_window_ack_ratio": round(window_rate / warm_rate, 2) if warm_rate else None,
        "ack_floor_fraction": args.ack_floor,
        "below_ack_floor": (window[1] - window[0] >= 1 and window_rate < args.ack_floor * warm_rate) or not acked,
        "says_repeated": len(retried),
        "repeated_then_acknowledged": sum(1 for s in retried if s[5] == 200),
        "visibility": visibility(acked, watchers, faults, t0=timing["warm_began"]),
        "say_latency_ms": {"p50": ms(50), "p99": ms(99), "max": ms(100)},
        "refused": len(refused), "refused_codes": count_codes(refused),
        "outcome_unknown": len(unknown), "outcome_unknown_stored": unknown_stored,
        "lost": len(lost), "wrong_id": len(wrong_id), "duplicated": len(duplicated),
        "refused_but_stored": len(refused_but_stored),
        "polls": record.polls, "poll_errors": record.poll_errors, "pollers": len(pollers),
        "rooms_followed": sum(len(p.rooms) for p in pollers),
        "poll_misses": misses, "poll_misses_of_acknowledged": missed_acked,
        "poll_order_violations": len(record.order_violations), "poll_text_mismatches": text_mismatch,
        "removals_asked": len(record.removals), "removals_acknowledged": len(removals_acked),
        "removals_statuses": count_statuses(record.removals),
        "messages_removed": len(tombstones), "removal_lost": len(removal_lost),
        "removed_shown_late": len(removed_shown),
        "final_reads": len(timing["final_reads"]), "final_reads_failed": unread_in_final,
        "removed_shown_in_final_reads": len(removed_in_final), "missing_in_final_reads": len(missing_in_final),
        "other_requests": len(record.others),
        "statuses": statuses, "connection_errors": conn_errors,
        "max_503_latency_s": round(max(lat_503), 2) if lat_503 else None,
        "answers_503": len(lat_503), "hangs": len(hangs),
        "faults": faults.results,
        "faults_injected": len(faults.results),
        "max_kill_recovery_s": max(kill_recoveries) if kill_recoveries else None,
        "unrecovered": sum(1 for f in faults.results if f["recovery_s"] is None),
        "crashes": count_crashes(stack),
        "samples": {"lost": lost[:5], "duplicated": duplicated[:5], "refused_but_stored": refused_but_stored[:5],
                    "order_violations": record.order_violations[:5], "wrong_id": wrong_id[:5],
                    "removal_lost": removal_lost[:5], "removed_shown_late": removed_shown[:5],
                    "removed_shown_in_final_reads": removed_in_final[:5], "missing_in_final_reads": missing_in_final[:5]},
    }


def final_reads(gateways, rooms):
    """Every room read through every gateway after the load, page by page from `past` 1 (`past` 0
    means the latest page, so id 1 is left out): {(gateway index, room): [ids shown]}."""
    shown = {}
    for g, url in enumerate(gateways):
        client = Client(url, timeout=10)
        for room in rooms:
            ids, past = [], 1
            while True:
                for _ in range(3):  # a moment's 503 (an owner settling after the last fault) is asked again
                    out = client.chat(cmd="messages", chatid=room, past=past, limit=200)
                    if out.ok:
                        break
                    time.sleep(1)
                if not out.ok:
                    ids = None
                    break
                page = [msg_id for msg_id, _ in message_ids_and_texts(out.body)]
                if not page:
                    break
                ids += page
                past = page[-1]
            shown[(g, room)] = ids
    return shown


def count_statuses(removals):
    statuses = {}
    for removal in removals:
        statuses[str(removal[3])] = statuses.get(str(removal[3]), 0) + 1
    return statuses


def count_codes(says):
    codes = {}
    for s in says:
        key = f"{s[5]} {s[6]}"
        codes[key] = codes.get(key, 0) + 1
    return codes


def count_crashes(stack):
    """Processes that died by themselves: a fatal error or a signal in a log
    that the harness did not cause (its own kills leave no trace in the log)."""
    crashes = sum(1 for instance in stack.urls if not stack.ready(instance))  # down at the end
    logs = os.path.join(stack.state_dir, "logs")
    for name in os.listdir(logs):
        if name == "kafka.log":
            continue
        with open(os.path.join(logs, name), errors="replace") as f:
            for line in f:
                if "Fatal error" in line or "Crash" in line or "Segmentation fault" in line or "Illegal instruction" in line:
                    crashes += 1
    return crashes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stack-env", required=True)
    ap.add_argument("--short", action="store_true")
    ap.add_argument("--rate", type=float, default=500.0, help="target posts per second")
    ap.add_argument("--posters", type=int, default=None,
                    help="posting threads (each waits for its answer): default 48 short, 128 full")
    ap.add_argument("--rooms", type=int, default=64)
    ap.add_argument("--pollers", type=int, default=8)
    ap.add_argument("--poll-interval", type=float, default=0.5, help="seconds between two polls of one room by one poller")
    ap.add_argument("--retries", type=int, default=3,
                    help="repeats of a say answered 503 or cut off, a second apart, as phones do (0: none)")
    ap.add_argument("--watched-rooms", type=int, default=8,
                    help="rooms followed by one watcher per gateway for the visibility figure")
    ap.add_argument("--watch-interval", type=float, default=0.1, help="seconds between two polls of a watched room")
    # The target is 0.5 (release build); the default floor only fails a run that acknowledges
    # little, so a loaded CI machine running the debug build does not fail on the margin.
    ap.add_argument("--ack-floor", type=float, default=0.25,
                    help="acknowledged per second in the fault window, at least this fraction of the rate before it")
    # A killed messaging instance's partitions move only after the group's session timeout (4 s
    # here), a rebalance and the new instance's start (a few seconds on Tansu); the probe's two
    # says (one per gateway) may each wait a whole request deadline (3 s) meanwhile: up to about
    # 4 + 3 + 2 x 3 = 13 s is expected, not a failure. Seen: 4.9-5.7 s in most runs, 9.6-14.3 s
    # now and then (the release run in docs/reliability.md, a fresh-clone short run at 10.7 s).
    ap.add_argument("--max-recovery-s", type=float, default=15.0,
                    help="fail when a killed instance took this long or longer to answer again")
    ap.add_argument("--max-visibility-s", type=float, default=10.0,
                    help="fail when an acknowledged message took longer to be visible through every live gateway")
    ap.add_argument("--remove-interval", type=float, default=0.5,
                    help="seconds between two removals of an acknowledged message by an operator (0: none)")
    ap.add_argument("--only", default=None,
                    help="comma-separated fault targets instead of the schedule (e.g. gateway-2,kafka; empty: none)")
    ap.add_argument("--warmup", type=float, default=None, help="seconds of load before the first fault")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.posters is None:
        # Each poster waits for its answer: 500/s at ~0.2 s a say needs ~100 of them.
        args.posters = 48 if args.short else 128

    stack = Stack(args.stack_env)
    run_tag = "r" + uuid.uuid4().hex[:8]
    print(f"faults: run {run_tag}, target {args.rate:.0f} posts/s, {args.rooms} rooms, "
          f"{'short' if args.short else 'full'} schedule", flush=True)
    setup = Client(stack.gateways[0])
    sessions = []
    for i in range(max(16, args.posters)):
        s, out = start_session(setup, f"load{i}")
        assert s, out.body
        sessions.append(s)
    rooms = []
    for i in range(args.rooms):
        r, out = create_room(setup, sessions[i % len(sessions)], round(random.random(), 5), round(random.random(), 5),
                             random.randint(0, 17), f"load room {run_tag} {i}")
        assert r, out.body
        rooms.append(r)
    name, password, run = admin.bootstrap_admin(stack.env)
    assert run.returncode == 0, run.stdout + run.stderr
    operators = stack.env["GATEWAY_ADMIN_URLS"].split()
    login = admin.request(operators[0], "POST", "login", {"name": name, "password": password})
    assert login.status == 200, login
    probe_session, _ = start_session(setup, "probe")
    probe_room, _ = create_room(setup, probe_session, 0.5, 0.5, 3, f"probe {run_tag}")

    record = Record()
    stop_posts, stop_polls = threading.Event(), threading.Event()
    pollers = []
    per = max(1, (2 * len(rooms)) // args.pollers)  # every room is followed by two pollers
    for i in range(args.pollers):
        followed = [rooms[(i * per // 2 + k) % len(rooms)] for k in range(per)]
        pollers.append(Poller(i, stack.gateways, sorted(set(followed)), args.poll_interval, stop_polls, record))
    watchers = [Watcher(g, url, rooms[:args.watched_rooms], args.watch_interval, stop_polls)
                for g, url in enumerate(stack.gateways)]
    for p in pollers + watchers:
        p.start()
    time.sleep(1)
    posters = [Poster(run_tag, i, stack.gateways, sessions, rooms, args.posters / args.rate, stop_posts, record,
                      retries=args.retries)
               for i in range(args.posters)]
    churn = Churn(stack.gateways, stop_posts, record)
    background = [churn]
    if args.remove_interval > 0:
        background.append(Remover(operators, login.json["token"], record, rooms[args.watched_rooms:],
                                  args.remove_interval, stop_posts))
    load_began, warm_began = time.monotonic(), time.time()
    for t in posters + background:
        t.start()

    faults = Faults(stack, probe_session, probe_room)
    warmup = args.warmup or (10 if args.short else 20)
    time.sleep(warmup)
    warm = len(record.says)
    print(f"  load running: {warm / warmup:.0f} says/s attempted in the first {warmup}s", flush=True)
    window_began = time.time()
    targets = schedule(stack, args.short) if args.only is None else [t for t in args.only.split(",") if t]
    for target in targets:
        down = 4.0 if target in ("postgres", "kafka") else 1.0
        faults.inject(target, down)
        time.sleep(3 if args.short else 5)
    window_ended = time.time()
    time.sleep(5)
    stop_posts.set()
    for t in posters + background:
        t.join(15)
    load_s = time.monotonic() - load_began
    print(f"  load stopped after {load_s:.0f}s; letting pollers catch up", flush=True)

    # The highest id a poller can be shown: removed messages are never shown.
    heads = {int(r): int(h) for r, h in stack.sql(
        "SELECT room_id, max(id) FROM messaging.messages WHERE removed_at IS NULL GROUP BY room_id")}

    def caught_up():
        return (all(p.last[r] >= heads.get(r, 0) for p in pollers for r in p.rooms)
                and all(w.last[r] >= heads.get(r, 0) for w in watchers for r in w.rooms))
    poll_until(caught_up, 60, 0.5)
    stop_polls.set()
    for p in pollers + watchers:
        p.join(15)

    timing = {"load_s": load_s, "warm_began": warm_began, "fault_window": (window_began, window_ended),
              "final_reads": final_reads(stack.gateways, rooms)}
    result = analyse(stack, run_tag, record, pollers, watchers, faults, timing, args)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2, default=str)
    bad = [k for k in ("lost", "duplicated", "wrong_id", "refused_but_stored", "poll_misses", "poll_order_violations",
                       "poll_text_mismatches", "removal_lost", "removed_shown_late", "removed_shown_in_final_reads",
                       "missing_in_final_reads", "final_reads_failed", "hangs", "unrecovered", "crashes")
           if result[k]]
    if args.remove_interval > 0 and not result["removals_acknowledged"]:
        bad.append("no removal acknowledged")
    if result["outcome_unknown_stored"] > result["outcome_unknown"]:
        bad.append("outcome_unknown_stored")
    if result["max_kill_recovery_s"] is not None and result["max_kill_recovery_s"] >= args.max_recovery_s:
        bad.append("max_kill_recovery_s")
    if result["below_ack_floor"]:
        bad.append("below_ack_floor")
    vis = result["visibility"]
    if vis["never_visible"]:
        bad.append("never_visible")
    if not vis["measured"] or (vis["max_ms"] or 0) > args.max_visibility_s * 1000:
        bad.append("visibility")
    print(json.dumps({k: v for k, v in result.items() if k not in ("faults", "samples")}, indent=1))
    if bad:
        print("faults: FAILED: " + ", ".join(bad) + "\n" + json.dumps(result["samples"], default=str)[:3000])
        sys.exit(1)
    print("faults: all checks passed")


if __name__ == "__main__":
    main()
