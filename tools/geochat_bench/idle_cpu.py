"""CPU time of every process of a local stack over a quiet interval (deploy/idle.sh; soak's
idle readings).

Processes: each instance (STATE/pids/*.pid: the services and Tansu) and
PostgreSQL (the postmaster and every backend and worker under it), each with
its descendants. Cores = CPU seconds used / wall seconds.

  python -m geochat_bench.idle_cpu measure --state-dir .data/idle --seconds 60 --out FILE.json [--first-say]
  python -m geochat_bench.idle_cpu report --run tansu A.json --run kafka B.json [--doc docs/benchmarks.md]
"""
import argparse
import json
import os
import time

from geochat_support.protocol import create, say, start
from geochat_support.stack import read_stack_env

from .doc_sections import marked_block, write_marked
from .runner import utc_now

TICKS = os.sysconf("SC_CLK_TCK")


def children_of():
    tree = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            tree.setdefault(int(fields[1]), []).append(int(entry))
        except OSError:
            continue
    return tree


def with_descendants(pid, tree):
    found, stack = [], [pid]
    while stack:
        p = stack.pop()
        found.append(p)
        stack.extend(tree.get(p, []))
    return found


def cpu_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime
    except OSError:
        return 0


def processes(state):
    named = {}
    pids_dir = os.path.join(state, "pids")
    for name in sorted(os.listdir(pids_dir)):
        if name.endswith(".pid"):
            with open(os.path.join(pids_dir, name)) as f:
                named[name[:-4].replace("kafka", "tansu (broker)")] = int(f.read().strip())
    with open(os.path.join(state, "pg", "postmaster.pid")) as f:
        named["postgresql"] = int(f.readline().strip())
    return named


def sample(named):
    tree = children_of()
    return {name: {p: cpu_ticks(p) for p in with_descendants(pid, tree)} for name, pid in named.items()}


def write_doc(path, runs, measured_at, seconds, build):
    names = [name for _, table in runs for name in table if name != "all" and not name.endswith("_ms")]
    names = list(dict.fromkeys(names)) + ["all"]
    block = marked_block("idle-cost", "deploy/idle.sh", [
        f"Measured {measured_at} by `bash deploy/idle.sh{' --release' if build == 'release' else ''}` "
        f"({build} build; {seconds} s with no traffic after 20 s of settling; one instance of each service, "
        "Tansu and PostgreSQL, and the local cluster of 2 gateways and 2 messaging instances; cores = CPU "
        "seconds / wall seconds; issue 38's targets: all ≤ 0.10 on the one-machine stack, ≤ 0.20 on the local "
        "cluster, both on the `tansu` profile):",
        "",
        "| process | " + " | ".join(f"cores, {label}" for label, _ in runs) + " |",
        "| --- | " + " | ".join("---:" for _ in runs) + " |",
        *[f"| {name} | " + " | ".join(f"{table[name]:.3f}" if name in table else "—" for _, table in runs) + " |"
          for name in names],
        "",
        *[f"A say after the {seconds} s of quiet ({label}, through gateway 1, a session that had joined and said "
          f"before): **{table['first_say_ms']:.1f} ms**; the next four, 1.5 s apart: "
          + ", ".join(f"{t:.1f}" for t in table["next_says_ms"]) + " ms (target: within the say's p99, 50 ms)."
          for label, table in runs if "first_say_ms" in table],
        "",
    ])
    write_marked(path, [("idle-cost", block, "## Idle cost\n\n")])


def a_say_ready(state_dir):
    """A session that joined a room and said once, through the first gateway: (say, gateway)."""
    gateway = read_stack_env(os.path.join(state_dir, "stack.env"))["GATEWAY_URLS"].split()[0]
    session = start(gateway, "Idle")
    room = create(gateway, session, 0.4242, 0.4242, 9, f"idle {time.time():.0f}")["id"]
    say(gateway, session, room, "before the quiet")
    return lambda text: say(gateway, session, room, text)


def cpu_seconds(before, after):
    """CPU seconds each process (with its children) used between two `sample`s (name → seconds); a
    child that started in between counts from zero, one that ended is not counted."""
    return {name: sum(ticks - before[name].get(p, 0) for p, ticks in after[name].items()) / TICKS
            for name in after}


def cores_over(state_dir, seconds):
    """Cores each process of the stack used over the next `seconds` (name → cores)."""
    named = processes(state_dir)
    before, t0 = sample(named), time.monotonic()
    time.sleep(seconds)
    after, wall = sample(named), time.monotonic() - t0
    return {name: used / wall for name, used in cpu_seconds(before, after).items()}


def measure(args):
    said = a_say_ready(args.state_dir) if args.first_say else None
    table = cores_over(args.state_dir, args.seconds)
    table["all"] = sum(table.values())
    if said:
        # The first say after the quiet (every reader on its path at rest or at its idle wait), then
        # four more 1.5 s apart (the stack's say limit), each timed from request to answer.
        times = []
        for i in range(5):
            started = time.monotonic()
            said(f"after {args.seconds:.0f} s of quiet, {i}")
            times.append((time.monotonic() - started) * 1000)
            time.sleep(1.5)
        table["first_say_ms"], table["next_says_ms"] = times[0], times[1:]
        print(f"first say after {args.seconds:.0f} s idle: {times[0]:.1f} ms; the next four: "
              + ", ".join(f"{t:.1f}" for t in times[1:]) + " ms")
    with open(args.out, "w") as f:
        json.dump(table, f)
    for name, cores in table.items():
        if not name.endswith("_ms"):
            print(f"idle_cores[{name}]: {cores:.3f}")


def report(args):
    runs = []
    for profile, path in args.run:
        with open(path) as f:
            runs.append((profile, json.load(f)))
    for profile, table in runs:
        print(f"idle_cores[{profile}]: {table['all']:.3f}")
    if args.doc:
        measured_at = utc_now()
        write_doc(args.doc, runs, measured_at, int(args.seconds), args.build)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--state-dir", required=True)
    m.add_argument("--seconds", type=float, default=60)
    m.add_argument("--out", required=True)
    m.add_argument("--first-say", action="store_true",
                   help="before the quiet, a session joins a room and says; after it, time the next says")
    r = sub.add_parser("report")
    r.add_argument("--seconds", type=float, default=60)
    r.add_argument("--build", default="debug")
    r.add_argument("--run", nargs=2, action="append", metavar=("LABEL", "JSON"), required=True)
    r.add_argument("--doc")
    args = parser.parse_args()
    measure(args) if args.command == "measure" else report(args)


if __name__ == "__main__":
    main()
