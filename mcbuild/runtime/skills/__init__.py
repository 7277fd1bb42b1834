"""The 13 skills, each written once over the primitives every backend supplies
(:class:`primitives.Primitives`): a skill's argument use, the order of its preconditions, its
reason codes and its outcome. One module per skill (``mine`` also holds ``prepare_access``,
``attack`` also ``trade``); ``common`` holds what several share.

A backend runs ``HANDLERS[action.skill](its primitives, action.args)``.
"""
from __future__ import annotations

from typing import Callable

from mcbuild.runtime.contract.backend import Outcome

from .ascend import ascend
from .attack import attack, trade
from .collect import collect
from .craft import craft_grid
from .enchant import enchant
from .equip import equip
from .explore import explore
from .mine import mine, prepare_access
from .place import place
from .primitives import Primitives
from .smelt import smelt
from .wait import wait

HANDLERS: dict[str, Callable[[Primitives, dict], Outcome]] = {
    "mine": mine, "explore": explore, "prepare_access": prepare_access, "craft_grid": craft_grid, "smelt": smelt,
    "attack": attack, "enchant": enchant, "place": place, "equip": equip, "collect": collect, "ascend": ascend,
    "trade": trade, "wait": wait,
}
