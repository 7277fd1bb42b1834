"""The simulator's primitives for the shared skills (``mcbuild.runtime.skills``): queries over the episode
terrain, the entities and the body, and the game operations under the world's rules.

Breaking a block and killing a mob roll the world's loot tables (``mcbuild.compiler.rules.loot``) with a
generator seeded by (seed, action, purpose); crafting matches the grid against the world's
recipes (``mcbuild.compiler.rules.crafting``) and hands back the grid's remainders; smelting adds the cooked result through the player state,
so a pack's advancement/function mechanism for multi-item or substituted outputs runs exactly as
the pack wrote it. Access model: docs/simulator.md.
"""
from __future__ import annotations

import math
import random
from collections import Counter
from typing import Callable, Iterator

from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.loot import roll
from mcbuild.compiler.rules.rulebook import Rulebook
from mcbuild.runtime.body.blocks import physics
from mcbuild.runtime.body.config import BodyConfig
from mcbuild.runtime.body.policy import Policy
from mcbuild.runtime.contract.skills import NO_RESULT, NOT_SMELTABLE, PICKUP_FAILED
from mcbuild.runtime.skills.common import block_set
from mcbuild.runtime.skills.enchant import lapis, option_facts
from mcbuild.runtime.skills.primitives import Pos, Refused, Region, Target

from .body import Body
from .entities import Entities, distance
from .episode_terrain import Terrain
from .loot_context import block_context, mob_context
from .world import StaticWorld


class SimPrimitives:
    """:class:`mcbuild.runtime.skills.primitives.Primitives` of one simulated episode: its world, terrain,
    body and entities; ``rng(purpose)`` is the action's random generator for ``purpose``."""

    def __init__(self, world: StaticWorld, terrain: Terrain, body: Body, entities: Entities,
                 rng: Callable[[str], random.Random], rules: Rulebook, config: BodyConfig):
        self.world, self.terrain, self.body, self.entities = world, terrain, body, entities
        self.rng, self.rules, self.config = rng, rules, config

    @property
    def policy(self) -> Policy:
        return self.body.policy

    @property
    def visited(self) -> set[Region]:
        return self.body.visited

    @property
    def heading(self) -> Region:
        return self.body.heading

    @heading.setter
    def heading(self, value: Region) -> None:
        self.body.heading = value

    # ------------------------------------------------------------------ queries
    def inventory(self) -> Counter[str]:
        return self.body.inventory

    def held(self) -> str | None:
        return self.body.held()

    def xp_level(self) -> int:
        return self.body.player.xp_levels

    def position(self) -> Pos:
        return self.body.pos

    def block_at(self, pos: Pos) -> str | None:
        return self.terrain.block(pos)

    def blocks(self, ids: frozenset[str]) -> Iterator[Target]:
        terrain = self.terrain
        for block, pos, reach in terrain.scan(self.body.pos, self.config.scan_radius, terrain.ids_of(ids)).targets():
            yield Target(block, pos, reach)

    def obstructions(self, pos: Pos) -> list[tuple[str, Pos]]:
        terrain = self.terrain
        return [(block, o) for o in terrain.obstructions(pos, self.body.pos) if (block := terrain.block(o)) is not None]

    def exposed(self, pos: Pos) -> bool:
        return self.terrain.reach_at(pos) == 1

    def surface(self, x: int, z: int) -> int | None:
        return self.terrain.surface(x, z)

    def room_above(self, height: int) -> bool:
        x, y, z = self.body.pos
        terrain = self.terrain
        return all(terrain.is_open(c) and not terrain.is_solid(c) for c in ((x, y + k, z) for k in range(height + 2)))

    def living(self, entity: str) -> int:
        return len(self._mobs(entity))

    def _mobs(self, entity: str) -> list:
        """Living ``entity`` within the scan radius, nearest first."""
        here, radius = self.body.pos, self.config.scan_radius
        return sorted((m for m in self.entities.alive(entity) if distance(m.pos, here) <= radius),
                      key=lambda m: (distance(m.pos, here), m.pos))

    def dropped(self, item: str) -> bool:
        return bool(self._stacks(item))

    def _stacks(self, item: str) -> list:
        here, radius = self.body.pos, self.config.collect_radius
        return [s for s in self.entities.drops if s.item == item and distance(s.pos, here) <= radius]

    def sight(self, target: str) -> tuple[str, Pos] | None:
        return self._find(target, self.body.pos)

    def recall(self, target: str) -> tuple[str, Pos] | None:
        """The target as seen from a region the body visited before (the nearest region first)."""
        here = self.body.pos
        size = self.config.region_size
        for rx, rz in sorted(self.visited, key=lambda r: (math.hypot(r[0] * size - here[0], r[1] * size - here[2]), r)):
            x, z = rx * size + size // 2, rz * size + size // 2
            top = self.terrain.surface(x, z)
            found = None if top is None else self._find(target, (x, top, z))
            if found is not None:
                return found
        return None

    def _find(self, target: str, at: Pos) -> tuple[str, Pos] | None:
        """Nearest reachable block or living entity matching ``target`` seen from ``at``, and the
        spot next to it where the body ends up."""
        radius = self.config.scan_radius
        if target in self.rules.catalog.entities and target not in self.rules.catalog.blocks:
            mobs = [m for m in self.entities.alive(target) if distance(m.pos, at) <= radius]
            if not mobs:
                return None
            mob = min(mobs, key=lambda m: (distance(m.pos, at), m.pos))
            x, y, z = mob.pos
            return target, (math.floor(x), math.floor(y), math.floor(z))
        terrain = self.terrain
        found = next(terrain.scan(at, radius, terrain.ids_of(block_set(self, target))).targets(), None)
        if found is None:
            return None
        block, pos, _ = found
        spot = terrain.open_neighbour(pos, at)
        if spot is None:   # reach 2: stand by its obstruction
            obstacles = terrain.obstructions(pos, at)
            spot = (terrain.open_neighbour(obstacles[0], at) if obstacles else None) or at
        return block, spot

    def bounds(self) -> tuple[int, int, int, int]:
        size = self.config.region_size
        ox, _, oz = self.world.data.origin
        nx, _, nz = self.world.data.blocks.shape
        return ox // size, (ox + nx - 1) // size, oz // size, (oz + nz - 1) // size

    # ------------------------------------------------------------------ moving
    def go(self, pos: Pos) -> None:
        self.body.pos = pos

    def travel(self, region: Region) -> None:
        size = self.config.region_size
        ox, _, oz = self.world.data.origin
        nx, _, nz = self.world.data.blocks.shape
        x = min(max(region[0] * size + size // 2, ox), ox + nx - 1)
        z = min(max(region[1] * size + size // 2, oz), oz + nz - 1)
        y = self.terrain.surface(x, z)
        assert y is not None                        # x and z are clamped into the area
        self.body.pos = (x, y, z)

    def stand_by(self, pos: Pos) -> bool:
        terrain = self.terrain
        spot = terrain.open_neighbour(pos, self.body.pos) if terrain.reach_at(pos) == 1 else None
        if spot is None:
            return False
        self.body.pos = spot
        return True

    def hold(self, item: str) -> None:
        self.body.mainhand = item

    equip = hold

    # ------------------------------------------------------------------ blocks and drops
    def dig(self, pos: Pos, block: str, tool: str | None, pickup: bool) -> Counter[str]:
        table = self.rules.block_loot(block)
        drops = roll(self.rules, table, block_context(self.terrain, pos, tool), self.rng(f"mine:{pos}")) if table else Counter()
        self.terrain.break_block(pos)
        if pickup:
            return drops
        self._leave(drops, pos)
        return Counter()

    def dig_above(self, pos: Pos, block: str, tool: str | None) -> bool:
        self._leave(self.body.receive(self.dig(pos, block, tool, pickup=True)), pos)
        return True

    def pick_up(self, loose: Counter[str]) -> Counter[str]:
        left = self.body.receive(loose)
        self._leave(left, self.body.pos)
        return left

    def _leave(self, items: Counter[str], pos: Pos) -> None:
        for item, n in sorted(items.items()):
            self.entities.drop(item, n, pos)

    def place(self, block: str) -> Pos | None:
        """On the nearest empty open cell on solid ground next to the body (not its own column)."""
        spots = self.terrain.open_spots(self.body.pos, self.config.place_radius, self.terrain.ids_of(physics().air))
        if not spots:
            return None
        self.terrain.place_block(spots[0], block)
        self.body.player.remove_items({block: 1})
        return spots[0]

    def pillar(self, block: str, height: int) -> None:
        body = self.body
        x, y, z = body.pos
        for k in range(height):
            self.terrain.place_block((x, y + k, z), block)
        body.player.remove_items({block: height})
        body.pos = (x, y + height, z)

    def collect(self, item: str) -> int:
        body = self.body
        stack = min(self._stacks(item), key=lambda s: (distance(s.pos, body.pos), s.pos))
        room = min(stack.count, body.room_for(item))
        self.entities.take(stack, room)
        body.receive({item: room})
        body.pos = stack.pos
        return room

    def kill(self, entity: str, count: int, weapon: str | None) -> tuple[int, Counter[str]]:
        drops: Counter[str] = Counter()
        killed = self._mobs(entity)[:count]
        for mob in killed:
            mob.alive = False
            table = self.rules.loot_table(mob.loot_table)
            drops.update(roll(self.rules, table, mob_context(mob, weapon),
                              self.rng(f"attack:{self.entities.mobs.index(mob)}")) if table else Counter())
            self.body.pos = tuple(math.floor(v) for v in mob.pos)
        return len(killed), drops

    # ------------------------------------------------------------------ items
    def craft(self, grid: list[list[str | None]], station: str, table: Pos | None) -> tuple[str, int]:
        result = self.rules.craft(grid)
        if result is None:
            raise Refused(NO_RESULT, "the grid produced nothing")
        body = self.body
        need = Counter(c for row in grid for c in row if c is not None)
        body.player.remove_items(need, settle=False)
        if body.room_for(result.item) < result.count:
            body.player.add_items(need, settle=False)
            raise Refused(PICKUP_FAILED, f"no room for {result.count} {result.item}")
        body.receive({result.item: result.count})
        if result.remainders:          # the empty bucket of a milk bucket; what does not fit drops at the feet
            self._leave(body.receive(dict(result.remainders)), body.pos)
        return result.item, result.count

    def smelt(self, item: str, station: str, count: int, fuel: Counter[str], at: Pos) -> None:
        found = self.rules.cooking_recipe(item, station)
        if found is None:
            raise Refused(NOT_SMELTABLE, f"the {station} does not process {item}")
        _, recipe = found
        body = self.body
        body.player.remove_items(Counter({item: count}) + fuel, settle=False)
        self._leave(body.receive({ns(recipe["result"]): count}), body.pos)

    def enchant(self, item: str, option: str, at: Pos) -> None:
        facts, player = option_facts(self.rules, option), self.body.player
        player.remove_items({lapis(self.rules): int(facts["lapis_cost"])})
        player.xp_levels -= int(facts["levels_consumed"])
        player.enchanted(item, int(facts["min_level_requirement"]))

    def wait(self, ticks: int) -> None:
        """Time is semantic and the worlds are static (fixed daytime, no growth): nothing changes."""
