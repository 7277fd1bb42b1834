"""Commands to the server on the harness side: RCON (authoritative, with replies) or, where a
server has no RCON (flying-squid in the layer-3 tests), the bridge's harness ``command`` op.

RCON uses ``mctools`` (MIT licence; its ``RCONClient`` speaks the Source RCON protocol, which
Minecraft serves). One connection per server, serialized by a lock; a refused, dropped or timed-out
connection, or a damaged reply, is an :class:`mcbuild.runtime.errors.InfrastructureFault`. Nothing here is reachable from an agent.
"""
from __future__ import annotations

import struct
import threading
import time
from typing import Protocol

from mctools import RCONClient
from mctools.errors import MCToolsError

from mcbuild.runtime.errors import InfrastructureFault


class Console(Protocol):
    """Runs harness commands (no leading slash); ``replies`` says whether outputs are returned."""

    replies: bool

    def run(self, command: str) -> str: ...

    def close(self) -> None: ...


class Rcon:
    """A logged-in RCON connection to a Minecraft server."""

    replies = True

    def __init__(self, port: int, password: str, host: str = "127.0.0.1", timeout_s: float = 10.0,
                 connect_within_s: float = 30.0):
        self._lock = threading.Lock()
        end = time.monotonic() + connect_within_s
        while True:
            client = RCONClient(host, port, format_method=RCONClient.REMOVE, timeout=timeout_s)
            try:
                logged_in = client.login(password)
            except (OSError, MCToolsError) as err:
                client.stop()
                if time.monotonic() > end:
                    raise InfrastructureFault(f"RCON on port {port} not reachable: {err}") from None
                time.sleep(0.25)
                continue
            if not logged_in:
                client.stop()
                raise InfrastructureFault(f"RCON on port {port} refused the password of this run")
            break
        self._client = client

    def run(self, command: str) -> str:
        with self._lock:
            try:
                return str(self._client.command(command))
            except (OSError, MCToolsError, ValueError, struct.error) as err:     # ValueError: a reply not UTF-8
                raise InfrastructureFault(f"RCON command {command.split()[0]!r} failed: {err}") from None

    def close(self) -> None:
        with self._lock:
            self._client.stop()


class BridgeConsole:
    """Commands sent in the bot's name through the bridge's harness-only ``command`` op (no replies)."""

    replies = False

    def __init__(self, bridge) -> None:
        self._bridge = bridge

    def run(self, command: str) -> str:
        self._bridge.call("command", {"command": command})
        return ""

    def close(self) -> None:
        pass


def passed(reply: str) -> bool:
    """Whether an ``execute if ...`` reply says the test passed."""
    return reply.strip().startswith("Test passed")
