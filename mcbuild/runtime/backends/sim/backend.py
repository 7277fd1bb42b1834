"""The embedded simulator backend: one static world, its rules, a body, and the 13 shared skills
(``mcbuild.runtime.skills``) over its primitives (``primitives.SimPrimitives``).

Rules come only from the ``Rulebook`` of the save (vanilla catalog + the save's datapacks): the
``#minecraft:load`` functions run on reset, then the biome pack's player setup function (effects,
experience, the creatures it summons). Randomness is drawn from generators seeded by
``(seed, action index, purpose)``, so an action's random draws never depend on what earlier
actions drew: a Vanilla world and its Mirror copy stay in lockstep until a changed rule fires.
"""
from __future__ import annotations

import math
import random
from itertools import repeat
from typing import TYPE_CHECKING, Callable, Mapping

from mcbuild.compiler.rules import functions
from mcbuild.compiler.rules.player import PlayerState
from mcbuild.runtime.body.config import BodyConfig
from mcbuild.runtime.contract.backend import Outcome, Snapshot, Surroundings, cardinal, inventory_change
from mcbuild.runtime.contract.skills import Action
from mcbuild.runtime.skills import HANDLERS
from mcbuild.runtime.skills.common import region_of

from .body import Body, Pos
from .entities import Entities
from .episode_terrain import Terrain
from .primitives import SimPrimitives
from .world import StaticWorld

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook

class SimBackend:
    """A :class:`mcbuild.runtime.contract.backend.Backend` on one static world; ``release`` takes the
    terrain back when the backend is closed (the factory's pool)."""

    def __init__(self, world: StaticWorld, rules: "Rulebook", seed: int = 0, config: BodyConfig = BodyConfig(),
                 terrain: Terrain | None = None, release: Callable[[Terrain], None] | None = None):
        self.world = world
        self.rules = rules
        self.config = config
        self.terrain = terrain or Terrain(world)
        self.provisioning = _Provisioning(self)
        self._release = release
        self.reset(seed)

    def close(self) -> None:
        if self._release is not None:
            self._release(self.terrain)
            self._release = None

    # ------------------------------------------------------------------ episode control
    def reset(self, seed: int) -> None:
        """A fresh episode: pristine blocks, packs' load and setup functions, spawn position."""
        self.terrain.reset()
        self.seed = seed
        self.actions = 0
        spawn = self.world.data.spawn
        self.entities = Entities(origin=(float(spawn[0]), float(spawn[1]), float(spawn[2])), seed=seed)
        player = PlayerState(self.rules, self.entities.world_command)
        self.body = Body(player, spawn, self.config, health=self.config.max_health, food=self.config.max_food,
                         enchantment_seed=random.Random(f"{seed}|enchantment_seed").randrange(2 ** 31))
        player.run_load()
        if self.rules.get("function", functions.SETUP) is not None:
            player.runner.run_function(functions.SETUP, player)
            player.settle()
        self.body.visited.add(region_of(spawn, self.config.region_size))
        self.primitives = SimPrimitives(self.world, self.terrain, self.body, self.entities, self.rng, self.rules,
                                        self.config)
        self.facing = "south"                     # a new player looks south (yaw 0)
        self._biome: tuple[Pos | None, str] = (None, "")                            # (position, its biome)
        self._effects: tuple[dict | None, dict[str, int]] = (None, {})   # (the player's effects, as shown)
        # (body, its inventory's version and worn count, the inventory and durability shown): kept
        # while neither changed, so an action that leaves them alone shares the last snapshot's
        self._stock: tuple[Body | None, tuple[int, int], dict[str, int], dict[str, tuple[int, ...]]] = (
            None, (0, 0), {}, {})

    def execute(self, action: Action) -> Outcome:
        self.actions += 1
        body = self.body
        start, changed = body.pos, body.player.changed
        changed.clear()                 # the inventory's changes during the action
        outcome = HANDLERS[action.skill](self.primitives, action.args)
        body.pos = self.terrain.stand(body.pos)
        self.facing = facing(start, body.pos) or self.facing
        body.visited.add(region_of(body.pos, self.config.region_size))
        outcome.details["gained"], outcome.details["lost"] = inventory_change({}, changed)   # net changes
        return outcome

    def rng(self, purpose: str) -> random.Random:
        """The generator of ``purpose`` in this action (seeded when first drawn from)."""
        return _Seeded(f"{self.seed}|{self.actions}|{purpose}")  # type: ignore[return-value]

    # ------------------------------------------------------------------ observation
    def snapshot(self, surroundings: bool = True) -> Snapshot:
        body = self.body
        blocks: dict[str, float] = {}
        drops: dict[str, float] = {}
        mobs: dict[str, tuple[int, float]] = {}
        if surroundings:
            blocks, drops, mobs = self.surroundings()
        player, pos = body.player, body.pos
        if pos != self._biome[0]:               # the parts that seldom change are made again only then
            self._biome = (pos, self.terrain.biome(pos))
        if player.effects != self._effects[0]:
            self._effects = (dict(player.effects), {e: amp for e, (_, amp) in sorted(player.effects.items())})
        body_was, version, inventory, durability = self._stock
        if body_was is not body or version != (player.version, body.worn):
            inventory = dict(sorted(player.inventory.items()))     # positive counts: the player drops an item at 0
            durability = body.durability()
            self._stock = (body, (player.version, body.worn), inventory, durability)
        return Snapshot(
            inventory=inventory,
            mainhand=body.held(),
            xp_level=player.xp_levels,
            position=pos,
            health=body.health,
            food=body.food,
            alive=body.health > 0,
            effects=self._effects[1],
            biome=self._biome[1],
            advancements=tuple(player.advancements.done),
            nearby_blocks=blocks,
            nearby_drops=drops,
            nearby_entities=mobs,
            facing=self.facing,
            durability=durability,
        )

    def count_in_box(self, kind: str, target: str, low: Pos, high: Pos) -> int:
        """Blocks ``target`` or living mobs ``target`` inside the box (absolute, corners inclusive)."""
        if kind == "entity":
            return sum(all(lo <= math.floor(v) <= hi for lo, v, hi in zip(low, mob.pos, high))
                       for mob in self.entities.alive(target))
        return sum(self.terrain.block((x, y, z)) == target for x in range(low[0], high[0] + 1)
                   for y in range(low[1], high[1] + 1) for z in range(low[2], high[2] + 1))

    def surroundings(self) -> Surroundings:
        """Nearest distance of every reachable block id, dropped item and living entity in scan range."""
        here, radius = self.body.pos, self.config.scan_radius
        blocks = self.terrain.nearby_blocks(here, radius)
        dist = math.dist
        drops: dict[str, float] = {}            # the nearest of each item, rounded at the end (rounding is monotone)
        for stack in self.entities.drops:
            d = dist(stack.pos, here)
            if d <= radius and d < drops.get(stack.item, radius + 1):
                drops[stack.item] = d
        mobs: dict[str, tuple[int, float]] = {}
        for entity, positions in self.entities.living_positions():
            near = [d for d in map(dist, positions, repeat(here)) if d <= radius]
            if near:
                mobs[entity] = (len(near), round(min(near), 1))
        return blocks, {i: round(d, 1) for i, d in sorted(drops.items())}, mobs


def facing(a: Pos, b: Pos) -> str | None:
    """The horizontal direction of a move from ``a`` to ``b`` (its larger axis), None if it stayed."""
    return cardinal(b[0] - a[0], b[2] - a[2])


class _Provisioning:
    """Harness-only: items put straight into the simulated body."""

    def __init__(self, sim: SimBackend):
        self._sim = sim

    def give(self, items: Mapping[str, int]) -> None:
        self._sim.body.receive(items)


class _Seeded:
    """``random.Random(seed)``, made when first used: seeding from a string hashes it, and most
    loot rolls (a log, a stone) draw nothing."""

    __slots__ = ("_seed", "_rng")

    def __init__(self, seed: str):
        self._seed = seed
        self._rng: random.Random | None = None

    def __getattr__(self, name: str):
        if self._rng is None:
            self._rng = random.Random(self._seed)
        return getattr(self._rng, name)
