"""``explore``: look around; then recall the regions already visited; then search new frontier
regions (chunk columns), nearest first with ties broken towards the current heading."""
from __future__ import annotations

import math
from typing import Iterator

from mcbuild.runtime.contract.backend import Outcome, failure
from mcbuild.runtime.contract.skills import NO_TARGET

from .common import region_of
from .primitives import Primitives, Region


def explore(p: Primitives, args: dict) -> Outcome:
    target = args["target"]
    start = p.position()
    found = p.sight(target) or p.recall(target)
    searched = 0
    while found is None and searched < p.config.explore_regions:
        region = frontier(p)
        if region is None:
            break
        here = region_of(p.position(), p.config.region_size)
        if region != here:
            p.heading = (_sign(region[0] - here[0]), _sign(region[1] - here[1]))
        p.travel(region)
        p.visited.add(region)
        p.visited.add(region_of(p.position(), p.config.region_size))
        searched += 1
        found = p.sight(target)
    if found is None:
        return failure(NO_TARGET, f"searched {searched} new region(s) without finding {target}", regions=searched)
    name, spot = found
    p.go(spot)
    return Outcome(True, f"found {name}", None, {"found": name, "regions": searched,
                                                 "travelled": round(math.dist(start, p.position()), 1)})


def frontier(p: Primitives) -> Region | None:
    """The next unvisited region: nearest first, then closest to the current heading.

    Searched ring by ring (Chebyshev distance k from the current region); a ring's regions are at
    least k away, so the search stops once k exceeds the best distance found."""
    x0, x1, z0, z1 = p.bounds()
    here = region_of(p.position(), p.config.region_size)
    hx, hz = p.heading
    visited = p.visited
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


def _ring(c: Region, k: int, x0: int, x1: int, z0: int, z1: int) -> Iterator[Region]:
    """Regions at Chebyshev distance ``k`` from ``c`` inside the bounds."""
    for rx in range(max(c[0] - k, x0), min(c[0] + k, x1) + 1):
        for rz in range(max(c[1] - k, z0), min(c[1] + k, z1) + 1):
            if max(abs(rx - c[0]), abs(rz - c[1])) == k:
                yield rx, rz


def _sign(v: int) -> int:
    return (v > 0) - (v < 0)
