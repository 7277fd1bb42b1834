"""Test-only helpers over a simulated body: a Vanilla backend on the synthetic world with stations
placed, an action run by name, and ``holding`` (the inventory reset), which nothing an agent can
call is able to do."""
from __future__ import annotations

from typing import Iterable, Mapping

from mcbuild.compiler.rules.rulebook import Rulebook
from mcbuild.runtime.backends.sim import synthetic
from mcbuild.runtime.backends.sim.backend import SimBackend
from mcbuild.runtime.contract.backend import Outcome
from mcbuild.runtime.contract.skills import validate


def with_stations(stations: Iterable[str]) -> SimBackend:
    """A Vanilla backend on the synthetic world with one of each of ``stations`` placed."""
    backend = SimBackend(synthetic.static_world(), Rulebook(packs=[synthetic.biome_pack()]), seed=0)
    stations = list(stations)
    backend.body.receive({s: 1 for s in stations})
    for station in stations:
        assert run(backend, "place", block=station).ok
    return backend


def run(sim: SimBackend, skill: str, **args) -> Outcome:
    return sim.execute(validate({"skill": skill, "args": args}, sim.rules.catalog))


def holding(sim: SimBackend, items: Mapping[str, int]) -> None:
    """The body holds exactly ``items``."""
    sim.body.player.inventory.clear()
    sim.body.receive(items)
