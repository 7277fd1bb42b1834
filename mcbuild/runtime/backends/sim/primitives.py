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
from functools import partial
from typing import Callable, Iterator

from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.enchanting import option_costs, option_enchantments
from mcbuild.compiler.rules.loot import LootContext, fixed_drops, roll
from mcbuild.compiler.rules.rulebook import Rulebook
from mcbuild.runtime.body.blocks import physics
from mcbuild.runtime.body.config import BodyConfig
from mcbuild.runtime.body.copies import Copy, Enchantments
from mcbuild.runtime.body.policy import Policy, in_hand
from mcbuild.runtime.contract.skills import (ENCHANT_OPTIONS, NEEDS_LEVEL, NO_RESULT, NOT_ENCHANTABLE, NOT_SMELTABLE,
                                             PICKUP_FAILED)
from mcbuild.runtime.skills.common import block_set
from mcbuild.runtime.skills.enchant import lapis, option_facts
from mcbuild.runtime.skills.primitives import Pos, Refused, Region, Target

from .body import Body
from .entities import Entities, Mob, distance
from .episode_terrain import Terrain
from .loot_context import block_context, mob_context
from .world import StaticWorld

_BARE = Copy()                      # the hand, or an item that stacks: no damage, no enchantments


class SimPrimitives:
    """:class:`mcbuild.runtime.skills.primitives.Primitives` of one simulated episode: its world, terrain,
    body and entities; ``rng(purpose)`` is the action's random generator for ``purpose``."""

    def __init__(self, world: StaticWorld, terrain: Terrain, body: Body, entities: Entities,
                 rng: Callable[[str], random.Random], rules: Rulebook, config: BodyConfig):
        self.world, self.terrain, self.body, self.entities = world, terrain, body, entities
        self.rng, self.rules, self.config = rng, rules, config
        self.policy: Policy = body.policy               # the body's, as are its exploration memory and inventory
        self.visited: set[Region] = body.visited
        self._inventory = body.player.inventory
        self._fixed_drops = rules.memo("fixed_drops")          # (id(table), key) -> (table, its fixed drops)
        self._drops: dict[tuple, tuple[dict, dict[str, int] | None]] = {}  # this episode's look-ups of it
        self._unbreaking = ns(rules.facts["wear"]["unbreaking"])
        self._block_loot: dict[str, dict | None] = {}       # block -> its loot table (rules.block_loot)

    @property
    def heading(self) -> Region:
        return self.body.heading

    @heading.setter
    def heading(self, value: Region) -> None:
        self.body.heading = value

    # ------------------------------------------------------------------ queries
    def inventory(self) -> Counter[str]:
        return self._inventory

    def held(self) -> str | None:
        return self.body.held()

    def copies(self, item: str) -> list[Copy]:
        return self.body.copies(item)

    def xp_level(self) -> int:
        return self.body.player.xp_levels

    def position(self) -> Pos:
        return self.body.pos

    def block_at(self, pos: Pos) -> str | None:
        return self.terrain.block(pos)

    def blocks(self, ids: frozenset[str]) -> Iterator[Target]:
        terrain = self.terrain
        return terrain.scan(self.body.pos, self.config.scan_radius, terrain.ids_of(ids)).targets()

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
        if block not in self._block_loot:
            self._block_loot[block] = self.rules.block_loot(block)
        table, terrain = self._block_loot[block], self.terrain
        enchantments = self._in_hand(tool).enchantments
        drops = self._loot(table, (id(table), *terrain.block_and_state(pos), tool, enchantments),
                           lambda: block_context(terrain, pos, tool, enchantments),
                           lambda: f"mine:{pos}") if table else Counter()
        self.terrain.break_block(pos)
        if physics().wears(block):
            self._wear(tool, "mine")
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

    def _loot(self, table: dict, key: tuple, context: Callable[[], LootContext],
              purpose: Callable[[], str]) -> Counter[str]:
        """One roll of ``table`` in the loot context ``context()`` (which ``key`` names: the table's id
        and all the context holds but the place) with the action's generator for ``purpose()``. Most
        rolls always give the same drops (a stone, a log): those are looked up per key, without
        rolling (``loot.fixed_drops``, memoized for the rulebook's users and kept for the episode; the
        generator is never drawn from, its purpose never spelt)."""
        found = self._drops.get(key)
        if found is None:
            found = self._drops[key] = self._fixed_drops.get_or_make(
                key, lambda: (table, fixed_drops(self.rules, table, context())))
        fixed = found[1]
        return Counter(fixed) if fixed is not None else roll(self.rules, table, context(), self.rng(purpose()))

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
        """Each mob takes fully charged hits until its max health is spent; every hit wears the
        weapon, which, once broken, leaves the hand empty for the hits still needed."""
        drops: Counter[str] = Counter()
        killed = self._mobs(entity)[:count]
        strength = self.body.player.effects.get(self.rules.facts["melee"]["strength"], (0, -1))[1] + 1
        for mob in killed:
            health = float(self.rules.facts["melee"]["max_health"][entity])
            while health > 0:
                health -= self.policy.damage(weapon, strength)
                if self._wear(weapon, "hit"):
                    weapon = None
            self.entities.kill(mob)
            table = self.rules.loot_table(mob.loot_table)
            if table:
                enchantments = self._in_hand(weapon).enchantments
                drops.update(self._loot(table, (id(table), mob.entity, weapon, enchantments),
                                        partial(mob_context, mob, weapon, enchantments),
                                        partial(self._kill_purpose, mob)))
            self.body.pos = tuple(math.floor(v) for v in mob.pos)
        return len(killed), drops

    def _kill_purpose(self, mob: Mob) -> str:
        return f"attack:{self.entities.mobs.index(mob)}"

    # ------------------------------------------------------------------ wear
    def _in_hand(self, item: str | None) -> Copy:
        """The copy of ``item`` the body works with (a plain copy for an item that stacks)."""
        copies = self.body.copies(item) if item else []
        return copies[in_hand(copies)] if copies else _BARE

    def _wear(self, item: str | None, use: str) -> bool:
        """One ``use`` of ``item``'s copy in hand: its damage grows by the use's wear, less the points
        its unbreaking spares; at its max durability it breaks and is gone. True when it broke."""
        amount = self.policy.wear(item, use)
        if not amount or item is None:
            return False
        copies = self.body.copies(item)
        if not copies:
            return False
        k = in_hand(copies)
        copy = copies[k]
        level = copy.level(self._unbreaking)
        if level:
            self.body.uses += 1
            rng = self.rng(f"wear:{self.body.uses}")
            amount -= sum(rng.randrange(level + 1) > 0 for _ in range(amount))
        if copy.damage + amount < self.policy.max_durability(item):
            self.body.wore(item, k, Copy(copy.damage + amount, copy.enchantments))
            return False
        self.body.lose_copy(item, k)
        return True

    # ------------------------------------------------------------------ items
    def craft(self, grid: list[list[str | None]], station: str, table: Pos | None) -> tuple[str, int]:
        result = self.rules.craft(grid)
        if result is None:
            raise Refused(NO_RESULT, "the grid produced nothing")
        body = self.body
        need = Counter(c for row in grid for c in row if c is not None)
        body.player.remove_items(need, settle=False)
        inventory, policy = self._inventory, self.policy
        free = policy.free_slots(inventory)
        if policy.room(result.item, inventory, free) < result.count:
            body.player.add_items(need, settle=False)
            raise Refused(PICKUP_FAILED, f"no room for {result.count} {result.item}")
        body.receive({result.item: result.count}, free)
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
        out = Counter({ns(recipe["result"]): count})
        for kind, units in fuel.items():        # the furnace hands back a fuel's remainder (a lava bucket's bucket)
            remainder = self.rules.facts["crafting_remainders"].get(kind)
            if remainder:
                out[ns(remainder)] += units
        self._leave(body.receive(out), body.pos)

    def enchant(self, item: str, option: str, at: Pos) -> tuple[str, Enchantments]:
        """As the table does (``mcbuild.compiler.rules.enchanting``): the option's level cost and its
        enchantments come from the body's enchantment seed, which a performed enchant renews."""
        rules, body = self.rules, self.body
        player, facts, number = body.player, option_facts(rules, option), ENCHANT_OPTIONS.index(option)
        cost = option_costs(rules, item, self._bookshelves(at), random.Random(body.enchantment_seed))[number]
        if cost <= 0:
            raise Refused(NOT_ENCHANTABLE, f"the table offers no {option} enchantment for {item}")
        levels = int(facts["levels_consumed"])
        if player.xp_levels < max(cost, levels):
            raise Refused(NEEDS_LEVEL, f"needs experience level {cost}")
        got = option_enchantments(rules, item, cost, random.Random(body.enchantment_seed + number))
        if not got:
            raise Refused(NOT_ENCHANTABLE, f"the table offers no {option} enchantment for {item}")
        player.remove_items({lapis(rules): int(facts["lapis_cost"])}, settle=False)
        player.xp_levels -= levels
        body.enchantment_seed = self.rng("enchantment_seed").randrange(2 ** 31)
        book = rules.facts["enchanting"]["book"]
        if item == ns(book["item"]):
            became = ns(book["becomes"])
            player.remove_items({item: 1}, settle=False)
            self._leave(body.receive({became: 1}), body.pos)
            copies = body.copies(became)
            if copies:
                copies[-1] = Copy(0, got)
        else:
            became, copies = item, body.copies(item)
            slot = next(i for i, c in enumerate(copies) if not c.enchanted)
            copies[slot] = Copy(copies[slot].damage, got)
        player.enchanted(became, levels)
        return became, got

    def _bookshelves(self, table: Pos) -> int:
        """Bookshelves that power the table at ``table``: on its ring, with air halfway to it."""
        ring, terrain, air = self.rules.facts["enchanting"]["bookshelf_ring"], self.terrain, physics().air
        r, (x, y, z), shelf = int(ring["radius"]), table, ns(ring["block"])
        count = 0
        for dx in range(-r, r + 1):
            for dz in range(-r, r + 1):
                if max(abs(dx), abs(dz)) != r:
                    continue
                for dy in ring["heights"]:      # the halfway block is read only behind a bookshelf
                    count += (terrain.block((x + dx, y + dy, z + dz)) == shelf
                              and terrain.block((x + int(dx / 2), y + dy, z + int(dz / 2))) in air)
        return count

    def wait(self, ticks: int) -> None:
        """Time is semantic and the worlds are static (fixed daytime, no growth): nothing changes."""
