"""A player's rule-relevant state: inventory, scores, effects, experience and advancements.

Every inventory change goes through ``add_items``/``remove_items``; afterwards the
``inventory_changed`` advancements are settled, which runs the reward functions of the packs
(e.g. the conversion of a cooking marker item into its real output). The simulator's body and
the compiler's outcome checks both use this one implementation.
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Callable, Mapping

from mcbuild.compiler.rules.advancements import Advancements
from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.commands import CommandRunner

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook


class PlayerState:
    def __init__(self, rulebook: "Rulebook", world_hook: Callable | None = None):
        self.rulebook = rulebook
        self.inventory: Counter[str] = Counter()
        self.changed: dict[str, int] = {}      # item -> net change of its count since the owner last cleared it
        self.version = 0                        # bumped by every call that may change the inventory
        self.removed: Counter[str] = Counter()  # item -> every unit of it removed so far (never reset)
        self.scores: dict[str, int] = {}
        self.objectives: set[str] = set()
        self.effects: dict[str, tuple[int, int]] = {}
        self.xp_levels = 0
        self.runner = CommandRunner(rulebook, world_hook)
        self.advancements = Advancements(rulebook, lambda fid: self.runner.run_function(fid, self))
        self.completed_log: list[str] = []

    # ------------------------------------------------------------------ inventory
    def count(self, item: str | None) -> int:
        if item is None:
            return sum(self.inventory.values())
        n = self.inventory.get(item)        # the inventory's ids are namespaced: most callers pass one
        return self.inventory.get(ns(item), 0) if n is None else n

    def stacks(self) -> list[tuple[str, int]]:
        return sorted((i, n) for i, n in self.inventory.items() if n > 0)

    def add_items(self, items: Mapping[str, int], settle: bool = True) -> list[str]:
        self.version += 1
        changed, inventory = self.changed, self.inventory
        for item, n in sorted(items.items()):
            if n > 0:
                item = ns(item)
                inventory[item] = inventory.get(item, 0) + n
                changed[item] = changed.get(item, 0) + n
        return self.settle() if settle else []

    def remove_items(self, items: Mapping[str, int], settle: bool = True) -> list[str]:
        self.version += 1
        changed, inventory, removed = self.changed, self.inventory, self.removed
        for item, n in sorted(items.items()):
            item = ns(item)
            have = inventory.get(item, 0)
            if have < n:
                raise ValueError(f"cannot remove {n} {item}: have {have}")
            if have == n:
                inventory.pop(item, None)
            else:
                inventory[item] = have - n
            removed[item] = removed.get(item, 0) + n
            changed[item] = changed.get(item, 0) - n
        return self.settle() if settle else []

    def clear(self, item: str | None, limit: int | None) -> int:
        self.version += 1
        changed = self.changed
        if item is None:
            removed = sum(self.inventory.values())
            for held, n in self.inventory.items():
                changed[held] = changed.get(held, 0) - n
                self.removed[held] += n
            self.inventory.clear()
            return removed
        item = ns(item)
        have = self.inventory.get(item, 0)
        removed = have if limit is None else min(have, limit)
        if removed:
            self.inventory[item] -= removed
            self.removed[item] += removed
            changed[item] = changed.get(item, 0) - removed
            if self.inventory[item] == 0:
                del self.inventory[item]
        return removed

    # ------------------------------------------------------------------ advancements
    def settle(self) -> list[str]:
        """Fire ``inventory_changed`` until nothing new completes; returns completions in order."""
        completed = self.advancements.settle(self.inventory)
        self.completed_log.extend(completed)
        return completed

    def enchanted(self, item: str, levels: int) -> list[str]:
        done = self.advancements.trigger("minecraft:enchanted_item", self.inventory, item=ns(item), levels=levels)
        self.completed_log.extend(done)
        return done + self.settle()

    def run_load(self) -> None:
        """Run the ``#minecraft:load`` functions of the rulebook's packs (as the server does on start)."""
        for fid in self.rulebook.function_tag("minecraft:load"):
            self.runner.run_function(fid, self)
