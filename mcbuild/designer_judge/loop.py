"""The bounded Designer → compile → audit → Judge loop (paper Appendix F.1) and static-only runs.

Each round:
1. the Designer receives the constraints, the allowed catalog, the current spec, the static report
   of that spec and the preceding Judge report (``not_run`` at first) and returns a complete spec;
2. the spec is validated, compiled and audited in memory (``mcbuild.pipeline.build.compile_data``);
3. with a static hard failure the Judge does not run and the failures go back to the Designer;
4. otherwise the Judge screens the spec and its static report. ``accept`` counts only when the
   Judge lists no hard failure and deems every selected task solvable; ``revise`` (or an accept
   that does not meet those conditions) goes back to the Designer; ``reject`` ends the run.

Everything exchanged is saved under ``build/designs/<run-id>/`` (one folder per round); the
accepted spec is written as YAML (``accepted.yaml`` there, and to ``--out``, by default
``build/designs/<run-id>.yaml`` beside it, never among the benchmark specs unless asked). Nothing is written
to the output unless a candidate is accepted. A run that stops on an error (an endpoint that
fails, an interrupt) still gets its ``run.json``, with ``status: failed`` and the error.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Generic, TypeVar

import yaml

from mcbuild.compiler.core.canonical import atomic_write, dump_bytes
from mcbuild.compiler.core.paths import BUILD
from mcbuild.llm.client import ChatClient, ChatResult, LLMReplyError, Usage

from . import render, sampler
from .contracts import DesignerReply, JudgeReply, not_run, parse, schema
from .static import StaticOutcome, compile_candidate, failure

KINDS = ("mirror", "biome")
#: The Designer, Judge and task Validator's own layer of model settings (``mcbuild.llm.settings``): the
#: model asked unless ``--model`` names another (the paper's Designer and Judge, GPT-5.6 Sol, §3.2),
#: sampled at the provider's defaults (no temperature or token cap sent: a spec reply runs longer than
#: an action's 2,048 tokens; no reasoning switch).
DESIGN_SETTINGS = {"model": "gpt-5.6-sol", "temperature": None, "max_tokens": None, "reasoning": True}
DEFAULT_ROUNDS = 4
MAX_SAMPLES = 40
# Without a Judge, the audit's extreme-route warnings stand in for its revision requests.
STATIC_ONLY_BLOCKING = {"route_shortcut", "route_detour"}
JSON_REPAIRS = 2


class DesignError(Exception):
    """A request the loop cannot run (bad arguments, unsupported mode): one readable line."""


@dataclass
class DesignRequest:
    kind: str
    tasks: list[str]
    rounds: int = DEFAULT_ROUNDS
    from_spec: dict[str, Any] | None = None
    from_path: str | None = None
    out: Path | None = None
    static_only: bool = False
    seed: int = 0
    run_id: str | None = None
    design_root: Path = field(default_factory=lambda: BUILD / "designs")   # transcripts and accepted specs
    max_samples: int = MAX_SAMPLES
    build: Path = BUILD                 # kind task: the build whose saves `task check` runs on
    worlds: tuple[str, ...] = ()        # kind task: the worlds checked (default every world)
    backend: str = "sim"                # kind task: the backend that checks the start states
    into_specs: bool = False            # kind task without ``out``: write specs/tasks/<id>.yaml


@dataclass
class DesignResult:
    status: str                         # accepted | rejected | exhausted
    run_dir: Path
    rounds: int
    spec: dict[str, Any] | None = None
    usage: Usage = field(default_factory=Usage)
    last_static: dict[str, Any] | None = None
    last_judge: dict[str, Any] | None = None
    out: Path | None = None

    @property
    def accepted(self) -> bool:
        return self.status == "accepted"


# ---------------------------------------------------------------------- storage
class RunStore:
    """Atomic writes under ``build/designs/<run-id>/``."""

    def __init__(self, root: Path, run_id: str | None, kind: str):
        root = Path(root)
        base = run_id or time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + f"-{kind}"
        run_dir, n = root / base, 1
        while run_id is None and run_dir.exists():
            n += 1
            run_dir = root / f"{base}-{n}"
        self.dir = run_dir

    def json(self, rel: str, data: Any) -> None:
        atomic_write(self.dir / rel, dump_bytes(data), tool="design")

    def text(self, rel: str, text: str) -> None:
        atomic_write(self.dir / rel, text.encode("utf-8"), tool="design")

    def calls(self, rel: str, calls: list[ChatResult]) -> Usage:
        total = Usage()
        for c in calls:
            total.add(c.usage)
        self.json(rel, {"calls": [c.to_json() for c in calls], "usage": total.to_json()})
        return total


# ---------------------------------------------------------------------- helpers
def spec_yaml(spec: dict[str, Any], file: str = "accepted.yaml") -> str:
    """The accepted spec as YAML that ``mcbuild compile`` (or ``task check``) reads back to the same
    spec. An accepted spec has passed, so it parses; normalizing drops the fields the LLM left null."""
    from mcbuild.compiler.spec.kinds import COMPILED, parse_spec

    data = parse_spec(spec, file, COMPILED + ("task",)).model_dump(mode="json", exclude_none=True)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)


def constraints(req: DesignRequest) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": req.kind, "selected_tasks": req.tasks, "minecraft_version": "1.19.0",
                           "pack_format": 10, "schema_version": "1.0"}
    if req.kind == "mirror":
        out["preferred_changes"] = list(render.PREFERRED_CHANGES)
        out["requirements"] = ["every change lies on a selected task route and is met before the task completes",
                               "every selected task stays reachable",
                               "every change is observable from an action outcome",
                               "no two changes edit the same transition"]
    else:
        out["requirements"] = ["a safe, walkable spawn surface",
                               "every resource the selected tasks need is generated within usable terrain"]
    return out


R = TypeVar("R", DesignerReply, JudgeReply)


def _validator(model: type[R], kind: str) -> Callable[[Any], R]:
    def validate(data: Any) -> R:
        reply = parse(model, data)
        if reply.kind != kind:
            raise ValueError(f"kind must be {kind!r}, got {reply.kind!r}")
        return reply
    return validate


def output_path(req: DesignRequest, store: RunStore) -> Path:
    """Where an accepted spec goes: ``req.out``, else beside its transcripts, ``build/designs/<run-id>.yaml``."""
    if req.out is not None:
        return Path(req.out)
    return Path(req.design_root) / f"{store.dir.name}.yaml"


def finish(store: RunStore, req: DesignRequest, result: DesignResult, history: list[dict], progress) -> DesignResult:
    """Write the accepted spec (accepted.yaml and the output path) and run.json; returns ``result``."""
    if result.accepted and result.spec is not None:
        text = spec_yaml(result.spec)
        store.text("accepted.yaml", text)
        result.out = output_path(req, store)
        atomic_write(result.out, text.encode("utf-8"), tool="design")
    store.json("run.json", {
        "status": result.status, "kind": req.kind, "selected_tasks": req.tasks, "rounds_allowed": req.rounds,
        "rounds_run": result.rounds, "static_only": req.static_only, "seed": req.seed if req.static_only else None,
        "from": req.from_path, "out": str(result.out) if result.out else None,
        "usage": result.usage.to_json(), "history": history,
        "last_static_report": result.last_static, "last_judge_report": result.last_judge,
    })
    progress(f"{result.status}: transcripts in {store.dir}")
    return result


def _initial(req: DesignRequest, store: RunStore) -> tuple[dict | None, dict | None]:
    """The starting spec (``--from``, tasks replaced by the requested ones) and its static report."""
    if req.from_spec is None:
        return None, None
    current = dict(req.from_spec)
    current["selected_tasks"] = list(req.tasks)
    if current.get("kind") != req.kind:
        raise DesignError(f"{req.from_path or '--from'}: kind {current.get('kind')!r} does not match --kind {req.kind}")
    outcome = compile_candidate(current, req.from_path or "from", req.kind, req.tasks)
    store.json("round-00/candidate.json", current)
    store.json("round-00/static_report.json", outcome.report)
    return current, outcome.report


# ---------------------------------------------------------------------- the LLM loop
def run_design(req: DesignRequest, client: ChatClient | None = None,
               progress: Callable[[str], None] = lambda s: None) -> DesignResult:
    if req.kind not in KINDS:
        raise DesignError(f"--kind must be one of {', '.join(KINDS)}, got {req.kind!r}")
    if req.rounds < 1:
        raise DesignError("--rounds must be at least 1")
    if req.static_only and req.from_spec is None and req.kind != "mirror":
        raise DesignError("static-only sampling proposes mirror specs; for --kind biome give --from SPEC")
    if not req.static_only and client is None:
        raise DesignError("an LLM client is required unless --static-only is given")
    store = RunStore(req.design_root, req.run_id, req.kind)
    if req.static_only or client is None:
        return guarded(req, store, lambda: _run_static(req, store, progress))
    llm = client
    return guarded(req, store, lambda: _run_llm(req, llm, store, progress))


def guarded(req: DesignRequest, store: RunStore, body: Callable[[], DesignResult]) -> DesignResult:
    """``body()``; a run that stops on an error still gets its ``run.json`` (status ``failed``)."""
    try:
        return body()
    except BaseException as exc:
        if store.dir.exists():              # never a run folder without its run.json
            store.json("run.json", {"status": "failed", "kind": req.kind, "selected_tasks": req.tasks,
                                    "static_only": req.static_only, "from": req.from_path, "out": None,
                                    "error": f"{type(exc).__name__}: {exc}"})
        raise


@dataclass(frozen=True)
class _Turn(Generic[R]):
    """One role's turn: its reply (``None`` when it stayed unusable, with ``error`` saying why), the
    turn's usage and how many calls it took."""
    reply: R | None
    usage: Usage
    calls: int
    error: str = ""


def _ask(client: ChatClient, store: RunStore, result: DesignResult, stem: str, msgs: list[dict[str, str]],
         model: type[R], kind: str) -> _Turn[R]:
    """Store a role's prompt, ask for a reply that validates as ``model`` (repairs included), store the
    calls and add their usage to ``result``."""
    store.json(f"{stem}_prompt.json", msgs)
    try:
        reply, calls = client.chat_json(msgs, _validator(model, kind), repairs=JSON_REPAIRS,
                                        repair_prompt=render.repair_message, schema=schema(model))
        error = ""
    except LLMReplyError as exc:
        reply, calls, error = None, exc.calls, str(exc)
    used = store.calls(f"{stem}_calls.json", calls)
    result.usage.add(used)
    return _Turn(reply, used, len(calls), error)


def _run_llm(req: DesignRequest, client: ChatClient, store: RunStore, progress: Callable[[str], None]) -> DesignResult:
    catalog = render.catalog_for(req.kind, req.tasks)
    current, static = _initial(req, store)
    judge: dict[str, Any] = not_run()
    result = DesignResult("exhausted", store.dir, 0, last_static=static, last_judge=judge)
    history: list[dict] = []
    for r in range(1, req.rounds + 1):
        rd = f"round-{r:02d}"
        result.rounds = r
        entry: dict[str, Any] = {"round": r}
        history.append(entry)
        progress(f"round {r}/{req.rounds}: Designer")
        msgs = render.designer_messages(kind=req.kind, constraints=constraints(req), catalog=catalog,
                                        current_spec=current, static_report=static, judge_report=judge,
                                        round_no=r, rounds=req.rounds)
        turn = _ask(client, store, result, f"{rd}/designer", msgs, DesignerReply, req.kind)
        reply, used = turn.reply, turn.usage
        if reply is None:
            static = {"compiled": False, "stage": "designer_reply",
                      "hard_failures": [failure("designer_reply_invalid", "designer", "<reply>", turn.error)], "warnings": []}
            judge = not_run("the Designer's reply was unusable; the Judge did not run")
            store.json(f"{rd}/static_report.json", static)
            entry.update(status="designer_reply_invalid", usage=used.to_json())
            result.last_static, result.last_judge = static, judge
            progress(f"round {r}/{req.rounds}: Designer reply unusable after {JSON_REPAIRS} repair(s)")
            continue
        store.json(f"{rd}/designer_reply.json", reply.model_dump(mode="json"))
        if turn.calls > 1:
            progress(f"round {r}/{req.rounds}: Designer reply repaired after {turn.calls - 1} invalid JSON repl(ies)")
        current = reply.spec
        outcome: StaticOutcome = compile_candidate(reply.spec, f"{rd}/candidate", req.kind, req.tasks)
        static = outcome.report
        store.json(f"{rd}/candidate.json", reply.spec)
        store.json(f"{rd}/static_report.json", static)
        result.last_static = static
        entry["designer_usage"] = used.to_json()
        if not outcome.compiled or outcome.hard_failures:
            judge = not_run("static hard failures: the Judge did not run")
            result.last_judge = judge
            codes = ", ".join(sorted({f["code"] for f in outcome.hard_failures}))
            entry.update(status="static_failure", codes=codes)
            progress(f"round {r}/{req.rounds}: static failure ({codes}); back to the Designer")
            continue
        progress(f"round {r}/{req.rounds}: compiled; Judge")
        jmsgs = render.judge_messages(kind=req.kind, selected_tasks=req.tasks, spec=outcome.spec or reply.spec,
                                      static_report=static)
        jturn = _ask(client, store, result, f"{rd}/judge", jmsgs, JudgeReply, req.kind)
        verdict, jused = jturn.reply, jturn.usage
        if verdict is None:
            judge = not_run("the Judge's reply was unusable; resubmit the candidate")
            result.last_judge = judge
            entry.update(status="judge_reply_invalid", judge_usage=jused.to_json())
            progress(f"round {r}/{req.rounds}: Judge reply unusable")
            continue
        judge = verdict.model_dump(mode="json")
        unsolvable = verdict.unsolvable(req.tasks)
        if verdict.verdict == "accept" and (verdict.hard_failures or unsolvable):
            problems = verdict.hard_failures + [f"task {t} is not assessed as solvable" for t in unsolvable]
            judge["loop_note"] = "accept not honoured: " + "; ".join(problems)
        store.json(f"{rd}/judge_reply.json", judge)
        result.last_judge = judge
        entry.update(status=f"judge_{verdict.verdict}", judge_usage=jused.to_json())
        if verdict.verdict == "reject":
            result.status = "rejected"
            progress(f"round {r}/{req.rounds}: Judge rejected: {verdict.summary}")
            break
        if verdict.verdict == "accept" and "loop_note" not in judge:
            result.status, result.spec = "accepted", outcome.spec or reply.spec
            progress(f"round {r}/{req.rounds}: Judge accepted (confidence {verdict.confidence:.2f})")
            break
        progress(f"round {r}/{req.rounds}: Judge asks for revision ({len(verdict.revision_instructions)} instruction(s))")
    return finish(store, req, result, history, progress)


# ---------------------------------------------------------------------- static-only runs
def _run_static(req: DesignRequest, store: RunStore, progress: Callable[[str], None]) -> DesignResult:
    """No LLM: compile and audit the ``--from`` spec, or deterministic samples for ``--seed``."""
    history: list[dict] = []
    result = DesignResult("exhausted", store.dir, 0)
    if req.from_spec is not None:
        current, static = _initial(req, store)
        result.rounds, result.last_static = 1, static
        ok = bool(static and static.get("compiled") and not static.get("hard_failures"))
        history.append({"sample": 0, "source": req.from_path, "status": "compiled" if ok else "static_failure"})
        if ok:
            result.status, result.spec = "accepted", _normalized(current, req)
        progress(f"static-only: {req.from_path}: {'compiled and audited' if ok else 'static failure'}")
        return finish(store, req, result, history, progress)
    for attempt in range(req.max_samples):
        spec = sampler.sample(req.seed, req.tasks, attempt)
        rd = f"sample-{attempt:02d}"
        fixes = 0
        while True:
            outcome = compile_candidate(spec, f"{rd}/candidate", req.kind, req.tasks)
            store.json(f"{rd}/candidate-{fixes}.json", spec)
            store.json(f"{rd}/static_report-{fixes}.json", outcome.report)
            blocking = outcome.hard_failures + [w for w in outcome.report.get("warnings", [])
                                                if w["code"] in STATIC_ONLY_BLOCKING]
            if outcome.compiled and not blocking:
                break
            repaired = sampler.repair(spec, blocking)
            if repaired is None:
                break
            spec, fixes = repaired, fixes + 1
        result.rounds, result.last_static = attempt + 1, outcome.report
        ok = outcome.compiled and not blocking
        codes = sorted({f["code"] for f in blocking})
        history.append({"sample": attempt, "dropped_changes": fixes, "status": "compiled" if ok else "static_failure",
                        "codes": codes})
        progress(f"sample {attempt + 1}/{req.max_samples} (seed {req.seed}): "
                 + ("compiled and audited" if ok else f"rejected ({', '.join(codes)}); next sample"))
        if ok:
            result.status, result.spec = "accepted", outcome.spec or spec
            break
    return finish(store, req, result, history, progress)


def _normalized(spec: dict[str, Any] | None, req: DesignRequest) -> dict[str, Any] | None:
    if spec is None:
        return None
    outcome = compile_candidate(spec, req.from_path or "from", req.kind, req.tasks)
    return outcome.spec or spec
