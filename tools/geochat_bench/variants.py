#!/usr/bin/env python3
"""Three rounds of says at `wrk -c64` on a fresh stack, with the broker's CPU over each
(deploy/bench-variants.sh). One variant per call prints one table row; `--write-doc` puts
the rows it is given into docs/benchmarks.md ("Variants").

  python -m geochat_bench.variants --stack-env .data/bench-variants/stack.env --name NAME --settings 'K=V …'
  python -m geochat_bench.variants --write-doc --command '…' ROW…
"""
import argparse
import os
import random

from geochat_support.stack import Stack

from . import writes
from .runner import machine_facts, publish_run, q, utc_now, wrk


def broker_seconds(state_dir):
    with open(os.path.join(state_dir, "pids", "kafka.pid")) as f:
        pid = int(f.read().strip())
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def variant_row(stack_env, name, settings, rounds=3, seconds=10):
    stack = Stack(stack_env)
    state = os.path.dirname(os.path.abspath(stack_env))
    sessions, rooms = writes.say_setup(stack.gateways[0], "v")
    rnd = random.Random(1)
    rates, cores = [], []
    for r in range(rounds):
        paths = [q(cmd="say", sessionid=rnd.choice(sessions), chatid=rnd.choice(rooms), msg=f"v {r} {i}")
                 for i in range(20000)]
        before = broker_seconds(state)
        outcome = wrk(stack.gateways[0], paths, seconds, 64)
        cores.append((broker_seconds(state) - before) / seconds)
        rates.append(f"{outcome['rps']:.0f}" + (f" ({outcome['failed']} failed)" if outcome["failed"] else ""))
    return (f"| {name} | {settings or 'as the stack ships'} | {', '.join(rates)} | "
            f"{min(cores):.2f}–{max(cores):.2f} |")


def write_doc(rows, command):
    when = utc_now()
    block = [f"### Variants: {when}", "", f"Command: `{command}`. Machine: {machine_facts()}. "
             "Each variant on a fresh release stack (2 gateways, 2 messaging), three 10 s rounds of says at "
             "`wrk -t2 -c64` one after the other.", "",
             "| variant | settings | says/s by round | broker, cores |", "| --- | --- | --- | --- |", *rows, ""]
    publish_run(block, "bench-variants", "Variants (deploy/bench-variants.sh)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack-env")
    parser.add_argument("--name")
    parser.add_argument("--settings", default="")
    parser.add_argument("--write-doc", action="store_true")
    parser.add_argument("--command", default="bash deploy/bench-variants.sh")
    parser.add_argument("rows", nargs="*")
    args = parser.parse_args()
    if args.write_doc:
        write_doc(args.rows, args.command)
    else:
        print(variant_row(args.stack_env, args.name, args.settings))


if __name__ == "__main__":
    main()
