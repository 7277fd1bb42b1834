"""Skills that move the body or change the world: mine, explore, prepare_access, place, collect,
ascend, attack, trade, wait.

Access model (docs/simulator.md): the body works on blocks of reach 1 (touching the open space)
and on blocks of reach 2 after clearing the one obstruction in front of them, whose drops stay on
the ground. Drops of the requested blocks and of killed mobs are what the world's loot tables
roll, picked up while the inventory has room.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING

from compiler.rules.loot import LootContext, roll
from runtime.body.climb import climb
from runtime.contract.backend import Outcome, Transition, failure
from runtime.contract.skills import (
    FACILITIES,
    INVALID_ARGS,
    MISSING_ITEM,
    NEEDS_TOOL,
    NO_OFFER,
    NO_SPOT,
    NO_TARGET,
    PICKUP_FAILED,
    UNREACHABLE,
)

from runtime.body.blocks import physics
from .entities import distance

if TYPE_CHECKING:
    from .backend import SimBackend
    from .body import Pos


# ---------------------------------------------------------------------------- breaking blocks
def _break(sim: "SimBackend", pos: "Pos", tool: str | None) -> tuple[str, Counter[str], Transition]:
    """Break the block at ``pos`` holding ``tool``; returns (block, drops rolled, transition)."""
    block = sim.terrain.block(pos)
    table = sim.rules.block_loot(block)
    drops = roll(sim.rules, table, LootContext(tool=tool), sim.rng(f"mine:{pos}")) if table else Counter()
    sim.terrain.break_block(pos)
    return block, drops, Transition("mine", block, tool=tool)


def _clear_obstruction(sim: "SimBackend", pos: "Pos") -> tuple[str | None, Transition | None]:
    """Clear the one obstruction in front of a reach-2 block; its drops stay on the ground.

    Returns (the cleared block, its transition), or (None, None) when no obstruction in front of
    ``pos`` can be cleared with the owned tools (never a placed facility)."""
    for obstacle in sim.terrain.obstructions(pos, sim.body.pos, FACILITIES):
        can, tool = sim.body.harvest_tool(sim.terrain.block(obstacle))
        if can:
            block, drops, transition = _break(sim, obstacle, tool)
            _drop_rest(sim, drops, obstacle)
            return block, transition
    return None, None


def _drop_rest(sim: "SimBackend", items: Counter[str], pos: "Pos") -> None:
    for item, n in sorted(items.items()):
        sim.entities.drop(item, n, pos)


def mine(sim: "SimBackend", args: dict) -> Outcome:
    scan = sim.nearest_blocks(sim.block_set(args["block"]))
    if not len(scan.ids):
        return failure(NO_TARGET, f"no reachable {args['block']} within {sim.config.scan_radius:g} blocks")
    mined: Counter[str] = Counter()
    drops: Counter[str] = Counter()
    cleared: list[str] = []
    transitions: list[Transition] = []
    problem: tuple[str, str] | None = None
    refused: set[str] = set()       # blocks no owned tool harvests (the inventory is fixed until the end)
    for cell in scan.pos:
        if sum(mined.values()) == args["count"]:
            break
        pos = tuple(int(v) for v in cell)
        block = sim.terrain.block(pos)
        if block in refused:
            continue
        can, tool = sim.body.harvest_tool(block)
        if not can:
            refused.add(block)
            problem = problem or (NEEDS_TOOL, f"no owned tool harvests {block}")
            continue
        if sim.terrain.reach_at(pos) == 2:
            obstacle, transition = _clear_obstruction(sim, pos)
            if obstacle is None:
                problem = problem or (UNREACHABLE, f"cannot clear the obstruction in front of {block}")
                continue
            cleared.append(obstacle)
            transitions.append(transition)
        if sim.terrain.reach_at(pos) != 1:      # broken earlier in this call (as an obstruction)
            continue
        access = sim.terrain.open_neighbour(pos, sim.body.pos)
        if tool:
            sim.body.mainhand = tool
        block, dropped, transition = _break(sim, pos, tool)
        transitions.append(transition)
        drops.update(dropped)
        mined[block] += 1
        sim.body.pos = access
    extra = {"cleared": cleared} if cleared else {}
    if not mined:
        reason, message = problem or (NO_TARGET, f"no reachable {args['block']}")
        out = failure(reason, message, **extra)
        out.transitions = transitions
        return out
    left = sim.body.receive(drops)
    _drop_rest(sim, left, sim.body.pos)
    details = {"mined": dict(sorted(mined.items())), "collected": dict(sorted((drops - left).items())), **extra}
    if left:
        details["left_on_ground"] = dict(sorted(left.items()))
    text = ", ".join(f"{n} {b}" for b, n in sorted(mined.items()))
    return Outcome(True, f"mined {text}", None, details, transitions)


def prepare_access(sim: "SimBackend", args: dict) -> Outcome:
    scan = sim.nearest_blocks(sim.block_set(args["target"]))
    if not len(scan.ids):
        return failure(NO_TARGET, f"no {args['target']} within {sim.config.scan_radius:g} blocks")
    pos = tuple(int(v) for v in scan.pos[0])
    target = sim.terrain.block(pos)
    if scan.reach[0] == 1:
        sim.body.pos = sim.terrain.open_neighbour(pos, sim.body.pos)
        return Outcome(True, "already reachable", None, {"target": target})
    obstacle, transition = _clear_obstruction(sim, pos)
    if obstacle is None:
        return failure(UNREACHABLE, f"cannot clear the obstruction in front of {target}")
    sim.body.pos = sim.terrain.open_neighbour(pos, sim.body.pos)
    return Outcome(True, f"cleared {obstacle}", None, {"target": target, "cleared": [obstacle]}, [transition])


# ---------------------------------------------------------------------------- moving
def explore(sim: "SimBackend", args: dict) -> Outcome:
    """Look around; then recall the regions already visited (nearest first); then search new
    frontier regions, nearest first with ties broken towards the current heading."""
    target = args["target"]
    start = sim.body.pos
    found = _find(sim, target, start) or _recall(sim, target)
    searched = 0
    while found is None and searched < sim.config.explore_regions:
        region = _frontier(sim)
        if region is None:
            break
        _move_to_region(sim, region)
        searched += 1
        found = _find(sim, target, sim.body.pos)
    if found is None:
        return failure(NO_TARGET, f"searched {searched} new region(s) without finding {target}", regions=searched)
    name, pos = found
    sim.body.pos = pos
    return Outcome(True, f"found {name}", None, {"found": name, "regions": searched,
                                                 "travelled": round(distance(start, pos), 1)})


def _recall(sim: "SimBackend", target: str) -> tuple[str, "Pos"] | None:
    """The target as seen from a region the body visited before (the nearest region first)."""
    here = sim.body.pos
    size = sim.config.region_size
    for rx, rz in sorted(sim.body.visited, key=lambda r: (math.hypot(r[0] * size - here[0], r[1] * size - here[2]), r)):
        x, z = rx * size + size // 2, rz * size + size // 2
        top = sim.terrain.surface(x, z)
        found = None if top is None else _find(sim, target, (x, top, z))
        if found is not None:
            return found
    return None


def _find(sim: "SimBackend", target: str, at: "Pos") -> tuple[str, "Pos"] | None:
    """Nearest reachable block or living entity matching ``target`` seen from ``at``, and the spot
    next to it where the body ends up."""
    radius = sim.config.scan_radius
    if target in sim.rules.catalog.entities and target not in sim.rules.catalog.blocks:
        mobs = [m for m in sim.entities.alive(target) if distance(m.pos, at) <= radius]
        if not mobs:
            return None
        mob = min(mobs, key=lambda m: (distance(m.pos, at), m.pos))
        return target, tuple(math.floor(v) for v in mob.pos)
    scan = sim.terrain.scan(at, radius, sim.terrain.ids_of(sim.block_set(target)))
    if not len(scan.ids):
        return None
    pos = tuple(int(v) for v in scan.pos[0])
    spot = sim.terrain.open_neighbour(pos, at)
    if spot is None:   # reach 2: stand by its obstruction
        obstacles = sim.terrain.obstructions(pos, at)
        spot = (sim.terrain.open_neighbour(obstacles[0], at) if obstacles else None) or at
    return sim.terrain.palette[int(scan.ids[0])], spot


def _frontier(sim: "SimBackend") -> tuple[int, int] | None:
    """The next unvisited region: nearest first, then closest to the current heading.

    Searched ring by ring (Chebyshev distance k from the current region); a ring's regions are at
    least k away, so the search stops once k exceeds the best distance found."""
    size = sim.config.region_size
    ox, _, oz = sim.world.data.origin
    nx, _, nz = sim.world.data.blocks.shape
    x0, x1 = ox // size, (ox + nx - 1) // size
    z0, z1 = oz // size, (oz + nz - 1) // size
    here = sim.region(sim.body.pos)
    hx, hz = sim.body.heading
    visited = sim.body.visited
    best = None
    for k in range(max(here[0] - x0, x1 - here[0], here[1] - z0, z1 - here[1]) + 1):
        if best is not None and k > best[0][0] + 1e-5:
            break
        for rx, rz in _ring(here, k, x0, x1, z0, z1):
            if (rx, rz) in visited:
                continue
            dx, dz = rx - here[0], rz - here[1]
            dist = math.hypot(dx, dz)
            ahead = (dx * hx + dz * hz) / dist if dist else 1.0
            key = (round(dist, 6), round(-ahead, 6), rx, rz)
            if best is None or key < best[0]:
                best = (key, (rx, rz))
    return None if best is None else best[1]


def _ring(c: tuple[int, int], k: int, x0: int, x1: int, z0: int, z1: int):
    """Regions at Chebyshev distance ``k`` from ``c`` inside the bounds."""
    for rx in range(max(c[0] - k, x0), min(c[0] + k, x1) + 1):
        for rz in range(max(c[1] - k, z0), min(c[1] + k, z1) + 1):
            if max(abs(rx - c[0]), abs(rz - c[1])) == k:
                yield rx, rz


def _move_to_region(sim: "SimBackend", region: tuple[int, int]) -> None:
    size = sim.config.region_size
    ox, _, oz = sim.world.data.origin
    nx, _, nz = sim.world.data.blocks.shape
    x = min(max(region[0] * size + size // 2, ox), ox + nx - 1)
    z = min(max(region[1] * size + size // 2, oz), oz + nz - 1)
    here = sim.region(sim.body.pos)
    if region != here:
        sim.body.heading = (_sign(region[0] - here[0]), _sign(region[1] - here[1]))
    sim.body.pos = (x, sim.terrain.surface(x, z), z)
    sim.body.visited.add(region)


def _sign(v: int) -> int:
    return (v > 0) - (v < 0)


def ascend(sim: "SimBackend", args: dict) -> Outcome:
    x, y, z = sim.body.pos
    height = args["height"]
    if height == 0:
        return _climb_to_surface(sim, (x, y, z))
    scaffold = _scaffold_block(sim)
    if scaffold is None or sim.body.player.count(scaffold) < height:
        return failure(MISSING_ITEM, f"needs {height} disposable blocks", missing={"disposable block": height})
    column = [(x, y + k, z) for k in range(height + 2)]
    if not all(sim.terrain.is_open(p) and not sim.terrain.is_solid(p) for p in column):
        return failure(NO_SPOT, "no open space above")
    for pos in column[:height]:
        sim.terrain.place_block(pos, scaffold)
    sim.body.player.remove_items({scaffold: height})
    sim.body.pos = (x, y + height, z)
    return Outcome(True, f"pillared up {height} block(s)", None, {"height": height, "used": {scaffold: height}})


def _climb_to_surface(sim: "SimBackend", start: "Pos") -> Outcome:
    """``ascend(0)`` (:func:`runtime.body.climb.climb`): a dug block's drops fall to the body and
    are picked up while it has room; a pillared block is placed under the feet."""
    x, _, z = start

    def blocking(pos: "Pos") -> str | None:
        return sim.terrain.block(pos) if sim.terrain.is_solid(pos) else None

    def dig(pos: "Pos", block: str) -> Transition | Outcome:
        can, tool = sim.body.harvest_tool(block)
        if not can or block in FACILITIES or sim.terrain.reach_at(pos) != 1:
            return failure(UNREACHABLE, f"cannot dig through {block} above")
        _, drops, transition = _break(sim, pos, tool)
        _drop_rest(sim, sim.body.receive(drops), pos)
        return transition

    def pillar(block: str) -> None:
        feet = sim.body.pos
        sim.terrain.place_block(feet, block)
        sim.body.player.remove_items({block: 1})
        sim.body.pos = (x, feet[1] + 1, z)

    return climb(start, sim.terrain.surface(x, z), blocking, dig, lambda: _scaffold_block(sim), pillar)


def _scaffold_block(sim: "SimBackend") -> str | None:
    return physics().scaffold(sim.body.inventory, sim.rules.catalog.blocks)


# ---------------------------------------------------------------------------- placing and pickup
def place(sim: "SimBackend", args: dict) -> Outcome:
    block = args["block"]
    if block not in sim.rules.catalog.blocks or not physics().minable(block):
        return failure(INVALID_ARGS, f"{block} is not a placeable block")
    if sim.body.player.count(block) < 1:
        return failure(MISSING_ITEM, f"no {block} in inventory", missing={block: 1})
    spot = _open_spot(sim)
    if spot is None:
        return failure(NO_SPOT, "no open position nearby")
    sim.terrain.place_block(spot, block)
    sim.body.player.remove_items({block: 1})
    return Outcome(True, f"placed {block}", None, {"placed": block,
                                                   "distance": round(distance(spot, sim.body.pos), 1)})


def _open_spot(sim: "SimBackend") -> "Pos | None":
    """The nearest empty open cell on solid ground next to the body (not in its own column)."""
    spots = sim.terrain.open_spots(sim.body.pos, sim.config.place_radius, sim.terrain.ids_of(physics().air))
    return spots[0] if spots else None


def collect(sim: "SimBackend", args: dict) -> Outcome:
    item = args["item"]
    stacks = [s for s in sim.entities.drops
              if s.item == item and distance(s.pos, sim.body.pos) <= sim.config.collect_radius]
    if not stacks:
        return failure(NO_TARGET, f"no dropped {item} within {sim.config.collect_radius:g} blocks")
    stack = min(stacks, key=lambda s: (distance(s.pos, sim.body.pos), s.pos))
    room = min(stack.count, sim.body.room_for(item))
    if room <= 0:
        return failure(PICKUP_FAILED, "inventory is full")
    sim.entities.take(stack, room)
    sim.body.receive({item: room})
    sim.body.pos = stack.pos
    return Outcome(True, f"collected {room} {item}", None, {"collected": {item: room}})


# ---------------------------------------------------------------------------- mobs
def attack(sim: "SimBackend", args: dict) -> Outcome:
    target = args["target"]
    mobs = sorted((m for m in sim.entities.alive(target) if distance(m.pos, sim.body.pos) <= sim.config.scan_radius),
                  key=lambda m: (distance(m.pos, sim.body.pos), m.pos))
    if not mobs:
        return failure(NO_TARGET, f"no {target} within {sim.config.scan_radius:g} blocks")
    weapon = sim.body.weapon()
    if weapon:
        sim.body.mainhand = weapon
    table = sim.rules.entity_loot(target)
    drops: Counter[str] = Counter()
    transitions = []
    killed = mobs[: args["count"]]
    for mob in killed:
        mob.alive = False
        drops.update(roll(sim.rules, table, LootContext(tool=weapon, killed_by_player=True),
                          sim.rng(f"attack:{sim.entities.mobs.index(mob)}")) if table else Counter())
        transitions.append(Transition("attack", target, tool=weapon))
        sim.body.pos = tuple(math.floor(v) for v in mob.pos)
    left = sim.body.receive(drops)
    _drop_rest(sim, left, sim.body.pos)
    return Outcome(True, f"defeated {len(killed)} {target}", None,
                   {"killed": {target: len(killed)}, "collected": dict(sorted((drops - left).items()))}, transitions)


def trade(sim: "SimBackend", args: dict) -> Outcome:
    partners = [m for m in sim.entities.alive(args["with"]) if distance(m.pos, sim.body.pos) <= sim.config.scan_radius]
    if not partners:
        return failure(NO_TARGET, f"no {args['with']} nearby")
    return failure(NO_OFFER, f"{args['with']} offers no {args['get']} for {args['give']}")


def wait(sim: "SimBackend", args: dict) -> Outcome:
    """Time is semantic and the worlds are static (fixed daytime, no growth): nothing changes."""
    return Outcome(True, f"waited {args['ticks']} ticks", None, {})
