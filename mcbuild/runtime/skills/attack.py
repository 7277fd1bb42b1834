"""``attack`` and ``trade``: the nearest living targets in range, hit with the body's weapon
(``Policy.weapon``: one that survives the hits first), which wears; a kill's drops are what the
world's loot tables give, picked up while the inventory has room."""
from __future__ import annotations

from mcbuild.runtime.contract.backend import Outcome, Transition, failure
from mcbuild.runtime.contract.skills import NO_OFFER, NO_TARGET

from .common import Worn
from .primitives import Primitives, Refused


def attack(p: Primitives, args: dict) -> Outcome:
    target = args["target"]
    if not p.living(target):
        return failure(NO_TARGET, f"no {target} within {p.config.scan_radius:g} blocks")
    weapon = p.policy.weapon(p.inventory(), p.held(), p.copies, target, args["count"])
    worn = Worn(p)
    worn.use(weapon)
    if weapon:
        p.hold(weapon)
    try:
        killed, loose = p.kill(target, args["count"], weapon)
    except Refused as refused:
        return worn.report(refused.outcome())
    left = p.pick_up(loose)
    return worn.report(Outcome(True, f"defeated {killed} {target}", None,
                               {"killed": {target: killed}, "collected": dict(sorted((loose - left).items()))},
                               [Transition("attack", target, tool=weapon)] * killed))


def trade(p: Primitives, args: dict) -> Outcome:
    """The body knows no trade offers: a partner in range offers nothing."""
    if not p.living(args["with"]):
        return failure(NO_TARGET, f"no {args['with']} nearby")
    return failure(NO_OFFER, f"{args['with']} offers no {args['get']} for {args['give']}")
