"""Episode API, scoring, end conditions, trace and records, and the scripted agents, on the
synthetic world (built worlds: test_sim_worlds.py)."""
from __future__ import annotations

import dataclasses
import json
import random

import pytest
from test_sim_rules import suite_pack

from mcbuild.compiler.rules.rulebook import Rulebook
from mcbuild.compiler.spec.task import tasks
from mcbuild.runtime.agents.registry import AGENTS, create
from mcbuild.runtime.backends.sim import synthetic
from mcbuild.runtime.backends.sim.backend import SimBackend
from mcbuild.runtime.contract.backend import Snapshot
from mcbuild.runtime.contract.knowledge import inventory_parts, prerequisite
from mcbuild.runtime.contract.observation import (
    CYCLE_WINDOW,
    EFFECTS_KEPT,
    ObservationTracker,
    make_progress,
    serialize,
)
from mcbuild.runtime.contract.skills import FACILITY_SET
from mcbuild.runtime.episode import trace
from mcbuild.runtime.episode.episode import Episode, EpisodeOver
from mcbuild.runtime.episode.loop import run
from mcbuild.runtime.records import EpisodeRecord


@pytest.fixture(scope="module")
def twin() -> Rulebook:
    return Rulebook(packs=[synthetic.biome_pack()])


def mirror(suite: str) -> Rulebook:
    return Rulebook(packs=[synthetic.biome_pack(), suite_pack(suite)])


def episode(rules: Rulebook, twin: Rulebook, task: str = "iron_armor", **kw) -> Episode:
    return Episode.from_parts(SimBackend(synthetic.static_world(), rules, kw.get("seed", 0)), rules, twin, task, **kw)


def give(ep: Episode, **items: int) -> None:
    """Test-only: put items into the body (no agent-callable path does this)."""
    ep.provisioning.give({f"minecraft:{k}": n for k, n in items.items()})


def test_score_is_the_deepest_milestone_value(twin):
    with episode(twin, twin) as ep:
        assert ep.score == 0 and ep.observe()["next_milestone"]["code"] == "mine_stone"
        give(ep, stone_pickaxe=1)
        ep.step({"skill": "wait", "args": {}})
        assert ep.score == 35 and ep.observe()["progress"] == {"score": 35, "highest_completed": "upgrade_tools"}
        give(ep, iron_helmet=1)
        ep.step({"skill": "wait", "args": {}})
        assert ep.score == 100 and ep.success and ep.done and ep.end_reason == "final_milestone"
        assert ep.success_action == 2
        with pytest.raises(EpisodeOver):
            ep.step({"skill": "wait", "args": {}})


def test_every_attempt_costs_one_action_until_the_budget_ends(twin):
    with episode(twin, twin, budget=3) as ep:
        ep.step({"skill": "fly"})
        ep.step({"skill": "mine", "args": {"block": "stone", "count": 9}})
        obs = ep.observe()
        assert obs["budget"] == {"total": 3, "used": 2, "remaining": 1}
        assert obs["latest_result"]["reason"] == "invalid_args"
        ep.step({"skill": "mine", "args": {"block": "log"}})
        assert ep.done and ep.end_reason == "budget_exhausted" and ep.used == 3


def test_no_action_ends_the_episode(twin):
    class Idle:
        name = "idle"

        def reset(self, seed):
            pass

        def act(self, observation):
            return None

    with episode(twin, twin) as ep:
        run(ep, Idle(), 0)
        assert ep.end_reason == "no_action" and ep.used == 0


def test_incremental_observations_match_a_fresh_build(twin):
    """Every observation of a scripted episode (crafting, smelting, and more verified effects than
    are kept), built from the previous one, equals one built whole with nothing kept from earlier
    turns."""
    with episode(twin, twin, "enchantment") as ep:
        agent = create("vanilla-planner")
        agent.reset(0)
        evicted = False
        while not ep.done:
            observation = ep.observe()
            fresh = dataclasses.replace(ep.tracker, _stand=None, _effects_kept=(-1, -1, [], [], ()),
                                        _unused_kept=(None, []), _last=None)
            assert list(observation) == sorted(observation)
            assert serialize(fresh.rebuilt(ep._view)) == serialize(observation), ep.used
            made = [(e["action"], e["produced"]) for e in reversed(ep.tracker.effects.values())
                    if e["skill"] in ("craft_grid", "smelt") and e["produced"]]
            assert [(action, produced) for action, produced, _ in fresh._effects_shown()[3]] == made
            # the parts kept per inventory and facilities observed, made anew
            items = tuple(sorted(ep._view.inventory.items()))
            stations = tuple(sorted(FACILITY_SET.intersection(ep._view.nearby_blocks)))
            shown = (observation["facilities"]["owned_unplaced"], observation["capabilities"],
                     observation["vanilla_recipe_hypotheses"])
            assert shown == inventory_parts.__wrapped__(items, stations)
            done = set(ep._view.advancements) | ep.tracker.met          # the progress kept per task, made anew
            reached = frozenset(m.key for m in ep.setup.task.milestones if m.key in done)
            shown = (observation["task"], observation["next_milestone"], observation["progress"])
            assert shown == make_progress(ep.setup.task, reached)
            evicted |= len(ep.tracker.effects) == EFFECTS_KEPT
            ep.step(agent.act(observation))
        assert evicted and any(t.action["skill"] == "smelt" for t in ep.tracker.turns)


def _feedback_read_whole(turns: list) -> dict:
    """The feedback fields read from every turn (the definitions the tracker keeps positions for)."""
    since: list = []
    for turn in reversed(turns):
        if turn.changed:
            break
        since.insert(0, turn)
    blocked = {t.text: {"action": t.action, "reason": t.result.get("reason"), "requires": prerequisite(t.action, t.result)}
               for t in since if not t.result.get("ok")}
    recent = turns[-CYCLE_WINDOW:]
    cycle = None
    if len(recent) >= 4 and not any(t.result.get("ok") for t in recent):
        keys = [t.text for t in recent]
        for period in (2, 3):
            if keys[-2 * period:-period] == keys[-period:] and len(set(keys[-period:])) == period:
                cycle = [t.action for t in recent[-period:]]
                break
    idle = [t for t in recent if t.result.get("ok") and not t.changed]
    repeated = {t.text for t in idle if [u.text for u in idle].count(t.text) >= 2}
    first: dict = {}
    for t in idle:
        if t.text in repeated:
            first.setdefault(t.text, t.action)
    stagnation = list(first.values()) or None
    count = 0
    for turn in reversed(turns):
        if turn.result.get("ok") or turn.text != turns[-1].text:
            break
        count += 1
    warning = {"forbidden_action": turns[-1].action, "repeat_count": count} if count >= 2 else None
    return {"blocked_actions": list(blocked.values()), "failure_cycle": cycle, "stagnation_cycle": stagnation,
            "stagnation_warning": warning}


def test_feedback_fields_kept_by_position_match_reading_every_turn():
    """Random turns (failing, succeeding, changing or not) recorded one by one: the feedback fields
    of each observation equal the ones read from the whole history."""
    rng = random.Random(11)
    here = Snapshot({}, None, 0, (0, 0, 0), 20.0, 20, True, {}, "b", (), {}, {}, {})
    moved = here._replace(position=(1, 0, 0))
    for _ in range(40):                 # short histories too: the first turns have fewer than a window
        tracker = ObservationTracker(tasks()["enchantment"], 500)
        for _ in range(rng.randint(3, 30)):
            block = rng.choice(("stone", "dirt", "sand"))
            action = {"skill": "mine", "args": {"block": f"minecraft:{block}", "count": 1}}
            ok = rng.random() < 0.35
            result = {"ok": ok, "reason": None if ok else "no_target", "message": "m", "gained": {}, "lost": {}}
            tracker.record(action, result, here, moved if rng.random() < 0.2 else here)
            observation = tracker.build(here)
            assert {k: observation[k] for k in _feedback_read_whole(tracker.turns)} == _feedback_read_whole(tracker.turns)


def test_an_evicted_craft_effect_leaves_the_unused_output_warnings(twin):
    with episode(twin, twin) as ep:
        give(ep, oak_planks=4)
        tracker, snap = ep.tracker, ep._snap.seeing(ep.backend.surroundings())
        craft = {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["oak_log"]]}}
        tracker.record(craft, {"ok": True, "gained": {"minecraft:oak_planks": 4}}, snap, snap)
        assert [w["output"] for w in tracker.build(snap)["unused_output_warnings"]] == [{"minecraft:oak_planks": 4}]
        for i in range(EFFECTS_KEPT):
            tracker.record({"skill": "mine", "args": {"block": f"b{i}"}}, {"ok": True, "gained": {f"b{i}": 1}}, snap, snap)
        assert tracker.build(snap)["unused_output_warnings"] == []


def test_observation_feedback_fields(twin):
    with episode(twin, twin) as ep:
        for _ in range(2):
            ep.step({"skill": "mine", "args": {"block": "stone"}})
        obs = ep.observe()
        assert obs["stagnation_warning"]["repeat_count"] == 2
        blocked = obs["blocked_actions"][0]
        assert blocked["reason"] == "needs_tool" and "minecraft:wooden_pickaxe" in blocked["requires"]["any_tool_of"]
        for item in ("sand", "dirt") * 2:
            ep.step({"skill": "smelt", "args": {"input": item}})
        assert len(ep.observe()["failure_cycle"]) == 2
        ep.step({"skill": "mine", "args": {"block": "log"}})
        ep.step({"skill": "craft_grid", "args": {"station": "inventory", "grid": [["oak_log", None], [None, None]]}})
        obs = ep.observe()
        assert obs["verified_action_effects"][-1]["produced"] == {"minecraft:oak_planks": 4}
        assert obs["unused_output_warnings"][0]["mode"] == "quantity_check"
        hypotheses = obs["vanilla_recipe_hypotheses"]
        assert any(h["output"] == "minecraft:crafting_table" and h["executable"] for h in hypotheses)
        assert obs["capabilities"]["crafting"] == ["inventory"] and obs["survival"]["alive"]


def test_trace_and_record_carry_the_evaluator_events(twin, tmp_path):
    with episode(mirror("m04"), twin, condition="m04", world="plains-1", biome="plains") as ep:
        give(ep, stone_pickaxe=1)
        ep.step({"skill": "mine", "args": {"block": "coal_ore"}})
        ep.step({"skill": "mine", "args": {"block": "iron_ore"}})
        ep.step({"skill": "mine", "args": {"block": "iron_ore"}})
        trace.write_trace(ep, tmp_path / "t.jsonl")
        record = trace.record(ep, "e1", "scripted")
    lines = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [line["type"] for line in lines] == ["episode", "step", "step", "step", "end"]
    assert "loot_table:minecraft:blocks/iron_ore" in lines[0]["changed_rules"]
    assert lines[1]["inventory_delta"] == {"minecraft:coal_block": 1}
    assert [e["first"] for e in lines[3]["evaluator"]] == [False]
    assert isinstance(record, EpisodeRecord) and record.condition == "m04" and record.score == 35
    assert [(e.rule, e.action_index, e.signature) for e in record.encounters] == [
        ("loot_table:minecraft:blocks/coal_ore", 1, "mine|minecraft:coal_ore"),
        ("loot_table:minecraft:blocks/iron_ore", 2, "mine|minecraft:iron_ore")]
    assert record.encounters[0].next_signature == "mine|minecraft:iron_ore"


def test_reset_replays_identically(twin):
    actions = [{"skill": "attack", "args": {"target": "cow", "count": 2}}, {"skill": "mine", "args": {"block": "log"}}]
    with episode(twin, twin, seed=4) as ep:
        first = [ep.step(a) for a in actions] + [ep.observe()]
        ep.reset()
        assert [ep.step(a) for a in actions] + [ep.observe()] == first


def test_registry_has_the_scripted_and_llm_agents():
    assert {"vanilla-planner", "adaptive-planner", "react"} <= set(AGENTS)
    assert create("vanilla-planner").name == "vanilla-planner"


def test_an_option_an_agent_does_not_take_is_refused_not_dropped():
    from mcbuild.runtime.agents.base import UnknownOption
    from mcbuild.runtime.agents.registry import offered

    with pytest.raises(UnknownOption, match=r"^agent 'vanilla-planner' takes no option 'model' \(its options: none\)$"):
        create("vanilla-planner", model="gpt-4.1")
    with pytest.raises(UnknownOption, match=r"^agent 'react' takes no option 'rules' \(its options: .*temperature"):
        create("react", model="m", rules="1. ...")
    with pytest.raises(UnknownOption, match="agent 'react' takes no option 'temprature'"):
        create("react", model="m", temprature=0.2)
    # what a study offers (seed, model, rules) reaches an agent only where its factory takes it
    assert offered("vanilla-planner", seed=1, model="m") == {}
    assert offered("react", seed=1, model="m", rules="r") == {"model": "m"}
    assert offered("react_rules", seed=1, model="m", rules="r") == {"model": "m", "rules": "r"}


@pytest.mark.parametrize("task", ["iron_armor", "diamond", "enchantment"])
def test_vanilla_planner_completes_every_paper_task(twin, task):
    with episode(twin, twin, task) as ep:
        run(ep, create("vanilla-planner"), 0)
        assert ep.success, ep.trajectory[-1]["result"]
        assert ep.used <= tasks()[task].budget
    for step in ep.trajectory:      # a block cleared as an obstruction is never reported as mined
        if step["action"]["skill"] == "mine" and step["result"]["ok"]:
            assert set(step["result"]["mined"]) == {step["action"]["args"]["block"]}


@pytest.mark.parametrize("suite, task", [("m05", "diamond"), ("m05", "enchantment")])
def test_adaptive_planner_learns_what_the_vanilla_planner_cannot(twin, suite, task):
    scores = {}
    for name in ("vanilla-planner", "adaptive-planner"):
        with episode(mirror(suite), twin, task, condition=suite) as ep:
            run(ep, create(name), 0)
            scores[name] = ep.score
    assert scores["adaptive-planner"] == 100 and scores["vanilla-planner"] < 100


def test_agents_are_deterministic_per_seed(twin):
    def actions(seed: int) -> list:
        with episode(mirror("m05"), twin, "iron_armor", seed=seed) as ep:
            run(ep, create("adaptive-planner"), seed)
            return [(t["action"], t["result"]) for t in ep.trajectory]

    assert actions(7) == actions(7)          # (seed sensitivity: test_sim_backend.test_same_seed_same_trajectory)


@pytest.mark.parametrize("agent", ["vanilla-planner", "adaptive-planner"])
def test_observations_are_plain_sorted_and_stay_as_handed_out(twin, agent):
    """Observations are handed out without a copy: each is already what its canonical JSON reads
    back as (same values, same key order), and neither the agent nor later turns change it."""
    seen = []
    with episode(mirror("m05"), twin, "iron_armor") as ep:
        bot = create(agent)
        bot.reset(0)
        while not ep.done:
            obs = ep.observe()
            text = json.dumps(obs)
            assert text == json.dumps(json.loads(serialize(obs))), "not in canonical form"
            action = bot.act(obs)
            assert json.dumps(obs) == text, "the agent changed its observation"
            seen.append((obs, text))
            if action is None:
                break
            result = ep.step(action)
            assert result == ep.trajectory[-1]["result"] and result is not ep.trajectory[-1]["result"]
    assert all(json.dumps(obs) == text for obs, text in seen), "a later turn changed an observation"
