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


def safe_to_read(names):
    """Of the broker's topic names, those a consumer may read now without the broker deleting them
    under it (librdkafka 2.16 crashes when a topic it fetches is deleted, docs/architecture.md):
    the services delete generations four periods after their end and a requester's replaced reply
    topic once no request waits on it, so this keeps the last three generations of each rotating
    topic, each requester's newest reply topic, and every topic that is neither."""
    kept, newest_reply = [], {}
    now = generation() if GENERATION_SECONDS > 0 else None
    for name in names:
        base, _, suffix = name.rpartition(".g")
        if base in ROTATING and suffix.isdigit():
            if now is not None and int(suffix) >= now - 2:
                kept.append(name)
            continue
        if name.startswith("geochat.replies."):
            base, _, suffix = name.rpartition(".r")
            if suffix.isdigit():
                if int(suffix) > newest_reply.get(base, (-1, None))[0]:
                    newest_reply[base] = (int(suffix), name)
                continue
        kept.append(name)
    return kept + [name for _, name in newest_reply.values()]
