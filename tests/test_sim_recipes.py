"""Every crafting and furnace recipe of the game's data is produced through the skills in a Vanilla
world (issue #23, item 2).

The recipes are enumerated from the data, never from a list. For each one the body is handed
exactly the recipe's ingredients (plus fuel for cooking) and runs ``craft_grid`` or ``smelt`` at the
recipe's station; the produced item, its count and the inventory afterwards (crafting remainders
included) must be what the data and ``catalogs/game_facts.yaml`` say. Every alternative of a tag or
list ingredient is used at least once. ``holding`` (the inventory reset) is a test-only helper.
"""
from __future__ import annotations

from collections import Counter

import pytest

from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.crafting import CRAFTING_TYPES, craft_station, example_grid, grid_size, remainders
from mcbuild.compiler.rules.rulebook import STATION_RECIPE_TYPES, vanilla
from mcbuild.runtime.contract.skills import ActionError, validate
from sim_stations import holding, run, with_stations

FUEL = {"minecraft:coal": 1}
STATIONS = ("minecraft:crafting_table", *(ns(s) for s in STATION_RECIPE_TYPES))


@pytest.fixture(scope="module")
def sim():
    """One Vanilla backend with every station placed; each case starts from an empty inventory."""
    return with_stations(STATIONS)


def alternatives(recipe: dict) -> int:
    """How many grids use every accepted item of every ingredient at least once."""
    ingredients = recipe["key"].values() if "key" in recipe else recipe["ingredients"]
    return max(len(vanilla().ingredient(i)) for i in ingredients)


def recipes_of(types) -> list[str]:
    return [rid for rid, r in sorted(vanilla().recipes.items()) if ns(r["type"]) in types]


CRAFTING = recipes_of(CRAFTING_TYPES)
COOKING = recipes_of(set(STATION_RECIPE_TYPES.values()))


def test_the_data_has_every_recipe():
    assert (len(CRAFTING), len(COOKING)) == (754, 103)


def test_every_crafting_recipe_is_produced_at_its_station(sim):
    rb = vanilla()
    failed = []
    for rid in CRAFTING:
        recipe = rb.recipes[rid]
        result = (ns(recipe["result"]["item"]), int(recipe["result"].get("count", 1)))
        home = craft_station(rb, recipe)
        for k in range(alternatives(recipe)):
            # the recipe's own station first, then a crafting table (which takes every recipe)
            station = home if k == 0 else "crafting_table"
            grid = example_grid(rb, recipe, lambda accepted: sorted(accepted)[k % len(accepted)], grid_size(station))  # noqa: B023
            used = Counter(c for row in grid for c in row if c)
            holding(sim, used)
            out = run(sim, "craft_grid", station=station, grid=grid)
            expected = Counter({result[0]: result[1]}) + remainders(rb, used)
            if not out.ok or out.details["produced"] != dict([result]) or sim.body.inventory != expected:
                failed.append((rid, station, grid, out.reason, dict(sim.body.inventory)))
    assert not failed, f"{len(failed)} crafting cases failed, e.g. {failed[:3]}"


def test_every_cooking_recipe_is_produced_at_its_station(sim):
    rb = vanilla()
    stations = {t: s for s, t in STATION_RECIPE_TYPES.items()}
    failed = []
    for rid in COOKING:
        recipe = rb.recipes[rid]
        station = stations[ns(recipe["type"])]
        for item in sorted(rb.ingredient(recipe["ingredient"])):
            holding(sim, Counter({item: 1}) + Counter(FUEL))
            out = run(sim, "smelt", input=item, station=station)
            if not out.ok or sim.body.inventory != Counter({ns(recipe["result"]): 1}):
                failed.append((rid, item, out.reason, dict(sim.body.inventory)))
    assert not failed, f"{len(failed)} cooking cases failed, e.g. {failed[:3]}"


def test_remainders_come_back(sim):
    """A cake hands back its three buckets, a honey block its four bottles."""
    M = "minecraft:"
    cake = [["milk_bucket"] * 3, ["sugar", "egg", "sugar"], ["wheat"] * 3]
    holding(sim, Counter({M + "milk_bucket": 3, M + "sugar": 2, M + "egg": 1, M + "wheat": 3}))
    assert run(sim, "craft_grid", station="crafting_table", grid=cake).ok
    assert sim.body.inventory == Counter({M + "cake": 1, M + "bucket": 3})
    holding(sim, Counter({M + "honey_bottle": 4}))
    assert run(sim, "craft_grid", station="inventory", grid=[["honey_bottle"] * 2] * 2).ok
    assert sim.body.inventory == Counter({M + "honey_block": 1, M + "glass_bottle": 4})


# ---------------------------------------------------------------------------- no skill (docs/simulator.md)
_ = None
SPECIAL_GRIDS = {   # a grid only this special recipe matches in 1.19
    "armordye": [["leather_helmet", "red_dye"]],
    "bannerduplicate": [["white_banner", "white_banner"]],
    "bookcloning": [["written_book", "writable_book"]],
    "firework_rocket": [["paper", "gunpowder", "firework_star"]],    # without a star: firework_rocket_simple
    "firework_star": [["gunpowder", "red_dye"]],
    "firework_star_fade": [["firework_star", "red_dye"]],
    "mapcloning": [["filled_map", "map"]],
    "mapextending": [["paper"] * 3, ["paper", "filled_map", "paper"], ["paper"] * 3],
    "repairitem": [["wooden_pickaxe", "wooden_pickaxe"]],
    "shielddecoration": [["white_banner", "shield"]],
    "shulkerboxcoloring": [["shulker_box", "red_dye"]],
    "suspiciousstew": [["bowl", "brown_mushroom", "red_mushroom"], ["dandelion", _, _]],
    "tippedarrow": [["arrow"] * 3, ["arrow", "lingering_potion", "arrow"], ["arrow"] * 3],
}


def test_a_grid_only_a_special_recipe_matches_produces_nothing(sim):
    special = {ns(r["type"]).removeprefix("minecraft:crafting_special_") for r in vanilla().recipes.values()
               if ns(r["type"]).startswith("minecraft:crafting_special_")}
    assert special == set(SPECIAL_GRIDS)
    for kind, grid in sorted(SPECIAL_GRIDS.items()):
        holding(sim, Counter(ns(c) for row in grid for c in row if c))
        out = run(sim, "craft_grid", station="crafting_table", grid=grid)
        assert out.reason == "no_result", kind


def test_smithing_has_no_skill(sim):
    """A smithing upgrade's base and addition in a crafting grid make nothing."""
    for rid in recipes_of({"minecraft:smithing"}):
        recipe = vanilla().recipes[rid]
        grid = [[recipe["base"]["item"], recipe["addition"]["item"]]]
        holding(sim, Counter(ns(c) for c in grid[0]))
        assert run(sim, "craft_grid", station="crafting_table", grid=grid).reason == "no_result", rid


@pytest.mark.parametrize("station", ["campfire", "stonecutter", "smithing_table"])
def test_smelt_takes_only_the_three_furnaces(station):
    with pytest.raises(ActionError) as err:
        validate({"skill": "smelt", "args": {"input": "beef", "station": station}}, vanilla().catalog)
    assert err.value.reason == "invalid_args"


def test_every_campfire_recipe_has_a_smoker_twin():
    """What a campfire cooks, a smoker cooks into the same item (so no food is out of reach)."""
    rb = vanilla()
    for rid in recipes_of({"minecraft:campfire_cooking"}):
        recipe = rb.recipes[rid]
        for item in rb.ingredient(recipe["ingredient"]):
            assert ns(rb.cooking_recipe(item, "smoker")[1]["result"]) == ns(recipe["result"]), rid


def test_remainders_are_registry_items():
    facts = vanilla().facts["crafting_remainders"]
    assert facts and set(facts) | set(facts.values()) <= vanilla().catalog.items
