"""What cooking really yields: one cooked item as it lands in the inventory.

A pack may change a cooking result beyond what a 1.19 recipe can express (a bare item id), by
cooking into a marker item that an ``inventory_changed`` advancement swaps for the real output
(docs/smelting-mechanism.md). :func:`cooked_outputs` runs the very same pack functions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.player import PlayerState

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook


def marker_items(rb: "Rulebook") -> tuple[str, ...]:
    """The items a pack may cook into as markers, in the order the compiler takes them: the
    catalog's survival-unobtainable items (a player never owns one otherwise)."""
    return tuple(ns(i) for i in rb.facts["survival_unobtainable_items"])


def cooked_outputs(rb: "Rulebook", result: str) -> dict[str, float]:
    """What one cooked item becomes in the inventory, running the packs' acquisition functions."""
    if not any(a.get("rewards", {}).get("function") for a in rb.advancements.values()):
        return {ns(result): 1.0}
    player = PlayerState(rb)
    player.run_load()
    player.add_items({result: 1})
    return {i: float(n) for i, n in player.inventory.items()}
