"""Python side of the server bridge: one ``node`` child per bot, newline-delimited JSON on stdio.

The protocol is documented in docs/server.md. Every request carries a deadline that Node enforces
(it answers ``timeout``); a Python watchdog additionally kills the child when an answer is more
than ``grace_s`` late, so a hung Node process never hangs an episode. Errors the bridge reports
raise :class:`BridgeError` (with ``.code``); a dead or hung bridge raises :class:`BridgeDied` /
:class:`BridgeTimeout`, which are infrastructure faults, not agent failures.
"""
from __future__ import annotations

import atexit
import collections
import json
import os
import shutil
import subprocess
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Mapping

from mcbuild.runtime.errors import InfrastructureFault

BRIDGE_DIR = Path(__file__).resolve().parent / "bridge"
DEFAULT_DEADLINE_MS = 30_000


class BridgeFault(InfrastructureFault):
    """The bridge process failed (died, hung, could not start): an infrastructure fault."""


class BridgeDied(BridgeFault):
    """The Node process exited, or could not be started."""


class BridgeTimeout(BridgeFault):
    """No answer within the deadline plus the grace period: the watchdog killed the process."""


class BridgeError(Exception):
    """An error response from an op: ``code`` (e.g. ``no_result``, ``timeout``), message, details."""

    def __init__(self, code: str, message: str, details: Any = None, op: str | None = None):
        super().__init__(f"{op or 'bridge'}: {code}: {message}")
        self.code = code
        self.message = message
        self.details = details
        self.op = op


class _Pending:
    __slots__ = ("op", "expires", "done", "response")

    def __init__(self, op: str, expires: float):
        self.op = op
        self.expires = expires
        self.done = threading.Event()
        self.response: dict[str, Any] | None = None


_LIVE: "weakref.WeakSet[BridgeClient]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for client in list(_LIVE):
        client.close(timeout=1.0)


class BridgeClient:
    """A running bridge process.

    ``ops_module`` selects an alternative op module (tests: the stub bot); ``on_event`` is called
    from the reader thread for every unsolicited event (they are also kept in :attr:`events`).
    """

    def __init__(self, *, bridge_dir: Path = BRIDGE_DIR, node: str | None = None, ops_module: str | Path | None = None,
                 env: Mapping[str, str] | None = None, grace_s: float = 5.0, log_path: Path | None = None,
                 on_event: Callable[[dict[str, Any]], None] | None = None, start_timeout_s: float = 15.0):
        node_bin = node or shutil.which("node")
        if not node_bin:
            raise BridgeDied("node is not installed (the server bridge needs Node >= 18)")
        child_env = {**os.environ, **(env or {}), "MCBUILD_BRIDGE_PARENT": str(os.getpid())}
        if ops_module is not None:
            child_env["MCBUILD_BRIDGE_OPS"] = str(ops_module)
        self.grace_s = grace_s
        self.events: collections.deque[dict[str, Any]] = collections.deque(maxlen=1000)
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=200)
        self.protocol_errors: collections.deque[str] = collections.deque(maxlen=200)   # the latest only
        self._on_event = on_event
        self._log = open(log_path, "a", encoding="utf-8") if log_path else None
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._next_id = 1
        self._fault: BridgeFault | None = None
        self._ready = threading.Event()
        try:
            self.proc = subprocess.Popen([node_bin, str(Path(bridge_dir) / "index.js")], cwd=str(bridge_dir),
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         env=child_env, text=True, encoding="utf-8", errors="replace", bufsize=1)
        except OSError as err:
            raise BridgeDied(f"cannot start the bridge: {err}") from err
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr      # all three are pipes
        self._stdin, self._stdout, self._stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        _LIVE.add(self)
        threading.Thread(target=self._read_stdout, name="bridge-stdout", daemon=True).start()
        threading.Thread(target=self._read_stderr, name="bridge-stderr", daemon=True).start()
        threading.Thread(target=self._watchdog, name="bridge-watchdog", daemon=True).start()
        if not self._ready.wait(start_timeout_s) or self._fault:
            fault = self._fault or BridgeDied(f"bridge not ready within {start_timeout_s:g} s")
            self.kill()
            raise fault

    # ------------------------------------------------------------------ requests
    def request(self, op: str, args: Mapping[str, Any] | None = None, deadline_ms: int = DEFAULT_DEADLINE_MS) -> dict:
        """Send one request and wait for its answer; returns the result object.

        Raises :class:`BridgeError` for an error response, :class:`BridgeDied` /
        :class:`BridgeTimeout` when the process is gone or the watchdog fired."""
        with self._lock:
            if self._fault:
                raise self._fault
            rid = self._next_id
            self._next_id += 1
            pending = _Pending(op, time.monotonic() + deadline_ms / 1000 + self.grace_s)
            self._pending[rid] = pending
            line = json.dumps({"id": rid, "op": op, "args": dict(args or {}), "deadline_ms": deadline_ms})
            try:
                self._stdin.write(line + "\n")
                self._stdin.flush()
            except (BrokenPipeError, OSError, ValueError) as err:
                self._pending.pop(rid, None)
                raise self._set_fault(BridgeDied(f"bridge stdin closed: {err}{self._stderr_hint()}")) from None
        pending.done.wait()
        response = pending.response
        if response is None:
            raise self._fault or BridgeDied("bridge gone")
        if response.get("ok"):
            result = response.get("result") or {}
            if not isinstance(result, dict):
                raise BridgeFault(f"malformed answer to {op}: the result is not an object")
            return result
        error = response.get("error") or {}
        if not isinstance(error, dict):
            raise BridgeFault(f"malformed answer to {op}: the error is not an object")
        raise BridgeError(str(error.get("code", "unknown")), str(error.get("message", "")), error.get("details"), op)

    def send_raw(self, line: str) -> None:
        """Write a raw line (tests: malformed input); its answer, if any, lands in ``protocol_errors``."""
        self._stdin.write(line + "\n")
        self._stdin.flush()

    def wait_event(self, name: str, timeout_s: float = 10.0) -> dict[str, Any]:
        """The first kept event called ``name`` (waiting up to ``timeout_s``)."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            for event in list(self.events):
                if event.get("event") == name:
                    return event
            if self._fault:
                raise self._fault
            time.sleep(0.02)
        raise TimeoutError(f"no {name!r} event within {timeout_s:g} s")

    # ------------------------------------------------------------------ lifecycle
    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, timeout: float = 5.0) -> None:
        """Ask the bridge to quit, then terminate, then kill."""
        if self.alive and not self._fault:
            try:
                self.request("quit", deadline_ms=int(timeout * 1000))
            except (BridgeError, BridgeFault):
                pass
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self._set_fault(BridgeDied("bridge closed"))
        _LIVE.discard(self)
        if self._log:
            self._log.close()
            self._log = None

    def kill(self) -> None:
        """SIGKILL the process (if still running) and reap it."""
        try:
            self.proc.kill()
        except ProcessLookupError:   # reaped meanwhile by the reader thread
            pass
        self.proc.wait()
        _LIVE.discard(self)

    def __enter__(self) -> "BridgeClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ threads
    def _read_stdout(self) -> None:
        for line in self._stdout:
            line = line.strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                self.protocol_errors.append(f"not JSON on stdout: {line[:200]}")
                continue
            if isinstance(msg, dict) and "event" in msg and "id" not in msg:
                if msg["event"] == "ready":
                    self._ready.set()
                self.events.append(msg)
                if self._on_event:
                    self._on_event(msg)
                continue
            rid = msg.get("id") if isinstance(msg, dict) else None
            with self._lock:
                pending = self._pending.pop(rid, None) if isinstance(rid, int) else None
            if pending is None:
                self.protocol_errors.append(line[:500])
                continue
            pending.response = msg
            pending.done.set()
        code = self.proc.wait()
        self._set_fault(BridgeDied(f"bridge exited with status {code}{self._stderr_hint()}"))

    def _read_stderr(self) -> None:
        for line in self._stderr:
            self.stderr_tail.append(line.rstrip("\n"))
            if self._log:
                self._log.write(line)
                self._log.flush()

    def _watchdog(self) -> None:
        while self._fault is None:
            now = time.monotonic()
            with self._lock:
                late = [p.op for p in self._pending.values() if p.expires < now]
            if late:
                self._set_fault(BridgeTimeout(f"no answer to {late[0]} within its deadline + {self.grace_s:g} s; "
                                              f"killed the bridge{self._stderr_hint()}"))
                self.kill()
                return
            time.sleep(0.05)

    def _set_fault(self, fault: BridgeFault) -> BridgeFault:
        """Record the first fault and fail every pending request with it."""
        with self._lock:
            if self._fault is None:
                self._fault = fault
            pending, self._pending = list(self._pending.values()), {}
        for p in pending:
            p.done.set()
        self._ready.set()
        return self._fault

    def _stderr_hint(self) -> str:
        tail = [line for line in self.stderr_tail if line.strip()][-3:]
        return f" (stderr: {' | '.join(tail)})" if tail else ""
