"""Layer 4, jar-gated: the server backend on the official Minecraft 1.19.0 server.

Skipped with a reason unless ``MCBUILD_SERVER_JAR`` names the jar and ``MCBUILD_ACCEPT_EULA=1``
(``make test-server SERVER_JAR=...`` sets both). tests/backend_conformance.py runs the contract
suite on the server backend in the same conditions (it is a registered backend). Here:

* parity: the same action scripts on the simulator and the server give the same observation
  sequences, in 3 worlds x 7 conditions, after :func:`normalised` (docs/server.md "Parity"):
  exact where the game is deterministic; positions and distances reduced to what was seen (the
  pathfinder stops where it can, the simulator next to the target); the count of an item the
  loot table of a mined block rolls (a random count or chance) reduced to "owned" (the server's
  random numbers are its own; every single drop's count is checked against its table's bounds by
  ``mcbuild server check``, below);
* the box checkers' ``count_in_box`` and ``Snapshot.facing`` agree with the simulator at the start;
* ``mcbuild server check`` passes on one world under every condition;
* the adaptive planner reaches the same milestones on both backends;
* a worn tool breaks at the same use on both backends, read from the server's ``Damage``;
* start and reset times are measured, and a pre-started server is taken by the next episode.
"""
from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from mcbuild.compiler.worlds.layout import world_dir
from mcbuild.cli import main
from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.loot import LootContext, expected
from mcbuild.runtime.agents.registry import create
from mcbuild.runtime.backends import registry
from mcbuild.runtime.backends.server.factory import ServerFactory
from mcbuild.runtime.body.copies import Copy
from mcbuild.runtime.contract.observation import serialize
from mcbuild.runtime.contract.skills import LOG_ALIAS, LOG_TAG, validate
from mcbuild.runtime.episode.loop import run
from mcbuild.runtime.episode.opening import open_episode, save_rules
from mcbuild.runtime.errors import BackendUnavailable
from waiting import until

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


PATH_DEPENDENT = frozenset({"position", "travelled", "distance", "nearest_distance"})
ROLLING_TOOLS = (None, "minecraft:wooden_pickaxe", "minecraft:stone_pickaxe", "minecraft:iron_pickaxe")


def rolled_items(rules) -> frozenset[str]:
    """Items that the loot table of a block the script mines gives in a random count or by chance
    (a cleared obstruction's drops stay on the ground on both backends)."""
    mined = {a["args"]["block"] for a in SCRIPT if a["skill"] == "mine"}
    blocks = set().union(*(rules.tag("block", LOG_TAG) if b == LOG_ALIAS else {ns(b)} for b in mined))
    out = set()
    for table in filter(None, (rules.block_loot(b) for b in sorted(blocks))):
        for tool in ROLLING_TOOLS:
            out |= {i for i, d in expected(rules, table, LootContext(tool=tool)).items() if d.min != d.max}
    return frozenset(out)


def normalised(value, rolled: frozenset[str]):
    """``value`` with path-dependent fields dropped, distances replaced by what was seen, and the
    counts of rolled items replaced by "owned"."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in PATH_DEPENDENT:
                continue
            if k in rolled and isinstance(v, int) and not isinstance(v, bool):
                out[k] = "owned" if v > 0 else v
            elif isinstance(v, float) and k.startswith("minecraft:"):
                out[k] = "seen"                     # nearby_targets, nearby_drops: id -> distance
            else:
                out[k] = normalised(v, rolled)
        return out
    if isinstance(value, list):
        return [normalised(v, rolled) for v in value]
    return value


def _observations(world: str, condition: str, backend: str, build, task: str = "diamond") -> list[str]:
    rolled = rolled_items(save_rules(world_dir(world, condition, build)))
    with open_episode(world, condition, task, len(SCRIPT), 0, build=build, backend=backend) as ep:
        seen = [serialize(normalised(ep.observe(), rolled))]
        for action in SCRIPT:
            ep.step(action)
            seen.append(serialize(normalised(ep.observe(), rolled)))
        return seen


def test_the_normalisation_keeps_deterministic_counts_exact():
    obs = {"inventory": {"minecraft:oak_log": 3, "minecraft:flint": 2}, "position": {"x": 1},
           "nearby_targets": {"minecraft:stone": 2.5}, "latest_result": {"ok": True, "travelled": 4.2}}
    assert normalised(obs, frozenset({"minecraft:flint"})) == {
        "inventory": {"minecraft:oak_log": 3, "minecraft:flint": "owned"},
        "nearby_targets": {"minecraft:stone": "seen"}, "latest_result": {"ok": True}}


def test_box_counts_and_facing_agree_with_the_simulator_at_the_start(server):
    build, worlds = server
    save = world_dir(worlds[0], "vanilla", build)
    rules = save_rules(save)
    backends = {name: registry.factory(name).open(save, rules, 0) for name in ("sim", "server")}
    try:
        snaps = {name: b.snapshot() for name, b in backends.items()}
        assert snaps["server"].facing == snaps["sim"].facing == "south"
        x, y, z = snaps["sim"].position
        low, high = (x - 8, y - 4, z - 8), (x + 8, y + 8, z + 8)
        for block in sorted(snaps["sim"].nearby_blocks)[:6]:
            assert backends["server"].count_in_box("block", block, low, high) == \
                backends["sim"].count_in_box("block", block, low, high), block
        wide = (x - 24, y - 8, z - 24), (x + 24, y + 16, z + 24)
        for mob in sorted(snaps["sim"].nearby_entities):        # the setup function's creatures
            assert backends["server"].count_in_box("entity", mob, *wide) == \
                backends["sim"].count_in_box("entity", mob, *wide), mob
    finally:
        for b in backends.values():
            b.close()


def test_a_worn_tool_breaks_alike_on_both_backends(server):
    """A wooden pickaxe two uses from breaking (Damage 57 of 59) breaks on its second stone on the
    server as in the simulator: the same ``broke``, ``lost`` and durability before and after."""
    build, worlds = server
    save = world_dir(worlds[0], "vanilla", build)
    rules = save_rules(save)
    pickaxe = "minecraft:wooden_pickaxe"
    seen = {}
    for name in ("sim", "server"):
        backend = registry.factory(name).open(save, rules, 0)
        try:
            if name == "sim":
                backend.body.receive({pickaxe: 1})
                backend.body.copies(pickaxe)[0] = Copy(57)
            else:
                backend.console.run(f"give {backend.username} {pickaxe}{{Damage:57}} 1")
                until(lambda: backend.link.inventory().get(pickaxe), "the given pickaxe in the bot's inventory")  # noqa: B023 - polled now
            before = backend.snapshot(False).durability
            out = backend.execute(validate({"skill": "mine", "args": {"block": "stone", "count": 3}}, rules.catalog))
            seen[name] = (before, out.details.get("broke"), out.details["lost"].get(pickaxe),
                          backend.snapshot(False).durability)
        finally:
            backend.close()
    assert seen["server"] == seen["sim"] == ({pickaxe: (2,)}, {pickaxe: 1}, 1, {})


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
            run(ep, create("adaptive-planner"), 0)
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
