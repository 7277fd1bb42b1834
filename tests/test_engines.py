"""The rule engines on vanilla data: crafting matcher, loot evaluator, function interpreter, advancements."""
from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from mcbuild.compiler.rules.commands import CommandError, CommandRunner, parse, validate_function
from mcbuild.compiler.rules.crafting import craft
from mcbuild.compiler.rules.loot import LootContext, expected, roll
from mcbuild.compiler.rules.pack import build_zip, read_zip
from mcbuild.compiler.rules.player import PlayerState
from mcbuild.compiler.rules.rulebook import Rulebook, vanilla

M = "minecraft:"


def g(*rows):
    return [[c and M + c for c in row] for row in rows]


def test_shaped_recipes_match_anywhere_and_mirrored():
    rb = vanilla()
    axe = ("cobblestone", "cobblestone", None), ("cobblestone", "stick", None), (None, "stick", None)
    mirrored = (None, "cobblestone", "cobblestone"), (None, "stick", "cobblestone"), (None, "stick", None)
    assert craft(rb, g(*axe)).item == M + "stone_axe"
    assert craft(rb, g(*mirrored)).item == M + "stone_axe"
    assert craft(rb, g(("oak_planks", None, None), ("oak_planks", None, None), (None, None, None))).count == 4
    assert craft(rb, g((None, None, None), (None, None, "oak_planks"), (None, None, "oak_planks"))).item == M + "stick"


def test_tag_ingredients_and_shapeless_and_no_match():
    rb = vanilla()
    assert craft(rb, g(("birch_wood", None), (None, None))).item == M + "birch_planks"
    assert craft(rb, g(("paper", "leather"), ("paper", "paper"))).item == M + "book"
    assert craft(rb, g(("paper", "paper"), ("paper", None))) is None
    assert craft(rb, g(("dirt", None), (None, None))) is None



def _recipe_rulebook(recipes: dict[str, dict], filters: list[dict] | None = None) -> Rulebook:
    meta = {"pack": {"pack_format": 10, "description": "t"}} | ({"filter": {"block": filters}} if filters else {})
    files = {"pack.mcmeta": json.dumps(meta).encode()}
    for rid, recipe in recipes.items():
        namespace, _, name = rid.partition(":")
        files[f"data/{namespace}/recipes/{name}.json"] = json.dumps(recipe).encode()
    return Rulebook(vanilla().catalog, [("file/t.zip", read_zip(build_zip(files)))])


def test_crafting_follows_the_resolved_recipes_of_the_packs():
    sticks = g(("oak_planks", None), ("oak_planks", None))
    rb = _recipe_rulebook({
        "minecraft:stick": {"type": "minecraft:crafting_shaped", "pattern": ["   ", " # ", " # "],
                            "key": {"#": {"tag": "minecraft:planks"}}, "result": {"item": M + "torch", "count": 2}},
        "t:pair": {"type": "minecraft:crafting_shapeless", "ingredients": [{"tag": "minecraft:planks"}, {"item": M + "dirt"}],
                   "result": {"item": M + "diamond"}},
    }, filters=[{"namespace": "minecraft", "path": "recipes/oak_planks.json"}])
    assert (craft(rb, sticks).item, craft(rb, sticks).count) == (M + "torch", 2)      # overridden, pattern shrunk
    assert craft(vanilla(), sticks).item == M + "stick"                                 # vanilla keeps its own
    assert craft(rb, g(("dirt", "birch_planks"), (None, None))).item == M + "diamond"
    assert craft(rb, g(("oak_log", None), (None, None))) is None                        # filtered out
    assert craft(vanilla(), g(("oak_log", None), (None, None))).item == M + "oak_planks"


def test_shapeless_ingredients_are_assigned_as_a_whole():
    """An item that fits two ingredients takes the one that leaves the others satisfiable."""
    rb = _recipe_rulebook({"t:mix": {"type": "minecraft:crafting_shapeless", "result": {"item": M + "diamond"},
                                     "ingredients": [{"tag": "minecraft:planks"}, {"item": M + "oak_planks"},
                                                     [{"item": M + "oak_planks"}, {"item": M + "dirt"}]]}})
    assert craft(rb, g(("oak_planks", "oak_planks", "birch_planks"))).item == M + "diamond"
    assert craft(rb, g(("birch_planks", "dirt", "dirt"))) is None


def test_loot_expected_ranges_follow_vanilla_formulas():
    rb = vanilla()
    ctx = LootContext(tool=M + "iron_pickaxe")
    assert {i: (d.min, d.max) for i, d in expected(rb, rb.block_loot(M + "lapis_ore"), ctx).items()} == {M + "lapis_lazuli": (4, 9)}
    gravel = expected(rb, rb.block_loot(M + "gravel"), LootContext(tool=M + "iron_shovel"))
    assert gravel[M + "flint"].mean == pytest.approx(0.1) and gravel[M + "gravel"].mean == pytest.approx(0.9)
    silk = LootContext(tool=M + "iron_pickaxe", enchantments=((M + "silk_touch", 1),))
    assert set(expected(rb, rb.block_loot(M + "iron_ore"), silk)) == {M + "iron_ore"}


def test_loot_roll_is_seeded_and_within_range():
    rb = vanilla()
    table = rb.entity_loot(M + "cow")
    rolls = [roll(rb, table, LootContext(), random.Random(s)) for s in range(200)]
    assert rolls[:5] == [roll(rb, table, LootContext(), random.Random(s)) for s in range(5)]
    assert all(1 <= r[M + "beef"] <= 3 and r[M + "leather"] <= 2 for r in rolls)
    assert {r[M + "leather"] for r in rolls} == {0, 1, 2}


def test_every_emitted_style_command_parses_and_bad_ones_do_not():
    assert validate_function(["give @s minecraft:iron_nugget 3", "advancement revoke @s only mcbuild:t/0"]) == []
    problems = validate_function(["give @s minecraft:iron_nugget three", "frobnicate"])
    assert len(problems) == 2 and problems[0].startswith("line 1")


def _pack_rulebook(functions: dict[str, str], advancements: dict[str, dict] | None = None) -> Rulebook:
    files = {"pack.mcmeta": b'{"pack": {"pack_format": 10, "description": "t"}}'}
    for fid, text in functions.items():
        files[f"data/t/functions/{fid}.mcfunction"] = text.encode()
    for aid, adv in (advancements or {}).items():
        files[f"data/t/advancements/{aid}.json"] = json.dumps(adv).encode()
    return Rulebook(vanilla().catalog, [("file/t.zip", read_zip(build_zip(files)))])


def test_function_interpreter_scores_execute_and_recursion():
    rb = _pack_rulebook({"loop": "execute store success score @s o run clear @s minecraft:stick 1\n"
                                 "execute if score @s o matches 1 run give @s minecraft:diamond 2\n"
                                 "execute if score @s o matches 1 run function t:loop\n"})
    player = PlayerState(rb)
    player.add_items({M + "stick": 5}, settle=False)
    CommandRunner(rb).run_function("t:loop", player)
    assert player.inventory == Counter({M + "diamond": 10})


def test_unsupported_command_is_an_error():
    rb = vanilla()
    with pytest.raises(CommandError):
        CommandRunner(rb).run(parse("setblock ~ ~ ~ minecraft:stone"), PlayerState(rb))


def test_advancement_reward_fires_once_per_acquisition_until_revoked():
    adv = {"criteria": {"c": {"trigger": "minecraft:inventory_changed",
                              "conditions": {"items": [{"items": ["minecraft:barrier"]}]}}},
           "rewards": {"function": "t:swap"}}
    rb = _pack_rulebook({"swap": "clear @s minecraft:barrier\ngive @s minecraft:apple 1\nadvancement revoke @s only t:a\n"},
                        {"a": adv})
    player = PlayerState(rb)
    player.add_items({M + "barrier": 1})
    player.add_items({M + "barrier": 2})
    assert player.inventory == Counter({M + "apple": 2})


def test_a_settle_completes_what_firing_until_nothing_new_completes_does():
    """A settle ends with the first round whose completions ran no reward function: a reward's give
    completes the next advancement of the chain in the same settle, exactly as firing
    ``inventory_changed`` round after round until one completes nothing does."""
    def on(item: str, reward: str | None = None) -> dict:
        criterion = {"trigger": "minecraft:inventory_changed", "conditions": {"items": [{"items": [M + item]}]}}
        return {"criteria": {"c": criterion}, **({"rewards": {"function": reward}} if reward else {})}

    rb = _pack_rulebook({"apple": "give @s minecraft:apple 1\n", "bread": "give @s minecraft:bread 1\n"},
                        {"barrier": on("barrier", "t:apple"), "apple": on("apple", "t:bread"), "bread": on("bread"),
                         "stick": on("stick")})
    settled, plain = PlayerState(rb), PlayerState(rb)
    for items in ({M + "stick": 1}, {M + "barrier": 1}, {M + "stick": 1}):
        completed = settled.add_items(items)
        plain.add_items(items, settle=False)
        fired: list[str] = []
        while newly := plain.advancements.trigger("minecraft:inventory_changed", plain.inventory):
            fired += newly
        assert completed == fired and settled.inventory == plain.inventory
    assert [a for a in settled.advancements.done if a.startswith("t:")] == ["t:stick", "t:barrier", "t:apple", "t:bread"]


def test_advancement_tried_again_after_a_revoke_or_a_count_change_on_the_same_items():
    held = {"trigger": "minecraft:inventory_changed", "conditions": {"items": [{"items": ["minecraft:apple"]}]}}
    three = {"trigger": "minecraft:inventory_changed",
             "conditions": {"items": [{"items": ["minecraft:apple"], "count": {"min": 3}}]}}
    rb = _pack_rulebook({}, {"held": {"criteria": {"c": held}}, "three": {"criteria": {"c": three}}})
    player = PlayerState(rb)
    assert "t:held" in player.add_items({M + "apple": 1}) and player.settle() == []
    player.advancements.revoke("t:held")            # same inventory: the revoked advancement fires again
    assert player.settle() == ["t:held"]
    assert player.add_items({M + "apple": 2}) == ["t:three"]    # same items, a count a criterion reads


def test_a_criterion_fires_when_its_last_needed_item_is_gained_whichever_predicate_names_it():
    """After a try on which a criterion failed, only the criteria of the items gained are tried:
    that must include a criterion whose other predicate (not the one it is filed under) gains."""
    both = {"trigger": "minecraft:inventory_changed",
            "conditions": {"items": [{"items": ["minecraft:apple"]}, {"items": ["minecraft:bread"]}]}}
    rb = _pack_rulebook({}, {"both": {"criteria": {"c": both}}})
    for first, second in (("apple", "bread"), ("bread", "apple")):
        player = PlayerState(rb)
        assert "t:both" not in player.add_items({M + first: 1}) + player.add_items({M + "stick": 1})
        player.remove_items({M + "stick": 1})
        assert "t:both" in player.add_items({M + second: 1})


def test_advancements_tried_for_the_gained_items_alone_complete_as_a_whole_try_does():
    """A random walk of gains and losses on the vanilla rules: a player whose every inventory change
    tries all the criteria of its held items completes the same advancements in the same order."""
    rng = random.Random(7)
    items = sorted({M + i for i in ("oak_log", "oak_planks", "stick", "cobblestone", "iron_ingot", "coal",
                                    "diamond", "iron_boots", "crafting_table", "furnace", "wheat", "string",
                                    "lava_bucket", "water_bucket", "obsidian", "flint", "gold_ingot", "book",
                                    "leather", "sugar_cane", "paper", "redstone", "copper_ingot", "glass")})
    quick, whole = PlayerState(vanilla()), PlayerState(vanilla())
    for _ in range(300):
        some, lose = rng.sample(items, rng.randint(1, 3)), rng.random() < 0.4
        whole.advancements._tried = None          # no earlier try to go by: all the held items' criteria
        for player in (quick, whole):
            if lose:
                player.remove_items({i: player.inventory[i] for i in some})
            else:
                player.add_items({i: 2 for i in some})
        assert quick.advancements.done == whole.advancements.done
        assert quick.advancements.progress == whole.advancements.progress
    assert len(quick.advancements.done) > 40

def test_story_milestones_complete_from_inventory():
    player = PlayerState(vanilla())
    done = player.add_items({M + "cobbled_deepslate": 1})
    assert "minecraft:story/mine_stone" in done
    player.add_items({M + "iron_boots": 1})
    assert player.advancements.is_done("minecraft:story/obtain_armor")
    assert "minecraft:story/enchant_item" in player.enchanted(M + "iron_boots", 1)
