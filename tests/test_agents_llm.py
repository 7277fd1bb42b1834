"""LLM agent configurations driven by a scripted local chat-completions endpoint.

Every configuration plays short real episodes on the embedded simulator's synthetic world (no
built worlds needed); the endpoint is a stdlib HTTP server on 127.0.0.1 with a random port.
"""
from __future__ import annotations

import json
import re

import pytest

from mcbuild.llm.settings import ModelSettings
from mcbuild.runtime.agents.base import UnknownOption
from mcbuild.runtime.agents.llm import CONFIGURATIONS, LLMError, create, preflight
from mcbuild.runtime.agents.llm import adam as adam_mod
from mcbuild.runtime.agents.llm import base as base_mod
from mcbuild.runtime.agents.llm import contracts as contracts_mod
from mcbuild.runtime.agents.llm import reflexion as reflexion_mod
from mcbuild.runtime.agents.llm import voyager as voyager_mod
from mcbuild.runtime.agents.llm import xenon as xenon_mod
from mcbuild.runtime.agents.llm.react import TRACE_STEPS
from mcbuild.llm.testing import CALL_COST, COMPLETION_TOKENS, PROMPT_TOKENS, ScriptedEndpoint

NAMES = ("direct", "react", "reflexion", "voyager", "xenon", "adam", "react_rules")
MINE_LOG = {"skill": "mine", "args": {"block": "log", "count": 1}}
MINE_STONE = {"skill": "mine", "args": {"block": "stone", "count": 1}}   # needs_tool without a pickaxe
RULES = "1. A test rule line that only the disclosed configuration may see."


# ---------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def world():
    from mcbuild.compiler.rules.rulebook import with_packs
    from mcbuild.runtime.backends.sim.synthetic import biome_pack, static_world

    rules = with_packs([biome_pack()])
    return static_world(), rules


def episode(world, budget, task="iron_armor"):
    from mcbuild.runtime.backends.sim.backend import SimBackend
    from mcbuild.runtime.episode.episode import Episode

    static, rules = world
    return Episode.from_parts(SimBackend(static, rules), rules, rules, task, budget=budget)


def play(world, agent, budget, task="iron_armor"):
    from mcbuild.runtime.episode.loop import run

    ep = episode(world, budget, task)
    steps = []
    run(ep, agent, 0, [lambda i, a, r: steps.append(list(agent.model_use().calls))])
    return ep, steps


def system(msgs):
    return msgs[0]["content"]


def user(msgs):
    return msgs[-1]["content"]


class Script:
    """A responder routing on the system prompt; ``actions`` yields the actor's actions."""

    def __init__(self, actions=None, program=None, critic=True, graph=None, plan=None):
        self.actions = actions or (lambda n: MINE_LOG)
        self.program = program
        self.critic = critic
        self.graph = graph
        self.plan = plan
        self.n = {"actor": 0, "reflector": 0, "critic": 0, "program": 0}

    def __call__(self, msgs):
        s = system(msgs)
        if "Reflector of a Reflexion agent" in s:
            self.n["reflector"] += 1
            return json.dumps({"failure_type": "strategy", "diagnosis": f"lesson-{self.n['reflector']}",
                               "next_subgoal": "minecraft:oak_log", "avoid": ["mine stone without a pickaxe"],
                               "try": ["mine log"], "expiry_condition": "a wooden pickaxe is owned"})
        if "Critic Agent of Voyager" in s:
            self.n["critic"] += 1
            ok = self.critic(msgs) if callable(self.critic) else self.critic
            return json.dumps({"reasoning": "checked", "success": ok, "critique": "" if ok else "no progress"})
        if "Action Agent of Voyager" in s:
            self.n["program"] += 1
            prog = self.program(self.n["program"]) if self.program else {
                "name": "get_log", "description": "mine one log", "subgoal": "minecraft:oak_log",
                "success": {"kind": "inventory_delta", "item": "minecraft:oak_log", "count": 1}, "actions": [MINE_LOG]}
            return json.dumps({"explain": "e", "plan": "p", "program": prog})
        if "dependency graph" in s:
            return json.dumps(self.graph or {"root": "minecraft:story/obtain_armor", "nodes": [
                {"item": "minecraft:oak_log", "requirements": [], "action_hint": "mine a log"},
                {"item": "minecraft:oak_planks", "requirements": [{"item": "minecraft:oak_log", "count": 1}],
                 "action_hint": "craft"}]})
        if "Planner of ADAM" in s:
            return json.dumps(self.plan or {"subgoals": [{"target": "minecraft:stone_pickaxe", "reason": "tool"}]})
        if "causal-discovery module" in s:
            groups = json.loads(user(msgs).split("ACTION_SAMPLE_GROUPS: ", 1)[1].split("\n", 1)[0])
            return json.dumps({"edges": [{"sample_key": g["sample_key"], "causes": [],
                                          "effects": [{"type": "item", "name": "minecraft:oak_log"}]} for g in groups]})
        self.n["actor"] += 1
        action = self.actions(self.n["actor"])
        if isinstance(action, str):
            return action
        return json.dumps({"thought": f"step {self.n['actor']}", "subgoal": "minecraft:oak_log", **action})


def make(name, ep, **kw):
    if name == "react_rules":
        kw.setdefault("rules", RULES)
    return create(name, ep.settings(), **kw)


# ---------------------------------------------------------------------------- every configuration
@pytest.mark.parametrize("name", NAMES)
def test_configuration_plays_a_real_episode(world, name):
    script = Script()
    with ScriptedEndpoint(script) as ep:
        agent = make(name, ep)
        played, steps = play(world, agent, budget=5)
    assert played.used == 5 and played.end_reason == "budget_exhausted"
    assert played.tracker.turns[-1].result["ok"] is True
    # every call is recorded (and handed to the trajectory step that it chose)
    assert sum(len(s) for s in steps) == len(agent.calls) == len(ep.requests) > 0
    for call in agent.calls:
        assert set(call) >= {"step", "role", "prompt_hash", "messages", "reply", "prompt_tokens",
                             "completion_tokens", "cost_usd"}
        assert re.fullmatch(r"[0-9a-f]{16}", call["prompt_hash"])
    # tokens and cost add up: per call, per agent and on the wire
    assert agent.usage.calls == len(agent.calls)
    assert agent.usage.prompt_tokens == PROMPT_TOKENS * len(agent.calls)
    assert agent.usage.completion_tokens == COMPLETION_TOKENS * len(agent.calls)
    assert agent.usage.cost_usd == pytest.approx(CALL_COST * len(agent.calls))
    assert sum(c["cost_usd"] for c in agent.calls) == pytest.approx(agent.usage.cost_usd)
    # sampling settings of the study: temperature 0.7, at most 2,048 output tokens (a server on loopback
    # of no named kind gets no reasoning switch: tests/test_llm_providers.py covers the families that have one)
    req = ep.requests[0]
    assert req["temperature"] == 0.7 and req["max_tokens"] == 2048
    assert req["model"] == "scripted" and "chat_template_kwargs" not in req


LOG, PLANKS, STICK = "minecraft:oak_log", "minecraft:oak_planks", "minecraft:stick"
OPENING = [  # from nothing to the first milestone (mine_stone) on the synthetic world
    {"skill": "mine", "args": {"block": "log", "count": 3}, "subgoal": LOG},
    *[{"skill": "craft_grid", "args": {"station": "inventory", "grid": [[LOG, None], [None, None]]},
       "subgoal": PLANKS}] * 3,
    {"skill": "craft_grid", "args": {"station": "inventory", "grid": [[PLANKS, PLANKS], [PLANKS, PLANKS]]},
     "subgoal": "minecraft:crafting_table"},
    {"skill": "place", "args": {"block": "crafting_table"}, "subgoal": "minecraft:crafting_table"},
    {"skill": "craft_grid", "args": {"station": "inventory", "grid": [[PLANKS, None], [PLANKS, None]]}, "subgoal": STICK},
    {"skill": "craft_grid", "args": {"station": "crafting_table",
                                     "grid": [[PLANKS] * 3, [None, STICK, None], [None, STICK, None]]},
     "subgoal": "minecraft:wooden_pickaxe"},
    {"skill": "mine", "args": {"block": "stone", "count": 1}, "subgoal": "minecraft:cobblestone"},
]


@pytest.mark.parametrize("name", NAMES)
def test_scripted_opening_reaches_the_first_milestone(world, name):
    chunks = [OPENING[i:i + voyager_mod.MACRO_LENGTH] for i in range(0, len(OPENING), voyager_mod.MACRO_LENGTH)]
    program = lambda n: {"name": f"chunk_{n}", "description": "opening", "subgoal": "progress",
                         "success": {"kind": "action_result"},
                         "actions": [{"skill": a["skill"], "args": a["args"]} for a in chunks[n - 1]]}
    with ScriptedEndpoint(Script(actions=lambda n: OPENING[n - 1], program=program)) as ep:
        agent = make(name, ep)
        played, _ = play(world, agent, budget=len(OPENING))
    assert [t["result"]["ok"] for t in played.trajectory] == [True] * len(OPENING)
    assert played.score == 15 and played.used == len(OPENING)
    if name in ("react", "reflexion", "react_rules"):
        assert agent.trace.steps[-2]["result"]["gained"] == {"minecraft:wooden_pickaxe": 1}
    if name == "xenon":
        assert agent.nodes["minecraft:wooden_pickaxe"]["status"] == "verified"
        assert {"item": STICK, "count": 2} in agent.nodes["minecraft:wooden_pickaxe"]["requirements"]
    if name == "voyager":
        assert list(agent.library) == ["chunk_1", "chunk_2"]


@pytest.mark.parametrize("name", NAMES)
def test_reset_clears_all_episode_state(world, name):
    with ScriptedEndpoint(Script()) as ep:
        agent = make(name, ep)
        play(world, agent, budget=3)
        fresh = make(name, ep)
        agent.reset(1)
        ignore = {"client", "settings", "seed", "rules", "rules_binding"}
        state = {k: v for k, v in vars(agent).items() if k not in ignore}
        expect = {k: v for k, v in vars(fresh).items() if k not in ignore}
        assert repr(state) == repr(expect)


def test_registry_names_and_factory_settings():
    assert tuple(CONFIGURATIONS) == ("direct", "react", "reflexion", "voyager", "xenon", "adam", "react_rules")
    with ScriptedEndpoint(Script()) as ep:
        agent = create("react", model="scripted", base_url=ep.base_url, api_key_env="MCBUILD_TEST_NO_KEY")
        assert agent.settings.temperature == 0.7 and agent.settings.max_tokens == 2048
    with pytest.raises(KeyError):
        create("nope", model="m")


def test_register_all_and_the_agent_registry():
    from mcbuild.runtime.agents.llm import register_all

    registry = {}
    register_all(registry.__setitem__)
    assert tuple(registry) == NAMES
    with ScriptedEndpoint(Script()) as ep:
        # what the study executor passes, plus the endpoint settings
        agent = registry["react_rules"](model="scripted", base_url=ep.base_url, api_key_env="MCBUILD_TEST_NO_KEY",
                                        rules=RULES)
        assert agent.rules == RULES and agent.name == "react_rules"
        for name, option in (("react", "rules"), ("react_rules", "seed"), ("react_rules", "disclosure")):
            with pytest.raises(UnknownOption, match=f"^agent '{name}' takes no option '{option}'"):
                registry[name](model="scripted", base_url=ep.base_url, **{option: "x"})
    from mcbuild.runtime.agents import registry as agents

    assert set(NAMES) <= set(agents.AGENTS)
    with ScriptedEndpoint(Script()) as ep:
        agent = agents.create("react", model="scripted", base_url=ep.base_url, api_key_env="MCBUILD_TEST_NO_KEY")
        assert agent.name == "react"


# ---------------------------------------------------------------------------- ReAct trace
def test_react_trace_keeps_the_16_most_recent_steps(world):
    with ScriptedEndpoint(Script()) as ep:
        agent = make("react", ep)
        play(world, agent, budget=TRACE_STEPS + 2)
    prompts = [user(c["messages"]) for c in agent.calls]
    shown = [re.findall(r"^#(\d+) think:", p, re.M) for p in prompts]
    assert shown[0] == []
    assert shown[TRACE_STEPS] == [str(i) for i in range(1, TRACE_STEPS + 1)]          # 17th call: 16 steps
    assert shown[TRACE_STEPS + 1] == [str(i) for i in range(2, TRACE_STEPS + 2)]      # 18th: the oldest dropped
    assert len(agent.trace.steps) == TRACE_STEPS
    assert "LAST_ACTION_FEEDBACK" not in prompts[-1]           # the trace carries the feedback


# ---------------------------------------------------------------------------- Reflexion
def test_reflexion_writes_and_expires_lessons(world):
    script = Script(actions=lambda n: MINE_STONE if n <= 2 else MINE_LOG)
    with ScriptedEndpoint(script) as ep:
        agent = make("reflexion", ep)
        play(world, agent, budget=21)
    actor = {c["step"]: user(c["messages"]) for c in agent.calls if c["role"] == "actor"}
    reviews = [c for c in agent.calls if c["role"] == "reflector"]
    assert reviews[0]["step"] == 3 and "repeated_failure" in user(reviews[0]["messages"])
    with_lesson = [s for s, p in actor.items() if "diagnosis=lesson-1 " in p]
    assert with_lesson == list(range(3, 3 + reflexion_mod.LESSON_ACTIONS))     # shown for 16 actions, then gone
    assert "ACTIVE REFLEXION MEMORY" not in actor[1]
    assert all(not c["messages"][0]["content"].startswith("You are playing") for c in reviews)


def test_reflexion_bounds_reviews_and_lessons(world):
    with ScriptedEndpoint(Script(actions=lambda n: MINE_STONE)) as ep:
        agent = make("reflexion", ep)
        played, _ = play(world, agent, budget=20)
    assert played.used == 20
    assert sum(c["role"] == "reflector" for c in agent.calls) == reflexion_mod.MAX_REVIEWS
    for c in agent.calls:
        if c["role"] == "actor":
            assert len(re.findall(r"^\d+\. \[strategy\]", user(c["messages"]), re.M)) <= reflexion_mod.MAX_LESSONS


# ---------------------------------------------------------------------------- Voyager
def test_voyager_program_skills_each_cost_one_action(world):
    prog = {"name": "three_logs", "description": "logs", "subgoal": "minecraft:oak_log",
            "success": {"kind": "inventory_at_least", "item": "minecraft:oak_log", "count": 3},
            "actions": [MINE_LOG, MINE_LOG, MINE_LOG]}
    with ScriptedEndpoint(Script(program=lambda n: prog)) as ep:
        agent = make("voyager", ep)
        played, _ = play(world, agent, budget=6)
    roles = [c["role"] for c in agent.calls]
    assert played.used == 6 and roles.count("action_agent") == 2 and roles.count("critic") == 1
    assert list(agent.library) == ["three_logs"]
    second = [user(c["messages"]) for c in agent.calls if c["role"] == "action_agent"][1]
    assert "- three_logs: logs" in second                 # retrieved from the library


def test_voyager_repair_bound(world):
    failing = {"name": "stone", "description": "stone", "subgoal": "minecraft:cobblestone",
               "success": {"kind": "inventory_delta", "item": "minecraft:cobblestone"}, "actions": [MINE_STONE, MINE_LOG]}
    with ScriptedEndpoint(Script(program=lambda n: failing, critic=False)) as ep:
        agent = make("voyager", ep)
        played, _ = play(world, agent, budget=12)
    prompts = [user(c["messages"]) for c in agent.calls if c["role"] == "action_agent"]
    repair = ["LAST PROGRAM AND FEEDBACK FOR REPAIR: none" not in p for p in prompts]
    assert played.used == 12 and len(prompts) == 12          # every program stopped at its failing first skill
    assert repair == [False, True, True, True, True] * 2 + [False, True]
    assert not agent.library


def test_voyager_library_and_retrieval_limits():
    with ScriptedEndpoint(Script()) as ep:
        agent = make("voyager", ep)
        for i in range(voyager_mod.LIBRARY_SIZE + 4):
            agent.remember({"name": f"p{i}", "description": "oak log", "subgoal": "minecraft:oak_log",
                            "success": {"kind": "state_change"}, "actions": [MINE_LOG]})
        assert len(agent.library) == voyager_mod.LIBRARY_SIZE and "p0" not in agent.library
        assert len(agent.retrieve({"inventory": {}, "next_milestone": "log"})) == voyager_mod.RETRIEVE
        with pytest.raises(contracts_mod.ContractError):
            agent._program({"program": {"actions": [MINE_LOG] * (voyager_mod.MACRO_LENGTH + 1)}})


# ---------------------------------------------------------------------------- XENON
def test_xenon_graph_memory_and_replanning(world):
    big = {"root": "minecraft:story/obtain_armor",
           "nodes": [{"item": f"minecraft:item_{i}", "requirements": []} for i in range(40)]}
    script = Script(actions=lambda n: MINE_STONE, graph=big)
    with ScriptedEndpoint(script) as ep:
        agent = make("xenon", ep)
        play(world, agent, budget=7)
    roles = [c["role"] for c in agent.calls]
    assert roles[0] == "initializer" and len(agent.nodes) <= xenon_mod.GRAPH_NODES
    assert roles.count("replanner") >= 2                      # after every second failure on the subgoal
    actor = [user(c["messages"]) for c in agent.calls if c["role"] == "actor"]
    memory = json.loads(actor[-1].split("FAILURE_AWARE_ACTION_MEMORY: ", 1)[1].split("\n", 1)[0])
    assert 1 <= len(memory) <= xenon_mod.RETRIEVE
    assert any("REJECTED_XENON_PROPOSAL: {" in p for p in actor)   # the invalid action was rejected once
    for i in range(40):
        agent._remember(f"s{i}", MINE_LOG, "failure", {})
    assert len(agent.memory) == xenon_mod.MEMORY_SIZE


def test_xenon_wrong_output_corrects_the_graph(world):
    with ScriptedEndpoint(Script()) as ep:
        agent = make("xenon", ep)
        agent.initialized = True
        agent.nodes["minecraft:stick"] = {"requirements": [{"item": "minecraft:cobblestone", "count": 2}],
                                          "action_hint": "", "status": "hypothesized", "observedActions": []}
        obs = {"inventory": {"minecraft:oak_planks": 2}, "progress": {"score": 0}}
        agent.prev_obs, agent.step = obs, 1
        agent.last_action = {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["minecraft:oak_planks"], ["minecraft:oak_planks"]]},
                             "subgoal": "minecraft:oak_button"}
        after = {"inventory": {"minecraft:stick": 4}, "progress": {"score": 0},
                 "latest_result": {"ok": True, "gained": {"minecraft:stick": 4}, "lost": {"minecraft:oak_planks": 2}}}
        agent.step = 2
        agent.on_outcome(agent._outcome(obs, after), after)
    assert agent.nodes["minecraft:stick"]["status"] == "verified"
    assert agent.nodes["minecraft:stick"]["requirements"] == [{"item": "minecraft:oak_planks", "count": 2}]
    assert agent.failures["minecraft:oak_button"] == 1


# ---------------------------------------------------------------------------- ADAM
def _adam_with_testable_edge(agent):
    grid = [["minecraft:oak_planks", "minecraft:stick"], [None, None]]
    act = {"skill": "craft_grid", "args": {"station": "inventory", "grid": grid, "count": 1}}
    key = base_mod.signature(act)
    agent.actions[key] = act
    agent.edges.append({"sample_key": key, "status": "supported", "samples": 2,
                        "causes": [{"type": "item", "name": "minecraft:oak_planks", "count": 1, "status": "hypothesized"},
                                   {"type": "item", "name": "minecraft:stick", "count": 1, "status": "hypothesized"}],
                        "effects": [{"type": "item", "name": "minecraft:oak_button"}]})
    failed = base_mod.SeenOutcome(1, dict(MINE_STONE), False, "needs_tool", "", {}, {}, 0, 0, {}, {})
    agent.outcomes = [failed]
    agent.since_progress = adam_mod.STALL
    return grid


def test_adam_probes_at_most_twice_and_never_in_the_last_12_actions():
    inv = {"minecraft:oak_planks": 4, "minecraft:stick": 4}
    with ScriptedEndpoint(Script()) as ep:
        agent = make("adam", ep)
        _adam_with_testable_edge(agent)
        obs = lambda remaining: {"inventory": inv, "budget": {"total": 50, "used": 50 - remaining, "remaining": remaining}}
        assert agent.probe_action(obs(adam_mod.NO_PROBE_LAST)) is None
        assert agent.probe_action(obs(1)) is None
        probe = agent.probe_action(obs(adam_mod.NO_PROBE_LAST + 1))
        assert probe["skill"] == "craft_grid" and probe["args"]["grid"] == [["minecraft:oak_planks", None], [None, None]]
        agent.probes = adam_mod.MAX_PROBES
        assert agent.probe_action(obs(40)) is None


def _drive(world, agent, budget, prepare):
    """The episode loop of ``mcbuild.runtime.episode.episode.run``, with agent state seeded after the reset."""
    ep = episode(world, budget)
    agent.reset(0)
    prepare(agent)
    while not ep.done:
        action = agent.act(ep.observe())
        if action is None:
            ep.stop()
            break
        ep.step(action)
    return ep


def _opening(n):
    planks, stick = "minecraft:oak_planks", "minecraft:oak_log"
    return [{"skill": "mine", "args": {"block": "log", "count": 3}},
            {"skill": "craft_grid", "args": {"station": "inventory", "grid": [[stick, None], [None, None]]}},
            {"skill": "craft_grid", "args": {"station": "inventory", "grid": [[planks, None], [planks, None]]}},
            ][n - 1] if n <= 3 else MINE_STONE


def _seed_edges(agent):
    for grid in ([["minecraft:oak_planks", "minecraft:stick"], [None, None]],
                 [["minecraft:stick", "minecraft:oak_log"], [None, None]],
                 [["minecraft:oak_log", "minecraft:oak_planks"], [None, None]]):
        act = {"skill": "craft_grid", "args": {"station": "inventory", "grid": grid, "count": 1}}
        key = base_mod.signature(act)
        agent.actions[key] = act
        agent.edges.append({"sample_key": key, "status": "supported", "samples": 2,
                            "causes": [{"type": "item", "name": c, "count": 1, "status": "hypothesized"} for c in grid[0]],
                            "effects": [{"type": "item", "name": "minecraft:oak_button"}]})


def test_adam_probes_are_ordinary_actions_in_an_episode(world):
    with ScriptedEndpoint(Script(actions=_opening)) as ep:
        agent = make("adam", ep)
        played = _drive(world, agent, 24, _seed_edges)
        assert len(agent.probe_log) == adam_mod.MAX_PROBES
        assert all(p["remaining"] > adam_mod.NO_PROBE_LAST for p in agent.probe_log)
        for p in agent.probe_log:                      # executed by the body, one budget unit each
            step = played.trajectory[p["step"] - 1]
            assert step["action"]["skill"] == "craft_grid"
            assert not any(c["step"] == p["step"] and c["role"] == "actor" for c in agent.calls)
        assert played.used == 24
        actor = [user(c["messages"]) for c in agent.calls if c["role"] == "actor"]
        assert any("REJECTED_ADAM_ACTION: {" in p for p in actor)    # the blocked mine(stone) was rejected
        assert "REJECTED_ADAM_ACTION: none" in actor[0]
        assert len(agent.memory) <= adam_mod.MEMORY_SIZE and len(agent.nodes()) <= adam_mod.GRAPH_NODES
        # the same blocked state, but only 12 actions are left by then: no probe at all
        late = _drive(world, agent, adam_mod.NO_PROBE_LAST + 6, _seed_edges)
        assert late.used == adam_mod.NO_PROBE_LAST + 6 and agent.probe_log == []


def test_adam_learns_from_two_comparable_samples(world):
    with ScriptedEndpoint(Script()) as ep:
        agent = make("adam", ep)
        play(world, agent, budget=4)
    discovery = [c for c in agent.calls if c["role"] == "discovery"]
    assert len(discovery) == 1 and discovery[0]["step"] == 3      # after the second mine(log) sample
    assert agent.edges and agent.edges[0]["status"] == "supported"


def test_adam_graph_is_capped():
    with ScriptedEndpoint(Script()) as ep:
        agent = make("adam", ep)
        for i in range(30):
            agent.edges.append({"sample_key": f"k{i}", "status": "hypothesized", "samples": 2,
                                "causes": [{"type": "item", "name": f"c{i}", "count": 1, "status": "hypothesized"}],
                                "effects": [{"type": "item", "name": f"e{i}"}]})
        agent.samples = {"new": [{"initialItems": {}, "consumedItems": {}, "addedItems": {"x": 1}}] * 2}
        ep.responder = lambda msgs: json.dumps({"edges": [{"sample_key": "new", "causes": [],
                                                           "effects": [{"type": "item", "name": "x"}]}]})
        agent.discover(["new"])
    assert len(agent.nodes()) <= adam_mod.GRAPH_NODES
    assert agent.edges[-1]["sample_key"] == "new"


# ---------------------------------------------------------------------------- output repair (L.12)
def test_repair_recovers_from_a_malformed_reply(world):
    replies = iter(["I think I should mine a log.", json.dumps({"skill": "craft_grid", "args": {"station": "inventory",
                                                                                                  "grid": ["a", None]}}),
                    json.dumps(MINE_LOG)])
    with ScriptedEndpoint(Script(actions=lambda n: next(replies, json.dumps(MINE_LOG)))) as ep:
        agent = make("react", ep)
        played, _ = play(world, agent, budget=2)
    assert played.used == 2 and played.trajectory[0]["action"]["skill"] == "mine"
    first = [c for c in agent.calls if c["step"] == 1]
    assert [c["repair"] for c in first] == [0, 1, 2]
    assert "ACTION RESPONSE REPAIR" in system(first[1]["messages"])
    assert "Preview of that reply: I think I should mine a log." in user(first[1]["messages"])
    assert "grid must be a nested array" in user(first[2]["messages"])


@pytest.mark.parametrize("reply, problem", [
    ([], "the reply is not one JSON object"),
    ({"skill": "dig", "args": 3}, "skill must be one of mine, explore, prepare_access, craft_grid, smelt, attack, "
                                  "enchant, place, equip, collect, ascend, trade, wait; got 'dig'"),
    ({"skill": " mine ", "args": 3}, "args must be a JSON object"),
    ({"skill": "mine", "args": {"block": "", "depth": 2}}, "mine: unknown argument(s) depth"),
    ({"skill": "mine", "args": {"block": ""}}, "mine: missing required argument(s) block"),
])
def test_action_contract_is_a_json_schema_with_the_l12_messages(reply, problem):
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(contracts_mod.ActionReply.model_json_schema())
    with pytest.raises(contracts_mod.ContractError, match=re.escape(problem)):
        contracts_mod.parse_action(reply)
    assert contracts_mod.parse_action({"skill": " mine ", "block": "log"}) == {"skill": "mine", "args": {"block": "log"}}


def test_structured_replies_name_the_first_bad_field():
    with pytest.raises(contracts_mod.ContractError, match="^diagnosis must be a non-empty string of at most 160 "):
        reflexion_mod._lesson({"failure_type": "x", "diagnosis": "", "avoid": None})
    with pytest.raises(contracts_mod.ContractError, match="^the critic reply needs a boolean success field$"):
        voyager_mod._critique({"success": "yes"})
    with pytest.raises(contracts_mod.ContractError, match="^every node needs an item id of at most 48 characters$"):
        xenon_mod._graph({"nodes": [{"item": ""}]})
    with pytest.raises(contracts_mod.ContractError, match='^the plan needs a "subgoals" list of 1..8 subgoals$'):
        adam_mod._plan({"subgoals": []})


@pytest.mark.parametrize("name", ("direct", "react", "xenon", "adam"))
def test_repair_gives_up_after_its_bound(world, name):
    with ScriptedEndpoint(Script(actions=lambda n: "no json here")) as ep:
        agent = make(name, ep)
        played, _ = play(world, agent, budget=5)
    assert played.used == 0 and played.end_reason == "no_action"
    actor = [c for c in agent.calls if c["role"] == "actor"]
    assert len(actor) == 1 + base_mod.OUTPUT_REPAIRS and agent.gave_up


def test_voyager_falls_back_to_one_action_after_json_repairs(world):
    script = Script(program=lambda n: {"actions": "not a list"})
    with ScriptedEndpoint(script) as ep:
        agent = make("voyager", ep)
        played, _ = play(world, agent, budget=1)
    roles = [c["role"] for c in agent.calls]
    assert roles[:4] == ["action_agent"] * (1 + base_mod.JSON_REPAIRS) + ["fallback"]
    assert played.used == 1 and played.trajectory[0]["action"]["skill"] == "mine"
    assert "Your previous reply was not a single valid, bounded skill program" in user(agent.calls[1]["messages"])


# ---------------------------------------------------------------------------- client and preflight
def test_transport_errors_are_retried(world):
    with ScriptedEndpoint(Script(), fail_first=2) as ep:
        agent = make("direct", ep)
        played, _ = play(world, agent, budget=1)
    assert played.used == 1 and agent.calls[0]["attempts"] == 3


def test_endpoint_failure_is_an_infrastructure_fault(world):
    from mcbuild.runtime.errors import InfrastructureFault

    with ScriptedEndpoint(Script(), fail_first=10) as ep:
        agent = make("react", ep, max_retries=1)
        with pytest.raises(LLMError) as err:
            agent.act(episode(world, 2).observe())
    assert isinstance(err.value, InfrastructureFault) and "HTTP 503" in str(err.value)


def test_preflight(monkeypatch):
    with ScriptedEndpoint(Script()) as ep:
        preflight(ep.settings())
        with pytest.raises(LLMError, match="does not serve this model"):
            preflight(ep.settings(model="other-model"))
        port = ep.base_url
    with pytest.raises(LLMError, match="cannot reach"):
        preflight(ModelSettings(model="scripted", base_url=port, max_retries=0, timeout=2.0))
    monkeypatch.delenv("MCBUILD_TEST_KEY", raising=False)
    with pytest.raises(LLMError, match=r"\$MCBUILD_TEST_KEY"):
        preflight(ModelSettings(model="m", base_url="https://api.example.com/v1", api_key_env="MCBUILD_TEST_KEY"))


def test_preflight_sends_one_request_of_the_studys_shape():
    """With a model listing or without one: one real request, carrying every field the calls will carry
    (the token cap as it is, the response_format of the study's structured setting)."""
    for models in (True, False):
        with ScriptedEndpoint(Script(), models=models) as ep:
            preflight(ep.settings(structured="json_schema", top_p=0.9))
        [sent] = ep.requests
        assert (sent["max_tokens"], sent["temperature"], sent["top_p"]) == (2048, 0.7, 0.9)
        assert sent["response_format"]["type"] == "json_schema"


def test_calls_land_in_the_trajectory(world, tmp_path):
    from mcbuild.runtime.agents.llm import trajectory_hook
    from mcbuild.runtime.episode.loop import run
    from mcbuild.runtime.episode.trace import write_trace

    with ScriptedEndpoint(Script()) as ep:
        agent = make("reflexion", ep)
        played = episode(world, 3)
        run(played, agent, 0, [trajectory_hook(played, agent)])
    assert [len(t["llm_calls"]) for t in played.trajectory] == [1, 1, 1]
    assert played.trajectory[-1]["llm_usage"]["cost_usd"] == pytest.approx(3 * CALL_COST)
    write_trace(played, tmp_path / "trace.jsonl")
    lines = [json.loads(l) for l in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert lines[1]["llm_calls"][0]["messages"][0]["role"] == "system"


def test_react_rules_needs_the_rule_sheet(world):
    with ScriptedEndpoint(Script()) as ep:
        agent = create("react_rules", ep.settings())
        with pytest.raises(ValueError, match="rule sheet"):
            agent.act(episode(world, 2).observe())
        agent.reset(0, rules=RULES, rules_binding="suite under test")
        assert agent.act(episode(world, 2).observe()) == MINE_LOG
        assert RULES in system(agent.calls[-1]["messages"])


def test_react_on_a_built_world(world_build, built_world_ids):
    from mcbuild.runtime.episode.loop import run
    from mcbuild.runtime.episode.opening import open_episode

    with ScriptedEndpoint(Script()) as ep:
        agent = make("react", ep)
        with open_episode(built_world_ids[0], "vanilla", "diamond", budget=3, build=world_build) as played:
            run(played, agent)
            assert played.used == 3 and len(agent.calls) == 3
