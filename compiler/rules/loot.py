"""Loot-table semantics of Minecraft 1.19: rolling a table, and its exact expected drops.

Covers what vanilla block/entity tables and our overrides use: entries ``item``, ``tag``,
``loot_table``, ``alternatives``, ``group``, ``sequence``, ``empty``; conditions ``match_tool``,
``inverted``, ``alternative``, ``survives_explosion``, ``random_chance(_with_looting)``,
``table_bonus``, ``killed_by_player``, ``entity_properties``, ``block_state_property``;
functions ``set_count``, ``apply_bonus``, ``explosion_decay``, ``limit_count``,
``looting_enchant``, ``furnace_smelt``. Anything else is an error, never silently skipped.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from compiler.rules.catalog import ns

if TYPE_CHECKING:
    from compiler.rules.rulebook import Rulebook

IGNORED_FUNCTIONS = {"minecraft:copy_name", "minecraft:copy_nbt", "minecraft:copy_state", "minecraft:set_nbt",
                     "minecraft:set_contents", "minecraft:explosion_decay"}


class LootError(ValueError):
    pass


@dataclass(frozen=True)
class LootContext:
    """What the game knows when a table is rolled. No explosion: blocks are mined by the player."""

    tool: str | None = None
    enchantments: tuple[tuple[str, int], ...] = ()
    killed_by_player: bool = True
    on_fire: bool = False
    block_state: tuple[tuple[str, str], ...] = ()

    def level(self, enchantment: str) -> int:
        return dict(self.enchantments).get(ns(enchantment), 0)


@dataclass
class Drop:
    """Expected outcome of one item: count range and mean."""

    item: str
    min: int = 0
    max: int = 0
    mean: float = 0.0


@dataclass
class _Num:
    """A count distribution summarized by (min, max, mean)."""

    lo: float
    hi: float
    mean: float

    def scale(self, p: float) -> "_Num":
        return _Num(0 if p < 1 else self.lo, self.hi if p > 0 else 0, self.mean * p)


# ---------------------------------------------------------------- number providers
def _number(spec: Any, rng: random.Random | None) -> float:
    if isinstance(spec, (int, float)):
        return spec
    kind = ns(spec.get("type", "minecraft:uniform"))
    if kind == "minecraft:constant":
        return spec["value"]
    if kind == "minecraft:uniform":
        lo, hi = _number(spec["min"], rng), _number(spec["max"], rng)
        # Counts and rolls use UniformGenerator.getInt: an integer uniform over [round(min), round(max)].
        return rng.randint(round(lo), round(hi)) if rng else (lo + hi) / 2
    if kind == "minecraft:binomial":
        n, p = int(_number(spec["n"], rng)), _number(spec["p"], rng)
        return sum(rng.random() < p for _ in range(n)) if rng else n * p
    raise LootError(f"unsupported number provider {kind}")


def _number_summary(spec: Any) -> _Num:
    if isinstance(spec, (int, float)):
        return _Num(spec, spec, spec)
    kind = ns(spec.get("type", "minecraft:uniform"))
    if kind == "minecraft:constant":
        return _Num(spec["value"], spec["value"], spec["value"])
    if kind == "minecraft:uniform":
        lo, hi = _number_summary(spec["min"]), _number_summary(spec["max"])
        return _Num(lo.lo, hi.hi, (lo.mean + hi.mean) / 2)
    if kind == "minecraft:binomial":
        n, p = _number_summary(spec["n"]), _number_summary(spec["p"])
        return _Num(0, n.hi, n.mean * p.mean)
    raise LootError(f"unsupported number provider {kind}")


# ---------------------------------------------------------------- conditions
@dataclass
class _Eval:
    rulebook: "Rulebook"
    ctx: LootContext
    rng: random.Random | None  # None = compute probabilities instead of sampling

    def chance(self, conditions: list[dict] | None) -> float:
        """Probability that all conditions hold (exactly 0/1 unless a random condition is involved)."""
        p = 1.0
        for cond in conditions or []:
            p *= self.condition(cond)
            if p == 0:
                return 0.0
        return p

    def passes(self, conditions: list[dict] | None) -> bool:
        p = self.chance(conditions)
        if self.rng is None:
            return p > 0
        return p >= 1 or (p > 0 and self.rng.random() < p)

    def condition(self, cond: dict) -> float:
        kind = ns(cond["condition"])
        if kind == "minecraft:inverted":
            return 1.0 - self.condition(cond["term"])
        if kind == "minecraft:alternative":
            miss = 1.0
            for term in cond["terms"]:
                miss *= 1.0 - self.condition(term)
            return 1.0 - miss
        if kind == "minecraft:survives_explosion":
            return 1.0
        if kind == "minecraft:match_tool":
            return 1.0 if self._tool_matches(cond.get("predicate", {})) else 0.0
        if kind == "minecraft:random_chance":
            return float(cond["chance"])
        if kind == "minecraft:random_chance_with_looting":
            return float(cond["chance"]) + self.ctx.level("looting") * float(cond["looting_multiplier"])
        if kind == "minecraft:table_bonus":
            chances = cond["chances"]
            return float(chances[min(self.ctx.level(cond["enchantment"]), len(chances) - 1)])
        if kind == "minecraft:killed_by_player":
            return 1.0 if self.ctx.killed_by_player else 0.0
        if kind == "minecraft:entity_properties":
            flags = cond.get("predicate", {}).get("flags", {})
            if "is_on_fire" in flags:
                return 1.0 if flags["is_on_fire"] == self.ctx.on_fire else 0.0
            return 1.0
        if kind == "minecraft:block_state_property":
            state = dict(self.ctx.block_state)
            for key, want in cond.get("properties", {}).items():
                if isinstance(want, dict):
                    return 0.0
                if state.get(key) != str(want).lower():
                    return 0.0
            return 1.0
        raise LootError(f"unsupported loot condition {kind}")

    def _tool_matches(self, pred: dict) -> bool:
        tool = self.ctx.tool
        if "items" in pred and (tool is None or tool not in {ns(i) for i in pred["items"]}):
            return False
        if "tag" in pred and (tool is None or tool not in self.rulebook.tag("item", pred["tag"])):
            return False
        for ench in pred.get("enchantments", []):
            level = self.ctx.level(ench["enchantment"]) if "enchantment" in ench else max(
                (lv for _, lv in self.ctx.enchantments), default=0)
            want = ench.get("levels", {"min": 1})
            lo = want.get("min", 1) if isinstance(want, dict) else want
            hi = want.get("max", 255) if isinstance(want, dict) else want
            if not lo <= level <= hi:
                return False
        return True


# ---------------------------------------------------------------- functions
def _apply_functions(ev: _Eval, functions: list[dict], item: str, count: float) -> tuple[str, float]:
    for fn in functions or []:
        if not ev.passes(fn.get("conditions")):
            continue
        kind = ns(fn["function"])
        if kind == "minecraft:set_count":
            value = _number(fn["count"], ev.rng)
            count = count + value if fn.get("add") else value
        elif kind == "minecraft:apply_bonus":
            count = _apply_bonus(ev, fn, count)
        elif kind == "minecraft:limit_count":
            lim = fn["limit"]
            lo = _number(lim["min"], None) if isinstance(lim, dict) and "min" in lim else None
            hi = _number(lim["max"], None) if isinstance(lim, dict) and "max" in lim else None
            if isinstance(lim, (int, float)):
                lo = hi = lim
            count = max(lo, count) if lo is not None else count
            count = min(hi, count) if hi is not None else count
        elif kind == "minecraft:looting_enchant":
            level = ev.ctx.level("looting")
            if level:
                count += _number(fn["count"], ev.rng) * level
        elif kind == "minecraft:furnace_smelt":
            if ev.ctx.on_fire:
                item = ev.rulebook.smelting_result(item) or item
        elif kind in IGNORED_FUNCTIONS:
            continue
        else:
            raise LootError(f"unsupported loot function {kind}")
    return item, count


def _apply_bonus(ev: _Eval, fn: dict, count: float) -> float:
    level = ev.ctx.level(fn["enchantment"])
    formula = ns(fn["formula"])
    params = fn.get("parameters", {})
    if level <= 0:
        return count
    if formula == "minecraft:ore_drops":
        if ev.rng:
            return count * (max(0, ev.rng.randint(0, level + 1) - 1) + 1)
        return count * (1 + level * (level + 1) / 2 / (level + 2))
    if formula == "minecraft:uniform_bonus_count":
        mult = params.get("bonusMultiplier", 1)
        return count + (ev.rng.randint(0, mult * level) if ev.rng else mult * level / 2)
    if formula == "minecraft:binomial_with_bonus_count":
        n, p = level + params.get("extra", 0), params.get("probability", 0.5)
        return count + (sum(ev.rng.random() < p for _ in range(n)) if ev.rng else n * p)
    raise LootError(f"unsupported apply_bonus formula {formula}")


# ---------------------------------------------------------------- entries
def _entry_items(ev: _Eval, entry: dict, out: Callable[[str, float], None]) -> bool:
    """Roll one chosen entry into ``out``; returns whether the entry's conditions passed."""
    if not ev.passes(entry.get("conditions")):
        return False
    kind = ns(entry["type"])
    if kind == "minecraft:item":
        item, count = _apply_functions(ev, entry.get("functions"), ns(entry["name"]), 1)
        out(item, count)
    elif kind == "minecraft:tag":
        for member in sorted(ev.rulebook.tag("item", entry["name"])):
            item, count = _apply_functions(ev, entry.get("functions"), member, 1)
            out(item, count)
    elif kind == "minecraft:loot_table":
        table = ev.rulebook.loot_table(ns(entry["name"]))
        if table is None:
            raise LootError(f"missing loot table {entry['name']}")
        _roll_table(ev, table, out)
    elif kind == "minecraft:alternatives":
        for child in entry.get("children", []):
            if _entry_items(ev, child, out):
                break
    elif kind == "minecraft:group":
        for child in entry.get("children", []):
            _entry_items(ev, child, out)
    elif kind == "minecraft:sequence":
        for child in entry.get("children", []):
            if not _entry_items(ev, child, out):
                break
    elif kind == "minecraft:empty":
        pass
    else:
        raise LootError(f"unsupported loot entry {kind}")
    return True


def _roll_table(ev: _Eval, table: dict, out: Callable[[str, float], None]) -> None:
    for pool in table.get("pools", []):
        if not ev.passes(pool.get("conditions")):
            continue
        rolls = int(round(_number(pool.get("rolls", 1), ev.rng)))
        entries = pool.get("entries", [])
        for _ in range(rolls):
            live = [e for e in entries if ev.passes(e.get("conditions"))]
            if not live:
                continue
            weights = [e.get("weight", 1) for e in live]
            chosen = ev.rng.choices(live, weights=weights)[0] if len(live) > 1 else live[0]
            pool_out: list[tuple[str, float]] = []
            _entry_items(ev, chosen, lambda i, c: pool_out.append((i, c)))
            for item, count in pool_out:
                pool_fns = pool.get("functions")
                if pool_fns:
                    item, count = _apply_functions(ev, pool_fns, item, count)
                out(item, count)


def roll(rulebook: "Rulebook", table: dict, ctx: LootContext, rng: random.Random) -> Counter[str]:
    """One random roll of ``table``: item -> count, as the game would drop it."""
    drops: Counter[str] = Counter()
    ev = _Eval(rulebook, ctx, rng)

    def add(item: str, count: float) -> None:
        n = int(count)
        if n > 0 and item != "minecraft:air":
            drops[item] += n

    _roll_table(ev, table, add)
    return drops


def expected(rulebook: "Rulebook", table: dict, ctx: LootContext) -> dict[str, Drop]:
    """Exact expected drops of ``table`` under ``ctx``: item -> Drop(min, max, mean)."""
    result: dict[str, Drop] = {}
    for pool in table.get("pools", []):
        ev = _Eval(rulebook, ctx, None)
        p_pool = ev.chance(pool.get("conditions"))
        if p_pool == 0:
            continue
        rolls = _number_summary(pool.get("rolls", 1))
        entries = [e for e in pool.get("entries", []) if ev.chance(e.get("conditions")) > 0]
        total = sum(e.get("weight", 1) for e in entries)
        for entry in entries:
            share = entry.get("weight", 1) / total if total else 0
            for item, num in _entry_summary(rulebook, ctx, entry).items():
                num = _apply_pool_functions(rulebook, ctx, pool, item, num)
                p = p_pool * share * ev.chance(entry.get("conditions"))
                drop = result.setdefault(item, Drop(item))
                guaranteed = p >= 1 and share >= 1
                drop.min += int(num.lo * rolls.lo) if guaranteed else 0
                drop.max += int(num.hi * rolls.hi)
                drop.mean += num.mean * rolls.mean * p
    return {k: v for k, v in sorted(result.items()) if v.max > 0}


def _apply_pool_functions(rulebook, ctx, pool, item, num: _Num) -> _Num:
    if not pool.get("functions"):
        return num
    ev = _Eval(rulebook, ctx, None)
    lo = _apply_functions(ev, pool["functions"], item, num.lo)[1]
    hi = _apply_functions(ev, pool["functions"], item, num.hi)[1]
    mean = _apply_functions(ev, pool["functions"], item, num.mean)[1]
    return _Num(lo, hi, mean)


def _entry_summary(rulebook: "Rulebook", ctx: LootContext, entry: dict) -> dict[str, _Num]:
    """Count summary of one entry (conditions on the entry itself are applied by the caller)."""
    ev = _Eval(rulebook, ctx, None)
    kind = ns(entry["type"])
    if kind == "minecraft:item":
        item, lo, hi, mean = _summarize_functions(ev, entry.get("functions"), ns(entry["name"]))
        return {item: _Num(lo, hi, mean)}
    if kind == "minecraft:tag":
        out = {}
        for member in sorted(rulebook.tag("item", entry["name"])):
            item, lo, hi, mean = _summarize_functions(ev, entry.get("functions"), member)
            out[item] = _Num(lo, hi, mean)
        return out
    if kind == "minecraft:loot_table":
        table = rulebook.loot_table(ns(entry["name"]))
        if table is None:
            raise LootError(f"missing loot table {entry['name']}")
        sub = expected(rulebook, table, ctx)
        return {k: _Num(d.min, d.max, d.mean) for k, d in sub.items()}
    if kind in ("minecraft:alternatives", "minecraft:group", "minecraft:sequence"):
        out: dict[str, _Num] = {}
        remaining = 1.0
        for child in entry.get("children", []):
            p = ev.chance(child.get("conditions"))
            weight = remaining * p if kind == "minecraft:alternatives" else (remaining if kind == "minecraft:sequence" else p)
            for item, num in _entry_summary(rulebook, ctx, child).items():
                cur = out.get(item, _Num(0, 0, 0))
                scaled = num.scale(weight)
                out[item] = _Num(cur.lo + scaled.lo, cur.hi + scaled.hi, cur.mean + scaled.mean)
            if kind == "minecraft:alternatives":
                remaining *= 1 - p
            elif kind == "minecraft:sequence":
                remaining *= p
            if remaining == 0:
                break
        return out
    if kind == "minecraft:empty":
        return {}
    raise LootError(f"unsupported loot entry {kind}")


def _summarize_functions(ev: _Eval, functions: list[dict] | None, item: str) -> tuple[str, float, float, float]:
    lo = hi = mean = 1.0
    for fn in functions or []:
        p = ev.chance(fn.get("conditions"))
        if p == 0:
            continue
        kind = ns(fn["function"])
        if kind == "minecraft:set_count":
            num = _number_summary(fn["count"])
            if fn.get("add"):
                lo, hi, mean = lo + num.lo, hi + num.hi, mean + num.mean
            else:
                lo, hi, mean = num.lo, num.hi, num.mean
        elif kind == "minecraft:limit_count":
            lim = fn["limit"]
            lmin = lim.get("min") if isinstance(lim, dict) else lim
            lmax = lim.get("max") if isinstance(lim, dict) else lim
            if lmin is not None:
                lo, hi, mean = max(lo, lmin), max(hi, lmin), max(mean, lmin)
            if lmax is not None:
                lo, hi, mean = min(lo, lmax), min(hi, lmax), min(mean, lmax)
        else:
            item, _ = _apply_functions(ev, [fn], item, 1)
            new_lo = _apply_functions(ev, [fn], item, lo)[1]
            new_hi = _apply_functions(ev, [fn], item, hi)[1]
            new_mean = _apply_functions(ev, [fn], item, mean)[1]
            lo, hi, mean = new_lo, new_hi, new_mean
    return item, max(lo, 0), max(hi, 0), max(mean, 0)
