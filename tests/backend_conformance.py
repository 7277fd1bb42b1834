"""The backend contract, checked on every registered backend (``mcbuild.runtime.backends.registry``).

Each test opens episodes on a built world through the backend's own factory, so a new backend
passes exactly what the simulator passes: the skills' arguments and bounds, the failure reason
codes, the observation's fields and types, and determinism per seed. A backend that cannot start
here (the server backend without a Minecraft jar) is skipped with its own reason.
"""
from __future__ import annotations

import json

import pytest

from mcbuild.compiler.worlds.layout import world_dir
from mcbuild.runtime.backends import registry
from mcbuild.runtime.contract import skills
from mcbuild.runtime.contract.observation import serialize
from mcbuild.runtime.episode.episode import Episode, Setup
from mcbuild.runtime.episode.opening import save_rules
from mcbuild.runtime.errors import BackendUnavailable

OBSERVATION_FIELDS = {
    "task": dict, "next_milestone": (dict, type(None)), "budget": dict, "progress": dict, "inventory": dict,
    "equipped": dict, "experience": dict, "capabilities": dict, "facilities": dict, "nearby_targets": dict,
    "nearby_drops": dict, "nearby_entities": dict, "position": dict, "completed_advancements": list,
    "verified_action_effects": list, "vanilla_recipe_hypotheses": list, "actionable_verified_transformations": list,
    "latest_result": (dict, type(None)), "blocked_actions": list, "stagnation_warning": (dict, type(None)),
    "failure_cycle": (list, type(None)), "stagnation_cycle": (list, type(None)), "unused_output_warnings": list,
    "survival": dict, "biome": str, "minecraft_version": str, "durability": dict,
}
RESULT_FIELDS = {"skill", "args", "ok", "reason", "message", "gained", "lost"}

# (action, why it must fail, the reason code every backend reports)
BAD_ACTIONS = [
    ("not an action", "not an object", skills.INVALID_ACTION),
    ({"skill": "fly", "args": {}}, "unknown skill", skills.INVALID_ACTION),
    ({"skill": "mine", "args": {"block": "stone", "count": 5}}, "count above 4", skills.INVALID_ARGS),
    ({"skill": "mine", "args": {"block": "stone", "count": 0}}, "count below 1", skills.INVALID_ARGS),
    ({"skill": "mine", "args": {"block": "stone", "depth": 2}}, "unknown argument", skills.INVALID_ARGS),
    ({"skill": "mine", "args": {}}, "missing argument", skills.INVALID_ARGS),
    ({"skill": "mine", "args": {"block": "not_a_block"}}, "unknown block id", skills.INVALID_ARGS),
    ({"skill": "smelt", "args": {"input": "raw_iron", "count": 7}}, "count above 6", skills.INVALID_ARGS),
    ({"skill": "smelt", "args": {"input": "raw_iron", "station": "campfire"}}, "no such station",
     skills.INVALID_ARGS),
    ({"skill": "attack", "args": {"target": "player"}}, "players are never targets", skills.INVALID_ARGS),
    ({"skill": "ascend", "args": {"height": 7}}, "height above 6", skills.INVALID_ARGS),
    ({"skill": "wait", "args": {"ticks": 0}}, "ticks below 1", skills.INVALID_ARGS),
    ({"skill": "craft_grid", "args": {"station": "inventory", "grid": [["oak_planks"] * 3] * 3}},
     "a 3x3 grid in the inventory", skills.INVALID_ARGS),
    ({"skill": "craft_grid", "args": {"station": "inventory", "grid": [[None]]}}, "empty grid", skills.INVALID_ARGS),
    ({"skill": "enchant", "args": {"item": "iron_pickaxe", "option": "best"}}, "no such option", skills.INVALID_ARGS),
    ({"skill": "explore", "args": {"target": "iron_ingot"}}, "an item is not searchable", skills.NOT_SEARCHABLE),
]

# (what is given first, the action, the reason code every backend reports)
FAILURES = [
    ({}, {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["oak_log"]]}}, skills.MISSING_ITEM),
    ({"minecraft:oak_planks": 9}, {"skill": "craft_grid", "args": {"station": "crafting_table",
                                                                    "grid": [["oak_planks"] * 3] * 3}},
     skills.NEEDS_TABLE),
    ({"minecraft:raw_iron": 1, "minecraft:coal": 1}, {"skill": "smelt", "args": {"input": "raw_iron"}},
     skills.NEEDS_STATION),
    ({"minecraft:iron_pickaxe": 1, "minecraft:lapis_lazuli": 3},
     {"skill": "enchant", "args": {"item": "iron_pickaxe"}}, skills.NEEDS_TABLE),
    ({"minecraft:crafting_table": 1}, {"skill": "equip", "args": {"item": "crafting_table"}}, skills.NOT_EQUIPPABLE),
    ({}, {"skill": "equip", "args": {"item": "diamond_sword"}}, skills.MISSING_ITEM),
    ({}, {"skill": "place", "args": {"block": "furnace"}}, skills.MISSING_ITEM),
    ({}, {"skill": "collect", "args": {"item": "diamond"}}, skills.NO_TARGET),
]

SCRIPT = [
    {"skill": "explore", "args": {"target": "log"}},
    {"skill": "mine", "args": {"block": "log", "count": 2}},
    {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["oak_log"]]}},
    {"skill": "wait", "args": {"ticks": 20}},
    {"skill": "mine", "args": {"block": "stone"}},
]


@pytest.fixture(scope="module", params=registry.names())
def backend_name(request) -> str:
    try:
        registry.factory(request.param)
    except BackendUnavailable as exc:
        pytest.skip(f"backend {request.param!r} cannot start here: {exc}")
    return request.param


@pytest.fixture(scope="module")
def open_on(backend_name, world_build, built_world_ids):
    """Open an episode of ``task`` on the first built world (Vanilla) on the backend under test."""
    world = built_world_ids[0]

    def make(task: str = "enchantment", seed: int = 0, budget: int | None = None) -> Episode:
        save, twin = world_dir(world, "vanilla", world_build), world_dir(world, "vanilla", world_build)
        rules = save_rules(save)
        backend = registry.factory(backend_name).open(save, rules, seed)
        return Episode(backend, rules, save_rules(twin), Setup.of(task, budget, seed, world=world))

    return make


@pytest.mark.parametrize("action,why,reason", BAD_ACTIONS, ids=[b[1] for b in BAD_ACTIONS])
def test_invalid_actions_fail_with_their_reason_and_cost_one_action(open_on, action, why, reason):
    with open_on() as ep:
        result = ep.step(action)
        assert (result["ok"], result["reason"]) == (False, reason), why
        assert ep.used == 1 and RESULT_FIELDS <= set(result)


@pytest.mark.parametrize("given,action,reason", FAILURES, ids=[f[2] + ":" + f[1]["skill"] for f in FAILURES])
def test_failures_carry_the_body_reason_codes(open_on, given, action, reason):
    with open_on() as ep:
        if given:
            ep.provisioning.give(given)
        result = ep.step(action)
        assert (result["ok"], result["reason"]) == (False, reason), result["message"]
        assert result["reason"] in skills.REASONS and result["gained"] == {} and result["lost"] == {}


def test_every_reason_code_is_a_known_one(open_on):
    with open_on(budget=len(SCRIPT)) as ep:
        for action in SCRIPT:
            result = ep.step(action)
            assert result["ok"] or result["reason"] in skills.REASONS


def test_observation_has_the_documented_fields_and_types(open_on):
    """... and every object of it has its keys in order (the observation reads the backend's
    surroundings as sorted by key, ``Surroundings``, without sorting them again)."""
    with open_on(budget=len(SCRIPT)) as ep:
        for action in SCRIPT:
            obs = ep.observe()
            assert json.dumps(obs, separators=(",", ":"), ensure_ascii=False) == serialize(obs)
            assert set(obs) == set(OBSERVATION_FIELDS)
            for name, kind in OBSERVATION_FIELDS.items():
                assert isinstance(obs[name], kind), name
            assert set(obs["position"]) == {"x", "y", "z"} and obs["budget"]["used"] == ep.used
            ep.step(action)


def _play(make, seed: int) -> list[str]:
    with make(seed=seed, budget=len(SCRIPT)) as ep:
        seen = [serialize(ep.observe())]
        for action in SCRIPT:
            ep.step(action)
            seen.append(serialize(ep.observe()))
        return seen


def test_same_seed_same_observations(open_on):
    assert _play(open_on, 3) == _play(open_on, 3)


def test_reset_replays_the_episode(open_on):
    with open_on(seed=4, budget=len(SCRIPT)) as ep:
        first = []
        for action in SCRIPT:
            first.append(ep.step(action))
        ep.reset(4)
        assert ep.used == 0 and [ep.step(a) for a in SCRIPT] == first
