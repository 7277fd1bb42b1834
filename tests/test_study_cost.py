"""max_cost_usd: the study stops cleanly once its stored episodes cost that much, and resumes."""
from __future__ import annotations

import pytest

from mcbuild.runtime.study.design.plan import build_plan
from mcbuild.runtime.study.report import load_study, write_report
from mcbuild.runtime.study.report.writers import cost_stop_note
from mcbuild.runtime.study.run.runner import run_study
from mcbuild.runtime.study.store.results import Store
from test_study_runner import assert_exactly_once, fake_outcome, small_config


PRICED = [{"name": "m", "prices": {"m": {"input": 1.0, "output": 2.0}}}]    # a cap needs a price


def stored_cost(path) -> float:
    with Store.open(path) as st:
        return st.conn.execute("SELECT SUM(cost_usd) FROM episodes").fetchone()[0]


@pytest.mark.parametrize("workers,concurrency", [(1, 1), (2, 3)])
def test_cost_limit_stops_cleanly_and_resumes(tmp_path, workers, concurrency):
    cfg = small_config(max_cost_usd=0.2, models=PRICED)
    out, build = tmp_path / "s", tmp_path / "b"
    s = run_study(cfg, fake_outcome, out_dir=out, build_root=build, workers=workers, concurrency=concurrency)
    assert s.stopped_by_cost and not s.complete and 0 < s.finished < len(build_plan(cfg))
    assert stored_cost(out) >= 0.2 and s.cost_usd == pytest.approx(stored_cost(out))
    assert any(line.startswith("stopped at the cost limit") for line in s.lines())
    again = run_study(cfg, fake_outcome, out_dir=out, build_root=build, resume=True)
    assert again.stopped_by_cost and again.finished == 0            # still at the limit: nothing new runs
    raised = small_config(max_cost_usd=1000.0, models=PRICED)                     # same plan, a higher limit
    done = run_study(raised, fake_outcome, out_dir=out, build_root=build, resume=True)
    assert done.complete and not done.stopped_by_cost
    assert_exactly_once(raised, out)
    assert load_study(out).cost_stop is None and cost_stop_note(load_study(out)) == ""


def test_report_says_the_study_stopped_at_the_cost_limit(tmp_path):
    cfg = small_config(max_cost_usd=0.2, models=PRICED)
    out = tmp_path / "s"
    s = run_study(cfg, fake_outcome, out_dir=out, build_root=tmp_path / "b")
    stop = load_study(out).cost_stop
    assert stop == {"spent_usd": pytest.approx(stored_cost(out)), "limit_usd": 0.2, "stored": s.finished,
                    "planned": len(build_plan(cfg))}
    report = write_report(out, trajectories=False, viewer=False, build=tmp_path / "b")
    text = report.markdown.read_text()
    assert (f"stopped at its cost limit: ${stop['spent_usd']:.4f} spent of max_cost_usd $0.2, "
            f"{s.finished} of {len(build_plan(cfg))} planned episodes stored") in text
    assert "study run CONFIG --resume" in text and "cost limit" in report.html.read_text()


def test_a_cap_that_cannot_be_enforced_is_refused_when_the_config_loads():
    """An LLM configuration's model without a price would count as $0: its max_cost_usd could never stop."""
    with pytest.raises(ValueError, match="cannot be enforced: model 'm' has no price"):
        small_config(max_cost_usd=5.0)
    assert small_config(max_cost_usd=5.0, models=PRICED).max_cost_usd == 5.0
    assert small_config(max_cost_usd=5.0, models=["gpt-5.6-luna"]).max_cost_usd == 5.0      # the built-in table
    scripted = small_config(max_cost_usd=5.0, configurations=["vanilla-planner"], disclosure={"configurations": []})
    assert scripted.max_cost_usd == 5.0                                # no model is called: nothing to price


def test_negative_limit_is_refused():
    with pytest.raises(ValueError, match="greater than 0"):
        small_config(max_cost_usd=-1)


def test_estimate_projects_the_pilot_onto_the_plan(tmp_path):
    import yaml
    from click.testing import CliRunner

    from mcbuild.cli import main
    from mcbuild.runtime.study.estimate import estimate

    prices = tmp_path / "prices.json"
    prices.write_text('{"m": {"input": 1.0, "output": 2.0}}')
    cfg = small_config(endpoint={"prices": str(prices)})
    run_study(cfg, fake_outcome, out_dir=tmp_path / "pilot", build_root=tmp_path / "b", limit=4)
    rows = {(r.configuration, r.model): r for r in estimate(cfg, tmp_path / "pilot")}
    with Store.open(tmp_path / "pilot") as st:
        got = st.conn.execute("SELECT configuration, AVG(tokens_in), AVG(tokens_out) FROM episodes "
                              "GROUP BY configuration").fetchall()
    for conf, tin, tout in got:
        r = rows[(conf, "m")]
        assert r.tokens_in == round(tin * r.planned) and r.tokens_out == round(tout * r.planned)
        assert r.usd == pytest.approx((r.tokens_in + 2 * r.tokens_out) / 1e6)
    assert sum(r.planned for r in rows.values()) == len(build_plan(cfg))
    assert any(r.pilot_episodes == 0 and r.usd is None for r in rows.values())     # never a silent zero
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg.to_json()))
    res = CliRunner().invoke(main, ["study", "estimate", str(path), "--pilot", str(tmp_path / "pilot")])
    assert res.exit_code == 0 and "no pilot" in res.output and res.output.strip().splitlines()[-1].startswith("total: $")
    res = CliRunner().invoke(main, ["study", "estimate", str(path), "--pilot", str(tmp_path / "none")])
    assert res.exit_code == 1 and "run a pilot first" in res.output and len(res.output.strip().splitlines()) == 1


def test_estimate_from_first_prompts_without_a_pilot(world_build, tmp_path):
    import json

    import yaml
    from click.testing import CliRunner

    from mcbuild.cli import main
    from mcbuild.llm.pricing import cost, load_prices
    from mcbuild.llm.settings import ModelSettings
    from mcbuild.llm.testing import ScriptedEndpoint
    from mcbuild.runtime.study.estimate import CHARS_PER_TOKEN, REPLY_TOKENS, estimate_from_prompts, first_prompt_tokens
    from mcbuild.runtime.study.run.executor import execute

    cfg = small_config(worlds=["plains-1"], conditions=["vanilla", "m04"], tasks=["iron_armor", "diamond"],
                       configurations=["react", "direct", "vanilla-planner"], disclosure={"configurations": []},
                       models=["gpt-4o-mini"], repetitions=1, budget=4)
    plan = build_plan(cfg)
    react = next(e for e in plan if e.configuration == "react")
    action = json.dumps({"thought": "look", "skill": "explore", "args": {"target": "log"}})
    with ScriptedEndpoint(lambda messages: action, model="gpt-4o-mini") as ep:   # the request a real run sends
        sent = execute(react, build_root=world_build, models={"gpt-4o-mini": ModelSettings(
            model="gpt-4o-mini", base_url=ep.base_url, api_key_env="MCBUILD_TEST_NO_KEY")})
    messages = sent.trajectory[0]["llm_calls"][0]["messages"]
    assert first_prompt_tokens(react, world_build) == -(-sum(len(m["content"]) for m in messages) // CHARS_PER_TOKEN)

    rows = {r.configuration: r for r in estimate_from_prompts(cfg, world_build)}
    assert rows["vanilla-planner"].tokens_in == 0 and rows["vanilla-planner"].usd == 0.0
    for conf in ("react", "direct"):
        entries = [e for e in plan if e.configuration == conf]
        r = rows[conf]
        assert r.planned == len(entries) and r.tokens_out == REPLY_TOKENS * sum(e.budget for e in entries)
        assert r.tokens_in == sum(first_prompt_tokens(e, world_build) * e.budget for e in entries)
        assert r.usd == cost(load_prices(), "gpt-4o-mini", r.tokens_in, r.tokens_out)[0] and r.usd > 0
    assert rows["react"].first_prompt_tokens > rows["direct"].first_prompt_tokens > 0   # ReAct adds its trace instructions

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg.to_json()))
    res = CliRunner().invoke(main, ["study", "estimate", str(path), "--from-prompts", "--build", str(world_build)])
    assert res.exit_code == 0 and res.output.startswith("method: first prompts") and "no pilot" not in res.output
    assert res.output.strip().splitlines()[-1] == f"total: ${rows['react'].usd + rows['direct'].usd:.2f}"
    lines = res.output.strip().splitlines()
    header, table = lines[1], lines[2:-1]
    columns = [header.index(name) for name in ("model", "planned")]
    assert all(line[columns[0] - 2:columns[0]] == "  " for line in table)           # columns never run together
    assert all(line[columns[1] + len("planned") - 1] != " " for line in table)     # numbers aligned right
    assert next(line for line in table if line.startswith("vanilla-planner")).endswith("free")
    by_default = CliRunner().invoke(main, ["study", "estimate", str(path), "--build", str(world_build)])
    assert by_default.exit_code == 0 and by_default.output == res.output            # no flag: the first prompts
    res = CliRunner().invoke(main, ["study", "estimate", str(path), "--from-prompts", "--pilot", str(tmp_path)])
    assert res.exit_code == 2 and "one of --pilot DIR and --from-prompts" in res.output
