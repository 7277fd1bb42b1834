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

from gymnasium.utils.env_checker import check_env  # noqa: E402

import mcbuild.envs as envs  # noqa: E402
from mcbuild.runtime.agents.registry import create  # noqa: E402
from mcbuild.runtime.errors import BackendUnavailable  # noqa: E402

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


def test_copy_false_hands_out_the_episodes_own_observation(world_build):
    """copy=False skips the fresh copy: the same observations, the episode's own dicts (read-only by contract,
    parts shared with later observations, which Gymnasium's passive checker warns of)."""
    envs_ = [make(world_build, budget=6, observation="state", copy=c) for c in (True, False)]
    try:
        (copied, _), (own, _) = (e.reset(seed=4) for e in envs_)
        assert copied == own and own["state"] is not copied["state"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for action in ({"skill": "mine", "args": {"block": "log"}}, {"skill": "explore", "args": {"target": "log"}}):
                copied = envs_[0].step(action)[0]
                previous, own = own, envs_[1].step(action)[0]
                assert copied == own
        from gymnasium.utils.passive_env_checker import data_shares_objects

        assert data_shares_objects(previous, own) and not data_shares_objects(copied, envs_[0].step(action)[0])
    finally:
        for e in envs_:
            e.close()
