"""Scenario `say` of deploy/bench.sh: acknowledged `say` per second through one gateway with one
messaging instance, then two (rounds 1, 2, 2, 1)."""
import asyncio
import json
import random
import time

from geochat_support.protocol import AsyncPool

from .runner import create_rooms, get, log, q, say_all, start_sessions, wait_ready, wrk


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
    # The stack sizes the command topics for its instances (deploy/stack.sh, --partitions).
    partitions = int(stack.env.get("PARTITIONS", "8"))
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
            wait_partitions(stack.messaging[0], 1, partitions)
        else:
            stack.command("start", second)
            wait_ready(stack.messaging[1])
            wait_partitions(stack.messaging[1], 2, partitions, peer=stack.messaging[0])

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


def wait_partitions(url, members, partitions, peer=None, timeout=60):
    """Until the messaging commands' `partitions` are shared by `members` instances (this one holds some)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        held = len(json.loads(get(url + "/status"))["assignedPartitions"].get("geochat.messaging.commands", []))
        total = held
        if peer:
            total += len(json.loads(get(peer + "/status"))["assignedPartitions"].get("geochat.messaging.commands", []))
        if held > 0 and (members == 1 and held >= partitions or members == 2 and total >= partitions and held < partitions):
            time.sleep(1)
            return
        time.sleep(0.5)
    raise RuntimeError(f"partitions not rebalanced for {members} members")


if __name__ == "__main__":  # this scenario alone: the suite with --only say
    from .suite import main
    main("say")
