"""The stack a test, the fault harness or a benchmark runs against. deploy/stack.sh
writes STATE_DIR/stack.env (URLs of every instance, PostgreSQL and Kafka
addresses, ROOT, BIN_DIR) and one STATE_DIR/instances/NAME.env per instance
(the environment that instance runs with)."""
import os
import shlex
import subprocess
import time
import urllib.request

from . import db

SERVICE_KINDS = ("gateway", "session", "rooms", "messaging", "expiry")


class StackCommandError(RuntimeError):
    pass


def read_env_file(path):
    """A file of KEY=VALUE lines as a dict, the shell's quoting undone: values are shell
    words (GATEWAY_URLS="a b" reads as `a b`); blank lines and # comments are skipped."""
    values = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, value = line.split("=", 1)
                values[key] = " ".join(shlex.split(value))
    return values


def read_stack_env(path=None):
    """stack.env as a dict. Without a path: the file named by GEOCHAT_STACK_ENV."""
    path = path or os.environ.get("GEOCHAT_STACK_ENV")
    if not path:
        raise RuntimeError("GEOCHAT_STACK_ENV is not set: start a stack with deploy/stack.sh and name its stack.env")
    return read_env_file(path)


def read_instance_env(env, instance):
    """The environment an instance (gateway-1, session-1, …) runs with: its KEY=VALUE lines with the
    shell's quoting undone (stack.sh quotes what it was given with --env), BINARY included (the
    executable, not a variable the service reads)."""
    return read_env_file(os.path.join(env["STATE_DIR"], "instances", instance + ".env"))


def instance_urls(env):
    """{instance name: base URL} for every service instance, e.g. {"gateway-1": "http://127.0.0.1:…"}."""
    urls = {}
    for kind in SERVICE_KINDS:
        for i, url in enumerate(env[kind.upper() + "_URLS"].split(), 1):
            urls[f"{kind}-{i}"] = url
    return urls


def run_stack_command(env, *args, timeout=180):
    """`deploy/stack.sh ARGS… --state-dir STATE_DIR` (kill, start, stop-kafka, …); raises when it fails."""
    run = subprocess.run(["bash", os.path.join(env["ROOT"], "deploy", "stack.sh"), *args, "--state-dir",
                          env["STATE_DIR"]], capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        raise StackCommandError(f"stack.sh {' '.join(args)}: {run.stdout}{run.stderr}")


def restart_gateways(env, timeout=90):
    """Stops and starts every gateway in turn, each ready before the next goes: how
    gateways learn of rooms written into PostgreSQL behind the rooms service's back
    (their region index loads from a snapshot at start; docs/operations.md)."""
    urls = instance_urls(env)
    for instance in sorted(name for name in urls if name.startswith("gateway-")):
        run_stack_command(env, "stop", instance)
        run_stack_command(env, "start", instance)
        deadline = time.monotonic() + timeout
        while not is_ready(urls[instance]):
            if time.monotonic() > deadline:
                raise StackCommandError(f"{instance} not ready within {timeout}s of its restart")
            time.sleep(0.2)


def is_ready(url, timeout=1):
    """Whether the instance at `url` answers 200 on /ready."""
    try:
        with urllib.request.urlopen(url + "/ready", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


class Stack:
    """The stack of one stack.env, for the scripts (the integration tests use the dict of `read_stack_env`)."""

    def __init__(self, env_path=None, sql_timeout=120):
        self.env = read_stack_env(env_path)
        self.sql_timeout = sql_timeout
        self.root, self.state_dir = self.env["ROOT"], self.env["STATE_DIR"]
        self.gateways = self.env["GATEWAY_URLS"].split()
        # Each gateway's operators' listener (admin API, /status, /metrics), by its public URL.
        self.operators_of = dict(zip(self.gateways, self.env.get("GATEWAY_ADMIN_URLS", "").split()))
        self.messaging = self.env["MESSAGING_URLS"].split()
        self.rooms = self.env["ROOMS_URLS"].split()
        self.urls = instance_urls(self.env)

    def operators(self, url):
        """Where an instance serves /status and /metrics: a gateway's operators' listener, any other's own port."""
        return self.operators_of.get(url, url)

    def command(self, *args, timeout=180):
        run_stack_command(self.env, *args, timeout=timeout)

    def ready(self, instance):
        return is_ready(self.urls[instance])

    def pid(self, instance):
        with open(os.path.join(self.state_dir, "pids", instance + ".pid")) as f:
            return int(f.read().strip())

    def sql(self, statement, timeout=None):
        """db.sql on this stack's database; `timeout` defaults to the stack's `sql_timeout`."""
        return db.sql(self.env, statement, timeout=timeout or self.sql_timeout)
