"""Resolved changes -> the override files of a 1.19.0 datapack.

Every edited transition becomes the minimal file: a recipe or loot table override at the vanilla
path, or a new recipe in the neutral ``mcbuild`` namespace.

Cooking results in 1.19 are a bare item id, so a cooking change that yields more than one item
cooks into a *marker item* that no survival player can otherwise obtain; an
``inventory_changed`` advancement on that marker runs a function that swaps every marker taken
for the real output and count, then revokes itself (see docs/smelting-mechanism.md).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from mcbuild.compiler.mirror.resolve import ChangedTransition, Resolved
from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.cooking import marker_items
from mcbuild.compiler.rules.pack import pack_mcmeta, resource_path
from mcbuild.compiler.rules.rulebook import STATION_RECIPE_TYPES, Rulebook

NAMESPACE = "mcbuild"
SCORE = "mcbuild.t"
PACK_DESCRIPTION = "mcbuild rules"
SILK_TOUCH = {"condition": "minecraft:match_tool",
              "predicate": {"enchantments": [{"enchantment": "minecraft:silk_touch", "levels": {"min": 1}}]}}
NOT_SILK_TOUCH = {"condition": "minecraft:inverted", "term": SILK_TOUCH}
SURVIVES = {"condition": "minecraft:survives_explosion"}
NO_DROPS: dict[str, Any] = {"pools": []}     # the table of a block or mob the game has none for: it drops nothing


def _item_entry(item: str, count: int) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "minecraft:item", "name": item}
    if count != 1:
        entry["functions"] = [{"function": "minecraft:set_count", "count": count, "add": False}]
    return entry


def _silk_branch(table: dict) -> dict | None:
    """The silk-touch child of a vanilla table's first pool, if it has one."""
    pools = table.get("pools", [])
    if not pools:
        return None
    for entry in pools[0].get("entries", []):
        if entry.get("type") == "minecraft:alternatives":
            first = entry["children"][0]
            if SILK_TOUCH in first.get("conditions", []):
                return first
    return None


def _byproduct_pool(item: str, count: int, silk: bool) -> dict[str, Any]:
    conditions = ([NOT_SILK_TOUCH] if silk else []) + [SURVIVES]
    return {"rolls": 1.0, "bonus_rolls": 0.0, "entries": [_item_entry(item, count)], "conditions": conditions}


def _replaced_table(vanilla: dict, outputs: tuple[tuple[str, int], ...]) -> dict[str, Any]:
    silk = _silk_branch(vanilla)
    (first_item, first_count), rest = outputs[0], outputs[1:]
    if silk is not None:
        first = {"rolls": 1.0, "bonus_rolls": 0.0, "entries": [{"type": "minecraft:alternatives", "children": [
            copy.deepcopy(silk), {**_item_entry(first_item, first_count), "conditions": [SURVIVES]}]}]}
    else:
        first = _byproduct_pool(first_item, first_count, False)
    table = {"type": vanilla.get("type", "minecraft:block"),
             "pools": [first] + [_byproduct_pool(i, c, silk is not None) for i, c in rest]}
    return table


def _added_table(vanilla: dict, outputs: tuple[tuple[str, int], ...], block: bool) -> dict[str, Any]:
    table = copy.deepcopy(vanilla)
    silk = block and _silk_branch(vanilla) is not None
    for item, count in outputs:
        pool = _byproduct_pool(item, count, silk)
        if not block:
            pool.pop("conditions")
        table.setdefault("pools", []).append(pool)
    return table


@dataclass
class _Cooking:
    rb: Rulebook
    files: dict[str, Any]
    markers: dict[tuple[str, int], str] = field(default_factory=dict)
    new_recipes: int = 0

    def emit(self, tr: ChangedTransition) -> None:
        station = tr.station
        assert station is not None                  # a smelt transition names its station
        rtype = STATION_RECIPE_TYPES[station]
        (item, count), = tr.outputs
        result = item if count == 1 else self._marker(item, count)
        found = self.rb.cooking_recipe(tr.target, station)
        base: dict[str, Any] = {"type": rtype, "ingredient": {"item": tr.target}, "result": result,
                                "experience": 0.1,
                                "cookingtime": int(self.rb.facts["cooking_ticks"][tr.station])}
        if found is not None:
            rid, vanilla = found
            if self.rb.ingredient(vanilla["ingredient"]) == {tr.target}:
                self.files[resource_path("recipe", rid)] = {**vanilla, "result": result}
                return
            pruned = self._without(vanilla, tr.target)
            self.files[resource_path("recipe", rid)] = pruned
            base.update(experience=vanilla.get("experience", 0.1), cookingtime=vanilla.get("cookingtime", base["cookingtime"]))
            if "group" in vanilla:
                base["group"] = vanilla["group"]
        self.files[resource_path("recipe", f"{NAMESPACE}:cooking/{self.new_recipes}")] = base
        self.new_recipes += 1

    def _without(self, recipe: dict, item: str) -> dict:
        ing = recipe["ingredient"]
        options = ing if isinstance(ing, list) else [ing]
        kept: list[Any] = []
        for opt in options:
            if "item" in opt and ns(opt["item"]) == item:
                continue
            if "tag" in opt and item in self.rb.tag("item", opt["tag"]):
                kept.extend({"item": m} for m in sorted(self.rb.tag("item", opt["tag"])) if m != item)
                continue
            kept.append(opt)
        return {**recipe, "ingredient": kept}

    def _marker(self, item: str, count: int) -> str:
        key = (item, count)
        if key not in self.markers:
            pool = marker_items(self.rb)
            if len(self.markers) >= len(pool):
                raise ValueError("too many multi-item cooking outputs for the marker pool")
            marker = pool[len(self.markers)]
            self.markers[key] = marker
            k = len(self.markers) - 1
            adv = f"{NAMESPACE}:t/{k}"
            self.files[resource_path("advancement", adv)] = {
                "criteria": {"taken": {"trigger": "minecraft:inventory_changed",
                                       "conditions": {"items": [{"items": [marker]}]}}},
                "rewards": {"function": adv},
            }
            self.files[resource_path("function", adv, ".mcfunction")] = (
                f"function {NAMESPACE}:t/{k}_each\nadvancement revoke @s only {adv}\n")
            self.files[resource_path("function", f"{NAMESPACE}:t/{k}_each", ".mcfunction")] = (
                f"execute store success score @s {SCORE} run clear @s {marker} 1\n"
                f"execute if score @s {SCORE} matches 1 run give @s {item} {count}\n"
                f"execute if score @s {SCORE} matches 1 run function {NAMESPACE}:t/{k}_each\n")
        return self.markers[key]


def emit(resolved: list[Resolved], rb: Rulebook) -> dict[str, Any]:
    """The pack's files (archive path -> JSON value or text)."""
    files: dict[str, Any] = {"pack.mcmeta": pack_mcmeta(PACK_DESCRIPTION)}
    cooking = _Cooking(rb, files)
    for res in resolved:
        for tr in res.transitions:
            if tr.skill == "craft_grid":
                recipe = copy.deepcopy(rb.recipes[tr.target])
                (item, count), = tr.outputs
                recipe["result"] = {"item": item} if count == 1 else {"item": item, "count": count}
                files[resource_path("recipe", tr.target)] = recipe
            elif tr.skill == "smelt":
                cooking.emit(tr)
            elif tr.skill == "mine":
                vanilla = rb.block_loot(tr.target) or NO_DROPS
                table = (_replaced_table(vanilla, tr.outputs) if res.change.operator == "block_drops_replace"
                         else _added_table(vanilla, tr.outputs, block=True))
                files[resource_path("loot_table", _loot_id(tr.target, "blocks"))] = table
            else:
                files[resource_path("loot_table", _loot_id(tr.target, "entities"))] = _added_table(
                    rb.entity_loot(tr.target) or NO_DROPS, tr.outputs, block=False)
    if cooking.markers:
        files[resource_path("function", f"{NAMESPACE}:load", ".mcfunction")] = f"scoreboard objectives add {SCORE} dummy\n"
        files[resource_path("function_tag", "minecraft:load")] = {"values": [f"{NAMESPACE}:load"]}
    return files


def _loot_id(rid: str, folder: str) -> str:
    space, _, name = ns(rid).partition(":")
    return f"{space}:{folder}/{name}"
