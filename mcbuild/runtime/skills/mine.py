"""``mine`` and ``prepare_access``: the body works on blocks of reach 1 and on blocks of reach 2
after clearing the one obstruction in front of them, whose drops stay on the ground; the drops
of the mined blocks are picked up while the inventory has room (docs/simulator.md)."""
from __future__ import annotations

from collections import Counter
from itertools import chain

from mcbuild.runtime.contract.backend import Outcome, Transition, failure
from mcbuild.runtime.contract.skills import NEEDS_TOOL, NO_TARGET, UNREACHABLE

from .common import block_set, clear_obstruction, harvest_tool, nearest
from .primitives import Primitives


def mine(p: Primitives, args: dict) -> Outcome:
    targets = iter(p.blocks(block_set(p, args["block"])))
    first = next(targets, None)
    if first is None:
        return failure(NO_TARGET, f"no reachable {args['block']} within {p.config.scan_radius:g} blocks")
    mined: Counter[str] = Counter()
    drops: Counter[str] = Counter()
    cleared: list[str] = []
    transitions: list[Transition] = []
    problem: tuple[str, str] | None = None
    refused: set[str] = set()       # blocks no owned tool harvests (the inventory is fixed until the end)
    for block, pos, reach in chain([first], targets):
        if sum(mined.values()) == args["count"]:
            break
        if block in refused:
            continue
        can, tool = harvest_tool(p, block)
        if not can:
            refused.add(block)
            problem = problem or (NEEDS_TOOL, f"no owned tool harvests {block}")
            continue
        if reach == 2:
            done = clear_obstruction(p, pos)
            if done is None:
                problem = problem or (UNREACHABLE, f"cannot clear the obstruction in front of {block}")
                continue
            obstacle, transition = done
            cleared.append(obstacle)
            transitions.append(transition)
        if not p.stand_by(pos):         # e.g. broken earlier in this call (as an obstruction)
            continue
        loose = p.dig(pos, block, tool, pickup=True)
        if loose is None:
            problem = problem or (UNREACHABLE, f"cannot dig {block}")
            continue
        if tool:
            p.hold(tool)
        transitions.append(Transition("mine", block, tool=tool))
        drops.update(loose)
        mined[block] += 1
    extra = {"cleared": cleared} if cleared else {}
    if not mined:
        reason, message = problem or (NO_TARGET, f"no reachable {args['block']}")
        out = failure(reason, message, **extra)
        out.transitions = transitions
        return out
    left = p.pick_up(drops)
    details = {"mined": dict(sorted(mined.items())), "collected": dict(sorted((drops - left).items())), **extra}
    if left:
        details["left_on_ground"] = dict(sorted(left.items()))
    text = ", ".join(f"{n} {b}" for b, n in sorted(mined.items()))
    return Outcome(True, f"mined {text}", None, details, transitions)


def prepare_access(p: Primitives, args: dict) -> Outcome:
    target = nearest(p, block_set(p, args["target"]))
    if target is None:
        return failure(NO_TARGET, f"no {args['target']} within {p.config.scan_radius:g} blocks")
    if target.reach == 1:
        if not p.stand_by(target.pos):
            return failure(UNREACHABLE, f"cannot reach {target.block}")
        return Outcome(True, "already reachable", None, {"target": target.block})
    done = clear_obstruction(p, target.pos)
    if done is None or not p.stand_by(target.pos):
        return failure(UNREACHABLE, f"cannot clear the obstruction in front of {target.block}")
    obstacle, transition = done
    return Outcome(True, f"cleared {obstacle}", None, {"target": target.block, "cleared": [obstacle]}, [transition])
