"""CPU time of every process of a local stack over a quiet interval (deploy/idle.sh; soak's
idle readings).

Processes: each instance (STATE/pids/*.pid: the services and Tansu) and
PostgreSQL (the postmaster and every backend and worker under it), each with
its descendants. Cores = CPU seconds used / wall seconds.

  python -m geochat_bench.idle_cpu measure --state-dir .data/idle --seconds 60 --out FILE.json
  python -m geochat_bench.idle_cpu report --run tansu A.json --run kafka B.json [--doc docs/benchmarks.md]
"""
import argparse
import json
import os
import time

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
    names = [name for _, table in runs for name in table if name != "all"]
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
    ])
    write_marked(path, [("idle-cost", block, "## Idle cost\n\n")])


def measure(args):
    named = processes(args.state_dir)
    before, t0 = sample(named), time.monotonic()
    time.sleep(args.seconds)
    after, wall = sample(named), time.monotonic() - t0
    table = {}
    for name in named:
        used = sum(ticks - before[name].get(p, 0) for p, ticks in after[name].items())
        table[name] = used / TICKS / wall
    table["all"] = sum(table.values())
    with open(args.out, "w") as f:
        json.dump(table, f)
    for name, cores in table.items():
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
    r = sub.add_parser("report")
    r.add_argument("--seconds", type=float, default=60)
    r.add_argument("--build", default="debug")
    r.add_argument("--run", nargs=2, action="append", metavar=("LABEL", "JSON"), required=True)
    r.add_argument("--doc")
    args = parser.parse_args()
    measure(args) if args.command == "measure" else report(args)


if __name__ == "__main__":
    main()
