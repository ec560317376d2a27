"""Topic names as the services write them on the dev broker.

On Tansu (the `tansu` profile the stack runs) the busy shared topics rotate
(docs/architecture.md, "Topic generations"): `geochat.messaging.commands` is
written as `geochat.messaging.commands.g<n>`, n = Unix milliseconds divided by
the period. This mirrors `Topics.rotates` and `TopicGenerations` in Swift."""
import os
import time

ROTATING = {
    "geochat.session.commands", "geochat.session.events", "geochat.rooms.commands", "geochat.rooms.events",
    "geochat.messaging.commands", "geochat.messages.events", "geochat.presence",
}

# 0: nothing rotates (the `kafka` profile). The stack's default is 60 s.
GENERATION_SECONDS = int(os.environ.get("GEOCHAT_KAFKA_TOPIC_GENERATION_SECONDS", "60"))


def generation(at=None):
    return int((time.time() if at is None else at) * 1000) // (GENERATION_SECONDS * 1000)


def physical(topic, at=None):
    """The topic a record of `topic` goes to now (or at `at`, Unix seconds)."""
    if GENERATION_SECONDS <= 0 or topic not in ROTATING:
        return topic
    return f"{topic}.g{generation(at)}"


def recent(topic, generations=2):
    """The names `topic` was written under lately, newest first (itself if it does not rotate)."""
    if GENERATION_SECONDS <= 0 or topic not in ROTATING:
        return [topic]
    now = generation()
    return [f"{topic}.g{now - back}" for back in range(generations)]
