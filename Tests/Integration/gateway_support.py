"""A gateway of the test's own on the running cluster: every rate setting at its
default (the stack's gateways run with them off), its own ports and log."""
import contextlib
import os
import socket
import subprocess
import uuid

from admin_support import ADMIN_OF
from conformance import free_port
from geochat_support.protocol import http
from geochat_support.stack import read_instance_env
from geochat_support.waiting import wait_until


def _ready(url, port):
    if not _open(port):
        return False
    try:
        return http(url + "/ready", timeout=2).status == 200
    except OSError:  # busy loading its index: not ready yet
        return False


def _open(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@contextlib.contextmanager
def extra_gateway(stack, name, **settings):
    """Starts it, waits until it is ready (its room index loaded), yields its public URL (its operators'
    listener is known to `admin_support.api`), stops it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOCHAT_")}
    env.update({key: value for key, value in read_instance_env(stack, "gateway-1").items()
                if not key.startswith("GEOCHAT_RATE_") and key not in ("BINARY", "GEOCHAT_PUSH_MAX_PER_ADDRESS")})
    port, admin_port = free_port(), free_port()
    env.update({"GEOCHAT_INSTANCE_ID": f"gateway-{name}-" + uuid.uuid4().hex[:6], "GEOCHAT_HTTP_PORT": str(port),
                "GEOCHAT_ADMIN_PORT": str(admin_port),
                "LD_LIBRARY_PATH": os.path.join(stack["ROOT"], ".runtime", "lib")})
    env.update(settings)
    log = open(os.path.join(stack["STATE_DIR"], "logs", f"gateway-{name}.log"), "ab")
    process = subprocess.Popen([os.path.join(stack["BIN_DIR"], "geochat-gateway")], env=env, stdout=log,
                               stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    ADMIN_OF[url] = f"http://127.0.0.1:{admin_port}"  # for admin_support.api
    try:
        try:
            wait_until(lambda: _ready(url, port), timeout=90,
                       interval=0.3, message=f"the {name} gateway is ready")
        except Exception as error:
            log.flush()
            with open(log.name, "rb") as written:
                tail = written.read()[-4000:].decode("utf-8", "replace")
            raise AssertionError(f"{error}; the last lines of its log:\n{tail}") from error
        yield url
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        ADMIN_OF.pop(url, None)
