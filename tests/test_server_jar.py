"""Layer 4, jar-gated: the server backend on the official Minecraft 1.19.0 server.

Skipped with a reason unless ``MCBUILD_SERVER_JAR`` names the jar and ``MCBUILD_ACCEPT_EULA=1``
(``make test-server SERVER_JAR=...`` sets both). tests/backend_conformance.py runs the contract
suite on the server backend in the same conditions (it is a registered backend). Here:

* parity: the same action scripts on the simulator and the server give identical observation
  sequences, in 3 worlds x 7 conditions;
* ``mcbuild server check`` passes on one world under every condition;
* the adaptive planner reaches the same milestones on both backends;
* start and reset times are measured, and a pre-started server is taken by the next episode.
"""
from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from compiler.worlds.layout import world_dir
from mcbuild.cli import main
from runtime.agents.registry import create
from runtime.backends import registry
from runtime.backends.server.factory import ServerFactory
from runtime.contract.observation import serialize
from runtime.episode.loop import run
from runtime.episode.opening import open_episode, save_rules
from runtime.errors import BackendUnavailable

CONDITIONS = ("vanilla", "m01", "m02", "m03", "m04", "m05", "m06")
SCRIPT = [
    {"skill": "explore", "args": {"target": "log"}},
    {"skill": "mine", "args": {"block": "log", "count": 3}},
    {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["oak_log"]]}},
    {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["oak_planks", "oak_planks"],
                                                                      ["oak_planks", "oak_planks"]]}},
    {"skill": "place", "args": {"block": "crafting_table"}},
    {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["oak_planks"], ["oak_planks"]]}},
    {"skill": "craft_grid", "args": {"station": "crafting_table",
                                     "grid": [["oak_planks"] * 3, [None, "stick", None], [None, "stick", None]]}},
    {"skill": "equip", "args": {"item": "wooden_pickaxe"}},
    {"skill": "mine", "args": {"block": "stone", "count": 3}},
    {"skill": "smelt", "args": {"input": "raw_iron"}},
    {"skill": "wait", "args": {"ticks": 20}},
]


def _server_or_skip() -> None:
    if not os.environ.get("MCBUILD_SERVER_JAR"):
        pytest.skip("MCBUILD_SERVER_JAR is not set: layer 4 needs the Minecraft 1.19.0 server.jar "
                    "(make test-server SERVER_JAR=/path/to/server.jar)")
    try:
        registry.factory("server")
    except BackendUnavailable as exc:
        pytest.skip(f"the server backend cannot start: {exc}")


@pytest.fixture(scope="module")
def server(request):
    _server_or_skip()        # before the world build: a skipped module builds nothing
    return request.getfixturevalue("world_build"), request.getfixturevalue("built_world_ids")


def _observations(world: str, condition: str, backend: str, build, task: str = "diamond") -> list[str]:
    with open_episode(world, condition, task, len(SCRIPT), 0, build=build, backend=backend) as ep:
        seen = [serialize(ep.observe())]
        for action in SCRIPT:
            ep.step(action)
            seen.append(serialize(ep.observe()))
        return seen


@pytest.mark.parametrize("condition", CONDITIONS)
@pytest.mark.parametrize("world_index", range(3))
def test_parity_of_observation_sequences(server, world_index, condition):
    build, worlds = server
    if world_index >= len(worlds):
        pytest.skip(f"only {len(worlds)} built world(s): run `mcbuild build worlds` for 3")
    world = worlds[world_index]
    assert _observations(world, condition, "server", build) == _observations(world, condition, "sim", build)


def test_server_check_passes_on_every_condition(server):
    build, worlds = server
    result = CliRunner().invoke(main, ["server", "check", "--world", worlds[0], "--build", str(build)])
    assert result.exit_code == 0, result.output
    assert "FAIL" not in result.output and f"{len(CONDITIONS)} save(s) checked, 0 failure(s)" in result.output


@pytest.mark.parametrize("condition", ["vanilla", "m01"])
def test_adaptive_planner_reaches_the_same_milestones(server, condition):
    build, worlds = server
    reached = {}
    for backend in ("sim", "server"):
        with open_episode(worlds[0], condition, "iron_armor", None, 0, build=build, backend=backend) as ep:
            run(ep, create("adaptive-planner", seed=0), 0)
            reached[backend] = (ep.observe()["completed_advancements"], ep.score)
    assert reached["server"] == reached["sim"]


def test_start_and_reset_are_measured_and_prestart_is_taken(server, tmp_path):
    build, worlds = server
    save = world_dir(worlds[0], "vanilla", build)
    factory = ServerFactory(prestart=True, root=tmp_path)
    backend = factory.open(save, save_rules(save), 0)
    try:
        first = dict(backend.timings)
        backend.reset(0)
        second = dict(backend.timings)
    finally:
        backend.close()
        factory.close()
    assert first["start_s"] > 0 and first["reset_s"] >= first["start_s"] and first["prestarted"] == 0.0
    assert second["prestarted"] == 1.0
    print(f"server start {first['start_s']} s, reset {first['reset_s']} s; pre-started reset {second['reset_s']} s")
