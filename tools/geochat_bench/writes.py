#!/usr/bin/env python3
"""The write path's benchmark (issue 25), side by side with the PHP server of the same
protocol (../shared/peers/php) in one run. deploy/bench-writes.sh starts both and calls this.

  python -m geochat_bench.writes --stack-env .data/bench-writes/stack.env --php-url http://127.0.0.1:PORT [--only a,b]

Scenarios, in this order, on one stack that is never restarted:
- create: 10,000 `create`s (16 at a time) through gateway 1, then through PHP.
- say:    64 sessions saying into 256 rooms (each request a random session and room),
          `wrk -t2 -c64 -d10s`, rounds alternating between PHP and the project.
- budget: says at a fixed rate (open loop, 200/s) through gateway 1, pollers on gateway 2:
          each say's answer, say -> visible through gateway 2, and where the time goes,
          hop by hop, from the services' own histograms (means over the run).
- push:   the same rate through the JSON API, one push subscriber per room on gateway 2.
"""
import asyncio
import os
import random
import re
import time
import types

from geochat_support.protocol import AsyncPool
from geochat_support.stack import Stack

from . import fanout, idle_cpu, push
from .runner import (bench_parser, create_rooms, fmt, load_facts, log, machine_facts, publish_run, q, run_scenarios,
                     scrape, start_sessions, utc_now, wrk)

SCENARIOS = ["create", "say", "budget", "push"]


def make_rooms_timed(url, count, tag):
    """Starts a session and creates `count` rooms through `url`: (seconds, rooms)."""
    async def run():
        pool = AsyncPool(url, 16)
        try:
            session = (await start_sessions(pool, 1, f"{tag}c"))[0]
            started = time.monotonic()
            rooms = await create_rooms(pool, session, count, tag)
            return time.monotonic() - started, rooms
        finally:
            pool.close()
    return asyncio.run(run())


def scenario_create(stack, php_url, args, results):
    processes = {"geochat": idle_cpu.processes(stack.state_dir), "php": php_processes(args.php_dir)}
    urls = hop_sources(stack)
    for name, url in (("geochat", stack.gateways[0]), ("php", php_url)):
        cpu = {}
        before = {kind: [scrape(u) for u in us] for kind, us in urls.items()} if name == "geochat" else None
        seconds, rooms = measured_cpu(processes[name], cpu, lambda: make_rooms_timed(url, args.creates,
                                                                                     f"create{name}"))
        if before is not None:
            after = {kind: [scrape(u) for u in us] for kind, us in urls.items()}
            results["_create_hops"] = [(label, mean_ms(before[kind], after[kind], metric, labels))
                                       for label, kind, metric, labels in CREATE_HOPS]
        results[f"create_{name}_s"] = seconds
        results[f"create_{name}_rps"] = len(rooms) / seconds
        log(f"create through {name}: {len(rooms)} rooms in {seconds:.1f} s ({len(rooms) / seconds:.0f}/s)")
        if rooms:
            results[f"_create_{name}_cpu_ms"] = per_request_ms(cpu, len(rooms), f"create CPU per room, {name}")
    results["create_ratio"] = results["create_geochat_rps"] / results["create_php_rps"]


def say_setup(url, tag):
    async def run():
        pool = AsyncPool(url, 64)
        try:
            sessions = await start_sessions(pool, 64, f"{tag}s")
            rooms = await create_rooms(pool, sessions[0], 256, f"{tag} say")
            return sessions, rooms
        finally:
            pool.close()
    return asyncio.run(run())


def php_processes(run_dir):
    """The PHP server's processes (peers/php/up writes their pid files under its run directory):
    nginx, php-fpm and its own PostgreSQL, each to be read with its children."""
    named = {}
    for name, file in (("nginx", "nginx.pid"), ("php-fpm", "php-fpm.pid"), ("postgresql", "pg/data/postmaster.pid")):
        try:
            with open(os.path.join(run_dir, file)) as f:
                named[name] = int(f.readline().strip())
        except (OSError, ValueError):
            log(f"say: no {name} pid under {run_dir}: its CPU is not counted")
    return named


def service_of(instance):
    """An instance's service (`messaging-2` → `messaging`): CPU per say is summed over a service's instances."""
    return re.sub(r"-\d+$", "", instance)


def measured_cpu(processes, totals, run):
    """Runs `run()` and adds the CPU seconds each of `processes` (each with its children) used meanwhile
    to `totals`, by service; answers what `run()` answered."""
    before = idle_cpu.sample(processes)
    outcome = run()
    for process, seconds in idle_cpu.cpu_seconds(before, idle_cpu.sample(processes)).items():
        totals[service_of(process)] = totals.get(service_of(process), 0.0) + seconds
    return outcome


def per_request_ms(totals, requests, what):
    """CPU ms a request, by service, from the seconds `measured_cpu` added up; logged as `what`."""
    per = {service: seconds / requests * 1000 for service, seconds in totals.items()}
    log(f"{what}: {sum(per.values()):.3f} ms (" + ", ".join(
        f"{service} {ms:.3f}" for service, ms in sorted(per.items(), key=lambda kv: -kv[1])) + ")")
    return per


def scenario_say(stack, php_url, args, results):
    targets = {"geochat": stack.gateways[0], "php": php_url}
    # Whose CPU a say costs: every process of each server (wrk, the load, is on the same two cores
    # and in neither column).
    processes = {"geochat": idle_cpu.processes(stack.state_dir), "php": php_processes(args.php_dir)}
    setups = {name: say_setup(url, name) for name, url in targets.items()}
    rnd = random.Random(7)
    rounds = {name: [] for name in targets}
    cpu = {name: {} for name in targets}
    for round_ in range(args.rounds):
        for name in ("php", "geochat"):
            sessions, rooms = setups[name]
            # Unique texts: the same session, room and text within 15 s is a phone's repeat.
            paths = [q(cmd="say", sessionid=rnd.choice(sessions), chatid=rnd.choice(rooms),
                       msg=f"throughput {round_} {i}") for i in range(20000)]
            outcome = measured_cpu(processes[name], cpu[name], lambda: wrk(targets[name], paths, args.seconds, 64))
            rounds[name].append(outcome)
            log(f"say round {round_ + 1} {name}: {outcome['rps']:.0f}/s, p50 {outcome['p50_ms']:.1f} ms, "
                f"p99 {outcome['p99_ms']:.1f} ms, {outcome['failed']} failed")
    for name, runs in rounds.items():
        middle = sorted(runs, key=lambda r: r["rps"])[len(runs) // 2]
        results.update({
            f"say_{name}_rps": middle["rps"], f"say_{name}_p50_ms": middle["p50_ms"],
            f"say_{name}_p99_ms": middle["p99_ms"], f"say_{name}_failed": sum(r["failed"] for r in runs),
            f"say_{name}_rounds": ", ".join(f"{r['rps']:.0f}" for r in runs)})
        answered = sum(r["requests"] - r["failed"] for r in runs)
        if answered:
            results[f"_say_{name}_cpu_ms"] = per_request_ms(cpu[name], answered, f"say CPU per answered say, {name}")
    results["say_ratio"] = results["say_geochat_rps"] / results["say_php_rps"]


def mean_ms(befores, afters, name, labels=""):
    """The mean of a histogram's growth between two scrapes of each instance, pooled over the instances
    (their sums and counts added, so an instance that saw few of them weighs little), in ms."""
    def total(samples, suffix):
        return sum(v for (n, l), v in samples.items() if n == name + suffix and labels in l)
    count = sum(total(a, "_count") - total(b, "_count") for b, a in zip(befores, afters))
    seconds = sum(total(a, "_sum") - total(b, "_sum") for b, a in zip(befores, afters))
    return seconds / count * 1000 if count else float("nan")


# Where a say's time goes, in the order it is spent: (label, which instances, histogram, label filter).
HOPS = [
    ("gateway: HTTP say, whole", "gateways", "geochat_http_request_duration_seconds", 'command="say"'),
    ("gateway: say command sent -> answered (its message event read)", "gateways",
     "geochat_request_duration_seconds", 'topic="geochat.messaging.commands"'),
    ("messaging: sent -> handler starts (produce, broker, fetch, lane)", "messaging",
     "geochat_command_wait_seconds", 'command="say"'),
    ("messaging: handler (checks, PostgreSQL, event handed over)", "messaging",
     "geochat_command_duration_seconds", 'command="say"'),
    ("messaging: PostgreSQL transactions", "messaging", "geochat_pg_query_duration_seconds", 'kind="transaction"'),
    # A say's answer is its message event (no reply record): what is left here are other replies.
    ("gateway: reply produced -> received (broker, fetch; not says')", "gateways", "geochat_reply_travel_seconds",
     ""),
    ("rooms: joinBySaying posted -> handler starts", "rooms", "geochat_command_wait_seconds",
     'command="joinBySaying"'),
    ("rooms: joinBySaying handled", "rooms", "geochat_command_duration_seconds", 'command="joinBySaying"'),
]


# Where a create's time goes, as HOPS for a say.
CREATE_HOPS = [
    ("gateway: HTTP create, whole", "gateways", "geochat_http_request_duration_seconds", 'command="create"'),
    ("gateway: create command sent -> answered (its created event read)", "gateways",
     "geochat_request_duration_seconds", 'topic="geochat.rooms.commands"'),
    ("rooms: sent -> handler starts (produce, broker, fetch, lane)", "rooms", "geochat_command_wait_seconds",
     'command="create"'),
    ("rooms: handler (PostgreSQL, event handed over)", "rooms", "geochat_command_duration_seconds",
     'command="create"'),
    ("rooms: PostgreSQL queries outside a transaction", "rooms", "geochat_pg_query_duration_seconds",
     'kind="query"'),
    ("rooms: PostgreSQL transactions", "rooms", "geochat_pg_query_duration_seconds", 'kind="transaction"'),
]


def hop_sources(stack):
    """The instances whose histograms the hop tables read (a gateway serves its metrics on its operators'
    listener)."""
    return {"gateways": [stack.operators_of[url] for url in stack.gateways], "messaging": stack.messaging,
            "rooms": stack.rooms}


def scenario_budget(stack, args, results):
    urls = hop_sources(stack)
    before = {kind: [scrape(u) for u in us] for kind, us in urls.items()}
    record = asyncio.run(fanout.fanout_run(stack, args.rate, args.budget_seconds, 20, 0.01))
    after = {kind: [scrape(u) for u in us] for kind, us in urls.items()}
    figures = fanout.fanout_figures(record)
    results.update({f"budget_{k[len('fanout_'):]}": v for k, v in figures.items()})
    log(f"budget at {args.rate}/s: say p50 {fmt(figures['fanout_say_p50_ms'])} ms, p99 "
        f"{fmt(figures['fanout_say_p99_ms'])} ms; visible through gateway 2 p50 {fmt(figures['fanout_p50_ms'])} ms, "
        f"p99 {fmt(figures['fanout_p99_ms'])} ms; {figures['fanout_say_failures']} failed")
    hops = []
    for label, kind, name, labels in HOPS:
        hops.append((label, mean_ms(before[kind], after[kind], name, labels)))
    results["_hops"] = hops


def scenario_push(stack, args, results):
    options = types.SimpleNamespace(push_rooms=10)
    figures = push.push_at(stack, options, args.rate, args.budget_seconds, "w")
    results.update({f"push_{k}": v for k, v in figures.items()})
    log(f"push at {args.rate}/s: say -> push p50 {fmt(figures['p50_ms'])} ms, p99 {fmt(figures['p99_ms'])} ms; "
        f"post answers p99 {fmt(figures['say_p99_ms'])} ms; {figures['failed_posts']} failed")


def report(results, args, meta):
    r = lambda k: results.get(k, float("nan"))  # noqa: E731
    table = [
        "| scenario | GeoChat | PHP + PostgreSQL | ratio |",
        "| --- | --- | --- | --- |",
        f"| `create`, {args.creates:,} rooms, 16 at a time | {fmt(r('create_geochat_rps'), 0)}/s "
        f"({fmt(r('create_geochat_s'))} s) | {fmt(r('create_php_rps'), 0)}/s ({fmt(r('create_php_s'))} s) "
        f"| {fmt(r('create_ratio'), 2)}× |",
        f"| `say`, wrk -c64, median of {args.rounds} rounds ({results.get('say_geochat_rounds', '-')} / "
        f"{results.get('say_php_rounds', '-')}) | {fmt(r('say_geochat_rps'), 0)}/s, p50 {fmt(r('say_geochat_p50_ms'))} ms, "
        f"p99 {fmt(r('say_geochat_p99_ms'))} ms | {fmt(r('say_php_rps'), 0)}/s, p50 {fmt(r('say_php_p50_ms'))} ms, "
        f"p99 {fmt(r('say_php_p99_ms'))} ms | {fmt(r('say_ratio'), 2)}× |",
        "",
        f"At {args.rate} says/s offered (open loop, {args.budget_seconds} s, 100 rooms, pollers on the other gateway "
        "every 10 ms):",
        "",
        "| measured | p50 | p99 | max |",
        "| --- | --- | --- | --- |",
        f"| a say's own answer (legacy XML) | {fmt(r('budget_say_p50_ms'))} ms | {fmt(r('budget_say_p99_ms'))} ms | |",
        f"| say -> visible through the other gateway (poll) | {fmt(r('budget_p50_ms'))} ms | "
        f"{fmt(r('budget_p99_ms'))} ms | {fmt(r('budget_max_ms'))} ms |",
        f"| a post's own answer (JSON API) | {fmt(r('push_say_p50_ms'))} ms | {fmt(r('push_say_p99_ms'))} ms | |",
        f"| post -> pushed by the other gateway | {fmt(r('push_p50_ms'))} ms | {fmt(r('push_p99_ms'))} ms | "
        f"{fmt(r('push_max_ms'))} ms |",
        "",
        f"Failed: {int(r('budget_say_failures')) if r('budget_say_failures') == r('budget_say_failures') else '-'} "
        f"says, {int(r('push_failed_posts')) if r('push_failed_posts') == r('push_failed_posts') else '-'} posts; "
        f"unseen: {results.get('budget_missing', '-')} polled, "
        f"{(results.get('push_sent', 0) - results.get('push_received', 0)) if 'push_sent' in results else '-'} pushed.",
    ]
    table += cpu_table(results, "create", f"CPU per created room in those {args.creates:,} creates")
    table += cpu_table(results, "say", "CPU per answered `say` in those rounds")
    if results.get("_hops"):
        table += ["", "Where a say's time goes at that rate (means over the run, from each instance's histograms; "
                  "the rows nest, they do not add up):", "", "| hop | mean |", "| --- | --- |"]
        table += [f"| {label} | {fmt(value, 2)} ms |" for label, value in results["_hops"]]
    if results.get("_create_hops"):
        table += ["", "Where a create's time goes in those creates (means over them, as for a say):", "",
                  "| hop | mean |", "| --- | --- |"]
        table += [f"| {label} | {fmt(value, 2)} ms |" for label, value in results["_create_hops"]]
    return table


def cpu_table(results, scenario, title):
    """Both servers' CPU per request of `scenario`, by process, side by side (empty unless both were read)."""
    ours, theirs = results.get(f"_{scenario}_geochat_cpu_ms"), results.get(f"_{scenario}_php_cpu_ms")
    if not (ours and theirs):
        return []
    table = ["", f"{title}, by process (each with its children; CPU seconds over them / requests answered; "
             "the load generator in neither):", "", "| GeoChat | ms | PHP + PostgreSQL | ms |", "| --- | ---: | --- | ---: |"]
    left, right = sorted(ours.items(), key=lambda kv: -kv[1]), sorted(theirs.items(), key=lambda kv: -kv[1])
    for i in range(max(len(left), len(right))):
        a = f"{left[i][0]} | {left[i][1]:.3f}" if i < len(left) else " | "
        b = f"{right[i][0]} | {right[i][1]:.3f}" if i < len(right) else " | "
        table.append(f"| {a} | {b} |")
    table.append(f"| **all** | **{sum(ours.values()):.3f}** | **all** | **{sum(theirs.values()):.3f}** |")
    return table


def main():
    parser = bench_parser(__doc__, "bash deploy/bench-writes.sh")
    parser.add_argument("--php-url", required=True)
    parser.add_argument("--php-dir", default=os.environ.get("GEOCHAT_PHP_DIR", "/tmp/geochat-php"),
                        help="the PHP server's run directory (its pid files), for its CPU per say")
    parser.add_argument("--only", default=",".join(SCENARIOS))
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--creates", type=int, default=10_000)
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--budget-seconds", type=int, default=20)
    parser.add_argument("--build", default="release build")
    parser.add_argument("--label", default="", help="what was measured (e.g. a commit), shown in the heading")
    args = parser.parse_args()

    stack = Stack(args.stack_env)
    results = {}
    when = utc_now()
    load_before = load_facts()
    only = args.only.split(",")
    run_scenarios([name for name in SCENARIOS if name in only], {
        "create": lambda: scenario_create(stack, args.php_url, args, results),
        "say": lambda: scenario_say(stack, args.php_url, args, results),
        "budget": lambda: scenario_budget(stack, args, results),
        "push": lambda: scenario_push(stack, args, results),
    }, results)
    table = report(results, args, None)
    heading = f"### Writes: {when}{' — ' + args.label if args.label else ''}"
    block = [heading, "",
             f"Machine: {machine_facts()}. Build: {args.build}. Stack: 2 gateways, 2 messaging instances, "
             "the broker never restarted. Load: at start " + load_before + "; at the end " + load_facts() + ".",
             "", f"Command: `{args.command}`", "", *table, "",
             *[f"Scenario failed: {f}" for f in results.get("_failed", [])]]
    publish_run(block, "bench-writes", "Writes (deploy/bench-writes.sh)", write=not args.no_doc)


if __name__ == "__main__":
    main()
