"""The server bridge (mcbuild/runtime/backends/server/bridge), layers 1-3 of docs/server.md.

Layer 1 drives the real bridge process with its stub bot (no Minecraft): request/response,
deadlines, the Python watchdog, unknown ops, malformed lines and dying with the parent.
Layers 2-3 are Node tests (``node --test``) run from here: mineflayer against a scripted
minecraft-protocol server, and against flying-squid serving a copy of a built save.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mcbuild.runtime.backends.server.bridge_client import (
    BRIDGE_DIR,
    BridgeClient,
    BridgeDied,
    BridgeError,
    BridgeFault,
    BridgeTimeout,
)
from mcbuild.runtime.errors import InfrastructureFault
from waiting import DEADLINE_S, until

NODE = shutil.which("node")
STUB = BRIDGE_DIR / "test" / "stub_ops.js"
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (the server bridge needs Node >= 18)")


@pytest.fixture
def bridge():
    client = BridgeClient(ops_module=STUB, grace_s=1.0)
    yield client
    client.close(timeout=2.0)


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "State:\tZ" in status


def _wait_gone(pid: int, timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if _gone(pid):
            return True
        time.sleep(0.05)
    return False


# ---------------------------------------------------------------------------- layer 1: protocol
def test_request_response_and_events(bridge):
    assert bridge.request("echo", {"a": [1, 2], "b": "x"}) == {"args": {"a": [1, 2], "b": "x"}}
    assert bridge.request("connect", {"username": "bot1"}) == {"username": "bot1"}
    assert bridge.wait_event("spawned")["username"] == "bot1"
    ready = bridge.wait_event("ready")
    assert {"connect", "ping", "quit"} <= set(ready["ops"])
    assert not bridge.protocol_errors   # nothing but protocol lines on stdout


def test_an_ops_list_extends_the_stub():
    with BridgeClient(ops_module=BRIDGE_DIR / "test" / "stub_ops_list.js") as client:
        assert client.request("extended", {"k": 1}) == {"extended": True, "args": {"k": 1}}
        assert client.request("echo", {"k": 2}) == {"args": {"k": 2}}


def test_damaged_answers_are_faults_or_protocol_errors():
    with BridgeClient(ops_module=BRIDGE_DIR / "test" / "stub_ops_list.js") as client:
        with pytest.raises(BridgeFault, match="malformed answer to listed"):
            client.request("listed")
        assert client.request("garbled") == {}          # bytes that are not UTF-8: one protocol error
        assert len(client.protocol_errors) == 1 and client.request("echo", {"k": 3}) == {"args": {"k": 3}}


def test_error_responses_carry_codes(bridge):
    with pytest.raises(BridgeError) as err:
        bridge.request("fail", {"code": "no_result", "message": "empty grid", "details": {"cells": 4}})
    assert (err.value.code, err.value.message, err.value.details) == ("no_result", "empty grid", {"cells": 4})
    with pytest.raises(BridgeError) as err:
        bridge.request("throw")
    assert err.value.code == "internal" and "unexpected stub exception" in err.value.message
    with pytest.raises(BridgeError) as err:
        bridge.request("no_such_op")
    assert err.value.code == "unknown_op"
    assert bridge.request("ping")["pong"] is True     # still serving


def test_malformed_lines_are_answered_and_survived(bridge):
    for line in ("this is not json", "[1, 2]", '{"op": "echo"}', '{"id": 7}', '{"id": 8, "op": "echo", "args": 3}',
                 '{"id": 9, "op": "echo", "deadline_ms": -1}'):
        bridge.send_raw(line)
    until(lambda: len(bridge.protocol_errors) >= 6, "six protocol errors")
    assert len(bridge.protocol_errors) == 6
    assert all('"bad_request"' in e for e in bridge.protocol_errors)
    assert bridge.request("echo", {"k": 1}) == {"args": {"k": 1}}


def test_deadline_is_enforced_in_node(bridge):
    start = time.monotonic()
    with pytest.raises(BridgeError) as err:
        bridge.request("slow", {"ms": 600_000}, deadline_ms=300)
    assert err.value.code == "timeout"
    assert time.monotonic() - start < DEADLINE_S                # not the op's ten minutes
    assert bridge.request("slow", {"ms": 50}, deadline_ms=60_000) == {"slept": 50}


def test_queries_answer_while_an_exclusive_op_runs(bridge):
    """A query is answered while an exclusive op (ten minutes long) runs: not queued behind it,
    however slowly a loaded machine answers it."""
    outcome: list[object] = []

    def slow_op() -> None:
        try:
            outcome.append(bridge.request("slow", {"ms": 600_000}, deadline_ms=700_000))
        except BridgeFault as exc:          # the bridge closed under it at the end of the test
            outcome.append(exc)

    slow = threading.Thread(target=slow_op)
    slow.start()
    bridge.wait_event("slow_started", timeout_s=DEADLINE_S)
    assert bridge.request("state") == {"inventory": {}}
    assert slow.is_alive() and not outcome              # answered while the slow op still ran
    bridge.close(timeout=2.0)
    slow.join(DEADLINE_S)
    assert not slow.is_alive() and isinstance(outcome[0], BridgeFault)


def test_watchdog_kills_a_hung_bridge(bridge):
    start = time.monotonic()
    with pytest.raises(BridgeTimeout) as err:
        bridge.request("hang", deadline_ms=200)      # blocks Node's event loop: only Python can react
    assert isinstance(err.value, InfrastructureFault)
    assert time.monotonic() - start < DEADLINE_S                # the hang never ends by itself
    assert _wait_gone(bridge.proc.pid, DEADLINE_S)
    with pytest.raises(BridgeFault):
        bridge.request("ping")


def test_a_crashed_bridge_is_reported(bridge):
    with pytest.raises(BridgeDied) as err:
        bridge.request("crash", {"status": 3})
    assert "status 3" in str(err.value)
    assert isinstance(err.value, InfrastructureFault)   # the runner reruns, never scores, such episodes
    with pytest.raises(BridgeDied):
        bridge.request("ping")


def test_exits_when_stdin_closes():
    client = BridgeClient(ops_module=STUB)
    client.proc.stdin.close()
    assert client.proc.wait(DEADLINE_S) == 0


def test_exits_on_sigterm():
    client = BridgeClient(ops_module=STUB)
    client.proc.send_signal(signal.SIGTERM)
    assert client.proc.wait(DEADLINE_S) == 0


def test_close_and_context_manager():
    with BridgeClient(ops_module=STUB) as client:
        assert client.request("ping")["pong"]
    assert not client.alive
    with pytest.raises(BridgeFault):
        client.request("ping")


def test_exits_when_the_parent_dies_even_with_stdin_open():
    """The parent is SIGKILLed while a grandchild keeps the bridge's stdin open: only the ppid
    poll can notice."""
    launcher = ("import os, subprocess, sys\n"
                "from mcbuild.runtime.backends.server.bridge_client import BridgeClient\n"
                f"client = BridgeClient(ops_module={str(STUB)!r})\n"
                "os.set_inheritable(client.proc.stdin.fileno(), True)\n"
                "holder = subprocess.Popen(['sleep', '30'], close_fds=False)\n"
                "print(client.proc.pid, holder.pid, flush=True)\n"
                "import time; time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", launcher], stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[1])
    holder = None
    try:
        pid, holder = map(int, parent.stdout.readline().split())
        assert not _gone(pid)
        parent.kill()
        parent.wait()
        assert not _gone(holder)                      # the stdin pipe is still open
        assert _wait_gone(pid, DEADLINE_S), "bridge outlived its parent"
    finally:
        parent.kill()
        if holder:
            os.kill(holder, signal.SIGKILL)


# ---------------------------------------------------------------------------- layers 2-3: node --test
def _vanilla_save(request) -> Path:
    """A built Vanilla save: build/worlds/<world>/vanilla, else the world_build fixture's."""
    saves = sorted((Path(__file__).resolve().parents[1] / "build" / "worlds").glob("*/vanilla/level.dat"))
    if not saves:       # a failing world builder fails this test: it never turns into a skip
        saves = sorted(Path(request.getfixturevalue("world_build")).glob("worlds/*/vanilla/level.dat"))
    assert saves, "the world_build fixture built no vanilla save"
    return saves[0].parent


class _NodeRun:
    """``node --test <file>`` started in the background, so layers 2 and 3 run concurrently."""

    def __init__(self, file: str, env: dict[str, str] | None = None):
        if not (BRIDGE_DIR / "node_modules" / "mineflayer").is_dir():
            pytest.fail("bridge dependencies missing: npm ci --prefix mcbuild/runtime/backends/server/bridge --no-audit --no-fund")
        self.proc = subprocess.Popen([NODE, "--test", file], cwd=BRIDGE_DIR, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env={**os.environ, **(env or {})})

    def result(self, timeout: int = 600) -> str:
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
            pytest.fail(f"node --test timed out after {timeout} s:\n{out[-4000:]}")
        assert self.proc.returncode == 0, out[-6000:]
        assert "# fail 0" in out and "# pass 0" not in out and "# skipped 0" in out, out[-6000:]
        return out


@pytest.fixture(scope="module")
def node_layers(request):
    """Start layer 2 (scripted server) and layer 3 (flying-squid) together."""
    runs = {"wire": _NodeRun("test/wire.test.js")}
    try:
        save = _vanilla_save(request)
    except pytest.skip.Exception as skipped:
        runs["squid"] = skipped
    else:
        runs["squid"] = _NodeRun("test/flying_squid.test.js", env={"MCBUILD_TEST_SAVE": str(save)})
    yield runs
    for run in runs.values():
        if isinstance(run, _NodeRun) and run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait()


def test_wire_level_against_a_scripted_server(node_layers):
    """Layer 2: craft_grid clicks and the server's result slot, furnace, enchanting, advancements."""
    out = node_layers["wire"].result()
    assert "no_result" in out and "advancements" in out


def test_flying_squid_serves_a_copy_of_a_real_save(node_layers):
    """Layer 3: login at the save's spawn, goto, find_blocks, dig + pickup, place, collect, equip,
    prepare_access, pillar."""
    run = node_layers["squid"]
    if not isinstance(run, _NodeRun):
        pytest.skip(str(run))
    out = run.result()    # flying-squid logins alone can take a minute on a loaded machine
    assert "spawns at the save's level.dat spawn" in out
