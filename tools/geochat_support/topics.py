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



def generation_seconds():
    """The period the stack's services rotate by: 0 (nothing rotates) under the `kafka` profile, which
    a stack started with `--kafka-profile kafka` or `--kafka-brokers` names in its stack.env; else the
    services' default, 60 s, unless GEOCHAT_KAFKA_TOPIC_GENERATION_SECONDS says otherwise."""
    if "GEOCHAT_KAFKA_TOPIC_GENERATION_SECONDS" in os.environ:
        return int(os.environ["GEOCHAT_KAFKA_TOPIC_GENERATION_SECONDS"])
    path = os.environ.get("GEOCHAT_STACK_ENV")
    if path and os.path.exists(path):
        with open(path) as f:
            if "KAFKA_PROFILE=kafka" in (line.strip() for line in f):
                return 0
    return 60


GENERATION_SECONDS = generation_seconds()


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
