"""Server skills that move the body or change the world: mine, explore, prepare_access, place,
collect, ascend, attack, trade, wait, composed from bridge ops.

Arguments, reason codes and result fields are the simulator's (``runtime/backends/sim``); what
entered the inventory is the bridge's settled inventory difference, never a loot-table guess.
The tool and weapon are the shared body policy's choice. Access on a real server: the bot walks
next to the block (pathfinder without digging); a block behind one obstruction is reached by
digging that obstruction (its drops stay on the ground: the dig of the target picks up only the
item entities that dig spawned), as in the simulator.
"""
from __future__ import annotations

import math
import time
from collections import Counter
from typing import TYPE_CHECKING

from runtime.body.blocks import physics
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

from .bridge_client import BridgeError
from .link import Pos, distance

if TYPE_CHECKING:
    from .backend import ServerBackend



DROP_FALL_S = 1.0   # ascend(0): how long a dug block's drop may take to fall to the body


def minable(block: str) -> bool:
    """Not air, a fluid or unbreakable (the simulator's ``physics()``, catalogs/block_physics.yaml)."""
    return physics().minable(block)


def open_cell(block: str | None) -> bool:
    return block is None or block in physics().air or not physics().solid(block)


# ---------------------------------------------------------------------------- breaking blocks
def _dig(srv: "ServerBackend", block: str, pos: Pos, tool: str | None, pickup: bool) -> dict:
    args = {"x": pos[0], "y": pos[1], "z": pos[2], "pickup": pickup}
    if tool:
        args["tool"] = tool
    return srv.link.call("dig", args, 60_000)


def _clear(srv: "ServerBackend", pos: Pos, reach: int) -> tuple[str | None, Transition | None, str | None]:
    """Walk up to ``pos``; for a reach-2 block, dig the one obstruction between the bot and it
    (its drops stay on the ground).

    Returns (cleared block, its transition, None), (None, None, None) when nothing is in the way,
    or (None, None, reason) when the way cannot be cleared."""
    if not srv.link.goto(pos, 3.0):
        return None, None, UNREACHABLE
    if reach == 1:
        return None, None, None
    seen = srv.link.obstruction(pos)
    if seen is None:
        return None, None, None
    block, at = seen
    if block in FACILITIES or not minable(block):
        return None, None, UNREACHABLE
    can, tool = srv.policy.harvest_tool(block, srv.link.inventory(), srv.held())
    if not can:
        return None, None, UNREACHABLE
    try:
        _dig(srv, block, at, tool, pickup=False)
    except BridgeError:
        return None, None, UNREACHABLE
    if srv.link.obstruction(pos) is not None:
        return None, None, UNREACHABLE
    return block, Transition("mine", block, tool=tool), None


def mine(srv: "ServerBackend", args: dict) -> Outcome:
    found = srv.link.find(srv.block_set(args["block"]), srv.radius)
    if not found:
        return failure(NO_TARGET, f"no reachable {args['block']} within {srv.radius:g} blocks")
    mined: Counter[str] = Counter()
    collected: Counter[str] = Counter()
    left: Counter[str] = Counter()
    cleared: list[str] = []
    transitions: list[Transition] = []
    problem: tuple[str, str] | None = None
    for block, pos, _, reach in found[: 4 * args["count"] + 4]:
        if sum(mined.values()) == args["count"]:
            break
        can, tool = srv.policy.harvest_tool(block, srv.link.inventory(), srv.held())
        if not can:
            problem = problem or (NEEDS_TOOL, f"no owned tool harvests {block}")
            continue
        obstacle, transition, blocked = _clear(srv, pos, reach)
        if blocked:
            problem = problem or (UNREACHABLE, f"cannot clear the way to {block}")
            continue
        if obstacle:
            cleared.append(obstacle)
            transitions.append(transition)
        try:
            dug = _dig(srv, block, pos, tool, pickup=True)
        except BridgeError as err:
            if err.code != "no_target":
                problem = problem or (UNREACHABLE, f"cannot dig {block}: {err.message}")
            continue
        if tool:
            srv.mainhand = tool
        transitions.append(Transition("mine", block, tool=tool))
        mined[block] += 1
        collected.update(dug.get("gained", {}))
        left.update(dug.get("left_on_ground", {}))
    extra = {"cleared": cleared} if cleared else {}
    if not mined:
        reason, message = problem or (NO_TARGET, f"no reachable {args['block']}")
        out = failure(reason, message, **extra)
        out.transitions = transitions
        return out
    details = {"mined": dict(sorted(mined.items())), "collected": srv.visible(collected), **extra}
    if srv.visible(left):
        details["left_on_ground"] = srv.visible(left)
    text = ", ".join(f"{n} {b}" for b, n in sorted(mined.items()))
    return Outcome(True, f"mined {text}", None, details, transitions)


def prepare_access(srv: "ServerBackend", args: dict) -> Outcome:
    found = srv.link.find(srv.block_set(args["target"]), srv.radius, 1)
    if not found:
        return failure(NO_TARGET, f"no {args['target']} within {srv.radius:g} blocks")
    target, pos, _, reach = found[0]
    obstacle, transition, blocked = _clear(srv, pos, reach)
    if blocked:
        return failure(UNREACHABLE, f"cannot clear the obstruction in front of {target}")
    if obstacle is None:
        return Outcome(True, "already reachable", None, {"target": target})
    return Outcome(True, f"cleared {obstacle}", None, {"target": target, "cleared": [obstacle]}, [transition])


# ---------------------------------------------------------------------------- moving
def _sighting(srv: "ServerBackend", target: str) -> tuple[str, Pos] | None:
    catalog = srv.rules.catalog
    if target in catalog.entities and target not in catalog.blocks:
        mobs = srv.link.living(srv.radius, target)
        return (target, tuple(math.floor(v) for v in mobs[0]["position"])) if mobs else None
    found = srv.link.find(srv.block_set(target), srv.radius, 1)
    return (found[0][0], found[0][1]) if found else None


def explore(srv: "ServerBackend", args: dict) -> Outcome:
    """Look around; else walk to up to ``explore_regions`` new chunk columns (nearest first, ties
    towards the current heading) and look again."""
    target = args["target"]
    start = srv.position()
    found = _sighting(srv, target)
    searched = 0
    while found is None and searched < srv.explore_regions:
        region = srv.frontier()
        size = srv.region_size
        here = srv.position()
        goal = (region[0] * size + size // 2, here[1], region[1] * size + size // 2)
        srv.heading_to(region)
        srv.link.goto(goal, 6.0, 30_000)
        srv.visited.add(region)
        srv.visited.add(srv.region(srv.position()))
        searched += 1
        found = _sighting(srv, target)
    if found is None:
        return failure(NO_TARGET, f"searched {searched} new region(s) without finding {target}", regions=searched)
    name, pos = found
    srv.link.goto(pos, 2.0)
    return Outcome(True, f"found {name}", None, {"found": name, "regions": searched,
                                                 "travelled": round(distance(start, srv.position()), 1)})


def ground(block: str | None) -> bool:
    """What the body stands on or swims in: a solid block or a fluid (the simulator's ground)."""
    return block is not None and (physics().solid(block) or block in physics().fluids)


def ascend(srv: "ServerBackend", args: dict) -> Outcome:
    """``ascend(0)``: climb the column to its surface as the simulator does (dig above the head,
    pillar one block, repeat). ``ascend(h)``: pillar ``h`` blocks with the scaffold block, the
    simulator's checks first."""
    height = args["height"]
    x, y, z = srv.position()
    if height == 0:
        return _climb_to_surface(srv, x, y, z)
    scaffold = scaffold_block(srv)
    if scaffold is None or srv.link.inventory().get(scaffold, 0) < height:
        return failure(MISSING_ITEM, f"needs {height} disposable blocks", missing={"disposable block": height})
    if not all(open_cell(b) for b in srv.link.column(x, z, y, y + height + 1)[0]):
        return failure(NO_SPOT, "no open space above")
    done = _pillar(srv, height, scaffold)
    if isinstance(done, Outcome):
        return done
    return Outcome(True, f"pillared up {done['height']} block(s)", None,
                   {"height": done["height"], "used": srv.visible(done.get("lost", {}))})


def _pillar(srv: "ServerBackend", height: int, scaffold: str) -> dict | Outcome:
    """The bridge's ``pillar`` op, its refusals as the simulator's failures."""
    try:
        return srv.link.call("pillar", {"height": height, "item": scaffold}, 30_000 + 5_000 * height)
    except BridgeError as err:
        if err.code in (NO_SPOT, "place_failed"):
            return failure(NO_SPOT, "no open space above")
        if err.code == MISSING_ITEM:
            return failure(MISSING_ITEM, f"needs {height} disposable blocks", missing={"disposable block": height})
        raise


def _climb_to_surface(srv: "ServerBackend", x: int, y: int, z: int) -> Outcome:
    """``ascend(0)`` (:func:`runtime.body.climb.climb`) up to the feet height of the column's
    highest ground: a dug block's drops fall down the shaft to the body, which picks them up as
    any player does (no walking after them)."""
    cells, bottom = srv.link.column(x, z, y)
    filled = [bottom + k for k, b in enumerate(cells) if ground(b)]

    def blocking(pos: Pos) -> str | None:
        block = srv.link.block_at(pos)
        return None if open_cell(block) else block

    def dig(pos: Pos, block: str) -> Transition | Outcome:
        can, tool = srv.policy.harvest_tool(block, srv.link.inventory(), srv.held())
        if not can or not minable(block) or block in FACILITIES:
            return failure(UNREACHABLE, f"cannot dig through {block} above")
        _dig(srv, block, pos, tool, pickup=False)
        return Transition("mine", block, tool=tool)

    def scaffold() -> str | None:
        block = scaffold_block(srv)
        if block is None:                       # a dug block's drop may still be on its way down
            time.sleep(DROP_FALL_S)
            block = scaffold_block(srv)
        return block

    def pillar(block: str) -> Outcome | None:
        done = _pillar(srv, 1, block)
        return done if isinstance(done, Outcome) else None

    return climb((x, y, z), max(filled) + 1 if filled else y, blocking, dig, scaffold, pillar)


def scaffold_block(srv: "ServerBackend") -> str | None:
    return physics().scaffold(srv.link.inventory(), srv.rules.catalog.blocks)


# ---------------------------------------------------------------------------- placing and pickup
def place(srv: "ServerBackend", args: dict) -> Outcome:
    block = args["block"]
    if block not in srv.rules.catalog.blocks or not minable(block):
        return failure(INVALID_ARGS, f"{block} is not a placeable block")
    if srv.link.inventory().get(block, 0) < 1:
        return failure(MISSING_ITEM, f"no {block} in inventory", missing={block: 1})
    try:
        done = srv.link.call("place", {"item": block, "radius": srv.place_radius})
    except BridgeError as err:
        if err.code in (NO_SPOT, "place_failed"):
            return failure(NO_SPOT, "no open position nearby")
        raise
    return Outcome(True, f"placed {block}", None, {"placed": block,
                                                   "distance": round(distance(done["position"], srv.position()), 1)})


def collect(srv: "ServerBackend", args: dict) -> Outcome:
    """Pick up the nearest dropped stack of the item (the simulator's order of checks: a stack in
    range, then room for it); the bridge walks over that stack only."""
    item = args["item"]
    if not any(d["item"]["id"] == item for d in srv.link.drops(srv.collect_radius)):
        return failure(NO_TARGET, f"no dropped {item} within {srv.collect_radius:g} blocks")
    if srv.policy.room_for(item, srv.link.inventory()) <= 0:
        return failure(PICKUP_FAILED, "inventory is full")
    try:
        done = srv.link.call("collect", {"item": item, "radius": srv.collect_radius})
    except BridgeError as err:
        if err.code == NO_TARGET:
            return failure(NO_TARGET, f"no dropped {item} within {srv.collect_radius:g} blocks")
        raise
    got = done.get("gained", {}).get(item, 0)
    if got <= 0:
        return failure(PICKUP_FAILED, "inventory is full")
    return Outcome(True, f"collected {got} {item}", None, {"collected": {item: got}})


# ---------------------------------------------------------------------------- mobs
def attack(srv: "ServerBackend", args: dict) -> Outcome:
    target = args["target"]
    if not srv.link.living(srv.radius, target):
        return failure(NO_TARGET, f"no {target} within {srv.radius:g} blocks")
    weapon = srv.policy.weapon(srv.link.inventory(), srv.held())
    call = {"type": target, "count": args["count"], "radius": srv.radius}
    if weapon:
        call["weapon"] = weapon
    try:
        done = srv.link.call("attack", call, 30_000 * args["count"] + 10_000)
    except BridgeError as err:
        if err.code == NO_TARGET:
            return failure(NO_TARGET, f"no {target} within {srv.radius:g} blocks")
        raise
    if weapon:
        srv.mainhand = weapon
    killed = int(done["killed"].get(target, 0))
    return Outcome(True, f"defeated {killed} {target}", None,
                   {"killed": {target: killed}, "collected": srv.visible(done.get("gained", {}))},
                   [Transition("attack", target, tool=weapon)] * killed)


def trade(srv: "ServerBackend", args: dict) -> Outcome:
    if not srv.link.living(srv.radius, args["with"]):
        return failure(NO_TARGET, f"no {args['with']} nearby")
    return failure(NO_OFFER, f"{args['with']} offers no {args['get']} for {args['give']}")


def wait(srv: "ServerBackend", args: dict) -> Outcome:
    """The worlds are static (fixed daytime, no growth): wait at most the catalog's
    ``static_world_wait_ticks`` real ticks."""
    facts = srv.rules.facts
    time.sleep(min(args["ticks"], int(facts["static_world_wait_ticks"])) / int(facts["ticks_per_second"]))
    return Outcome(True, f"waited {args['ticks']} ticks", None, {})
