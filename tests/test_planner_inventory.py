"""The scripted planners plan with what they hold and explore only for what the worlds provide."""
from __future__ import annotations

import pytest
from test_episode import episode, mirror, twin  # noqa: F401 - the twin fixture
from test_planner import PICK, PLANKS, model

from mcbuild.compiler.planning.search import plan
from mcbuild.compiler.rules.rulebook import vanilla
from mcbuild.compiler.rules.tasks import world_resources
from mcbuild.runtime.agents.registry import create
from mcbuild.runtime.contract.skills import FACILITIES, LOG_ALIAS, LOG_TAG
from mcbuild.runtime.episode.loop import run


def test_held_items_no_step_makes_are_planned_with_up_to_the_amount_held():
    m = model()
    m.observe("mine:log", {})                 # logs and planks can no longer be made
    m.observe("attack:chest_mob", {})
    costs = m.costs()
    assert PLANKS not in costs
    route = plan(m, {PLANKS: 9.0}, (), frozenset({PICK}))     # table 4, sticks 2, pickaxe 3
    assert route and route[-1].step_key == "craft:pick"
    assert plan(m, {PLANKS: 6.0}, (), frozenset({PICK})) is None
    assert m.costs() is costs                 # costing from an inventory leaves the model's own table


@pytest.mark.parametrize("name", ["vanilla-planner", "adaptive-planner"])
def test_explores_only_for_world_resources_stations_and_logs(twin, name):
    res = world_resources()
    allowed = {*res["blocks"], *res["entities"], *FACILITIES, LOG_ALIAS, *vanilla().tag("block", LOG_TAG)}
    with episode(mirror("m04"), twin, "diamond", condition="m04") as ep:
        run(ep, create(name), 0)
        explored = {t["action"]["args"]["target"] for t in ep.trajectory if t["action"]["skill"] == "explore"}
    assert explored <= allowed, sorted(explored - allowed)
