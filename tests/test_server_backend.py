"""The server backend without a Minecraft jar: jar/EULA/Java checks, the run folder, the Java
process's faults, the CLI's refusals, and (layer 3) ServerBackend's skills on flying-squid serving
a copy of a built save through the real bridge. The jar-gated layer is tests/test_server_jar.py."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcbuild.cli import main
from mcbuild.runtime.backends import registry
from mcbuild.runtime.backends.server import config as cfg
from mcbuild.runtime.backends.server.instance import ServerInstance, free_port, prepare, server_properties
from mcbuild.runtime.errors import BackendUnavailable, InfrastructureFault
from waiting import DEADLINE_S

ENV = {"PATH": os.environ["PATH"]}


def _jar(tmp_path: Path, name: str = "server.jar", body: bytes = b"not a jar") -> Path:
    path = tmp_path / name
    path.write_bytes(body)
    return path


# ---------------------------------------------------------------------------- jar, EULA, Java
def test_no_jar_names_what_to_set():
    with pytest.raises(BackendUnavailable, match="--server-jar PATH or set MCBUILD_SERVER_JAR"):
        cfg.ServerConfig.resolve(env=ENV)


def test_missing_jar_file(tmp_path):
    with pytest.raises(BackendUnavailable, match="does not exist"):
        cfg.ServerConfig.resolve(tmp_path / "nope.jar", accept_eula=True, env=ENV)


def test_eula_must_be_accepted(tmp_path):
    jar = _jar(tmp_path)
    with pytest.raises(BackendUnavailable, match="--accept-eula or set MCBUILD_ACCEPT_EULA=1"):
        cfg.ServerConfig.resolve(jar, env=ENV)
    assert cfg.ServerConfig.resolve(jar, allow_unverified=True, env={**ENV, cfg.EULA_ENV: "1"}).jar == jar.resolve()


def test_a_jar_that_is_not_the_official_one_is_refused_unless_allowed(tmp_path):
    jar = _jar(tmp_path)
    with pytest.raises(BackendUnavailable, match=f"not the official 1.19.0 server.jar \\({cfg.OFFICIAL_SHA1}\\)"):
        cfg.ServerConfig.resolve(jar, accept_eula=True, env=ENV)
    allowed = cfg.ServerConfig.resolve(jar, accept_eula=True, allow_unverified=True, env=ENV)
    assert not allowed.verified
    assert cfg.ServerConfig.resolve(jar, accept_eula=True, env={**ENV, cfg.UNVERIFIED_ENV: "1"}).jar == allowed.jar


def test_sha1_of_a_file(tmp_path):
    assert cfg.sha1_of(_jar(tmp_path, body=b"abc")) == "a9993e364706816aba3e25717850c26c9cd0d89d"


@pytest.mark.skipif(not shutil.which("java"), reason="java is not installed")
def test_java_17_is_detected():
    assert cfg.java_major(shutil.which("java")) >= 17


def test_old_or_missing_java_is_refused(tmp_path):
    old = tmp_path / "java"
    old.write_text('#!/bin/sh\necho \'openjdk version "1.8.0_392"\' >&2\n')
    old.chmod(0o755)
    jar = _jar(tmp_path)
    with pytest.raises(BackendUnavailable, match="is Java 8; the 1.19.0 server needs Java 17"):
        cfg.ServerConfig.resolve(jar, accept_eula=True, allow_unverified=True, env={**ENV, cfg.JAVA_ENV: str(old)})
    with pytest.raises(BackendUnavailable, match="Java 17 is needed"):
        cfg.ServerConfig.resolve(jar, accept_eula=True, allow_unverified=True,
                                 env={**ENV, cfg.JAVA_ENV: str(tmp_path / "no-java")})


def test_registry_server_factory_is_unavailable_without_a_jar(monkeypatch):
    monkeypatch.delenv(cfg.JAR_ENV, raising=False)
    registry._OPEN.pop("server", None)
    assert "server" in registry.names()
    with pytest.raises(BackendUnavailable, match="MCBUILD_SERVER_JAR"):
        registry.factory("server")
    assert "server" not in registry._OPEN


# ---------------------------------------------------------------------------- run folder
def test_properties_bind_loopback_with_rcon_and_the_episode_controls():
    text = server_properties(25570, 25571, "secret")
    props = dict(line.split("=", 1) for line in text.splitlines())
    assert props["server-ip"] == "127.0.0.1" and props["server-port"] == "25570"
    assert props["online-mode"] == "false" and props["enable-rcon"] == "true"
    assert props["rcon.port"] == "25571" and props["rcon.password"] == "secret"
    assert props["difficulty"] == "peaceful" and props["spawn-protection"] == "0"
    assert props["level-name"] == "world" and props["enable-query"] == "false"
    assert text.splitlines() == sorted(text.splitlines())


def test_free_port_is_bindable():
    import socket

    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_prepare_copies_the_save_fresh_and_leaves_it_untouched(tmp_path):
    save = tmp_path / "save"
    (save / "region").mkdir(parents=True)
    (save / "level.dat").write_bytes(b"level")
    (save / "region" / "r.0.0.mca").write_bytes(b"region")
    (save / "session.lock").write_bytes(b"lock")
    run = tmp_path / "run"
    level = prepare(save, run, 1, 2, "pw")
    (level / "region" / "r.0.0.mca").write_bytes(b"played")
    level = prepare(save, run, 1, 2, "pw")
    assert (level / "region" / "r.0.0.mca").read_bytes() == b"region"
    assert (save / "region" / "r.0.0.mca").read_bytes() == b"region"
    assert not (level / "session.lock").exists()
    assert (run / "eula.txt").read_text() == "eula=true\n"
    assert "level-name=world" in (run / "server.properties").read_text()
    with pytest.raises(InfrastructureFault, match="no save"):
        prepare(tmp_path / "missing", run, 1, 2, "pw")


def _save(tmp_path: Path) -> Path:
    save = tmp_path / "save"
    save.mkdir()
    (save / "level.dat").write_bytes(b"level")
    return save


@pytest.mark.skipif(not shutil.which("java"), reason="java is not installed")
def test_a_server_that_exits_before_it_is_ready_is_an_infrastructure_fault(tmp_path):
    config = cfg.ServerConfig(jar=_jar(tmp_path), java=shutil.which("java"), start_timeout_s=DEADLINE_S)
    server = ServerInstance(config, _save(tmp_path), tmp_path)
    with pytest.raises(InfrastructureFault, match="exited with status 1 before it was ready.*corrupt jarfile"):
        server.start()
    assert not server.run_dir.exists()


@pytest.mark.skipif(not (shutil.which("java") and shutil.which("javac") and shutil.which("jar")),
                    reason="a JDK (javac, jar) is needed to build the hanging jar")
def test_a_server_that_hangs_past_its_deadline_is_killed_and_a_fault(tmp_path):
    src = tmp_path / "Hang.java"
    src.write_text("public class Hang { public static void main(String[] a) throws Exception {"
                   " System.out.println(\"Starting minecraft server version 1.19\"); Thread.sleep(600000); } }")
    subprocess.run(["javac", "-d", str(tmp_path), str(src)], check=True)
    (tmp_path / "manifest.txt").write_text("Main-Class: Hang\n")
    jar = tmp_path / "hang.jar"
    subprocess.run(["jar", "cfm", str(jar), str(tmp_path / "manifest.txt"), "-C", str(tmp_path), "Hang.class"], check=True)
    config = cfg.ServerConfig(jar=jar, java=shutil.which("java"), start_timeout_s=20)    # a JVM starts late under load
    server = ServerInstance(config, _save(tmp_path), tmp_path)
    t0 = time.monotonic()
    with pytest.raises(InfrastructureFault, match="not ready within 20 s"):
        server.start()
    assert time.monotonic() - t0 < DEADLINE_S and server.proc.poll() is not None and not server.run_dir.exists()
    assert server.version == "1.19"


# ---------------------------------------------------------------------------- CLI
@pytest.mark.parametrize("args", [
    ["episode", "run", "--world", "plains-1", "--task", "diamond", "--backend", "server"],
    ["study", "run", "studies/quick.yaml", "--backend", "server"],
])
def test_cli_without_a_jar_gives_one_line_and_exit_2(monkeypatch, args):
    monkeypatch.delenv(cfg.JAR_ENV, raising=False)
    registry._OPEN.pop("server", None)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == ["error: the server backend needs the Minecraft 1.19.0 server.jar: pass --server-jar PATH "
                     "or set MCBUILD_SERVER_JAR"]


def test_server_check_refuses_an_unverified_jar_in_one_line(monkeypatch, world_build, tmp_path):
    for name in (cfg.JAR_ENV, cfg.UNVERIFIED_ENV, cfg.EULA_ENV):
        monkeypatch.delenv(name, raising=False)
    registry._OPEN.pop("server", None)
    jar = _jar(tmp_path)
    result = CliRunner().invoke(main, ["server", "check", "--build", str(world_build), "--server-jar", str(jar),
                                       "--accept-eula"])
    assert result.exit_code == 2 and "not the official 1.19.0 server.jar" in result.output
    assert len(result.output.strip().splitlines()) == 1
    result = CliRunner().invoke(main, ["server", "check", "--build", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "no built save matches" in result.output
    for name in (cfg.JAR_ENV, cfg.UNVERIFIED_ENV, cfg.EULA_ENV):
        os.environ.pop(name, None)


def test_facing_follows_the_games_yaw_with_the_simulators_cardinal_convention():
    from mcbuild.runtime.backends.server.backend import facing_of_yaw
    from mcbuild.runtime.backends.sim.backend import facing
    assert [facing_of_yaw(y) for y in (0, 90, 180, 270, 359.0, 44.0, 46.0)] == \
        ["south", "west", "north", "east", "south", "south", "west"]
    assert facing_of_yaw(45.0) == facing((0, 0, 0), (-1, 0, 1)) == "west"      # a tie: east or west, as a move


def test_both_backends_supply_every_primitive_the_shared_skills_use():
    from mcbuild.runtime.backends.server.primitives import ServerPrimitives
    from mcbuild.runtime.backends.sim.primitives import SimPrimitives
    from mcbuild.runtime.skills.primitives import Primitives

    wanted = {n for n in vars(Primitives) if not n.startswith("_")} | set(Primitives.__annotations__)
    for backend in (SimPrimitives, ServerPrimitives):
        have = {n for n in dir(backend) if not n.startswith("_")}
        have |= {n for n in ("rules", "policy", "config", "visited", "heading")
                 if n in backend.__init__.__code__.co_names or n in have}
        assert wanted <= have, f"{backend.__name__} lacks {sorted(wanted - have)}"
