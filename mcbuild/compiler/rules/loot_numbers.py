"""Number providers of 1.19 loot tables (``constant``, ``uniform``, ``binomial``): sampling, and the
exact distribution of their value (count -> probability) for :func:`mcbuild.compiler.rules.loot.expected`.

A bare JSON number is a constant; an object without ``type`` is ``uniform`` (as in the game).
Integer reads follow the game: a constant's integer is ``Math.round`` (floor of value + 0.5),
``uniform`` is ``Mth.nextInt(min, max)`` (``min`` when ``min >= max``), ``binomial`` counts
successes of ``n`` trials. A non-constant ``p`` of ``binomial`` and ``score`` providers are
refused at load.
"""
from __future__ import annotations

import math
import random
from typing import Any, Container

from mcbuild.compiler.rules.catalog import ns

Dist = dict[int, float]          # value -> probability


class LootError(ValueError):
    """A loot table construct the engine does not implement (raised when the table is read)."""


def construct(node: Any, key: str, known: Container[str], what: str, where: str) -> tuple[str, str]:
    """The namespaced type ``node[key]`` of a table construct, refused unless in ``known``; and
    ``where`` extended with it."""
    if not isinstance(node, dict) or key not in node:
        raise LootError(f"{where}: a {what} must be an object with a '{key}' field")
    kind = ns(node[key])
    if kind not in known:
        raise LootError(f"{where}: unsupported loot {what} {kind}")
    return kind, f"{where} ({kind})"


def kind_of(spec: Any) -> str:
    if isinstance(spec, (int, float)):
        return "minecraft:constant"
    return ns(spec.get("type", "minecraft:uniform"))


def check(spec: Any, where: str) -> None:
    """Raise :class:`LootError` unless ``spec`` is a number provider this module implements."""
    kind = kind_of(spec)
    if kind == "minecraft:constant":
        if not isinstance(spec, (int, float)) and not isinstance(spec.get("value"), (int, float)):
            raise LootError(f"{where}: constant number provider without a numeric value")
    elif kind == "minecraft:uniform":
        check(spec["min"], f"{where}.min")
        check(spec["max"], f"{where}.max")
    elif kind == "minecraft:binomial":
        check(spec["n"], f"{where}.n")
        if kind_of(spec["p"]) != "minecraft:constant":
            raise LootError(f"{where}: binomial with a non-constant p is not supported")
    else:
        raise LootError(f"{where}: unsupported number provider {kind}")


def _java_round(x: float) -> int:
    return math.floor(x + 0.5)


def constant(spec: Any) -> float:
    return float(spec if isinstance(spec, (int, float)) else spec["value"])


def sample_float(spec: Any, rng: random.Random) -> float:
    kind = kind_of(spec)
    if kind == "minecraft:constant":
        return constant(spec)
    if kind == "minecraft:uniform":
        lo, hi = sample_float(spec["min"], rng), sample_float(spec["max"], rng)
        return lo + rng.random() * (hi - lo)
    return float(sample_int(spec, rng))


def sample_int(spec: Any, rng: random.Random) -> int:
    kind = kind_of(spec)
    if kind == "minecraft:constant":
        return _java_round(constant(spec))
    if kind == "minecraft:uniform":
        lo, hi = sample_int(spec["min"], rng), sample_int(spec["max"], rng)
        return lo if lo >= hi else rng.randint(lo, hi)
    n, p = sample_int(spec["n"], rng), constant(spec["p"])
    return sum(rng.random() < p for _ in range(n))


def int_dist(spec: Any) -> Dist:
    """Exact distribution of the integer read of ``spec``."""
    kind = kind_of(spec)
    if kind == "minecraft:constant":
        return {_java_round(constant(spec)): 1.0}
    out: Dist = {}
    if kind == "minecraft:uniform":
        for lo, p_lo in int_dist(spec["min"]).items():
            for hi, p_hi in int_dist(spec["max"]).items():
                values = [lo] if lo >= hi else range(lo, hi + 1)
                for v in values:
                    out[v] = out.get(v, 0.0) + p_lo * p_hi / len(values)
        return out
    p = constant(spec["p"])
    for n, p_n in int_dist(spec["n"]).items():
        for k in range(max(n, 0) + 1):
            out[k] = out.get(k, 0.0) + p_n * math.comb(n, k) * p ** k * (1 - p) ** (n - k)
    return out


def scaled_round_dist(spec: Any, factor: int) -> Dist:
    """Exact distribution of ``Math.round(factor * value)`` for a float read of ``spec`` (a constant,
    a uniform between constants, or a binomial)."""
    kind = kind_of(spec)
    if kind == "minecraft:constant":
        return {_java_round(factor * constant(spec)): 1.0}
    if kind == "minecraft:binomial":
        return {_java_round(factor * k): p for k, p in int_dist(spec).items()}
    if kind_of(spec["min"]) != "minecraft:constant" or kind_of(spec["max"]) != "minecraft:constant":
        raise LootError("uniform float with non-constant bounds is not supported")
    lo, hi = factor * constant(spec["min"]), factor * constant(spec["max"])
    if hi <= lo:
        return {_java_round(lo): 1.0}
    out: Dist = {}
    for k in range(_java_round(lo), _java_round(hi) + 1):
        share = (min(hi, k + 0.5) - max(lo, k - 0.5)) / (hi - lo)
        if share > 0:
            out[k] = share
    return out


def check_float(spec: Any, where: str) -> None:
    """Like :func:`check`, for providers read as floats whose exact distribution is needed."""
    check(spec, where)
    if kind_of(spec) == "minecraft:uniform" and not all(kind_of(spec[k]) == "minecraft:constant" for k in ("min", "max")):
        raise LootError(f"{where}: uniform float with non-constant bounds is not supported")
