"""The enchanting table of 1.19.0 over the catalog's facts (``enchanting``, ``enchantable``,
``enchantments`` in ``catalogs/game_facts.yaml``): the level cost of each option
(``EnchantmentHelper.getEnchantmentCost``) and the enchantments an option gives
(``EnchantmentMenu.getEnchantmentList``, ``EnchantmentHelper.selectEnchantment``).

The game seeds its generator with the player's enchantment seed (plus the option, for the list), so
an item's offers stay the same until the player enchants something. The caller hands in generators
seeded the same way; they are Python's, not the game's Java generator, so the draws follow the
game's distribution, not its exact values.
"""
from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING, Sequence

from mcbuild.compiler.rules.catalog import ns

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook

Enchantments = tuple[tuple[str, int], ...]       # (enchantment id, level), in the order applied


def enchantability(rules: "Rulebook", item: str) -> int:
    """``Item.getEnchantmentValue``: 0 for an item the table offers nothing for."""
    entry = rules.facts["enchantable"].get(ns(item))
    return int(entry["enchantability"]) if entry else 0


def option_costs(rules: "Rulebook", item: str, bookshelves: int, rng: random.Random) -> list[int]:
    """The level cost of the three options for ``item`` with ``bookshelves`` around the table; 0 for
    an option that is not offered (its cost would be below its number). ``rng`` is seeded with the
    player's enchantment seed."""
    value = enchantability(rules, item)
    if value <= 0:
        return [0, 0, 0]
    shelves = min(bookshelves, int(rules.facts["enchanting"]["max_bookshelves"]))
    costs = []
    for slot in range(3):
        base = rng.randrange(8) + 1 + (shelves >> 1) + rng.randrange(shelves + 1)
        cost = max(base // 3, 1) if slot == 0 else base * 2 // 3 + 1 if slot == 1 else max(base, shelves * 2)
        costs.append(cost if cost >= slot + 1 else 0)
    return costs


def option_enchantments(rules: "Rulebook", item: str, cost: int, rng: random.Random) -> Enchantments:
    """What the option of level ``cost`` puts on ``item`` (``rng`` seeded with the enchantment seed
    plus the option's index): ``selectEnchantment`` without treasure, and a book keeps one of several."""
    chosen = _select(rules, item, cost, rng)
    if ns(item) == ns(rules.facts["enchanting"]["book"]["item"]) and len(chosen) > 1:
        del chosen[rng.randrange(len(chosen))]
    return tuple(chosen)


def _select(rules: "Rulebook", item: str, level: int, rng: random.Random) -> list[tuple[str, int]]:
    value = enchantability(rules, item)
    if value <= 0:
        return []
    level += 1 + rng.randrange(value // 4 + 1) + rng.randrange(value // 4 + 1)
    spread = (rng.random() + rng.random() - 1.0) * 0.15
    level = max(math.floor(level + level * spread + 0.5), 1)
    options: Sequence[tuple[str, int, int]] = available(rules, item, level)
    if not options:
        return []
    chosen = [_weighted(options, rng)]
    excluded = rules.memo("enchanting").get_or_make("excluded", lambda: _exclusions(rules))
    while rng.randrange(50) <= level:
        options = [o for o in options if _compatible(excluded, o[0], chosen[-1][0])]
        if not options:
            break
        chosen.append(_weighted(options, rng))
        level //= 2
    return [(e, n) for e, n, _ in chosen]


def available(rules: "Rulebook", item: str, power: int) -> tuple[tuple[str, int, int], ...]:
    """:func:`_available`, read once per rulebook, item and power (an item's options at a power are
    facts of the rules)."""
    return rules.memo("enchanting_available").get_or_make((ns(item), power), lambda: tuple(_available(rules, item, power)))


def _exclusions(rules: "Rulebook") -> dict[str, frozenset[str]]:
    """Each enchantment's id -> the enchantments it excludes."""
    return {ns(e["id"]): frozenset(map(ns, e["exclude"])) for e in rules.facts["enchantments"]}


def _available(rules: "Rulebook", item: str, power: int) -> list[tuple[str, int, int]]:
    """``getAvailableEnchantmentResults``: (enchantment, level, weight) for every discoverable,
    non-treasure enchantment of a category the item takes (a book takes all), at its highest level
    whose cost range holds ``power``; in registry order."""
    book = ns(item) == ns(rules.facts["enchanting"]["book"]["item"])
    categories = set(rules.facts["enchantable"][ns(item)]["categories"])
    out = []
    for ench in rules.facts["enchantments"]:
        if ench["treasure"] or not ench["discoverable"] or not (book or ench["category"] in categories):
            continue
        for level in range(int(ench["max_level"]), 0, -1):
            low = ench["min_cost"][0] * level + ench["min_cost"][1]
            high = ench["max_cost"][0] * level + ench["max_cost"][1]
            if low <= power <= high:
                out.append((ns(ench["id"]), level, int(ench["weight"])))
                break
    return out


def _weighted(options: Sequence[tuple[str, int, int]], rng: random.Random) -> tuple[str, int, int]:
    """``WeightedRandom.getRandomItem``."""
    pick = rng.randrange(sum(w for _, _, w in options))
    for option in options:
        pick -= option[2]
        if pick < 0:
            return option
    raise AssertionError("unreachable: the pick is below the total weight")


def _compatible(excluded: dict[str, frozenset[str]], a: str, b: str) -> bool:
    """``Enchantment.isCompatibleWith``: different, and neither excludes the other."""
    return a != b and b not in excluded.get(a, frozenset()) and a not in excluded.get(b, frozenset())
