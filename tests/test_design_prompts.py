"""Snapshots of every prompt template rendered on a fixed input, and the reply contracts."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from mcbuild.designer_judge import render
from mcbuild.designer_judge.contracts import DesignerReply, JudgeReply, not_run

SPEC = {"schema_version": "1.0", "kind": "mirror", "id": "fixed", "title": "Fixed suite",
        "selected_tasks": ["diamond"],
        "changes": [{"id": "iron-ore-ingot", "operator": "block_drops_add", "target": "minecraft:iron_ore",
                     "outputs": [{"item": "minecraft:iron_ingot", "count": 1}]}]}
CATALOG = {"operators": {"block_drops_add": {"skill": "mine", "target_kind": "block", "max_outputs": 4}},
           "targets": {"block": ["minecraft:iron_ore"]}, "outputs": ["minecraft:iron_ingot"],
           "routes": {"diamond": ["log", "planks", "raw_iron", "iron_ingot", "iron_pickaxe", "diamond"]}}
STATIC = {"compiled": True, "hard_failures": [], "warnings": [{"code": "change_count", "file": "spec",
                                                               "field": "changes", "message": "1 change(s)"}],
          "tasks": {"diamond": {"reachable": True, "vanilla_route_length": 22, "suite_route_length": 18}}}
JUDGE = {"schema_version": "1.0", "kind": "mirror", "verdict": "revise", "confidence": 0.7, "summary": "one more change",
         "hard_failures": [], "warnings": [], "task_assessments": [], "change_assessments": [],
         "revision_instructions": ["add a second change on the diamond route"]}


@pytest.mark.parametrize("kind", ["mirror", "biome"])
def test_designer_system(snapshot, kind):
    assert render.render("designer_system.j2", kind=kind) == snapshot


@pytest.mark.parametrize("kind", ["mirror", "biome"])
def test_judge_system(snapshot, kind):
    assert render.render("judge_system.j2", kind=kind) == snapshot


@pytest.mark.parametrize("first", [True, False])
def test_designer_user(snapshot, first):
    text = render.render("designer_user.j2", constraints={"kind": "mirror", "selected_tasks": ["diamond"]},
                         catalog=CATALOG, current_spec=None if first else SPEC,
                         static_report=None if first else STATIC, judge_report=not_run() if first else JUDGE,
                         round=1 if first else 2, rounds=4)
    assert text == snapshot


def test_judge_user(snapshot):
    assert render.render("judge_user.j2", selected_tasks=["diamond"], spec=SPEC, static_report=STATIC) == snapshot


def test_json_repair(snapshot):
    assert render.repair_message("Expecting value: line 1 column 1 (char 0)") == snapshot


def test_catalog_carries_only_selected_routes():
    cat = render.mirror_catalog(["diamond"])
    assert set(cat["routes"]) == {"diamond"}
    assert {"operators", "targets", "stations", "outputs", "bounds"} <= set(cat)


def test_contracts_have_exactly_the_paper_fields():
    assert set(DesignerReply.model_fields) == {"schema_version", "kind", "design_summary", "resolved_feedback", "spec"}
    assert set(JudgeReply.model_fields) == {"schema_version", "kind", "verdict", "confidence", "summary",
                                            "hard_failures", "warnings", "task_assessments", "change_assessments",
                                            "revision_instructions"}
    JudgeReply.model_validate(JUDGE)
    with pytest.raises(ValidationError):
        JudgeReply.model_validate({**JUDGE, "verdict": "maybe"})
    with pytest.raises(ValidationError):
        DesignerReply.model_validate({"schema_version": "1.0", "kind": "mirror", "design_summary": "x",
                                      "resolved_feedback": [], "spec": SPEC, "notes": "extra field"})


def test_replies_are_checked_against_the_exported_json_schema():
    from mcbuild.designer_judge.contracts import ReplyError, parse

    finding = {"code": "x", "field": "changes"}
    reply = parse(JudgeReply, {**JUDGE, "hard_failures": [finding]})
    assert reply.hard_failures == ['{"code":"x","field":"changes"}']
    with pytest.raises(ReplyError, match=r"verdict: 'maybe' is not one of"):
        parse(JudgeReply, {**JUDGE, "verdict": "maybe"})
    with pytest.raises(ReplyError, match=r"reply: Additional properties are not allowed \('notes' was unexpected\)"):
        parse(DesignerReply, {"schema_version": "1.0", "kind": "mirror", "design_summary": "x", "spec": SPEC,
                              "notes": "extra field"})
