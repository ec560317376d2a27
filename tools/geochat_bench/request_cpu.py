"""What one request costs the gateway's CPU (deploy/bench-request-cpu.sh): user and system time
of gateway 1 (from /proc) over a wrk run, divided by the requests answered, for idle polls (2,000
sessions, 200 rooms in memory) and `chats` over 10,000 rooms; the HTTP stack alone (hello world)
measured the same way in the same run. With `--old BINARY`, gateway 1 is switched between the
stack's gateway binary and that one, alternating, round after round. With `--pin`, the server
measured (every thread of it) runs on core 0 and wrk, one thread, on core 1: on this 2-core
machine, unpinned rounds of the same binary swing by a third (the threads' placement changes
how many wake-ups cross cores), pinned ones by a few per cent.

CPU time per request hardly depends on what else the machine runs, unlike a throughput: it is
the figure to compare binaries by on a shared machine. Adds a run block to docs/benchmarks.md
("Request CPU")."""
import asyncio
import os
import socket
import statistics
import subprocess
import time

from geochat_support.protocol import AsyncPool

from .runner import (ROOT, bench_parser, create_rooms, ensure_million_rooms, get, log, machine_facts, publish_run,
                     q, region_paths, say_all, start_sessions, utc_now, wait_ready, wrk)

HELLO = os.path.join(ROOT, "Tests", "Benchmarks", "HelloWorld", ".build", "release", "HelloWorld")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def per_request_us(pid, base_url, paths, seconds, connections, pin=False):
    load = {"threads": 1, "cpus": "1"} if pin else {}
    if pin:  # every thread the server has now; threads it starts later inherit the core
        subprocess.run(["taskset", "-a", "-p", "-c", "0", str(pid)], check=True, stdout=subprocess.DEVNULL)
    wrk(base_url, paths, 3, connections, **load)  # warm-up: every session met, every room loaded
    before = cpu_seconds(pid)
    result = wrk(base_url, paths, seconds, connections, **load)
    return (cpu_seconds(pid) - before) / max(result["requests"], 1) * 1e6, result


def switch_gateway(stack, binary):
    env = os.path.join(stack.state_dir, "instances", "gateway-1.env")
    subprocess.run(["sed", "-i", f"s|^BINARY=.*|BINARY={binary}|", env], check=True)
    stack.command("stop", "gateway-1")
    stack.command("start", "gateway-1")
    wait_ready(stack.gateways[0], 300)


def main():
    parser = bench_parser(__doc__, "bash deploy/bench-request-cpu.sh")
    parser.add_argument("--old", help="a second gateway binary, measured alternately with the stack's")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--label", default="")
    parser.add_argument("--pin", action="store_true", help="the server on core 0, wrk (one thread) on core 1")
    args = parser.parse_args()
    from geochat_support.stack import Stack
    stack = Stack(args.stack_env, sql_timeout=600)
    ensure_million_rooms(stack, 10_000)
    with open(os.path.join(stack.state_dir, "instances", "gateway-1.env")) as f:
        current = next(line.split("=", 1)[1].strip() for line in f if line.startswith("BINARY="))
    binaries = {"this": current, **({"old": args.old} if args.old else {})}

    async def rooms_with_a_message():
        pool = AsyncPool(stack.gateways[0], 16)
        owner = (await start_sessions(pool, 1, "cpuowner"))[0]
        rooms = await create_rooms(pool, owner, 200, "cpu")
        latest = await say_all(pool, owner, rooms, "hi")
        pool.close()
        return [(room, last) for room, last in zip(rooms, latest) if last is not None]

    rooms = asyncio.run(rooms_with_a_message())
    chats = region_paths(stack, 20000)
    figures = {name: {"polls": [], "chats": []} for name in binaries}
    for round_ in range(args.rounds):
        for name, binary in binaries.items():
            if args.old or round_ == 0:
                switch_gateway(stack, binary)
            pid = stack.pid("gateway-1")

            async def phones():
                pool = AsyncPool(stack.gateways[0], 16)
                made = await start_sessions(pool, 2000, f"cpu{round_}{name}")
                pool.close()
                return made

            polls = [q(cmd="messages", chatid=rooms[i % len(rooms)][0], past=rooms[i % len(rooms)][1], sessionid=p)
                     for i, p in enumerate(asyncio.run(phones()))]
            for kind, paths in (("polls", polls), ("chats", chats)):
                us, result = per_request_us(pid, stack.gateways[0], paths, args.seconds, args.connections,
                                            args.pin)
                figures[name][kind].append(us)
                log(f"{name} {kind}: {result['rps']:.0f}/s, {us:.1f} µs CPU a request ({result['failed']} failed)")
    if args.old:
        switch_gateway(stack, current)

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    hello = subprocess.Popen([HELLO, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                get(f"http://127.0.0.1:{port}/hello", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        figures["hello world"] = {"hello": []}
        for _ in range(args.rounds):
            us, result = per_request_us(hello.pid, f"http://127.0.0.1:{port}", ["/hello"], args.seconds,
                                        args.connections, args.pin)
            figures["hello world"]["hello"].append(us)
            log(f"hello world: {result['rps']:.0f}/s, {us:.1f} µs CPU a request")
    finally:
        hello.kill()

    hello_us = statistics.median(figures["hello world"]["hello"])
    lines = [f"### Request CPU: {utc_now()}{' — ' + args.label if args.label else ''}", "",
             f"Command: `{args.command}`. Gateway 1's user + system CPU time over `wrk -c{args.connections} "
             f"-d{args.seconds}s`, per request answered; {args.rounds} rounds"
             f"{'; the server on core 0, wrk (`-t1`) on core 1' if args.pin else ''}"
             f"{', the binaries alternating' if args.old else ''}; hello world (Hummingbird, one route) the same "
             f"way in the same run. Machine: {machine_facts()}.", "",
             "| binary | idle polls, µs a request | `chats` over 10,000 rooms, µs a request | hello world ÷ polls |",
             "| --- | --- | --- | --- |"]
    for name, binary in binaries.items():
        polls, chats_us = figures[name]["polls"], figures[name]["chats"]
        lines.append(f"| {name} (`{os.path.relpath(binary, ROOT) if binary.startswith(ROOT) else binary}`) | "
                     f"{statistics.median(polls):.1f} ({', '.join(f'{v:.1f}' for v in polls)}) | "
                     f"{statistics.median(chats_us):.1f} ({', '.join(f'{v:.1f}' for v in chats_us)}) | "
                     f"{hello_us / statistics.median(polls):.2f} |")
    hello_figures = figures["hello world"]["hello"]
    lines.append(f"| hello world | {hello_us:.1f} ({', '.join(f'{v:.1f}' for v in hello_figures)}) | — | 1 |")
    lines.append("")
    publish_run(lines, "request-cpu", "Request CPU (deploy/bench-request-cpu.sh)", write=not args.no_doc)


if __name__ == "__main__":
    main()
