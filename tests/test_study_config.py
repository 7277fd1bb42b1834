"""Study configs (studies/*.yaml) and their expansion into a plan of episodes."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from mcbuild.compiler.core.paths import ROOT
from mcbuild.compiler.worlds.layout import world_biomes
from mcbuild.runtime.study.design.config import StudyConfig, load_config
from mcbuild.runtime.study.design.plan import build_plan, count_by, episode_id, episode_seed

STUDIES = ROOT / "studies"


def test_paper_yaml_is_the_8640_episode_design():
    cfg = load_config(STUDIES / "paper.yaml")
    plan = build_plan(cfg)
    assert len(plan) == 8640
    by_disc = count_by(plan, "disclosure")
    assert by_disc == {"hidden": 7560, "disclosed": 1080}
    # 2 models x 6 configs x 10 worlds x 7 conditions x 3 tasks x 3 reps
    assert len(cfg.models) == 2 and len(cfg.configurations) == 6
    assert count_by(plan, "configuration")["react_rules"] == 1080
    assert all(e.condition != "vanilla" for e in plan if e.configuration == "react_rules")
    assert all(e.disclosure == "disclosed" for e in plan if e.configuration == "react_rules")
    # each (model, task, configuration) has 30 Vanilla episodes and 30 per suite
    cell = count_by([e for e in plan if e.disclosure == "hidden"], ("model", "task", "configuration", "condition"))
    assert set(cell.values()) == {30}
    assert {e.budget for e in plan if e.task == "enchantment"} == {75}
    assert {e.budget for e in plan if e.task != "enchantment"} == {50}


def test_quick_yaml_is_key_free_on_all_worlds():
    cfg = load_config(STUDIES / "quick.yaml")
    assert cfg.configurations == ["vanilla-planner", "adaptive-planner"]
    assert cfg.models == ["none"] and cfg.backend == "sim" and cfg.repetitions == 1
    assert cfg.worlds == list(world_biomes()) and len(cfg.worlds) == 10
    assert cfg.conditions == ["vanilla", "m01", "m02", "m03", "m04", "m05", "m06"]
    plan = build_plan(cfg)
    assert len(plan) == 2 * 10 * 7 * 3
    assert {e.biome for e in plan} == {"plains", "taiga", "snowy_plains", "jungle", "savanna"}


def test_horizon_budget_override_and_checkpoints():
    cfg = load_config(STUDIES / "horizon.yaml")
    assert set(cfg.task_budgets().values()) == {200}
    assert cfg.report_checkpoints() == [100, 150, 200]
    over = StudyConfig(name="x", configurations=["react"], budget=200, budgets={"iron_armor": 60})
    assert over.task_budgets() == {"iron_armor": 60, "diamond": 200, "enchantment": 200}


def test_ids_deterministic_unique_and_order_independent():
    cfg = load_config(STUDIES / "paper.yaml")
    a, b = build_plan(cfg), build_plan(cfg)
    assert [e.episode_id for e in a] == [e.episode_id for e in b]
    assert len({e.episode_id for e in a}) == len(a)
    assert len({e.seed for e in a}) > len(a) * 0.99
    shuffled = cfg.model_copy(update={"worlds": list(reversed(cfg.worlds)), "name": "other"})
    assert {e.episode_id for e in build_plan(shuffled)} == {e.episode_id for e in a}
    reseeded = cfg.model_copy(update={"base_seed": cfg.base_seed + 1})
    assert [e.episode_id for e in build_plan(reseeded)] == [e.episode_id for e in a]
    assert [e.seed for e in build_plan(reseeded)] != [e.seed for e in a]
    e = a[0]
    assert e.episode_id == episode_id(world=e.world, condition=e.condition, task=e.task, configuration=e.configuration,
                                      model=e.model, budget=e.budget, disclosure=e.disclosure, repetition=e.repetition)
    assert e.seed == episode_seed(cfg.base_seed, e.episode_id)
    # the budget is part of the identity
    assert episode_id(world="plains-1", condition="m01", task="diamond", configuration="react", model="m",
                      budget=50, disclosure="hidden", repetition=0) != \
        episode_id(world="plains-1", condition="m01", task="diamond", configuration="react", model="m",
                   budget=200, disclosure="hidden", repetition=0)


@pytest.mark.parametrize(
    "bad",
    [
        {"tasks": ["iron_armor", "flying"]},
        {"worlds": ["plains-1", "plains-1"]},
        {"conditions": ["vanilla", "mirror"]},
        {"disclosure": {"configurations": ["react"]}},
        {"repetitions": 0},
        {"unknown_key": 1},
        {"name": "../escape"},
        {"conditions": ["vanilla"], "disclosure": {"configurations": ["react_rules"]}},
        {"endpoint": {"max_tokens": 0}},
        {"endpoint": {"timeout": -1}},
    ],
)
def test_invalid_configs_are_rejected(bad):
    data = {"name": "t", "configurations": ["react"], **bad}
    with pytest.raises(ValueError):
        StudyConfig.model_validate(data)


def test_cli_plan_prints_counts():
    from mcbuild.cli import main

    res = CliRunner().invoke(main, ["study", "plan", str(STUDIES / "paper.yaml")])
    assert res.exit_code == 0, res.output
    assert "8640 episodes" in res.output
    assert "react_rules" in res.output and "1080" in res.output


def test_endpoint_reply_cap_and_timeout_reach_the_llm_settings():
    cfg = StudyConfig.model_validate({"name": "t", "configurations": ["react"], "models": ["m"],
                                      "endpoint": {"max_tokens": 256, "timeout": 600}})
    s = cfg.llm_settings("m")
    assert (s.model, s.max_tokens, s.timeout) == ("m", 256, 600.0)
    default = StudyConfig.model_validate({"name": "t", "configurations": ["react"], "models": ["m"],
                                          "endpoint": {}}).llm_settings("m")
    assert (default.max_tokens, default.timeout) == (2048, 120.0)


@pytest.mark.parametrize("body, line", [
    ("models: [{name: m, temprature: 0.3}]", "models[0].temprature: unknown key; did you mean `temperature`?"),
    ("models: [a, {name: m, max_tokns: 9}]", "models[1].max_tokns: unknown key; did you mean `max_tokens`?"),
    ("endpoint: {base_ur: http://x}", "endpoint.base_ur: unknown key; did you mean `base_url`?"),
    ("repetitons: 2", "repetitons: unknown key; did you mean `repetitions`?"),
    ("worlds: [plains-1, plains-9]", "worlds[1]: 'plains-9' is not in specs/worlds.yaml"),
    ("tasks: [diamond, gold]", "tasks[1]: unknown task 'gold'; known: "),
    ("conditions: [vanilla, m09]", "conditions[1]: unknown condition 'm09'; known: vanilla, m01"),
    ("repetitions: 0", "repetitions: Input should be greater than or equal to 1"),
])
def test_config_errors_name_the_field_as_the_file_spells_it(tmp_path, body, line):
    """The path the user wrote, the nearest known key, and no pydantic prefixes or internal names."""
    from mcbuild.compiler.core.errors import SpecError

    path = tmp_path / "s.yaml"
    path.write_text(f"configurations: [react]\n{body}\n")
    with pytest.raises(SpecError) as exc:
        load_config(path)
    text = str(exc.value)
    assert text.startswith(f"{path}: {line}"), text
    assert not any(bad in text for bad in ("<root>", "Value error", "model_settings", "Extra inputs"))


def test_a_resume_with_other_settings_names_only_what_differs(tmp_path):
    from mcbuild.runtime.study.store.results import Store, StoreError

    sampling = {"m": {"temperature": 0.7, "top_p": None, "max_tokens": 2048, "base_url": "http://a"}}
    with Store.open(tmp_path) as store:
        store.bind(study="s", config_json={"name": "s"}, plan_digest="p", fingerprint="f", sampling=sampling)
        changed = {"m": {**sampling["m"], "temperature": 0.3}}
        with pytest.raises(StoreError) as exc:
            store.bind(study="s", config_json={"name": "s"}, plan_digest="p", fingerprint="f", sampling=changed)
    text = str(exc.value)
    assert "m.temperature: 0.7 in the store, 0.3 now" in text
    assert "max_tokens" not in text and "base_url" not in text and "2048" not in text
