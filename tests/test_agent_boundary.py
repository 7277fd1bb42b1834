"""The agent boundary: nothing an agent receives (its observations, and for LLM agents every
prompt, see ``test_agents_prompts``) names the condition, a rule, a pack or a path.

Scripted agents run in-process as trusted code (docs/agents.md): this test pins what they are
*given*, on a real built Mirror save opened the way a study opens it.
"""
from __future__ import annotations

import json
import re

import pytest

from runtime.agents.registry import create
from runtime.episode.loop import run
from runtime.episode.opening import open_episode

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


def _forbidden(world_build, suites) -> list[str]:
    sheet = suites[CONDITION].files["rules.md"].decode()
    rules = [re.sub(r"^\d+\.\s*", "", ln.strip().lstrip("#").strip()) for ln in sheet.splitlines()]
    changes = [c["id"] for c in json.loads(suites[CONDITION].files["report.json"])["changes"]]
    return ([r for r in rules if len(r) > 24] + changes
            + [str(world_build), "/worlds/", "level.dat", ".mca", ".zip", "datapack", "file/", "rules.md",
               "mcbuild:", "mirror"])


@pytest.mark.parametrize("name", ["vanilla-planner", "adaptive-planner"])
def test_scripted_agents_receive_no_condition_rule_pack_or_path(world_build, built_world_ids, suites, name):
    world = built_world_ids[0]
    agent = Recording(create(name, seed=0))
    with open_episode(world, CONDITION, "iron_armor", 12, 0, build=world_build) as ep:
        run(ep, agent, 0)
    text = json.dumps(agent.received, default=str).lower()
    assert len(agent.received) > 2
    found = [f for f in _forbidden(world_build, suites) if f.lower() in text]
    found += re.findall(r"\bm0[1-6]\b|\bvanilla\b", text)      # a condition id (keys like vanilla_recipe_... are the same everywhere)
    assert found == []
