"""The choices the body makes on its own, identical on every backend.

Given the world's rules and what the body owns, :class:`Policy` decides which tool to hold for a
block, which weapon to attack with, which fuel to burn and how much an inventory still holds.
Tool tiers and kinds come from the catalog's game facts; which blocks a tool harvests, stack sizes
and fuel values come from the world's rules. The simulator and the server backend both ask it, so
a skill chooses the same tool, weapon and fuel whatever executes it.
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Mapping

from mcbuild.runtime.contract.skills import burnable

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook


class Policy:
    """Tool, weapon and fuel choice and inventory room under one world's rules."""

    def __init__(self, rules: "Rulebook", inventory_slots: int):
        self.rules = rules
        self.inventory_slots = inventory_slots
        self.tool_table: dict[str, tuple[str, int]] = {}        # every tool: (kind, tier level)
        self._harvest: dict[str, frozenset[str] | None] = {}    # block -> harvesting tools (None: any)
        self._mineable: dict[tuple[str, str], bool] = {}        # (block, tool kind) -> in its mineable tag
        self._stack_sizes: dict[str, int] = {}
        for tier in rules.facts["tool_tiers"].values():
            for kind, item in tier["tools"].items():
                self.tool_table[item] = (kind, int(tier["level"]))

    @classmethod
    def of(cls, rules: "Rulebook", inventory_slots: int) -> "Policy":
        """The policy of ``rules`` for an inventory of ``inventory_slots``, shared by every body
        under those rules (its tables only ever fill with facts of the rulebook)."""
        return rules.memo("policy", 4).get_or_make(inventory_slots, lambda: cls(rules, inventory_slots))

    # ------------------------------------------------------------------ tools
    def tools(self, inventory: Mapping[str, int]) -> dict[str, tuple[str, int]]:
        """Owned tools: item -> (kind, tier level)."""
        table = self.tool_table
        return {item: table[item] for item, n in inventory.items() if n > 0 and item in table}

    def harvest_tool(self, block: str, inventory: Mapping[str, int], held: str | None) -> tuple[bool, str | None]:
        """(can harvest, tool to hold) for mining ``block`` with what is owned."""
        if block not in self._harvest:
            self._harvest[block] = self.rules.harvest_tools(block)
        allowed = self._harvest[block]
        tools = self.tools(inventory)
        if allowed is not None:
            usable = [t for t in tools if t in allowed]
            if not usable:
                return False, None
            return True, max(usable, key=lambda t: (tools[t][1], t))
        fitting = [t for t, (kind, _) in tools.items() if self._mineable_with(block, kind)]
        return True, max(fitting, key=lambda t: (tools[t][1], t)) if fitting else held

    def _mineable_with(self, block: str, kind: str) -> bool:
        key = (block, kind)
        if key not in self._mineable:
            try:
                self._mineable[key] = block in self.rules.tag("block", f"minecraft:mineable/{kind}")
            except KeyError:
                self._mineable[key] = False
        return self._mineable[key]

    def weapon(self, inventory: Mapping[str, int], held: str | None) -> str | None:
        """Best owned melee weapon: the highest-tier sword, else axe, else the current hand."""
        tools = self.tools(inventory)
        for kind in ("sword", "axe"):
            options = [t for t, (k, _) in tools.items() if k == kind]
            if options:
                return max(options, key=lambda t: (tools[t][1], t))
        return held

    # ------------------------------------------------------------------ fuel
    def fuel(self, item: str, count: int, inventory: Mapping[str, int]) -> Counter[str] | None:
        """Owned fuel units for cooking ``count`` of ``item``: richest fuel first; never the input,
        tools or facilities. None when what is owned does not suffice."""
        rules = self.rules
        need = int(rules.facts["cooking_ticks"]["furnace"]) * count
        options = sorted(((rules.is_fuel(i), i) for i, n in inventory.items() if n > 0 and burnable(rules, i, item)),
                         key=lambda o: (-o[0], o[1]))
        chosen: Counter[str] = Counter()
        for ticks, fuel in options:
            while ticks > 0 and need > 0 and chosen[fuel] < inventory.get(fuel, 0):
                chosen[fuel] += 1
                need -= ticks
        return chosen if need <= 0 else None

    # ------------------------------------------------------------------ inventory room
    def stack_size(self, item: str) -> int:
        """The rules' stack size of ``item`` (looked up once per item)."""
        size = self._stack_sizes.get(item)
        if size is None:
            size = self._stack_sizes[item] = self.rules.stack_size(item)
        return size

    def slots_used(self, inventory: Mapping[str, int]) -> int:
        return sum(-(-n // self.stack_size(i)) for i, n in inventory.items() if n > 0)

    def room_for(self, item: str, inventory: Mapping[str, int]) -> int:
        """How many more of ``item`` fit: the partial stack plus every free slot."""
        size = self.stack_size(item)
        have = inventory.get(item, 0)
        partial = (-have) % size if have else 0
        return partial + max(0, self.inventory_slots - self.slots_used(inventory)) * size
