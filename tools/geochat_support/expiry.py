"""The expiry service from outside: its commands over the real Kafka broker
(geochat_support.commands), and idle rooms inserted in bulk by SQL for it to find."""
import time
import uuid

from .commands import CommandClient
from .waiting import ConditionTimeout

EXPIRY_TOPIC = "geochat.expiry.commands"
ROOMS_TOPIC = "geochat.rooms.commands"


class Commands(CommandClient):
    """The command client with the expiry service's commands."""

    def __init__(self, stack):
        super().__init__(stack["KAFKA_BROKERS"])

    # The expiry service's commands (Shared/GeoChatDomain/Wire/ExpiryCommands.swift).

    def start_run(self, dry_run, idle_limit_s, requested_by, **kwargs):
        command = {"startRun": {"dryRun": dry_run, "requestedBy": requested_by}}
        if idle_limit_s is not None:
            command["startRun"]["idleLimitSeconds"] = idle_limit_s
        return self.request(EXPIRY_TOPIC, "expiry", command, **kwargs)

    def job(self, job_id):
        return job_of(self.request(EXPIRY_TOPIC, "expiry", {"job": {"id": job_id}}))

    def jobs(self, limit):
        reply = self.request(EXPIRY_TOPIC, "expiry", {"jobs": {"limit": limit}})
        assert "reply" in reply, reply
        return reply["reply"]

    def start_own_run(self, dry_run, idle_limit_s, requested_by, timeout=60):
        """Starts a run of our own: while another job runs (the 2 s schedule's),
        the service answers that one; ask again until ours is the one started."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            job = job_of(self.start_run(dry_run, idle_limit_s, requested_by))
            if job["trigger"] == "admin:" + requested_by:
                return job
            time.sleep(0.2)
        raise ConditionTimeout("could not start an expiry run of our own")

    def wait_finished(self, job_id, timeout=90):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            job = self.job(job_id)
            if job["status"] != "running":
                return job
            time.sleep(0.3)
        raise ConditionTimeout(f"expiry job {job_id} did not finish within {timeout}s")


def job_of(reply):
    assert "reply" in reply and reply["reply"], reply
    return reply["reply"]


def idle_rooms_statement(n, age_s, messages_per_room, members_per_room):
    """`n` rooms (with messages and memberships) last visited `age_s` ago, in one statement straight into
    the owners' tables, returning their ids (the tests run it through psql, the expiry benchmark in chunks)."""
    tag = uuid.uuid4().hex[:8]
    return f"""
        WITH r AS (
            INSERT INTO rooms.rooms (x, y, z, topic, created_at, last_visited_at)
            SELECT 0.123 + g * 1e-9, 0.456, 15, 'bulk {tag} ' || g,
                   now() - make_interval(secs => {age_s}), now() - make_interval(secs => {age_s})
            FROM generate_series(1, {n}) g RETURNING id),
        logs AS (INSERT INTO messaging.room_logs (room_id, last_id) SELECT id, {messages_per_room} FROM r),
        msgs AS (
            INSERT INTO messaging.messages (room_id, id, nick, text, idempotency_key)
            SELECT r.id, k, 'old', 'old words', 'bulk-{tag}-' || r.id || '-' || k
            FROM r, generate_series(1, {messages_per_room}) k),
        members AS (
            INSERT INTO rooms.memberships (room_id, session_id, nick)
            SELECT r.id, 'bulk{tag}' || r.id || '-' || k, 'old' FROM r, generate_series(1, {members_per_room}) k)
        SELECT id FROM r ORDER BY id"""
