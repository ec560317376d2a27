"""Scenario `fanout` of deploy/bench.sh: says at a fixed rate through gateway A while pollers
follow rooms on gateway B; the time from a say's scheduled send to the first poll on B that
returns it. deploy/bench-writes.sh's `budget` scenario runs the same (`fanout_run`,
`fanout_figures`)."""
import asyncio
import time
from dataclasses import dataclass, field

from geochat_support.protocol import AsyncPool, message_ids_and_texts
from geochat_support.stats import percentile

from .runner import create_rooms, fmt, log, q, start_sessions


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


if __name__ == "__main__":  # this scenario alone: the suite with --only fanout
    from .suite import main
    main("fanout")
