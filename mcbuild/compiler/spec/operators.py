"""The operator allowlist (catalogs/operators.yaml) and target/output resolution against the catalog."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import yaml

from mcbuild.compiler.core.paths import CATALOGS
from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.rulebook import Rulebook


@lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    return yaml.safe_load((CATALOGS / "operators.yaml").read_text())


def skill(operator: str) -> str:
    """The semantic skill that exercises (and observes) an operator's changes."""
    return load()["operators"][operator]["skill"]


def group_members(name: str, rulebook: Rulebook) -> tuple[str, ...]:
    spec = load()["groups"].get(name)
    if spec is None:
        raise KeyError(name)
    if "recipe_group" in spec:
        return tuple(sorted(rid for rid, r in rulebook.recipes.items() if r.get("group") == spec["recipe_group"]))
    if "block_tag" in spec:
        return tuple(sorted(rulebook.tag("block", spec["block_tag"])))
    raise KeyError(name)


def relative_output(name: str, target: str, rulebook: Rulebook) -> str:
    """Resolve 'matching:<name>' for one target block/item (e.g. the planks a log crafts into)."""
    spec = load()["relative_outputs"][name]
    group = spec["via_recipe_group"]
    for _rid, recipe in sorted(rulebook.recipes.items()):
        if recipe.get("group") != group:
            continue
        ings = recipe.get("ingredients") or list(recipe.get("key", {}).values())
        if any(ns(target) in rulebook.ingredient(i) for i in ings):
            return ns(recipe["result"]["item"])
    raise KeyError(f"no {name} for {target}")
