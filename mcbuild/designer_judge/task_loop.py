"""Task design (``mcbuild design --kind task``): Designer → task check → Validator rounds, or seeded samples.

Each LLM round:
1. the Designer receives the constraints, the task spec's JSON Schema, the candidate steps
   (``task_steps``), the current spec, its task check report and the preceding Validator report
   (``not_run`` at first) and returns a complete task spec;
2. the spec is written as the YAML it would be accepted as and checked by
   ``mcbuild.runtime.episode.taskcheck.task_check``, the function behind ``mcbuild task check``;
3. a failed check goes back to the Designer (the Validator does not run);
4. otherwise the Validator checks the milestone DAG and the checkers against the routes. ``accept``
   counts only with no problem listed and every milestone deemed sound; anything else goes back
   to the Designer, for at most ``rounds`` rounds.

A reply that stays malformed after the bounded JSON repairs stops the run (:class:`DesignError`).
Static-only runs check ``--from`` or the samples of ``task_sampler`` for the seed until one
passes. Transcripts go to ``build/designs/<run-id>/`` as for the mirror designs; the accepted spec
to ``--out`` (default ``build/designs/<run-id>.yaml``; ``specs/tasks/<id>.yaml`` with ``--into-specs``).
"""
from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any, Callable

from mcbuild.compiler.core.canonical import atomic_write
from mcbuild.compiler.core.errors import SpecError
from mcbuild.llm.templates import preview
from mcbuild.compiler.planning.goals import route
from mcbuild.compiler.planning.tracer import vanilla_model
from mcbuild.compiler.rules.rulebook import vanilla
from mcbuild.compiler.spec.task import TASKS_DIR
from mcbuild.llm.client import ChatClient, LLMReplyError
from mcbuild.runtime.episode.taskcheck import task_check

from . import render, task_sampler
from .contracts import TaskDesignerReply, ValidatorReply, not_run, parse, schema
from .loop import JSON_REPAIRS, DesignError, DesignRequest, DesignResult, RunStore, finish, guarded, spec_yaml
from .static import failure

REQUIREMENTS = ["every milestone uses a checker of the candidate steps",
                "requires names earlier milestones only (a DAG), each on the milestone's route",
                "exactly one milestone, the last, is worth 100",
                "no milestone holds before the first action",
                "every milestone has a route in every world under vanilla and every suite"]


def run_task_design(req: DesignRequest, client: ChatClient | None = None,
                    progress: Callable[[str], None] = lambda s: None) -> DesignResult:
    if req.rounds < 1:
        raise DesignError("--rounds must be at least 1")
    if not req.static_only and client is None:
        raise DesignError("an LLM client is required unless --static-only is given")
    if req.from_spec is not None and req.from_spec.get("kind") != "task":
        raise DesignError(f"{req.from_path or '--from'}: kind {req.from_spec.get('kind')!r} does not match --kind task")
    store = RunStore(req.design_root, req.run_id, "task")
    if req.static_only or client is None:
        return guarded(req, store, lambda: _run_static(req, store, progress))
    llm = client
    return guarded(req, store, lambda: _run_llm(req, llm, store, progress))


def check_candidate(spec: Any, store: RunStore, folder: str, req: DesignRequest) -> dict[str, Any]:
    """Write ``spec`` as ``<folder>/candidate.yaml`` (the bytes it would be accepted as), run the task
    check on it and save the report: passed, hard failures, saves, d(τ) and each milestone's vanilla route."""
    path = store.dir / folder / "candidate.yaml"
    try:
        atomic_write(path, spec_yaml(spec, str(path)).encode("utf-8"), tool="design")
        found = task_check(path, req.build, req.backend, req.worlds)
    except SpecError as exc:
        report = {"passed": False, "hard_failures": [failure("task_check", exc.file, exc.field, exc.message)]}
    else:
        rules = vanilla()
        model = vanilla_model(rules)
        report = {"passed": True, "hard_failures": [], "saves": found.saves, "difficulty": found.difficulty,
                  "vanilla_routes": {m.code: list(route(model, rules, m).steps or ()) for m in found.task.milestones}}
    store.json(f"{folder}/check_report.json", report)
    return report


def _ask(client: ChatClient, messages: list[dict], model: type, role: str, store: RunStore, rel: str,
         result: DesignResult):
    """One contract reply (with the bounded JSON repairs); a reply that stays malformed is a DesignError."""
    try:
        reply, calls = client.chat_json(messages, functools.partial(parse, model), repairs=JSON_REPAIRS,
                                        repair_prompt=render.repair_message, schema=schema(model))
    except LLMReplyError as exc:
        result.usage.add(store.calls(rel, exc.calls))
        raise DesignError(f"malformed {role} reply (transcript in {store.dir / rel}): {preview(str(exc), 400)}") from None
    result.usage.add(store.calls(rel, calls))
    return reply


def _output(req: DesignRequest, spec: dict[str, Any]) -> DesignRequest:
    """The request with its output path settled: ``specs/tasks/<id>.yaml`` with ``into_specs`` and no ``out``."""
    out = req.out
    if out is None and req.into_specs:
        out = TASKS_DIR / f"{spec['id']}.yaml"
        if out.exists():
            raise DesignError(f"{out} already exists: give the task another id or --out")
    if out is not None and Path(out).resolve().parent == TASKS_DIR.resolve() and Path(out).stem != spec["id"]:
        raise DesignError(f"{out}: a task in {TASKS_DIR} is named by its id; write it as {spec['id']}.yaml")
    return dataclasses.replace(req, out=out)


def _accept(req: DesignRequest, store: RunStore, result: DesignResult, spec: dict, history: list[dict], progress):
    result.status, result.spec = "accepted", spec
    return finish(store, _output(req, spec), result, history, progress)


def _run_llm(req: DesignRequest, client: ChatClient, store: RunStore, progress: Callable[[str], None]) -> DesignResult:
    catalog = render.task_catalog()
    constraints = {"kind": "task", "schema_version": "1.0", "minecraft_version": "1.19.0", "requirements": REQUIREMENTS}
    current, check, validator = req.from_spec, None, not_run("no Validator report yet")
    result = DesignResult("exhausted", store.dir, 0, last_judge=validator)
    history: list[dict] = []
    for r in range(1, req.rounds + 1):
        rd, result.rounds = f"round-{r:02d}", r
        entry: dict[str, Any] = {"round": r}
        history.append(entry)
        progress(f"round {r}/{req.rounds}: Designer")
        msgs = render.task_designer_messages(constraints=constraints, catalog=catalog, current_spec=current,
                                             check_report=check, validator_report=validator, round_no=r,
                                             rounds=req.rounds)
        store.json(f"{rd}/designer_prompt.json", msgs)
        reply = _ask(client, msgs, TaskDesignerReply, "Designer", store, f"{rd}/designer_calls.json", result)
        store.json(f"{rd}/designer_reply.json", reply.model_dump(mode="json"))
        current = reply.spec
        check = result.last_static = check_candidate(current, store, rd, req)
        if not check["passed"]:
            validator = result.last_judge = not_run("the task check failed: the Validator did not run")
            entry["status"] = "task_check_failed"
            progress(f"round {r}/{req.rounds}: task check failed ({check['hard_failures'][0]['message']}); "
                     "back to the Designer")
            continue
        progress(f"round {r}/{req.rounds}: task check passed; Validator")
        vmsgs = render.task_validator_messages(spec=current, check_report=check)
        store.json(f"{rd}/validator_prompt.json", vmsgs)
        verdict = _ask(client, vmsgs, ValidatorReply, "Validator", store, f"{rd}/validator_calls.json", result)
        validator = result.last_judge = verdict.model_dump(mode="json")
        unsound = verdict.unsound([m["id"] for m in current["milestones"]])
        if verdict.verdict == "accept" and (verdict.problems or unsound):
            validator["loop_note"] = "accept not honoured: " + "; ".join(
                verdict.problems + [f"milestone {m} is not assessed as sound" for m in unsound])
        store.json(f"{rd}/validator_reply.json", validator)
        entry["status"] = f"validator_{verdict.verdict}"
        if verdict.verdict == "accept" and "loop_note" not in validator:
            progress(f"round {r}/{req.rounds}: Validator accepted")
            return _accept(req, store, result, current, history, progress)
        progress(f"round {r}/{req.rounds}: Validator returned {len(verdict.problems)} problem(s); back to the Designer")
    return finish(store, req, result, history, progress)


def _run_static(req: DesignRequest, store: RunStore, progress: Callable[[str], None]) -> DesignResult:
    result = DesignResult("exhausted", store.dir, 0)
    history: list[dict] = []
    attempts = 1 if req.from_spec is not None else req.max_samples
    for attempt in range(attempts):
        spec = req.from_spec if req.from_spec is not None else task_sampler.sample(req.seed, attempt)
        check = result.last_static = check_candidate(spec, store, f"sample-{attempt:02d}", req)
        result.rounds = attempt + 1
        history.append({"sample": attempt, "status": "passed" if check["passed"] else "task_check_failed"})
        label = req.from_path or f"sample {attempt + 1}/{attempts} (seed {req.seed})"
        progress(f"{label}: " + ("passed the task check" if check["passed"]
                                 else f"task check failed ({check['hard_failures'][0]['message']})"))
        if check["passed"]:
            return _accept(req, store, result, spec, history, progress)
    return finish(store, req, result, history, progress)
