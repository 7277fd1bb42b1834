"""Dispatch table of the 13 skills (runtime.contract.skills) to their simulator implementations."""
from __future__ import annotations

from . import item_skills as items
from . import world_skills as world

HANDLERS = {
    "mine": world.mine,
    "explore": world.explore,
    "prepare_access": world.prepare_access,
    "craft_grid": items.craft_grid,
    "smelt": items.smelt,
    "attack": world.attack,
    "enchant": items.enchant,
    "place": world.place,
    "equip": items.equip,
    "collect": world.collect,
    "ascend": world.ascend,
    "trade": world.trade,
    "wait": world.wait,
}
