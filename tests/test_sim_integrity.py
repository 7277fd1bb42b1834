"""Integrity and reachability controls (paper §3.7) on the synthetic world with the six compiled
suites: a fixed script that triggers no changed rule gives byte-identical observations in the
Vanilla world and every Mirror copy, and nothing the agent receives identifies the rules, the
condition or the pairing. Built worlds get the same checks in test_sim_worlds.py.
"""
from __future__ import annotations

import json

import pytest
from test_sim_rules import SUITES, suite_pack

from mcbuild.compiler.rules.rulebook import Rulebook, vanilla
from mcbuild.runtime.backends.sim import synthetic
from mcbuild.runtime.backends.sim.backend import SimBackend
from mcbuild.runtime.contract.observation import serialize
from mcbuild.runtime.contract.skills import REASONS
from mcbuild.runtime.episode.episode import Episode
from mcbuild.runtime.episode.loop import run

# Touches blocks, mobs and stations whose rules no suite changes; fails in every way it can.
SCRIPT = [
    {"skill": "mine", "args": {"block": "grass_block", "count": 2}},
    {"skill": "mine", "args": {"block": "sand", "count": 2}},
    {"skill": "mine", "args": {"block": "stone"}},
    {"skill": "place", "args": {"block": "dirt"}},
    {"skill": "equip", "args": {"item": "sand"}},
    {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["sand", "sand"], ["sand", None]]}},
    {"skill": "craft_grid", "args": {"station": "crafting_table", "grid": [["dirt"]]}},
    {"skill": "smelt", "args": {"input": "sand"}},
    {"skill": "explore", "args": {"target": "diamond_ore"}},
    {"skill": "mine", "args": {"block": "oak_leaves", "count": 3}},
    {"skill": "prepare_access", "args": {"target": "stone"}},
    {"skill": "collect", "args": {"item": "cobblestone"}},
    {"skill": "enchant", "args": {"item": "sand"}},
    {"skill": "ascend", "args": {"height": 1}},
    {"skill": "ascend", "args": {"height": 0}},
    {"skill": "attack", "args": {"target": "pig"}},
    {"skill": "trade", "args": {"give": "sand", "get": "emerald"}},
    {"skill": "explore", "args": {"target": "emerald_ore"}},
    {"skill": "wait", "args": {"ticks": 40}},
    {"skill": "fly", "args": {}},
    {"skill": "mine", "args": {"block": "stone", "count": 9}},
]


def observations(rules: Rulebook, twin: Rulebook, condition: str) -> tuple[list[str], list]:
    with Episode.from_parts(SimBackend(synthetic.static_world(), rules, 5), rules, twin, "enchantment", budget=len(SCRIPT),
                            seed=5, condition=condition) as ep:
        seen = [serialize(ep.observe())]
        for action in SCRIPT:
            ep.step(action)
            seen.append(serialize(ep.observe()))
        return seen, [e for step in ep.trajectory for e in step["evaluator"]]


@pytest.fixture(scope="module")
def twin() -> Rulebook:
    return Rulebook(packs=[synthetic.biome_pack()])


@pytest.fixture(scope="module")
def vanilla_run(twin):
    return observations(twin, twin, "vanilla")


@pytest.mark.parametrize("suite", SUITES)
def test_paired_observations_are_byte_identical(suite, twin, vanilla_run):
    rules = Rulebook(packs=[synthetic.biome_pack(), suite_pack(suite)])
    seen, events = observations(rules, twin, suite)
    assert not events and not vanilla_run[1]
    assert seen == vanilla_run[0]


def test_script_exercises_the_failure_codes(vanilla_run):
    reasons = {json.loads(o)["latest_result"]["reason"] for o in vanilla_run[0][1:]}
    assert {"needs_tool", "missing_item", "needs_table", "needs_station", "no_target", "not_enchantable",
            "invalid_action", "invalid_args"} <= reasons <= set(REASONS) | {None}


class Spy:
    """An agent that records what it is given and replays the script."""

    name = "spy"

    def reset(self, seed: int) -> None:
        self.seen: list = []
        self.script = iter(SCRIPT)

    def act(self, observation):
        self.seen.append(observation)
        return next(self.script, None)


@pytest.mark.parametrize("suite", ["m01", "m04"])
def test_agent_receives_nothing_that_identifies_rules_or_condition(suite, twin):
    rules = Rulebook(packs=[synthetic.biome_pack(), suite_pack(suite)])
    spy = Spy()
    with Episode.from_parts(SimBackend(synthetic.static_world(), rules, 1), rules, twin, "iron_armor", budget=len(SCRIPT) + 5, seed=1,
                            world="plains-9", condition=suite, biome="plains") as ep:
        run(ep, spy, 1)
        assert ep.end_reason == "no_action"
    forbidden = [suite, "plains-9", "mcbuild", "file/", ".zip", "rules", "loot_table", "changed", "evaluator",
                 *(f'"{i}"' for i in vanilla().facts["survival_unobtainable_items"])]   # whole ids: light_blue_dye is fine
    for observation in spy.seen:
        assert type(observation) is dict and json.loads(json.dumps(observation)) == observation
        text = serialize(observation)
        assert not [word for word in forbidden if word in text]
        assert not [a for a in observation["completed_advancements"] if ":recipes/" in a]   # as the server bridge
    assert set(vars(spy)) == {"seen", "script"}
