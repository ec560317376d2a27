"""Scenario `cost` of deploy/bench.sh: what one idle phone-second, and one `chats`, `say` and
`start`, cost Kafka and PostgreSQL; its table is the measured part of docs/capacity.md."""
import asyncio
import re
import time

from geochat_support.protocol import AsyncPool, gather_limited

from . import doc_sections
from .runner import create_rooms, log, q, region_paths, say_all, scrape, start_sessions


def cluster_counters(stack):
    """Kafka records and bytes written by topic, and PostgreSQL statements, summed over every instance."""
    records, written, statements = {}, {}, 0.0
    for url in stack.gateways + stack.messaging + stack.rooms + stack.env["SESSION_URLS"].split() \
            + stack.env["EXPIRY_URLS"].split():
        for (name, labels), value in scrape(stack.operators(url)).items():
            topic = re.search(r'topic="([^"]*)"', labels)
            if name == "geochat_kafka_produced_total" and topic:
                records[topic.group(1)] = records.get(topic.group(1), 0) + value
            elif name == "geochat_kafka_produced_bytes_total" and topic:
                written[topic.group(1)] = written.get(topic.group(1), 0) + value
            elif name == "geochat_pg_query_duration_seconds_count":
                statements += value
    return records, written, statements


def row_writes(stack):
    """Rows inserted, updated and deleted in the services' tables so far (PostgreSQL's own counters)."""
    time.sleep(1.5)  # the statistics reach the view within a second of a transaction's end
    return float(stack.sql("SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables")[0][0])


class CostWindow:
    """What the cluster wrote between `open` and `close`."""

    def __init__(self, stack):
        self.stack = stack
        self.records, self.bytes, self.statements = cluster_counters(stack)
        self.rows = row_writes(stack)

    def close(self):
        records, written, statements = cluster_counters(self.stack)
        return {
            "records": {t: records[t] - self.records.get(t, 0) for t in records if records[t] - self.records.get(t, 0)},
            "bytes": {t: written[t] - self.bytes.get(t, 0) for t in written if written[t] - self.bytes.get(t, 0)},
            "statements": statements - self.statements,
            "rows": row_writes(self.stack) - self.rows,
        }


def per(window, units):
    return {"records": {t: v / units for t, v in window["records"].items()},
            "bytes": {t: v / units for t, v in window["bytes"].items()},
            "statements": window["statements"] / units, "rows": window["rows"] / units}


async def set_up_phones(gateways, count, tag):
    """`count` sessions, each a member of one of `count // 10` rooms with one message: idle phones."""
    pools = [AsyncPool(url, 32) for url in gateways]
    owner = (await start_sessions(pools[0], 1, f"{tag}owner"))[0]
    rooms = await create_rooms(pools[0], owner, max(1, count // 10), tag)
    latest = await say_all(pools[0], owner, rooms, "the only message")
    phones = await start_sessions(pools[0], count, tag)
    joins = [q(cmd="join", sessionid=p, chatid=rooms[i % len(rooms)]) for i, p in enumerate(phones)]
    await gather_limited(pools[1 % len(pools)], joins, 32)
    for pool in pools:
        pool.close()
    return rooms, latest, phones


async def poll_phones(gateways, rooms, latest, phones, seconds):
    """Each phone polls its room once a second with its sessionid for `seconds`, each poll
    through the next of `gateways` (as a round-robin balancer spreads them).
    Answers (polls sent, failed, sent more than a second late, seconds taken)."""
    pools = [AsyncPool(url, 64) for url in gateways]
    sent, failed, late = 0, 0, 0
    started = time.monotonic()
    slot = 1.0 / len(phones)

    async def one(i, phone, pool):
        nonlocal sent, failed
        room = i % len(rooms)
        answer = await pool.get(q(cmd="messages", chatid=rooms[room], past=latest[room] or 0, sessionid=phone))
        sent += 1
        failed += 0 if answer.ok else 1

    tasks = set()
    tick = 0
    while time.monotonic() - started < seconds:
        # Phone i polls at second s + i/N: an even spread, once a second each.
        for i, phone in enumerate(phones):
            due = started + tick + i * slot
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            elif delay < -1:
                late += 1
            # Each second a phone's poll goes to the next gateway: every gateway meets every phone.
            task = asyncio.ensure_future(one(i, phone, pools[(i + tick) % len(pools)]))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        tick += 1
    await asyncio.gather(*tasks)
    for pool in pools:
        pool.close()
    return sent, failed, late, time.monotonic() - started


def scenario_cost(stack, args, results):
    """N idle phones, each in a room, each polling once a second with its sessionid
    through alternating gateways for `--cost-seconds`: what one phone-second costs
    Kafka and PostgreSQL. Then the same per `chats`, `say` and `start`."""
    count, seconds = args.cost_phones, args.cost_seconds
    gateways = stack.gateways
    rooms, latest, phones = asyncio.run(set_up_phones(gateways, count, "cost"))
    time.sleep(3)  # the set-up's own events and presence settle

    window = CostWindow(stack)
    sent, failed, late, took = asyncio.run(poll_phones(gateways, rooms, latest, phones, seconds))
    idle = window.close()
    phone_seconds = len(phones) * took
    results["cost_idle"] = per(idle, phone_seconds)
    results["cost_idle_meta"] = {"phones": len(phones), "seconds": took, "polls": sent, "failed": failed,
                                 "late": late, "poll_rate": sent / took}
    log(f"cost: {sent} polls in {took:.0f}s ({failed} failed, {late} late) from {len(phones)} phones")

    # Per request of other kinds: a batch of each, measured alone.
    async def batch(paths, pool_url):
        pool = AsyncPool(pool_url, 16)
        answers = await gather_limited(pool, paths, 16)
        pool.close()
        return sum(1 for a in answers if a.ok)

    region = region_paths(stack, 500)
    window = CostWindow(stack)
    ok = asyncio.run(batch(region, gateways[0]))
    results["cost_chats"] = per(window.close(), max(ok, 1))
    window = CostWindow(stack)
    says = [q(cmd="say", sessionid=phones[i], chatid=rooms[i % len(rooms)], msg=f"cost {i}") for i in range(300)]
    ok = asyncio.run(batch(says, gateways[0]))
    results["cost_say"] = per(window.close(), max(ok, 1))
    window = CostWindow(stack)
    ok = asyncio.run(batch([q(cmd="start", nick=f"coststart{i}") for i in range(300)], gateways[0]))
    results["cost_start"] = per(window.close(), max(ok, 1))


def cost_table(results):
    """The cost model's rows (docs/capacity.md): per idle phone-second and per request."""
    lines = ["| per | Kafka records (by topic) | Kafka bytes (by topic) | Kafka bytes, all | PostgreSQL statements | "
             "PostgreSQL row writes |", "| --- | --- | --- | --- | --- | --- |"]
    for key, label in (("cost_idle", "idle phone-second"), ("cost_chats", "`chats`"), ("cost_say", "`say`"),
                       ("cost_start", "`start`")):
        c = results.get(key)
        if not c:
            continue
        topics = lambda d: ", ".join(f"{t.replace('geochat.', '')} {v:.3g}" for t, v in sorted(d.items())) or "0"
        lines.append(f"| {label} | {topics(c['records'])} | {topics(c['bytes'])} | {sum(c['bytes'].values()):.3g} | "
                     f"{c['statements']:.3g} | {c['rows']:.3g} |")
    return lines


def write_capacity(results, meta):
    """The measured part of docs/capacity.md, between its markers (left as it is when they are missing)."""
    m = results.get("cost_idle_meta", {})
    generated = doc_sections.marked_block("cost", "deploy/bench.sh --only cost", [
        f"Measured {meta['when']} on {meta['machine']} ({meta['build']}), command `{meta['command']}`: "
        f"{m.get('phones')} phones polling once a second each with its `sessionid` through "
        f"{len(results.get('_gateways', [])) or 2} gateways for {m.get('seconds', 0):.0f} s "
        f"({m.get('polls')} polls, {m.get('poll_rate', 0):.0f}/s, {m.get('failed')} failed, {m.get('late')} sent "
        "more than a second late); then 500 `chats`, 300 `say`, 300 `start`, each batch alone.", "",
        *cost_table(results), ""])
    doc_sections.write_marked(doc_sections.CAPACITY, [("cost", generated, None)])


if __name__ == "__main__":  # this scenario alone: the suite with --only cost
    from .suite import main
    main("cost")
