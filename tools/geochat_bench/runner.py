"""What the benchmarks share: wrk with a file of request paths (paths.lua), the legacy
protocol's set-up helpers (sessions, rooms, says), the broker restart between scenarios,
metrics scraping, gateway restarts and readiness, the million bench rooms inserted by SQL,
the facts of the machine a run states, and what every run's main does (its common options,
its scenarios in order, its block printed and added to the docs). Every scenario module
imports from here; the docs they write go through doc_sections."""
import argparse
import asyncio
import datetime
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request

from geochat_support.protocol import AsyncPool, chat_path, gather_limited, room_id_in, session_id_in, success_id_in

from . import doc_sections

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
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


# ---------------------------------------------------------------- wrk

def wrk(base_url, paths, seconds, connections, threads=2, cpus=None):
    """`cpus`: the cores wrk may run on (taskset's list), None for any."""
    with tempfile.NamedTemporaryFile("w", suffix=".paths", delete=False) as f:
        f.write("\n".join(paths) + "\n")
        paths_file = f.name
    try:
        run = subprocess.run(
            (["taskset", "-c", cpus] if cpus else [])
            + ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "10s",
               "-s", os.path.join(HERE, "paths.lua"), base_url, "--", paths_file],
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


def alternate_with_hello(hello_url, gateway, paths, args, kind, label, connections=None):
    """`args.rounds` rounds of wrk against hello world (the same query strings on
    `/hello`) and against the gateway, alternating: {"hello": [...], kind: [...]}.
    `connections` overrides `args.connections` where a target names its own."""
    hellos = [p.replace("/chat.php", "/hello") for p in paths]
    connections = connections or args.connections
    rounds = {"hello": [], kind: []}
    for _ in range(args.rounds):
        rounds["hello"].append(wrk(hello_url, hellos, args.seconds, connections))
        rounds[kind].append(wrk(gateway, paths, args.seconds, connections))
        log(f"{label}: hello {rounds['hello'][-1]['rps']:.0f}/s, {kind} {rounds[kind][-1]['rps']:.0f}/s")
    return rounds


def wait_ready(url, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            get(url + "/ready", timeout=2)
            return
        except Exception:
            time.sleep(0.5)
    raise RuntimeError(f"{url} not ready")


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


# ---------------------------------------------------------------- report helpers

def fmt(value, digits=1):
    if isinstance(value, float):
        return f"{value:.{digits}f}" if value == value else "n/a"
    return str(value)


def missing(value):
    return value is None or value != value  # None or NaN


def machine_facts():
    cores = os.cpu_count()
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((int(l.split()[1]) // 1024 // 1024 for l in open("/proc/meminfo") if l.startswith("MemTotal")), 0)
    return f"{cores} cores ({model}), {mem} GiB"


def load_facts():
    load = open("/proc/loadavg").read().split()[:3]
    builds = subprocess.run(["pgrep", "-c", "swift-frontend"], capture_output=True, text=True).stdout.strip() or "0"
    return f"load average {' / '.join(load)}, {builds} swift-frontend processes of other builds running"


def utc_now():
    """When a run was made, as the docs state it: `2026-11-25 14:43 UTC`."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# ---------------------------------------------------------------- a run's main

def bench_parser(doc, command):
    """The options of a run against a stack: `--stack-env` (the stack.env of the stack it
    measures), `--command` (the command line its doc block states), `--no-doc`. The
    description is the first paragraph of the module's docstring `doc`."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--stack-env", required=True)
    parser.add_argument("--command", default=command)
    parser.add_argument("--no-doc", action="store_true", help="print the figures, leave the docs as they are")
    return parser


def run_scenarios(names, scenarios, results, before=None):
    """`scenarios[name]()` for each of `names`, in that order. A scenario that fails leaves the
    others' figures: its error is logged and listed in results["_failed"]. `before(name)` runs
    ahead of each scenario but the first, inside its try (a broker restart, say)."""
    for i, name in enumerate(names):
        log(f"scenario {name}")
        started = time.monotonic()
        try:
            if before and i:
                before(name)
            scenarios[name]()
        except Exception as error:  # one failed scenario leaves the others' figures
            log(f"scenario {name} FAILED: {error!r}")
            results.setdefault("_failed", []).append(f"{name}: {error}")
        log(f"scenario {name} took {time.monotonic() - started:.0f}s; figures so far: "
            + ", ".join(f"{k}={fmt(v, 2)}" for k, v in results.items() if not k.startswith("_")))


def publish_run(block, name, heading, write=True):
    """Prints a run's block (lines) and, when `write`, adds it first under its section NAME of
    docs/benchmarks.md (`## HEADING`, made the first time)."""
    print("\n".join(block))
    if write:
        doc_sections.add_run_block(name, heading, block)
        log("docs/benchmarks.md updated")
