"""LLM agent prompts: snapshots of every template on a fixed observation, and rule non-disclosure.

Only ReAct w/rules may carry rule text, suite ids or titles, or pack contents. The other
configurations must send the same prompts in Vanilla and Mirror episodes; this is checked on
real episodes in Mirror worlds of all six suites.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from mcbuild.runtime.agents.llm import CONFIGURATIONS, create
from mcbuild.runtime.agents.llm import rendering as P
from mcbuild.llm.testing import ScriptedEndpoint

SUITES = ("m01", "m02", "m03", "m04", "m05", "m06")
RULES_TEMPLATE = "react_rules_system.j2"
SHEET = ("# Rules in effect in this world\n\n1. The usual crafting recipe for widget now gives 1 gadget instead.\n\n"
         "## Structured overrides\n\n1. craft_grid widget recipe -> yields gadget x1 (differs from vanilla Minecraft)")

FIXED_OBS = {
    "task": {"id": "iron_armor", "title": "Iron Armor", "goal": "minecraft:story/obtain_armor", "route": [
        {"advancement": "minecraft:story/mine_stone", "code": "mine_stone", "value": 15, "completed": True},
        {"advancement": "minecraft:story/upgrade_tools", "code": "upgrade_tools", "value": 35, "completed": False},
        {"advancement": "minecraft:story/smelt_iron", "code": "smelt_iron", "value": 65, "completed": False},
        {"advancement": "minecraft:story/obtain_armor", "code": "obtain_armor", "value": 100, "completed": False}]},
    "next_milestone": {"advancement": "minecraft:story/upgrade_tools", "code": "upgrade_tools", "value": 35},
    "budget": {"total": 50, "used": 7, "remaining": 43},
    "progress": {"score": 15, "highest_completed": "mine_stone"},
    "inventory": {"minecraft:cobblestone": 3, "minecraft:oak_planks": 2, "minecraft:stick": 2,
                  "minecraft:wooden_pickaxe": 1, "minecraft:crafting_table": 1},
    "equipped": {"mainhand": "minecraft:wooden_pickaxe"},
    "experience": {"level": 100},
    "capabilities": {"crafting": ["inventory", "crafting_table"], "enchanting": False, "harvest_level": 0,
                     "smelting": [], "tools": {"pickaxe": "minecraft:wooden_pickaxe"}},
    "facilities": {"observed": {"minecraft:crafting_table": 2.5},
                   "owned_unplaced": {"minecraft:crafting_table": 1}},
    "nearby_targets": {"minecraft:stone": 3.0, "minecraft:iron_ore": 14.2, "minecraft:oak_log": 9.1},
    "nearby_drops": {"minecraft:cobblestone": 1.5},
    "nearby_entities": {"minecraft:cow": {"count": 2, "nearest_distance": 11.0}},
    "position": {"x": 4, "y": 64, "z": -3},
    "completed_advancements": ["minecraft:story/mine_stone"],
    "verified_action_effects": [{"action": "mine(block=minecraft:stone, count=1)", "skill": "mine",
                                 "args": {"block": "minecraft:stone", "count": 1}, "consumed": {},
                                 "produced": {"minecraft:cobblestone": 1}, "times": 3, "units": 1,
                                 "signature": "mine|minecraft:stone"}],
    "vanilla_recipe_hypotheses": [{"recipe": "minecraft:stone_pickaxe", "output": "minecraft:stone_pickaxe", "count": 1,
                                   "station": "crafting_table", "station_ready": True, "executable": True,
                                   "grid": [["minecraft:cobblestone"] * 3, [None, "minecraft:stick", None],
                                            [None, "minecraft:stick", None]]}],
    "actionable_verified_transformations": [{"action": "craft_grid(...)", "produces": {"minecraft:stick": 4},
                                             "for": "craft_grid(...)"}],
    "latest_result": {"skill": "mine", "args": {"block": "minecraft:iron_ore", "count": 1}, "ok": False,
                      "reason": "needs_tool", "message": "no owned tool harvests minecraft:iron_ore",
                      "gained": {}, "lost": {}},
    "blocked_actions": [{"action": {"skill": "mine", "args": {"block": "minecraft:iron_ore", "count": 1}},
                         "reason": "needs_tool", "requires": {"any_tool_of": ["minecraft:stone_pickaxe"]}}],
    "stagnation_warning": {"repeat_count": 2,
                           "forbidden_action": {"skill": "mine", "args": {"block": "minecraft:iron_ore", "count": 1}}},
    "failure_cycle": None,
    "stagnation_cycle": [{"skill": "explore", "args": {"target": "minecraft:oak_log"}}],
    "unused_output_warnings": [{"action": "craft_grid(...)", "output": {"minecraft:crafting_table": 1},
                                "mode": "repetition_blocked"}],
    "survival": {"alive": True, "food": 20, "health": 20.0, "effects": {"minecraft:haste": 1}},
    "biome": "minecraft:plains",
    "minecraft_version": "1.19",
}
OBS_TEXT = P.observation_text(FIXED_OBS)
OBS_NO_FEEDBACK = P.observation_text(FIXED_OBS, feedback=False)
STEPS = [{"step": 6, "thought": "need stone", "skill": "mine", "args": {"block": "stone", "count": 1},
          "result": {"ok": True, "gained": {"minecraft:cobblestone": 1}}},
         {"step": 7, "thought": "iron next", "skill": "mine", "args": {"block": "minecraft:iron_ore", "count": 1},
          "result": {"ok": False, "reason": "needs_tool"}}]
LESSON = {"failure_type": "semantic_prerequisite", "diagnosis": "iron ore needs a better pickaxe",
          "next_subgoal": "minecraft:stone_pickaxe", "avoid": ["mine iron_ore"], "try": ["craft a stone pickaxe"],
          "expiry_condition": "a stone pickaxe is owned", "evidence": {"trigger": "repeated_failure"},
          "expires_after": 22}
PROGRAM = {"name": "get_stone", "description": "mine stone", "subgoal": "minecraft:cobblestone",
           "success": {"kind": "inventory_delta", "item": "minecraft:cobblestone", "count": 1},
           "actions": [{"skill": "mine", "args": {"block": "stone", "count": 1}}]}
GRAPH = {"root": "minecraft:story/obtain_armor", "nodes": [{"item": "minecraft:stone_pickaxe", "status": "hypothesized",
         "requirements": [{"item": "minecraft:cobblestone", "count": 3}], "observedActions": []}]}
REJECT = {"skill": "mine", "args": {"block": "minecraft:iron_ore"}, "why": "marked invalid"}
TASK_STATE = P.task_state(FIXED_OBS["task"])

CONTEXTS: dict[str, list[dict]] = {
    "common_rules.j2": [{}],
    "skills.j2": [{}],
    "task.j2": [{"t": P.task_view(FIXED_OBS["task"])}],
    "observation.j2": [{"o": P.observation_view(FIXED_OBS), "show_task": True}],
    "recent_step.j2": [{"s": STEPS[0]}, {"s": {**STEPS[1], "thought": ""}}],
    "recent_steps.j2": [{"steps": STEPS}, {"steps": []}],
    "direct_system.j2": [{}],
    "direct_user.j2": [{"obs_text": OBS_TEXT}],
    "react_system.j2": [{}],
    "react_user.j2": [{"steps": STEPS, "obs_text": OBS_NO_FEEDBACK}],
    "react_rules_system.j2": [{"rule_sheet": SHEET, "rule_binding": "m00 (test sheet)"}],
    "reflexion_system.j2": [{}],
    "reflexion_user.j2": [{"lessons": [LESSON], "steps": STEPS, "obs_text": OBS_NO_FEEDBACK}],
    "reflector_system.j2": [{}],
    "reflector_user.j2": [{"goal": P.goal_text(FIXED_OBS), "evidence": {"trigger": "repeated_failure", "action": 7},
                           "obs_text": OBS_TEXT, "segment": [{**s, "ok": s["result"]["ok"],
                                                              "reason": s["result"].get("reason")} for s in STEPS],
                           "repair": r, "previous": "oops"} for r in (False, True)],
    "voyager_system.j2": [{"macro_length": 4}],
    "voyager_user.j2": [{"retrieved": r, "feedback": f, "obs_text": OBS_TEXT, "json_repair": j}
                        for r, f, j in (([], None, False), ([PROGRAM], None, True),
                                        ([PROGRAM], {"program": PROGRAM, "critique": "no stone"}, False),
                                        ([PROGRAM], {"program": PROGRAM, "critique": "no stone"}, True))],
    "critic_system.j2": [{}],
    "critic_user.j2": [{"program": PROGRAM, "start": {"inventory": {}}, "final": {"inventory": {"minecraft:cobblestone": 1}},
                        "trace": [{"ok": True}], "check": {"kind": "inventory_delta", "passed": True},
                        "json_repair": j} for j in (False, True)],
    "xenon_init_system.j2": [{}],
    "xenon_init_user.j2": [{"max_nodes": 32, "task": P.task_text(FIXED_OBS), "task_state": TASK_STATE,
                            "repair": r, "previous": "not json"} for r in (False, True)],
    "xenon_system.j2": [{}],
    "xenon_user.j2": [{"frontier": ["minecraft:stone_pickaxe"], "graph": GRAPH, "memory": [], "rejected": r,
                       "obs_text": OBS_TEXT} for r in (None, REJECT)],
    "adam_planner_system.j2": [{}],
    "adam_planner_user.j2": [{"task": P.task_text(FIXED_OBS), "task_state": TASK_STATE,
                              "inventory": FIXED_OBS["inventory"], "targets": FIXED_OBS["nearby_targets"],
                              "entities": FIXED_OBS["nearby_entities"], "capabilities": FIXED_OBS["capabilities"],
                              "facilities": FIXED_OBS["facilities"]["observed"], "last_action": FIXED_OBS["latest_result"],
                              "constraints": FIXED_OBS["blocked_actions"], "graph": {"nodes": [], "edges": []},
                              "repair": r, "previous": "{bad"} for r in (False, True)],
    "adam_system.j2": [{}],
    "adam_user.j2": [{"plan": [{"target": "minecraft:stone_pickaxe", "reason": "tool", "completed": False}],
                      "graph": {"nodes": [], "edges": []}, "memory": [], "rejected": r, "obs_text": OBS_TEXT}
                     for r in (None, REJECT)],
    "adam_discovery_system.j2": [{}],
    "adam_discovery_user.j2": [{"groups": [{"sample_key": "k", "samples": []}], "graph": {"nodes": [], "edges": []},
                                "repair": r, "previous": "{bad"} for r in (False, True)],
    "repair_system.j2": [{"original_system": P.render("react_system.j2").strip()}],
    "repair_user.j2": [{"original_user": OBS_TEXT, "previous": "I would mine", "problem": "not valid JSON"}],
}


def rendered(name: str) -> str:
    return "\n=== next variant ===\n".join(P.render(name, **ctx) for ctx in CONTEXTS[name])


def test_every_template_has_a_snapshot_context():
    assert sorted(CONTEXTS) == P.template_names()


@pytest.mark.parametrize("name", sorted(CONTEXTS))
def test_template_snapshot(name, snapshot):
    assert rendered(name) == snapshot


def test_observation_renders_unknown_keys_and_omits_bookkeeping():
    text = P.observation_text({**FIXED_OBS, "weather_hint": {"rain": False}, "suite": "m03", "condition": "m03"})
    assert 'WEATHER_HINT: {"rain":false}' in text
    assert "m03" not in text and "minecraft_version" not in text.lower()
    assert "LAST_ACTION_FEEDBACK" in OBS_TEXT and "LAST_ACTION_FEEDBACK" not in OBS_NO_FEEDBACK


def test_kept_texts_match_a_fresh_render():
    """A trace step's JSON, the task route and unchanged JSON blocks are made once and reused:
    the prompt is the one rendered from scratch, also after a step completes or a block changes."""
    from mcbuild.runtime.agents.llm.base import SeenOutcome
    from mcbuild.runtime.agents.llm.react import ReActAgent

    agent = ReActAgent(client=object())
    caps = {"crafting": ["inventory"], "tools": {}}
    for step, obs in enumerate([{**FIXED_OBS, "capabilities": caps}, {**FIXED_OBS, "capabilities": caps},
                                {**FIXED_OBS, "capabilities": {**caps, "tools": {"pickaxe": 1}}}], start=1):
        for feedback in (True, False):
            assert agent.observation_text(obs, feedback=feedback) == P.observation_text(agent.bounded(obs), feedback=feedback)
        agent.trace.add(step, {"thought": "t", "skill": "mine", "args": {"block": "log", "count": step}})
        plain = lambda: P.render("recent_steps.j2", steps=[P.View(s) for s in agent.trace.steps])
        before = P.render("recent_steps.j2", steps=agent.trace.view())
        assert before == plain() and '"pending"' in before
        agent.trace.complete(SeenOutcome(step, {}, True, None, "mined", {"log": 1}, {}, 0, 0, obs, obs))
        after = P.render("recent_steps.j2", steps=agent.trace.view())
        assert after == plain() and '"pending"' not in after and '"gained":{"log":1}' in after


def test_kept_observation_parts_follow_each_change():
    """What an agent keeps of one observation for the next (each JSON block's text, the task's route
    and state, the extra blocks' keys) is made again when the block is a new object: every prompt of
    a sequence of changing observations is the one rendered from scratch."""
    from mcbuild.runtime.agents.llm.react import ReActAgent

    first = {**FIXED_OBS, "durability": {}, "failure_cycle": []}
    route = [dict(m) for m in FIXED_OBS["task"]["route"]]
    route[1]["completed"] = True
    sequence = [first, dict(first),                                                  # nothing changed
                {**first, "inventory": {"minecraft:stick": 1}, "durability": {"minecraft:wooden_pickaxe": [3]}},
                {**first, "task": {**FIXED_OBS["task"], "route": route}},            # a milestone completed
                {**first, "weather_hint": {"rain": True}},                           # an extra block appears
                {**first, "weather_hint": {"rain": False}, "task": None, "nearby_targets": {}}]
    for feedback in (True, False):
        agent = ReActAgent(client=object())
        for obs in sequence:
            assert agent.observation_text(obs, feedback=feedback) == P.observation_text(agent.bounded(obs), feedback=feedback)
    assert "DURABILITY" not in agent.observation_text(first)


def test_prompt_hash_is_the_hash_of_the_compact_messages():
    """The hash state kept per system prompt gives the sha256 of ``compact(messages)`` whether calls
    share a system prompt, change it, or have none (a repair turn, a conversation)."""
    import hashlib

    from mcbuild.compiler.core.canonical import compact

    calls = [[{"role": "system", "content": system}, {"role": "user", "content": user}]
             for system in ("rules é", "other \"rules\"", "rules é") for user in ("obs 1", "obs 2\nnext")]
    calls += [[{"role": "user", "content": "alone"}], [*calls[0], {"role": "assistant", "content": "{}"}],
              [{"content": "rules é", "role": "system"}, {"role": "user", "content": "keys in another order"}]]
    for messages in calls:
        assert P.prompt_hash(messages) == hashlib.sha256(compact(messages).encode()).hexdigest()[:16]


def test_skill_interface_matches_the_runtime():
    text = P.render("skills.j2")
    for skill, args in P.skill_signatures().items():
        line = next(l for l in text.splitlines() if l.startswith(f"- {skill}("))
        for arg in args:
            assert f"{arg}:" in line, (skill, arg)


# ---------------------------------------------------------------------------- disclosure
def _sheets(suites) -> dict[str, str]:
    return {sid: suites[sid].files["rules.md"].decode() for sid in SUITES}


def _forbidden(suites) -> list[str]:
    specs = Path(__file__).resolve().parents[1] / "specs"
    titles = [yaml.safe_load((specs / f"{sid}.yaml").read_text())["title"] for sid in SUITES]
    lines = []
    for sheet in _sheets(suites).values():
        for line in sheet.splitlines():
            line = re.sub(r"^\d+\.\s*", "", line.strip().lstrip("#").strip())
            if len(line) > 24:
                lines.append(line)
    return titles + lines + ["rule sheet", "rules in effect", "differs from vanilla", "not the ones vanilla",
                             "changed rule", "modified rule", "hidden rule", "rules have changed", "disclosed"]


def _leaks(text: str, forbidden: list[str]) -> list[str]:
    low = text.lower()
    found = [f for f in forbidden if f.lower() in low]
    found += re.findall(r"\bm0[1-6]\b", low) + re.findall(r"mirror", low)
    return found


def test_no_template_except_react_rules_mentions_rules(suites):
    forbidden = _forbidden(suites)
    for name in P.template_names():
        source = (P.PROMPTS / name).read_text()
        if name == RULES_TEMPLATE:
            assert "{{ rule_sheet }}" in source
            continue
        assert _leaks(source, forbidden) == [], name
        assert _leaks(rendered(name), forbidden) == [], name


@pytest.fixture(scope="module")
def worlds(suites):
    from mcbuild.compiler.rules.pack import read_zip
    from mcbuild.compiler.rules.rulebook import with_packs
    from mcbuild.runtime.backends.sim.synthetic import biome_pack, static_world

    static, biome = static_world(), biome_pack()
    out = {"vanilla": with_packs([biome])}
    for sid in SUITES:
        out[sid] = with_packs([biome, (f"file/{sid}.zip", read_zip(suites[sid].files["datapack.zip"]))])
    return static, out


def _responder(msgs):
    s = msgs[0]["content"]
    if "Reflector" in s:
        return json.dumps({"failure_type": "x", "diagnosis": "d", "next_subgoal": "log", "avoid": [], "try": [],
                           "expiry_condition": "e"})
    if "Critic Agent" in s:
        return json.dumps({"success": False, "critique": "c"})
    if "Action Agent of Voyager" in s:
        return json.dumps({"program": {"name": "p", "success": {"kind": "state_change"},
                                       "actions": [{"skill": "mine", "args": {"block": "log", "count": 2}},
                                                   {"skill": "craft_grid", "args": {"station": "inventory",
                                                    "grid": [["minecraft:oak_log", None], [None, None]]}}]}})
    if "dependency graph" in s:
        return json.dumps({"root": "minecraft:story/obtain_armor", "nodes": [{"item": "oak_log", "requirements": []}]})
    if "Planner of ADAM" in s:
        return json.dumps({"subgoals": [{"target": "minecraft:stone_pickaxe", "reason": "r"}]})
    if "causal-discovery" in s:
        return json.dumps({"edges": []})
    step = sum(1 for m in msgs if m["role"] == "user")
    return json.dumps([{"skill": "mine", "args": {"block": "log", "count": 2}},
                       {"skill": "craft_grid", "args": {"station": "inventory",
                                                        "grid": [["minecraft:oak_log", None], [None, None]]}},
                       ][step % 2] | {"thought": "t", "subgoal": "minecraft:oak_log"})


def _prompts(worlds, name, condition, budget=3, **kw):
    from mcbuild.runtime.backends.sim.backend import SimBackend
    from mcbuild.runtime.episode.episode import Episode
    from mcbuild.runtime.episode.loop import run

    static, rules = worlds
    with ScriptedEndpoint(_responder) as ep:
        agent = create(name, ep.settings(), **kw)
        run(Episode.from_parts(SimBackend(static, rules[condition]), rules[condition], rules["vanilla"], "iron_armor", budget=budget,
                               condition=condition), agent)
    return [m["content"] for c in agent.calls for m in c["messages"]]


@pytest.mark.parametrize("name", [n for n in CONFIGURATIONS if n != "react_rules"])
def test_hidden_configurations_never_see_rules(worlds, suites, name):
    forbidden = _forbidden(suites)
    vanilla = _prompts(worlds, name, "vanilla")
    for sid in SUITES:
        mirror = _prompts(worlds, name, sid)
        assert _leaks("\n".join(mirror), forbidden) == [], sid
        # the first decision sees identical state in both worlds, so its prompt is byte-identical
        assert mirror[:2] == vanilla[:2], sid


def test_react_rules_gets_the_exact_sheet_on_every_call(worlds, suites):
    for sid, sheet in _sheets(suites).items():
        texts = _prompts(worlds, "react_rules", sid, budget=3, rules=sheet, rules_binding=sid)
        systems = texts[0::2]
        assert systems and all(sheet.strip() in s and "DISCLOSED" in s for s in systems)
