"""The simulated Mineflayer body: position, inventory (a rules ``PlayerState``), main hand,
survival state, exploration memory, and the tool choices the body makes on its own.

Every inventory change goes through ``PlayerState`` so the world's advancements (and the pack
functions they reward) are settled after it. Tool tiers and kinds come from the catalog's
game facts; which blocks a tool harvests comes from the world's rules (its block tags).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from compiler.rules.player import PlayerState

if TYPE_CHECKING:
    from compiler.rules.rulebook import Rulebook

Pos = tuple[int, int, int]


@dataclass(frozen=True)
class BodyConfig:
    """Bounds of the body's bounded behaviour (documented in docs/simulator.md)."""

    scan_radius: float = 32.0       # nearby targets, entities, drops, facilities; mine/attack/station reach
    collect_radius: float = 12.0    # collect(item) (paper L.9)
    explore_regions: int = 4        # new frontier regions searched per explore call
    region_size: int = 16           # exploration regions are chunk columns
    place_radius: int = 3           # open spots considered by place
    inventory_slots: int = 36
    max_health: float = 20.0
    max_food: int = 20


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
    tool_table: dict[str, tuple[str, int]] = field(default_factory=dict)   # every tool: (kind, tier level)
    harvest_memo: dict[str, frozenset[str] | None] = field(default_factory=dict)   # block -> harvesting tools

    def __post_init__(self) -> None:
        for tier in self.rules.facts["tool_tiers"].values():
            for kind, item in tier["tools"].items():
                self.tool_table[item] = (kind, int(tier["level"]))

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

    # ------------------------------------------------------------------ inventory space
    def slots_used(self) -> int:
        return sum(-(-n // self.rules.stack_size(i)) for i, n in self.inventory.items() if n > 0)

    def room_for(self, item: str) -> int:
        size = self.rules.stack_size(item)
        have = self.player.count(item)
        partial = (-have) % size if have else 0
        return partial + max(0, self.config.inventory_slots - self.slots_used()) * size

    def receive(self, items: Mapping[str, int]) -> Counter[str]:
        """Pick up what fits (settling advancements once); returns what did not fit."""
        kept: Counter[str] = Counter()
        left: Counter[str] = Counter()
        for item, n in sorted(items.items()):
            fit = min(n, self.room_for(item) - kept[item])
            kept[item] += max(fit, 0)
            left[item] += n - max(fit, 0)
        self.player.add_items(+kept)
        return +left

    # ------------------------------------------------------------------ tools
    def _tools(self) -> dict[str, tuple[str, int]]:
        """Owned tools: item -> (kind, tier level), from the catalog's tool tiers."""
        return {item: spec for item, spec in self.tool_table.items() if self.inventory.get(item, 0) > 0}

    def harvest_tool(self, block: str) -> tuple[bool, str | None]:
        """(can harvest, tool to hold) for mining ``block`` with what the body owns."""
        if block not in self.harvest_memo:
            self.harvest_memo[block] = self.rules.harvest_tools(block)
        allowed = self.harvest_memo[block]
        tools = self._tools()
        if allowed is not None:
            usable = [t for t in tools if t in allowed]
            if not usable:
                return False, None
            return True, max(usable, key=lambda t: (tools[t][1], t))
        fitting = [t for t, (kind, _) in tools.items() if self._mineable_with(block, kind)]
        return True, max(fitting, key=lambda t: (tools[t][1], t)) if fitting else self.held()

    def _mineable_with(self, block: str, kind: str) -> bool:
        try:
            return block in self.rules.tag("block", f"minecraft:mineable/{kind}")
        except KeyError:
            return False

    def weapon(self) -> str | None:
        """Best owned melee weapon: the highest-tier sword, else axe, else the current hand."""
        tools = self._tools()
        for kind in ("sword", "axe"):
            options = [t for t, (k, _) in tools.items() if k == kind]
            if options:
                return max(options, key=lambda t: (tools[t][1], t))
        return self.held()
