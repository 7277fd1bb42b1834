"""The bounds of the body's bounded behaviour, the same on every backend (docs/simulator.md):
how far it scans and collects, how it explores, where it places, how much it carries."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BodyConfig:
    """Bounds of the body's bounded behaviour."""

    scan_radius: float = 32.0       # nearby targets, entities, drops, facilities; mine/attack/station reach
    collect_radius: float = 12.0    # collect(item) (paper L.9)
    explore_regions: int = 4        # new frontier regions searched per explore call
    region_size: int = 16           # exploration regions are chunk columns
    place_radius: int = 3           # open spots considered by place
    inventory_slots: int = 36
    max_health: float = 20.0
    max_food: int = 20
