"""One Java server process on a fresh copy of a frozen save, bound to loopback.

:func:`prepare` lays out a run folder (``world/`` = a copy of the save, ``server.properties``,
``eula.txt``); :class:`ServerInstance` starts ``java -jar`` there, waits for readiness (the
``Done (...)!`` line and an RCON login), and stops it cleanly (RCON ``stop``, then terminate,
then kill). A server that exits before it is ready, or is not ready by the deadline, is an
:class:`mcbuild.runtime.errors.InfrastructureFault` carrying the last lines of its log. ``timings`` holds
the measured start and stop seconds.
"""
from __future__ import annotations

import collections
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Mapping

from mcbuild.compiler.core.scratch import make_dir, sweep
from mcbuild.runtime.errors import InfrastructureFault

from .config import ServerConfig
from .console import Rcon

LEVEL_NAME = "world"
READY_MARK = "Done ("
VERSION_LINE = re.compile(r"Starting minecraft server version (\S+)")
HOST = "127.0.0.1"

# Fixed properties of every episode server; port, RCON port/password and level-name are per run.
BASE_PROPERTIES: dict[str, str] = {
    "server-ip": HOST,
    "online-mode": "false",
    "enforce-secure-profile": "false",
    "enable-rcon": "true",
    "broadcast-rcon-to-ops": "false",
    "broadcast-console-to-ops": "false",
    "difficulty": "peaceful",
    "gamemode": "survival",
    "spawn-protection": "0",
    "spawn-monsters": "false",
    "spawn-animals": "false",
    "spawn-npcs": "false",
    "allow-nether": "false",
    "enable-command-block": "false",
    "enable-query": "false",
    "enable-status": "false",
    "max-players": "2",
    "white-list": "false",
    "view-distance": "6",
    "simulation-distance": "6",
    "motd": "",
    "sync-chunk-writes": "false",
}


def free_port(host: str = HOST) -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def server_properties(port: int, rcon_port: int, rcon_password: str, extra: Mapping[str, str] | None = None) -> str:
    """The text of ``server.properties`` (sorted keys, so the file is reproducible)."""
    values = {**BASE_PROPERTIES, **(extra or {}), "server-port": str(port), "rcon.port": str(rcon_port),
              "rcon.password": rcon_password, "level-name": LEVEL_NAME}
    return "".join(f"{k}={v}\n" for k, v in sorted(values.items()))


def prepare(save: Path, run_dir: Path, port: int, rcon_port: int, rcon_password: str,
            extra: Mapping[str, str] | None = None) -> Path:
    """Lay out a run folder: a fresh copy of ``save`` as the level, the properties, the EULA file.

    The copy is written under a temporary name and renamed, so a half-copied world is never used;
    the frozen save itself is only read."""
    if not (save / "level.dat").is_file():
        raise InfrastructureFault(f"no save at {save}")
    run_dir.mkdir(parents=True, exist_ok=True)
    partial = run_dir / f".{LEVEL_NAME}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(save, partial, ignore=shutil.ignore_patterns("session.lock"))
    shutil.rmtree(run_dir / LEVEL_NAME, ignore_errors=True)
    partial.rename(run_dir / LEVEL_NAME)
    (run_dir / "server.properties").write_text(server_properties(port, rcon_port, rcon_password, extra), encoding="utf-8")
    (run_dir / "eula.txt").write_text("eula=true\n", encoding="utf-8")   # only written after --accept-eula
    return run_dir / LEVEL_NAME


class ServerInstance:
    """A Java server on a fresh copy of ``save``; :meth:`start` blocks until it is ready."""

    def __init__(self, config: ServerConfig, save: Path, root: Path | None = None):
        self.config = config
        self.save = save
        where = Path(root) if root is not None else Path(tempfile.gettempdir())
        sweep(where, "server")          # the save copies of servers whose run was killed
        self.run_dir = make_dir(where, "server")
        self.port = free_port()
        self.rcon_port = free_port()
        while self.rcon_port == self.port:
            self.rcon_port = free_port()
        self.password = secrets.token_urlsafe(18)
        self.timings: dict[str, float] = {}
        self.log_tail: collections.deque[str] = collections.deque(maxlen=60)
        self.version: str | None = None
        self.proc: subprocess.Popen | None = None
        self.rcon: Rcon | None = None
        self._ready = threading.Event()

    def start(self) -> "ServerInstance":
        """Start and wait until ready; on any fault the process is killed and the run folder removed."""
        try:
            return self._start()
        except BaseException:
            self.kill()
            shutil.rmtree(self.run_dir, ignore_errors=True)
            raise

    def _start(self) -> "ServerInstance":
        t0 = time.monotonic()
        prepare(self.save, self.run_dir, self.port, self.rcon_port, self.password, self.config.extra_properties)
        cmd = [self.config.java, f"-Xmx{self.config.memory_mb}M", f"-Xms{min(512, self.config.memory_mb)}M",
               "-jar", str(self.config.jar), "nogui"]
        try:
            self.proc = subprocess.Popen(cmd, cwd=self.run_dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True, encoding="utf-8", errors="replace")
        except OSError as err:
            raise InfrastructureFault(f"cannot start the server: {err}") from None
        threading.Thread(target=self._read_log, name="server-log", daemon=True).start()
        deadline = t0 + self.config.start_timeout_s
        while not self._ready.wait(0.1):
            if self.proc.poll() is not None:
                raise InfrastructureFault(f"the server exited with status {self.proc.returncode} before it was "
                                          f"ready{self._hint()}")
            if time.monotonic() > deadline:
                self.kill()
                raise InfrastructureFault(f"the server was not ready within {self.config.start_timeout_s:g} s"
                                          f"{self._hint()}")
        try:
            self.rcon = Rcon(self.rcon_port, self.password, connect_within_s=max(5.0, deadline - time.monotonic()))
        except InfrastructureFault:
            self.kill()
            raise
        self.timings["start_s"] = round(time.monotonic() - t0, 3)
        return self

    @property
    def console(self) -> Rcon | None:
        return self.rcon

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def check_alive(self) -> None:
        """Raise an InfrastructureFault if the server process has died."""
        if self.proc is not None and self.proc.poll() is not None:
            raise InfrastructureFault(f"the server exited with status {self.proc.returncode}{self._hint()}")

    def stop(self) -> None:
        """Stop cleanly (RCON ``stop``), else terminate, else kill; then delete the run folder."""
        t0 = time.monotonic()
        proc = self.proc
        if proc is not None and proc.poll() is None:
            try:
                if self.rcon is not None:
                    self.rcon.run("stop")
            except InfrastructureFault:
                pass
            try:
                proc.wait(self.config.stop_timeout_s)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.kill()
        if self.rcon is not None:
            self.rcon.close()
            self.rcon = None
        shutil.rmtree(self.run_dir, ignore_errors=True)
        self.timings["stop_s"] = round(time.monotonic() - t0, 3)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def _read_log(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.log_tail.append(line.rstrip("\n"))
            found = VERSION_LINE.search(line)
            if found and self.version is None:
                self.version = found.group(1)
            if READY_MARK in line and "For help" in line:
                self._ready.set()

    def _hint(self) -> str:
        tail = [line for line in self.log_tail if line.strip()][-3:]
        return f" (log: {' | '.join(tail)})" if tail else ""
