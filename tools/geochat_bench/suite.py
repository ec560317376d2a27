#!/usr/bin/env python3
"""GeoChat benchmark scenarios against a running release stack (deploy/bench.sh
starts one and calls this). Prints a table and one `name: value` line per
headline figure, and writes the generated part of docs/benchmarks.md.

  bench.py --stack-env .data/bench/stack.env --hello-url http://127.0.0.1:PORT [--quick] [--only a,b]
"""
import argparse
import asyncio
import datetime
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Support"))
from geochat_support.protocol import (AsyncPool, chat_path, gather_limited, message_ids_and_texts,  # noqa: E402
                                      room_id_in, session_id_in, success_id_in)
from geochat_support.stack import Stack  # noqa: E402
from geochat_support.stats import percentile  # noqa: E402

# Fan-out last: at 1,000 posts/s it overloads this machine, and the backlog it leaves
# in the broker would slow every scenario after it.
SCENARIOS = ["idle", "cost", "chats", "say", "memory", "fanout"]
BULK_SQL_TIMEOUT_S = 600  # a million rooms inserted, or indexed, on a loaded machine


def log(text):
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def scrape(url):
    """{(name, labels tuple): value} from /metrics (simple text parse)."""
    samples = {}
    for line in get(url + "/metrics").decode().splitlines():
        if not line or line.startswith("#"):
            continue
        head, value = line.rsplit(" ", 1)
        name, _, labels = head.partition("{")
        samples[(name, labels.rstrip("}"))] = float(value)
    return samples


def histogram_quantile(before, after, name, label, q):
    """The q-quantile (upper bucket bound, seconds) of a histogram's growth between two scrapes."""
    buckets = []
    for (n, labels), value in after.items():
        if n == name + "_bucket" and label in labels:
            le = re.search(r'le="([^"]+)"', labels).group(1)
            grown = value - before.get((n, labels), 0)
            buckets.append((float("inf") if le == "+Inf" else float(le), grown))
    buckets.sort()
    if not buckets or buckets[-1][1] == 0:
        return float("nan"), 0
    total = buckets[-1][1]
    for bound, count in buckets:
        if count >= q * total:
            return bound, int(total)
    return float("inf"), int(total)


# ---------------------------------------------------------------- wrk

def wrk(base_url, paths, seconds, connections, threads=2):
    with tempfile.NamedTemporaryFile("w", suffix=".paths", delete=False) as f:
        f.write("\n".join(paths) + "\n")
        paths_file = f.name
    try:
        run = subprocess.run(
            ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "10s",
             "-s", os.path.join(ROOT, "deploy", "bench", "paths.lua"), base_url, "--", paths_file],
            capture_output=True, text=True, timeout=seconds + 60)
    finally:
        os.unlink(paths_file)
    line = next((l for l in run.stdout.splitlines() if l.startswith("BENCH ")), None)
    if line is None:
        raise RuntimeError("wrk gave no summary: " + run.stdout + run.stderr)
    v = {k: float(x) for k, x in (kv.split("=") for kv in line.split()[1:])}
    ok = v["requests"] - v["failed"]
    return {"rps": ok / v["seconds"], "requests": int(v["requests"]), "failed": int(v["failed"]),
            "p50_ms": v["p50_us"] / 1000, "p90_ms": v["p90_us"] / 1000, "p99_ms": v["p99_us"] / 1000,
            "max_ms": v["max_us"] / 1000}


# ---------------------------------------------------------------- set-up helpers

def q(**params):
    return chat_path(v=5, **params)


async def start_sessions(pool, count, prefix, concurrency=64, attempts=3):
    paths, ids = [q(cmd="start", nick=f"{prefix}{i}") for i in range(count)], []
    for attempt in range(attempts):
        answers = await gather_limited(pool, paths, concurrency)
        ids += [session_id_in(answer.body) for answer in answers if answer.ok]
        paths = [p for p, answer in zip(paths, answers) if not answer.ok]
        if not paths:
            break
    return ids


async def create_rooms(pool, session, count, tag, concurrency=16):
    rnd = random.Random(tag)
    paths = [q(cmd="create", sessionid=session, lon=f"{rnd.random():.6f}", lat=f"{0.3 + 0.4 * rnd.random():.6f}",
               z=rnd.randint(8, 15), topic=f"{tag} {i}") for i in range(count)]
    rooms = []
    for attempt in range(5):  # a loaded machine answers some with 503: ask again for those
        answers = await gather_limited(pool, paths, concurrency)
        rooms += [room_id_in(answer.body) for answer in answers if answer.ok]
        paths = [p for p, answer in zip(paths, answers) if not answer.ok]
        if not paths:
            return rooms
    if len(rooms) < count * 0.8:
        raise RuntimeError(f"created {len(rooms)} of {count} rooms: {answers[0]}")
    log(f"created {len(rooms)} of {count} rooms (the rest kept failing)")
    return rooms


async def say_all(pool, session, rooms, text, concurrency=32):
    ids = {}
    for attempt in range(5):
        todo = [r for r in rooms if r not in ids]
        answers = await gather_limited(pool, [q(cmd="say", sessionid=session, chatid=r, msg=text) for r in todo],
                                       concurrency)
        ids.update({r: success_id_in(answer.body) for r, answer in zip(todo, answers) if answer.ok})
        if len(ids) == len(rooms):
            break
    return [ids.get(r) for r in rooms]


def fresh_broker(stack, timeout=120):
    """Restarts the broker between scenarios. Tansu's memory storage lists every
    stored batch of a partition on each fetch, so it slows as records pile up
    (the set-up of one scenario slowed the next by half and more); a restarted
    Tansu starts empty, as a Kafka cluster with retention stays small. The
    services recreate their topics and rejoin their groups by themselves; this
    waits until a `say` through gateway 1 is polled through every gateway."""
    started = time.monotonic()
    stack.command("stop-kafka")
    stack.command("start-kafka")

    async def probe():
        pools = [AsyncPool(url, 2) for url in stack.gateways]
        try:
            sessions = await start_sessions(pools[0], 1, "probe", attempts=1)
            if not sessions:
                return False
            rooms = await create_rooms(pools[0], sessions[0], 1, "probe")
            answer = await pools[0].get(q(cmd="say", sessionid=sessions[0], chatid=rooms[0], msg="probe"))
            if not answer.ok:
                return False
            for pool in pools:
                answer = await pool.get(q(cmd="messages", chatid=rooms[0], past=0))
                if not answer.ok or b"probe" not in answer.body:
                    return False
            return True
        except Exception:
            return False
        finally:
            for pool in pools:
                pool.close()

    while time.monotonic() - started < timeout:
        if asyncio.run(probe()):
            log(f"fresh broker: the stack answered again after {time.monotonic() - started:.1f}s")
            return
        time.sleep(1)
    raise RuntimeError(f"the stack did not answer within {timeout}s of a broker restart")


# ---------------------------------------------------------------- scenarios

def alternate_with_hello(hello_url, gateway, paths, args, kind, label):
    """`args.rounds` rounds of wrk against hello world (the same query strings on
    `/hello`) and against the gateway, alternating: {"hello": [...], kind: [...]}."""
    hellos = [p.replace("/chat.php", "/hello") for p in paths]
    rounds = {"hello": [], kind: []}
    for _ in range(args.rounds):
        rounds["hello"].append(wrk(hello_url, hellos, args.seconds, args.connections))
        rounds[kind].append(wrk(gateway, paths, args.seconds, args.connections))
        log(f"{label}: hello {rounds['hello'][-1]['rps']:.0f}/s, {kind} {rounds[kind][-1]['rps']:.0f}/s")
    return rounds


def scenario_idle(stack, hello_url, args, results):
    """Idle polls (`messages` with past = the latest id) next to a hello-world server, alternating."""
    gateway = stack.gateways[0]

    async def setup():
        pool = AsyncPool(gateway, 32)
        session = (await start_sessions(pool, 1, "idle"))[0]
        rooms = await create_rooms(pool, session, 200, "idle")
        latest = await say_all(pool, session, rooms, "the only message")
        phones = await start_sessions(pool, args.idle_phones, "phone")
        warm = [q(cmd="messages", chatid=r, past=0) for r in rooms]
        await gather_limited(pool, warm, 32)
        pool.close()
        return [(r, l) for r, l in zip(rooms, latest) if l is not None], phones

    rooms, phones = asyncio.run(setup())
    # Each phone polls its room with its own `sessionid`, as phones do: a sign of life each time.
    polls = [q(cmd="messages", chatid=rooms[i % len(rooms)][0], past=rooms[i % len(rooms)][1], sessionid=phone)
             for i, phone in enumerate(phones)]
    results["idle_phones"] = len(phones)
    rounds = alternate_with_hello(hello_url, gateway, polls, args, "poll", "idle round")
    for kind in rounds:
        runs = rounds[kind]
        # The median round: hello world's rate swings by a third between rounds here.
        results[f"{kind}_rps"] = statistics.median(r["rps"] for r in runs)
        results[f"{kind}_rounds"] = ", ".join(f"{r['rps']:.0f}" for r in runs)
        results[f"{kind}_p50_ms"] = statistics.mean(r["p50_ms"] for r in runs)
        results[f"{kind}_p99_ms"] = statistics.mean(r["p99_ms"] for r in runs)
        results[f"{kind}_failed"] = sum(r["failed"] for r in runs)
    results["idle_poll_ratio"] = results["poll_rps"] / results["hello_rps"]


def scenario_fanout(stack, args, results):
    """Fan-out at a rate this machine sustains (`--fanout-low-rate`), then at the
    target's rate (`--fanout-rate`, last: an overload leaves a backlog behind)."""
    if args.fanout_low_rate:
        fanout_at(stack, args, results, args.fanout_low_rate, f"_at_{args.fanout_low_rate}")
    fanout_at(stack, args, results, args.fanout_rate, "")


FANOUT_ROOMS = 100
FANOUT_WARM_UP_S = 2.0  # the first seconds of posting are not measured
FANOUT_ANSWER_GRACE_S = 10.0  # a say without an answer this long after the last send counts as failed


@dataclass
class FanoutRooms:
    """The fan-out's set-up: sessions and rooms made through gateway A; the first `polled`
    rooms are followed on gateway B from their latest message id (`heads`)."""
    sessions: list
    rooms: list
    polled: list
    heads: dict


@dataclass
class FanoutRecord:
    """What one fan-out run sent and saw (times from time.monotonic())."""
    sent: dict = field(default_factory=dict)  # token → scheduled send time, polled rooms only
    seen: dict = field(default_factory=dict)  # token → time of the first poll on B that returned it
    answered_ms: list = field(default_factory=list)  # each say's own answer time, after the warm-up
    failures: int = 0


async def fanout_rooms(pool_a, pool_b, polled_count):
    sessions = await start_sessions(pool_a, 8, "fan")
    rooms = await create_rooms(pool_a, sessions[0], FANOUT_ROOMS, "fanout")
    polled = rooms[:polled_count]
    heads = {}
    for room in polled:
        answer = await pool_b.get(q(cmd="messages", chatid=room, past=0))
        heads[room] = max([i for i, _ in message_ids_and_texts(answer.body)] or [0])
    return FanoutRooms(sessions, rooms, polled, heads)


async def fanout_say(pool_a, setup, record, i, scheduled, warm_from):
    """Say number i, token `fo{i}`, in room i mod the room count."""
    room = setup.rooms[i % len(setup.rooms)]
    token = f"fo{i}"
    if room in setup.heads:
        record.sent[token] = scheduled
    answer = await pool_a.get(q(cmd="say", sessionid=setup.sessions[i % len(setup.sessions)], chatid=room,
                                msg=token))
    if not answer.ok:
        record.failures += 1
    elif scheduled >= warm_from:
        record.answered_ms.append((time.monotonic() - scheduled) * 1000)


async def post_at_rate(pool_a, setup, record, rate, seconds, t0):
    """Says at a fixed rate from t0 (each scheduled at t0 + i / rate, not after the previous answer)."""
    warm_from = t0 + FANOUT_WARM_UP_S
    tasks = []
    for i in range(int(rate * seconds)):
        scheduled = t0 + i / rate
        delay = scheduled - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.ensure_future(fanout_say(pool_a, setup, record, i, scheduled, warm_from)))
    # An overloaded stack answers 503 only after the 3 s request timeout, and
    # the backlog on 128 connections would take minutes to drain: what has
    # no answer 10 s after the last scheduled send counts as failed.
    _, pending = await asyncio.wait(tasks, timeout=FANOUT_ANSWER_GRACE_S)
    for task in pending:
        task.cancel()
    record.failures += len(pending)


async def follow_room(pool_b, room, last, interval, phase, stop, record):
    """Polls one room every `interval` seconds (offset by `phase`) from id `last`, noting when each
    token is first seen, until `stop` is set."""
    tick = time.monotonic() + phase
    while not stop.is_set():
        tick += interval
        answer = await pool_b.get(q(cmd="messages", chatid=room, past=last, limit=200))
        now = time.monotonic()
        if answer.ok:
            for message_id, text in message_ids_and_texts(answer.body):
                record.seen.setdefault(text, now)
                last = max(last, message_id)
        await asyncio.sleep(max(0, tick - time.monotonic()))


async def fanout_run(stack, rate, seconds, polled_count, interval):
    """Posts at `rate` through gateway A while pollers follow rooms on gateway B; the record of it."""
    pool_a = AsyncPool(stack.gateways[0], 128)
    pool_b = AsyncPool(stack.gateways[-1], polled_count)
    try:
        setup = await fanout_rooms(pool_a, pool_b, polled_count)
        record = FanoutRecord()
        stop = asyncio.Event()
        pollers = [asyncio.ensure_future(follow_room(pool_b, room, setup.heads[room], interval,
                                                     interval * i / polled_count, stop, record))
                   for i, room in enumerate(setup.polled)]
        await post_at_rate(pool_a, setup, record, rate, seconds, t0=time.monotonic() + 0.2)
        await asyncio.sleep(2)  # the last says' fan-out
        stop.set()
        await asyncio.gather(*pollers)
        return record
    finally:
        pool_a.close()
        pool_b.close()


def fanout_figures(record):
    """Fan-out latency: from a say's scheduled send time to the first poll on B that returned it,
    for the says after the warm-up; and the says' own answer times."""
    warm = min(record.sent.values()) + FANOUT_WARM_UP_S if record.sent else 0
    measured = {t: s for t, s in record.sent.items() if s >= warm}
    latencies = [(record.seen[t] - s) * 1000 for t, s in measured.items() if t in record.seen]

    def pct(values, p):
        return percentile(values, p) if values else float("nan")
    return {
        "fanout_p50_ms": pct(latencies, 50), "fanout_p99_ms": pct(latencies, 99),
        "fanout_max_ms": pct(latencies, 100), "fanout_measured": len(latencies),
        "fanout_missing": len(measured) - len(latencies), "fanout_say_failures": record.failures,
        # The say's own answer time (send → <success> on gateway A): the part of
        # the fan-out latency spent before the event leaves messaging.
        "fanout_say_p50_ms": pct(record.answered_ms, 50), "fanout_say_p99_ms": pct(record.answered_ms, 99),
    }


def fanout_at(stack, args, results, rate, suffix):
    """Posts at a fixed rate through gateway A; pollers on gateway B; time from the say
    request (its scheduled send time) to the first poll on B that returns it."""
    record = asyncio.run(fanout_run(stack, rate, args.seconds * 2, args.fanout_polled, args.poll_interval_ms / 1000))
    figures = fanout_figures(record)
    log(f"fan-out at {rate}/s: p50 {fmt(figures['fanout_p50_ms'])} ms, p99 {fmt(figures['fanout_p99_ms'])} ms, "
        f"{figures['fanout_measured']} measured, {figures['fanout_missing']} unseen, "
        f"{figures['fanout_say_failures']} says failed; the says' own answers "
        f"p50 {fmt(figures['fanout_say_p50_ms'])} ms, p99 {fmt(figures['fanout_say_p99_ms'])} ms")
    results.update({name + suffix: value for name, value in figures.items()})


def scenario_say(stack, args, results):
    """Acknowledged `say` per second with one messaging instance, then two."""
    gateway = stack.gateways[0]

    async def setup():
        pool = AsyncPool(gateway, 64)
        sessions = await start_sessions(pool, 64, "say")
        rooms = await create_rooms(pool, sessions[0], 256, "say")
        await say_all(pool, sessions[0], rooms, "opening the log")
        pool.close()
        return sessions, rooms

    sessions, rooms = asyncio.run(setup())
    rnd = random.Random(7)
    # Texts unique per round: the same session, room and text within 15 s is a
    # phone's repeat, answered without storing (docs/protocol.md, "say").
    def say_paths(round_):
        return [q(cmd="say", sessionid=rnd.choice(sessions), chatid=rnd.choice(rooms), msg=f"throughput {round_} {i}")
                for i in range(20000)]
    paths = say_paths(0)
    second = "messaging-2" if len(stack.messaging) > 1 else None
    if not second:
        one = wrk(gateway, paths, args.seconds * 2, 64)
        results.update({"say_rps_1": one["rps"], "say_p99_ms_1": one["p99_ms"], "say_failed_1": one["failed"]})
        return

    # Rounds in the order 1, 2, 2, 1 instances: Tansu's in-memory store lists every
    # batch of a partition on each fetch, so the broker slows as records pile up
    # during the scenario; the symmetric order cancels that drift from the ratio.
    def with_instances(count):
        if count == 1:
            stack.command("stop", second)
            wait_partitions(stack.messaging[0], 1)
        else:
            stack.command("start", second)
            wait_ready(stack.messaging[1])
            wait_partitions(stack.messaging[1], 2, peer=stack.messaging[0])

    rounds = {1: [], 2: []}
    current = 2
    for round_, count in enumerate((1, 2, 2, 1)):
        if count != current:
            with_instances(count)
            current = count
        outcome = wrk(gateway, say_paths(round_ + 1), args.seconds, 64)
        log(f"say with {count} messaging instance{'s' if count > 1 else ''}: {outcome['rps']:.0f}/s")
        rounds[count].append(outcome)
    if current != 2:
        with_instances(2)  # leave the stack as it was
    for count in (1, 2):
        runs = rounds[count]
        results.update({
            f"say_rps_{count}": sum(r["rps"] for r in runs) / len(runs),
            f"say_p99_ms_{count}": max(r["p99_ms"] for r in runs),
            f"say_failed_{count}": sum(r["failed"] for r in runs),
            f"say_rounds_{count}": ", ".join(f"{r['rps']:.0f}" for r in runs),
        })
    results["say_ratio"] = results["say_rps_2"] / results["say_rps_1"]


def wait_ready(url, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            get(url + "/ready", timeout=2)
            return
        except Exception:
            time.sleep(0.5)
    raise RuntimeError(f"{url} not ready")


def wait_partitions(url, members, peer=None, timeout=60):
    """Until the messaging commands' partitions are shared by `members` instances (this one holds some)."""
    import json
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        held = len(json.loads(get(url + "/status"))["assignedPartitions"].get("geochat.messaging.commands", []))
        total = held
        if peer:
            total += len(json.loads(get(peer + "/status"))["assignedPartitions"].get("geochat.messaging.commands", []))
        if held > 0 and (members == 1 and held >= 8 or members == 2 and total >= 8 and held < 8):
            time.sleep(1)
            return
        time.sleep(0.5)
    raise RuntimeError(f"partitions not rebalanced for {members} members")


def ensure_million_rooms(stack, count):
    have = int(stack.sql("SELECT count(*) FROM rooms.rooms WHERE topic LIKE 'bench room %'")[0][0])
    if have >= count:
        return 0.0
    log(f"inserting {count - have} rooms by SQL")
    started = time.monotonic()
    stack.sql(f"""
        SELECT setseed(0.42);
        WITH cities AS (SELECT n, random() AS cx, 0.25 + 0.45 * random() AS cy FROM generate_series(0, 199) n)
        INSERT INTO rooms.rooms (x, y, z, topic, last_visited_at)
        SELECT
          CASE WHEN g % 10 < 7 THEN least(1, greatest(0, c.cx + (random() + random() + random() - 1.5) * 0.01))
               ELSE random() END,
          CASE WHEN g % 10 < 7 THEN least(1, greatest(0, c.cy + (random() + random() + random() - 1.5) * 0.01))
               ELSE random() END,
          least(17, floor(sqrt(random()) * 18))::smallint,
          'bench room ' || g,
          now() - random() * interval '20 days'
        FROM generate_series({have + 1}, {count}) g JOIN cities c ON c.n = g % 200;
        ANALYZE rooms.rooms;""")
    return time.monotonic() - started


def region_paths(stack, count, seed=11):
    """Boxes as phones ask for them: a screen at zoom n spans ~0.625/2^n of the world's
    width (portrait, 1.6 times as tall), zoom range [n-3, n+3], mostly where rooms are."""
    centers = [(float(x), float(y)) for x, y in
               stack.sql("SELECT x, y FROM rooms.rooms ORDER BY md5(id::text) LIMIT 2000")]
    rnd = random.Random(seed)
    paths = []
    for _ in range(count):
        n = rnd.randint(3, 16)
        cx, cy = rnd.choice(centers) if rnd.random() < 0.8 else (rnd.random(), rnd.random())
        w = 0.625 / 2 ** n
        h = 1.6 * w
        paths.append(q(cmd="chats", lon1=f"{max(0, cx - w / 2):.6f}", lat1=f"{max(0, cy - h / 2):.6f}",
                       lon2=f"{min(1, cx + w / 2):.6f}", lat2=f"{min(1, cy + h / 2):.6f}",
                       minz=max(0, n - 3), maxz=min(17, n + 3)))
    return paths


def restart_gateways_timed(stack):
    """Restarts every gateway (its region index loads the rooms written by SQL); the
    slowest stop-to-ready time in seconds and the last gateway's resident memory after."""
    slowest = 0.0
    for i, url in enumerate(stack.gateways, 1):
        started = time.monotonic()
        stack.command("stop", f"gateway-{i}")
        stack.command("start", f"gateway-{i}")
        wait_ready(url, timeout=300)
        slowest = max(slowest, time.monotonic() - started)
    time.sleep(2)
    return slowest, rss_mb(stack.pid(f"gateway-{len(stack.gateways)}"))


def scenario_chats(stack, hello_url, args, results):
    gateway = stack.gateways[0]
    # 10,000 rooms: the rate next to hello world's at the same wrk settings.
    ensure_million_rooms(stack, 10_000)
    results["chats_10k_ready_s"], _ = restart_gateways_timed(stack)
    paths = region_paths(stack, 20000)
    rounds = alternate_with_hello(hello_url, gateway, paths, args, "chats", "chats round (10k rooms)")
    for kind in rounds:
        results[f"chats_10k_{kind}_rps"] = statistics.median(r["rps"] for r in rounds[kind])
        results[f"chats_10k_{kind}_rounds"] = ", ".join(f"{r['rps']:.0f}" for r in rounds[kind])
    results["chats_10k_p99_ms"] = statistics.mean(r["p99_ms"] for r in rounds["chats"])
    results["chats_10k_ratio"] = results["chats_10k_chats_rps"] / results["chats_10k_hello_rps"]

    results["chats_insert_s"] = ensure_million_rooms(stack, args.rooms)
    results["chats_rooms"] = int(stack.sql("SELECT count(*) FROM rooms.rooms")[0][0])
    results["chats_1m_ready_s"], results["chats_1m_gateway_rss_mb"] = restart_gateways_timed(stack)
    log(f"gateways restarted with {results['chats_rooms']} rooms: ready in {results['chats_1m_ready_s']:.1f}s, "
        f"{results['chats_1m_gateway_rss_mb']:.0f} MB")
    paths = region_paths(stack, 20000)
    wrk(gateway, paths[:2000], 3, 16)  # warm up
    before = [scrape(u) for u in stack.rooms]
    run = wrk(gateway, paths, args.seconds * 2, 16)
    after = [scrape(u) for u in stack.rooms]
    asked = sum(v for (name, labels), v in after[0].items() if name == "geochat_commands_total" and 'command="region"' in labels) \
        - sum(v for (name, labels), v in before[0].items() if name == "geochat_commands_total" and 'command="region"' in labels)
    results.update({"chats_1m_rps": run["rps"], "chats_1m_p50_ms": run["p50_ms"], "chats_1m_p99_ms": run["p99_ms"],
                    "chats_failed": run["failed"], "chats_rooms_service_asked": asked})


def scenario_memory(stack, args, results):
    """Gateway B's resident memory holding many sessions and active rooms with their recent messages."""
    gw_b = stack.gateways[-1]
    instance = f"gateway-{len(stack.gateways)}"
    pid = stack.pid(instance)
    results["gateway_rss_start_mb"] = results.get("gateway_rss_start_mb", rss_mb(pid))
    ensure_million_rooms(stack, max(args.active_rooms * 2, 20000))
    sessions_target, rooms_target = args.sessions, args.active_rooms

    async def starts():
        pools = [AsyncPool(url, 64) for url in stack.gateways]
        started = time.monotonic()
        made, i, batch = 0, 0, 2000
        while made < sessions_target and time.monotonic() - started < args.start_budget_s:
            pool = pools[(i // batch) % len(pools)]
            ids = await start_sessions(pool, min(batch, sessions_target - made), f"mem{i}x", concurrency=64)
            made += len(ids)
            i += batch
        for pool in pools:
            pool.close()
        return made, time.monotonic() - started

    made, took = asyncio.run(starts())
    results["memory_sessions_started"] = made
    results["start_rps"] = made / took
    log(f"{made} sessions started in {took:.0f}s")

    rows = stack.sql(f"""SELECT id FROM rooms.rooms WHERE topic LIKE 'bench room %'
                         ORDER BY id LIMIT {rooms_target}""")
    room_ids = [int(r[0]) for r in rows]
    lo, hi = room_ids[0], room_ids[-1]
    per_room = args.messages_per_room
    stack.sql(f"""
        INSERT INTO messaging.room_logs (room_id, last_id)
        SELECT id, {per_room} FROM rooms.rooms WHERE topic LIKE 'bench room %' AND id BETWEEN {lo} AND {hi}
        ON CONFLICT (room_id) DO NOTHING;
        INSERT INTO messaging.messages (room_id, id, nick, text, added_at, idempotency_key)
        SELECT r.id, m, 'user' || (m % 17),
               'message ' || m || ' in a busy room: ' || repeat('words ', 3 + (m % 8)),
               now() - (({per_room} - m) * interval '1 minute'), 'bench-' || r.id || '-' || m
        FROM rooms.rooms r CROSS JOIN generate_series(1, {per_room}) m
        WHERE r.topic LIKE 'bench room %' AND r.id BETWEEN {lo} AND {hi}
        ON CONFLICT DO NOTHING;""")

    async def activate():
        pool = AsyncPool(gw_b, 64)
        answers = await gather_limited(pool, [q(cmd="messages", chatid=r, past=0) for r in room_ids], 64)
        pool.close()
        return sum(1 for answer in answers if answer.ok)

    active = asyncio.run(activate())
    time.sleep(3)
    metrics = scrape(stack.operators(gw_b))
    results.update({
        "gateway_rss_mb": rss_mb(pid), "memory_rooms_active": active,
        "memory_sessions_known": int(metrics.get(("geochat_gateway_sessions", ""), -1)),
        "memory_rooms_loaded": int(metrics.get(("geochat_gateway_rooms_loaded", ""), -1)),
        "memory_rooms_indexed": int(metrics.get(("geochat_gateway_rooms_indexed", ""), -1)),
    })


# ---------------------------------------------------------------- cost per phone

def cluster_counters(stack):
    """Kafka records and bytes written by topic, and PostgreSQL statements, summed over every instance."""
    records, written, statements = {}, {}, 0.0
    for url in stack.gateways + stack.messaging + stack.rooms + stack.env["SESSION_URLS"].split() \
            + stack.env["EXPIRY_URLS"].split():
        for (name, labels), value in scrape(stack.operators(url)).items():
            topic = re.search(r'topic="([^"]*)"', labels)
            if name == "geochat_kafka_produced_total" and topic:
                records[topic.group(1)] = records.get(topic.group(1), 0) + value
            elif name == "geochat_kafka_produced_bytes_total" and topic:
                written[topic.group(1)] = written.get(topic.group(1), 0) + value
            elif name == "geochat_pg_query_duration_seconds_count":
                statements += value
    return records, written, statements


def row_writes(stack):
    """Rows inserted, updated and deleted in the services' tables so far (PostgreSQL's own counters)."""
    time.sleep(1.5)  # the statistics reach the view within a second of a transaction's end
    return float(stack.sql("SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables")[0][0])


class CostWindow:
    """What the cluster wrote between `open` and `close`."""

    def __init__(self, stack):
        self.stack = stack
        self.records, self.bytes, self.statements = cluster_counters(stack)
        self.rows = row_writes(stack)

    def close(self):
        records, written, statements = cluster_counters(self.stack)
        return {
            "records": {t: records[t] - self.records.get(t, 0) for t in records if records[t] - self.records.get(t, 0)},
            "bytes": {t: written[t] - self.bytes.get(t, 0) for t in written if written[t] - self.bytes.get(t, 0)},
            "statements": statements - self.statements,
            "rows": row_writes(self.stack) - self.rows,
        }


def per(window, units):
    return {"records": {t: v / units for t, v in window["records"].items()},
            "bytes": {t: v / units for t, v in window["bytes"].items()},
            "statements": window["statements"] / units, "rows": window["rows"] / units}


def scenario_cost(stack, args, results):
    """N idle phones, each in a room, each polling once a second with its sessionid
    through alternating gateways for `--cost-seconds`: what one phone-second costs
    Kafka and PostgreSQL. Then the same per `chats`, `say` and `start`."""
    count, seconds = args.cost_phones, args.cost_seconds
    gateways = stack.gateways

    async def setup():
        pools = [AsyncPool(url, 32) for url in gateways]
        owner = (await start_sessions(pools[0], 1, "costowner"))[0]
        rooms = await create_rooms(pools[0], owner, max(1, count // 10), "cost")
        latest = await say_all(pools[0], owner, rooms, "the only message")
        phones = await start_sessions(pools[0], count, "cost")
        joins = [q(cmd="join", sessionid=p, chatid=rooms[i % len(rooms)]) for i, p in enumerate(phones)]
        await gather_limited(pools[1 % len(pools)], joins, 32)
        for pool in pools:
            pool.close()
        return rooms, latest, phones

    rooms, latest, phones = asyncio.run(setup())
    time.sleep(3)  # the set-up's own events and presence settle

    async def poll_for(seconds):
        pools = [AsyncPool(url, 64) for url in gateways]
        sent, failed, late = 0, 0, 0
        started = time.monotonic()
        slot = 1.0 / len(phones)

        async def one(i, phone):
            nonlocal sent, failed
            room = i % len(rooms)
            answer = await pools[i % len(pools)].get(q(cmd="messages", chatid=rooms[room], past=latest[room] or 0,
                                                       sessionid=phone))
            sent += 1
            failed += 0 if answer.ok else 1

        tasks = set()
        tick = 0
        while time.monotonic() - started < seconds:
            # Phone i polls at second s + i/N: an even spread, once a second each.
            for i, phone in enumerate(phones):
                due = started + tick + i * slot
                delay = due - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                elif delay < -1:
                    late += 1
                task = asyncio.ensure_future(one(i, phone))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            tick += 1
        await asyncio.gather(*tasks)
        for pool in pools:
            pool.close()
        return sent, failed, late, time.monotonic() - started

    window = CostWindow(stack)
    sent, failed, late, took = asyncio.run(poll_for(seconds))
    idle = window.close()
    phone_seconds = len(phones) * took
    results["cost_idle"] = per(idle, phone_seconds)
    results["cost_idle_meta"] = {"phones": len(phones), "seconds": took, "polls": sent, "failed": failed,
                                 "late": late, "poll_rate": sent / took}
    log(f"cost: {sent} polls in {took:.0f}s ({failed} failed, {late} late) from {len(phones)} phones")

    # Per request of other kinds: a batch of each, measured alone.
    async def batch(paths, pool_url):
        pool = AsyncPool(pool_url, 16)
        answers = await gather_limited(pool, paths, 16)
        pool.close()
        return sum(1 for a in answers if a.ok)

    region = region_paths(stack, 500)
    window = CostWindow(stack)
    ok = asyncio.run(batch(region, gateways[0]))
    results["cost_chats"] = per(window.close(), max(ok, 1))
    window = CostWindow(stack)
    says = [q(cmd="say", sessionid=phones[i], chatid=rooms[i % len(rooms)], msg=f"cost {i}") for i in range(300)]
    ok = asyncio.run(batch(says, gateways[0]))
    results["cost_say"] = per(window.close(), max(ok, 1))
    window = CostWindow(stack)
    ok = asyncio.run(batch([q(cmd="start", nick=f"coststart{i}") for i in range(300)], gateways[0]))
    results["cost_start"] = per(window.close(), max(ok, 1))


def cost_table(results):
    """The cost model's rows (docs/capacity.md): per idle phone-second and per request."""
    lines = ["| per | Kafka records (by topic) | Kafka bytes (by topic) | Kafka bytes, all | PostgreSQL statements | "
             "PostgreSQL row writes |", "| --- | --- | --- | --- | --- | --- |"]
    for key, label in (("cost_idle", "idle phone-second"), ("cost_chats", "`chats`"), ("cost_say", "`say`"),
                       ("cost_start", "`start`")):
        c = results.get(key)
        if not c:
            continue
        topics = lambda d: ", ".join(f"{t.replace('geochat.', '')} {v:.3g}" for t, v in sorted(d.items())) or "0"
        lines.append(f"| {label} | {topics(c['records'])} | {topics(c['bytes'])} | {sum(c['bytes'].values()):.3g} | "
                     f"{c['statements']:.3g} | {c['rows']:.3g} |")
    return lines


def write_capacity(results, meta):
    """The measured part of docs/capacity.md, between its markers."""
    path = os.path.join(ROOT, "docs", "capacity.md")
    m = results.get("cost_idle_meta", {})
    generated = "\n".join([
        "<!-- cost:begin (written by deploy/bench.sh --only cost; edit outside these markers) -->",
        f"Measured {meta['when']} on {meta['machine']} ({meta['build']}), command `{meta['command']}`: "
        f"{m.get('phones')} phones polling once a second each with its `sessionid` through "
        f"{len(results.get('_gateways', [])) or 2} gateways for {m.get('seconds', 0):.0f} s "
        f"({m.get('polls')} polls, {m.get('poll_rate', 0):.0f}/s, {m.get('failed')} failed, {m.get('late')} sent "
        "more than a second late); then 500 `chats`, 300 `say`, 300 `start`, each batch alone.", "",
        *cost_table(results), "",
        "<!-- cost:end -->"])
    text = open(path).read()
    text = re.sub(r"<!-- cost:begin.*?<!-- cost:end -->", lambda _: generated, text, flags=re.S)
    with open(path, "w") as f:
        f.write(text)


# ---------------------------------------------------------------- report

HEADLINES = ["idle_poll_ratio", "idle_poll_rps", "hello_rps", "fanout_p99_ms", "chats_1m_p99_ms", "say_rps_1",
             "say_rps_2", "gateway_rss_mb"]


def fmt(value, digits=1):
    if isinstance(value, float):
        return f"{value:.{digits}f}" if value == value else "n/a"
    return str(value)


def report(results, args, meta):
    r = results.get
    low = f"_at_{args.fanout_low_rate}"
    rows = [
        (f"idle polls (`messages`, past = latest, {r('idle_phones')} phones' `sessionid`s)", f"{fmt(r('poll_rps'), 0)} req/s (rounds {r('poll_rounds')}), "
         f"p50 {fmt(r('poll_p50_ms'), 2)} ms, p99 {fmt(r('poll_p99_ms'), 2)} ms",
         f"hello world {fmt(r('hello_rps'), 0)} req/s (rounds {r('hello_rounds')}), p50 "
         f"{fmt(r('hello_p50_ms'), 2)} ms, p99 {fmt(r('hello_p99_ms'), 2)} ms",
         f"≥ 75 % of hello world: {fmt(100 * r('idle_poll_ratio', float('nan')), 0)} %"),
        ("fan-out: say on A → first poll on B", f"p50 {fmt(r('fanout_p50_ms'))} ms, p99 {fmt(r('fanout_p99_ms'))} ms, "
         f"max {fmt(r('fanout_max_ms'))} ms ({r('fanout_measured')} messages, {r('fanout_missing')} unseen, "
         f"{r('fanout_say_failures')} says failed; the says' own answers p50 {fmt(r('fanout_say_p50_ms'))} ms, "
         f"p99 {fmt(r('fanout_say_p99_ms'))} ms)", f"{args.fanout_rate}/s over 100 rooms, {args.fanout_polled} rooms "
         f"polled every {args.poll_interval_ms} ms", "p99 ≤ 25 ms"),
        (f"fan-out at {args.fanout_low_rate}/s (what this machine sustains)",
         f"p50 {fmt(r(f'fanout_p50_ms{low}'))} ms, p99 {fmt(r(f'fanout_p99_ms{low}'))} ms, "
         f"max {fmt(r(f'fanout_max_ms{low}'))} ms ({r(f'fanout_measured{low}')} messages, "
         f"{r(f'fanout_missing{low}')} unseen, {r(f'fanout_say_failures{low}')} says failed; the says' own "
         f"answers p50 {fmt(r(f'fanout_say_p50_ms{low}'))} ms, p99 {fmt(r(f'fanout_say_p99_ms{low}'))} ms)",
         "same rooms and pollers", "(context for the row above)"),
        ("region queries (`chats`, 10,000 rooms)", f"{fmt(r('chats_10k_chats_rps'), 0)} req/s (rounds "
         f"{r('chats_10k_chats_rounds')}), p99 {fmt(r('chats_10k_p99_ms'), 2)} ms",
         f"hello world {fmt(r('chats_10k_hello_rps'), 0)} req/s (rounds {r('chats_10k_hello_rounds')})",
         f"≥ 50 % of hello world: {fmt(100 * r('chats_10k_ratio', float('nan')), 0)} %"),
        (f"region queries (`chats`, {fmt(r('chats_rooms'))} rooms)", f"{fmt(r('chats_1m_rps'), 0)} req/s, p50 "
         f"{fmt(r('chats_1m_p50_ms'), 2)} ms, p99 {fmt(r('chats_1m_p99_ms'), 2)} ms (16 connections)",
         f"gateways restarted after the bulk insert: ready in {fmt(r('chats_1m_ready_s'))} s, "
         f"{fmt(r('chats_1m_gateway_rss_mb'))} MB RSS; region commands the rooms service answered meanwhile: "
         f"{fmt(r('chats_rooms_service_asked'), 0)}", "p99 ≤ 5 ms; ready ≤ 30 s"),
        ("post throughput (acknowledged `say`)", f"1 messaging: {fmt(r('say_rps_1'), 0)}/s (rounds "
         f"{r('say_rounds_1')}; p99 {fmt(r('say_p99_ms_1'))} ms); 2 messaging: {fmt(r('say_rps_2'), 0)}/s (rounds "
         f"{r('say_rounds_2')}; p99 {fmt(r('say_p99_ms_2'))} ms)",
         f"ratio 2/1: {fmt(r('say_ratio'), 2)}", "the second instance adds capacity"),
        ("gateway memory", f"{fmt(r('gateway_rss_mb'))} MB RSS with {r('memory_sessions_known')} sessions, "
         f"{r('memory_rooms_loaded')} rooms loaded ({args.messages_per_room} messages each), "
         f"{r('memory_rooms_indexed')} rooms in the region index",
         f"same gateway before the scenarios: {fmt(r('gateway_rss_start_mb'))} MB; sessions started at "
         f"{fmt(r('start_rps'), 0)}/s", "≤ 300 MB"),
    ]
    table = ["| scenario | result | reference in the same run | target |", "| --- | --- | --- | --- |"]
    table += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    values = {"idle_poll_rps": r("poll_rps"), "hello_rps": r("hello_rps")}
    lines = [f"{name}: {fmt(values.get(name, r(name)), 3 if name == 'idle_poll_ratio' else 1)}" for name in HEADLINES]
    plans = []
    for path, plan in r("_plans", []):
        plans.append(f"`{path}`\n\n```\n" + "\n".join(plan) + "\n```")
    return table, lines, plans


def missing(value):
    return value is None or value != value  # None or NaN


def targets(results, args, when):
    """The "Where the targets stand" table: each target's figure from this run and a
    verdict. The verdict is met or missed only when the run measured the target's
    own conditions; otherwise "not measured" (no projection)."""
    r = results.get
    rows = []

    ratio = r("idle_poll_ratio")
    if missing(ratio):
        rows.append(("idle polls ≥ 75 % of hello world", "—", "not measured"))
    else:
        rows.append(("idle polls ≥ 75 % of hello world",
                     f"{ratio:.2f} ({fmt(r('poll_rps'), 0)} vs {fmt(r('hello_rps'), 0)} req/s, median of "
                     f"{args.rounds} alternating rounds)", "**met**" if ratio >= 0.75 else "**missed**"))

    target = "fan-out p99 ≤ 25 ms at 1,000 posts/s"
    p99, measured = r("fanout_p99_ms"), r("fanout_measured") or 0
    low = r(f"fanout_p99_ms_at_{args.fanout_low_rate}")
    context = "" if missing(low) else f"; at {args.fanout_low_rate}/s (context, not the target): p99 {fmt(low)} ms"
    if args.fanout_rate < 1000:
        rows.append((target, f"run at {args.fanout_rate}/s{context}", "not measured (rate below the target's)"))
    elif missing(p99) or measured == 0:
        rows.append((target, f"no message polled{context}", "not measured"))
    else:
        lost = (r("fanout_missing") or 0) + (r("fanout_say_failures") or 0)
        met = p99 <= 25 and lost == 0
        rows.append((target, f"p99 {fmt(p99)} ms over {measured} messages ({r('fanout_missing')} unseen, "
                     f"{r('fanout_say_failures')} says failed){context}", "**met**" if met else "**missed**"))

    target = "region queries p99 ≤ 5 ms over 1,000,000 rooms"
    p99, rooms = r("chats_1m_p99_ms"), r("chats_rooms") or 0
    if missing(p99):
        rows.append((target, "—", "not measured"))
    elif rooms < 1_000_000:
        rows.append((target, f"p99 {fmt(p99, 2)} ms over {rooms} rooms", "not measured (fewer rooms than the target's)"))
    else:
        rows.append((target, f"p99 {fmt(p99, 2)} ms, p50 {fmt(r('chats_1m_p50_ms'), 2)} ms at "
                     f"{fmt(r('chats_1m_rps'), 0)} req/s (16 connections), {rooms} rooms",
                     "**met**" if p99 <= 5 else "**missed**"))

    target = "region queries ≥ 50 % of hello world (10,000 rooms, same wrk settings)"
    ratio = r("chats_10k_ratio")
    if missing(ratio):
        rows.append((target, "—", "not measured"))
    else:
        rows.append((target, f"{ratio:.2f} ({fmt(r('chats_10k_chats_rps'), 0)} vs {fmt(r('chats_10k_hello_rps'), 0)} "
                     f"req/s, median of {args.rounds} alternating rounds)", "**met**" if ratio >= 0.5 else "**missed**"))

    target = "a restarted gateway ready in ≤ 30 s with 1,000,000 rooms"
    ready, rooms = r("chats_1m_ready_s"), r("chats_rooms") or 0
    if missing(ready):
        rows.append((target, "—", "not measured"))
    else:
        rows.append((target, f"{fmt(ready)} s (stop, start, ready) with {rooms} rooms; {fmt(r('chats_1m_gateway_rss_mb'))} "
                     "MB RSS after the load", "**met**" if ready <= 30 and rooms >= 1_000_000
                     else ("**missed**" if ready > 30 else "not measured (fewer rooms than the target's)")))

    idle = r("cost_idle")
    target = "per idle phone-second ≤ 3 bytes to Kafka and ≤ 0.005 PostgreSQL row writes"
    if not idle:
        rows.append((target, "—", "not measured"))
    else:
        written = sum(idle["bytes"].values())
        meta = r("cost_idle_meta")
        rows.append((target, f"{written:.2f} bytes, {idle['rows']:.4f} row writes ({meta['phones']} phones, "
                     f"{meta['seconds']:.0f} s; docs/capacity.md)",
                     "**met**" if written <= 3 and idle["rows"] <= 0.005 else "**missed**"))

    target = "post throughput: a second messaging instance adds capacity"
    ratio = r("say_ratio")
    if missing(ratio):
        rows.append((target, "—", "not measured"))
    else:
        rows.append((target, f"1 instance {fmt(r('say_rps_1'), 0)}/s, 2 instances {fmt(r('say_rps_2'), 0)}/s "
                     f"(ratio {ratio:.2f})", "**met**" if ratio > 1 else "**missed**"))

    def memory_row(target, limit_mb, what, reached):
        """A memory target's row: met or missed only at the target's load; above
        the limit below that load is missed all the same."""
        rss = r("gateway_rss_mb")
        if missing(rss):
            return (target, "—", "not measured")
        figure = f"{fmt(rss)} MB RSS with {what}"
        if reached:
            return (target, figure, "**met**" if rss <= limit_mb else "**missed**")
        if rss > limit_mb:
            return (target, figure + " (below the target's load)", "**missed**")
        return (target, figure, "not measured (the run did not reach the target's load)")

    sessions, loaded = r("memory_sessions_known") or 0, r("memory_rooms_loaded") or 0
    indexed = r("memory_rooms_indexed") or 0
    rows.append(memory_row("gateway memory ≤ 300 MB (100,000 sessions, 10,000 rooms)", 300,
                           f"{sessions} sessions and {loaded} rooms loaded", sessions >= 100_000 and loaded >= 10_000))
    # Issue 12's: the region index of a million rooms beside 100,000 sessions
    # (the memory scenario after the chats one, whose gateways indexed the million).
    rows.append(memory_row("gateway memory ≤ 400 MB (1,000,000 rooms indexed, 100,000 sessions)", 400,
                           f"{sessions} sessions and {indexed} rooms indexed",
                           sessions >= 100_000 and indexed >= 1_000_000))

    table = [f"Run of {when} (the \"Latest run\" section below). A verdict is met or missed only when the "
             "run measured the target's own conditions; otherwise it is \"not measured\".", "",
             "| target | figure | verdict |", "| --- | --- | --- |"]
    table += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return table


def write_doc(table, lines, plans, meta):
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    generated = "\n".join([
        "<!-- bench:begin (written by deploy/bench.sh; edit outside these markers) -->",
        f"## Latest run: {meta['when']}", "",
        f"Machine: {meta['machine']}. Build: {meta['build']}. Load while it ran: {meta['load']}.", "",
        f"Command: `{meta['command']}`", "",
        *table, "", *[f"Scenario failed: {f}" for f in meta.get("failed", [])], "",
        "Headline figures:", "", "```", *lines, "```", "",
        "Region query plans (EXPLAIN ANALYZE of three of the boxes asked, as the rooms service queries):", "",
        *plans, "",
        "<!-- bench:end -->"])
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n\n"
    if "<!-- bench-targets:begin" in text and meta.get("targets"):
        verdicts = "\n".join(["<!-- bench-targets:begin (written by deploy/bench.sh; edit outside these markers) -->",
                              *meta["targets"], "<!-- bench-targets:end -->"])
        text = replace_marked(text, "bench-targets", verdicts)
    with open(path, "w") as f:
        f.write(replace_marked(text, "bench", generated))


def replace_marked(text, name, block, heading=""):
    """`text` with what stands between `<!-- NAME:begin` and `<!-- NAME:end -->` replaced by `block`
    (which carries both markers), or with `block` appended under `heading` when the markers are not there."""
    if f"<!-- {name}:begin" in text:
        return re.sub(rf"<!-- {re.escape(name)}:begin.*?<!-- {re.escape(name)}:end -->", lambda _: block, text,
                      flags=re.S)
    return text.rstrip() + "\n\n" + heading + block + "\n"


def add_run_block(name, heading, block):
    """Puts `block` (lines) first under `<!-- NAME:runs -->` in docs/benchmarks.md, newest first; the
    section (`## HEADING`) and its marker are appended the first time."""
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    text = open(path).read()
    marker = f"<!-- {name}:runs -->"
    if marker not in text:
        text = text.rstrip() + f"\n\n## {heading}\n\nEach run adds its block here, newest first.\n\n" + marker + "\n"
    with open(path, "w") as f:
        f.write(text.replace(marker, marker + "\n\n" + "\n".join(block).rstrip() + "\n", 1))


def machine_facts():
    cores = os.cpu_count()
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((int(l.split()[1]) // 1024 // 1024 for l in open("/proc/meminfo") if l.startswith("MemTotal")), 0)
    return f"{cores} cores ({model}), {mem} GiB"


def load_facts():
    load = open("/proc/loadavg").read().split()[:3]
    builds = subprocess.run(["pgrep", "-c", "swift-frontend"], capture_output=True, text=True).stdout.strip() or "0"
    return f"load average {' / '.join(load)}, {builds} swift-frontend processes of other builds running"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stack-env", required=True)
    parser.add_argument("--hello-url", required=True)
    parser.add_argument("--only", default=",".join(SCENARIOS))
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--fanout-rate", type=int, default=1000)
    parser.add_argument("--fanout-low-rate", type=int, default=200, help="also measured first; 0: skip")
    parser.add_argument("--fanout-polled", type=int, default=20)
    parser.add_argument("--poll-interval-ms", type=int, default=10)
    parser.add_argument("--rooms", type=int, default=1_000_000)
    parser.add_argument("--idle-phones", type=int, default=2000)
    parser.add_argument("--cost-phones", type=int, default=2000)
    parser.add_argument("--cost-seconds", type=int, default=60)
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--active-rooms", type=int, default=10_000)
    parser.add_argument("--messages-per-room", type=int, default=50)
    parser.add_argument("--start-budget-s", type=int, default=240)
    parser.add_argument("--no-doc", action="store_true")
    parser.add_argument("--keep-broker", action="store_true", help="no broker restart between scenarios")
    parser.add_argument("--command", default="bash deploy/bench.sh")
    parser.add_argument("--build", default="release build")
    args = parser.parse_args()

    stack = Stack(args.stack_env, sql_timeout=BULK_SQL_TIMEOUT_S)
    results = {}
    meta = {"when": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine_facts(), "command": args.command, "build": args.build}
    load_before = load_facts()
    results["gateway_rss_start_mb"] = rss_mb(stack.pid(f"gateway-{len(stack.gateways)}"))
    only = args.only.split(",")
    only_ordered = [name for name in SCENARIOS if name in only]
    for name in SCENARIOS:
        if name not in only:
            continue
        log(f"scenario {name}")
        started = time.monotonic()
        try:
            if name != only_ordered[0] and not args.keep_broker:
                fresh_broker(stack)
            if name == "idle":
                scenario_idle(stack, args.hello_url, args, results)
            elif name == "fanout":
                scenario_fanout(stack, args, results)
            elif name == "say":
                scenario_say(stack, args, results)
            elif name == "chats":
                scenario_chats(stack, args.hello_url, args, results)
            elif name == "cost":
                scenario_cost(stack, args, results)
            elif name == "memory":
                scenario_memory(stack, args, results)
        except Exception as error:  # one failed scenario leaves the others' figures
            log(f"scenario {name} FAILED: {error!r}")
            results.setdefault("_failed", []).append(f"{name}: {error}")
        log(f"scenario {name} took {time.monotonic() - started:.0f}s; figures so far: "
            + ", ".join(f"{k}={fmt(v, 2)}" for k, v in results.items() if not k.startswith("_")))
    meta["load"] = f"at start {load_before}; at the end {load_facts()}"
    meta["failed"] = results.get("_failed", [])
    table, lines, plans = report(results, args, meta)
    meta["targets"] = targets(results, args, meta["when"])
    print("\n".join(table))
    print()
    print("\n".join(meta["targets"][2:]))
    print()
    print("\n".join(lines))
    if results.get("cost_idle"):
        print("\n".join(cost_table(results)))
    if not args.no_doc:
        write_doc(table, lines, plans, meta)
        log("docs/benchmarks.md updated")
        if results.get("cost_idle"):
            write_capacity(results, meta)
            log("docs/capacity.md updated")


if __name__ == "__main__":
    main()
