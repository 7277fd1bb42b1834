"""Prompt rendering (jinja2 templates in ``prompts/``) and the catalogs the prompts carry."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from mcbuild.compiler.core.canonical import compact
from mcbuild.llm.templates import template_environment

PROMPTS = Path(__file__).with_name("prompts")
PREFERRED_CHANGES = (2, 6)


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


@lru_cache(maxsize=1)
def env() -> jinja2.Environment:
    return template_environment(PROMPTS, keep_trailing_newline=True, pretty=_pretty, compact=compact)


def render(name: str, **context: Any) -> str:
    return env().get_template(name).render(**context)


def designer_messages(*, kind: str, constraints: dict, catalog: dict, current_spec: dict | None,
                      static_report: dict | None, judge_report: dict, round_no: int, rounds: int) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": render("designer_system.j2", kind=kind)},
        {"role": "user", "content": render("designer_user.j2", constraints=constraints, catalog=catalog,
                                           current_spec=current_spec, static_report=static_report,
                                           judge_report=judge_report, round=round_no, rounds=rounds)},
    ]


def judge_messages(*, kind: str, selected_tasks: list[str], spec: dict, static_report: dict) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": render("judge_system.j2", kind=kind)},
        {"role": "user", "content": render("judge_user.j2", selected_tasks=selected_tasks, spec=spec,
                                           static_report=static_report)},
    ]


def task_designer_messages(*, constraints: dict, catalog: dict, current_spec: dict | None, check_report: dict | None,
                           validator_report: dict, round_no: int, rounds: int) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": render("task_designer_system.j2")},
        {"role": "user", "content": render("task_designer_user.j2", constraints=constraints, catalog=catalog,
                                           current_spec=current_spec, check_report=check_report,
                                           validator_report=validator_report, round=round_no, rounds=rounds)},
    ]


def task_validator_messages(*, spec: dict, check_report: dict) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": render("task_validator_system.j2")},
        {"role": "user", "content": render("task_validator_user.j2", spec=spec, check_report=check_report)},
    ]


def repair_message(problem: str) -> str:
    return render("json_repair.j2", problem=problem)


# ---------------------------------------------------------------------- catalogs
MIRROR_SPEC_FORMAT = {
    "schema_version": "1.0",
    "kind": "mirror",
    "id": "lowercase id: letters, digits, '-' or '_' (at most 64)",
    "title": "short human title (at most 80 characters)",
    "selected_tasks": "exactly the requested task ids",
    "changes": [{
        "id": "unique lowercase change id",
        "operator": "one of the operators below",
        "target": "one allowed target of the operator's target_kind, or a list of them",
        "stations": "cook_output only: list of stations",
        "outputs": [{"item": "an allowed output (may be omitted for craft_output to keep the recipe's item)",
                     "count": "1..64"}],
    }],
}


def mirror_catalog(selected_tasks: list[str]) -> dict[str, Any]:
    """Operators, targets, stations, outputs and the dependency routes of the selected tasks."""
    from mcbuild.compiler.spec import operators

    ops = operators.load()
    return {
        "spec_format": MIRROR_SPEC_FORMAT,
        "operators": {name: {"skill": o["skill"], "summary": o["summary"], "target_kind": o["target_kind"],
                             "max_outputs": o["outputs"]} for name, o in ops["operators"].items()},
        "groups": {name: g["description"] for name, g in ops["groups"].items()},
        "relative_outputs": {name: r["description"] for name, r in ops["relative_outputs"].items()},
        "targets": ops["targets"],
        "stations": ops["stations"],
        "outputs": ops["outputs"],
        "routes": {t: ops["routes"][t] for t in selected_tasks if t in ops["routes"]},
        "bounds": {"count": [1, 64], "changes": [1, 12], "preferred_changes": list(PREFERRED_CHANGES)},
    }


def biome_catalog(selected_tasks: list[str]) -> dict[str, Any]:
    """The world-gen whitelist and bounds (catalogs/worldgen.yaml) plus what the tasks need."""
    from mcbuild.compiler.rules.tasks import world_resources
    from mcbuild.compiler.spec.worldgen_catalog import catalog

    return {"worldgen": catalog(), "selected_tasks": selected_tasks, "task_resources": world_resources()}


def catalog_for(kind: str, selected_tasks: list[str]) -> dict[str, Any]:
    return mirror_catalog(selected_tasks) if kind == "mirror" else biome_catalog(selected_tasks)


def task_catalog() -> dict[str, Any]:
    """The task spec's JSON Schema and the candidate steps (``task_steps``) a task is built from."""
    from mcbuild.compiler.spec.kinds import json_schema

    from .task_steps import candidate_steps

    return {"spec_schema": json_schema("task"), "candidate_steps": [c.to_json() for c in candidate_steps()]}
