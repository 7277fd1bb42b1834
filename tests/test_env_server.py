"""mcbuild/MirrorCraft-v0 with ``backend="server"``, as far as the server layers run without a jar: the
environment opens the episode through the backend registry's ``server`` factory, here one whose
servers are flying-squid serving a copy of the save (layer 3, tests/test_server_squid.py), driven
through the real Node bridge. With the user's jar, ``make test-server`` runs the server itself."""
from __future__ import annotations

import pytest

gymnasium = pytest.importorskip("gymnasium")

import mcbuild.envs as envs
from mcbuild.runtime.backends import registry
from mcbuild.runtime.backends.server.backend import ServerBackend
from mcbuild.runtime.contract.skills import REASONS
from test_server_squid import Squid, pytestmark as squid_marks

pytestmark = squid_marks


class SquidFactory:
    """The ``server`` factory of this test: every reset takes a fresh flying-squid on the save."""

    name = "server"

    def __init__(self) -> None:
        self.servers: list[Squid] = []

    def open(self, save, rules, seed: int) -> ServerBackend:
        def start() -> Squid:
            self.servers.append(Squid(save))
            return self.servers[-1]

        return ServerBackend(rules, seed, start, join_attempts=15)


def test_the_environment_opens_the_server_backend_through_the_registry(world_build, monkeypatch):
    factory = SquidFactory()
    monkeypatch.setitem(registry._OPEN, "server", factory)
    env = gymnasium.make(envs.ENV_ID, world="plains-1", condition="vanilla", task="iron_armor", budget=4,
                         backend="server", build=world_build)
    try:
        obs, info = env.reset(seed=0)
        assert len(factory.servers) == 1 and factory.servers[0].proc.poll() is None
        assert info["budget"] == {"used": 0, "remaining": 4, "total": 4} and info["score"] == 0.0
        assert "TASK:" in obs["text"] and obs["state"]["inventory"] == {}      # (flying-squid has no biomes)
        assert any(k.endswith("_log") for k in obs["state"]["nearby_targets"])
        for action in ({"skill": "explore", "args": {"target": "log"}}, {"skill": "mine", "args": {"block": "log"}}):
            obs, reward, terminated, truncated, info = env.step(action)
            assert info["skill"] == action["skill"] and (info["ok"] or info["reason"] in REASONS)
            assert reward == 0.0 and not (terminated or truncated)
        assert info["budget"]["used"] == 2
    finally:
        env.close()
    assert all(s.proc.poll() is not None for s in factory.servers)
