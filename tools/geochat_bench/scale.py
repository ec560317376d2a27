"""The cost run over cluster sizes (deploy/bench-scale.sh): the same N idle phones through 1, 2
and 4 gateways of one stack. Per gateway: Kafka bytes read and written, CPU, memory; per
phone-second: Kafka bytes written and PostgreSQL row writes. Its table, and the million-phone
model computed from it, are the "Cluster sizes" section of docs/capacity.md.

Every gateway of the stack runs in every step: those the balancer does not send phones to
show what a gateway pays for phones served by the others. Each step has a first window, in
which gateways meet phones they have not served before (their session lookups), and a
steady one after it."""
import asyncio
import re
import time

from . import doc_sections
from .cost import poll_phones, row_writes, set_up_phones
from .runner import bench_parser, fmt, log, machine_facts, rss_mb, scrape, utc_now


def instance_counters(stack, url):
    """Kafka bytes read and written by this instance so far, by topic, and the commands it handled, by name."""
    read, written, handled = {}, {}, {}
    for (name, labels), value in scrape(stack.operators(url)).items():
        topic = re.search(r'topic="([^"]*)"', labels)
        command = re.search(r'command="([^"]*)"', labels)
        if name == "geochat_kafka_consumed_bytes_total" and topic:
            read[topic.group(1)] = read.get(topic.group(1), 0) + value
        elif name == "geochat_kafka_produced_bytes_total" and topic:
            written[topic.group(1)] = written.get(topic.group(1), 0) + value
        elif name == "geochat_commands_total" and command:
            handled[command.group(1)] = handled.get(command.group(1), 0) + value
    return read, written, handled


def cpu_seconds(pid):
    """User and system CPU time of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime, stime in clock ticks (USER_HZ = 100)


def cluster_counters(stack):
    """Kafka bytes written by every instance, by topic; the session lookups and presence marks
    the owners answered; what each rooms instance read of presence."""
    written, lookups, marks = {}, 0.0, 0.0
    rooms_presence = []
    sessions, rooms = stack.env["SESSION_URLS"].split(), stack.rooms
    for url in stack.gateways + stack.messaging + rooms + sessions + stack.env["EXPIRY_URLS"].split():
        read, by_topic, handled = instance_counters(stack, url)
        for topic, value in by_topic.items():
            written[topic] = written.get(topic, 0) + value
        if url in sessions:
            lookups += handled.get("lookup", 0)
        if url in rooms:
            marks += handled.get("markPresent", 0)
            rooms_presence.append(read.get("geochat.presence", 0))
    return written, lookups, marks, rooms_presence


class ScaleWindow:
    """What every gateway read, wrote and spent, and what the cluster wrote, between open and close."""

    def __init__(self, stack):
        self.stack = stack
        self.pids = [stack.pid(f"gateway-{i + 1}") for i in range(len(stack.gateways))]
        self.started = time.monotonic()
        self.gateways = [instance_counters(stack, url) for url in stack.gateways]
        self.cpu = [cpu_seconds(pid) for pid in self.pids]
        self.written, self.lookups, self.marks, self.rooms_presence = cluster_counters(stack)
        self.rows = row_writes(stack)

    def close(self, phones, serving):
        took = time.monotonic() - self.started
        rows = row_writes(self.stack)  # first: it waits for PostgreSQL's statistics
        gateways = []
        for i, url in enumerate(self.stack.gateways):
            read, written, _ = instance_counters(self.stack, url)
            read0, written0, _ = self.gateways[i]
            delta = {t: read[t] - read0.get(t, 0) for t in read}
            gateways.append({
                "serving": i < serving,
                "read_bps": sum(delta.values()) / took,
                "presence_read_bps": delta.get("geochat.presence", 0) / took,
                "written_bps": (sum(written.values()) - sum(written0.values())) / took,
                "cpu": (cpu_seconds(self.pids[i]) - self.cpu[i]) / took,
                "rss_mb": rss_mb(self.pids[i]),
            })
        phone_seconds = phones * took
        written, lookups, marks, rooms_presence = cluster_counters(self.stack)
        by_topic = {t: (v - self.written.get(t, 0)) / phone_seconds for t, v in written.items()
                    if v - self.written.get(t, 0) > 0}
        return {"seconds": took, "gateways": gateways, "lookups": lookups - self.lookups,
                "marks": marks - self.marks,
                "rooms_presence_read_bps": [(a - b) / took for a, b in zip(rooms_presence, self.rooms_presence)],
                "written_per_phone_s": sum(by_topic.values()), "written_by_topic": by_topic,
                "rows_per_phone_s": (rows - self.rows) / phone_seconds}


def run(stack, phones_count, first_s, steady_s, sizes):
    rooms, latest, phones = asyncio.run(set_up_phones(stack.gateways[:1], phones_count, "scale"))
    log(f"{len(phones)} phones in {len(rooms)} rooms")
    time.sleep(3)
    steps = []
    for size in sizes:
        serving = stack.gateways[:size]
        windows = {}
        for name, seconds in (("first", first_s), ("steady", steady_s)):
            window = ScaleWindow(stack)
            sent, failed, late, _ = asyncio.run(poll_phones(serving, rooms, latest, phones, seconds))
            windows[name] = window.close(len(phones), size)
            windows[name].update({"polls": sent, "failed": failed, "late": late})
            log(f"{size} gateways, {name}: {sent} polls ({failed} failed, {late} late), "
                f"{windows[name]['written_per_phone_s']:.2f} B and {windows[name]['rows_per_phone_s']:.4f} rows "
                f"a phone-second; gateway reads " + ", ".join(
                    f"{g['read_bps']:.0f}" for g in windows[name]["gateways"]) + " B/s")
        steps.append({"size": size, **windows})
    return steps


def table(steps, phones):
    lines = ["| gateways serving | window | polls answered (failed) | per phone-second: Kafka bytes written, "
             "PostgreSQL row writes | session lookups, presence marks | each gateway: Kafka bytes read/s "
             "(presence), written/s, CPU (cores), RSS MB | each rooms instance: presence read/s |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for step in steps:
        for name in ("first", "steady"):
            w = step[name]
            per_gateway = "<br>".join(
                f"{i + 1}{'' if g['serving'] else ' (no phones)'}: {g['read_bps']:.0f} "
                f"({g['presence_read_bps']:.0f}), {g['written_bps']:.0f}, {g['cpu']:.3f}, {g['rss_mb']:.0f}"
                for i, g in enumerate(w["gateways"]))
            lines.append(f"| {step['size']} | {name} ({w['seconds']:.0f} s) | {w['polls'] - w['failed']} "
                         f"({w['failed']}) | {w['written_per_phone_s']:.2f} B, {w['rows_per_phone_s']:.4f} | "
                         f"{w['lookups']:.0f}, {w['marks']:.0f} | {per_gateway} | "
                         + ", ".join(f"{v:.0f}" for v in w["rooms_presence_read_bps"]) + " |")
    return lines


REFRESH_S = 20  # a gateway republishes a session it keeps seeing every third of the presence timeout (60 s)


def model(steps, phones):
    """A million phones, computed (not measured) from the steady windows: presence written per
    gateway that sees a phone, the rest of the writes, and each rooms instance's reads."""
    per_gateway = sum(st["steady"]["written_by_topic"].get("geochat.presence", 0) / st["size"]
                      for st in steps) / len(steps)
    largest, smallest = steps[-1]["steady"], steps[0]["steady"]

    def other_writes(window):  # head checks of polled rooms and their replies: per gateway that polls a room
        return window["written_per_phone_s"] - window["written_by_topic"].get("geochat.presence", 0)

    other, other_spread = other_writes(smallest), other_writes(largest)
    gateway_presence = max(g["presence_read_bps"] for st in steps for g in st["steady"]["gateways"]) / phones
    per_poll = per_gateway * REFRESH_S  # one entry: a gateway seeing a phone rarely publishes it at each poll
    idle = [g for g in largest["gateways"] if not g["serving"]]
    lines = [f"Computed from the steady windows (a model, not a measurement): each gateway that sees a phone "
             f"writes {per_gateway:.2f} B of presence a phone-second (one ~{per_poll:.0f}-byte entry a refresh, "
             f"{REFRESH_S} s; at most one a poll), the rest of the writes are {other:.2f} B a phone-second through "
             f"{steps[0]['size']} gateway(s) and {other_spread:.2f} B through {steps[-1]['size']}; "
             f"{largest['rows_per_phone_s']:.4f} PostgreSQL row writes a phone-second; a gateway serving no phones "
             f"reads {max([g['read_bps'] for g in idle] or [0]):.0f} B/s. Affine: each phone's polls reach one "
             "gateway; round-robin: each poll goes to the next gateway.", "",
             "| phones | gateways | Kafka written, affine | Kafka written, round-robin | presence read per gateway "
             "| presence read per rooms instance, affine |", "| --- | --- | --- | --- | --- | --- |"]
    total = 1_000_000
    for gateways in (1, 2, 4, 10, 100, 200):
        spread = min(gateways * per_gateway, per_poll)
        lines.append(f"| 1,000,000 | {gateways} | {(per_gateway + other) * total / 1e6:.1f} MB/s | "
                     f"{(spread + (other if gateways == 1 else other_spread)) * total / 1e6:.1f} MB/s | "
                     f"{gateway_presence * total / 1e6:.1f} MB/s | {per_gateway * total / 1e6:.1f} MB/s |")
    return lines


def main():
    parser = bench_parser(__doc__, "bash deploy/bench-scale.sh")
    parser.add_argument("--phones", type=int, default=1000)
    parser.add_argument("--first-seconds", type=int, default=20)
    parser.add_argument("--steady-seconds", type=int, default=40)
    parser.add_argument("--sizes", default="1,2,4")
    parser.add_argument("--build", default="release build")
    args = parser.parse_args()
    from geochat_support.stack import Stack
    stack = Stack(args.stack_env, sql_timeout=300)
    sizes = [int(s) for s in args.sizes.split(",")]
    assert max(sizes) <= len(stack.gateways), f"the stack has {len(stack.gateways)} gateways"
    steps = run(stack, args.phones, args.first_seconds, args.steady_seconds, sizes)
    lines = [f"Measured {utc_now()} on {machine_facts()} ({args.build}), command `{args.command}`: "
             f"{args.phones} phones polling once a second each with its `sessionid`, each poll through the next "
             f"serving gateway; {len(stack.gateways)} gateways running throughout; per step a first window "
             f"({args.first_seconds} s, gateways meeting phones) and a steady one ({args.steady_seconds} s).", "",
             *table(steps, args.phones), "", *model(steps, args.phones), ""]
    print("\n".join(lines))
    if not args.no_doc:
        block = doc_sections.marked_block("cost-scale", "deploy/bench-scale.sh", lines)
        doc_sections.write_marked(doc_sections.CAPACITY, [("cost-scale", block, None)])
        log("docs/capacity.md updated")
    for step in steps:
        log(f"{step['size']} gateways steady: " + fmt(step["steady"]["written_per_phone_s"], 2) + " B/phone-s")


if __name__ == "__main__":
    main()
