"""Scenario `idle` of deploy/bench.sh: idle polls (`messages` with past = the latest id, each
phone with its own `sessionid`, then the same without one) next to the hello-world reference, in
alternating wrk rounds."""
import asyncio
import statistics

from geochat_support.protocol import AsyncPool, gather_limited

from .runner import alternate_with_hello, create_rooms, q, say_all, start_sessions


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
    # The same polls without a session id (issue 39's second figure): no sign of life, no session lookup.
    anonymous = [q(cmd="messages", chatid=rooms[i % len(rooms)][0], past=rooms[i % len(rooms)][1])
                 for i in range(len(phones))]
    rounds = alternate_with_hello(hello_url, gateway, anonymous, args, "poll_nosession", "idle round, no sessionid")
    results["hello_nosession_rps"] = statistics.median(r["rps"] for r in rounds["hello"])
    results["poll_nosession_rps"] = statistics.median(r["rps"] for r in rounds["poll_nosession"])
    results["poll_nosession_rounds"] = ", ".join(f"{r['rps']:.0f}" for r in rounds["poll_nosession"])
    results["idle_poll_nosession_ratio"] = results["poll_nosession_rps"] / results["hello_nosession_rps"]


if __name__ == "__main__":  # this scenario alone: the suite with --only idle
    from .suite import main
    main("idle")
