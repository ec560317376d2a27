"""Helpers of the conformance suite (test_conformance_*.py): requests that
alternate between the gateways, raw HTTP for what urllib will not send, and a
gateway of our own for settings the shared stack does not have."""
import itertools
import os
import socket
import subprocess
import time
import uuid

import pytest

from geochat_support.db import sql
from geochat_support.protocol import chat, check_xml, DECLARATION, http, message_list, rooms_in
from geochat_support.stack import read_instance_env


class Alternating:
    """Hands out the stack's gateways in turn: A, B, A, B, …"""

    def __init__(self, gateways):
        self.gateways = list(gateways)
        self._cycle = itertools.cycle(self.gateways)

    def __call__(self):
        return next(self._cycle)


def element(response, tag):
    root = response.dom().documentElement
    assert root.tagName == tag, response
    return root


def success(response):
    assert response.status == 200, response
    return element(response, "success")


def lobby_room(stack):
    """The lobby's room id, as a GeoChat client finds it: a `chats` at x=y=0.5, z=0."""
    found = rooms_in(chat(stack["gateways"][0], cmd="chats", lon1=0.5, lat1=0.5, lon2=0.5, lat2=0.5, minz=0, maxz=0))
    lobby = [r for r in found if r["topic"] == "Lobby"]
    assert lobby, found
    return lobby[0]["id"]


def lobby_messages(gateway, past=None, prefix=""):
    url = gateway + prefix + "/messages.php" + ("" if past is None else f"?past={past}")
    response = check_xml(http(url))
    assert response.status == 200, response
    return message_list(element(response, "chat"))


def participants(gateway, room):
    response = chat(gateway, cmd="participants", chatid=room)
    assert response.status == 200, response
    root = element(response, "participants")
    assert root.getAttribute("chatid") == str(room)
    return [u.firstChild.data for u in root.getElementsByTagName("user")]


def raw_request(gateway, request_bytes, timeout=10):
    """Sends bytes as they are; returns (status or None, body bytes). None: the
    server closed the connection without an answer."""
    host, port = gateway.replace("http://", "").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        try:
            s.sendall(request_bytes)
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            pass  # the server may answer, or close, before reading all of a huge request
        chunks = []
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                if _complete(b"".join(chunks)):
                    break
        except (ConnectionResetError, socket.timeout):
            pass
    data = b"".join(chunks)
    if not data:
        return None, b""
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    return status, body


def _complete(data):
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value.strip())
    return False


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class OwnGateway:
    """A gateway process of our own, joined to the shared stack's Kafka, with
    extra settings (a path prefix, a small room cap). Stopped by `close`."""

    def __init__(self, stack, **settings):
        env = dict(os.environ)
        env.update(read_instance_env(stack, "gateway-1"))
        binary = env.pop("BINARY")
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        env["GEOCHAT_HTTP_PORT"] = str(port)
        env["GEOCHAT_ADMIN_PORT"] = str(free_port())  # its own operators' listener, not gateway-1's
        env["GEOCHAT_INSTANCE_ID"] = "gateway-conformance-" + uuid.uuid4().hex[:6]
        env["LD_LIBRARY_PATH"] = os.path.join(stack["ROOT"], ".runtime", "lib")
        env.update(settings)
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = os.path.join(stack["STATE_DIR"], "logs", env["GEOCHAT_INSTANCE_ID"] + ".log")
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen([binary], env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"own gateway exited with {self.process.returncode}; see {self.log_path}")
            try:
                if http(self.url + "/ready", timeout=2).status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.3)
        self.close()
        pytest.fail(f"own gateway not ready within 60 s; see {self.log_path}")

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


def stored_room(stack, room_id):
    """x, y, z, topic as the rooms service stored them (PostgreSQL 12+ prints float8
    in the shortest form that reads back exactly)."""
    rows = sql(stack, f"SELECT x::text, y::text, z, topic FROM rooms.rooms WHERE id = {room_id}")
    return rows[0] if rows else None


__all__ = ["Alternating", "DECLARATION", "OwnGateway", "element", "lobby_messages", "lobby_room", "participants",
           "raw_request", "stored_room", "success"]
