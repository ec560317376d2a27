"""Scenario `chats` of deploy/bench.sh: region queries over 10,000 rooms next to the hello-world
reference (alternating wrk rounds), then over the full count of rooms (`--rooms`, a million),
inserted by SQL, with the gateways restarted on them (their ready time and memory), again
next to hello world at 16 connections (the p99 is the worst round's)."""
import statistics

from .runner import (alternate_with_hello, ensure_million_rooms, log, region_paths, restart_gateways_timed, scrape,
                     wrk)


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
    # The first restart after the bulk insert loads the rooms SQL wrote (no event told the gateways);
    # the second is an operator's restart: from the snapshot the first one's stop wrote, and what changed since.
    results["chats_1m_ready_s"], results["chats_1m_gateway_rss_mb"] = restart_gateways_timed(stack)
    log(f"gateways restarted with {results['chats_rooms']} rooms: ready in {results['chats_1m_ready_s']:.1f}s, "
        f"{results['chats_1m_gateway_rss_mb']:.0f} MB")
    results["chats_1m_restart_s"], results["chats_1m_restart_rss_mb"] = restart_gateways_timed(stack)
    results["chats_1m_restart_from_snapshot"] = all(
        scrape(stack.operators(url)).get(("geochat_gateway_room_index_loads_total", 'source="snapshot"'), 0) == 1
        for url in stack.gateways)
    log(f"gateways restarted again: ready in {results['chats_1m_restart_s']:.1f}s "
        f"(from their snapshots: {results['chats_1m_restart_from_snapshot']}), "
        f"{results['chats_1m_restart_rss_mb']:.0f} MB")
    paths = region_paths(stack, 20000)
    wrk(gateway, paths[:2000], 3, 16)  # warm up
    before = [scrape(u) for u in stack.rooms]
    # Issue 39's target names 16 connections for both the p99 and the rate next to hello world's.
    rounds = alternate_with_hello(hello_url, gateway, paths, args, "chats", "chats round (1M rooms, 16 connections)",
                                  connections=16)
    after = [scrape(u) for u in stack.rooms]
    asked = sum(v for (name, labels), v in after[0].items() if name == "geochat_commands_total" and 'command="region"' in labels) \
        - sum(v for (name, labels), v in before[0].items() if name == "geochat_commands_total" and 'command="region"' in labels)
    chats = rounds["chats"]
    results.update({"chats_1m_rps": statistics.median(r["rps"] for r in chats),
                    "chats_1m_rounds": ", ".join(f"{r['rps']:.0f}" for r in chats),
                    "chats_1m_p50_ms": statistics.median(r["p50_ms"] for r in chats),
                    "chats_1m_p99_ms": max(r["p99_ms"] for r in chats),
                    "chats_1m_hello_rps": statistics.median(r["rps"] for r in rounds["hello"]),
                    "chats_1m_hello_rounds": ", ".join(f"{r['rps']:.0f}" for r in rounds["hello"]),
                    "chats_failed": sum(r["failed"] for r in chats), "chats_rooms_service_asked": asked})
    results["chats_1m_ratio"] = results["chats_1m_rps"] / results["chats_1m_hello_rps"]


if __name__ == "__main__":  # this scenario alone: the suite with --only chats
    from .suite import main
    main("chats")
