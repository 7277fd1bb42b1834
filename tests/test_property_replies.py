"""Property: whatever a model replies (JSON of any shape, near-miss actions, garbage text), every
LLM configuration repairs and then ends with ``no_action`` or plays on; it never crashes (a crash
would be stored as a policy error), and it never raises out of ``act``."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcbuild.runtime.agents.llm import CONFIGURATIONS, create
from mcbuild.runtime.agents.llm.base import OUTPUT_REPAIRS
from mcbuild.llm.client import ChatResult, Usage
from mcbuild.runtime.contract.skills import SKILLS

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
keys = st.sampled_from(["skill", "args", "thought", "subgoal", "program", "nodes", "root", "edges", "subgoals",
                        "success", "critique", "diagnosis", "actions", "name", "plan", "explain"])
near_actions = st.fixed_dictionaries(
    {"skill": st.sampled_from(sorted(SKILLS)) | st.text(max_size=10)},
    optional={"args": st.dictionaries(st.sampled_from(["block", "item", "count", "station", "grid", "target", "x"]),
                                      json_values, max_size=3) | json_values,
              "thought": json_values, "subgoal": json_values})
objects = st.dictionaries(keys, json_values, max_size=5)
replies = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=60).map(lambda b: b.decode("latin-1")),
    json_values.map(json.dumps),
    objects.map(json.dumps),
    near_actions.map(json.dumps),
    st.tuples(st.text(max_size=20), near_actions).map(lambda t: f"{t[0]}```json\n{json.dumps(t[1])}\n```"),
    near_actions.map(lambda a: json.dumps(a)[: max(1, len(json.dumps(a)) // 2)]),
)


class FakeClient:
    """Answers every call with the next drawn reply (cycling); no network."""

    def __init__(self, texts: list[str]):
        self.texts, self.n = texts, 0

    def chat(self, messages, **_):
        text = self.texts[self.n % len(self.texts)]
        self.n += 1
        return ChatResult(text, Usage(10, 1, 0.0, True, 1), "fake")


@pytest.fixture(scope="module")
def world():
    from mcbuild.compiler.rules.rulebook import with_packs
    from mcbuild.runtime.backends.sim.synthetic import biome_pack, static_world

    return static_world(), with_packs([biome_pack()])


def _play(world, name, texts, budget=3):
    from mcbuild.runtime.backends.sim.backend import SimBackend
    from mcbuild.runtime.episode.episode import Episode
    from mcbuild.runtime.episode.loop import run

    static, rules = world
    extra = {"rules": "1. A rule line."} if name == "react_rules" else {}
    agent = create(name, {"model": "fake"}, client=FakeClient(texts), **extra)
    ep = Episode.from_parts(SimBackend(static, rules), rules, rules, "iron_armor", budget=budget)
    reason = run(ep, agent, 0)
    return ep, agent, reason


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
@SETTINGS
@given(texts=st.lists(replies, min_size=1, max_size=6))
def test_random_replies_never_crash_an_agent(world, name, texts):
    ep, agent, reason = _play(world, name, texts)
    assert not reason.startswith("policy_error"), reason
    assert reason == ep.end_reason and ep.used <= 3
    assert all(isinstance(c["reply"], str) for c in agent.calls)


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
@SETTINGS
@given(text=st.text(max_size=80).filter(lambda t: "{" not in t))
def test_garbage_goes_to_repair_then_no_action(world, name, text):
    ep, agent, reason = _play(world, name, [text])
    assert reason == "no_action" and ep.used == 0
    actor = [c["repair"] for c in agent.calls if c["role"] == agent.calls[-1]["role"]]
    assert actor[-(OUTPUT_REPAIRS + 1):] == list(range(OUTPUT_REPAIRS + 1)), actor
