"""Loot tables of Minecraft 1.19: checking a table when it is read, rolling it, and its exact
expected drops.

A pool rolls ``rolls`` times (``bonus_rolls`` scale with luck, which is 0 here). Each roll expands
the pool's entries into leaf entries as the game does (``alternatives``: the first child that
expands; ``sequence``: children until one fails; ``group``: every child; an expanded ``tag``: one
leaf per member), then picks one leaf by weight. A leaf makes its stacks (``item``: one;
``tag``: one per member; ``loot_table``: the nested table's; ``empty``: none; ``dynamic``: the
block entity's contents, which placed blocks in our worlds never hold), and each stack runs the
entry's functions, then the pool's, then the table's. Conditions, functions and number providers
are in ``loot_conditions``, ``loot_functions`` and ``loot_numbers``; NBT-only functions keep the
item as it is (see ``loot_functions``).

:func:`check_table` refuses any construct not implemented, naming it; the rulebook calls it when it
reads a table. :func:`roll` samples; :func:`expected` gives each item's guaranteed count, largest
count and exact mean under the same semantics.
"""
from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.loot_conditions import LootContext, LootPlace, LootRules, chance, holds
from mcbuild.compiler.rules.loot_conditions import check as check_condition
from mcbuild.compiler.rules.loot_functions import apply_dist, apply_sample
from mcbuild.compiler.rules.loot_functions import check as check_function
from mcbuild.compiler.rules.loot_numbers import LootError, construct, int_dist, sample_int
from mcbuild.compiler.rules.loot_numbers import check as check_number

__all__ = ["Drop", "LootContext", "LootError", "LootPlace", "check_table", "expected", "roll"]

SINGLETONS = {"minecraft:item", "minecraft:tag", "minecraft:loot_table", "minecraft:empty", "minecraft:dynamic"}
COMPOSITES = {"minecraft:alternatives", "minecraft:group", "minecraft:sequence"}
DYNAMIC_DROPS = {"minecraft:contents"}
EPS = 1e-12


@dataclass
class Drop:
    """Expected outcome of one item: guaranteed count, largest count, mean."""

    item: str
    min: int = 0
    max: int = 0
    mean: float = 0.0


# ---------------------------------------------------------------- checking
def check_table(rb: LootRules, table: Any, where: str) -> None:
    """Raise :class:`LootError` naming the first construct of ``table`` that is not implemented."""
    if not isinstance(table, dict):
        raise LootError(f"{where}: a loot table must be an object")
    nested = any(_has_nested(e) for pool in table.get("pools", []) for e in pool.get("entries", []))
    for i, fn in enumerate(table.get("functions", [])):
        check_function(fn, f"{where}: functions[{i}]", nested)
    for i, pool in enumerate(table.get("pools", [])):
        at = f"{where}: pools[{i}]"
        check_number(pool.get("rolls", 1), f"{at}.rolls")
        check_number(pool.get("bonus_rolls", 0), f"{at}.bonus_rolls")
        for k, cond in enumerate(pool.get("conditions", [])):
            check_condition(cond, f"{at}.conditions[{k}]")
        pool_nested = any(_has_nested(e) for e in pool.get("entries", []))
        for k, fn in enumerate(pool.get("functions", [])):
            check_function(fn, f"{at}.functions[{k}]", pool_nested)
        for k, entry in enumerate(pool.get("entries", [])):
            _check_entry(rb, entry, f"{at}.entries[{k}]")
    _check_acyclic(rb, table, where, ())


def _check_acyclic(rb: LootRules, table: dict, where: str, path: tuple[str, ...]) -> None:
    for name in sorted({ns(e["name"]) for pool in table.get("pools", []) for e in _walk(pool.get("entries", []))
                        if ns(e["type"]) == "minecraft:loot_table"}):
        if name in path:
            raise LootError(f"{where}: loot table {name} includes itself ({' -> '.join(path + (name,))})")
        _check_acyclic(rb, rb.get("loot_table", name), where, path + (name,))


def _walk(entries: list[dict]) -> Iterator[dict]:
    for entry in entries:
        yield entry
        yield from _walk(entry.get("children", []))


def _has_nested(entry: dict) -> bool:
    return any(ns(e.get("type", "")) == "minecraft:loot_table" for e in _walk([entry]))


def _check_entry(rb: LootRules, entry: Any, where: str) -> None:
    kind, where = construct(entry, "type", SINGLETONS | COMPOSITES, "entry", where)
    for i, cond in enumerate(entry.get("conditions", [])):
        check_condition(cond, f"{where}.conditions[{i}]")
    for i, fn in enumerate(entry.get("functions", [])):
        check_function(fn, f"{where}.functions[{i}]", kind == "minecraft:loot_table")
    for i, child in enumerate(entry.get("children", [])):
        _check_entry(rb, child, f"{where}.children[{i}]")
    name = ns(entry.get("name", ""))
    if kind == "minecraft:item" and name not in rb.catalog.items:
        raise LootError(f"{where}: unknown item {name}")
    if kind == "minecraft:tag":
        try:
            rb.tag("item", name)
        except KeyError:
            raise LootError(f"{where}: unknown item tag #{name}") from None
    if kind == "minecraft:loot_table" and rb.get("loot_table", name) is None:
        raise LootError(f"{where}: missing loot table {name}")
    if kind == "minecraft:dynamic" and name not in DYNAMIC_DROPS:
        raise LootError(f"{where}: unsupported dynamic drop {name}")


# ---------------------------------------------------------------- expansion (one roll of a pool)
Leaf = tuple[int, dict]            # weight, singleton entry
NO_TABLE: dict = {}                # a referenced table the game does not have: it drops nothing


def _weight(entry: dict) -> int:
    return max(math.floor(entry.get("weight", 1)), 0)      # + quality * luck, luck being 0


def _item_names(rb: LootRules, entry: dict) -> list[str]:
    """The items of an ``item`` entry (one) or a ``tag`` entry (its members, sorted)."""
    return [ns(entry["name"])] if ns(entry["type"]) == "minecraft:item" else sorted(rb.tag("item", entry["name"]))


def _tag_leaves(rb: LootRules, entry: dict) -> list[Leaf]:
    return [(_weight(entry), {"type": "minecraft:item", "name": m, "functions": entry.get("functions", [])})
            for m in _item_names(rb, entry)]


def _expansions(rb: LootRules, ctx: LootContext, entry: dict) -> Iterator[tuple[float, list[Leaf], bool]]:
    """Every way ``entry`` can expand: (probability, leaves, whether it expanded)."""
    p = chance(rb, ctx, entry.get("conditions"))
    if p < 1:
        yield 1 - p, [], False
    if p <= 0:
        return
    kind = ns(entry["type"])
    if kind == "minecraft:tag" and entry.get("expand"):
        leaves = _tag_leaves(rb, entry)
        yield p, leaves, bool(leaves)
    elif kind in SINGLETONS:
        yield p, [(_weight(entry), entry)], True
    else:
        for q, leaves, ok in _compose(rb, ctx, kind, entry.get("children", [])):
            yield p * q, leaves, ok


def _compose(rb: LootRules, ctx: LootContext, kind: str, children: list[dict]) -> list[tuple[float, list[Leaf], bool]]:
    if kind == "minecraft:group" and len(children) != 1:
        return [(q, leaves, True) for q, leaves in _all(rb, ctx, children)]
    # states: (probability, leaves so far, finished, result)
    states: list[tuple[float, list[Leaf], bool, bool]] = [(1.0, [], False, kind != "minecraft:alternatives")]
    for child in children:
        step: list[tuple[float, list[Leaf], bool, bool]] = []
        for q, leaves, done, result in states:
            if done:
                step.append((q, leaves, done, result))
                continue
            for r, more, ok in _expansions(rb, ctx, child):
                stop = ok if kind == "minecraft:alternatives" else not ok
                step.append((q * r, leaves + more, stop, ok))
        states = step
    return [(q, leaves, result) for q, leaves, _, result in states]


def _all(rb: LootRules, ctx: LootContext, entries: list[dict]) -> list[tuple[float, list[Leaf]]]:
    """Every outcome of expanding all ``entries`` (a pool's, or a group's children)."""
    branches: list[tuple[float, list[Leaf]]] = [(1.0, [])]
    for entry in entries:
        branches = [(q * r, leaves + more) for q, leaves in branches for r, more, _ in _expansions(rb, ctx, entry)]
    return branches


def _expand_sample(rb: LootRules, ctx: LootContext, entry: dict, rng: random.Random, out: list[Leaf]) -> bool:
    """One random expansion of ``entry`` into ``out`` (the game's ``expand``)."""
    if not holds(rb, ctx, entry.get("conditions"), rng):
        return False
    kind = ns(entry["type"])
    children = entry.get("children", [])
    if kind == "minecraft:tag" and entry.get("expand"):
        leaves = _tag_leaves(rb, entry)
        out.extend(leaves)
        return bool(leaves)
    if kind in SINGLETONS:
        out.append((_weight(entry), entry))
        return True
    if kind == "minecraft:alternatives":
        return any(_expand_sample(rb, ctx, c, rng, out) for c in children)
    if kind == "minecraft:sequence":
        return all(_expand_sample(rb, ctx, c, rng, out) for c in children)
    results = [_expand_sample(rb, ctx, c, rng, out) for c in children]
    return results[0] if len(results) == 1 else True


# ---------------------------------------------------------------- rolling
def roll(rulebook: LootRules, table: dict, ctx: LootContext, rng: random.Random) -> Counter[str]:
    """One random roll of ``table``: item -> count, as the game would drop it."""
    drops: Counter[str] = Counter()

    def add(item: str, count: int) -> None:
        if count > 0 and item != "minecraft:air":
            drops[item] += count

    _roll_table(rulebook, ctx, table, rng, [], add)
    return drops


def _roll_table(rb: LootRules, ctx: LootContext, table: dict, rng: random.Random, outer: list[dict],
                out: Callable[[str, int], None]) -> None:
    for pool in table.get("pools", []):
        if not holds(rb, ctx, pool.get("conditions"), rng):
            continue
        chain = pool.get("functions", []) + table.get("functions", []) + outer
        for _ in range(sample_int(pool.get("rolls", 1), rng)):
            leaves: list[Leaf] = []
            for entry in pool.get("entries", []):
                _expand_sample(rb, ctx, entry, rng, leaves)
            live = [(w, e) for w, e in leaves if w > 0]
            if not live:
                continue
            pick = rng.randrange(sum(w for w, _ in live)) if len(live) > 1 else 0
            for w, entry in live:
                pick -= w
                if pick < 0:
                    _make(rb, ctx, entry, rng, entry.get("functions", []) + chain, out)
                    break


def _make(rb: LootRules, ctx: LootContext, entry: dict, rng: random.Random, chain: list[dict],
          out: Callable[[str, int], None]) -> None:
    kind = ns(entry["type"])
    if kind == "minecraft:loot_table":
        _roll_table(rb, ctx, rb.loot_table(entry["name"]) or NO_TABLE, rng, chain, out)
    elif kind in ("minecraft:item", "minecraft:tag"):
        for name in _item_names(rb, entry):
            out(*apply_sample(rb, ctx, chain, name, 1, rng))


# ---------------------------------------------------------------- exact expectation
@dataclass
class _Sum:
    lo: float = 0.0
    hi: float = 0.0
    mean: float = 0.0

    def add(self, other: "_Sum") -> None:
        self.lo, self.hi, self.mean = self.lo + other.lo, self.hi + other.hi, self.mean + other.mean


def expected(rulebook: LootRules, table: dict, ctx: LootContext) -> dict[str, Drop]:
    """Exact expected drops of ``table`` under ``ctx``: item -> Drop(min, max, mean)."""
    summary = _table_summary(rulebook, ctx, table, [])
    return {item: Drop(item, int(s.lo), int(s.hi), s.mean) for item, s in sorted(summary.items()) if s.hi > 0}


def _table_summary(rb: LootRules, ctx: LootContext, table: dict, outer: list[dict]) -> dict[str, _Sum]:
    total: dict[str, _Sum] = {}
    for pool in table.get("pools", []):
        for item, s in _pool_summary(rb, ctx, pool, pool.get("functions", []) + table.get("functions", []) + outer).items():
            total.setdefault(item, _Sum()).add(s)
    return total


def _pool_summary(rb: LootRules, ctx: LootContext, pool: dict, chain: list[dict]) -> dict[str, _Sum]:
    p_pool = chance(rb, ctx, pool.get("conditions"))
    if p_pool <= 0:
        return {}
    rolls = {max(r, 0): q for r, q in int_dist(pool.get("rolls", 1)).items()}
    per_roll: dict[str, _Sum] = {}
    lows: list[dict[str, float]] = []          # guaranteed counts of each possible pick
    for q, leaves in _all(rb, ctx, pool.get("entries", [])):
        live = [(w, e) for w, e in leaves if w > 0]
        weight = sum(w for w, _ in live)
        if not live:
            lows.append({})
        for w, entry in live:
            leaf = _leaf_summary(rb, ctx, entry, entry.get("functions", []) + chain)
            lows.append({item: s.lo for item, s in leaf.items()})
            for item, s in leaf.items():
                t = per_roll.setdefault(item, _Sum())
                t.hi = max(t.hi, s.hi)
                t.mean += q * w / weight * s.mean
    out = {}
    for item, s in per_roll.items():
        lo = min(low.get(item, 0.0) for low in lows) if p_pool >= 1 else 0.0
        out[item] = _Sum(min(rolls) * lo, max(rolls) * s.hi, p_pool * sum(r * q for r, q in rolls.items()) * s.mean)
    return out


def _leaf_summary(rb: LootRules, ctx: LootContext, entry: dict, chain: list[dict]) -> dict[str, _Sum]:
    """Summary of the stacks one pick of ``entry`` makes (stacks of one item add up)."""
    kind = ns(entry["type"])
    if kind == "minecraft:loot_table":
        stacks = list(_table_summary(rb, ctx, rb.loot_table(entry["name"]) or NO_TABLE, []).items())
    elif kind in ("minecraft:item", "minecraft:tag"):
        stacks = [(name, _Sum(1, 1, 1)) for name in _item_names(rb, entry)]
    else:
        return {}
    out: dict[str, _Sum] = {}
    for name, start in stacks:
        for item, s in _stack_summary(rb, ctx, chain, name, start).items():
            out.setdefault(item, _Sum()).add(s)
    return out


def _stack_summary(rb: LootRules, ctx: LootContext, chain: list[dict], name: str, start: _Sum) -> dict[str, _Sum]:
    """What ``chain`` makes of a stack of ``name``: one count (``start`` 1) or, for a nested table's
    stack, a summary whose count the chain keeps (``check_table`` allows no other function there)."""
    out: dict[str, _Sum] = {}
    share: dict[str, float] = {}
    for q, item, dist in apply_dist(rb, ctx, chain, name, {1: 1.0}):
        counts = [max(c, 0) for c, p in dist.items() if p > 0]
        scale = sum(max(c, 0) * p for c, p in dist.items())
        lo, hi, mean = start.lo * min(counts), start.hi * max(counts), start.mean * scale
        t = out.setdefault(item, _Sum(lo=lo))
        t.lo, t.hi, t.mean = min(t.lo, lo), max(t.hi, hi), t.mean + q * mean
        share[item] = share.get(item, 0.0) + q
    for item, q in share.items():
        if q < 1 - EPS:
            out[item].lo = 0.0
    return out
