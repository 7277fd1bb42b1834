"""``mcbuild design --kind task``: seeded static-only samples and the Designer/Validator loop against the
scripted OpenAI-compatible endpoint of test_design_loop; every accepted task passes ``task check``."""
from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from mcbuild.designer_judge.task_sampler import sample
from mcbuild.designer_judge.task_steps import candidate_steps
from mcbuild.cli import main
from mcbuild.runtime.episode.taskcheck import task_check
from test_design_loop import endpoint  # noqa: F401 - the scripted endpoint fixture


@pytest.fixture
def where(world_build, built_world_ids, tmp_path):
    """CLI options: the test build, one built world and a design folder in tmp_path."""
    return ["--build", str(world_build), "--world", built_world_ids[0], "--design-dir", str(tmp_path / "design")]


def design(where, *extra: str):
    return CliRunner().invoke(main, ["design", "--kind", "task", *where, *extra])


def test_candidate_steps_come_from_the_vanilla_routes():
    steps = candidate_steps()
    ids = [c.id for c in steps]
    assert len(ids) == len(set(ids)) and "craft_iron_sword" in ids and "mine_diamond_ore" in ids
    assert "craft_leather" not in ids          # leather's route defeats a cow; it never crafts leather
    crafted = [c for c in steps if c.checker["type"] == "craft_item"]
    assert crafted and all(c.route[-1].startswith("craft_grid:") for c in crafted)   # the route crafts it
    assert [len(c.route) for c in steps] == sorted(len(c.route) for c in steps)


def test_static_only_sample_passes_task_check_and_is_deterministic(where, world_build, built_world_ids, tmp_path):
    outs = []
    for run in ("a", "b"):
        out = tmp_path / f"{run}.yaml"
        result = design(where, "--static-only", "--seed", "4", "--run-id", run, "--out", str(out))
        assert result.exit_code == 0, result.output
        assert "passed the task check" in result.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert yaml.safe_load(outs[0])["id"] == sample(4)["id"]
    found = task_check(tmp_path / "a.yaml", world_build, "sim", built_world_ids[:1])
    assert found.task.milestones[-1].value == 100 and found.saves >= 1
    assert sample(4) != sample(5)


def _designer(spec: dict) -> str:
    return json.dumps({"schema_version": "1.0", "kind": "task", "design_summary": "a short crafting chain",
                       "resolved_feedback": [], "spec": spec})


def _validator(spec: dict, verdict: str, problems: list[str]) -> str:
    return json.dumps({"schema_version": "1.0", "kind": "task", "verdict": verdict, "summary": f"scripted {verdict}",
                       "problems": problems,
                       "milestone_checks": [{"milestone": m["id"], "sound": not problems, "problem": ""}
                                            for m in spec["milestones"]],
                       "revision_instructions": ["raise the budget"] if problems else []})


def test_llm_check_failure_then_validator_rejection_then_accepted_repair(endpoint, where, world_build,
                                                                          built_world_ids, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    first = {**sample(2), "id": "deepslate-iron"}
    assert first["milestones"][-1]["id"] == "mine_deepslate_iron_ore"      # the sample the replies follow
    unreachable = {**first, "milestones": first["milestones"][:-1] + [
        {**first["milestones"][-1], "checkers": [{"type": "inventory_has", "item": "minecraft:netherite_ingot"}]}]}
    repaired = {**first, "budget": first["budget"] + 20}
    endpoint.replies = [_designer(unreachable), _designer(first), _validator(first, "revise", ["the budget is too tight"]),
                        _designer(repaired), _validator(repaired, "accept", [])]
    out = tmp_path / "deepslate-iron.yaml"
    result = design(where, "--model", "scripted", "--base-url", endpoint.url, "--max-retries", "0", "--run-id", "run",
                    "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "round 1/4: task check failed (milestone 'mine_deepslate_iron_ore' has no route" in result.output
    assert "round 3/4: Validator accepted" in result.output
    assert yaml.safe_load(out.read_text())["budget"] == repaired["budget"]
    assert task_check(out, world_build, "sim", built_world_ids[:1]).task.id == "deepslate-iron"
    prompts = [r["messages"][1]["content"] for r in endpoint.requests]
    assert '"passed": false' in prompts[1] and "no route" in prompts[1]        # the check went back to the Designer
    assert '"vanilla_routes"' in prompts[2] and '"difficulty"' in prompts[2]  # the Validator saw the check report
    assert "the budget is too tight" in prompts[3]                            # the Validator's problems went back
    run_dir = tmp_path / "design" / "run"
    assert (run_dir / "accepted.yaml").read_bytes() == (run_dir / "round-03" / "candidate.yaml").read_bytes() \
        == out.read_bytes()
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "accepted" and [h["status"] for h in record["history"]] == [
        "task_check_failed", "validator_revise", "validator_accept"]


def test_malformed_reply_is_one_error_line_and_exit_2(endpoint, where, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    endpoint.replies = ["a task: {", "still not JSON", '{"kind": "task"}']
    out = tmp_path / "never.yaml"
    result = design(where, "--model", "scripted", "--base-url", endpoint.url, "--max-retries", "0", "--run-id", "bad",
                    "--out", str(out))
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: malformed Designer reply")
    assert "Traceback" not in result.output and not out.exists()
    assert json.loads((tmp_path / "design" / "bad" / "run.json").read_text())["status"] == "failed"
