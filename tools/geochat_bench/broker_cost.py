"""The dev broker's own costs, measured (deploy/bench-broker.sh): Tansu's CPU per Fetch request
as a function of the partitions asked and the records stored, per Produce request, and per topic
made, on a private Tansu the wrapper starts (fresh, on a port of its own) for each step.

How a figure is taken: a librdkafka client's statistics (`statistics.interval.ms`) count the
requests it sent (the per-broker `req` counters of the broker with `nodeid >= 0`), and in the same
statistics callback Tansu's CPU is read from /proc/PID/stat (utime + stime, which covers all its
threads; clock ticks of 1/SC_CLK_TCK s). A window runs from one callback to a later one, so both
counts cover the same interval. /proc/PID/stat is exact to 10 ms per reading, so each figure also
carries the sum of the threads' /proc/PID/task/*/schedstat (nanoseconds, and the number of times
a thread was put on a CPU, "wake-ups"), which the report's fits use, and the CPU the rest of the
machine used meanwhile (/proc/stat less Tansu: another build on this machine inflates the figures).
For producers and admin requests the CPU is read at the ends of the loop that sends them and the
requests from statistics taken while the client is quiet before and after.

Steps (one broker each; `measure` runs one and writes its JSON, `report` prints and documents them):
  partitions            idle fetch (consumer at the end, no group) of 1, 2, 4, 8, 32 partitions of one
                        topic, fetch waits of 10 and 100 ms (and 500 ms for 1, 8 and 32 partitions)
  topics-vs-partitions  one topic of 4 partitions next to 4 topics of 1 partition (10 and 100 ms)
  stored                a 1-partition topic holding 0, 1,000, 10,000, 50,000 batches: idle fetch at the
                        end, and fetches while a producer adds 50 records/s (wait 50 ms)
  produce               one record per Produce request, one request at a time (acks=all), plain and idempotent
  topics                CreateTopics (1 partition) ×200 and ×800 more, the idle 1-partition fetch at 1, 201 and
                        1,001 topics, DeleteTopics ×1,000 and the idle fetch after

  python -m geochat_bench.broker_cost measure --step STEP --brokers HOST:PORT --broker-pid PID --out FILE.json
  python -m geochat_bench.broker_cost report --dir .data/bench-broker [--command CMD] [--doc docs/benchmarks.md]
"""
import argparse
import json
import os
import subprocess
import sys
import time

from confluent_kafka import OFFSET_END, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from .doc_sections import marked_block, write_marked
from .runner import machine_facts, utc_now

TICKS = os.sysconf("SC_CLK_TCK")
STEPS = ["partitions", "topics-vs-partitions", "stored", "produce", "topics"]
DOC_NAME = "broker-cost"
WRITER = "deploy/bench-broker.sh"
STATS_MS = 1000  # statistics.interval.ms of every client
WARM_SAMPLES = 2  # statistics callbacks skipped before a consumer's window (ListOffsets, first fetches)
IDLE_SECONDS = {10: 10.0, 50: 12.0, 100: 15.0, 500: 20.0}  # window per fetch wait (≥ 40 fetches)


def log(text):
    print(f"[broker-cost {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- Tansu's CPU

def broker_cpu(pid):
    """Tansu's CPU so far: ticks (utime + stime of /proc/PID/stat, all threads, exited ones
    included), and the sum over its live threads of schedstat's run time (ns) and run slices."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    sched_ns = slices = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                run, _wait, count = f.read().split()[:3]
            sched_ns += int(run)
            slices += int(count)
        except (OSError, ValueError):
            continue
    with open("/proc/stat") as f:
        cpu = [int(v) for v in f.readline().split()[1:]]
    busy = sum(cpu[:8]) - cpu[3] - cpu[4]  # all but idle and iowait (guest time is within user)
    return {"ticks": int(fields[11]) + int(fields[12]), "sched_ns": sched_ns, "slices": slices, "busy": busy}


def cpu_between(a, b):
    """CPU used between two readings: ms from /proc/PID/stat, ms from schedstat, wake-ups, and
    the CPU the rest of the machine used meanwhile (ms; /proc/stat less Tansu's own)."""
    cpu_ms = (b["ticks"] - a["ticks"]) * 1000 / TICKS
    return {"cpu_ms": cpu_ms, "sched_ms": (b["sched_ns"] - a["sched_ns"]) / 1e6,
            "wakeups": b["slices"] - a["slices"], "others_ms": (b["busy"] - a["busy"]) * 1000 / TICKS - cpu_ms}


def load_now():
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    builds = subprocess.run(["pgrep", "-c", "swift-frontend"], capture_output=True, text=True).stdout.strip()
    return {"loadavg": load, "swift_frontend": int(builds or 0)}


class Meter:
    """A client's statistics callback: each call keeps (time, the request counters of the broker
    with nodeid >= 0, Tansu's CPU read then)."""

    def __init__(self, pid):
        self.pid = pid
        self.samples = []

    def __call__(self, raw):
        data = json.loads(raw)
        brokers = [b for b in data.get("brokers", {}).values() if b.get("nodeid", -1) >= 0]
        if not brokers:
            return
        self.samples.append({"t": time.monotonic(), "req": dict(brokers[0].get("req", {})),
                             "cpu": broker_cpu(self.pid)})

    def config(self):
        return {"statistics.interval.ms": STATS_MS, "stats_cb": self}


def request_deltas(a, b):
    return {k: v - a["req"].get(k, 0) for k, v in b["req"].items() if v - a["req"].get(k, 0)}


def wait_samples(meter, count, poll, deadline_s=30.0):
    """Polls (poll(timeout)) until `meter` holds `count` samples."""
    deadline = time.monotonic() + deadline_s
    while len(meter.samples) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"no statistics from the client after {deadline_s:.0f} s")
        poll(0.05)


def quiet_requests(meter, poll):
    """The client's request counters once it is quiet: the next statistics sample."""
    seen = len(meter.samples)
    wait_samples(meter, seen + 1, poll)
    return meter.samples[-1]


# ---------------------------------------------------------------- clients

class Bench:
    def __init__(self, brokers, pid):
        self.brokers = brokers
        self.pid = pid
        self.admin = AdminClient({"bootstrap.servers": brokers})
        self.seq = 0

    def name(self, prefix):
        self.seq += 1
        return f"bench-{prefix}-{self.seq}"

    def create_topic(self, name, partitions):
        for future in self.admin.create_topics([NewTopic(name, partitions, 1)], operation_timeout=30).values():
            future.result(timeout=60)

    def consumer(self, wait_ms, meter):
        return Consumer({"bootstrap.servers": self.brokers, "group.id": "bench-broker-cost",
                         "enable.auto.commit": False, "enable.auto.offset.store": False,
                         "enable.metrics.push": False, "fetch.wait.max.ms": wait_ms, **meter.config()})

    def producer(self, meter, idempotent=False):
        return Producer({"bootstrap.servers": self.brokers, "acks": "all", "linger.ms": 0,
                         "batch.num.messages": 1, "enable.idempotence": idempotent,
                         "enable.metrics.push": False, **meter.config()})

    def baseline(self, seconds=5.0):
        """Tansu alone (no client connected besides the idle admin handle)."""
        a, t0 = broker_cpu(self.pid), time.monotonic()
        time.sleep(seconds)
        b, wall = broker_cpu(self.pid), time.monotonic() - t0
        cpu = cpu_between(a, b)
        return {"seconds": wall, **cpu, "cores": cpu["cpu_ms"] / 1000 / wall,
                "sched_cores": cpu["sched_ms"] / 1000 / wall}

    def idle_fetch(self, partitions, wait_ms, seconds=None, label=""):
        """A group-less consumer assigned `partitions` ([(topic, partition)]) at the end, fetching
        with `wait_ms`: Fetch requests and Tansu's CPU over a window of `seconds`."""
        seconds = seconds or IDLE_SECONDS.get(wait_ms, 15.0)
        meter = Meter(self.pid)
        consumer = self.consumer(wait_ms, meter)
        consumer.assign([TopicPartition(t, p, OFFSET_END) for t, p in partitions])
        try:
            wait_samples(meter, WARM_SAMPLES + 1, consumer.poll)
            start = meter.samples[WARM_SAMPLES]
            deadline = start["t"] + seconds + 10
            while meter.samples[-1]["t"] < start["t"] + seconds - 0.5:
                if time.monotonic() > deadline:
                    raise RuntimeError("consumer statistics stopped")
                consumer.poll(0.02)
            end = meter.samples[-1]
        finally:
            consumer.close()
        row = window_row(start, end)
        row.update({"partitions": len(partitions), "topics": len({t for t, _ in partitions}), "wait_ms": wait_ms,
                    "label": label})
        log(f"idle fetch {label or ''} P={row['partitions']} wait={wait_ms} ms: {row['fetches']} fetches, "
            f"{row['ms_per_fetch']:.3f} ms/fetch (schedstat {row['sched_ms_per_fetch']:.3f}), "
            f"{row['cores']:.3f} cores")
        return row


def window_row(start, end):
    seconds = end["t"] - start["t"]
    requests = request_deltas(start, end)
    fetches = requests.get("Fetch", 0)
    cpu = cpu_between(start["cpu"], end["cpu"])
    per = (lambda v: v / fetches) if fetches else (lambda v: float("nan"))
    return {"seconds": seconds, "fetches": fetches, "fetches_per_s": fetches / seconds,
            "other_requests": {k: v for k, v in requests.items() if k != "Fetch"}, **cpu,
            "ms_per_fetch": per(cpu["cpu_ms"]), "sched_ms_per_fetch": per(cpu["sched_ms"]),
            "wakeups_per_fetch": per(cpu["wakeups"]), "cores": cpu["cpu_ms"] / 1000 / seconds,
            "others_cores": cpu["others_ms"] / 1000 / seconds}


# ---------------------------------------------------------------- steps

def step_partitions(bench, out):
    """Every partition count at waits of 10 and 100 ms, and 1, 8 and 32 at 500 ms (the period and
    the cost of a long wait); partition counts interleaved so that a drifting machine load does not
    tilt the fit."""
    topics = {}
    for p in (1, 2, 4, 8, 32):
        topics[p] = bench.name(f"p{p}")
        bench.create_topic(topics[p], p)
    rows = []
    for wait, counts in ((10, (1, 32, 2, 8, 4)), (100, (1, 32, 2, 8, 4)), (500, (1, 32, 8))):
        for p in counts:
            rows.append(bench.idle_fetch([(topics[p], i) for i in range(p)], wait))
    out["idle"] = sorted(rows, key=lambda r: (r["wait_ms"], r["partitions"]))


def step_topics_vs_partitions(bench, out):
    one = bench.name("four-partitions")
    bench.create_topic(one, 4)
    four = [bench.name("one-partition") for _ in range(4)]
    for t in four:
        bench.create_topic(t, 1)
    rows = []
    for wait in (10, 100):
        rows.append(bench.idle_fetch([(one, i) for i in range(4)], wait, label="1 topic × 4 partitions"))
        rows.append(bench.idle_fetch([(t, 0) for t in four], wait, label="4 topics × 1 partition"))
    out["shape"] = rows


def produce_many(bench, producer, meter, topic, count, deadline_s=240.0):
    """`count` records, each its own batch and Produce request (batch.num.messages=1, linger.ms=0),
    sent as fast as the producer pipelines them. Tansu's CPU per Produce request."""
    before_req = quiet_requests(meter, producer.poll)
    a, t0 = broker_cpu(bench.pid), time.monotonic()
    deadline = t0 + deadline_s
    payload = b"r" * 100
    for i in range(count):
        while True:
            try:
                producer.produce(topic, payload)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 1000 == 999:
            producer.poll(0)
            if time.monotonic() > deadline:
                raise RuntimeError(f"producing {count} batches took over {deadline_s:.0f} s")
    remaining = producer.flush(deadline_s)
    if remaining:
        raise RuntimeError(f"{remaining} records undelivered")
    b, wall = broker_cpu(bench.pid), time.monotonic() - t0
    after_req = quiet_requests(meter, producer.poll)
    produces = request_deltas(before_req, after_req).get("Produce", 0)
    cpu = cpu_between(a, b)
    return {"records": count, "produce_requests": produces, "seconds": wall, **cpu,
            "ms_per_produce": cpu["cpu_ms"] / produces if produces else float("nan"),
            "sched_ms_per_produce": cpu["sched_ms"] / produces if produces else float("nan")}


def high_watermark(bench, topic):
    c = Consumer({"bootstrap.servers": bench.brokers, "group.id": "bench-broker-cost", "enable.metrics.push": False})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
    finally:
        c.close()


def paced_producer_alone(bench, topic, rate, seconds):
    """Tansu's CPU per second while a producer adds `rate` records a second, alone."""
    meter = Meter(bench.pid)
    producer = bench.producer(meter)
    producer.produce(topic, b"warm")
    producer.flush(10)
    before_req = quiet_requests(meter, producer.poll)
    a, t0 = broker_cpu(bench.pid), time.monotonic()
    sent, next_at = 0, t0
    while time.monotonic() < t0 + seconds:
        now = time.monotonic()
        if now >= next_at:
            producer.produce(topic, b"p" * 100)
            sent += 1
            next_at += 1 / rate
        producer.poll(max(0.0, min(0.02, next_at - time.monotonic())))
    producer.flush(10)
    b, wall = broker_cpu(bench.pid), time.monotonic() - t0
    after_req = quiet_requests(meter, producer.poll)
    produces = request_deltas(before_req, after_req).get("Produce", 0)
    cpu = cpu_between(a, b)
    return {"seconds": wall, "records": sent, "produce_requests": produces, **cpu,
            "cpu_ms_per_s": cpu["cpu_ms"] / wall, "sched_ms_per_s": cpu["sched_ms"] / wall,
            "ms_per_produce": cpu["cpu_ms"] / produces if produces else float("nan")}


def reading_fetch(bench, topic, wait_ms, rate, seconds, producer_alone, empty):
    """A consumer at the end of `topic` while a producer adds `rate` records a second: a fetch
    that finds records lists every stored batch of the partition. Tansu's CPU less the producer's
    own (`producer_alone`, per second) and less the idle cost (`empty`) of the fetches that found
    nothing, over the fetches that returned records; those are counted on the consumer's side
    (each consume() call that returned messages more than 3 ms after the last is one response)."""
    meter = Meter(bench.pid)
    consumer = bench.consumer(wait_ms, meter)
    consumer.assign([TopicPartition(topic, 0, OFFSET_END)])
    pmeter = Meter(bench.pid)
    producer = bench.producer(pmeter)
    arrivals = []  # (time, samples seen then) per message
    next_at = time.monotonic()
    start = end = None
    deadline = time.monotonic() + seconds + 30
    try:
        while True:
            now = time.monotonic()
            if now > deadline:
                raise RuntimeError("reading consumer: statistics stopped")
            if now >= next_at:
                producer.produce(topic, b"p" * 100)
                next_at += 1 / rate
            producer.poll(0)
            messages = consumer.consume(500, max(0.0, min(0.005, next_at - time.monotonic())))
            got = time.monotonic()
            for m in messages:
                if m.error() is None:
                    arrivals.append((got, len(meter.samples)))
            if start is None and len(meter.samples) > WARM_SAMPLES:
                start = meter.samples[WARM_SAMPLES]
            if start is not None and meter.samples[-1]["t"] >= start["t"] + seconds - 0.5:
                end = meter.samples[-1]
                break
    finally:
        consumer.close()
        producer.flush(10)
    row = window_row(start, end)
    inside = [t for t, n in arrivals if start["t"] <= t <= end["t"]]
    responses = sum(1 for i, t in enumerate(inside) if i == 0 or t - inside[i - 1] > 0.003)
    producer_ms = producer_alone["sched_ms_per_s"] * row["seconds"]
    producer_cpu_ms = producer_alone["cpu_ms_per_s"] * row["seconds"]
    fetches = row["fetches"]
    empty_fetches = max(0, fetches - responses)
    with_records = responses or float("nan")
    row.update({
        "wait_ms": wait_ms, "records_read": len(inside), "fetches_with_records": responses,
        "producer_cpu_ms": producer_cpu_ms, "producer_sched_ms": producer_ms,
        # Tansu's CPU for the fetches alone, less what the empty ones (if any) cost idle
        "ms_per_fetch_net": (row["cpu_ms"] - producer_cpu_ms) / fetches if fetches else float("nan"),
        "ms_per_record_fetch": (row["cpu_ms"] - producer_cpu_ms - empty_fetches * empty["ms_per_fetch"]) / with_records,
        "sched_ms_per_record_fetch": (row["sched_ms"] - producer_ms - empty_fetches * empty["sched_ms_per_fetch"])
        / with_records,
    })
    return row


def step_stored(bench, out, targets=(0, 1000, 10000, 50000), wait_ms=50, rate=50):
    topic = bench.name("stored")
    bench.create_topic(topic, 1)
    meter = Meter(bench.pid)
    producer = bench.producer(meter)
    rows, growth = [], []
    for target in targets:
        stored = high_watermark(bench, topic)
        if target > stored:
            log(f"stored: producing {target - stored} batches (to {target})")
            g = produce_many(bench, producer, meter, topic, target - stored)
            g["from"], g["to"] = stored, high_watermark(bench, topic)
            growth.append(g)
            log(f"stored: {g['produce_requests']} Produce requests for {g['records']} records in {g['seconds']:.1f} s, "
                f"{g['ms_per_produce']:.3f} ms/request")
        stored = high_watermark(bench, topic)
        empty = bench.idle_fetch([(topic, 0)], wait_ms, label=f"{stored} stored")
        alone = paced_producer_alone(bench, topic, rate, 10.0)
        stored_reading = high_watermark(bench, topic)
        reading = reading_fetch(bench, topic, wait_ms, rate, 15.0, alone, empty)
        log(f"stored {stored_reading}: idle {empty['ms_per_fetch']:.3f} ms/fetch; reading "
            f"{reading['fetches']} fetches ({reading['fetches_with_records']} with records), "
            f"{reading['ms_per_record_fetch']:.3f} ms per fetch with records "
            f"(schedstat {reading['sched_ms_per_record_fetch']:.3f}); producer alone {alone['ms_per_produce']:.3f} ms/produce")
        rows.append({"target": target, "stored": stored, "stored_reading": stored_reading, "idle": empty,
                     "producer_alone": alone, "reading": reading})
    producer.flush(10)
    out["stored"] = rows
    out["growth"] = growth


def produce_one_at_a_time(bench, count, idempotent):
    topic = bench.name("produce-idempotent" if idempotent else "produce")
    bench.create_topic(topic, 1)
    meter = Meter(bench.pid)
    producer = bench.producer(meter, idempotent=idempotent)
    producer.produce(topic, b"warm")
    producer.flush(10)
    before_req = quiet_requests(meter, producer.poll)
    a, t0 = broker_cpu(bench.pid), time.monotonic()
    payload = b"q" * 100
    for _ in range(count):
        producer.produce(topic, payload)
        if producer.flush(10):
            raise RuntimeError("a record undelivered after 10 s")
    b, wall = broker_cpu(bench.pid), time.monotonic() - t0
    after_req = quiet_requests(meter, producer.poll)
    requests = request_deltas(before_req, after_req)
    produces = requests.get("Produce", 0)
    cpu = cpu_between(a, b)
    row = {"idempotent": idempotent, "records": count, "produce_requests": produces, "seconds": wall,
           "requests_per_s": produces / wall, "other_requests": {k: v for k, v in requests.items() if k != "Produce"},
           **cpu, "ms_per_produce": cpu["cpu_ms"] / produces, "sched_ms_per_produce": cpu["sched_ms"] / produces,
           "wakeups_per_produce": cpu["wakeups"] / produces, "round_trip_ms": wall * 1000 / count}
    log(f"produce{' idempotent' if idempotent else ''}: {produces} requests in {wall:.1f} s, "
        f"{row['ms_per_produce']:.3f} ms/request (schedstat {row['sched_ms_per_produce']:.3f})")
    return row


def step_produce(bench, out, count=5000):
    out["produce"] = [produce_one_at_a_time(bench, count, False), produce_one_at_a_time(bench, count, True)]


def admin_loop(bench, names, delete=False, deadline_s=300.0):
    """One CreateTopics (1 partition) or DeleteTopics request per name, one at a time."""
    meter = Meter(bench.pid)
    admin = AdminClient({"bootstrap.servers": bench.brokers, "enable.metrics.push": False, **meter.config()})
    admin.list_topics(timeout=10)
    before_req = quiet_requests(meter, admin.poll)
    a, t0 = broker_cpu(bench.pid), time.monotonic()
    for name in names:
        if delete:
            futures = admin.delete_topics([name], operation_timeout=30)
        else:
            futures = admin.create_topics([NewTopic(name, 1, 1)], operation_timeout=30)
        for future in futures.values():
            future.result(timeout=60)
        if time.monotonic() - t0 > deadline_s:
            raise RuntimeError(f"{'DeleteTopics' if delete else 'CreateTopics'} loop over {deadline_s:.0f} s")
    b, wall = broker_cpu(bench.pid), time.monotonic() - t0
    after_req = quiet_requests(meter, admin.poll)
    requests = request_deltas(before_req, after_req)
    kind = "DeleteTopics" if delete else "CreateTopics"
    sent = requests.get(kind, 0) or len(names)
    cpu = cpu_between(a, b)
    row = {"kind": kind, "topics": len(names), "requests": sent, "counted_by_stats": bool(requests.get(kind)),
           "other_requests": {k: v for k, v in requests.items() if k != kind}, "seconds": wall, **cpu,
           "ms_per_request": cpu["cpu_ms"] / sent, "sched_ms_per_request": cpu["sched_ms"] / sent,
           "wall_ms_per_request": wall * 1000 / sent}
    log(f"{kind} ×{len(names)}: {row['ms_per_request']:.3f} ms/request "
        f"(schedstat {row['sched_ms_per_request']:.3f}), {wall:.1f} s")
    return row


def step_topics(bench, out, first=200, total=1000):
    probe = bench.name("probe")
    bench.create_topic(probe, 1)
    idle, admin = [], []

    def measure_idle(label, topics_present):
        for wait in (10, 100):
            row = bench.idle_fetch([(probe, 0)], wait, label=label)
            row["topics_present"] = topics_present
            idle.append(row)

    measure_idle("1 topic", 1)
    made = [f"bench-made-{i:04d}" for i in range(total)]
    admin.append(admin_loop(bench, made[:first]))
    admin[-1]["topics_before"] = 1
    measure_idle(f"{first + 1:,} topics", first + 1)
    admin.append(admin_loop(bench, made[first:]))
    admin[-1]["topics_before"] = first + 1
    measure_idle(f"{total + 1:,} topics", total + 1)
    admin.append(admin_loop(bench, made, delete=True))
    admin[-1]["topics_before"] = total + 1
    measure_idle(f"1 topic, the {total:,} deleted", 1)
    out["topic_idle"] = idle
    out["admin"] = admin


def measure(args):
    with open(f"/proc/{args.broker_pid}/comm") as f:
        comm = f.read().strip()
    exe = os.readlink(f"/proc/{args.broker_pid}/exe")
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    out = {"step": args.step, "brokers": args.brokers, "broker_pid": args.broker_pid, "broker_comm": comm,
           "tansu_version": version, "load_start": load_now(), "started": utc_now()}
    bench = Bench(args.brokers, args.broker_pid)
    bench.admin.list_topics(timeout=20)
    out["baseline"] = bench.baseline()
    log(f"step {args.step}: Tansu {version} pid {args.broker_pid} ({comm}) on {args.brokers}; alone "
        f"{out['baseline']['sched_cores']:.4f} cores; load {' '.join(out['load_start']['loadavg'])}")
    t0 = time.monotonic()
    {"partitions": step_partitions, "topics-vs-partitions": step_topics_vs_partitions, "stored": step_stored,
     "produce": step_produce, "topics": step_topics}[args.step](bench, out)
    out["seconds"] = time.monotonic() - t0
    out["load_end"] = load_now()
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    log(f"step {args.step} took {out['seconds']:.0f} s -> {args.out}")


# ---------------------------------------------------------------- report

def fit(points):
    """Least squares y = a + b·x over [(x, y)]."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
    a = my - b * mx
    worst = max(abs(y - (a + b * x)) for x, y in points)
    return a, b, worst


def f3(v):
    return "n/a" if v is None or v != v else f"{v:.3f}"


def f2(v):
    return "n/a" if v is None or v != v else f"{v:.2f}"


def n0(v):
    return f"{v:,.0f}"


def table(header, rows):
    return ["| " + " | ".join(header) + " |", "| " + " | ".join("---:" if i else "---" for i in range(len(header))) + " |",
            *["| " + " | ".join(r) + " |" for r in rows], ""]


def topics_span(r):
    after = r["topics_before"] + (-r["topics"] if r["kind"] == "DeleteTopics" else r["topics"])
    return f"{n0(r['topics_before'])} → {n0(after)}"


def load_text(load):
    return f"{' / '.join(load['loadavg'])} ({load['swift_frontend']} swift-frontend)"


def idle_rows(runs, wait, partitions=1):
    """Every idle-fetch row of the run at `wait` ms over one topic of `partitions` partitions."""
    rows = [r for r in runs.get("partitions", {}).get("idle", []) if r["wait_ms"] == wait and r["partitions"] == partitions]
    rows += [r for r in runs.get("topics-vs-partitions", {}).get("shape", [])
             if r["wait_ms"] == wait and r["partitions"] == partitions and r["topics"] == 1]
    if partitions == 1:
        rows += [r for r in runs.get("topics", {}).get("topic_idle", []) if r["wait_ms"] == wait]
    return rows


def reading_net(r):
    """Tansu's CPU per Fetch while reading, less the producer's own (schedstat ms)."""
    x = r["reading"]
    return (x["sched_ms"] - x["producer_sched_ms"]) / x["fetches"] if x["fetches"] else float("nan")


def build_report(runs, command, load_start, load_end):
    lines, summary, model = [], {}, {}
    any_run = next(iter(runs.values()))
    loads = [float(r[k]["loadavg"][0]) for r in runs.values() for k in ("load_start", "load_end")]
    measured_at = min((r.get("started") for r in runs.values() if r.get("started")), default=utc_now())
    lines += [f"Measured {measured_at} by `{command}`: {machine_facts()}, nproc {os.cpu_count()}; "
              f"{any_run['tansu_version']}, memory storage (`memory://tansu/`), a fresh broker for each step; "
              "the clients are confluent-kafka's librdkafka 2.16.",
              "",
              f"`uptime` at the start: {load_start.strip() or 'n/a'}; at the end: {load_end.strip() or 'n/a'}. "
              "Load average (1 / 5 / 15 min) per step, at its start → end: "
              + ", ".join(f"{name} {load_text(r['load_start'])} → {load_text(r['load_end'])}" for name, r in runs.items())
              + "."]
    band, repeats = {}, []
    for wait in (10, 100):
        rows = idle_rows(runs, wait)
        if len(rows) >= 2:
            band[wait] = (min(r["sched_ms_per_fetch"] for r in rows), max(r["sched_ms_per_fetch"] for r in rows), len(rows))
        for p in (2, 4, 8, 32):  # the same fetch measured again in another step
            rows = idle_rows(runs, wait, p)
            if len(rows) >= 2:
                repeats.append((wait, p, [r["sched_ms_per_fetch"] for r in rows]))
    summary["band"] = band
    summary["repeats"] = repeats
    if max(loads) > 1:
        text = (f"**The load average was above 1 during the run (up to {max(loads):.2f}): this 2-core machine was "
                "shared with another engineer's builds and test stacks.** What is measured is Tansu's own CPU time "
                "per request, which waiting for a CPU does not add to, but a busy machine still inflates it (caches, "
                "the sibling core's work), and the `other load` column (the rest of the machine's CPU during each "
                "window: /proc/stat less Tansu) shows how busy it was. ")
        if band:
            text += ("The noise this leaves shows in the same measurement repeated across the run: the idle "
                     "1-partition fetch cost " + "; ".join(f"{lo:.2f}-{hi:.2f} ms at {w} ms ({n} windows)"
                                                         for w, (lo, hi, n) in band.items()))
            if repeats:
                text += ("; " + "; ".join(f"the {p}-partition fetch at {w} ms "
                                          + " and ".join(f"{v:.2f}" for v in values) + " ms"
                                          for w, p, values in repeats))
            text += ". Differences within such spreads are not findings."
        lines += ["", text]
    baselines = ", ".join(f"{name} {r['baseline']['sched_cores']:.4f}" for name, r in runs.items())
    lines += ["", f"Tansu alone (5 s, no client) used {baselines} cores (not subtracted). `ms/fetch` is "
                  "/proc/PID/stat utime + stime over the window (10 ms ticks: ±20 ms per window), `schedstat` the "
                  "same from the threads' schedstat (ns), which the fits use; `wake-ups` are the times a Tansu "
                  "thread was put on a CPU, per request.", ""]

    if "partitions" in runs:
        rows = runs["partitions"]["idle"]
        lines += ["**Idle fetch by partitions** (one topic, a consumer without a group at the end of every "
                  "partition, nothing produced):", ""]
        lines += table(["partitions", "fetch wait ms", "fetches", "fetches/s", "broker ms/fetch",
                        "ms per partition-fetch", "broker cores", "ms/fetch (schedstat)", "wake-ups/fetch",
                        "other load, cores"],
                       [[str(r["partitions"]), str(r["wait_ms"]), n0(r["fetches"]), f"{r['fetches_per_s']:.1f}",
                         f3(r["ms_per_fetch"]), f3(r["ms_per_fetch"] / r["partitions"]), f3(r["cores"]),
                         f3(r["sched_ms_per_fetch"]), f"{r['wakeups_per_fetch']:.1f}", f2(r["others_cores"])]
                        for r in rows])
        for wait in sorted({r["wait_ms"] for r in rows}):
            at = [r for r in rows if r["wait_ms"] == wait]
            if len(at) < 2:
                continue
            a, b, worst = fit([(r["partitions"], r["sched_ms_per_fetch"]) for r in at])
            ta, tb, _ = fit([(r["partitions"], r["ms_per_fetch"]) for r in at])
            period = sum(r["seconds"] for r in at) / sum(r["fetches"] for r in at)
            wakeups = sum(r["wakeups_per_fetch"] for r in at) / len(at)
            model[wait] = {"a": a, "b": b, "worst": worst, "ta": ta, "tb": tb, "period_ms": period * 1000,
                           "wakeups": wakeups}
        if model:
            lines += ["Fit, broker ms per fetch = a + b × partitions (least squares, schedstat): "
                      + "; ".join(f"wait {w} ms: a = {m['a']:.3f}, b = {m['b']:.4f} (worst row off by "
                                  f"{m['worst']:.3f} ms; from /proc/PID/stat a = {m['ta']:.3f}, b = {m['tb']:.4f}; "
                                  f"one fetch every {m['period_ms']:.1f} ms)" for w, m in sorted(model.items())) + ".",
                      ""]

    if "topics-vs-partitions" in runs:
        rows = runs["topics-vs-partitions"]["shape"]
        lines += ["**Topics or partitions** (the same 4 partitions asked as one topic or as 4 topics):", ""]
        lines += table(["consumer reads", "fetch wait ms", "fetches", "fetches/s", "broker ms/fetch",
                        "ms/fetch (schedstat)", "wake-ups/fetch", "other load, cores"],
                       [[r["label"], str(r["wait_ms"]), n0(r["fetches"]), f"{r['fetches_per_s']:.1f}",
                         f3(r["ms_per_fetch"]), f3(r["sched_ms_per_fetch"]), f"{r['wakeups_per_fetch']:.1f}",
                         f2(r["others_cores"])] for r in rows])
        shape = {}
        for wait in (10, 100):
            pair = [r for r in rows if r["wait_ms"] == wait]
            if len(pair) == 2:
                shape[wait] = (pair[0]["sched_ms_per_fetch"], pair[1]["sched_ms_per_fetch"])
        summary["shape"] = shape

    if "stored" in runs:
        data = runs["stored"]
        lines += ["**Records stored** (one partition holding N batches of one record each). Idle: a consumer at the "
                  "end, wait 50 ms. Reading: the same consumer while a producer adds 50 records/s; a fetch whose "
                  "position is below the high watermark lists every stored batch of the partition. `net` is "
                  "Tansu's CPU per fetch less the producer's own (measured alone for 10 s just before); `per fetch "
                  "with records` charges everything but the producer and the idle cost of the empty fetches to the "
                  "fetches that returned records (counted on the consumer's side):", ""]
        lines += table(["stored batches", "idle ms/fetch", "idle schedstat", "reading: fetches", "fetches/s",
                        "with records", "records read (of ~750)", "net ms/fetch (schedstat)",
                        "ms per fetch with records", "producer alone ms/produce", "other load, cores"],
                       [[n0(r["stored_reading"]), f3(r["idle"]["ms_per_fetch"]), f3(r["idle"]["sched_ms_per_fetch"]),
                         n0(r["reading"]["fetches"]), f"{r['reading']['fetches_per_s']:.1f}",
                         n0(r["reading"]["fetches_with_records"]), n0(r["reading"]["records_read"]),
                         f3(reading_net(r)), f3(r["reading"]["sched_ms_per_record_fetch"]),
                         f3(r["producer_alone"]["ms_per_produce"]), f2(r["reading"]["others_cores"])]
                        for r in data["stored"]])
        pts = [(r["stored_reading"], reading_net(r)) for r in data["stored"]]
        if len(pts) >= 2:
            a, b, worst = fit(pts)
            summary["list"] = (a, b, worst)
            lines += [f"Fit over the `net` column: ms per reading fetch = {a:.3f} + {b * 1e3:.3f} × thousands of "
                      f"stored batches ({b * 1e3:.2f} µs per stored batch listed; worst row off by {worst:.3f} ms).",
                      ""]
        summary["stored_rows"] = data["stored"]
        starved = [r for r in data["stored"] if r["reading"]["fetches"]
                   and r["reading"]["fetches_with_records"] < r["reading"]["fetches"] / 2]
        summary["starved"] = starved
        idle_costs = [r["idle"]["sched_ms_per_fetch"] for r in data["stored"]]
        summary["stored_idle"] = (min(idle_costs), max(idle_costs))
        summary["producer_alone"] = [r["producer_alone"]["ms_per_produce"] for r in data["stored"]]
        if data.get("growth"):
            lines += ["Filling the partition (records sent as fast as the producer pipelines them, one batch and "
                      "one Produce request each):", ""]
            lines += table(["batches", "Produce requests", "seconds", "broker ms/request", "schedstat"],
                           [[f"{n0(g['from'])} → {n0(g['to'])}", n0(g["produce_requests"]), f"{g['seconds']:.1f}",
                             f3(g["ms_per_produce"]), f3(g["sched_ms_per_produce"])] for g in data["growth"]])
            summary["growth"] = [g["sched_ms_per_produce"] for g in data["growth"]]

    if "produce" in runs:
        rows = runs["produce"]["produce"]
        lines += ["**Produce** (one 100-byte record per request, acks=all, each sent after the previous one's "
                  "delivery report):", ""]
        lines += table(["producer", "Produce requests", "requests/s", "round trip ms", "broker ms/request",
                        "schedstat", "wake-ups/request"],
                       [["idempotent" if r["idempotent"] else "plain", n0(r["produce_requests"]),
                         f"{r['requests_per_s']:.0f}", f2(r["round_trip_ms"]), f3(r["ms_per_produce"]),
                         f3(r["sched_ms_per_produce"]), f"{r['wakeups_per_produce']:.1f}"] for r in rows])
        summary["produce"] = {r["idempotent"]: r for r in rows}

    if "topics" in runs:
        data = runs["topics"]
        lines += ["**Topics made and deleted** (one request per topic, one at a time, 1 partition each):", ""]
        lines += table(["requests", "topics", "seconds", "broker ms/request", "schedstat", "wall ms/request"],
                       [[f"{r['kind']} ×{n0(r['topics'])}", topics_span(r), f"{r['seconds']:.1f}",
                         f3(r["ms_per_request"]), f3(r["sched_ms_per_request"]), f2(r["wall_ms_per_request"])]
                        for r in data["admin"]])
        lines += ["The idle 1-partition fetch as topics come and go:", ""]
        lines += table(["topics present", "fetch wait ms", "fetches", "broker ms/fetch", "schedstat", "wake-ups/fetch",
                        "other load, cores"],
                       [[r["label"], str(r["wait_ms"]), n0(r["fetches"]), f3(r["ms_per_fetch"]),
                         f3(r["sched_ms_per_fetch"]), f"{r['wakeups_per_fetch']:.1f}", f2(r["others_cores"])]
                        for r in data["topic_idle"]])
        summary["admin"] = data["admin"]
        summary["topic_idle"] = data["topic_idle"]
    return lines, summary, model


def model_paragraph(summary, model):
    """The cost model, in words and figures, from the fits (schedstat figures throughout)."""
    parts = []
    band = summary.get("band", {})
    if model:
        m10 = model.get(10)
        text = ("**Cost model.** Broker CPU per idle Fetch ≈ a + b × partitions, with a and b depending on the "
                "fetch wait: " + "; ".join(f"{w} ms: a = {m['a']:.2f} ms, b = {m['b']:.3f} ms"
                                           for w, m in sorted(model.items())) + ".")
        waits = sorted(model)
        if len(waits) > 1:
            text += (" The per-partition part grows with the wait (b from "
                     + " to ".join(f"{model[w]['b']:.3f}" for w in waits) + " ms) while the per-request part stays "
                     "within the noise (a "
                     + ", ".join(f"{model[w]['a']:.2f}" for w in waits) + " ms); Tansu's threads wake "
                     + ", ".join(f"{model[w]['wakeups']:.0f}" for w in waits) + " times per fetch. That fits how this "
                     "build waits: an empty fetch passes over every partition again each time it has slept half the "
                     "remaining wait, about log2(wait / 1 ms) passes, each over every partition (that a pass after "
                     "a longer sleep also runs colder would explain why b grows faster than the passes).")
        if m10:
            long = model[max(waits)]
            text += (f" Against the hand reading (~0.2 ms per partition, ~1.1 ms per 8-partition fetch): at 10 ms "
                     f"a partition costs {m10['b']:.3f} ms and an 8-partition fetch {m10['a'] + 8 * m10['b']:.2f} ms, "
                     f"the request itself being most of it (32 partitions cost "
                     f"{(m10['a'] + 32 * m10['b']) / (m10['a'] + m10['b']):.1f}× one); only at {max(waits)} ms does "
                     f"a partition cost about 0.2 ms ({long['b']:.3f}; an 8-partition fetch "
                     f"{long['a'] + 8 * long['b']:.2f} ms).")
        parts.append(text)
    if summary.get("shape"):
        repeats = {(w, p): values for w, p, values in summary.get("repeats", [])}
        verdicts = []
        for w, (one, four) in sorted(summary["shape"].items()):
            same = repeats.get((w, 4), [one])
            lo, hi, _ = band.get(w, (0, 0, 0))
            slack = hi - lo
            inside = min(same) - slack <= four <= max(same) + slack
            verdicts.append((w, one, four, same, inside))
        text = ("Asking the same 4 partitions as one topic or as 4 topics cost "
                + "; ".join(f"{one:.2f} and {four:.2f} ms at {w} ms" for w, one, four, _, _ in verdicts))
        if all(v[4] for v in verdicts):
            text += (": the 4-topic figures lie within the spread of the one-topic fetch measured again ("
                     + "; ".join(" and ".join(f"{v:.2f}" for v in same) + f" ms at {w} ms"
                                 for w, _, _, same, _ in verdicts)
                     + "), so a topic costs no more than a partition, as far as this run can tell (Tansu adds one "
                       "in-memory metadata lookup per topic asked).")
        else:
            text += (": outside this run's repeat spread at "
                     + ", ".join(f"{w} ms" for w, _, _, _, inside in verdicts if not inside)
                     + "; repeat on a quiet machine before drawing a per-topic cost from it.")
        parts.append(text)
    if "list" in summary:
        a, b, _ = summary["list"]
        lo, hi = summary["stored_idle"]
        text = (f"Records stored cost nothing to an idle consumer at the end ({lo:.2f}-{hi:.2f} ms a fetch from 0 "
                f"to 50,000 batches: no listing while the position is at the high watermark), but every fetch of "
                f"a reading consumer lists all the partition's stored batches: ≈ {a:.2f} ms + {b * 1e3:.2f} µs per "
                f"stored batch (~{a + b * 1e4:.0f} ms a fetch at 10,000 batches, ~{a + b * 5e4:.0f} ms at 50,000).")
        healthy = [r["reading"]["fetches_per_s"] for r in summary.get("stored_rows", [])
                   if r not in summary.get("starved", []) and r["reading"]["fetches_per_s"]]
        for r in summary.get("starved", []):
            x = r["reading"]
            text += (f" At {n0(r['stored_reading'])} batches the reader fell behind: only "
                     f"{x['fetches_with_records']} of {x['fetches']} fetches returned records (together "
                     f"{x['records_read']} of the ~750 produced in the window), and a fetch took "
                     f"{1000 / x['fetches_per_s']:.0f} ms"
                     + (f" instead of ~{1000 * len(healthy) / sum(healthy):.0f}" if healthy else "")
                     + f" (the machine's other load was {x['others_cores']:.1f} cores then). That is what the "
                     "source after commit e2a6eab predicts: the listing stops when the fetch's wait runs out (wall "
                     "time), and a listing stopped short never reaches the newest batches, so the fetch returns "
                     "nothing. By the fit, a listing outlasts a 10 ms wait (the `tansu` profile) from "
                     f"~{(10 - a) / b / 1e3:,.0f} thousand stored batches on, and sooner on a busy machine, where "
                     "wall time exceeds CPU time (not measured at 10 ms).")
        parts.append(text)
    if "produce" in summary:
        p = summary["produce"]
        text = ("A Produce request of one record, sent after the previous one's report, costs "
                + " and ".join(f"{r['sched_ms_per_produce']:.3f} ms ({'idempotent' if k else 'plain'})"
                               for k, r in sorted(p.items())) + " of broker CPU")
        if summary.get("growth"):
            text += (", pipelined " + "-".join(f"{v:.3f}" for v in (min(summary["growth"]), max(summary["growth"])))
                     + " ms")
        if summary.get("producer_alone"):
            pa = summary["producer_alone"]
            text += (f", and {min(pa):.2f}-{max(pa):.2f} ms when requests come alone, 50 a second (a thread "
                     "woken from sleep for each)")
        parts.append(text + ".")
    if "admin" in summary:
        ad = summary["admin"]
        made = [r for r in ad if r["kind"] == "CreateTopics"]
        dele = [r for r in ad if r["kind"] == "DeleteTopics"]
        text = ("Making a topic costs " + ", then ".join(
            f"{r['sched_ms_per_request']:.2f} ms per CreateTopics ({topics_span(r)} topics)" for r in made))
        if len(made) == 2:
            mid = [r["topics_before"] + r["topics"] / 2 for r in made]
            slope = (made[1]["sched_ms_per_request"] - made[0]["sched_ms_per_request"]) / (mid[1] - mid[0])
            base = made[0]["sched_ms_per_request"] - slope * mid[0]
            text += (f", ≈ {base:.2f} ms + {slope * 1e3:.2f} µs per topic already there (in the source, each "
                     "CreateTopics rewrites the one metadata document that holds every topic)")
        if dele:
            text += f"; deleting one {dele[0]['sched_ms_per_request']:.2f} ms ({topics_span(dele[0])})"
        text += ". The idle 1-partition fetch with 1, 201, 1,001 topics and after the deletions cost "
        for w in (10, 100):
            rows = [r for r in summary["topic_idle"] if r["wait_ms"] == w]
            if rows:
                costs = ", ".join(f"{r['sched_ms_per_fetch']:.2f}" for r in rows)
                text += f"{costs} ms at {w} ms; "
        text = text.rstrip("; ")
        # the noise: how far the same fetch, measured again in another step, moved
        changes = []
        for w in (10, 100):
            rows = [r["sched_ms_per_fetch"] for r in summary["topic_idle"] if r["wait_ms"] == w]
            spreads = [max(v) - min(v) for rw, _, v in summary.get("repeats", []) if rw == w]
            if rows and spreads:
                changes.append((w, max(rows) - min(rows), max(spreads)))
        if changes and all(spread <= noise for _, spread, noise in changes):
            text += (": the topics present do not change what a fetch of another topic costs, beyond this run's "
                     "noise (the same fetch measured again in another step moved by "
                     + "; ".join(f"{noise:.2f} ms at {w} ms" for w, _, noise in changes) + ")")
        elif changes:
            text += ("; at " + ", ".join(f"{w} ms" for w, spread, noise in changes if spread > noise)
                     + " the spread (" + ", ".join(f"{spread:.2f}" for w, spread, noise in changes if spread > noise)
                     + " ms) exceeds the noise seen when the same fetch was measured again in another step ("
                     + ", ".join(f"{noise:.2f}" for w, spread, noise in changes if spread > noise) + " ms)")
            quiet = [w for w, spread, noise in changes if spread <= noise]
            if quiet:
                text += (", though not at " + ", ".join(f"{w} ms" for w in quiet)
                         + ", where a per-topic cost in each pass would show too: unresolved, worth a repeat on a "
                           "quiet machine")
        parts.append(text + ".")
    if model:
        w = 10 if 10 in model else min(model)
        m = model[w]
        text = ("**Consequence:** idle broker cores ≈ Σ over consumers of (a + b × partitions) / period, with a "
                "and b those of the consumer's `fetch.wait.max.ms` and the period that wait plus about a "
                "millisecond: Tansu answers an empty fetch only when the whole wait is spent")
        if 500 in model:
            text += f" (measured: a fetch every {model[500]['period_ms']:.0f} ms at 500 ms, not every ~250 ms)"
        text += (f". At {w} ms (a fetch every {m['period_ms']:.1f} ms) a consumer of P partitions costs "
                 f"≈ ({m['a']:.2f} + {m['b']:.3f} × P) / {m['period_ms']:.1f} cores: "
                 f"{(m['a'] + m['b']) / m['period_ms']:.3f} for one partition, "
                 f"{(m['a'] + 8 * m['b']) / m['period_ms']:.3f} for 8, {(m['a'] + 32 * m['b']) / m['period_ms']:.3f} "
                 f"for 32; seven consumers of 8 partitions each ≈ {7 * (m['a'] + 8 * m['b']) / m['period_ms']:.2f} "
                 "cores, one consumer of all 56 ≈ "
                 f"{(m['a'] + 56 * m['b']) / m['period_ms']:.2f}. At short waits the number of consumers sets the "
                 "idle cost, hardly the partitions")
        if 500 in model:
            m5 = model[500]
            text += (f"; at 500 ms the partitions weigh more ({m5['b']:.2f} ms each a fetch) but every fetch is "
                     f"rarer: a consumer of 8 partitions ≈ {(m5['a'] + 8 * m5['b']) / m5['period_ms']:.4f} cores, "
                     f"of 32 ≈ {(m5['a'] + 32 * m5['b']) / m5['period_ms']:.4f}. Waits beyond 500 ms were not "
                     "measured; each doubling adds one pass per fetch while halving the fetches")
        parts.append(text + ".")
    return parts


def report(args):
    runs = {}
    for step in STEPS:
        path = os.path.join(args.dir, f"{step}.json")
        if os.path.exists(path):
            with open(path) as f:
                runs[step] = json.load(f)
    if not runs:
        sys.exit(f"broker_cost: no step results in {args.dir}")
    missing = [s for s in STEPS if s not in runs]
    lines, summary, model = build_report(runs, args.command, args.load_start, args.load_end)
    if missing:
        lines += [f"Steps without results (failed or not run): {', '.join(missing)}.", ""]
    for paragraph in model_paragraph(summary, model):
        lines += [paragraph, ""]
    body = list(lines)
    while body and body[-1] == "":
        body.pop()
    print("\n".join(body))
    if args.doc:
        write_marked(args.doc, [(DOC_NAME, marked_block(DOC_NAME, WRITER, body + [""]), None)])
        with open(args.doc) as f:
            if f"<!-- {DOC_NAME}:begin" not in f.read():
                sys.exit(f"broker_cost: no {DOC_NAME} markers in {args.doc}")
        log(f"{args.doc} updated")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command_name", required=True)
    m = sub.add_parser("measure", help="run one step against a running Tansu")
    m.add_argument("--step", choices=STEPS, required=True)
    m.add_argument("--brokers", required=True, help="HOST:PORT of the Tansu to measure")
    m.add_argument("--broker-pid", type=int, required=True, help="its process id (CPU from /proc)")
    m.add_argument("--out", required=True)
    r = sub.add_parser("report", help="print the steps' results and write them to the docs")
    r.add_argument("--dir", required=True, help="where the steps' JSON files are")
    r.add_argument("--command", default="bash deploy/bench-broker.sh")
    r.add_argument("--load-start", default="")
    r.add_argument("--load-end", default="")
    r.add_argument("--doc")
    args = parser.parse_args()
    measure(args) if args.command_name == "measure" else report(args)


if __name__ == "__main__":
    main()
