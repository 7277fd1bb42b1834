"""Every block type and mob type the worlds hold drops its vanilla loot through the simulator's
``mine`` and ``attack`` skills.

The types come from the saves when ``build/`` holds verified saves of every world in
specs/worlds.yaml; otherwise from the generator the saves are built from (``features.generate``
for blocks with their states, the biome pack's ``summon`` lines for mobs), over every world. Each
type is mined (with the tool the body picks from a full diamond set) or killed over a few seeds;
what the skill yields must be possible under ``expected()`` for the block's table and state or
the mob's own table (a sheep's by its colour), and include every guaranteed drop.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mcbuild.compiler.biome.layout import WORLD_AREA
from mcbuild.compiler.biome.pack import spawn_lines
from mcbuild.compiler.core.paths import BUILD, ROOT
from mcbuild.compiler.rules import functions
from mcbuild.compiler.rules.commands import parse, text
from mcbuild.compiler.rules.loot import LootContext, expected
from mcbuild.compiler.rules.pack import pack_mcmeta, resource_path, to_bytes
from mcbuild.compiler.rules.rulebook import Rulebook, vanilla
from mcbuild.compiler.spec.kinds import load_spec
from mcbuild.compiler.spec.worlds import WORLDS_FILE, load_worlds
from mcbuild.runtime.backends.sim.backend import SimBackend
from mcbuild.runtime.backends.sim.world import WorldData, derive
from mcbuild.runtime.body.blocks import physics
from mcbuild.runtime.contract.skills import validate

M = "minecraft:"
SEEDS = range(4)
TOOLS = {M + f"diamond_{kind}": 1 for kind in ("pickaxe", "axe", "shovel", "hoe", "sword")}
MCDATA_BLOCKS = ROOT / "node_modules" / "minecraft-data" / "minecraft-data" / "data" / "pc" / "1.19" / "blocks.json"


def _from_saves() -> tuple[set[tuple[str, str]], set[str]] | None:
    """(block, state properties) pairs and summon lines of the built saves, if current."""
    from mcbuild.compiler.worlds.integrity import verify_worlds
    from mcbuild.compiler.worlds.layout import rules_of, world_dir
    from mcbuild.runtime.backends.sim import save

    dirs = [world_dir(w.id) for w in load_worlds(WORLDS_FILE).worlds]
    if not all((d / "level.dat").is_file() for d in dirs) or verify_worlds(BUILD)[0]:
        return None
    blocks: set[tuple[str, str]] = set()
    summons: set[str] = set()
    for d in dirs:
        data = save.read(d)
        for i in np.unique(data.blocks).tolist():
            blocks.add((data.palette[i], data.states[i]))
        flat = data.blocks.reshape(-1)
        blocks |= {(data.palette[int(flat[c])], props) for c, props in data.odd_states.items()}
        summons |= {ln for ln in rules_of(d).function(functions.SPAWN) if ln.startswith("summon")}
    return blocks, summons


def _from_generator() -> tuple[set[tuple[str, str]], set[str]]:
    from mcbuild.compiler.worlds.features import generate

    blocks: set[tuple[str, str]] = set()
    summons: set[str] = set()
    for w in load_worlds(WORLDS_FILE).worlds:
        spec = load_spec(ROOT / "specs" / f"{w.biome}.yaml")
        world = generate(spec, w.seed, WORLD_AREA)
        for i in np.unique(world.blocks).tolist():
            name, _, props = world.palette.names[i].partition("[")
            blocks.add((name, props.rstrip("]")))
        summons |= {ln for ln in spawn_lines(spec) if ln.startswith("summon")}
    return blocks, summons


@pytest.fixture(scope="module")
def contents():
    return _from_saves() or _from_generator()


@pytest.fixture(scope="module")
def minable(contents):
    return sorted((b, s) for b, s in contents[0] if physics().minable(b))


def _do(sim: SimBackend, skill: str, **args):
    return sim.execute(validate({"skill": skill, "args": args}, sim.rules.catalog))


def _state(props: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(tuple(p.split("=", 1)) for p in props.split(",") if p))


def _block_world(block: str, props: str) -> WorldData:
    """One ``block`` (in state ``props``) on a bedrock floor under open sky."""
    blocks = np.zeros((5, 4, 5), dtype=np.uint16)
    blocks[:, 0, :] = 1
    blocks[2, 1, 2] = 2
    return WorldData((M + "air", M + "bedrock", block), blocks, (0, 0, 0), (0, 1, 0), (M + "plains",),
                     np.zeros((2, 1, 2), np.uint8), ("", "", props))


def _check(rb: Rulebook, table: dict, ctx: LootContext, got: dict[str, int], what: str) -> None:
    can = expected(rb, table, ctx)
    assert set(got) <= set(can), f"{what}: {got} outside {sorted(can)}"
    for item, drop in can.items():
        assert drop.min <= got.get(item, 0) <= drop.max, f"{what}: {item} x{got.get(item, 0)} vs {drop}"


def test_the_worlds_hold_the_blocks_and_mobs_a_new_user_found_dropping_nothing(contents, minable):
    names = {b for b, _ in minable}
    assert {M + b for b in ("poppy", "dandelion", "azure_bluet", "oxeye_daisy", "cornflower", "coarse_dirt",
                            "podzol", "melon")} <= names
    assert {text(parse(ln).arguments[0]) for ln in contents[1]} >= {M + "rabbit", M + "sheep"}


def test_every_block_type_in_the_worlds_drops_its_vanilla_loot(minable):
    rb = vanilla()
    for block, props in minable:
        table = rb.block_loot(block)
        assert table is not None, f"{block} has no loot table"
        sim = SimBackend(derive(_block_world(block, props)), rb)
        seen: dict[str, int] = {}
        for seed in SEEDS:
            sim.reset(seed)
            sim.body.receive(TOOLS)
            out = _do(sim, "mine", block=block, count=1)
            assert out.ok, f"{block}[{props}]: {out.reason} {out.message}"
            got = {**out.details["collected"], **out.details.get("left_on_ground", {})}
            for item in got:
                seen[item] = seen.get(item, 0) + got[item]
            ctx = LootContext(tool=out.transitions[-1].tool, block=block, block_state=_state(props))
            can = expected(rb, table, ctx)
            assert can, f"{block}[{props}] drops nothing with {ctx.tool}"
            _check(rb, table, ctx, got, f"{block}[{props}] with {ctx.tool}")
            assert {i for i, d in can.items() if d.min > 0} <= set(got)
        assert seen or sum(d.mean for d in can.values()) < 1, f"{block}: nothing in {len(SEEDS)} tries"


@pytest.mark.parametrize("block, props, drops", [
    ("poppy", "", {"poppy": 1}), ("dandelion", "", {"dandelion": 1}), ("azure_bluet", "", {"azure_bluet": 1}),
    ("oxeye_daisy", "", {"oxeye_daisy": 1}), ("cornflower", "", {"cornflower": 1}),
    ("coarse_dirt", "", {"coarse_dirt": 1}), ("podzol", "snowy=false", {"dirt": 1}),
    ("snow", "layers=3", {"snowball": 3}), ("stone", "", {"cobblestone": 1}),
    ("wheat", "age=7", None), ("wheat", "age=2", {"wheat_seeds": 1}),
])
def test_mining_yields_the_vanilla_items_and_reads_the_block_state(block, props, drops):
    sim = SimBackend(derive(_block_world(M + block, props)), vanilla(), 3)
    sim.body.receive(TOOLS)
    got = _do(sim, "mine", block=M + block, count=1).details["collected"]
    if drops is None:                   # ripe wheat: one wheat and 1..4 seeds
        assert got[M + "wheat"] == 1 and 1 <= got[M + "wheat_seeds"] <= 4
    else:
        assert got == {M + k: n for k, n in drops.items()}


def test_melon_drops_three_to_seven_slices():
    counts = set()
    sim = SimBackend(derive(_block_world(M + "melon", "")), vanilla())
    for seed in range(20):
        sim.reset(seed)
        sim.body.receive(TOOLS)
        counts.add(_do(sim, "mine", block=M + "melon", count=1).details["collected"][M + "melon_slice"])
    assert counts <= set(range(3, 8)) and len(counts) >= 3


def test_blocks_of_the_worlds_that_need_a_tool_are_listed_with_minecraft_data_tools(minable):
    rb = vanilla()
    mc = {M + b["name"]: b for b in json.loads(MCDATA_BLOCKS.read_text())}
    for block in sorted({b for b, _ in minable}):
        assert (block in rb.facts["requires_correct_tool"]) == bool(mc[block].get("harvestTools")), block
    for block in rb.facts["requires_correct_tool"]:     # each listed block's tools follow minecraft-data
        assert mc[block].get("harvestTools") and rb.harvest_tools(block), block


# ---------------------------------------------------------------- mobs
def _mob_pack(summons: list[str]) -> tuple[str, dict[str, bytes]]:
    files = {
        "pack.mcmeta": pack_mcmeta("mobs"),
        resource_path("function", functions.SETUP, ".mcfunction"): f"function {functions.SPAWN}\n",
        resource_path("function", functions.SPAWN, ".mcfunction"): "".join(s + "\n" for s in summons),
    }
    return "file/mobs.zip", {path: to_bytes(value) for path, value in files.items()}


def _near(line: str, k: int) -> str:
    """The summon ``line`` moved next to the spawn (its NBT kept)."""
    cmd = parse(line)
    nbt = f" {text(cmd.arguments[2])}" if len(cmd.arguments) > 2 else ""
    return f"summon {text(cmd.arguments[0])} {2 + 2 * k} 1 2{nbt}"


def _flat() -> WorldData:
    blocks = np.zeros((16, 4, 5), dtype=np.uint16)
    blocks[:, 0, :] = 1
    return WorldData((M + "air", M + "bedrock"), blocks, (0, 0, 0), (0, 1, 0), (M + "plains",),
                     np.zeros((4, 1, 2), np.uint8))


def test_every_mob_type_in_the_worlds_drops_its_vanilla_loot(contents):
    kinds = {}
    for line in sorted(contents[1]):
        kinds.setdefault(text(parse(line).arguments[0]), line)
    rules = Rulebook(packs=[_mob_pack([_near(line, k) for k, line in enumerate(kinds.values())])])
    sim = SimBackend(derive(_flat()), rules)
    seen: dict[str, set[str]] = {e: set() for e in kinds}
    for seed in SEEDS:
        sim.reset(seed)
        sim.body.receive({M + "diamond_sword": 1})
        for entity in kinds:
            mob = next(m for m in sim.entities.alive(entity))
            out = _do(sim, "attack", target=entity, count=1)
            assert out.ok and not mob.alive
            table = rules.loot_table(mob.loot_table)
            assert table is not None, mob.loot_table
            ctx = LootContext(tool=M + "diamond_sword", entity=entity)
            _check(rules, table, ctx, out.details["collected"], f"{entity} ({mob.loot_table})")
            assert {i for i, d in expected(rules, table, ctx).items() if d.min > 0} <= set(out.details["collected"])
            seen[entity] |= set(out.details["collected"])
            if entity == M + "sheep":
                colour = vanilla().facts["sheep"]["dye_colours"][mob.nbt["Color"]]
                assert mob.loot_table == f"{M}entities/sheep/{colour}"
                assert out.details["collected"][f"{M}{colour}_wool"] == 1
    assert all(seen.values()), seen


def test_a_sheep_drops_the_wool_its_summon_gives_it_and_none_once_sheared():
    lines = ["summon minecraft:sheep 2 1 2 {Color:14b}", "summon minecraft:sheep 4 1 2 {Color:3b,Sheared:1b}"]
    sim = SimBackend(derive(_flat()), Rulebook(packs=[_mob_pack(lines)]), 0)
    got = _do(sim, "attack", target=M + "sheep", count=2).details["collected"]
    assert got[M + "red_wool"] == 1 and M + "light_blue_wool" not in got and 2 <= got[M + "mutton"] <= 4


def test_sheep_summoned_without_a_colour_take_the_games_random_colours():
    lines = [f"summon minecraft:sheep {x} 1 2" for x in range(16)]
    colours = []
    sim = SimBackend(derive(_flat()), Rulebook(packs=[_mob_pack(lines)]))
    for seed in range(25):
        sim.reset(seed)
        colours += [vanilla().facts["sheep"]["dye_colours"][m.nbt["Color"]] for m in sim.entities.mobs]
    share = {c: colours.count(c) / len(colours) for c in set(colours)}
    assert set(share) <= {"white", "black", "gray", "light_gray", "brown", "pink"}
    assert share["white"] == pytest.approx(0.82, abs=0.05) and math.isclose(sum(share.values()), 1)


def test_the_save_reader_keeps_each_cells_block_state_for_the_loot_tables():
    from mcbuild.runtime.backends.sim import save

    # one section: bedrock floor, snow of 1 layer on it, one cell of 3 layers (stored y, z, x)
    idx = np.zeros((16, 16, 16), dtype=np.int64)
    idx[0] = 1
    idx[1] = 2
    idx[1, 5, 7] = 3
    palette = [M + "air", M + "bedrock", M + "snow[layers=1]", M + "snow[layers=3]"]
    data = save._assemble({(0, 0, 0): (palette, idx.reshape(-1), [M + "plains"], np.zeros(64, dtype=np.int64))},
                          (0, 2, 0))
    snow = data.palette.index(M + "snow")
    assert data.states[snow] == "layers=1" and list(data.odd_states.values()) == ["layers=3"]
    sim = SimBackend(derive(data), vanilla(), 0)
    sim.body.receive(TOOLS)
    assert sim.terrain.state((7, 1, 5)) == {"layers": "3"} and sim.terrain.state((0, 1, 0)) == {"layers": "1"}
    out = _do(sim, "mine", block=M + "snow", count=2)
    assert out.details["mined"] == {M + "snow": 2}
    sim.reset(0)
    sim.body.receive(TOOLS)
    sim.body.pos = (7, 2, 5)
    got = _do(sim, "mine", block=M + "snow", count=1).details["collected"]
    assert got == {M + "snowball": 3}                    # the nearest snow is the 3-layer cell
