"""Compile a candidate spec in memory and condense the outcome into the static report that the
Designer and the Judge read (compiler + tracer + audit findings)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any

from mcbuild.compiler.core.errors import CompileError, SpecError


@dataclass
class StaticOutcome:
    compiled: bool
    report: dict[str, Any]                       # what the prompts show
    spec: dict[str, Any] | None = None           # the normalized spec when it compiled
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def hard_failures(self) -> list[dict[str, Any]]:
        return self.report.get("hard_failures", [])


def _finding(f: Any) -> dict[str, Any]:
    if is_dataclass(f) and not isinstance(f, type):
        return asdict(f)
    if isinstance(f, dict):
        return {k: f.get(k, "") for k in ("code", "file", "field", "message")}
    if isinstance(f, (tuple, list)) and len(f) == 3:
        return {"code": f[0], "file": "", "field": f[1], "message": f[2]}
    return {"code": "compile_error", "file": "", "field": "", "message": str(f)}


def failure(code: str, file: str, field_: str, message: str) -> dict[str, Any]:
    return {"code": code, "file": file, "field": field_, "message": message}


def check_envelope(data: Any, kind: str, tasks: list[str], file: str) -> list[dict[str, Any]]:
    """Loop-level constraints on a candidate: its kind and the requested tasks are kept."""
    if not isinstance(data, dict):
        return [failure("spec_invalid", file, "<root>", "the spec must be a JSON object")]
    out = []
    if data.get("kind") != kind:
        out.append(failure("kind_changed", file, "kind", f"must stay {kind!r}, got {data.get('kind')!r}"))
    if data.get("selected_tasks") != tasks:
        out.append(failure("selected_tasks_changed", file, "selected_tasks",
                           f"must be exactly {tasks}, got {data.get('selected_tasks')!r}"))
    return out


def compile_candidate(data: Any, file: str, kind: str, tasks: list[str]) -> StaticOutcome:
    """Validate, compile and audit ``data`` without writing anything."""
    from mcbuild.compiler.build import compile_data

    envelope = check_envelope(data, kind, tasks, file)
    if envelope:
        return StaticOutcome(False, {"compiled": False, "stage": "constraints", "hard_failures": envelope, "warnings": []})
    try:
        art = compile_data(data, file)
    except SpecError as exc:
        return StaticOutcome(False, {"compiled": False, "stage": "validate",
                                     "hard_failures": [failure("spec_invalid", exc.file, exc.field, exc.message)],
                                     "warnings": []})
    except CompileError as exc:
        found = [_finding(f) for f in exc.findings] or [failure("compile_failed", exc.file, "<spec>", exc.message)]
        return StaticOutcome(False, {"compiled": False, "stage": "compile", "hard_failures": found, "warnings": []})
    rep = art.report
    import json

    spec = json.loads(art.files["spec.json"])
    return StaticOutcome(True, summarize(art.kind, rep), spec, dict(art.files))


def summarize(kind: str, rep: dict[str, Any]) -> dict[str, Any]:
    """The parts of a compile report the Designer and the Judge need (no hashes, no file lists)."""
    if kind == "mirror":
        audit = rep.get("audit", {})
        tracer = rep.get("tracer", {})
        return {
            "compiled": True, "stage": "accepted_by_compiler",
            "hard_failures": audit.get("hard_failures", []), "warnings": audit.get("warnings", []),
            "tasks": {tid: {"reachable": t["suite"]["reachable"],
                            "vanilla_route_length": t["vanilla"]["route_length"],
                            "suite_route_length": t["suite"]["route_length"],
                            "suite_route": t["suite"]["route"],
                            "milestones_reachable": {c: m["suite_reachable"] for c, m in t.get("milestones", {}).items()}}
                      for tid, t in tracer.get("tasks", {}).items()},
            "changes": [{"id": c["id"], "observed_by": c["observed_by"], "on_routes": c["on_routes"],
                         "encountered_before_completion": c["encountered_before_completion"],
                         "transitions": rep_transitions(rep, c["id"])}
                        for c in tracer.get("changes", [])],
        }
    pre, post = rep.get("pre_compile", {}), rep.get("post_package", {})
    return {
        "compiled": True, "stage": "accepted_by_compiler",
        "hard_failures": pre.get("hard_failures", []) + post.get("hard_failures", []),
        "warnings": pre.get("warnings", []) + post.get("warnings", []),
        "post_package": {k: v for k, v in post.items() if k not in ("hard_failures", "warnings")},
        "world": rep.get("world", {}),
    }


def rep_transitions(rep: dict[str, Any], change_id: str) -> list[dict[str, Any]]:
    for ch in rep.get("changes", []):
        if ch["id"] == change_id:
            return ch["transitions"]
    return []
