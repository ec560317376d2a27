#!/usr/bin/env python3
"""A long run of says at a fixed rate against a stack that is never restarted (deploy/soak.sh):
does it answer after an hour as it did in its first minute, and idle as it did before?

  python -m geochat_bench.soak --stack-env .data/soak/stack.env --minutes 30 --rate 200

Before and after the load: the stack's idle CPU over 60 s, process by process (idle_cpu's
reading, as deploy/idle.sh takes it), and 20 lone `start` + `say` pairs one after the other;
the first reading `--settle-minutes` after the stack started, once its idle work is what it
always is (topic generations made each minute and deleted four periods after their end: a
reading in the first minutes has neither, the ones after the load have both);
the idle CPU once more `--late-minutes` after the load, when the broker has deleted the
topic generations the load wrote (so what the load left for a while is told from what stays). During it: says at
`--rate` a second (open loop: each has its scheduled time, queueing counts) through every
gateway in turn, into 100 rooms, from 16 sessions; per minute the answers' p50/p99, how
many failed (a `503` or no answer within 10 s) and the broker's resident memory.
Runs of two hours or more compare the last hour's p99 with the first's (issue 38: ≤ 1.2×),
shorter ones the last 5 minutes' with the first 5 (≤ 1.5×).
"""
import asyncio
import os
import random
import time

from geochat_support.protocol import AsyncPool, session_id_in, success_id_in
from geochat_support.stack import Stack
from geochat_support.stats import percentile as nearest_rank

from . import idle_cpu
from .runner import bench_parser, create_rooms, fmt, log, machine_facts, publish_run, q, start_sessions, utc_now


def percentile(values, p):
    return nearest_rank(values, p) if values else float("nan")


def broker_rss_mb(state_dir):
    """The broker's resident memory (VmRSS) in MB, or nan when it is not this stack's to read."""
    try:
        with open(os.path.join(state_dir, "pids", "kafka.pid")) as f:
            pid = int(f.read().strip())
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return float("nan")


async def lone_pairs(url, count=20):
    """`start` then `say` into a fresh room, one pair at a time: the pair's time in ms."""
    pool = AsyncPool(url, 1)
    try:
        owner = (await start_sessions(pool, 1, "lone"))[0]
        room = (await create_rooms(pool, owner, 1, f"lone {time.time()}"))[0]
        times = []
        for i in range(count):
            began = time.monotonic()
            answer = await pool.get(q(cmd="start", nick=f"lone{i}"))
            session = session_id_in(answer.body)
            answer = await pool.get(q(cmd="say", sessionid=session, chatid=room, msg=f"lone {i}"))
            if success_id_in(answer.body) is not None:
                times.append((time.monotonic() - began) * 1000)
        return times
    finally:
        pool.close()


async def load(stack, rate, minutes, rss):
    pools = [AsyncPool(url, 64) for url in stack.gateways]
    try:
        sessions = await start_sessions(pools[0], 16, "soak")
        rooms = await create_rooms(pools[0], sessions[0], 100, f"soak {time.time()}")
        per_minute = {}  # minute -> (answer times in ms, failures, broker RSS MB at its end)
        rnd = random.Random(5)

        async def say(i, scheduled):
            minute = int((scheduled - t0) // 60)
            times, _, _ = per_minute.setdefault(minute, ([], [0], [float("nan")]))
            try:
                answer = await asyncio.wait_for(
                    pools[i % len(pools)].get(q(cmd="say", sessionid=rnd.choice(sessions), chatid=rnd.choice(rooms),
                                                msg=f"soak {i}")), 10)
                if answer.ok:
                    times.append((time.monotonic() - scheduled) * 1000)
                    return
            except Exception:
                pass
            per_minute[minute][1][0] += 1

        t0 = time.monotonic() + 0.5
        total = int(rate * minutes * 60)
        pending = set()
        for i in range(total):
            scheduled = t0 + i / rate
            delay = scheduled - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            pending.add(asyncio.ensure_future(say(i, scheduled)))
            if i % 1000 == 0:
                pending = {t for t in pending if not t.done()}
                if i and i % (rate * 60) == 0:
                    m = int((scheduled - t0) // 60) - 1
                    times, failed, memory = per_minute.get(m, ([], [0], [float("nan")]))
                    memory[0] = rss()
                    log(f"minute {m + 1}: {len(times)} answered, p50 {fmt(percentile(times, 50))} "
                        f"ms, p99 {fmt(percentile(times, 99))} ms, {failed[0]} failed, broker RSS {fmt(memory[0])} MB")
        if pending:
            await asyncio.wait(pending, timeout=15)
        return per_minute
    finally:
        for pool in pools:
            pool.close()


def idle_table(before, after, late, late_minutes):
    """The idle readings process by process, busiest first, and their sum."""
    heads = ["before", "after"] + ([f"{late_minutes:g} min after"] if late else [])
    readings = [before, after] + ([late] if late else [])
    rows = [f"| {name} | " + " | ".join(f"{r.get(name, 0):.3f}" for r in readings) + " |"
            for name in sorted(before, key=lambda n: -after.get(n, 0))]
    return [f"| idle cores | {' | '.join(heads)} |", "| --- |" + " ---: |" * len(heads), *rows,
            "| all | " + " | ".join(f"{sum(r.values()):.3f}" for r in readings) + " |"]


def main():
    parser = bench_parser(__doc__, "bash deploy/soak.sh")
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--idle-seconds", type=int, default=60)
    parser.add_argument("--settle-minutes", type=float, default=6,
                        help="minutes idle between the stack's start and the first idle reading")
    parser.add_argument("--late-minutes", type=float, default=6,
                        help="when the last idle reading starts, in minutes after the load (0: none)")
    args = parser.parse_args()
    stack = Stack(args.stack_env)
    state = os.path.dirname(os.path.abspath(args.stack_env))
    when = utc_now()

    # stack.sh writes stack.env once every instance has started: the stack's start.
    settled_at = os.path.getmtime(args.stack_env) + args.settle_minutes * 60
    if time.time() < settled_at:
        log(f"idle until {args.settle_minutes:g} minutes after the stack started, then the first idle reading")
        time.sleep(settled_at - time.time())
    idle_before = idle_cpu.cores_over(state, args.idle_seconds)
    lone_before = asyncio.run(lone_pairs(stack.gateways[0]))
    log(f"before: idle {sum(idle_before.values()):.3f} cores, lone start + say p50 {fmt(percentile(lone_before, 50))} ms")
    per_minute = asyncio.run(load(stack, args.rate, args.minutes, lambda: broker_rss_mb(state)))
    rss_end = broker_rss_mb(state)
    load_end = time.monotonic()
    time.sleep(30)  # what the load left in flight settles
    lone_after = asyncio.run(lone_pairs(stack.gateways[0]))
    idle_after = idle_cpu.cores_over(state, args.idle_seconds)
    log(f"after: idle {sum(idle_after.values()):.3f} cores, lone start + say p50 {fmt(percentile(lone_after, 50))} ms")
    idle_late = {}
    if args.late_minutes > 0:
        time.sleep(max(0.0, load_end + args.late_minutes * 60 - time.monotonic()))
        idle_late = idle_cpu.cores_over(state, args.idle_seconds)
        log(f"{args.late_minutes:g} minutes after: idle {sum(idle_late.values()):.3f} cores")

    minutes = sorted(per_minute)
    def window(ms):
        times = [t for m in ms for t in per_minute[m][0]]
        return percentile(times, 99)
    span = 60 if len(minutes) >= 120 else 5
    limit = 1.2 if span == 60 else 1.5
    first, last = window(minutes[:span]), window(minutes[-span:])
    failed = sum(per_minute[m][1][0] for m in minutes)
    rows = [f"| {m + 1} | {len(per_minute[m][0])} | {fmt(percentile(per_minute[m][0], 50))} | "
            f"{fmt(percentile(per_minute[m][0], 99))} | {per_minute[m][1][0]} | {fmt(per_minute[m][2][0])} |"
            for m in minutes]
    block = [
        f"### Soak: {when}", "",
        f"Command: `{args.command}`. {args.rate} says/s offered for {args.minutes:g} minutes through "
        f"{len(stack.gateways)} gateway(s), the broker never restarted. Machine: {machine_facts()}.", "",
        f"- p99 of the first {span} minutes {fmt(first)} ms, of the last {span} {fmt(last)} ms: "
        f"{fmt(last / first if first == first and first else float('nan'), 2)}× (target ≤ {limit}×); {failed} failed (target 0).",
        f"- The broker's resident memory: {fmt(per_minute[minutes[0]][2][0])} MB after the first minute, "
        f"{fmt(rss_end)} MB after the load (target: flat after the first hour).",
        f"- A lone `start` + `say`: p50 {fmt(percentile(lone_before, 50))} ms before, "
        f"{fmt(percentile(lone_after, 50))} ms after (target within 1.5×).",
        f"- The idle stack: {sum(idle_before.values()):.3f} cores before (from minute {args.settle_minutes:g} "
        f"after its start), {sum(idle_after.values()):.3f} after "
        f"(target within 0.02)" + (f", {sum(idle_late.values()):.3f} from minute {args.late_minutes:g} after the load"
                                   if idle_late else "") + ":", "",
        *idle_table(idle_before, idle_after, idle_late, args.late_minutes), "",
        "| minute | answered | p50 ms | p99 ms | failed | broker RSS MB |", "| --- | --- | --- | --- | --- | --- |",
        *rows, ""]
    publish_run(block, "soak", "Soak (deploy/soak.sh)", write=not args.no_doc)


if __name__ == "__main__":
    main()
