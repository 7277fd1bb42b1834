"""Deterministic seed-based sampler of complete Mirror specs (the paper's static-only runs).

Every sample stays inside ``catalogs/operators.yaml``: allowed operators, targets, stations and
outputs, 2–6 changes, never two changes on the same transition. ``sample(seed, tasks, attempt)``
is a pure function of its arguments (``random.Random`` seeded with a string), so a seed always
yields the same spec and the static-only loop can move on to ``attempt + 1`` when a sample does
not compile.
"""
from __future__ import annotations

import random
from typing import Any

from mcbuild.compiler.rules.rulebook import vanilla
from mcbuild.compiler.spec import operators

MIN_CHANGES, MAX_CHANGES = 2, 6
# Counts that keep a change interpretable (no extreme scarcity or flood).
COUNTS = (1, 2, 3, 4)


def _vanilla_count(target: str) -> int:
    rb = vanilla()
    from mcbuild.compiler.rules.catalog import ns

    recipe = rb.recipes.get(ns(target))
    if recipe and isinstance(recipe.get("result"), dict):
        return int(recipe["result"].get("count", 1))
    return 1


def _stations(target: str) -> list[str]:
    """Stations with a vanilla cooking recipe for ``target`` (furnace when none has one)."""
    rb = vanilla()
    found = [st for st in operators.load()["stations"] if rb.cooking_recipe(target, st) is not None]
    return found or ["furnace"]


def _change(rng: random.Random, op: str, target: str, outputs_allowed: list[str], max_outputs: int) -> dict[str, Any]:
    plain = [o for o in outputs_allowed if not o.startswith("matching:")]
    if op == "craft_output":
        if rng.random() < 0.4:  # same item, different count
            vc = _vanilla_count(target)
            count = rng.choice([c for c in COUNTS + (6, 8) if c != vc])
            return {"operator": op, "target": target, "outputs": [{"count": count}]}
        return {"operator": op, "target": target, "outputs": [{"item": rng.choice(plain), "count": rng.choice(COUNTS)}]}
    if op == "cook_output":
        stations = _stations(target)
        return {"operator": op, "target": target, "stations": stations,
                "outputs": [{"item": rng.choice(plain), "count": rng.choice(COUNTS)}]}
    n = rng.randint(1, min(2, max_outputs))
    pool = outputs_allowed if target == "group:logs" else plain
    items = rng.sample(pool, n)
    return {"operator": op, "target": target, "outputs": [{"item": i, "count": rng.choice(COUNTS)} for i in items]}


def sample(seed: int, tasks: list[str], attempt: int = 0) -> dict[str, Any]:
    """One complete ``kind: mirror`` spec for ``seed`` (and retry number ``attempt``)."""
    cat = operators.load()
    rng = random.Random(f"mcbuild-sampler:{seed}:{attempt}")
    kinds = {name: op["target_kind"] for name, op in cat["operators"].items()}
    n = rng.randint(MIN_CHANGES, MAX_CHANGES)
    claimed: set[str] = set()
    changes: list[dict[str, Any]] = []
    tries = 0
    while len(changes) < n and tries < 200:
        tries += 1
        op = rng.choice(sorted(kinds))
        targets = [t for t in cat["targets"][kinds[op]]]
        target = rng.choice(targets)
        # A block/cook target is one transition family whichever operator edits it.
        family = f"{cat['operators'][op]['skill']}:{target}"
        if family in claimed:
            continue
        claimed.add(family)
        ch = _change(rng, op, target, list(cat["outputs"]), int(cat["operators"][op]["outputs"]))
        changes.append({"id": f"c{len(changes) + 1}-{op.replace('_', '-')}", **ch})
    return {
        "schema_version": "1.0",
        "kind": "mirror",
        "id": f"sampled-{seed}",
        "title": f"Sampled suite {seed}",
        "selected_tasks": list(tasks),
        "changes": changes,
    }


def repair(spec: dict[str, Any], hard_failures: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Drop the changes the static report blames (``changes[i]`` fields); None if that cannot help.

    Only change-local failures are repaired; a failure about the whole pack or a task means the
    sample is discarded.
    """
    import re

    blamed: set[int] = set()
    for f in hard_failures:
        m = re.match(r"changes\[(\d+)\]", str(f.get("field", "")))
        if m is None:
            return None
        blamed.add(int(m.group(1)))
    kept = [c for i, c in enumerate(spec["changes"]) if i not in blamed]
    if not blamed or len(kept) < MIN_CHANGES:
        return None
    return {**spec, "changes": kept}
