"""Where a benchmark's PostgreSQL time goes, from PostgreSQL's own log (deploy/bench-expiry.sh --profile).

`enable` turns on, for new connections: the duration of every statement over 10 ms and, through
auto_explain, the plan of every statement over 30 ms with its actual times, buffers and triggers
(a foreign key's cascade shows as a trigger). The services must reconnect afterwards (the script
restarts them). `disable` resets those settings. `report` reads the log from a byte offset on and
prints the statements by total time, then, for the plans of statements that match `--plan`, the
median statement and where its time went (each plan node's actual time, its children included;
each trigger's).

  python -m geochat_bench.pg_profile enable|disable
  python -m geochat_bench.pg_profile report --log FILE --from OFFSET [--plan TEXT]…

The settings slow every statement they log; figures measured with them on are for comparison
within the profile, not for the benchmark's table.
"""
import argparse
import collections
import re
import statistics
import subprocess

from geochat_support.db import PsqlError, psql_environment, sql
from geochat_support.stack import read_stack_env

SETTINGS = [
    ("session_preload_libraries", "auto_explain"),
    ("auto_explain.log_min_duration", "30ms"),
    ("auto_explain.log_analyze", "on"),
    ("auto_explain.log_triggers", "on"),
    ("auto_explain.log_buffers", "on"),
    ("auto_explain.log_timing", "on"),
    ("log_min_duration_statement", "10ms"),
]

DURATION = re.compile(r"duration: ([\d.]+) ms  (execute|statement|bind|parse)[^:]*: (.{0,100})")
PLAN = re.compile(r"duration: ([\d.]+) ms  plan:")
NODE = re.compile(r"^\s*(?:->\s*)?(\w[\w ]*?(?: on \w+| using \w+ on \w+)?)\s+\(cost=[^)]*\) \(actual time=[\d.]+\.\.([\d.]+) rows=\d+ loops=(\d+)\)")
TRIGGER = re.compile(r"Trigger (.+?): time=([\d.]+) calls=(\d+)")


def enable(stack):
    # A module's settings are known to ALTER SYSTEM only once it is loaded; each statement on its own,
    # as ALTER SYSTEM cannot run in a transaction.
    sql_each(stack, ["LOAD 'auto_explain'"] + [f"ALTER SYSTEM SET {name} = '{value}'" for name, value in SETTINGS])
    sql(stack, "SELECT pg_reload_conf()")


def disable(stack):
    sql_each(stack, ["LOAD 'auto_explain'"] + [f"ALTER SYSTEM RESET {name}" for name, _ in SETTINGS])
    sql(stack, "SELECT pg_reload_conf()")


def sql_each(stack, statements):
    """Statements in one session, each in its own implicit transaction (psql -c would join them)."""
    run = subprocess.run(
        ["psql", "-h", stack["PG_HOST"], "-p", stack["PG_PORT"], "-U", stack["PG_USER"], "-d", stack["PG_DATABASE"],
         "-Atq", "-v", "ON_ERROR_STOP=1"],
        input="".join(s + ";\n" for s in statements), capture_output=True, text=True, timeout=30,
        env=psql_environment(stack))
    if run.returncode != 0:
        raise PsqlError(run.stderr.strip())


def entries(text):
    """The log's entries: each starts with a line that begins with the year."""
    return re.split(r"\n(?=\d{4}-\d\d-\d\d )", text)


def one_line(statement):
    return re.sub(r"'\{[0-9,]+\}'", "'{…}'", " ".join(statement.split()))


def report(args):
    with open(args.log, errors="replace") as f:
        f.seek(args.from_offset)
        text = f.read()
    logged = entries(text)
    totals = collections.defaultdict(list)
    for entry in logged:
        m = DURATION.search(entry)
        if m:
            totals[(m.group(2), one_line(m.group(3))[:90])].append(float(m.group(1)))
    print("statements over 10 ms, by total time (duration as logged, auto_explain's overhead included):")
    print(f"{'total s':>8s} {'n':>5s} {'p50 ms':>8s} {'max ms':>8s}  statement")
    for (kind, text_), values in sorted(totals.items(), key=lambda kv: -sum(kv[1]))[:args.top]:
        values.sort()
        print(f"{sum(values) / 1000:8.2f} {len(values):5d} {values[len(values) // 2]:8.1f} {values[-1]:8.1f}  "
              f"{kind} {text_}")
    for wanted in args.plan:
        plans = [e for e in logged if PLAN.search(e) and wanted in e]
        if not plans:
            print(f"\nno plan logged for statements with {wanted!r}")
            continue
        durations = [float(PLAN.search(p).group(1)) for p in plans]
        triggers = [sum(float(t[1]) for t in TRIGGER.findall(p)) for p in plans]
        median = sorted(zip(durations, plans))[len(plans) // 2][1]
        print(f"\nplans of statements with {wanted!r}: {len(plans)}; statement mean {statistics.mean(durations):.1f} ms, "
              f"p50 {statistics.median(durations):.1f} ms; triggers mean {statistics.mean(triggers):.1f} ms "
              f"({sum(triggers) / sum(durations):.0%} of the statements' time)")
        print(f"the median one ({PLAN.search(median).group(1)} ms): each node's actual total time, each trigger's")
        for line in median.splitlines():
            node, trigger = NODE.match(line), TRIGGER.search(line)
            if node:
                print(f"  {float(node.group(2)) * int(node.group(3)):8.1f} ms  {line.strip()[:110]}")
            elif trigger:
                print(f"  {float(trigger.group(2)):8.1f} ms  trigger {trigger.group(1)} ({trigger.group(3)} calls)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("enable")
    sub.add_parser("disable")
    rep = sub.add_parser("report")
    rep.add_argument("--log", required=True)
    rep.add_argument("--from", dest="from_offset", type=int, default=0)
    rep.add_argument("--plan", action="append", default=[])
    rep.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    if args.action == "report":
        report(args)
    elif args.action == "enable":
        enable(read_stack_env())
    else:
        disable(read_stack_env())


if __name__ == "__main__":
    main()
