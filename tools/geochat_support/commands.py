"""Commands to the services straight over Kafka, in their own wire format
(docs/architecture.md, "Schemas"): the envelopes the Swift KafkaCommandBus
sends, answered on a one-partition reply topic of our own, read from its start."""
import base64
import hashlib
import hmac
import json
import os
import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from . import topics
from .waiting import ConditionTimeout

REQUEST_SCHEMA = "geochat.request.v1"


class CommandClient:
    """A requester of our own. `send` only queues a record; `request` sends one
    command and waits for its reply; `wait` collects the replies of many."""

    def __init__(self, brokers):
        self.reply_topic = "geochat.replies.pytest-" + uuid.uuid4().hex[:12]
        admin = AdminClient({"bootstrap.servers": brokers})
        for future in admin.create_topics([NewTopic(self.reply_topic, num_partitions=1, replication_factor=1)]).values():
            future.result(timeout=20)
        self.producer = Producer({"bootstrap.servers": brokers, "linger.ms": 1, "enable.idempotence": True})
        self.consumer = Consumer({
            "bootstrap.servers": brokers, "group.id": "pytest-" + uuid.uuid4().hex[:8],
            "enable.auto.commit": False, "fetch.wait.max.ms": 10})
        self.consumer.assign([TopicPartition(self.reply_topic, 0, 0)])
        self.replies = {}

    def close(self):
        self.consumer.close()

    def send(self, topic, key, command, idempotency_key=None, timeout=20, partition=None):
        """Queues a command (`{name: fields}`) on `topic` (its current generation,
        `topics.physical`) under `key`, or on one `partition`; returns its
        correlation id. `flush` delivers what is queued."""
        correlation = uuid.uuid4().hex
        envelope = {
            "schema": REQUEST_SCHEMA, "correlationID": correlation,
            "idempotencyKey": idempotency_key or uuid.uuid4().hex, "replyTo": self.reply_topic,
            "deadlineMs": int(time.time() * 1000) + timeout * 1000, "command": command,
        }
        kwargs = {"key": key.encode(), "value": json.dumps(envelope).encode()}
        if partition is not None:
            kwargs["partition"] = partition
        self.producer.produce(topics.physical(topic), **kwargs)
        return correlation

    def flush(self):
        assert self.producer.flush(10) == 0, "records not delivered"

    def _read(self):
        record = self.consumer.poll(0.2)
        if record is not None and not record.error():
            reply = json.loads(record.value())
            self.replies[reply["correlationID"]] = reply

    def reply(self, correlation, timeout=25):
        deadline = time.monotonic() + timeout
        while correlation not in self.replies:
            if time.monotonic() > deadline:
                raise ConditionTimeout(f"no reply to {correlation} within {timeout}s")
            self._read()
        return self.replies.pop(correlation)

    def wait(self, correlations, timeout=20):
        """The replies of all `correlations`, in their order."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not all(c in self.replies for c in correlations):
            self._read()
        missing = [c for c in correlations if c not in self.replies]
        if missing:
            raise ConditionTimeout(f"no reply for {len(missing)} of {len(correlations)} commands")
        return [self.replies[c] for c in correlations]

    def request(self, topic, key, command, **kwargs):
        correlation = self.send(topic, key, command, **kwargs)
        self.flush()
        return self.reply(correlation)


# What each operator command's seal covers, in order (Shared/GeoChatDomain/Wire: `sealedFields`).
OPERATOR_FIELDS = {
    "adminRemove": lambda c: [str(c["room"]), c["by"]],
    "removeIdleRooms": lambda c: [",".join(map(str, c["rooms"])), str(c["idleBeforeMs"]), c["reason"], str(c["job"])],
    "removeRooms": lambda c: [",".join(map(str, c["rooms"])), str(c["job"]), str(c["batch"])],
}


def operator_sealed(stack, command):
    """`command` (`{name: fields}`) sealed as the admin gateway and expiry seal it (OperatorSeal:
    HMAC-SHA256 under the stack's operator key, <state>/operator.key), so that rooms and messaging take it."""
    (name, fields), = command.items()
    with open(os.path.join(stack["STATE_DIR"], "operator.key")) as f:
        key = base64.b64decode(f.read().strip())
    content = b"geochat.operator.v1"
    for field in [name] + OPERATOR_FIELDS[name](fields):
        data = field.encode()
        content += len(data).to_bytes(4, "big") + data
    seal = base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()
    return {name: dict(fields, seal=seal)}
