"""Loot item functions of Minecraft 1.19.

Each function maps (item, count) to a new item and the exact distribution of the new count, so one
definition serves both sampling (draw from the distribution) and exact expectation. Counts follow
``ItemStack``: a stack whose count fell to 0 or below reads as 0 for the next function, and is
dropped at the end.

The simulator's items carry no NBT, so functions that only write NBT (names, lore, copied block
entity data, shulker contents, potion and stew effects, goat-horn instruments, durability) leave
the item as it is. Enchanting a ``book`` turns it into one ``enchanted_book`` (as the game does);
enchanting anything else leaves the item id unchanged. ``exploration_map`` keeps the plain
``map``: the game returns it unchanged when no structure is found, and our worlds have none.
``explosion_decay`` does nothing: blocks are broken by the player, never by an explosion.
"""
from __future__ import annotations

import random
from typing import Any, Callable

from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.loot_conditions import LootContext, LootRules, chance, holds
from mcbuild.compiler.rules.loot_conditions import check as check_condition
from mcbuild.compiler.rules.loot_numbers import Dist, LootError, check_float, constant, construct, int_dist, kind_of, \
    scaled_round_dist
from mcbuild.compiler.rules.loot_numbers import check as check_number

NBT_ONLY = {"minecraft:copy_name", "minecraft:copy_nbt", "minecraft:copy_state", "minecraft:set_nbt",
            "minecraft:set_contents", "minecraft:set_name", "minecraft:set_potion", "minecraft:set_stew_effect",
            "minecraft:set_instrument", "minecraft:set_damage", "minecraft:exploration_map",
            "minecraft:explosion_decay"}
# The functions allowed on stacks of a nested table (a loot_table entry, its pool and table):
# they must not change counts, because a nested table is summarized, not enumerated, by expected().
COUNT_PRESERVING = NBT_ONLY | {"minecraft:furnace_smelt"}
BONUS_FORMULAS = {"minecraft:ore_drops", "minecraft:uniform_bonus_count", "minecraft:binomial_with_bonus_count"}

Transform = Callable[[LootRules, LootContext, dict, str, int], tuple[str, Dist]]


def check(fn: Any, where: str, nested: bool = False) -> None:
    """Raise :class:`LootError` unless ``fn`` is a function (with conditions and numbers) implemented
    here; ``nested``: it applies to a nested table's stacks."""
    kind, where = construct(fn, "function", FUNCTIONS, "function", where)
    if nested and kind not in COUNT_PRESERVING:
        raise LootError(f"{where}: {kind} on the stacks of a nested loot table is not supported")
    for i, cond in enumerate(fn.get("conditions", [])):
        check_condition(cond, f"{where}.conditions[{i}]")
    if kind == "minecraft:set_count":
        check_number(fn["count"], f"{where}.count")
    elif kind == "minecraft:looting_enchant":
        check_float(fn["count"], f"{where}.count")
    elif kind == "minecraft:limit_count":
        limit = fn["limit"]
        bounds = [limit] if not isinstance(limit, dict) else [limit[k] for k in ("min", "max") if k in limit]
        if any(kind_of(b) != "minecraft:constant" for b in bounds):
            raise LootError(f"{where}: limit_count with non-constant bounds is not supported")
    elif kind == "minecraft:apply_bonus" and ns(fn["formula"]) not in BONUS_FORMULAS:
        raise LootError(f"{where}: unsupported apply_bonus formula {fn['formula']}")
    elif kind == "minecraft:set_damage":
        check_number(fn["damage"], f"{where}.damage")
    elif kind == "minecraft:enchant_with_levels":
        check_number(fn["levels"], f"{where}.levels")


# ---------------------------------------------------------------- transforms
def _shift(dist: Dist, by: int) -> Dist:
    return {v + by: p for v, p in dist.items()}


def _set_count(rb: LootRules, ctx: LootContext, fn: dict, item: str, count: int) -> tuple[str, Dist]:
    dist = int_dist(fn["count"])
    return item, _shift(dist, count) if fn.get("add") else dist


def _killer_looting(ctx: LootContext) -> int:
    return ctx.level("looting") if ctx.killed_by_player else 0


def _looting(rb: LootRules, ctx: LootContext, fn: dict, item: str, count: int) -> tuple[str, Dist]:
    level = _killer_looting(ctx)
    if level == 0:
        return item, {count: 1.0}
    limit = int(fn.get("limit", 0))
    out: Dist = {}
    for grow, p in scaled_round_dist(fn["count"], level).items():
        new = count + grow
        new = limit if 0 < limit < new else new
        out[new] = out.get(new, 0.0) + p
    return item, out


def _apply_bonus(rb: LootRules, ctx: LootContext, fn: dict, item: str, count: int) -> tuple[str, Dist]:
    if ctx.entity is not None:
        return item, {count: 1.0}           # entity tables carry no tool: the count is left alone
    level = ctx.level(fn["enchantment"])
    formula, params = ns(fn["formula"]), fn.get("parameters", {})
    if formula == "minecraft:ore_drops":
        if level <= 0:
            return item, {count: 1.0}
        out: Dist = {}
        for i in range(-1, level + 1):      # nextInt(level + 2) - 1, floored at 0
            out[count * (max(i, 0) + 1)] = out.get(count * (max(i, 0) + 1), 0.0) + 1 / (level + 2)
        return item, out
    if formula == "minecraft:uniform_bonus_count":
        top = int(params.get("bonusMultiplier", 1)) * level
        return item, {count + k: 1 / (top + 1) for k in range(top + 1)}
    trials = {"type": "minecraft:binomial", "n": level + int(params.get("extra", 0)), "p": params.get("probability", 0.5)}
    return item, _shift(int_dist(trials), count)


def _limit(rb: LootRules, ctx: LootContext, fn: dict, item: str, count: int) -> tuple[str, Dist]:
    limit = fn["limit"]
    lo, hi = (limit.get("min"), limit.get("max")) if isinstance(limit, dict) else (limit, limit)
    if lo is not None:
        count = max(int(constant(lo)), count)
    if hi is not None:
        count = min(int(constant(hi)), count)
    return item, {count: 1.0}


def _smelt(rb: LootRules, ctx: LootContext, fn: dict, item: str, count: int) -> tuple[str, Dist]:
    return rb.smelting_result(item) or item, {count: 1.0}


def _enchant(rb: LootRules, ctx: LootContext, fn: dict, item: str, count: int) -> tuple[str, Dist]:
    if item == "minecraft:book":
        return "minecraft:enchanted_book", {1: 1.0}
    return item, {count: 1.0}


def _unchanged(rb: LootRules, ctx: LootContext, fn: dict, item: str, count: int) -> tuple[str, Dist]:
    return item, {count: 1.0}


FUNCTIONS: dict[str, Transform] = {
    "minecraft:set_count": _set_count,
    "minecraft:looting_enchant": _looting,
    "minecraft:apply_bonus": _apply_bonus,
    "minecraft:limit_count": _limit,
    "minecraft:furnace_smelt": _smelt,
    "minecraft:enchant_randomly": _enchant,
    "minecraft:enchant_with_levels": _enchant,
    **{kind: _unchanged for kind in sorted(NBT_ONLY)},
}


# ---------------------------------------------------------------- applying a chain
Outcome = tuple[float, str, Dist]          # probability, item, count distribution


def apply_dist(rb: LootRules, ctx: LootContext, chain: list[dict], item: str, dist: Dist) -> list[Outcome]:
    """Exact outcomes of running ``chain`` on a stack (a random condition splits an outcome in two)."""
    outcomes: list[Outcome] = [(1.0, item, dist)]
    for fn in chain:
        p = chance(rb, ctx, fn.get("conditions"))
        step: list[Outcome] = []
        for q, it, d in outcomes:
            if p < 1:
                step.append((q * (1 - p), it, d))
            if p > 0:
                new_item = it
                new: Dist = {}
                for count, pc in d.items():
                    new_item, moved = FUNCTIONS[ns(fn["function"])](rb, ctx, fn, it, max(count, 0))
                    for v, pv in moved.items():
                        new[v] = new.get(v, 0.0) + pc * pv
                step.append((q * p, new_item, new))
        outcomes = step
    return outcomes


def apply_sample(rb: LootRules, ctx: LootContext, chain: list[dict], item: str, count: int,
                 rng: random.Random) -> tuple[str, int]:
    """One random run of ``chain`` on a stack."""
    for fn in chain:
        if not holds(rb, ctx, fn.get("conditions"), rng):
            continue
        item, dist = FUNCTIONS[ns(fn["function"])](rb, ctx, fn, item, max(count, 0))
        count = draw(dist, rng)
    return item, count


def draw(dist: Dist, rng: random.Random) -> int:
    if len(dist) == 1:
        return next(iter(dist))
    values = sorted(dist)
    return rng.choices(values, weights=[dist[v] for v in values])[0]
