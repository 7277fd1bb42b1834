"""The RCON console against a scripted Source RCON server at the real TCP boundary.

The scripted server speaks the protocol as Minecraft 1.19 does (``RconClient``): a login packet
(type 3) is answered with the request id, or -1 for a wrong password; a command (type 2) with a
response (type 0) of at most 4096 bytes per packet, longer outputs split over several; an unknown
type with ``Unknown request <type in hex>``.
"""
from __future__ import annotations

import socket
import struct
import threading
from typing import Callable

import pytest

from mcbuild.runtime.backends.server.console import Rcon, passed
from mcbuild.runtime.errors import InfrastructureFault
from waiting import DEADLINE_S

PASSWORD = "pw-of-this-run"
CHUNK = 4096


class ScriptedRcon:
    """One-connection-at-a-time Source RCON server on loopback; ``reply(command)`` decides outputs."""

    def __init__(self, reply: Callable[[str], str | bytes | None]):
        self.reply = reply
        self.commands: list[str] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self._session(conn)

    def _session(self, conn: socket.socket) -> None:
        while True:
            head = _read(conn, 4)
            if head is None:
                return
            body = _read(conn, struct.unpack("<i", head)[0])
            if body is None:
                return
            rid, kind = struct.unpack("<ii", body[:8])
            text = body[8:-2].decode()
            if kind == 3:
                _send(conn, rid if text == PASSWORD else -1, 2, "")
            elif kind == 2:
                self.commands.append(text)
                out = self.reply(text)
                if out is None:                  # the server drops the connection
                    return
                for i in range(0, max(len(out), 1), CHUNK):
                    _send(conn, rid, 0, out[i:i + CHUNK])
            else:
                _send(conn, rid, 0, f"Unknown request {kind:x}")

    def close(self) -> None:
        self.sock.close()


def _read(conn: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        part = conn.recv(n - len(data))
        if not part:
            return None
        data += part
    return data


def _send(conn: socket.socket, rid: int, kind: int, text: str | bytes) -> None:
    body = struct.pack("<ii", rid, kind) + (text if isinstance(text, bytes) else text.encode()) + b"\0\0"
    conn.sendall(struct.pack("<i", len(body)) + body)


@pytest.fixture
def scripted():
    servers: list[ScriptedRcon] = []

    def start(reply: Callable[[str], str | None]) -> ScriptedRcon:
        servers.append(ScriptedRcon(reply))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def test_commands_get_the_servers_replies_in_order(scripted):
    srv = scripted(lambda c: "Test passed, count: 2" if c.startswith("execute") else f"ran {c}")
    rcon = Rcon(srv.port, PASSWORD, connect_within_s=DEADLINE_S)
    try:
        assert rcon.run("time set day") == "ran time set day"
        assert passed(rcon.run("execute if entity @e[type=minecraft:cow]"))
    finally:
        rcon.close()
    assert srv.commands == ["time set day", "execute if entity @e[type=minecraft:cow]"]


def test_an_output_split_over_several_packets_is_joined(scripted):
    long = "".join(chr(ord("a") + i % 26) for i in range(CHUNK + 1500))
    srv = scripted(lambda c: long)
    rcon = Rcon(srv.port, PASSWORD, connect_within_s=DEADLINE_S)
    try:
        assert rcon.run("datapack list enabled") == long
        assert rcon.run("say next") == long           # the stream is still in step afterwards
    finally:
        rcon.close()


def test_a_wrong_password_is_one_readable_fault(scripted):
    srv = scripted(lambda c: "")
    with pytest.raises(InfrastructureFault, match=f"RCON on port {srv.port} refused the password"):
        Rcon(srv.port, "not-the-password", connect_within_s=DEADLINE_S)


def test_no_server_and_a_dropped_connection_are_faults(scripted):
    free = socket.create_server(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with pytest.raises(InfrastructureFault, match="not reachable"):
        Rcon(port, PASSWORD, connect_within_s=0.5)
    srv = scripted(lambda c: None)
    rcon = Rcon(srv.port, PASSWORD, connect_within_s=DEADLINE_S, timeout_s=2)
    try:
        with pytest.raises(InfrastructureFault, match="RCON command 'stop' failed"):
            rcon.run("stop")
    finally:
        rcon.close()


def test_a_damaged_reply_is_one_fault(scripted):
    srv = scripted(lambda c: b"\xff\xfe not utf-8")
    rcon = Rcon(srv.port, PASSWORD, connect_within_s=DEADLINE_S, timeout_s=2)
    try:
        with pytest.raises(InfrastructureFault, match="RCON command 'list' failed"):
            rcon.run("list")
    finally:
        rcon.close()
