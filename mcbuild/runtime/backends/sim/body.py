"""The simulated Mineflayer body: position, inventory (a rules ``PlayerState``), the copies of its
items that do not stack (their damage and enchantments), main hand, survival state, exploration
memory and the enchantment seed the enchanting table reads.

Every inventory change goes through ``PlayerState`` so the world's advancements (and the pack
functions they reward) are settled after it. The choices the body makes on its own (tool, weapon,
fuel, room) are the backend-independent :class:`mcbuild.runtime.body.policy.Policy`.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from mcbuild.compiler.rules.player import PlayerState
from mcbuild.runtime.body.config import BodyConfig
from mcbuild.runtime.body.copies import Copy
from mcbuild.runtime.body.policy import Policy

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook

Pos = tuple[int, int, int]


@dataclass
class Body:
    player: PlayerState
    pos: Pos
    config: BodyConfig
    mainhand: str | None = None
    visited: set[tuple[int, int]] = field(default_factory=set)
    heading: tuple[int, int] = (1, 0)
    health: float = 20.0
    food: int = 20
    enchantment_seed: int = 0       # Player.enchantmentSeed: the table's offers hold until an enchant
    uses: int = 0                   # wear events of enchanted copies so far (each seeds its own draw)
    worn: int = 0                   # changes to a copy's damage so far (what the snapshot's durability reads)
    policy: Policy = field(init=False)
    _copies: dict[str, list[Copy]] = field(default_factory=dict, repr=False)
    _removed: dict[str, int] = field(default_factory=dict, repr=False)     # player.removed at the last read
    _worn: dict[str, int] = field(default_factory=dict, repr=False)        # item -> changes to its copies' damage
    # item -> ((its count, removed units, changes to its damage), the uses left in its copies) at its last read
    _uses: dict[str, tuple[tuple[int, int, int], tuple[int, ...]]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.policy = Policy.of(self.rules, self.config.inventory_slots)

    @property
    def rules(self) -> "Rulebook":
        return self.player.rulebook

    @property
    def inventory(self) -> Counter[str]:
        return self.player.inventory

    def has(self, items: Mapping[str, int]) -> dict[str, int]:
        """What is missing to own ``items`` (empty if everything is owned)."""
        return {i: n - self.player.count(i) for i, n in sorted(items.items()) if self.player.count(i) < n}

    def held(self) -> str | None:
        """The main-hand item, if still owned."""
        return self.mainhand if self.mainhand and self.player.count(self.mainhand) > 0 else None

    def copies(self, item: str) -> list[Copy]:
        """The owned copies of ``item`` (one that does not stack; [] for one that does), oldest
        first: what the inventory gained since (crafted, picked up, given by a function) are fresh
        copies, what it lost since (to a recipe, a furnace, a command) leaves from the newest. An
        item whose count and removed units are those of its last read has the same copies (nothing
        was gained or lost since: its removed units only grow), whatever else changed."""
        kept, player = self._copies.get(item), self.player
        if (kept is not None and len(kept) == player.inventory.get(item, 0)
                and player.removed.get(item, 0) == self._removed.get(item, 0)):
            return kept
        return self.reconcile(item)

    def reconcile(self, item: str) -> list[Copy]:
        """:meth:`copies` made to follow the inventory's gains and losses since the last read."""
        if self.policy.stack_size(item) > 1:
            return []
        kept = self._copies.setdefault(item, [])
        removed = self.player.removed[item]
        if removed != self._removed.get(item, 0):      # lost since the last read, even if gained again
            del kept[max(len(kept) - (removed - self._removed.get(item, 0)), 0):]
            self._removed[item] = removed
        have = self.player.count(item)
        del kept[have:]
        kept.extend(Copy() for _ in range(have - len(kept)))
        return kept

    def wore(self, item: str, k: int, copy: Copy) -> None:
        """The ``k``-th copy of ``item`` (as :meth:`copies` lists them) took wear: it is now ``copy``."""
        self.copies(item)[k] = copy
        self.worn += 1
        self._worn[item] = self._worn.get(item, 0) + 1

    def lose_copy(self, item: str, k: int) -> None:
        """The ``k``-th copy of ``item`` (as :meth:`copies` lists them) is gone: it broke."""
        del self.copies(item)[k]
        self.worn += 1
        self.player.remove_items({item: 1})
        self._removed[item] = self.player.removed[item]

    def durability(self) -> dict[str, tuple[int, ...]]:
        """:meth:`Policy.durability` of what the body owns. An item's uses left are read again only
        when its count, its removed units or its copies' damage changed since its last read: its
        copies change only by a gain or a loss (:meth:`copies`) and by :meth:`wore`."""
        inventory, removed, worn, kept = self.player.inventory, self.player.removed, self._worn, self._uses
        policy = self.policy
        shown: dict[str, tuple[int, ...]] = {}
        for item in policy.wearing(inventory):
            key = (inventory[item], removed.get(item, 0), worn.get(item, 0))
            found = kept.get(item)
            if found is None or found[0] != key:
                found = kept[item] = (key, policy.uses_left(item, self.copies(item)))
            shown[item] = found[1]
        return shown

    # ------------------------------------------------------------------ the body's own choices
    def room_for(self, item: str) -> int:
        return self.policy.room_for(item, self.player.inventory)

    def receive(self, items: Mapping[str, int], free: int | None = None) -> Counter[str]:
        """Pick up what fits (settling advancements once); returns what did not fit. ``free``: the
        inventory's free slots, when the caller counted them on it already."""
        kept: dict[str, int] = {}
        left: Counter[str] = Counter()
        inventory, policy = self.player.inventory, self.policy
        if free is None:                            # each item's room is counted on the inventory before
            free = policy.free_slots(inventory)
        for item, n in items.items():               # (each item once: add_items takes them in item order)
            fit = max(min(n, policy.room(item, inventory, free)), 0)
            if fit:
                kept[item] = fit
            if n > fit:
                left[item] = n - fit
        self.player.add_items(kept)
        return left
