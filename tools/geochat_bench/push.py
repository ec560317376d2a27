#!/usr/bin/env python3
"""Issue 15's targets against a running release stack (deploy/bench-push.sh
starts one and calls this), each beside its reference in the same run:

- nearby: `GET /api/v1/rooms/nearest` over 1,000,000 rooms, one request after
  another on a kept-alive connection, p50/p99 as the client sees them, beside
  hello world asked the same way (the client's and HTTP's own share);
- push: `say` through gateway A at a fixed rate, each message's arrival at a
  Server-Sent Events subscriber on gateway B, p50/p99 from send to receipt;
- subscribers: as many push subscribers on one gateway as this machine's file
  limit allows, from several loopback source addresses: the gateway's resident
  memory per subscriber, its CPU while they idle, and one message's fan-out to all.

Writes its table to docs/benchmarks.md between the bench-push markers.

  python -m geochat_bench.push --stack-env .data/bench-push/stack.env --hello-url http://127.0.0.1:PORT [--only a,b]
"""
import asyncio
import http.client
import json
import os
import random
import re
import resource
import socket
import threading
import time
import urllib.parse

from geochat_support.stack import Stack
from geochat_support.stats import percentile

from . import doc_sections
from .runner import (BULK_SQL_TIMEOUT_S, bench_parser, ensure_million_rooms, load_facts, log, machine_facts,
                     restart_gateways_timed, rss_mb, run_scenarios, utc_now)


def connection(url, timeout=30):
    parsed = urllib.parse.urlparse(url)
    return http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=timeout)


def request(conn, method, path, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data, headers={**({"Content-Type": "application/json"} if data else {}),
                                                    **(headers or {})})
    response = conn.getresponse()
    return response.status, response.read()


def api_session(url, nick):
    status, body = request(connection(url), "POST", "/api/v1/sessions", {"nick": nick})
    assert status == 201, body
    return json.loads(body)["session"]


def api_room(url, session, latitude, longitude, topic):
    status, body = request(connection(url), "POST", "/api/v1/rooms",
                           {"latitude": latitude, "longitude": longitude, "zoom": 12, "topic": topic},
                           {"Authorization": "Bearer " + session})
    assert status == 201, body
    return json.loads(body)["id"]


def sequential_latencies(url, paths):
    conn = connection(url)
    times = []
    for path in paths:
        began = time.perf_counter()
        status, _ = request(conn, "GET", path)
        times.append((time.perf_counter() - began) * 1000)
        assert status == 200, (status, path)
    conn.close()
    return times


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- nearby

def scenario_nearby(stack, hello_url, args, results):
    results["nearby_insert_s"] = ensure_million_rooms(stack, args.rooms)
    results["nearby_rooms"] = int(stack.sql("SELECT count(*) FROM rooms.rooms")[0][0])
    results["nearby_ready_s"], results["nearby_gateway_rss_mb"] = restart_gateways_timed(stack)
    centers = [(float(x), float(y)) for x, y in stack.sql("SELECT x, y FROM rooms.rooms ORDER BY md5(id::text) LIMIT 2000")]
    rnd = random.Random(15)
    gateway = stack.gateways[0]
    for radius in args.radii:
        paths = []
        for _ in range(args.queries):
            x, y = rnd.choice(centers) if rnd.random() < 0.8 else (rnd.random(), 0.2 + 0.6 * rnd.random())
            paths.append(f"/api/v1/rooms/nearest?x={x:.7f}&y={y:.7f}&radius={radius}&limit=10")
        hellos = [p.replace("/api/v1/rooms/nearest", "/hello") for p in paths]
        sequential_latencies(gateway, paths[:200])  # warm up
        nearby, hello = [], []
        for round_ in range(args.rounds):  # alternating, so both see the same machine
            hello += sequential_latencies(hello_url, hellos[round_::args.rounds])
            nearby += sequential_latencies(gateway, paths[round_::args.rounds])
        key = f"nearby_{radius // 1000}km"
        results[key + "_p50_ms"], results[key + "_p99_ms"] = percentile(nearby, 50), percentile(nearby, 99)
        results[key + "_hello_p50_ms"], results[key + "_hello_p99_ms"] = percentile(hello, 50), percentile(hello, 99)
        results[key + "_queries"] = len(nearby)
        log(f"nearby r={radius} m: p50 {results[key + '_p50_ms']:.2f} ms, p99 {results[key + '_p99_ms']:.2f} ms "
            f"(hello world p99 {results[key + '_hello_p99_ms']:.2f} ms)")


# ---------------------------------------------------------------- push latency

class Subscriber(threading.Thread):
    """Reads one room's event stream; records each message's arrival time by id."""

    def __init__(self, url, room):
        super().__init__(daemon=True)
        self.conn = connection(url, timeout=120)
        self.conn.request("GET", f"/api/v1/rooms/{room}/events?after=0", headers={"Accept": "text/event-stream"})
        self.sock = self.conn.sock
        self.response = self.conn.getresponse()
        assert self.response.status == 200
        self.arrivals = {}
        self.start()

    def run(self):
        try:
            for line in self.response.fp:
                if line.startswith(b"data: {") and b'"text"' in line:
                    now = time.perf_counter()
                    self.arrivals[json.loads(line[6:])["text"]] = now
        except (OSError, ValueError):
            pass

    def stop(self):
        # Shut the socket down first: closing the reader while this thread reads from it would wait for its lock.
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.join(5)
        self.conn.close()


def push_at(stack, args, rate, seconds, tag):
    """Says at `rate`/s (open loop: each has its scheduled time) through gateway A over 10 rooms; one
    subscriber per room on gateway B. Latency = arrival at B − scheduled send, so queueing counts."""
    a, b = stack.gateways[0], stack.gateways[-1]
    session = api_session(a, f"push{tag}")
    rooms = [api_room(a, session, 10 + i, 10 + i, f"push bench {tag} {i}") for i in range(args.push_rooms)]
    subscribers = [Subscriber(b, room) for room in rooms]
    time.sleep(1)
    sent, answered, failures = {}, {}, []
    total = rate * seconds
    posters = 32

    def post(worker):
        conn = connection(a)
        interval = posters / rate
        for n in range(worker, total, posters):
            due = began + (n // posters) * interval
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            text = f"{tag}m{n}"
            sent[text] = due
            status, body = request(conn, "POST", f"/api/v1/rooms/{rooms[n % len(rooms)]}/messages", {"text": text},
                                   {"Authorization": "Bearer " + session})
            answered[text] = time.perf_counter()
            if status != 201:
                failures.append((status, body[:200]))

    threads = [threading.Thread(target=post, args=(w,)) for w in range(posters)]
    began = time.perf_counter() + 0.1
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = max(answered.values()) - began
    time.sleep(3)
    arrivals = {}
    for s in subscribers:
        s.stop()
        arrivals.update(s.arrivals)
    latencies = [(arrivals[t] - sent[t]) * 1000 for t in sent if t in arrivals]
    says = [(answered[t] - sent[t]) * 1000 for t in sent]
    after_answer = [(arrivals[t] - answered[t]) * 1000 for t in sent if t in arrivals]
    return {
        "rate_asked": rate, "rate_done": len(answered) / elapsed, "sent": len(sent), "received": len(latencies),
        "failed_posts": len(failures), "p50_ms": percentile(latencies, 50), "p99_ms": percentile(latencies, 99),
        "max_ms": max(latencies) if latencies else float("nan"),
        "say_p50_ms": percentile(says, 50), "say_p99_ms": percentile(says, 99),
        "after_answer_p50_ms": percentile(after_answer, 50), "after_answer_p99_ms": percentile(after_answer, 99)}


def scenario_push(stack, args, results):
    for rate in args.push_rates:
        figures = push_at(stack, args, rate, args.push_seconds, f"r{rate}")
        results.update({f"push_{rate}_{k}": v for k, v in figures.items()})
        log(f"push at {rate}/s: {figures['received']}/{figures['sent']} received, p50 {figures['p50_ms']:.1f} ms, "
            f"p99 {figures['p99_ms']:.1f} ms (the says' own answers p50 {figures['say_p50_ms']:.1f}, "
            f"p99 {figures['say_p99_ms']:.1f} ms; {figures['rate_done']:.0f}/s done)")
        time.sleep(5)


# ---------------------------------------------------------------- many subscribers

async def open_subscribers(url, paths, count, sources, concurrency=200):
    """Opens `count` event streams on `url`, the i-th at paths[i % len(paths)], from the given source addresses."""
    parsed = urllib.parse.urlparse(url)
    streams, failures = [], []
    gate = asyncio.Semaphore(concurrency)

    async def one(i):
        async with gate:
            try:
                reader, writer = await asyncio.open_connection(
                    parsed.hostname, parsed.port, local_addr=(sources[i % len(sources)], 0), limit=4096)
                writer.write(f"GET {paths[i % len(paths)]} HTTP/1.1\r\nHost: bench\r\n"
                             "Accept: text/event-stream\r\n\r\n".encode())
                status = await asyncio.wait_for(reader.readline(), 30)
                if b" 200 " not in status:
                    failures.append(status)
                    writer.close()
                    return
                streams.append((reader, writer))
            except (OSError, asyncio.TimeoutError) as error:
                failures.append(repr(error))

    await asyncio.gather(*(one(i) for i in range(count)))
    return streams, failures


async def reference_streams(hello_url, hello_pid, count, sources):
    """Hello world's `/events` (a Hummingbird body that only keeps itself alive), as many
    streams as the gateway gets: its resident memory per stream, the HTTP stack's own share."""
    before = rss_mb(hello_pid)
    streams, failures = await open_subscribers(hello_url, ["/events"], count, sources)
    await asyncio.sleep(10)
    after = rss_mb(hello_pid)
    for _, writer in streams:
        writer.close()
    await asyncio.sleep(2)
    return {"subs_hello_opened": len(streams), "subs_hello_failed": len(failures),
            "subs_hello_rss_before_mb": before, "subs_hello_rss_after_mb": after,
            "subs_hello_kb_each": (after - before) * 1024 / max(len(streams), 1)}


async def drain_until(streams, marker, timeout):
    """Reads every stream until each has shown `marker`; the seconds the last one took."""
    began = time.perf_counter()

    async def one(reader):
        while True:
            line = await reader.readline()
            if not line:
                return False
            if marker in line:
                return True

    done = await asyncio.wait_for(asyncio.gather(*(one(r) for r, _ in streams), return_exceptions=True), timeout)
    return time.perf_counter() - began, sum(1 for d in done if d is True)


def scenario_subscribers(stack, hello_url, hello_pid, args, results):
    gateway = stack.gateways[-1]
    pid = stack.pid(f"gateway-{len(stack.gateways)}")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    gateway_limit = int(re.search(r"Max open files\s+(\d+)", open(f"/proc/{pid}/limits").read()).group(1))
    count = min(args.subscribers, hard - 500, gateway_limit - 500)
    results.update({"subs_asked": args.subscribers, "subs_fd_limit_client": hard, "subs_fd_limit_gateway": gateway_limit})
    a = stack.gateways[0]
    session = api_session(a, "subsbench")
    rooms = [api_room(a, session, -20 - i * 0.01, 30, f"subs bench {i}") for i in range(args.subscriber_rooms)]
    time.sleep(2)
    sources = [f"127.0.0.{n}" for n in range(2, 2 + args.sources)]

    async def run():
        # The reference first, then closed: the load generator cannot hold both sets of connections at once.
        reference = await reference_streams(hello_url, hello_pid, count, sources) if hello_pid else {}
        rss_before = rss_mb(pid)
        began = time.perf_counter()
        streams, failures = await open_subscribers(
            gateway, [f"/api/v1/rooms/{room}/events" for room in rooms], count, sources)
        opened_s = time.perf_counter() - began
        # Each stream's first events (retry, participants) arrive at once; let everything settle.
        await asyncio.sleep(10)
        rss_after = rss_mb(pid)
        cpu_before, wall_before = cpu_seconds(pid), time.perf_counter()
        await asyncio.sleep(args.idle_seconds)
        idle_cores = (cpu_seconds(pid) - cpu_before) / (time.perf_counter() - wall_before)
        # One message to every room: how long until every subscriber has it.
        conn = connection(a)
        for room in rooms:
            request(conn, "POST", f"/api/v1/rooms/{room}/messages", {"text": "fanout-marker"},
                    {"Authorization": "Bearer " + session})
        fanout_s, reached = await drain_until(streams, b"fanout-marker", 120)
        for _, writer in streams:
            writer.close()
        return {
            "subs_opened": len(streams), "subs_failed": len(failures), "subs_open_s": opened_s,
            "subs_rss_before_mb": rss_before, "subs_rss_after_mb": rss_after,
            "subs_kb_each": (rss_after - rss_before) * 1024 / max(len(streams), 1),
            "subs_idle_cores": idle_cores, "subs_fanout_s": fanout_s, "subs_fanout_reached": reached,
            "subs_failures_sample": failures[:3], **reference}

    results.update(asyncio.run(run()))
    log(f"subscribers: {results['subs_opened']} open ({results['subs_failed']} failed), "
        f"{results['subs_kb_each']:.1f} KB each, idle {results['subs_idle_cores']:.3f} cores, "
        f"fan-out to all in {results['subs_fanout_s']:.2f} s")


# ---------------------------------------------------------------- report

def report(results, meta):
    def f(key, digits=1):
        value = results.get(key)
        return "not measured" if value is None else (f"{value:,.{digits}f}" if isinstance(value, float) else f"{value:,}")

    rows = []
    for radius in meta["radii"]:
        key = f"nearby_{radius // 1000}km"
        if key + "_p99_ms" in results:
            p99 = results[key + "_p99_ms"]
            rows.append((f"nearby over {f('nearby_rooms', 0)} rooms, radius {radius // 1000} km, 10 nearest: p99 ≤ 5 ms",
                         f"p50 {f(key + '_p50_ms', 2)} ms, p99 {f(key + '_p99_ms', 2)} ms "
                         f"(hello world p50 {f(key + '_hello_p50_ms', 2)}, p99 {f(key + '_hello_p99_ms', 2)} ms; "
                         f"{f(key + '_queries')} queries one at a time)",
                         "met" if p99 <= 5 else "missed"))
    for rate in meta["push_rates"]:
        k = f"push_{rate}_"
        if k + "p99_ms" not in results:
            continue
        verdict = ("met" if results[k + "p99_ms"] <= 50 and results[k + "received"] == results[k + "sent"] else "missed")
        rows.append(("say on gateway A → push on gateway B: p99 ≤ 50 ms at 200 posts/s"
                     + ("" if rate == 200 else f" (at {rate}/s: context)"),
                     f"p50 {f(k + 'p50_ms')} ms, p99 {f(k + 'p99_ms')} ms, max {f(k + 'max_ms')} ms from each say's "
                     f"scheduled send; {f(k + 'received')} of {f(k + 'sent')} pushed, {f(k + 'failed_posts')} says failed, "
                     f"{f(k + 'rate_done')}/s done. The says' own answers: p50 {f(k + 'say_p50_ms')}, p99 "
                     f"{f(k + 'say_p99_ms')} ms; push after the say's answer: p50 {f(k + 'after_answer_p50_ms')}, "
                     f"p99 {f(k + 'after_answer_p99_ms')} ms",
                     verdict if rate == 200 else "—"))
    if "subs_opened" in results:
        full = results["subs_opened"] >= 100_000
        rows.append(("100,000 push subscribers on one gateway, ≤ 20 KB each",
                     f"{f('subs_opened')} subscribers held (asked {f('subs_asked')}; the file limit here is "
                     f"{f('subs_fd_limit_gateway')} per process, hard), {f('subs_kb_each')} KB each "
                     f"(gateway RSS {f('subs_rss_before_mb')} → {f('subs_rss_after_mb')} MB); hello world's "
                     f"`/events`, {f('subs_hello_opened')} streams: {f('subs_hello_kb_each')} KB each",
                     ("met" if results["subs_kb_each"] <= 20 else "missed") if full else
                     ("per-subscriber memory met; 100,000 not reachable here" if results["subs_kb_each"] <= 20 else "missed")))
        rows.append(("idle subscribers cost no CPU",
                     f"{f('subs_idle_cores', 3)} cores over {meta['idle_seconds']} s with {f('subs_opened')} idle "
                     "subscribers (keep-alive comments every 30 s included)", "see figure"))
        rows.append(("one message to every subscriber",
                     f"{f('subs_fanout_reached')} of {f('subs_opened')} had it within {f('subs_fanout_s', 2)} s", "—"))
    lines = [f"{key}: {fmt}" for key, fmt in ((k, f(k, 3)) for k in sorted(results) if not k.startswith("_")
                                                and not k.endswith("sample"))]
    lines += [f"Scenario failed: {failure}" for failure in results.get("_failed", [])]
    table = [f"Run of {meta['when']}. Machine: {meta['machine']}. Build: release. Load while it ran: {meta['load']}.", "",
             f"Command: `{meta['command']}`", "",
             "| target | figure | verdict |", "| --- | --- | --- |"] + [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return table, lines


def write_doc(table, lines):
    generated = doc_sections.marked_block("bench-push", "deploy/bench-push.sh", [*table, "", "```", *lines, "```"])
    doc_sections.write_marked(doc_sections.BENCHMARKS, [
        ("bench-push", generated, "## The JSON API, push and nearby search (issue 15)\n\n")])


def main():
    parser = bench_parser(__doc__, "bash deploy/bench-push.sh")
    parser.add_argument("--hello-url", required=True)
    parser.add_argument("--hello-pid", type=int, default=0, help="hello world's process: its memory per reference stream")
    parser.add_argument("--only", default="push,subscribers,nearby")
    parser.add_argument("--rooms", type=int, default=1_000_000)
    parser.add_argument("--radii", default="2000,50000")
    parser.add_argument("--queries", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--push-rates", default="200,50")
    parser.add_argument("--push-seconds", type=int, default=20)
    parser.add_argument("--push-rooms", type=int, default=10)
    parser.add_argument("--subscribers", type=int, default=100_000)
    parser.add_argument("--subscriber-rooms", type=int, default=100)
    parser.add_argument("--sources", type=int, default=4)
    parser.add_argument("--idle-seconds", type=int, default=60)
    args = parser.parse_args()
    args.radii = [int(r) for r in args.radii.split(",")]
    args.push_rates = [int(r) for r in args.push_rates.split(",")]

    stack = Stack(args.stack_env, sql_timeout=BULK_SQL_TIMEOUT_S)
    meta = {"when": utc_now(),
            "machine": machine_facts(), "command": args.command, "radii": args.radii,
            "idle_seconds": args.idle_seconds, "push_rates": args.push_rates}
    load_before = load_facts()
    results = {}
    run_scenarios(args.only.split(","), {
        "nearby": lambda: scenario_nearby(stack, args.hello_url, args, results),
        "push": lambda: scenario_push(stack, args, results),
        "subscribers": lambda: scenario_subscribers(stack, args.hello_url, args.hello_pid, args, results),
    }, results)
    meta["load"] = f"at start {load_before}; at the end {load_facts()}"
    table, lines = report(results, meta)
    print("\n".join(table))
    print("\n".join(lines))
    if not args.no_doc:
        write_doc(table, lines)
        log("docs/benchmarks.md updated (bench-push markers)")


if __name__ == "__main__":
    main()
