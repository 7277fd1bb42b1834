"""Vanilla parity of the last things a skill touches (issue #41): every fuel, the lava bucket, enchanting,
snow layers and tool durability, in the simulator.

Expected values come from the game's data (through the catalog reader, which reads the generator output
as it is) or from minecraft-data 1.19 wherever either holds them; what only the game's code holds (a
fuel's burn time, which the data and minecraft-data do not list) is pinned here for the kinds the table
lacked before. ``holding`` (the inventory reset) is a test-only helper.
"""
from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

from mcbuild.compiler.rules import enchanting
from mcbuild.compiler.rules.catalog import load, ns
from mcbuild.compiler.rules.rulebook import STATION_RECIPE_TYPES, Rulebook, vanilla
from mcbuild.runtime.backends.sim import synthetic
from mcbuild.runtime.backends.sim.backend import SimBackend
from mcbuild.runtime.backends.server.primitives import copies_of
from mcbuild.runtime.backends.sim.world import WorldData, derive
from mcbuild.runtime.body.copies import Copy
from mcbuild.runtime.contract.skills import FACILITIES
from mcbuild.runtime.episode.episode import Episode
from sim_stations import holding, run, with_stations

ROOT = pathlib.Path(__file__).resolve().parents[1]
MCDATA = ROOT / "node_modules" / "minecraft-data" / "minecraft-data" / "data"
GAME = load()                                   # the game's data as the catalog reader gives it
INPUTS = {"furnace": "minecraft:raw_iron", "blast_furnace": "minecraft:raw_iron", "smoker": "minecraft:beef"}

# The 1.19.0 fuels the table lacked (refused with no_fuel before issue #41), with the burn ticks the game's
# AbstractFurnaceBlockEntity.getFuel gives them: a tag where the code names one, else the items it names.
ADDED_FUELS = {
    "#minecraft:wooden_slabs": 150, "#minecraft:wooden_stairs": 300, "#minecraft:wooden_trapdoors": 300,
    "#minecraft:wooden_pressure_plates": 300, "#minecraft:wooden_buttons": 100, "#minecraft:wooden_doors": 200,
    "#minecraft:signs": 200, "#minecraft:boats": 1200, "#minecraft:saplings": 100, "#minecraft:wool": 100,
    "#minecraft:wool_carpets": 67, "#minecraft:banners": 300,
    **{f"minecraft:{wood}_fence": 300 for wood in ("oak", "birch", "spruce", "jungle", "dark_oak", "acacia", "mangrove")},
    **{f"minecraft:{wood}_fence_gate": 300 for wood in ("oak", "birch", "spruce", "jungle", "dark_oak", "acacia",
                                                        "mangrove")},
    "minecraft:barrel": 300, "minecraft:composter": 300, "minecraft:loom": 300, "minecraft:cartography_table": 300,
    "minecraft:fletching_table": 300, "minecraft:smithing_table": 300, "minecraft:daylight_detector": 300,
    "minecraft:dead_bush": 100, "minecraft:azalea": 100, "minecraft:flowering_azalea": 100,
    "minecraft:mangrove_roots": 300, "minecraft:scaffolding": 50, "minecraft:lava_bucket": 20000,
}


def game_tag(tag: str) -> set[str]:
    """Members of an item tag, expanded from the game's own tag files."""
    out: set[str] = set()
    for value in GAME.resources[("item_tag", ns(tag.lstrip("#")))]["values"]:
        ref = value if isinstance(value, str) else value["id"]
        out |= game_tag(ref) if ref.startswith("#") else {ref}
    return out


def members(kind: str) -> set[str]:
    return game_tag(kind) if kind.startswith("#") else {kind}


def mcdata(key: str) -> list[dict]:
    if not (MCDATA / "dataPaths.json").exists():
        pytest.skip("node_modules/minecraft-data is missing: run `npm install` (or `make test`)")
    path = json.loads((MCDATA / "dataPaths.json").read_text())["pc"]["1.19"][key]
    return json.loads((MCDATA / path / f"{key}.json").read_text())


def cook_ticks(item: str, station: str) -> int:
    """The cooking time of ``item``'s recipe at ``station``, read from the game's recipe file."""
    rtype = STATION_RECIPE_TYPES[station]
    for (kind, _), recipe in sorted(GAME.resources.items()):
        if kind == "recipe" and recipe["type"] == rtype and recipe["ingredient"] == {"item": item}:
            return int(recipe["cookingtime"])
    raise AssertionError(f"no {rtype} recipe for {item}")


@pytest.fixture(scope="module")
def sim():
    """One Vanilla backend with every station placed; each case starts from the inventory it is handed."""
    return with_stations(FACILITIES)


# ---------------------------------------------------------------------------- fuel
def test_the_fuels_the_table_lacked_burn_as_in_the_game():
    """Each added kind burns its ticks; its members are the game's tag members, without crimson and
    warped wood (the game's #non_flammable_wood)."""
    fuels, never = vanilla().fuels, game_tag("#minecraft:non_flammable_wood")
    for kind, ticks in ADDED_FUELS.items():
        burning = members(kind) - never
        assert burning, kind
        assert {i: fuels.get(i) for i in sorted(burning)} == dict.fromkeys(sorted(burning), ticks), kind
        assert not members(kind) & never & set(fuels), kind
    nether = {i for i in never if "crimson" in i or "warped" in i}
    assert nether == never and not nether & set(fuels)


def test_every_fuel_entry_is_a_tag_or_item_of_the_game():
    """The table's tags are the game's tags, its items the game's items, and each cites the constant
    the game's code passes for it."""
    for entry in GAME.facts["fuel_ticks"]["entries"]:
        ref = entry.get("tag") or entry["item"]
        assert ("tag" in entry) != ("item" in entry), entry
        path = ref.lstrip("#").removeprefix("minecraft:").upper()
        if "tag" in entry:
            assert ("item_tag", ref[1:]) in GAME.resources and entry["game"] == f"ItemTags.{path}", entry
        else:
            assert ref in GAME.items and entry["game"] in (f"Items.{path}", f"Blocks.{path}"), entry


@pytest.mark.parametrize("station", sorted(INPUTS))
def test_every_fuel_smelts_its_share(sim, station):
    """Every fuel of the table, enumerated, smelts in every station: the units the body burns for one
    item and for six are the fewest whose burn time covers their cooking time (a blast furnace or
    smoker burns a fuel for half its ticks, rounded down, and cooks in its recipe's time); one unit
    fewer is refused with no_fuel. Tools, weapons and stations are never burnt."""
    item, cook = INPUTS[station], cook_ticks(INPUTS[station], station)
    durable = {ns(i["name"]) for i in mcdata("items") if "maxDurability" in i}
    divisor = 1 if station == "furnace" else 2
    fuels = vanilla().fuels
    assert len(fuels) > 150
    for fuel, ticks in sorted(fuels.items()):
        burn = ticks // divisor
        if fuel in durable or fuel in FACILITIES:
            holding(sim, {item: 1, fuel: 64})
            out = run(sim, "smelt", input=item, station=station)
            assert out.reason == "no_fuel", fuel
            continue
        for count in (1, 6):
            units = math.ceil(count * cook / burn)
            holding(sim, {item: count, fuel: units})
            out = run(sim, "smelt", input=item, station=station, count=count)
            assert out.ok and out.details["fuel"] == {fuel: units}, (fuel, count, out.message)
            assert out.details["lost"][fuel] == units and sum(out.details["gained"].values()) >= count, fuel
            if units > 1:
                holding(sim, {item: count, fuel: units - 1})
                assert run(sim, "smelt", input=item, station=station, count=count).reason == "no_fuel", fuel


def test_the_lava_bucket_burns_and_leaves_its_bucket(sim):
    holding(sim, {"minecraft:raw_iron": 6, "minecraft:lava_bucket": 1, "minecraft:oak_planks": 4})
    out = run(sim, "smelt", input="raw_iron", count=6)
    assert out.ok and out.details["fuel"] == {"minecraft:lava_bucket": 1}
    assert out.details["lost"] == {"minecraft:lava_bucket": 1, "minecraft:raw_iron": 6}
    assert out.details["gained"] == {"minecraft:bucket": 1, "minecraft:iron_ingot": 6}


# ---------------------------------------------------------------------------- snow layers
def snow_drops() -> dict[int, tuple[str, int]]:
    """What the game's snow loot table drops for each ``layers`` value without silk touch: the first
    alternative (the one under ``inverted match_tool silk_touch``), read from the data."""
    table = GAME.resources[("loot_table", "minecraft:blocks/snow")]
    plain = table["pools"][0]["entries"][0]["children"][0]
    assert plain["conditions"][0]["condition"] == "minecraft:inverted"
    return {int(c["conditions"][0]["properties"]["layers"]): (c["name"], int(c["functions"][0]["count"]))
            for c in plain["children"]}


def snow_world() -> WorldData:
    """Stone (y 0..3, bedrock at 0) under open air with a snow layer of 1..8 layers at (n, 4, 4)."""
    palette = ("minecraft:air", "minecraft:stone", "minecraft:bedrock", "minecraft:snow")
    blocks = np.zeros((10, 8, 9), dtype=np.uint16)
    blocks[:, :4, :] = 1
    blocks[:, 0, :] = 2
    blocks[1:9, 4, 4] = 3
    odd = {int(np.ravel_multi_index((n, 4, 4), blocks.shape)): f"layers={n}" for n in range(1, 9)}
    return WorldData(palette, blocks, (0, 0, 0), (0, 4, 0), ("minecraft:snowy_plains",),
                     np.zeros((3, 2, 3), np.uint8), odd_states=odd)


def test_snow_layers_drop_a_snowball_per_layer_with_a_shovel():
    """Each layer mined with a shovel gives the game's snowballs for its layers; a layer the body
    placed has the one layer a placed snow layer has; without a shovel it gives nothing."""
    drops = snow_drops()
    assert drops == {n: ("minecraft:snowball", n) for n in range(1, 9)}
    sim = SimBackend(derive(snow_world()), Rulebook(), seed=0)
    out = run(sim, "mine", block="snow")
    assert out.reason == "needs_tool" and not out.details["gained"]
    holding(sim, {"minecraft:wooden_shovel": 1})
    mined: set[int] = set()
    for _ in range(8):
        out = run(sim, "mine", block="snow")
        gone = {n for n in range(1, 9) if sim.terrain.block((n, 4, 4)) == "minecraft:air"} - mined
        assert out.ok and len(gone) == 1
        mined |= gone
        item, count = drops[gone.pop()]
        assert out.details["gained"] == {item: count}
    holding(sim, {"minecraft:wooden_shovel": 1, "minecraft:snow": 1})
    assert run(sim, "place", block="snow").ok
    out = run(sim, "mine", block="snow")
    assert out.ok and out.details["gained"] == dict([drops[1]])


# ---------------------------------------------------------------------------- enchanting
def table_enchantments(item: str) -> dict[str, int]:
    """What a table can put on ``item``, from minecraft-data: the discoverable, non-treasure
    enchantments (every one for a book, else those of a category the item has), with max levels."""
    categories = {i["name"]: set(i.get("enchantCategories", [])) for i in mcdata("items")}[item.split(":")[1]]
    return {ns(e["name"]): e["maxLevel"] for e in mcdata("enchantments")
            if e["discoverable"] and not e["treasureOnly"] and (item == "minecraft:book" or e["category"] in categories)}


def test_a_book_becomes_an_enchanted_book_with_its_stored_enchantment(sim):
    offered = table_enchantments("minecraft:book")
    seen: set[str] = set()
    for _ in range(40):
        holding(sim, {"minecraft:book": 2, "minecraft:lapis_lazuli": 1})
        out = run(sim, "enchant", item="book")
        assert out.ok and out.details["enchanted"] == "minecraft:enchanted_book"
        assert out.details["gained"] == {"minecraft:enchanted_book": 1}
        assert out.details["lost"] == {"minecraft:book": 1, "minecraft:lapis_lazuli": 1}
        got = {e["id"]: e["level"] for e in out.details["enchantments"]}
        assert len(got) == 1 and all(1 <= n <= offered[e] for e, n in got.items()), got
        assert [c.enchantments for c in sim.body.copies("minecraft:enchanted_book")] == [tuple(got.items())]
        seen |= set(got)
    assert len(seen) > 3             # the enchantment seed is renewed by every enchant


def test_an_enchanted_item_is_refused(sim):
    offered = table_enchantments("minecraft:iron_pickaxe")
    holding(sim, {"minecraft:iron_pickaxe": 1, "minecraft:lapis_lazuli": 3})
    out = run(sim, "enchant", item="iron_pickaxe")
    got = {e["id"]: e["level"] for e in out.details["enchantments"]}
    assert out.ok and out.details["enchanted"] == "minecraft:iron_pickaxe"
    assert got and all(1 <= n <= offered[e] for e, n in got.items()), got
    out = run(sim, "enchant", item="iron_pickaxe")
    assert out.reason == "not_enchantable" and "already enchanted" in out.message
    assert out.details["lost"] == {} and sim.body.player.count("minecraft:lapis_lazuli") == 2
    sim.body.receive({"minecraft:iron_pickaxe": 1})         # a second, plain copy is the one enchanted
    assert run(sim, "enchant", item="iron_pickaxe").ok
    assert all(c.enchanted for c in sim.body.copies("minecraft:iron_pickaxe"))
    holding(sim, {"minecraft:enchanted_book": 1, "minecraft:lapis_lazuli": 1})
    assert run(sim, "enchant", item="enchanted_book").reason == "not_enchantable"



def test_the_tables_options_read_once_per_rulebook_are_those_read_afresh():
    """An item's options at a power, the exclusions and the enchantable items are kept per rulebook
    (``enchanting.available``): each equals its plain reading, for every item and power, asked twice."""
    rules = vanilla()
    items = sorted(ns(i) for i in rules.facts["enchantable"])
    assert rules.enchantable_items() == rules.enchantable_items() == frozenset(items)
    for _ in range(2):
        for item in items:
            for power in range(1, 52):
                assert enchanting.available(rules, item, power) == tuple(enchanting._available(rules, item, power))
    assert enchanting._exclusions(rules)["minecraft:sharpness"] >= {"minecraft:smite"}

def test_bookshelves_around_the_table_raise_its_costs():
    """Fifteen bookshelves on the table's ring make the highest option cost 30 levels (the game's
    maximum), so a body at level 29 is refused; without them it costs at most 8."""
    sim = SimBackend(synthetic.static_world(), Rulebook(packs=[synthetic.biome_pack()]), seed=0)
    sim.body.receive({"minecraft:enchanting_table": 1})
    assert run(sim, "place", block="enchanting_table").ok
    x, y, z = next(iter(sim.primitives.blocks(frozenset({"minecraft:enchanting_table"})))).pos
    ring = [(x + dx, y, z + dz) for dx in range(-2, 3) for dz in range(-2, 3) if max(abs(dx), abs(dz)) == 2]
    placed = [pos for pos in ring if sim.terrain.block(pos) == "minecraft:air"
              and sim.terrain.block((pos[0], pos[1] - 1, pos[2])) != "minecraft:air"][:15]
    if len(placed) < 15:
        pytest.skip("the synthetic world has no flat ring around the table")
    for pos in placed:
        sim.terrain.place_block(pos, "minecraft:bookshelf")
    assert sim.primitives._bookshelves((x, y, z)) == 15
    sim.body.player.xp_levels = 29
    holding(sim, {"minecraft:iron_pickaxe": 1, "minecraft:lapis_lazuli": 3})
    out = run(sim, "enchant", item="iron_pickaxe", option="highest")
    assert out.reason == "needs_level" and out.message == "needs experience level 30"
    for pos in placed:
        sim.terrain.break_block(pos)
    sim.body.player.xp_levels = 8
    out = run(sim, "enchant", item="iron_pickaxe", option="highest")
    assert out.ok or out.reason == "not_enchantable"       # not offered when its cost would be below 3


# ---------------------------------------------------------------------------- durability
KIND_BLOCKS = {"pickaxe": "minecraft:stone", "axe": "minecraft:oak_planks", "shovel": "minecraft:dirt",
               "hoe": "minecraft:hay_block"}       # a block of each tool's mineable tag that wears it


def quarry(block: str) -> SimBackend:
    """A 16 x 16 pit of ``block`` (y 1..6, bedrock below) under open air, in Vanilla rules."""
    palette = ("minecraft:air", block, "minecraft:bedrock")
    blocks = np.zeros((16, 10, 16), dtype=np.uint16)
    blocks[:, 1:7, :] = 1
    blocks[:, 0, :] = 2
    return SimBackend(derive(WorldData(palette, blocks, (0, 0, 0), (8, 7, 8), ("minecraft:plains",),
                                       np.zeros((4, 3, 4), np.uint8))), Rulebook(), seed=0)


def durability() -> dict[str, int]:
    """minecraft-data's maxDurability of every item that wears out."""
    return {ns(i["name"]): i["maxDurability"] for i in mcdata("items") if "maxDurability" in i}


def wear_to(sim: SimBackend, item: str, left: int) -> None:
    """Test-only: the body's one copy of ``item`` with ``left`` uses left."""
    sim.body.receive({item: 1})
    sim.body.copies(item)[0] = Copy(durability()[item] - left)


def used(out, tool: str) -> int:
    return sum(t.tool == tool for t in out.transitions)


@pytest.mark.parametrize("tool, max_uses", [("minecraft:wooden_pickaxe", 59), ("minecraft:golden_pickaxe", 32)])
def test_a_pickaxe_breaks_after_its_vanilla_uses(tool, max_uses):
    """The issue's probe: a wooden pickaxe mined 64 stone and a golden one 40. Each breaks on its
    maxDurability-th block, is gone, and the result says so."""
    assert durability()[tool] == max_uses
    sim = quarry("minecraft:stone")
    sim.body.receive({tool: 1})
    uses = 0
    for _ in range(max_uses):
        out = run(sim, "mine", block="stone", count=4)
        uses += used(out, tool)
        if "broke" in out.details:
            break
        assert sim.snapshot().durability == {tool: (max_uses - uses,)}
    assert uses == max_uses and out.details["broke"] == {tool: 1} and out.details["lost"] == {tool: 1}
    assert f"{tool} broke" in out.message and sim.body.player.count(tool) == 0 and not sim.snapshot().durability
    assert run(sim, "mine", block="stone").reason == "needs_tool"


@pytest.mark.parametrize("tool", [f"minecraft:{tier}_{kind}" for tier in ("wooden", "stone", "iron", "golden", "diamond",
                                                                          "netherite") for kind in KIND_BLOCKS])
def test_every_tool_wears_one_use_a_block_and_breaks_at_its_durability(tool):
    sim = quarry(KIND_BLOCKS[tool.rsplit("_", 1)[1]])
    wear_to(sim, tool, 4)
    block = sim.terrain.block((8, 6, 8))
    out = run(sim, "mine", block=block, count=3)
    assert out.ok and used(out, tool) == 3 and "broke" not in out.details
    assert sim.snapshot().durability == {tool: (1,)}
    out = run(sim, "mine", block=block)
    assert used(out, tool) == 1 and out.details["broke"] == {tool: 1} and sim.body.player.count(tool) == 0


@pytest.mark.parametrize("sword", [f"minecraft:{tier}_sword" for tier in ("wooden", "stone", "iron", "golden", "diamond",
                                                                          "netherite")])
def test_every_sword_wears_one_use_a_hit(sword):
    """With the worlds' Strength II every sword kills a cow with one hit: one use a cow."""
    sim = SimBackend(synthetic.static_world(), Rulebook(packs=[synthetic.biome_pack()]), seed=0)
    wear_to(sim, sword, 4)
    assert run(sim, "attack", target="cow", count=3).ok
    assert sim.snapshot().durability == {sword: (1,)}
    out = run(sim, "attack", target="cow")
    assert out.details["broke"] == {sword: 1} and out.details["lost"] == {sword: 1}
    assert not sim.snapshot().durability


def test_a_tool_used_as_a_weapon_wears_two_uses_a_hit():
    """A wooden pickaxe deals 2 + 6 (Strength II) of a cow's 10 health: two hits, two uses each."""
    sim = SimBackend(synthetic.static_world(), Rulebook(packs=[synthetic.biome_pack()]), seed=0)
    wear_to(sim, "minecraft:wooden_pickaxe", 10)
    run(sim, "equip", item="wooden_pickaxe")
    out = run(sim, "attack", target="cow")
    assert out.ok and out.details["killed"] == {"minecraft:cow": 1}
    assert sim.snapshot().durability == {"minecraft:wooden_pickaxe": (6,)}


def test_a_sword_used_to_mine_wears_two_uses_a_block_and_instant_blocks_wear_nothing():
    sim = SimBackend(synthetic.static_world(), Rulebook(packs=[synthetic.biome_pack()]), seed=0)
    wear_to(sim, "minecraft:iron_sword", 10)
    run(sim, "equip", item="iron_sword")
    assert run(sim, "mine", block="sugar_cane").ok                # hardness 0
    assert sim.snapshot().durability == {"minecraft:iron_sword": (10,)}
    assert run(sim, "mine", block="oak_log").ok                   # no axe: the sword in hand
    assert sim.snapshot().durability == {"minecraft:iron_sword": (8,)}


def test_unbreaking_spares_uses():
    """Unbreaking III spares each use with probability 3/4: a golden pickaxe (32 uses) outlasts 40
    stone."""
    sim = quarry("minecraft:stone")
    sim.body.receive({"minecraft:golden_pickaxe": 1})
    sim.body.copies("minecraft:golden_pickaxe")[0] = Copy(0, (("minecraft:unbreaking", 3),))
    for _ in range(10):
        assert "broke" not in run(sim, "mine", block="stone", count=4).details
    (left,) = sim.snapshot().durability["minecraft:golden_pickaxe"]
    assert 32 - 20 <= left < 32


def test_the_body_prefers_a_tool_that_survives_the_job():
    """An iron pickaxe one use from breaking is spared while a fresh stone pickaxe does the job; it
    does what only it can, and breaks. Of two copies the body works with the most worn."""
    sim = SimBackend(derive(synthetic.world_data()), Rulebook(packs=[synthetic.biome_pack()]), seed=0)
    wear_to(sim, "minecraft:iron_pickaxe", 1)
    sim.body.receive({"minecraft:stone_pickaxe": 1})
    out = run(sim, "mine", block="stone", count=2)
    assert used(out, "minecraft:stone_pickaxe") >= 2 and used(out, "minecraft:iron_pickaxe") == 0
    out = run(sim, "mine", block="diamond_ore")
    assert out.ok and "minecraft:diamond" in out.details["gained"] and used(out, "minecraft:iron_pickaxe") == 1
    assert out.details["broke"] == {"minecraft:iron_pickaxe": 1}
    sim.body.receive({"minecraft:iron_pickaxe": 2})
    sim.body.copies("minecraft:iron_pickaxe")[1] = Copy(durability()["minecraft:iron_pickaxe"] - 1)
    assert sim.snapshot().durability["minecraft:iron_pickaxe"] == (1, 250)
    out = run(sim, "mine", block="iron_ore")     # the copy in hand would break: the stone pickaxe does it
    assert out.ok and used(out, "minecraft:stone_pickaxe") >= 1 and used(out, "minecraft:iron_pickaxe") == 0


def test_a_broken_tool_shows_in_the_observation():
    rules = Rulebook(packs=[synthetic.biome_pack()])
    with Episode.from_parts(SimBackend(synthetic.static_world(), rules, 0), rules, rules, "iron_armor") as ep:
        ep.backend.body.receive({"minecraft:wooden_sword": 1})
        ep.backend.body.copies("minecraft:wooden_sword")[0] = Copy(durability()["minecraft:wooden_sword"] - 1)
        ep.provisioning.give({})                # a fresh snapshot
        assert ep.observe()["durability"] == {"minecraft:wooden_sword": [1]}
        ep.step({"skill": "attack", "args": {"target": "cow"}})
        obs = ep.observe()
        assert obs["latest_result"]["broke"] == {"minecraft:wooden_sword": 1}
        assert obs["latest_result"]["lost"] == {"minecraft:wooden_sword": 1}
        assert "minecraft:wooden_sword broke" in obs["latest_result"]["message"]
        assert obs["durability"] == {} and "minecraft:wooden_sword" not in obs["inventory"]


def test_both_backends_report_a_copys_damage_alike():
    """The server backend reads a copy's Damage from the bridge's state (tests/test_server_bridge.py's
    layer 2 checks the bridge reports the server's Damage); the observation gets the simulator's
    durability for the same damage."""
    rules = Rulebook(packs=[synthetic.biome_pack()])
    sim = SimBackend(synthetic.static_world(), rules, seed=0)
    sim.body.receive({"minecraft:wooden_pickaxe": 2})
    sim.body.copies("minecraft:wooden_pickaxe")[1] = Copy(17)
    state = {"inventory": {"minecraft:wooden_pickaxe": 2},
             "copies": [{"id": "minecraft:wooden_pickaxe", "damage": 0, "enchantments": []},
                        {"id": "minecraft:wooden_pickaxe", "damage": 17, "enchantments": []}]}
    server = sim.body.policy.durability(state["inventory"], lambda item: copies_of(state, item))
    assert server == sim.snapshot().durability == {"minecraft:wooden_pickaxe": (59 - 17, 59)}
