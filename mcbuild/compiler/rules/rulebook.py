"""The rulebook: one resolved view of the vanilla catalog plus the datapacks of a world.

This is the only reader of pack files. Packs are layered in load order (lowest first, like the
``DataPacks.Enabled`` list of a save): a file at the same path replaces the lower one whole,
tags merge unless ``"replace": true``, and ``pack.mcmeta`` ``filter.block`` hides lower files.
The tracer, the audits, the simulator and the evaluator all read rules only through this class.
"""
from __future__ import annotations

import json
import re
from functools import cached_property, lru_cache
from typing import Any, Iterable, Sequence

from mcbuild.compiler.core.memo import LRU
from mcbuild.compiler.rules.catalog import Catalog, game_facts, ns, parse_resources
from mcbuild.compiler.rules.catalog import load as load_catalog
from mcbuild.compiler.rules.crafting import CraftingIndex, CraftResult, craft
from mcbuild.compiler.rules.loot import check_table

TAG_KINDS = {"item": "item_tag", "block": "block_tag", "function": "function_tag", "entity_type": "entity_type_tag"}
MEMO_SIZE = 4096         # entries per derived-fact table of one rulebook
STATION_RECIPE_TYPES: dict[str, str] = dict(game_facts()["station_recipe_types"])     # station -> recipe type


class Rulebook:
    def __init__(self, catalog: Catalog | None = None, packs: Sequence[tuple[str, dict[str, bytes]]] = ()):
        self.catalog = catalog or load_catalog()
        self.pack_names = [name for name, _ in packs]
        layers: list[tuple[str, dict[tuple[str, str], Any], list[dict]]] = [("vanilla", dict(self.catalog.resources), [])]
        for name, files in packs:
            meta = json.loads(files["pack.mcmeta"]) if "pack.mcmeta" in files else {}
            filters = meta.get("filter", {}).get("block", [])
            layers.append((name, parse_resources(files), filters))
        self.resources: dict[tuple[str, str], Any] = {}
        self.origin: dict[tuple[str, str], str] = {}
        self._tag_layers: dict[tuple[str, str], list[Any]] = {}
        self._tag_memo: dict[tuple[str, str], frozenset[str]] = {}
        self._memos: dict[str, LRU] = {}
        for name, resources, filters in layers:
            if filters:
                self._apply_filters(filters)
            for key, value in sorted(resources.items()):
                if key[0] in TAG_KINDS.values():
                    stack = self._tag_layers.setdefault(key, [])
                    if value.get("replace"):
                        stack.clear()
                    stack.append(value)
                self.resources[key] = value
                self.origin[key] = name

    def _apply_filters(self, filters: list[dict]) -> None:
        from mcbuild.compiler.rules.pack import resource_path

        for key in list(self.resources):
            kind, rid = key
            ns_, _, name = rid.partition(":")
            path = resource_path(kind, rid, ".mcfunction" if kind == "function" else ".json")
            for flt in filters:
                if re.fullmatch(flt.get("namespace", ".*"), ns_) and re.fullmatch(flt.get("path", ".*"), path.split("/", 2)[2]):
                    del self.resources[key]
                    self.origin.pop(key, None)
                    self._tag_layers.pop(key, None)
                    break

    # ------------------------------------------------------------------ lookups
    @property
    def facts(self) -> dict[str, Any]:
        return self.catalog.facts

    def get(self, kind: str, rid: str) -> Any:
        return self.resources.get((kind, ns(rid)))

    def of_kind(self, kind: str) -> dict[str, Any]:
        return {rid: v for (k, rid), v in self.resources.items() if k == kind}

    def tag(self, kind: str, tag_id: str) -> frozenset[str]:
        """Members of ``#tag_id`` (leading '#' optional), nested tags expanded (memoized: a
        rulebook never changes after construction)."""
        key = (TAG_KINDS[kind], ns(tag_id.lstrip("#")))
        if key not in self._tag_memo:
            self._tag_memo[key] = self._expand(key[0], key[1], ())
        return self._tag_memo[key]

    def _expand(self, tkind: str, tag_id: str, seen: tuple[str, ...]) -> frozenset[str]:
        if tag_id in seen:
            raise ValueError(f"tag cycle through #{tag_id}")
        layers = self._tag_layers.get((tkind, tag_id))
        if layers is None:
            raise KeyError(f"unknown tag #{tag_id}")
        out: set[str] = set()
        for layer in layers:
            for value in layer.get("values", []):
                vid = value["id"] if isinstance(value, dict) else value
                if vid.startswith("#"):
                    out |= self._expand(tkind, ns(vid[1:]), seen + (tag_id,))
                else:
                    out.add(ns(vid))
        return frozenset(out)

    def memo(self, name: str, size: int = MEMO_SIZE) -> LRU:
        """A bounded memo table for facts derived from this rulebook (shared by all its users: a
        rulebook never changes after construction)."""
        if name not in self._memos:
            self._memos[name] = LRU(size)
        return self._memos[name]

    def craft(self, grid: Sequence[Sequence[str | None]]) -> CraftResult | None:
        """What ``grid`` crafts under these rules (memoized)."""
        key = tuple(tuple(row) for row in grid)
        return self.memo("craft").get_or_make(key, lambda: craft(self, [list(row) for row in grid]))

    @cached_property
    def crafting_index(self) -> CraftingIndex:
        """The resolved crafting recipes filed by grid shape (``mcbuild.compiler.rules.crafting``)."""
        return CraftingIndex(self)

    def ingredient(self, ing: Any) -> frozenset[str]:
        """Items accepted by a recipe ingredient (item, tag, or list of alternatives)."""
        if isinstance(ing, list):
            return frozenset().union(*(self.ingredient(i) for i in ing))
        if "item" in ing:
            return frozenset({ns(ing["item"])})
        return self.tag("item", ing["tag"])

    @cached_property
    def recipes(self) -> dict[str, dict]:
        return self.of_kind("recipe")

    def recipes_of_type(self, rtype: str) -> dict[str, dict]:
        return {rid: r for rid, r in sorted(self.recipes.items()) if ns(r.get("type", "")) == rtype}

    def loot_table(self, rid: str) -> dict | None:
        """The loot table ``rid``, checked once (:func:`mcbuild.compiler.rules.loot.check_table` names any
        construct the loot engine does not implement)."""
        rid = ns(rid)
        table = self.get("loot_table", rid)
        if table is not None:
            self.memo("checked_loot").get_or_make(rid, lambda: _checked(self, table, f"loot table {rid}"))
        return table

    def block_loot(self, block: str) -> dict | None:
        block = ns(block)
        return self.loot_table(f"{block.split(':')[0]}:blocks/{block.split(':')[1]}")

    def entity_loot(self, entity: str) -> dict | None:
        entity = ns(entity)
        return self.loot_table(f"{entity.split(':')[0]}:entities/{entity.split(':')[1]}")

    @cached_property
    def advancements(self) -> dict[str, dict]:
        return self.of_kind("advancement")

    def function(self, fid: str) -> list[str]:
        text = self.get("function", fid)
        if text is None:
            raise KeyError(f"unknown function {fid}")
        return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]

    def function_tag(self, tag_id: str) -> list[str]:
        try:
            return sorted(self.tag("function", tag_id))
        except KeyError:
            return []

    def cooking_recipe(self, item: str, station: str) -> tuple[str, dict] | None:
        """The recipe a station uses for ``item`` (first by id, as our packs never overlap)."""
        rid = self._cooking_inputs[STATION_RECIPE_TYPES[station]].get(ns(item))
        return None if rid is None else (rid, self.recipes[rid])

    @cached_property
    def _cooking_inputs(self) -> dict[str, dict[str, str]]:
        """For each station's recipe type: input item -> the recipe it uses."""
        out: dict[str, dict[str, str]] = {rtype: {} for rtype in STATION_RECIPE_TYPES.values()}
        for rid, recipe in sorted(self.recipes.items()):
            inputs = out.get(ns(recipe.get("type", "")))
            if inputs is not None:
                for item in sorted(self.ingredient(recipe["ingredient"])):
                    inputs.setdefault(item, rid)
        return out

    def smelting_result(self, item: str) -> str | None:
        found = self.cooking_recipe(item, "furnace")
        return ns(found[1]["result"]) if found else None

    def stack_size(self, item: str) -> int:
        """Max stack size: the game facts list every catalog item that does not stack to 64
        (``tests/test_vanilla_catalog.py`` checks that against minecraft-data)."""
        return int(self.facts["stack_sizes"].get(ns(item), 64))

    @cached_property
    def fuels(self) -> dict[str, int]:
        """The game's fuel table under these rules (``AbstractFurnaceBlockEntity.getFuel``): item ->
        burn ticks in a furnace, built from ``fuel_ticks`` entry by entry (a later entry overrides an
        earlier one), its tags as these rules resolve them, never a member of its ``never`` tag."""
        facts = self.facts["fuel_ticks"]
        never = self.tag("item", facts["never"])
        table: dict[str, int] = {}
        for entry in facts["entries"]:
            members = self.tag("item", entry["tag"]) if "tag" in entry else {ns(entry["item"])}
            for item in sorted(members - never):
                table[item] = int(entry["ticks"])
        return table

    def is_fuel(self, item: str) -> int:
        """Burn time in ticks of ``item`` in a furnace (0 if it is not a fuel)."""
        return self.fuels.get(ns(item), 0)

    def burn_ticks(self, item: str, station: str) -> int:
        """How long one ``item`` burns in ``station`` (a blast furnace or smoker burns a fuel for half
        as long as a furnace, integer division)."""
        return self.is_fuel(item) // int(self.facts["fuel_ticks"]["burn_divisor"][station])

    def cook_ticks(self, item: str, station: str) -> int:
        """The ticks ``station`` takes to cook one ``item``: its recipe's ``cookingtime``, else the
        station's default (0 when the station cooks nothing from it)."""
        found = self.cooking_recipe(item, station)
        if found is None:
            return 0
        return int(found[1].get("cookingtime", self.facts["cooking_ticks"][station]))

    def max_durability(self, item: str) -> int:
        """The uses ``item`` takes before it breaks (0: it never wears out)."""
        return int(self.facts["max_durability"].get(ns(item), 0))

    def harvest_tools(self, block: str) -> frozenset[str] | None:
        """Tools whose use makes ``block`` drop anything; None when any tool or the hand will do."""
        block = ns(block)
        if block not in self.facts["requires_correct_tool"]:
            return None
        tiers = self.facts["tool_tiers"].values()
        kinds = [k for k in sorted({k for tier in tiers for k in tier["tools"]})
                 if self._has_tag("block", f"minecraft:mineable/{k}") and block in self.tag("block", f"minecraft:mineable/{k}")]
        needs = {t for t in sorted({t for tier in tiers for t in tier["harvests"]}) if block in self.tag("block", t)}
        tools = set()
        for tier in tiers:
            if needs <= set(tier["harvests"]):
                tools |= {tier["tools"][k] for k in kinds if k in tier["tools"]}
        return frozenset(tools)

    def enchantable_items(self) -> frozenset[str]:
        """The items the enchanting table offers enchantments for (those with an enchantability; read
        once)."""
        return self.memo("enchanting").get_or_make("enchantable", lambda: frozenset(ns(i) for i in self.facts["enchantable"]))

    def _has_tag(self, kind: str, tag_id: str) -> bool:
        return (TAG_KINDS[kind], ns(tag_id)) in self._tag_layers

    def changed_keys(self, base: "Rulebook") -> list[tuple[str, str]]:
        """Resources whose resolved content differs from ``base`` (added, removed or changed;
        memoized per ``base``: hand out copies)."""
        def diff() -> list[tuple[str, str]]:
            keys = set(self.resources) | set(base.resources)
            return sorted(k for k in keys if self.resources.get(k) != base.resources.get(k))

        return list(self.memo("changed_keys").get_or_make(base, diff))


@lru_cache(maxsize=1)
def vanilla() -> Rulebook:
    """The rules of vanilla 1.19.0 alone (shared; a rulebook never changes after construction)."""
    return Rulebook()


def _checked(rules: Rulebook, table: dict, where: str) -> bool:
    """:func:`check_table` of one table; True once it passed (the memo keeps that)."""
    check_table(rules, table, where)
    return True


def with_packs(packs: Iterable[tuple[str, dict[str, bytes]]]) -> Rulebook:
    return Rulebook(load_catalog(), list(packs))
