"""The server backend's primitives for the shared skills (``mcbuild.runtime.skills``), as bridge calls.

Readings are the bot's view of the world; what entered the inventory is the bridge's settled
inventory difference, never a loot-table guess. The grid, furnace and enchanting table are
clicked by the bridge, and what the server (and the world's datapacks) put into the result slot
is what the body gets. Access on a real server: the bot walks next to a block (pathfinder without
digging); the obstruction in front of a reach-2 block is the one between its eyes and the block.
A dig or kill picks up its own drops as they fall; :meth:`ServerPrimitives.pick_up` reports what
they left on the ground.
"""
from __future__ import annotations

import math
import time
from collections import Counter
from contextlib import contextmanager
from typing import Any, Iterator, Mapping

from mcbuild.compiler.rules.rulebook import Rulebook
from mcbuild.runtime.body.blocks import physics
from mcbuild.runtime.body.config import BodyConfig
from mcbuild.runtime.body.copies import Copy, Enchantments
from mcbuild.runtime.body.policy import Policy
from mcbuild.runtime.contract.skills import (
    MISSING_ITEM,
    NEEDS_LEVEL,
    NEEDS_STATION,
    NEEDS_TABLE,
    NO_FUEL,
    NO_RESULT,
    NO_SPOT,
    NO_TARGET,
    NOT_ENCHANTABLE,
    NOT_EQUIPPABLE,
    NOT_SMELTABLE,
    PICKUP_FAILED,
    STATION_UNREACHABLE,
)
from mcbuild.runtime.skills.common import block_set
from mcbuild.runtime.skills.primitives import Pos, Refused, Region, Target

from .bridge_client import BridgeError
from .link import Link, visible

SMELT_STALL_MS = 8000      # no furnace progress for this long: the station stopped (a vanilla item takes 10 s)
DROP_FALL_S = 1.0          # how long a drop dug above the head may take to fall to the bot
NEAR = 3.0                 # how close the bot walks to a block it works on
TARGETS = 20               # nearest blocks a skill may try (a failed walk costs seconds)
EXPLORE_SPAN = 64          # chunk columns explored around the current one
PASSED_THROUGH = frozenset({NO_RESULT, PICKUP_FAILED, MISSING_ITEM, NEEDS_TABLE, NEEDS_STATION, STATION_UNREACHABLE,
                            NO_FUEL, NOT_SMELTABLE, NOT_ENCHANTABLE, NEEDS_LEVEL, NOT_EQUIPPABLE, NO_TARGET})
NOT_PLACED = (NO_SPOT, "place_failed")
NEIGHBOURS = ((0, -1, 0), (0, 1, 0), (1, 0, 0), (-1, 0, 0), (0, 0, 1), (0, 0, -1))


def open_cell(block: str | None) -> bool:
    return block is None or block in physics().air or not physics().solid(block)


@contextmanager
def refusals(**messages: str) -> Iterator[None]:
    """An op's own failure with a contract reason code becomes :class:`Refused` (``messages``
    rewords some codes); any other stays a fault."""
    try:
        yield
    except BridgeError as err:
        if err.code not in PASSED_THROUGH:
            raise
        details = err.details if isinstance(err.details, dict) else {}
        extra = {"missing": details["missing"]} if "missing" in details else {}
        raise Refused(err.code, messages.get(err.code, err.message), **extra) from None


def copies_of(state: Mapping[str, Any], item: str) -> list[Copy]:
    """The copies of ``item`` a bridge ``state`` reports: their ``Damage`` as the server sent it and
    their enchantments, least worn first."""
    return [Copy(int(c["damage"]), tuple((e["id"], int(e["level"])) for e in c["enchantments"]))
            for c in state.get("copies", []) if c["id"] == item]


class ServerPrimitives:
    """:class:`mcbuild.runtime.skills.primitives.Primitives` of one bot on one server, with the body's own
    state: the main hand as the skills set it and the exploration memory."""

    def __init__(self, link: Link, rules: Rulebook, policy: Policy, config: BodyConfig):
        self.link, self.rules, self.policy, self.config = link, rules, policy, config
        self.mainhand: str | None = None
        self.visited: set[Region] = set()
        self.heading: Region = (1, 0)
        self._left: Counter[str] = Counter()        # what this action's digs left on the ground

    def visible(self, items: Mapping[str, int]) -> dict[str, int]:
        return visible(items, self.link.markers)

    # ------------------------------------------------------------------ queries
    def inventory(self) -> dict[str, int]:
        return self.link.inventory()

    def held(self, inventory: Mapping[str, int] | None = None) -> str | None:
        """The main hand as the skills set it (equip, the tool of mine, the weapon of attack) while
        it is still owned: the simulator's notion, not the hotbar slot a pickup landed in."""
        have = self.link.inventory() if inventory is None else inventory
        return self.mainhand if self.mainhand and have.get(self.mainhand, 0) > 0 else None

    def copies(self, item: str) -> list[Copy]:
        return copies_of(self.link.state(), item)

    def xp_level(self) -> int:
        return int(self.link.state().get("xp_level", 0))

    def position(self) -> Pos:
        x, y, z = self.link.state()["block_position"]
        return int(x), int(y), int(z)

    def block_at(self, pos: Pos) -> str | None:
        return self.link.block_at(pos)

    def blocks(self, ids: frozenset[str]) -> list[Target]:
        return [Target(b, pos, reach) for b, pos, _, reach in self.link.find(ids, self.config.scan_radius, TARGETS)]

    def obstructions(self, pos: Pos) -> list[tuple[str, Pos]]:
        if not self.link.goto(pos, NEAR):
            return []
        seen = self.link.obstruction(pos)
        return [seen] if seen else []

    def exposed(self, pos: Pos) -> bool:
        return any(open_cell(self.link.block_at((pos[0] + dx, pos[1] + dy, pos[2] + dz))) for dx, dy, dz in NEIGHBOURS)

    def surface(self, x: int, z: int) -> int | None:
        cells, bottom = self.link.column(x, z, self.position()[1])
        filled = [bottom + k for k, b in enumerate(cells) if b is not None and (physics().solid(b) or b in physics().fluids)]
        return max(filled) + 1 if filled else None

    def room_above(self, height: int) -> bool:
        x, y, z = self.position()
        return all(open_cell(b) for b in self.link.column(x, z, y, y + height + 1)[0])

    def living(self, entity: str) -> int:
        return len(self.link.living(self.config.scan_radius, entity))

    def dropped(self, item: str) -> bool:
        return any(d["item"]["id"] == item for d in self.link.drops(self.config.collect_radius))

    def sight(self, target: str) -> tuple[str, Pos] | None:
        catalog = self.rules.catalog
        if target in catalog.entities and target not in catalog.blocks:
            mobs = self.link.living(self.config.scan_radius, target)
            return (target, tuple(math.floor(v) for v in mobs[0]["position"])) if mobs else None
        found = self.link.find(block_set(self, target), self.config.scan_radius, 1)
        return (found[0][0], found[0][1]) if found else None

    def recall(self, target: str) -> tuple[str, Pos] | None:
        """A bot sees only what is around it: it recalls nothing."""
        return None

    def bounds(self) -> tuple[int, int, int, int]:
        x, _, z = self.position()
        size = self.config.region_size
        return x // size - EXPLORE_SPAN, x // size + EXPLORE_SPAN, z // size - EXPLORE_SPAN, z // size + EXPLORE_SPAN

    # ------------------------------------------------------------------ moving
    def go(self, pos: Pos) -> None:
        self.link.goto(pos, 2.0)

    def travel(self, region: Region) -> None:
        size = self.config.region_size
        self.link.goto((region[0] * size + size // 2, self.position()[1], region[1] * size + size // 2), 6.0, 30_000)

    def stand_by(self, pos: Pos) -> bool:
        return self.link.goto(pos, NEAR)

    def hold(self, item: str) -> None:
        self.mainhand = item

    def equip(self, item: str) -> None:
        with refusals():
            self.link.call("equip", {"item": item})
        self.mainhand = item

    # ------------------------------------------------------------------ blocks and drops
    def _dig(self, pos: Pos, tool: str | None, pickup: bool) -> dict | None:
        args = {"x": pos[0], "y": pos[1], "z": pos[2], "pickup": pickup, **({"tool": tool} if tool else {})}
        try:
            return self.link.call("dig", args, 60_000)
        except BridgeError:         # gone, out of reach, or the server kept it
            return None

    def dig(self, pos: Pos, block: str, tool: str | None, pickup: bool) -> Counter[str] | None:
        done = self._dig(pos, tool, pickup)
        if done is None or not pickup:
            return None if done is None else Counter()
        left = Counter(self.visible(done.get("left_on_ground", {})))
        self._left.update(left)
        return Counter(self.visible(done.get("gained", {}))) + left

    def dig_above(self, pos: Pos, block: str, tool: str | None) -> bool:
        """The drops fall down the shaft onto the bot, which picks them up as any player does (no
        walking after them): a drop still falling gets ``DROP_FALL_S`` to arrive."""
        done = self._dig(pos, tool, pickup=False)
        if done and done.get("left_on_ground"):
            time.sleep(DROP_FALL_S)
        return done is not None

    def pick_up(self, loose: Counter[str]) -> Counter[str]:
        left, self._left = self._left, Counter()
        return left

    def place(self, block: str) -> Pos | None:
        try:
            done = self.link.call("place", {"item": block, "radius": self.config.place_radius})
        except BridgeError as err:
            if err.code in NOT_PLACED:
                return None
            raise
        return tuple(done["position"])

    def pillar(self, block: str, height: int) -> None:
        try:
            self.link.call("pillar", {"height": height, "item": block}, 30_000 + 5_000 * height)
        except BridgeError as err:
            if err.code in NOT_PLACED:
                raise Refused(NO_SPOT, "no open space above") from None
            if err.code == MISSING_ITEM:
                raise Refused(MISSING_ITEM, f"needs {height} disposable blocks", missing={"disposable block": height}) from None
            raise

    def collect(self, item: str) -> int:
        radius = self.config.collect_radius
        with refusals(no_target=f"no dropped {item} within {radius:g} blocks"):
            done = self.link.call("collect", {"item": item, "radius": radius})
        return int(done.get("gained", {}).get(item, 0))

    def kill(self, entity: str, count: int, weapon: str | None) -> tuple[int, Counter[str]]:
        radius = self.config.scan_radius
        call = {"type": entity, "count": count, "radius": radius, **({"weapon": weapon} if weapon else {})}
        with refusals(no_target=f"no {entity} within {radius:g} blocks"):
            done = self.link.call("attack", call, 30_000 * count + 10_000)
        return int(done["killed"].get(entity, 0)), Counter(self.visible(done.get("gained", {})))

    # ------------------------------------------------------------------ items
    def craft(self, grid: list[list[str | None]], station: str, table: Pos | None) -> tuple[str, int]:
        call = {"station": station, "grid": grid, **({"table": list(table)} if table else {})}
        with refusals(no_result="the grid produced nothing"):
            done = self.link.call("craft_grid", call)
        return done["result_item"], int(done["result_count"])

    def smelt(self, item: str, station: str, count: int, fuel: Counter[str], at: Pos) -> None:
        """One furnace load with every fuel kind the body policy chose, richest first."""
        burn = [[kind, units] for kind, units in sorted(fuel.items(), key=lambda f: (-self.rules.is_fuel(f[0]), f[0]))]
        with refusals():
            self.link.call("smelt", {"station": station, "input": item, "count": count, "fuel": burn,
                                     "position": list(at), "stall_ms": SMELT_STALL_MS},
                           self._smelt_deadline_ms(station, count))

    def _smelt_deadline_ms(self, station: str, count: int) -> int:
        """A minute for walking and windows plus the game's cooking time of ``count`` items, with a
        fifth more for a loaded server."""
        facts = self.rules.facts
        return 60_000 + int(1.2 * 1000 * count * int(facts["cooking_ticks"][station]) / int(facts["ticks_per_second"]))

    def enchant(self, item: str, option: str, at: Pos) -> tuple[str, Enchantments]:
        with refusals():
            done = self.link.call("enchant", {"item": item, "option": option, "position": list(at)}, 40_000)
        return done["enchanted"], tuple((e["id"], int(e["level"])) for e in done.get("enchantments", []))

    def wait(self, ticks: int) -> None:
        """Real ticks, at most the catalog's ``static_world_wait_ticks`` (the worlds are static)."""
        facts = self.rules.facts
        time.sleep(min(ticks, int(facts["static_world_wait_ticks"])) / int(facts["ticks_per_second"]))
