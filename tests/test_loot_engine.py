"""The loot engine against the game's 1,026 loot tables: every construct the data uses is
implemented (enumerated from the data), every table is checked when read and rolls within what
``expected()`` says, unknown constructs fail when the table is read, and the odds of the random
parts (numbers, bonuses, chances) hold."""
from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from mcbuild.compiler.rules import loot_conditions, loot_functions, loot_numbers
from mcbuild.compiler.rules.loot import COMPOSITES, SINGLETONS, LootContext, LootError, expected, fixed_drops, roll
from mcbuild.compiler.rules.pack import build_zip, read_zip
from mcbuild.compiler.rules.rulebook import Rulebook, vanilla

M = "minecraft:"
NUMBER_FIELDS = {"rolls", "bonus_rolls", "count", "damage", "levels", "min", "max", "n", "p"}
SEEDS = range(12)


def _constructs(node, out: set[tuple[str, str]], number: bool = False) -> None:
    """Every (kind, type) a table uses: functions, conditions, entries, number providers, formulas."""
    if number:
        out.add(("number", loot_numbers.kind_of(node)))
        if isinstance(node, (int, float)):
            return
    if isinstance(node, list):
        for child in node:
            _constructs(child, out)
        return
    if not isinstance(node, dict):
        return
    if "function" in node:
        out.add(("function", node["function"]))
    if "condition" in node:
        out.add(("condition", node["condition"]))
    if "formula" in node:
        out.add(("formula", node["formula"]))
    if "type" in node and ("name" in node or "children" in node or node["type"] in ("minecraft:empty",)):
        out.add(("entry", node["type"]))
    for key, value in node.items():
        is_number = key in NUMBER_FIELDS and ("function" in node or "rolls" in node or "type" in node
                                              and str(node["type"]).endswith(("uniform", "binomial")))
        if key == "limit" and isinstance(value, dict):
            for bound in value.values():
                _constructs(bound, out, number=True)
        elif is_number and not (key == "levels" and "enchantment" in node):
            _constructs(value, out, number=True)
        elif key not in ("predicate", "properties", "chances"):      # predicates hold no constructs
            _constructs(value, out)


@pytest.fixture(scope="module")
def rb():
    return vanilla()


@pytest.fixture(scope="module")
def tables(rb):
    return {rid: rb.resources[("loot_table", rid)] for rid in sorted(rb.of_kind("loot_table"))}


def test_every_construct_the_data_uses_is_implemented(tables):
    used: set[tuple[str, str]] = set()
    for table in tables.values():
        _constructs(table, used)
    implemented = {
        "function": set(loot_functions.FUNCTIONS), "condition": set(loot_conditions.CONDITIONS),
        "entry": SINGLETONS | COMPOSITES, "formula": loot_functions.BONUS_FORMULAS,
        "number": {M + "constant", M + "uniform", M + "binomial"},
    }
    kinds = {kind for kind, _ in used}
    assert kinds == set(implemented), kinds
    missing = sorted((kind, name) for kind, name in used if name not in implemented[kind])
    assert not missing
    # the walk reaches what the data holds (a walk that found nothing would pass the check above)
    assert len(tables) == 1026
    assert {name for kind, name in used if kind == "function"} >= {M + "set_count", M + "furnace_smelt",
                                                                   M + "set_instrument", M + "exploration_map"}
    assert {name for kind, name in used if kind == "condition"} >= {M + "location_check",
                                                                    M + "damage_source_properties"}
    assert {name for kind, name in used if kind == "entry"} >= {M + "dynamic", M + "tag", M + "loot_table", M + "empty"}
    assert {name for kind, name in used if kind == "number"} == implemented["number"]


def _contexts(rid: str, table: dict) -> list[LootContext]:
    """The contexts a table is rolled in: a block broken by hand, with a pickaxe, with shears and
    with fortune III or silk touch; a mob killed by the player with and without looting III, on fire
    or not; anything else with no tool."""
    kind, _, name = rid.partition(":")[2].partition("/")
    if kind == "blocks":
        block = M + name
        return [LootContext(block=block), LootContext(tool=M + "diamond_pickaxe", block=block),
                LootContext(tool=M + "shears", block=block),
                LootContext(tool=M + "diamond_pickaxe", enchantments=((M + "fortune", 3),), block=block),
                LootContext(tool=M + "diamond_pickaxe", enchantments=((M + "silk_touch", 1),), block=block)]
    if kind == "entities":
        entity = M + name.split("/")[0]
        return [LootContext(tool=M + "diamond_sword", entity=entity),
                LootContext(tool=M + "diamond_sword", enchantments=((M + "looting", 3),), entity=entity, on_fire=True),
                LootContext(entity=entity, killed_by_player=False)]
    return [LootContext()]


def test_every_table_is_checked_and_rolls_within_its_expectation(rb, tables):
    for rid, table in tables.items():
        assert rb.loot_table(rid) is table          # checked when read: raises on anything unknown
        for ctx in _contexts(rid, table):
            can = expected(rb, table, ctx)
            for seed in SEEDS[:4]:
                got = roll(rb, table, ctx, random.Random(seed))
                assert set(got) <= set(can), (rid, ctx, got)
                for item, drop in can.items():
                    assert drop.min <= got[item] <= drop.max, (rid, ctx, item, got[item], drop)
                    assert drop.min <= drop.mean <= drop.max, (rid, item, drop)


def test_fixed_drops_are_what_every_roll_gives(rb, tables):
    """``fixed_drops`` (what the simulator looks up instead of rolling) equals every roll of the
    tables whose drops it calls certain, and is None wherever a roll can differ."""
    fixed = varied = 0
    for rid, table in tables.items():
        for ctx in _contexts(rid, table):
            certain = fixed_drops(rb, table, ctx)
            rolls = [dict(roll(rb, table, ctx, random.Random(seed))) for seed in SEEDS]
            if certain is None:
                varied += 1
                can = expected(rb, table, ctx)
                assert any(d.min != d.max for d in can.values()), (rid, ctx)
            else:
                fixed += 1
                assert all(r == certain for r in rolls), (rid, ctx, certain, rolls)
    assert fixed > 4000 and varied > 300, (fixed, varied)


def test_fixed_drops_are_none_where_a_roll_reads_the_place(rb):
    """A table whose roll reads where it is rolled (``location_check``: the upper half of tall grass)
    is never looked up, even where every place would give the same drops."""
    lower = rb.block_loot(M + "tall_grass")
    shears = LootContext(tool=M + "shears", block=M + "tall_grass", block_state=(("half", "lower"),))
    assert fixed_drops(rb, lower, shears) is None
    assert fixed_drops(rb, rb.block_loot(M + "stone"), LootContext(tool=M + "wooden_pickaxe", block=M + "stone")) == {
        M + "cobblestone": 1}


def _pack_rulebook(tables: dict[str, dict]) -> Rulebook:
    files = {"pack.mcmeta": b'{"pack": {"pack_format": 10, "description": "t"}}'}
    for rid, table in tables.items():
        files[f"data/t/loot_tables/{rid}.json"] = json.dumps(table).encode()
    return Rulebook(vanilla().catalog, [("file/t.zip", read_zip(build_zip(files)))])


def _item(name: str, **extra) -> dict:
    return {"type": "minecraft:item", "name": name, **extra}


@pytest.mark.parametrize("table, named", [
    # an unknown function on an entry that would never be picked (its conditions never hold)
    ({"pools": [{"rolls": 1, "entries": [_item("minecraft:stick"), _item(
        "minecraft:apple", conditions=[{"condition": "minecraft:killed_by_player"}],
        functions=[{"function": "minecraft:set_lore", "lore": []}])]}]}, "minecraft:set_lore"),
    ({"pools": [{"rolls": 1, "entries": [_item("minecraft:stick", conditions=[
        {"condition": "minecraft:weather_check", "raining": True}])]}]}, "minecraft:weather_check"),
    ({"pools": [{"rolls": 1, "entries": [{"type": "minecraft:frobnicate", "name": "x"}]}]}, "minecraft:frobnicate"),
    ({"pools": [{"rolls": {"type": "minecraft:score", "target": "this", "score": "s"}, "entries": []}]}, "minecraft:score"),
    ({"pools": [{"rolls": 1, "entries": [_item("minecraft:stick", functions=[
        {"function": "minecraft:apply_bonus", "enchantment": "minecraft:fortune", "formula": "minecraft:squared"}])]}]},
     "minecraft:squared"),
    ({"pools": [{"rolls": 1, "entries": [_item("minecraft:stick", conditions=[{"condition": "minecraft:match_tool",
        "predicate": {"durability": {"min": 1}}}])]}]}, "durability"),
    ({"pools": [{"rolls": 1, "entries": [_item("minecraft:not_an_item")]}]}, "minecraft:not_an_item"),
    ({"pools": [{"rolls": 1, "entries": [{"type": "minecraft:loot_table", "name": "t:nowhere"}]}]}, "t:nowhere"),
    ({"pools": [{"rolls": 1, "entries": [{"type": "minecraft:loot_table", "name": "t:bad"}]}]}, "t:bad includes itself"),
])
def test_an_unknown_construct_fails_when_the_table_is_read(table, named):
    rb = _pack_rulebook({"bad": table})
    with pytest.raises(LootError, match=named) as err:
        rb.loot_table("t:bad")
    assert "loot table t:bad" in str(err.value)


# ---------------------------------------------------------------- odds
def _mean(rb, table, ctx, item: str, n: int = 4000) -> float:
    rng = random.Random(7)
    return sum(roll(rb, table, ctx, rng)[item] for _ in range(n)) / n


def test_number_providers_stay_in_range_and_their_distributions_sum_to_one():
    rng = random.Random(1)
    uniform = {"type": "minecraft:uniform", "min": 2.0, "max": 5.0}
    binomial = {"type": "minecraft:binomial", "n": 3, "p": 0.5714286}
    assert {loot_numbers.sample_int(uniform, rng) for _ in range(500)} == {2, 3, 4, 5}
    assert {loot_numbers.sample_int(binomial, rng) for _ in range(500)} == {0, 1, 2, 3}
    assert loot_numbers.int_dist(uniform) == {2: 0.25, 3: 0.25, 4: 0.25, 5: 0.25}
    assert sum(loot_numbers.int_dist(binomial).values()) == pytest.approx(1)
    assert loot_numbers.int_dist(2.5) == {3: 1.0} and loot_numbers.int_dist(-0.5) == {0: 1.0}     # Math.round
    assert loot_numbers.int_dist({"min": 4, "max": 1}) == {4: 1.0}            # Mth.nextInt: min when min >= max
    # looting's float count: round(level * U(0, 1)) for level 3 is 0 (1/6), 1, 2 (1/3 each), 3 (1/6)
    assert loot_numbers.scaled_round_dist({"min": 0.0, "max": 1.0}, 3) == pytest.approx({0: 1 / 6, 1: 1 / 3, 2: 1 / 3, 3: 1 / 6})
    draws = Counter(loot_numbers.sample_int({"type": "minecraft:binomial", "n": 1, "p": 0.25}, rng) for _ in range(4000))
    assert draws[1] / 4000 == pytest.approx(0.25, abs=0.03)


def test_crop_seeds_follow_binomial_with_bonus_count_even_without_fortune(rb):
    table = rb.block_loot(M + "wheat")
    ripe = LootContext(block=M + "wheat", block_state=(("age", "7"),))
    seeds = expected(rb, table, ripe)[M + "wheat_seeds"]
    assert (seeds.min, seeds.max) == (1, 4) and seeds.mean == pytest.approx(1 + 3 * 0.5714286)
    assert _mean(rb, table, ripe, M + "wheat_seeds") == pytest.approx(seeds.mean, abs=0.05)
    young = LootContext(block=M + "wheat", block_state=(("age", "3"),))
    assert {i: (d.min, d.max) for i, d in expected(rb, table, young).items()} == {M + "wheat_seeds": (1, 1)}


@pytest.mark.parametrize("fortune, chance", [(0, 0.05), (1, 0.0625), (2, 0.083333336), (3, 0.1)])
def test_table_bonus_chances_follow_the_fortune_level(rb, fortune, chance):
    table = rb.block_loot(M + "oak_leaves")
    ctx = LootContext(tool=M + "diamond_hoe", enchantments=((M + "fortune", fortune),) if fortune else (),
                      block=M + "oak_leaves")
    sapling = expected(rb, table, ctx)[M + "oak_sapling"]
    assert (sapling.min, sapling.max) == (0, 1) and sapling.mean == pytest.approx(chance)
    assert _mean(rb, table, ctx, M + "oak_sapling", 8000) == pytest.approx(chance, abs=0.01)


def test_ore_drops_and_looting_means_match_sampling(rb):
    fortune = LootContext(tool=M + "diamond_pickaxe", enchantments=((M + "fortune", 2),), block=M + "diamond_ore")
    diamonds = expected(rb, rb.block_loot(M + "diamond_ore"), fortune)[M + "diamond"]
    assert (diamonds.min, diamonds.max) == (1, 3) and diamonds.mean == pytest.approx(7 / 4)   # (1 + 1 + 2 + 3) / 4
    assert _mean(rb, rb.block_loot(M + "diamond_ore"), fortune, M + "diamond") == pytest.approx(7 / 4, abs=0.05)
    looting = LootContext(tool=M + "diamond_sword", enchantments=((M + "looting", 3),), entity=M + "cow")
    leather = expected(rb, rb.entity_loot(M + "cow"), looting)[M + "leather"]
    assert (leather.min, leather.max) == (0, 5) and leather.mean == pytest.approx(2.5)
    assert _mean(rb, rb.entity_loot(M + "cow"), looting, M + "leather") == pytest.approx(2.5, abs=0.08)


def test_conditions_read_the_context(rb):
    sheep = rb.loot_table(M + "entities/sheep/red")
    burning = expected(rb, sheep, LootContext(entity=M + "sheep", on_fire=True))
    assert set(burning) == {M + "red_wool", M + "cooked_mutton"}
    assert set(expected(rb, sheep, LootContext(entity=M + "sheep"))) == {M + "red_wool", M + "mutton"}
    rabbit = rb.entity_loot(M + "rabbit")           # the foot needs the player's blow
    assert M + "rabbit_foot" in expected(rb, rabbit, LootContext(entity=M + "rabbit"))
    assert M + "rabbit_foot" not in expected(rb, rabbit, LootContext(entity=M + "rabbit", killed_by_player=False))
    creeper = rb.entity_loot(M + "creeper")          # discs only when a skeleton kills it
    assert not [i for i in expected(rb, creeper, LootContext(entity=M + "creeper")) if "music_disc" in i]
    snow = rb.block_loot(M + "snow")
    layers = LootContext(tool=M + "iron_shovel", block=M + "snow", block_state=(("layers", "5"),))
    assert {i: (d.min, d.max) for i, d in expected(rb, snow, layers).items()} == {M + "snowball": (5, 5)}
    silk = LootContext(tool=M + "iron_shovel", enchantments=((M + "silk_touch", 1),), block=M + "snow",
                       block_state=(("layers", "5"),))
    assert {i: (d.min, d.max) for i, d in expected(rb, snow, silk).items()} == {M + "snow": (5, 5)}


def test_nested_tables_and_item_only_functions(rb):
    chest = rb.loot_table(M + "chests/simple_dungeon")       # enchant_randomly turns a book into an enchanted one
    can = expected(rb, chest, LootContext())
    assert M + "enchanted_book" in can and M + "book" not in can
    guardian = expected(rb, rb.entity_loot(M + "guardian"), LootContext(entity=M + "guardian", on_fire=True))
    assert M + "cooked_cod" in guardian and M + "cod" not in guardian   # fish from a nested table, smelted


class _Place:
    """A spot in a jungle with tall grass's upper half above it."""

    biome = M + "jungle"

    def block_at(self, offset):
        return (M + "tall_grass", {"half": "upper"}) if offset == (0, 1, 0) else (M + "air", {})


def test_location_check_reads_the_biome_and_the_neighbouring_blocks(rb):
    shears = dict(tool=M + "shears", block=M + "tall_grass", block_state=(("half", "lower"),))
    lower = rb.block_loot(M + "tall_grass")
    assert set(expected(rb, lower, LootContext(**shears, place=_Place()))) == {M + "grass"}
    assert expected(rb, lower, LootContext(**shears)) == {}       # no place: the upper half cannot be seen
    fish = rb.loot_table(M + "gameplay/fishing/fish")     # no location condition: every fish can bite
    junk = rb.loot_table(M + "gameplay/fishing/junk")     # bamboo only in jungles
    assert M + "bamboo" in expected(rb, junk, LootContext(place=_Place()))
    assert M + "bamboo" not in expected(rb, junk, LootContext())
    assert M + "cod" in expected(rb, fish, LootContext())


def test_composite_entries_expand_into_weighted_leaves():
    stick, apple, never = _item("minecraft:stick"), _item("minecraft:apple"), _item(
        "minecraft:coal", conditions=[{"condition": "minecraft:random_chance", "chance": 0.0}])
    rb = _pack_rulebook({
        "group": {"pools": [{"rolls": 1, "entries": [{"type": "minecraft:group", "children": [stick, apple]}]}]},
        "sequence": {"pools": [{"rolls": 1, "entries": [{"type": "minecraft:sequence",
                                                         "children": [stick, never, apple]}]}]},
        "alternatives": {"pools": [{"rolls": 2, "entries": [{"type": "minecraft:alternatives",
                                                             "children": [never, apple, stick]}]}]},
    })
    ctx = LootContext()
    group = expected(rb, rb.loot_table("t:group"), ctx)      # one of the two children per roll
    assert {i: (d.min, d.max, d.mean) for i, d in group.items()} == {M + "apple": (0, 1, 0.5), M + "stick": (0, 1, 0.5)}
    rolls = [roll(rb, rb.loot_table("t:group"), ctx, random.Random(s)) for s in range(50)]
    assert all(sum(r.values()) == 1 for r in rolls) and {tuple(r) for r in rolls} == {(M + "apple",), (M + "stick",)}
    sequence = expected(rb, rb.loot_table("t:sequence"), ctx)   # stops at the child that fails
    assert {i: (d.min, d.max) for i, d in sequence.items()} == {M + "stick": (1, 1)}
    assert roll(rb, rb.loot_table("t:sequence"), ctx, random.Random(0)) == {M + "stick": 1}
    alternatives = expected(rb, rb.loot_table("t:alternatives"), ctx)   # the first child that expands
    assert {i: (d.min, d.max) for i, d in alternatives.items()} == {M + "apple": (2, 2)}
