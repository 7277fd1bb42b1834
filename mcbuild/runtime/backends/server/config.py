"""Which Minecraft server may run, checked before any episode: the jar, its SHA-1, the EULA, Java 17.

The jar is user-supplied (``--server-jar PATH`` or ``MCBUILD_SERVER_JAR``): it cannot be
downloaded here. A jar whose SHA-1 is not the official 1.19.0 one is refused unless
``--allow-unverified-jar`` (``MCBUILD_ALLOW_UNVERIFIED_JAR=1``); the EULA must be accepted
explicitly (``--accept-eula`` or ``MCBUILD_ACCEPT_EULA=1``). Every refusal is one line naming what
to set, raised as :class:`mcbuild.runtime.errors.BackendUnavailable`.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from mcbuild.compiler.core.errors import CompileError
from mcbuild.compiler.core.vanilla import JAVA_ENV  # one Java for the server and the data generator
from mcbuild.compiler.core.vanilla import file_sha1 as sha1_of
from mcbuild.compiler.rules.catalog import load
from mcbuild.runtime.errors import BackendUnavailable

OFFICIAL_SHA1 = str(load().facts["server"]["jar_sha1"])     # catalogs/game_facts.yaml
JAVA_MAJOR = int(load().facts["server"]["java_major"])
JAR_ENV = "MCBUILD_SERVER_JAR"
EULA_ENV = "MCBUILD_ACCEPT_EULA"
UNVERIFIED_ENV = "MCBUILD_ALLOW_UNVERIFIED_JAR"
BRIDGE_ENV = "MCBUILD_BRIDGE_DIR"


def java_major(java: str) -> int | None:
    """The major version ``java -version`` reports (None if it does not run)."""
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', proc.stderr + proc.stdout)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def _flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in ("1", "true", "yes")


@dataclass(frozen=True)
class ServerConfig:
    """A checked server set-up: the jar, the Java binary, memory and the time limits (seconds)."""

    jar: Path
    java: str = "java"
    memory_mb: int = 2048
    start_timeout_s: float = 180.0
    stop_timeout_s: float = 60.0
    verified: bool = True
    bridge_dir: Path | None = None
    extra_properties: dict[str, str] = field(default_factory=dict)

    @classmethod
    def resolve(cls, jar: str | Path | None = None, *, accept_eula: bool = False, allow_unverified: bool = False,
                env: Mapping[str, str] | None = None) -> "ServerConfig":
        """The configuration from explicit options, else the environment; raises
        :class:`BackendUnavailable` with one line saying what to set."""
        env = os.environ if env is None else env
        given = jar or env.get(JAR_ENV)
        if not given:
            raise BackendUnavailable(f"the server backend needs the Minecraft 1.19.0 server.jar: pass --server-jar PATH "
                                     f"or set {JAR_ENV}")
        path = Path(given).expanduser()
        if not path.is_file():
            raise BackendUnavailable(f"server jar {path} does not exist (--server-jar / {JAR_ENV})")
        if not (accept_eula or _flag(env, EULA_ENV)):
            raise BackendUnavailable(f"running the server needs the Minecraft EULA (https://aka.ms/MinecraftEULA) "
                                     f"accepted: pass --accept-eula or set {EULA_ENV}=1")
        try:
            digest = sha1_of(path)
        except CompileError as exc:            # an unreadable jar: the backend cannot start
            raise BackendUnavailable(str(exc)) from None
        verified = digest == OFFICIAL_SHA1
        if not verified and not (allow_unverified or _flag(env, UNVERIFIED_ENV)):
            raise BackendUnavailable(f"{path} has SHA-1 {digest}, not the official 1.19.0 server.jar ({OFFICIAL_SHA1}); "
                                     f"pass --allow-unverified-jar or set {UNVERIFIED_ENV}=1 to run it anyway")
        java = env.get(JAVA_ENV) or shutil.which("java") or ""
        major = java_major(java) if java else None
        if major is None:
            raise BackendUnavailable(f"Java {JAVA_MAJOR} is needed to run the server: install it or set {JAVA_ENV}")
        if major < JAVA_MAJOR:
            raise BackendUnavailable(f"{java} is Java {major}; the 1.19.0 server needs Java {JAVA_MAJOR} or newer "
                                     f"(set {JAVA_ENV})")
        bridge = env.get(BRIDGE_ENV)
        return cls(jar=path.resolve(), java=java, verified=verified, bridge_dir=Path(bridge) if bridge else None)
