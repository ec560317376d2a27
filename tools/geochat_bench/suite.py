#!/usr/bin/env python3
"""GeoChat benchmark scenarios against a running release stack (deploy/bench.sh
starts one and calls this). Prints a table and one `name: value` line per
headline figure, and writes the generated part of docs/benchmarks.md (and, after
the cost scenario, of docs/capacity.md).

  python -m geochat_bench.suite --stack-env .data/bench/stack.env --hello-url http://127.0.0.1:PORT [--only a,b]

One module per scenario (idle_polls, cost, chats, say, memory, fanout), the shared
runner (runner) and the doc writer (doc_sections); this module runs them in order,
reports and judges the targets.
"""
from geochat_support.stack import Stack

from . import chats, cost, doc_sections, fanout, idle_polls, memory, say
from .runner import (BULK_SQL_TIMEOUT_S, bench_parser, fmt, fresh_broker, load_facts, log, machine_facts, missing,
                     rss_mb, run_scenarios, utc_now)

# Fan-out last: at 1,000 posts/s it overloads this machine, and the backlog it leaves
# in the broker would slow every scenario after it.
SCENARIOS = ["idle", "cost", "chats", "say", "memory", "fanout"]

HEADLINES = ["idle_poll_ratio", "idle_poll_rps", "hello_rps", "fanout_p99_ms", "chats_1m_p99_ms", "say_rps_1",
             "say_rps_2", "gateway_rss_mb"]


def report(results, args, meta):
    r = results.get
    low = f"_at_{args.fanout_low_rate}"
    rows = [
        (f"idle polls (`messages`, past = latest, {r('idle_phones')} phones' `sessionid`s)", f"{fmt(r('poll_rps'), 0)} req/s (rounds {r('poll_rounds')}), "
         f"p50 {fmt(r('poll_p50_ms'), 2)} ms, p99 {fmt(r('poll_p99_ms'), 2)} ms",
         f"hello world {fmt(r('hello_rps'), 0)} req/s (rounds {r('hello_rounds')}), p50 "
         f"{fmt(r('hello_p50_ms'), 2)} ms, p99 {fmt(r('hello_p99_ms'), 2)} ms",
         f"≥ 75 % of hello world: {fmt(100 * r('idle_poll_ratio', float('nan')), 0)} %"),
        ("idle polls without a `sessionid`", f"{fmt(r('poll_nosession_rps'), 0)} req/s (rounds "
         f"{r('poll_nosession_rounds')})", f"hello world {fmt(r('hello_nosession_rps'), 0)} req/s (its own rounds)",
         f"≥ 85 % of hello world (issue 39): {fmt(100 * r('idle_poll_nosession_ratio', float('nan')), 0)} %"),
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
        (f"region queries (`chats`, {fmt(r('chats_rooms'))} rooms)", f"{fmt(r('chats_1m_rps'), 0)} req/s (rounds "
         f"{r('chats_1m_rounds')}), p50 {fmt(r('chats_1m_p50_ms'), 2)} ms, p99 {fmt(r('chats_1m_p99_ms'), 2)} ms "
         f"(16 connections; the worst round's p99)",
         f"hello world {fmt(r('chats_1m_hello_rps'), 0)} req/s (rounds {r('chats_1m_hello_rounds')}; "
         f"{fmt(100 * r('chats_1m_ratio', float('nan')), 0)} % of it); gateways restarted after the bulk insert: ready in {fmt(r('chats_1m_ready_s'))} s, "
         f"{fmt(r('chats_1m_gateway_rss_mb'))} MB RSS; restarted again (from the snapshot): ready in "
         f"{fmt(r('chats_1m_restart_s'))} s, {fmt(r('chats_1m_restart_rss_mb'))} MB RSS; region commands the rooms "
         f"service answered meanwhile: {fmt(r('chats_rooms_service_asked'), 0)}", "p99 ≤ 5 ms; ready ≤ 15 s"),
        ("post throughput (acknowledged `say`)", f"1 messaging: {fmt(r('say_rps_1'), 0)}/s (rounds "
         f"{r('say_rounds_1')}; p99 {fmt(r('say_p99_ms_1'))} ms); 2 messaging: {fmt(r('say_rps_2'), 0)}/s (rounds "
         f"{r('say_rounds_2')}; p99 {fmt(r('say_p99_ms_2'))} ms)",
         f"ratio 2/1: {fmt(r('say_ratio'), 2)}", "the second instance adds capacity"),
        ("gateway memory", f"{fmt(r('gateway_rss_mb'))} MB RSS with {r('memory_sessions_known')} sessions, "
         f"{r('memory_rooms_loaded')} rooms loaded ({args.messages_per_room} messages each), "
         f"{r('memory_rooms_indexed')} rooms in the region index",
         f"same gateway before the scenarios: {fmt(r('gateway_rss_start_mb'))} MB; sessions started at "
         f"{fmt(r('start_rps'), 0)}/s" + ("" if missing(r("memory_rss_after_load_mb")) else
                                          f"; after loading {r('memory_load_rooms_indexed')} rooms, before the "
                                          f"sessions: {fmt(r('memory_rss_after_load_mb'))} MB "
                                          f"({fmt(r('memory_index_bytes_per_room'), 0)} bytes a room)"),
         "≤ 300 MB"),
    ]
    table = ["| scenario | result | reference in the same run | target |", "| --- | --- | --- | --- |"]
    table += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    values = {"idle_poll_rps": r("poll_rps"), "hello_rps": r("hello_rps")}
    lines = [f"{name}: {fmt(values.get(name, r(name)), 3 if name == 'idle_poll_ratio' else 1)}" for name in HEADLINES]
    plans = []
    for path, plan in r("_plans", []):
        plans.append(f"`{path}`\n\n```\n" + "\n".join(plan) + "\n```")
    return table, lines, plans


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

    target = "region queries over 1,000,000 rooms: p99 ≤ 10 ms and ≥ 0.6 of hello world (16 connections; issue 39)"
    ratio, p99, rooms = r("chats_1m_ratio"), r("chats_1m_p99_ms"), r("chats_rooms") or 0
    if missing(ratio):
        rows.append((target, "—", "not measured"))
    else:
        figure = (f"p99 {fmt(p99, 2)} ms (the worst of {args.rounds} rounds); {ratio:.2f} of hello world "
                  f"({fmt(r('chats_1m_rps'), 0)} vs {fmt(r('chats_1m_hello_rps'), 0)} req/s, median of "
                  f"{args.rounds} alternating rounds), {rooms} rooms")
        verdict = ("not measured (fewer rooms than the target's)" if rooms < 1_000_000
                   else ("**met**" if p99 <= 10 else "**missed**") + " (p99), "
                   + ("**met**" if ratio >= 0.6 else "**missed**") + " (rate)")
        rows.append((target, figure, verdict))

    target = "region queries ≥ 50 % of hello world (10,000 rooms, same wrk settings)"
    ratio = r("chats_10k_ratio")
    if missing(ratio):
        rows.append((target, "—", "not measured"))
    else:
        rows.append((target, f"{ratio:.2f} ({fmt(r('chats_10k_chats_rps'), 0)} vs {fmt(r('chats_10k_hello_rps'), 0)} "
                     f"req/s, median of {args.rounds} alternating rounds)", "**met**" if ratio >= 0.5 else "**missed**"))

    target = "a restarted gateway ready in ≤ 15 s with 1,000,000 rooms (issue 28)"
    ready, rooms = r("chats_1m_restart_s"), r("chats_rooms") or 0
    if missing(ready):
        rows.append((target, "—", "not measured"))
    else:
        how = "from its snapshot" if r("chats_1m_restart_from_snapshot") else "**not** from its snapshot"
        rows.append((target, f"{fmt(ready)} s (stop, start, ready; {how}) with {rooms} rooms; "
                     f"{fmt(r('chats_1m_restart_rss_mb'))} MB RSS after; the first restart after the bulk insert, "
                     f"which reads the rooms SQL wrote: {fmt(r('chats_1m_ready_s'))} s",
                     "**met**" if ready <= 15 and rooms >= 1_000_000
                     else ("**missed**" if ready > 15 else "not measured (fewer rooms than the target's)")))

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
    # Issue 28's (issue 12 asked 400 MB): the region index of a million rooms beside 100,000
    # sessions (`--only memory --memory-rooms 1000000`, or the memory scenario after the chats one).
    rows.append(memory_row("gateway memory ≤ 300 MB (1,000,000 rooms indexed, 100,000 sessions)", 300,
                           f"{sessions} sessions and {indexed} rooms indexed",
                           sessions >= 100_000 and indexed >= 1_000_000))

    table = [f"Run of {when} (the \"Latest run\" section below). A verdict is met or missed only when the "
             "run measured the target's own conditions; otherwise it is \"not measured\".", "",
             "| target | figure | verdict |", "| --- | --- | --- |"]
    table += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return table


def write_doc(table, lines, plans, meta):
    generated = doc_sections.marked_block("bench", "deploy/bench.sh", [
        f"## Latest run: {meta['when']}", "",
        f"Machine: {meta['machine']}. Build: {meta['build']}. Load while it ran: {meta['load']}.", "",
        f"Command: `{meta['command']}`", "",
        *table, "", *[f"Scenario failed: {f}" for f in meta.get("failed", [])], "",
        "Headline figures:", "", "```", *lines, "```", "",
        "Region query plans (EXPLAIN ANALYZE of three of the boxes asked, as the rooms service queries):", "",
        *plans, ""])
    sections = []
    if meta.get("targets"):  # the verdicts only where the file has their markers
        sections.append(("bench-targets", doc_sections.marked_block("bench-targets", "deploy/bench.sh", meta["targets"]),
                         None))
    sections.append(("bench", generated, ""))
    doc_sections.write_marked(doc_sections.BENCHMARKS, sections, default="# Benchmarks\n\n")


def main(scenario=None):
    """The suite's run; `scenario`: that one alone (`python -m geochat_bench.chats` …, as `--only chats`)."""
    parser = bench_parser(__doc__ if scenario is None else f"Scenario {scenario} of deploy/bench.sh alone "
                          f"(the suite with --only {scenario}).", "bash deploy/bench.sh")
    parser.add_argument("--hello-url", required=True)
    parser.add_argument("--only", default=scenario or ",".join(SCENARIOS))
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
    parser.add_argument("--memory-rooms", type=int, default=0,
                        help="memory: also index this many rooms (inserted by SQL, gateways restarted to load them)")
    parser.add_argument("--start-budget-s", type=int, default=240)
    parser.add_argument("--keep-broker", action="store_true", help="no broker restart between scenarios")
    parser.add_argument("--build", default="release build")
    args = parser.parse_args()

    stack = Stack(args.stack_env, sql_timeout=BULK_SQL_TIMEOUT_S)
    results = {}
    meta = {"when": utc_now(),
            "machine": machine_facts(), "command": args.command, "build": args.build}
    load_before = load_facts()
    results["gateway_rss_start_mb"] = rss_mb(stack.pid(f"gateway-{len(stack.gateways)}"))
    only = args.only.split(",")
    run_scenarios([name for name in SCENARIOS if name in only], {
        "idle": lambda: idle_polls.scenario_idle(stack, args.hello_url, args, results),
        "cost": lambda: cost.scenario_cost(stack, args, results),
        "chats": lambda: chats.scenario_chats(stack, args.hello_url, args, results),
        "say": lambda: say.scenario_say(stack, args, results),
        "memory": lambda: memory.scenario_memory(stack, args, results),
        "fanout": lambda: fanout.scenario_fanout(stack, args, results),
    }, results, before=None if args.keep_broker else lambda _: fresh_broker(stack))
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
        print("\n".join(cost.cost_table(results)))
    if not args.no_doc:
        write_doc(table, lines, plans, meta)
        log("docs/benchmarks.md updated")
        if results.get("cost_idle"):
            cost.write_capacity(results, meta)
            log("docs/capacity.md updated")


if __name__ == "__main__":
    main()

