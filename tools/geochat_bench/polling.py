"""Pollers on live rooms while a long operation runs (the expiry and moderation benchmarks): each
poll's latency by phase (warm-up, baseline, during, after), and the cores each process of the stack
used in the baseline and during the operation."""
import os
import threading
import time

from geochat_support.protocol import Client
from geochat_support.stats import percentile

from .idle_cpu import cpu_seconds, processes, sample


class Poller(threading.Thread):
    """Polls one room every `interval` seconds on a keep-alive connection,
    recording each poll's latency with the phase it fell in."""

    def __init__(self, gateway, room, interval, phase, stop):
        super().__init__(daemon=True)
        self.client = Client(gateway, timeout=10)
        self.gateway, self.room = gateway, room
        self.interval, self.phase, self.stop = interval, phase, stop
        self.samples = {}  # phase -> [seconds]
        self.errors = 0

    def run(self):
        next_at = time.monotonic()
        while not self.stop.is_set():
            answer = self.client.chat(cmd="messages", chatid=self.room, past=0, limit=20)
            if answer.ok:
                self.samples.setdefault(self.phase[0], []).append(answer.latency)
            else:
                self.errors += 1
            next_at += self.interval
            time.sleep(max(0.0, next_at - time.monotonic()))


def ms(values, p):
    return f"{percentile(values, p) * 1000:.1f} ms" if values else "n/a"


class PollingPhases:
    """`pollers` threads polling `rooms` (round robin) through `gateways`: `baseline(seconds)`, then
    `begin()` and `end()` around the operation, `stop()`, then `report()`."""

    def __init__(self, stack, gateways, rooms, pollers, interval):
        self.phase = ["warmup"]
        self.halt = threading.Event()
        self.pollers = [Poller(gateways[i % len(gateways)], rooms[i % len(rooms)], interval, self.phase, self.halt)
                        for i in range(pollers)]
        self.interval, self.gateways = interval, gateways
        for p in self.pollers:
            p.start()
        time.sleep(3)
        self.named = processes(stack["STATE_DIR"])
        self.named["bench driver (pollers)"] = os.getpid()
        self.cpu = {}

    def _mark(self, phase):
        self.phase[0] = phase
        self.cpu.setdefault(phase, []).append((time.monotonic(), sample(self.named)))

    def baseline(self, seconds):
        self._mark("baseline")
        time.sleep(seconds)
        self.cpu["baseline"].append((time.monotonic(), sample(self.named)))

    def begin(self):
        self._mark("during")

    def end(self):
        self.cpu["during"].append((time.monotonic(), sample(self.named)))
        self.phase[0] = "after"

    def stop(self):
        time.sleep(1)
        self.halt.set()
        for p in self.pollers:
            p.join()

    def report(self, what, groups=None):
        """Prints the pollers, the latency of each phase (the during phase by gateway and `groups` of
        rooms, when given) and the cores each process used."""
        samples = {}
        for p in self.pollers:
            for name, values in p.samples.items():
                samples.setdefault(name, []).extend(values)
        print(f"pollers: {len(self.pollers)} on {what}, one poll per {self.interval} s each, "
              f"{len(self.gateways)} gateways; failed polls: {sum(p.errors for p in self.pollers)}")
        base, during = samples.get("baseline", []), samples.get("during", [])
        for name, values in (("baseline", base), ("during", during)):
            print(f"poll latency {name:8s}: n={len(values)} p50={ms(values, 50)} p99={ms(values, 99)} "
                  f"max={max(values, default=0) * 1000:.1f} ms")
        if base and during:
            print(f"p99 during / baseline: {percentile(during, 99) / percentile(base, 99):.2f}x")
        self.print_groups(groups or {})
        self.print_cores()

    def print_groups(self, groups):
        """The during phase by gateway and by group of rooms (`groups`: name -> rooms): where the slow polls are."""
        if not groups:
            return
        print("during, by gateway and rooms:")
        for g, gateway in enumerate(self.gateways):
            for name, rooms in groups.items():
                values = [v for p in self.pollers if p.gateway == gateway and p.room in rooms
                          for v in p.samples.get("during", [])]
                print(f"  gateway {g + 1}, {name:13s}: n={len(values)} p50={ms(values, 50)} p99={ms(values, 99)} "
                      f"max={max(values, default=0) * 1000:.1f} ms")

    def print_cores(self):
        """Cores (CPU seconds / wall seconds) of each process, its children included (PostgreSQL: every
        backend), in the baseline and during the run; the pollers' driver (this process) too."""
        def cores(phase_name, name):
            (t0, first), (t1, last) = self.cpu[phase_name]
            return cpu_seconds(first, last)[name] / (t1 - t0)

        print()
        print(f"{'cores used':24s} {'baseline':>9s} {'during':>9s}")
        for name in sorted(self.named, key=lambda n: -cores("during", n)):
            print(f"{name:24s} {cores('baseline', name):9.3f} {cores('during', name):9.3f}")
        total = {phase_name: sum(cores(phase_name, n) for n in self.named) for phase_name in self.cpu}
        print(f"{'all of them':24s} {total['baseline']:9.3f} {total['during']:9.3f}  (of {os.cpu_count()} cores)")
