"""The Gymnasium environment mcbuild/MirrorCraft-v0 on the simulator: Gymnasium's own env checker,
its registration (entry point and module id), rewards, termination, reason codes, seeding and the
paired Vanilla/Mirror helper. The server backend: tests/test_env_server.py; the agent boundary:
tests/test_agent_boundary.py."""
from __future__ import annotations

import subprocess
import sys
import warnings
from importlib.metadata import entry_points

import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env

import mcbuild.envs as envs
from mcbuild.runtime.agents.registry import create
from mcbuild.runtime.errors import BackendUnavailable

WORLD = "plains-1"


def make(world_build, **kw):
    return gymnasium.make(envs.ENV_ID, **{"world": WORLD, "condition": "m04", "task": "iron_armor",
                                          "build": world_build, **kw})


@pytest.mark.parametrize("observation", ["both", "state"])
def test_gymnasium_check_env_passes_with_every_warning_an_error(world_build, observation):
    env = make(world_build, budget=8, observation=observation)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.filterwarnings("ignore", category=ResourceWarning)
            check_env(env.unwrapped)
    finally:
        env.close()


def test_registered_through_the_entry_point_and_the_module_id(world_build):
    (ep,) = [e for e in entry_points(group="gymnasium.envs") if e.value.startswith("mcbuild.")]
    assert (ep.name, ep.value) == ("mcbuild", "mcbuild.envs:register_envs")
    from gymnasium.envs.registration import namespace, registry

    registry.pop(envs.ENV_ID, None)
    with namespace(ep.name):               # what Gymnasium 0.26-0.29 do for each plugin on import
        ep.load()()
    assert registry[envs.ENV_ID].entry_point == envs.ENTRY_POINT
    code = ("import gymnasium, sys; env = gymnasium.make('mcbuild.envs:mcbuild/MirrorCraft-v0', world='plains-1', "
            f"condition='m04', task='iron_armor', build={str(world_build)!r}); obs, info = env.reset(seed=1); "
            "print(sorted(obs), info['budget']['total']); env.close()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "['state', 'text'] 50"


def play(env, seed: int):
    """The adaptive planner acting on the environment's structured observations until the episode ends."""
    agent = create("adaptive-planner")
    agent.reset(seed)
    obs, info = env.reset(seed=seed)
    steps = [(obs, 0.0, False, False, info)]
    while not (steps[-1][2] or steps[-1][3]):
        steps.append(env.step(agent.act(steps[-1][0]["state"])))
    return steps


def test_rewards_add_up_to_the_score_and_the_final_milestone_terminates(world_build):
    env = make(world_build, condition="vanilla", observation="state")
    try:
        steps = play(env, 3)
        last = steps[-1]
        assert last[2] and not last[3] and last[4]["end_reason"] == "final_milestone"
        assert sum(s[1] for s in steps) == last[4]["score"] == 100.0
        assert all(s[1] >= 0 for s in steps)
        assert last[4]["milestones"] == ["mine_stone", "upgrade_tools", "smelt_iron", "obtain_armor"]
        assert last[4]["budget"]["used"] == len(steps) - 1
        with pytest.raises(gymnasium.error.ResetNeeded):
            env.step({"skill": "wait", "args": {}})
    finally:
        env.close()


def test_the_budget_truncates_and_info_carries_the_reason_codes(world_build):
    env = make(world_build, budget=3)
    try:
        env.reset(seed=0)
        _, r, term, trunc, info = env.step({"skill": "fly", "args": {}})
        assert (r, term, trunc) == (0.0, False, False)
        assert (info["skill"], info["ok"], info["reason"]) == ("fly", False, "invalid_action")
        _, _, _, _, info = env.step({"skill": "mine", "args": {"block": "minecraft:diamond_ore", "count": 1}})
        assert info["ok"] is False and info["reason"] in ("needs_tool", "no_target", "unreachable")
        _, _, term, trunc, info = env.step({"skill": "mine", "args": {"block": "log", "count": 1}})
        assert info["ok"] is True and info["reason"] is None
        assert (term, trunc, info["end_reason"], info["budget"]) == (False, True, "budget_exhausted",
                                                                     {"used": 3, "remaining": 0, "total": 3})
    finally:
        env.close()


def test_same_seed_same_episode_and_fresh_observations(world_build):
    env = make(world_build, budget=12)
    try:
        a, b = play(env, 7), play(env, 7)
        assert [(s[0], s[1], s[4]) for s in a] == [(s[0], s[1], s[4]) for s in b]
        assert a[0][0]["state"] is not b[0][0]["state"]
        a[1][0]["state"]["inventory"]["minecraft:stone"] = 999          # a consumer may change what it got
        assert play(env, 7)[1][0] == b[1][0]
    finally:
        env.close()


def test_the_sampled_actions_are_valid_and_seeded(world_build):
    env = make(world_build, observation="state")
    try:
        env.action_space.seed(5)
        first = [env.action_space.sample() for _ in range(40)]
        env.action_space.seed(5)
        assert [env.action_space.sample() for _ in range(40)] == first
        assert all(env.action_space.contains(a) for a in first)
        assert len({a["skill"] for a in first}) > 6
        assert not env.action_space.contains({"skill": "mine", "args": {"block": "minecraft:not_a_block"}})
    finally:
        env.close()


def test_unknown_names_and_backends_fail_at_make(world_build, monkeypatch):
    from mcbuild.runtime.backends import registry
    from mcbuild.runtime.backends.server import config as server_config
    from mcbuild.runtime.episode.opening import UnknownName

    with pytest.raises(UnknownName, match="unknown condition 'm99'"):
        make(world_build, condition="m99")
    with pytest.raises(ValueError, match="observation 'pixels'"):
        make(world_build, observation="pixels")
    monkeypatch.delenv(server_config.JAR_ENV, raising=False)
    monkeypatch.delitem(registry._OPEN, "server", raising=False)
    with pytest.raises(BackendUnavailable, match="MCBUILD_SERVER_JAR"):
        make(world_build, backend="server")


def test_a_pair_is_the_vanilla_and_mirror_copies_with_one_seed(world_build):
    """Both start from the same observation; the same actions then diverge exactly when a changed rule
    (M04: iron ore drops a raw iron block) is met."""
    with envs.make_pair(WORLD, "m04", "iron_armor", seed=11, build=world_build) as pair:
        vanilla_obs, mirror_obs = pair.observations
        assert vanilla_obs == mirror_obs
        assert pair.vanilla.unwrapped._opening.condition == "vanilla"
        assert pair.mirror.unwrapped._opening.condition == "m04"
        agent = create("adaptive-planner")
        agent.reset(11)
        obs, diverged = vanilla_obs, None
        for _ in range(50):
            action = agent.act(obs["state"])
            ov, _, tv, uv, _ = pair.vanilla.step(action)
            om, _, _, _, _ = pair.mirror.step(action)
            if ov["state"]["inventory"] != om["state"]["inventory"]:
                diverged = action
                break
            obs = ov
            assert not (tv or uv)
        assert diverged is not None and diverged["skill"] == "mine" and "iron_ore" in diverged["args"]["block"]
        assert pair.reset(11) == (vanilla_obs, mirror_obs)
    with pytest.raises(ValueError, match="give the suite"):
        envs.make_pair(WORLD, "vanilla", "iron_armor", seed=1, build=world_build)


def _vandalize(state) -> None:
    """Change every mutable thing a consumer can reach in a structured observation."""
    stack = [state[key] for key in state]
    for mutate in (lambda: state.__setitem__("vandal", 1), lambda: state.__delitem__("minecraft_version")):
        try:
            mutate()
        except (TypeError, AttributeError):
            pass
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack += list(value.values())
            value["vandal"] = 1
            for k in [k for k in value if k != "vandal"][:1]:
                value[k] = "vandal"
        elif isinstance(value, list):
            stack += value
            value.append("vandal")
            value.insert(0, "vandal")


def test_an_observation_never_changes_and_changing_one_changes_nothing_else(world_build):
    """The default observation is safe to keep and to change: every observation reads, however late, as the
    episode's observation did when it was handed out, and changing every part of one (the recipe hypotheses'
    grids, the verified effects, the latest result...) changes neither the episode nor a later observation. A
    bare Episode played with the same seed and actions is the reference."""
    from mcbuild.runtime.agents.llm.rendering import observation_text
    from mcbuild.runtime.contract.observation import serialize
    from mcbuild.runtime.episode.opening import open_episode

    env = make(world_build, condition="vanilla", observation="both")
    agent = create("adaptive-planner")
    agent.reset(5)
    kept: list[tuple[dict, str]] = []          # each observation and the reference's, serialized
    try:
        with open_episode(WORLD, "vanilla", "iron_armor", None, 5, build=world_build) as reference:
            obs, _ = env.reset(seed=5)
            done = False
            while not done:
                want = serialize(reference.observe())
                assert obs["text"] == observation_text(reference.observe())
                changed = len(kept) % 2 == 1    # the others: read only by the planner until the end
                if changed:
                    assert serialize(dict(obs["state"])) == want
                action = agent.act(obs["state"])
                kept.append((obs, want))
                if changed:
                    _vandalize(obs["state"])
                    assert serialize(env.unwrapped._episode.observe()) == want, "the episode changed"
                    with pytest.raises(TypeError):
                        obs["state"]["inventory"] = {}
                reference.step(action)
                obs, _, terminated, truncated, _ = env.step(action)
                done = terminated or truncated
            assert reference.done and len(kept) > 20
        for i, (obs, want) in enumerate(kept[::2]):
            assert serialize(dict(obs["state"])) == want, f"observation {2 * i} changed"
    finally:
        env.close()


def test_the_state_reads_copies_and_pickles_and_compares_as_a_dict(world_build):
    """The default state copies a part when first read (the same copy when read again, never shared with
    another observation, so Gymnasium's reuse check passes); ``copy=True`` copies the whole observation into a
    plain dict every step; both hold the same values, and a state pickles, deep-copies and JSON-dumps as that
    dict."""
    import copy
    import json
    import pickle

    from gymnasium.utils.passive_env_checker import data_shares_objects

    from mcbuild.envs.state import State

    envs_ = [make(world_build, budget=6, observation="state", copy=c) for c in (False, True)]
    try:
        (state, _), (copied, _) = (e.reset(seed=4) for e in envs_)
        action = {"skill": "mine", "args": {"block": "log"}}
        (after, *_), (copied_after, *_) = (e.step(action) for e in envs_)
        assert type(state["state"]) is State and type(copied["state"]) is dict
        assert state == copied and after == copied_after and state != after
        first, second = state["state"], after["state"]
        assert first["task"] is first["task"] and first["task"] is not second["task"]
        assert not data_shares_objects(dict(first), dict(second))
        for twin in (pickle.loads(pickle.dumps(second)), copy.deepcopy(second)):
            assert type(twin) is State and twin == second == copied_after["state"]
        assert json.loads(json.dumps(second, default=dict)) == copied_after["state"]
        with pytest.raises(AttributeError):
            second._source = {}
    finally:
        for e in envs_:
            e.close()


def _containers(value, found=None) -> set[int]:
    found = set() if found is None else found
    if isinstance(value, (dict, list, tuple)):
        found.add(id(value))
        for v in value.values() if isinstance(value, dict) else value:
            _containers(v, found)
    return found


def test_a_state_shares_no_container_with_the_episodes_observation():
    """Every dict and list a State hands out is its own copy, whichever way it is copied (in Python for small
    parts, by orjson for long lists of objects); a tuple comes out as a list, as JSON has it; a value that is
    not JSON is refused."""
    from mcbuild.envs.state import State

    source = {"flat": {"a": 1, "b": None}, "nested": {"args": {"grid": [["x", None], ["y", "z"]]}, "ok": True},
              "long": [{"n": i, "tags": [str(i)]} for i in range(20)], "pair": (1, {"c": [2]}), "n": 3,
              "odd": {1, 2}}
    before = repr(source)
    state = State(source)
    parts = {k: state[k] for k in source if k != "odd"}
    assert parts == {k: v for k, v in source.items() if k != "odd"} | {"pair": [1, {"c": [2]}]}
    assert state.get("missing", 7) == 7 and len(state) == 6 and "odd" in state
    assert not _containers(parts) & _containers(source)
    for part in parts.values():
        if isinstance(part, dict):
            part.clear()
        elif isinstance(part, list):
            part.append("x")
    assert repr(source) == before and state["nested"] == {}          # the copy read is kept: it is yours
    with pytest.raises(TypeError):
        state["odd"]
