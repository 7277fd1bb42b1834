"""The choices the body makes on its own, identical on every backend.

Given the world's rules and what the body owns, :class:`Policy` decides which tool to hold for a
block, which weapon to attack with, which fuel to burn and how much an inventory still holds.
Tool tiers and kinds, wear and melee damage come from the catalog's game facts; which blocks a tool
harvests, stack sizes and fuel values come from the world's rules. The simulator and the server
backend both ask it, so a skill chooses the same tool, weapon and fuel whatever executes it.

Tools wear out (``max_durability``, ``wear``): of several copies of one tool the body works with
the most worn (:func:`in_hand`), and among the tools that would do a job it prefers one whose copy
in hand survives the whole job, then the highest tier.
"""
from __future__ import annotations

import math
import operator
from collections import Counter
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from mcbuild.runtime.body.blocks import physics
from mcbuild.runtime.body.copies import Copy
from mcbuild.runtime.contract.skills import burnable

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook


Copies = Callable[[str], Sequence[Copy]]        # the owned copies of an item (``Primitives.copies``)


def in_hand(copies: Sequence[Copy]) -> int:
    """The copy of a tool the body works with: the most worn (the first of equally worn ones)."""
    if len(copies) == 1:
        return 0
    return max(range(len(copies)), key=lambda i: (copies[i].damage, -i))


class Policy:
    """Tool, weapon and fuel choice and inventory room under one world's rules."""

    def __init__(self, rules: "Rulebook", inventory_slots: int):
        self.rules = rules
        self.inventory_slots = inventory_slots
        self.tool_table: dict[str, tuple[str, int]] = {}        # every tool: (kind, tier level)
        self._harvest: dict[str, frozenset[str] | None] = {}    # block -> harvesting tools (None: any)
        self._mineable: dict[tuple[str, str], bool] = {}        # (block, tool kind) -> in its mineable tag
        self._stack_sizes: dict[str, int] = {}
        self._durable: dict[str, int] = {}                      # item -> max durability (0: never wears)
        self._wearing: set[str] = set()                         # the items of ``_durable`` that wear out
        self._wear: dict[tuple[str, str], int] = {}             # (item, use) -> what the use takes
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
        """Owned tools: item -> (kind, tier level), in item order."""
        table = self.tool_table
        return {item: table[item] for item in sorted(table.keys() & inventory.keys()) if inventory[item] > 0}

    def harvest_tool(self, block: str, inventory: Mapping[str, int], held: str | None,
                     copies: Copies | None = None, count: int = 1) -> tuple[bool, str | None]:
        """(can harvest, tool to hold) for mining ``count`` of ``block`` with what is owned: a tool
        that harvests it (if it needs one), else the best of its ``mineable`` kind, else the hand as
        it is; the one whose copy in hand survives the ``count`` blocks first (``copies``: without
        them, wear is not weighed)."""
        if block not in self._harvest:
            self._harvest[block] = self.rules.harvest_tools(block)
        allowed = self._harvest[block]
        tools = self.tools(inventory)
        if allowed is not None:
            options = [t for t in tools if t in allowed]
            if not options:
                return False, None
        else:
            options = [t for t, (kind, _) in tools.items() if self._mineable_with(block, kind)]
            if not options:
                return True, held
        best = options[0] if len(options) == 1 else max(options, key=lambda t: (tools[t][1], t))
        wears = physics().wears(block)

        def job(tool: str) -> int:
            return count * self.wear(tool, "mine") if wears else 0

        if len(options) == 1 or self.survives(best, copies, job(best)):    # the highest tier survives: no other to weigh
            return True, best
        return True, max(options, key=lambda t: (self.survives(t, copies, job(t)), tools[t][1], t))

    def _mineable_with(self, block: str, kind: str) -> bool:
        key = (block, kind)
        if key not in self._mineable:
            try:
                self._mineable[key] = block in self.rules.tag("block", f"minecraft:mineable/{kind}")
            except KeyError:
                self._mineable[key] = False
        return self._mineable[key]

    def weapon(self, inventory: Mapping[str, int], held: str | None, copies: Copies | None = None,
               target: str | None = None, count: int = 1) -> str | None:
        """Best owned melee weapon for killing ``count`` ``target``: a sword or axe whose copy in
        hand survives the hits first (counted without Strength, which the policy does not see: at
        most as many as the kill takes), then a sword before an axe, then the highest tier;
        without either, the hand as it is."""
        tools = self.tools(inventory)
        options = [t for t, (kind, _) in tools.items() if kind in ("sword", "axe")]
        if not options:
            return held

        def job(weapon: str) -> int:
            return count * self.hits(target, weapon) * self.wear(weapon, "hit") if target else 0

        return max(options, key=lambda t: (self.survives(t, copies, job(t)), tools[t][0] == "sword", tools[t][1], t))

    # ------------------------------------------------------------------ wear and melee
    def wear(self, item: str | None, use: str) -> int:
        """What one ``use`` (``mine``: breaking a block that does not break at once; ``hit``) takes
        from the durability of ``item`` (0: it does not wear by that use)."""
        key = (item or "", use)
        found = self._wear.get(key)
        if found is None:
            kind = self.tool_table.get(key[0])
            found = self._wear[key] = (0 if kind is None or not self.max_durability(key[0])
                                       else int(self.rules.facts["wear"][use].get(kind[0], 0)))
        return found

    def remaining(self, item: str, copies: Sequence[Copy]) -> int:
        """Uses left in the copy of ``item`` the body works with (:func:`in_hand`)."""
        worn = copies[in_hand(copies)].damage if copies else 0
        return self.max_durability(item) - worn

    def survives(self, item: str, copies: Copies | None, uses: int) -> bool:
        """Whether the copy of ``item`` in hand takes ``uses`` more without breaking (always, when
        the item does not wear out or ``copies`` is not given)."""
        if copies is None or not uses or not self.max_durability(item):
            return True
        return uses < self.remaining(item, copies(item))

    def durability(self, inventory: Mapping[str, int], copies: Copies) -> dict[str, tuple[int, ...]]:
        """For each owned item that wears out, the uses left in each copy, fewest first (in item order)."""
        return {item: self.uses_left(item, copies(item)) for item in self.wearing(inventory)}

    def wearing(self, inventory: Mapping[str, int]) -> list[str]:
        """The owned items that wear out, in item order."""
        _read_all(self._durable, inventory, self.max_durability)
        return sorted(self._wearing.intersection(_positive(inventory)))

    def uses_left(self, item: str, copies: Sequence[Copy]) -> tuple[int, ...]:
        """The uses left in each of these copies of ``item``, fewest first."""
        most = self._durable[item]
        return tuple(sorted([most - c.damage for c in copies]))

    def max_durability(self, item: str) -> int:
        """The rules' max durability of ``item`` (looked up once per item; 0: it never wears out)."""
        most = self._durable.get(item)
        if most is None:
            most = self._durable[item] = self.rules.max_durability(item)
            if most:
                self._wearing.add(item)
        return most

    def damage(self, weapon: str | None, strength: int = 0) -> float:
        """What a fully charged hit with ``weapon`` in hand deals, under Strength of ``strength``
        levels (0: none)."""
        melee = self.rules.facts["melee"]
        return float(melee["attack_damage"].get(weapon or "", melee["hand"])) + int(melee["strength_per_level"]) * strength

    def hits(self, target: str, weapon: str | None, strength: int = 0) -> int:
        """The hits that kill ``target`` with ``weapon`` in hand."""
        health = self.rules.facts["melee"]["max_health"].get(target)
        if health is None:
            raise KeyError(f"{target}: no max_health in catalogs/game_facts.yaml melee")
        return math.ceil(float(health) / self.damage(weapon, strength))

    # ------------------------------------------------------------------ fuel
    def fuel(self, item: str, station: str, count: int, inventory: Mapping[str, int]) -> Counter[str] | None:
        """Owned fuel units for cooking ``count`` of ``item`` in ``station``: richest fuel first, only
        what :func:`burnable` allows. The station burns each unit for its burn time there and cooks
        an item in its recipe's cooking time. None when what is owned does not suffice."""
        rules = self.rules
        need = rules.cook_ticks(item, station) * count
        options = sorted(((rules.burn_ticks(i, station), i) for i, n in inventory.items()
                          if n > 0 and burnable(rules, i, item)), key=lambda o: (-o[0], o[1]))
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
        """Slots the positive stacks of ``inventory`` take (each item's count over its stack size, up)."""
        sizes = self._stack_sizes
        _read_all(sizes, inventory, self.stack_size)
        inventory = _positive(inventory)
        # the sum of each count's ceiling division by its stack size, as -(sum of -n // size), in C
        return -sum(map(operator.floordiv, map(operator.neg, inventory.values()), map(sizes.__getitem__, inventory)))

    def room_for(self, item: str, inventory: Mapping[str, int]) -> int:
        """How many more of ``item`` fit: the partial stack plus every free slot."""
        return self.room(item, inventory, self.free_slots(inventory))

    def free_slots(self, inventory: Mapping[str, int]) -> int:
        return max(0, self.inventory_slots - self.slots_used(inventory))

    def room(self, item: str, inventory: Mapping[str, int], free: int) -> int:
        """:meth:`room_for` with the inventory's :meth:`free_slots` ``free`` known."""
        size = self.stack_size(item)
        have = inventory.get(item, 0)
        return ((-have) % size if have else 0) + free * size


def _read_all(table: Mapping[str, int], inventory: Mapping[str, int], read: Callable[[str], int]) -> None:
    """Fill ``table`` (``read``'s memo) for the items of ``inventory`` it does not hold yet."""
    if not inventory.keys() <= table.keys():
        for item in inventory.keys() - table.keys():
            read(item)


def _positive(inventory: Mapping[str, int]) -> Mapping[str, int]:
    """``inventory`` without its zero and negative counts (itself when it has none)."""
    if inventory and min(inventory.values()) <= 0:
        return {i: n for i, n in inventory.items() if n > 0}
    return inventory
