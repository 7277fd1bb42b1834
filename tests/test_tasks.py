"""Task specs (``kind: task``), rule-based milestone checkers, ``task check`` and difficulty."""
from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
import yaml
from click.testing import CliRunner

from mcbuild.compiler.core.errors import CompileError, SpecError
from mcbuild.compiler.planning.difficulty import task_difficulty
from mcbuild.compiler.planning.tracer import vanilla_model
from mcbuild.compiler.rules.rulebook import Rulebook, vanilla
from mcbuild.compiler.rules.tasks import Checker
from mcbuild.compiler.spec.kinds import json_schema, load_spec
from mcbuild.compiler.spec.task import TASKS_DIR, CheckerSpec, load_task_spec, tasks
from mcbuild.compiler.worlds.taskcheck import check_task
from mcbuild.cli import main
from mcbuild.runtime.agents.registry import create
from mcbuild.runtime.backends.sim import synthetic
from mcbuild.runtime.backends.sim.backend import SimBackend
from mcbuild.runtime.contract.backend import Outcome, Transition
from mcbuild.runtime.episode.episode import Episode
from mcbuild.runtime.episode.loop import run

PAPER = {    # the values of the paper tasks before they became spec files (catalogs/tasks.yaml)
    "iron_armor": (50, [("mine_stone", 15), ("upgrade_tools", 35), ("smelt_iron", 65), ("obtain_armor", 100)]),
    "diamond": (50, [("mine_stone", 10), ("upgrade_tools", 25), ("smelt_iron", 50), ("iron_tools", 70),
                     ("mine_diamond", 100)]),
    "enchantment": (75, [("mine_stone", 10), ("upgrade_tools", 25), ("smelt_iron", 45), ("iron_tools", 60),
                         ("mine_diamond", 75), ("form_obsidian", 90), ("enchant_item", 100)]),
}
# every checker type the spec model accepts (a new one must get an example in specs/tasks/)
TYPES = {t for model in get_args(get_args(CheckerSpec)[0]) for t in get_args(model.model_fields["type"].annotation)}


def test_paper_tasks_keep_their_budgets_milestones_and_values():
    for tid, (budget, milestones) in PAPER.items():
        task = tasks()[tid]
        assert task.budget == budget and not task.checked
        assert [(m.code, m.value) for m in task.milestones] == milestones
        assert all(m.advancement == f"minecraft:story/{m.code}" for m in task.milestones)


def test_the_examples_use_every_checker_type_and_load_as_specs():
    used = {c.type for t in ("camp", "iron_sword") for m in tasks()[t].checked for c in m.checkers}
    assert used == TYPES
    assert load_spec(TASKS_DIR / "camp.yaml", ("task",)).id == "camp"
    assert "milestones" in json_schema("task")["properties"]


def _write(tmp_path: Path, milestones: list[dict], **top) -> Path:
    data = {"schema_version": "1.0", "kind": "task", "id": "t", "title": "T", "budget": 10,
            "milestones": milestones, **top}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _m(mid: str, value: int, checkers: list[dict], requires=()) -> dict:
    return {"id": mid, "value": value, "description": mid, "checkers": checkers, "requires": list(requires)}


HAS_TABLE = {"type": "inventory_has", "item": "minecraft:crafting_table"}


def test_a_cycle_is_refused(tmp_path):
    path = _write(tmp_path, [_m("a", 50, [HAS_TABLE], ["b"]), _m("b", 100, [HAS_TABLE], ["a"])])
    with pytest.raises(SpecError, match=r"milestones: .*cycle: a -> b -> a"):
        load_task_spec(path)


@pytest.mark.parametrize("box, message", [
    ({"min": [2, 0, 0], "max": [1, 0, 0]}, "min.x 2 is above max.x 1"),
    ({"min": [0, 0, 0], "max": [99, 0, 0]}, "within 64 blocks"),
    ({"min": [0, 0], "max": [1, 1, 1]}, "box.min"),
])
def test_a_malformed_box_is_refused(tmp_path, box, message):
    path = _write(tmp_path, [_m("a", 100, [{"type": "position_inside_box", "box": box}])])
    with pytest.raises(SpecError, match=message):
        load_task_spec(path)


def test_an_unknown_checker_or_block_is_refused(tmp_path):
    with pytest.raises(SpecError, match="checkers"):
        load_task_spec(_write(tmp_path, [_m("a", 100, [{"type": "teleport"}])]))
    with pytest.raises(SpecError, match="unknown block 'minecraft:moon_rock'"):
        load_task_spec(_write(tmp_path, [_m("a", 100, [{"type": "mine_block", "target": "minecraft:moon_rock"}])]))


def test_task_check_refuses_an_always_true_milestone(tmp_path, world_build, built_world_ids):
    box = {"type": "position_inside_box", "box": {"min": [-2, -2, -2], "max": [2, 2, 2]}}
    path = _write(tmp_path, [_m("home", 100, [box])])
    with pytest.raises(SpecError, match=r"milestones\[0\].checkers: .*always true at the start"):
        check_task(path, world_build, ["vanilla"], built_world_ids[:1])


def test_task_check_refuses_an_unreachable_step(tmp_path, world_build, built_world_ids):
    path = _write(tmp_path, [_m("table", 50, [HAS_TABLE]),
                             _m("netherite", 100, [{"type": "inventory_has", "item": "minecraft:netherite_ingot"}],
                                ["table"])])
    with pytest.raises(SpecError, match=r"milestones\[1\]: milestone 'netherite' has no route in .* under vanilla"):
        check_task(path, world_build, ["vanilla"], built_world_ids[:1])


@pytest.mark.parametrize("task", ["camp", "iron_sword"])
def test_task_check_passes_the_examples(task, world_build, built_world_ids):
    found = check_task(TASKS_DIR / f"{task}.yaml", world_build, ["vanilla", "m02"], built_world_ids[:1])
    assert found.saves == 2 and set(found.difficulty) == {"vanilla", "m02"}


def test_task_check_names_a_damaged_save(tmp_path):
    save = tmp_path / "build" / "worlds" / "w" / "vanilla"
    save.mkdir(parents=True)
    (save / "level.dat").write_bytes(b"\x1f\x8b not gzip")
    path = _write(tmp_path, [_m("a", 100, [{"type": "inventory_has", "item": "minecraft:stick"}])])
    with pytest.raises(CompileError, match="rules unreadable") as err:
        check_task(path, tmp_path / "build", ["vanilla"], ["w"])
    assert err.value.file == str(save)


def test_task_check_cli_is_one_line_and_exit_2(tmp_path):
    path = _write(tmp_path, [_m("a", 50, [HAS_TABLE], ["a"]), _m("b", 100, [HAS_TABLE])])
    result = CliRunner().invoke(main, ["task", "check", str(path)])
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "cycle: a -> a" in result.output


def test_difficulty_orders_the_paper_tasks_in_vanilla():
    rules = vanilla()
    d = {t: task_difficulty(vanilla_model(rules), rules, tasks()[t]) for t in PAPER}
    assert 0 < d["iron_armor"] < d["diamond"] < d["enchantment"]


# ---------------------------------------------------------------------------- checkers on the simulator
@pytest.fixture(scope="module")
def rules() -> Rulebook:
    return Rulebook(packs=[synthetic.biome_pack()])


def _episode(rules: Rulebook, task: str) -> Episode:
    return Episode.from_parts(SimBackend(synthetic.static_world(), rules, 0), rules, rules, task)


def test_checked_milestones_latch_and_score_and_observation_hide_the_checker(rules):
    with _episode(rules, "iron_sword") as ep:
        assert ep.milestones_met == [] and ep.score == 0
        ep.provisioning.give({"minecraft:iron_sword": 1})
        ep.step({"skill": "wait", "args": {}})
        assert ep.milestones_met == [] and ep.score == 0      # owning it is not crafting it
        obs = ep.observe()
        entry = obs["task"]["route"][-1]
        assert entry == {"advancement": None, "code": "iron_sword", "value": 100, "completed": False,
                         "description": "Craft an iron sword and keep it"}
        assert "checkers" not in str(obs) and "inventory_has" not in str(obs)
        assert obs["task"]["instruction"].startswith("Craft an iron sword")


def test_event_checkers_count_since_reset(rules):
    with _episode(rules, "iron_sword") as ep:
        run(ep, create("vanilla-planner"), 0)
        assert ep.milestones_met == ["crafting_table", "mine_stone", "cobblestone", "iron_ore", "smelt_iron",
                                     "iron_sword"]
        assert ep.score == 100 and ep.success           # the planner reads the checked milestones' spec
        ep.reset()
        assert ep.milestones_met == [] and ep.score == 0


def test_box_position_and_facing_checkers(rules):
    with _episode(rules, "camp") as ep:
        sim = ep.backend
        start = sim.body.pos
        assert "back_home" not in ep.milestones_met and sim.snapshot().facing == "south"
        ep.provisioning.give({"minecraft:crafting_table": 1})
        ep.step({"skill": "place", "args": {"block": "minecraft:crafting_table"}})
        assert "table_at_camp" in ep.milestones_met
        sim.body.pos = (start[0], start[1], start[2] + 20)          # harness move: scout south
        ep.step({"skill": "wait", "args": {}})
        assert "scout" in ep.milestones_met
        checks = ep._checks
        near = next(c for m in checks.milestones for c in m.checkers if c.type == "position_near_with_facing")
        snap = sim.snapshot()
        assert not checks.holds(near, sim, snap)
        assert checks.holds(near, sim, snap._replace(position=start, facing="north"))
        cows = next(c for m in checks.milestones for c in m.checkers if c.type == "count_in_box_at_most")
        alive = sim.count_in_box("entity", "minecraft:cow", *[tuple(o + v for o, v in zip(start, corner))
                                                              for corner in (cows.box.low, cows.box.high)])
        assert checks.holds(cows, sim, snap) == (alive == 0)
        with pytest.raises(ValueError, match="unknown checker type 'teleported'"):
            checks.holds(Checker("teleported", "minecraft:cow"), sim, snap)       # never silently false


def test_action_events_read_the_outcome():
    from mcbuild.runtime.contract.checkers import action_events

    out = Outcome(True, "", None, {"gained": {"minecraft:beef": 2}, "killed": {"minecraft:cow": 1}},
                  [Transition("attack", "minecraft:cow")])
    assert action_events("attack", out) == {("kill_entity", "minecraft:cow"): 1, ("pickup", "minecraft:beef"): 2}
    craft = Outcome(True, "", None, {"produced": {"minecraft:stick": 4}, "gained": {"minecraft:stick": 4}},
                    [Transition("craft", "[]")])
    assert action_events("craft_grid", craft) == {("craft_item", "minecraft:stick"): 4}


def test_custom_tasks_study_reports_msr(world_build, built_world_ids, tmp_path):
    """studies/custom_tasks.yaml runs on the simulator (in the worlds the test build holds) and its
    report shows MSR and d(τ) per task."""
    from mcbuild.compiler.core.paths import ROOT
    from mcbuild.runtime.study import metrics
    from mcbuild.runtime.study.design.config import load_config
    from mcbuild.runtime.study.report import load_study, write_report
    from mcbuild.runtime.study.run.runner import run_study

    cfg = load_config(ROOT / "studies" / "custom_tasks.yaml")
    assert set(cfg.tasks) == {"camp", "iron_sword"} and cfg.models == ["none"]
    cfg = cfg.model_copy(update={"worlds": [w for w in cfg.worlds if w in built_world_ids]})
    out = tmp_path / "study"
    assert run_study(cfg, out_dir=out, build_root=world_build, workers=1).complete
    res = write_report(out, min_episodes=1, build=world_build, trajectories=False, viewer=False)
    records = load_study(out).records
    assert records and all(r.milestones_total == len(tasks()[r.task].milestones) for r in records)
    vanilla = metrics.milestone_rates([r for r in records if r.is_vanilla], ("task", "configuration"))
    rows = {r[0]: r for r in res.table("tableM_task").rows if r[1] == "Vanilla planner (scripted)"}
    for task, title in (("camp", "Camp"), ("iron_sword", "Iron Sword")):
        v = vanilla[(task, "vanilla-planner")]
        assert rows[title][2] == f"{v.score:.1f} / {v.sr:.1f} / {v.msr:.1f} / {v.tsr:.1f} (n={v.n})"
    assert vanilla[("iron_sword", "vanilla-planner")].msr > 0
    d = {r[0]: float(r[1].split(" / ")[0]) for r in res.table("tableD_difficulty").rows}
    assert d["Camp"] < d["Iron Sword"]
    assert "MSR" in res.markdown.read_text()
