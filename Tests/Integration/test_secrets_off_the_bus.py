"""Secrets never travel readable on Kafka (docs/security.md, "Secrets and the
bus"): an admin logs in and works through both gateways; then every record of
every topic on the broker, read from its start, is searched for the bearer
token (and its hex body) and the password. The token is minted by the gateway
and only its SHA-256 is sent; the password crosses sealed with the cluster's
login key. A login whose seal the session service cannot open is refused."""
import base64
import json
import secrets
import uuid

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from admin_support import api, bootstrap_admin, login
from geochat_support import topics as bus_topics
from geochat_support.commands import CommandClient


def every_record(brokers):
    """Every record of every topic the broker has, from the start of each partition: but for the
    old generations and replaced reply topics the services are deleting (`topics.safe_to_read`),
    which hold nothing this test's admin did."""
    admin = AdminClient({"bootstrap.servers": brokers})
    listed = admin.list_topics(timeout=10).topics
    topics = {name: listed[name] for name in bus_topics.safe_to_read(listed)}
    consumer = Consumer({"bootstrap.servers": brokers, "group.id": "secrets-scan-" + uuid.uuid4().hex,
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        partitions = []
        for name, metadata in topics.items():
            for p in metadata.partitions:
                low, high = consumer.get_watermark_offsets(TopicPartition(name, p), timeout=10)
                if high > low:
                    partitions.append((TopicPartition(name, p, low), high))
        consumer.assign([tp for tp, _ in partitions])
        remaining = {(tp.topic, tp.partition): high for tp, high in partitions}
        records = []
        idle = 0
        while remaining and idle < 20:
            batch = consumer.consume(500, timeout=0.5)
            idle = idle + 1 if not batch else 0
            for record in batch:
                if record.error():
                    continue
                records.append(record)
                key = (record.topic(), record.partition())
                if key in remaining and record.offset() + 1 >= remaining[key]:
                    del remaining[key]
        assert not remaining, f"partitions not read to their end: {sorted(remaining)[:5]}"
        return records
    finally:
        consumer.close()


def test_no_token_or_password_in_any_kafka_record(stack):
    a, b = stack["gateways"][:2]
    name, password, run = bootstrap_admin(stack)
    assert run.returncode == 0, run.stderr
    token = login(a, name, password)
    assert api(b, "GET", "sessions", token=token).status == 200
    assert api(a, "GET", "audit", token=token).status == 200
    assert api(b, "POST", "login", {"name": name, "password": password + "x"}).status == 401
    other = login(b, name, password)
    assert api(a, "POST", "logout", token=other).status == 200

    records = every_record(stack["KAFKA_BROKERS"])
    login_commands = [r for r in records if r.topic() == "geochat.admin.commands" and b'"login"' in (r.value() or b"")]
    assert len(login_commands) >= 3, "the logins crossed the admin topic"
    secrets_ = {"token": token.encode(), "token body": token.removeprefix("gca_").encode(),
                "second token": other.encode(), "password": password.encode(),
                "password in base64": base64.b64encode(password.encode()).rstrip(b"=")}
    for record in records:
        for what, secret in secrets_.items():
            for part in (record.key() or b"", record.value() or b""):
                assert secret not in part, f"the {what} is readable in {record.topic()}[{record.partition()}]@{record.offset()}"


def test_a_login_sealed_with_another_key_is_refused(stack):
    """What a reader of the topic could do with what it read: send a login of
    its own for a token it chose, the sealed password copied from a real one."""
    a = stack["gateways"][0]
    name, password, _ = bootstrap_admin(stack)
    login(a, name, password)
    genuine = next(json.loads(r.value()) for r in reversed(every_record(stack["KAFKA_BROKERS"]))
                   if r.topic() == "geochat.admin.commands" and json.loads(r.value()).get("command", {}).get("login", {})
                   .get("name") == name)
    sealed = genuine["command"]["login"]["sealedPassword"]
    chosen = "gca_" + secrets.token_hex(32)
    import hashlib
    chosen_hash = hashlib.sha256(chosen.encode()).hexdigest()
    client = CommandClient(stack["KAFKA_BROKERS"])
    try:
        reply = client.request("geochat.admin.commands", name,
                               {"login": {"name": name, "sealedPassword": sealed, "tokenHash": chosen_hash}})
    finally:
        client.close()
    assert "granted" not in json.dumps(reply), reply
    assert api(a, "GET", "sessions", token=chosen).status == 401
