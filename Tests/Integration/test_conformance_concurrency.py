"""Conformance, the polling contract under concurrency: several writers say into
one room through both gateways while pollers on both gateways follow with
`past`. Every acknowledged id is seen by every poller, in increasing order,
with no gap that fills later. A third gateway starts while the writers write
(its read model loads the room on a cache miss, events arriving meanwhile);
a poller on it, starting from `past=0`, sees a contiguous run to the end."""
import random
import threading
import time

from geochat_support.protocol import chat, create, messages, say, start, unique_topic
from conformance import OwnGateway

WRITERS = 6
PER_WRITER = 40
POLL_LIMITS = (3, 7, 50, 200)


class Poller(threading.Thread):
    """Remembers only the highest id it saw, as the phones do, and checks
    every answer: ids contiguous from highest + 1, texts as acknowledged."""

    def __init__(self, name, gateways, room, seed):
        super().__init__(name=name, daemon=True)
        self.gateways, self.room = gateways, room
        self.rng = random.Random(seed)
        self.highest = 0
        self.seen = []
        self.texts = {}
        self.problems = []
        self.stop = threading.Event()

    def prime(self):
        """The first poll (past=0: the latest messages), before anyone writes."""
        got = messages(self.gateways[0], self.room, past=0, limit=200)
        self.seen = [m["id"] for m in got]
        self.texts = {m["id"]: m["text"] for m in got}
        self.highest = max(self.seen, default=0)

    def run(self):
        i = 0
        try:
            while not self.stop.is_set():
                gateway = self.gateways[i % len(self.gateways)]
                i += 1
                limit = self.rng.choice(POLL_LIMITS)
                got = messages(gateway, self.room, past=self.highest, limit=limit)
                ids = [m["id"] for m in got]
                if self.highest > 0 and ids and ids[0] != self.highest + 1:
                    self.problems.append(f"{gateway}: after {self.highest} got {ids[:5]}…")
                if ids and ids != list(range(ids[0], ids[0] + len(ids))):
                    self.problems.append(f"{gateway}: not contiguous {ids}")
                if len(ids) > limit:
                    self.problems.append(f"{gateway}: {len(ids)} over limit {limit}")
                for m in got:
                    if m["id"] <= self.highest:
                        self.problems.append(f"{gateway}: id {m['id']} again or lower after {self.highest}")
                    self.highest = max(self.highest, m["id"])
                    self.seen.append(m["id"])
                    self.texts[m["id"]] = m["text"]
                if len(ids) < limit:
                    time.sleep(self.rng.choice((0, 0.005, 0.02)))
        except Exception as e:  # noqa: BLE001 - reported by the test
            self.problems.append(repr(e))


def test_writers_and_pollers_across_both_gateways(stack):
    gateways = stack["gateways"][:2]
    a, b = gateways
    session = start(a)
    room = create(b, session, 0.6180, 0.3819, 16, unique_topic())["id"]
    acknowledged = {say(a, session, room, "first"): "first"}
    assert list(acknowledged) == [1]

    pollers = [
        Poller("poll-A1", [a], room, 1), Poller("poll-A2", [a], room, 2),
        Poller("poll-B1", [b], room, 3), Poller("poll-B2", [b], room, 4),
        Poller("poll-AB", [a, b], room, 5), Poller("poll-BA", [b, a], room, 6),
    ]
    for p in pollers:
        p.prime()
        assert p.highest == 1
        p.start()
    lock = threading.Lock()
    errors = []

    def writer(w):
        try:
            for i in range(PER_WRITER):
                text = f"w{w} m{i}"
                message_id = say(gateways[(w + i) % 2], session, room, text)
                with lock:
                    acknowledged[message_id] = text
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    late = {}

    def late_gateway():
        try:
            late["gateway"] = OwnGateway(stack)
            poller = Poller("poll-late", [late["gateway"].url], room, 7)
            poller.prime()
            late["first"] = poller.seen[0] if poller.seen else poller.highest + 1
            late["poller"] = poller
            poller.start()
        except BaseException as e:  # noqa: BLE001 - pytest.fail raises outside Exception
            errors.append("late gateway: " + repr(e))

    started = time.monotonic()
    writers = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    for t in writers:
        t.start()
    starter = threading.Thread(target=late_gateway)
    starter.start()
    for t in writers:
        t.join(timeout=120)
    elapsed = time.monotonic() - started
    starter.join(timeout=90)
    if "poller" in late:
        pollers.append(late["poller"])
    assert not errors, errors
    total = 1 + WRITERS * PER_WRITER
    assert sorted(acknowledged) == list(range(1, total + 1)), "acknowledged ids are 1…n without gaps"

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(p.highest < total for p in pollers):
        time.sleep(0.1)
    for p in pollers:
        p.stop.set()
    for p in pollers:
        p.join(timeout=15)
    if "gateway" in late:
        late["gateway"].close()
    assert "poller" in late, errors
    for p in pollers:
        first = late["first"] if p is late["poller"] else 1
        assert not p.problems, (p.name, p.problems[:5])
        assert p.seen == list(range(first, total + 1)), (p.name, "saw every acknowledged id once, in order")
        assert p.texts == {i: acknowledged[i] for i in range(first, total + 1)}, p.name
    print(f"{total} messages by {WRITERS} writers in {elapsed:.1f} s; {len(pollers)} pollers saw all of them in "
          f"order; the late gateway's poller started at id {late['first']}")
    # A fresh reader through either gateway agrees with the pollers.
    for g in gateways:
        assert [m["id"] for m in messages(g, room, past=total - 200, limit=200)] == list(range(total - 199, total + 1))
    assert chat(a, cmd="messages", chatid=room, past=total).status == 200
