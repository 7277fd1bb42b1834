"""The agent boundary: nothing an agent receives (its observations, and for LLM agents every
prompt, see ``test_agents_prompts``) names the condition, a rule, a pack or a path.

Scripted agents run in-process as trusted code (docs/agents.md): this test pins what they are
*given*, on a real built Mirror save opened the way a study opens it.
"""
from __future__ import annotations

import json
import re

import pytest

from mcbuild.runtime.agents.registry import create
from mcbuild.runtime.episode.loop import run
from mcbuild.runtime.episode.opening import open_episode

CONDITION = "m04"


class Recording:
    """Wraps an agent and keeps every argument it is given."""

    def __init__(self, agent):
        self.agent, self.received = agent, []

    def reset(self, seed, *args, **kwargs):
        self.received.append([seed, args, kwargs])
        return self.agent.reset(seed, *args, **kwargs)

    def act(self, observation):
        self.received.append(observation)
        return self.agent.act(observation)


def _forbidden(world_build, suites, condition: str = CONDITION) -> list[str]:
    sheet = suites[condition].files["rules.md"].decode()
    rules = [re.sub(r"^\d+\.\s*", "", ln.strip().lstrip("#").strip()) for ln in sheet.splitlines()]
    changes = [c["id"] for c in json.loads(suites[condition].files["report.json"])["changes"]]
    return ([r for r in rules if len(r) > 24] + changes
            + [str(world_build), "/worlds/", "level.dat", ".mca", ".zip", "datapack", "file/", "rules.md",
               "mcbuild:", "mirror"])


@pytest.mark.parametrize("name", ["vanilla-planner", "adaptive-planner"])
def test_scripted_agents_receive_no_condition_rule_pack_or_path(world_build, built_world_ids, suites, name):
    world = built_world_ids[0]
    agent = Recording(create(name))
    with open_episode(world, CONDITION, "iron_armor", 12, 0, build=world_build) as ep:
        run(ep, agent, 0)
    text = json.dumps(agent.received, default=str).lower()
    assert len(agent.received) > 2
    found = [f for f in _forbidden(world_build, suites) if f.lower() in text]
    found += re.findall(r"\bm0[1-6]\b|\bvanilla\b", text)      # a condition id (keys like vanilla_recipe_... are the same everywhere)
    assert found == []


def _first_trigger(steps) -> tuple[int, set[str]]:
    """The action index of the first changed-rule trigger and every rule id that fired."""
    fired = [(e["action"], e["rule"]) for t in steps for e in t["evaluator"]]
    assert fired, "the episode never passed a changed rule's trigger: the test would prove nothing"
    return min(i for i, _ in fired), {rule for _, rule in fired}


class Indexed(Recording):
    """Keeps each observation with the number of actions taken before it (its ``used`` count)."""

    def __init__(self, agent, episode_used):
        super().__init__(agent)
        self.used = episode_used

    def act(self, observation):
        self.received.append((self.used(), observation))
        return self.agent.act(observation)

    def model_use(self):
        return self.agent.model_use()


def _mine_birch(messages):
    return json.dumps({"thought": "t", "subgoal": "minecraft:birch_log", "skill": "mine",
                       "args": {"block": "minecraft:birch_log", "count": 1}})


@pytest.mark.parametrize("name,condition", [("vanilla-planner", "m01"), ("adaptive-planner", "m01"),
                                            ("react", "m02")])
def test_after_a_changed_rule_fires_nothing_the_agent_gets_names_it(world_build, suites, name, condition):
    """Every observation (and for an LLM agent every prompt) after the first action that triggered a
    changed rule: no id of a changed rule, no pack, no path, no condition."""
    from mcbuild.llm.testing import ScriptedEndpoint

    world = "plains-1"
    with ScriptedEndpoint(_mine_birch) as endpoint, \
            open_episode(world, condition, "iron_armor", 12, 0, build=world_build) as ep:
        options = {"settings": endpoint.settings()} if name == "react" else {}
        agent = Indexed(create(name, **options), lambda: ep.used)
        run(ep, agent, 0)
        first, rules = _first_trigger(ep.trajectory)
        calls = agent.agent.calls if name == "react" else []
    after = [obs for used, obs in agent.received[1:] if used >= first]
    prompts = [m["content"] for c in calls[first:] for m in c["messages"]] if calls else []
    assert after and (prompts or name != "react")
    changes = [c["id"] for c in json.loads(suites[condition].files["report.json"])["changes"]]
    forbidden = sorted(rules) + changes + [str(world_build), "/worlds/", "level.dat", ".mca", ".zip", "datapack",
                                           "file/", "rules.md", "report.json", "mcbuild:", "mirror"]
    text = (json.dumps(after, default=str) + "\n".join(prompts)).lower()
    found = [f for f in forbidden if f.lower() in text]
    found += re.findall(r"\bm0[1-6]\b|\bvanilla\b", text)
    assert found == []


@pytest.mark.parametrize("condition", ["m01", "m04"])
def test_the_environment_shows_no_evaluator_event_rule_pack_or_path(world_build, suites, condition):
    """mcbuild/MirrorCraft-v0: every observation (text and dict), every info and every rendering of an
    episode that met its changed rules name no changed rule, pack, path or condition."""
    gymnasium = pytest.importorskip("gymnasium")
    import mcbuild.envs as envs

    env = gymnasium.make(envs.ENV_ID, world="plains-1", condition=condition, task="iron_armor", budget=25,
                         build=world_build, render_mode="ansi")
    agent = create("adaptive-planner")
    agent.reset(0)
    try:
        obs, info = env.reset(seed=0)
        seen, done = [obs, info, env.render()], False
        while not done:
            obs, reward, terminated, truncated, info = env.step(agent.act(obs["state"]))
            seen += [obs, info, env.render()]
            done = terminated or truncated
        _, rules = _first_trigger(env.unwrapped._episode.trajectory)
    finally:
        env.close()
    events = ["evaluator", "encounter", "changed_rules", '"rule"']
    text = json.dumps(seen, default=dict).lower()     # a state is a read-only mapping
    found = [f for f in sorted(rules) + _forbidden(world_build, suites, condition) + events if f.lower() in text]
    found += re.findall(r"\bm0[1-6]\b|\bvanilla\b", text)
    assert found == []
