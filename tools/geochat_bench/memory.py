"""Scenario `memory` of deploy/bench.sh: gateway B's resident memory holding many sessions and
active rooms with their recent messages; with `--memory-rooms N`, also a region index of N rooms
(inserted by SQL, loaded by restarting the gateways first: issue 28's 1,000,000 rooms indexed)."""
import asyncio
import time

from geochat_support.protocol import AsyncPool, gather_limited

from .runner import ensure_million_rooms, log, q, restart_gateways_timed, rss_mb, scrape, start_sessions


def rooms_indexed(stack, url):
    return int(scrape(stack.operators(url)).get(("geochat_gateway_rooms_indexed", ""), -1))


def scenario_memory(stack, args, results):
    """Gateway B's resident memory holding many sessions and active rooms with their recent messages."""
    gw_b = stack.gateways[-1]
    instance = f"gateway-{len(stack.gateways)}"
    results["gateway_rss_start_mb"] = results.get("gateway_rss_start_mb", rss_mb(stack.pid(instance)))
    ensure_million_rooms(stack, max(args.active_rooms * 2, 20000, args.memory_rooms))
    if args.memory_rooms and rooms_indexed(stack, gw_b) < args.memory_rooms:
        # Rooms inserted by SQL reach a gateway's index only through its start-up load.
        _, results["memory_rss_after_load_mb"] = restart_gateways_timed(stack)
        indexed = rooms_indexed(stack, gw_b)
        results["memory_load_rooms_indexed"] = indexed
        # The index's share: the loaded gateway against the same gateway at the run's start (a few rooms).
        results["memory_index_bytes_per_room"] = \
            (results["memory_rss_after_load_mb"] - results["gateway_rss_start_mb"]) * 2 ** 20 / max(indexed, 1)
        log(f"gateways restarted: {indexed} rooms indexed, gateway B at {results['memory_rss_after_load_mb']:.0f} MB")
    pid = stack.pid(instance)
    sessions_target, rooms_target = args.sessions, args.active_rooms

    async def starts():
        # Every session through gateway B: a gateway holds the sessions it meets (those started through
        # another cost it nothing), and the target is one gateway holding 100,000.
        pool = AsyncPool(gw_b, 64)
        started = time.monotonic()
        made, i, batch = 0, 0, 2000
        while made < sessions_target and time.monotonic() - started < args.start_budget_s:
            ids = await start_sessions(pool, min(batch, sessions_target - made), f"mem{i}x", concurrency=64)
            made += len(ids)
            i += batch
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


if __name__ == "__main__":  # this scenario alone: the suite with --only memory
    from .suite import main
    main("memory")
