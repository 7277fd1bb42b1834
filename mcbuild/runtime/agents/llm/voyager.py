"""Voyager (Appendix D; prompts L.5), adapted to one episode.

The action agent writes a program of at most four skills (or reuses a library procedure); the
body runs it one skill per ``act`` (each executed skill costs one action) and stops at the first
failure. A finished or stopped program goes to a deterministic check and the critic call; a
successful one enters the procedure library (at most 16, least recently used leaves first), a
failed one is repaired with its feedback at most four times before the agent starts afresh.
Retrieval (up to five procedures) is lexical and local. An unusable program reply gets two JSON
repairs, then the ReAct-style fallback asks for a single action (with the L.12 repair).
"""
from __future__ import annotations

import re
from collections import OrderedDict
from typing import Annotated, Any, Literal, Mapping, get_args

from pydantic import BaseModel, Field

from mcbuild.compiler.core.canonical import compact
from mcbuild.llm import schemas

from . import rendering as P
from . import reply_schemas
from .base import LLMAgent, SeenOutcome, inventory, progress_score, same_id
from .contracts import ID_CHARS, NOT_OBJECT, ContractError, Note, check, parse_action, text

MACRO_LENGTH = 4
LIBRARY_SIZE = 16
RETRIEVE = 5
MAX_REPAIRS = 4
SuccessKind = Literal["inventory_at_least", "inventory_delta", "progress_increase", "facility_available",
                      "target_visible", "position_change", "action_result", "state_change"]
SUCCESS_KINDS: tuple[str, ...] = get_args(SuccessKind)


def _count(inv: Mapping[str, int], item: Any) -> int:
    return sum(n for k, n in inv.items() if same_id(k, item))


def deterministic_check(program: Mapping[str, Any], start: Mapping[str, Any], final: Mapping[str, Any],
                        trace: list[dict[str, Any]]) -> dict[str, Any]:
    """Did the declared success condition hold? (What the critic gets as DETERMINISTIC_CHECK.)"""
    success = program.get("success") or {}
    kind = success.get("kind", "state_change")
    item, count = success.get("item"), int(success.get("count") or 1) if str(success.get("count", "1")).isdigit() else 1
    before, after = inventory(start), inventory(final)
    all_ok = bool(trace) and all(t["ok"] for t in trace) and len(trace) == len(program.get("actions", []))
    if kind == "inventory_at_least":
        passed = item is not None and _count(after, item) >= count
    elif kind == "inventory_delta":
        passed = item is not None and _count(after, item) - _count(before, item) >= count
    elif kind == "progress_increase":
        passed = progress_score(final) > progress_score(start)
    elif kind == "facility_available":
        fac = success.get("facility") or item
        seen = P.observation_view(final)
        names = set(P.facility_ids(seen["observed_facilities"])) | set(P.facility_ids(seen["owned_unplaced_facilities"]))
        passed = any(same_id(n, fac) for n in names)
    elif kind == "target_visible":
        target = success.get("target") or item
        near = {**(final.get("nearby_targets") or {}), **(final.get("nearby_entities") or {})}
        passed = any(same_id(n, target) for n in near)
    elif kind == "position_change":
        passed = final.get("position") != start.get("position")
    elif kind == "action_result":
        passed = all_ok
    else:
        passed = before != after or progress_score(final) > progress_score(start) \
            or final.get("position") != start.get("position")
    return {"kind": kind, "passed": bool(passed), "all_actions_ok": all_ok, "executed": len(trace),
            "planned": len(program.get("actions", []))}


Name = Annotated[str, text(ID_CHARS, required=False)]
Target = Name | None


class Critique(BaseModel):
    reasoning: Note | None = None
    success: bool
    critique: Note | None = None


class Program(BaseModel):
    name: Name | None = None
    description: Note | None = None
    subgoal: Note | None = None
    actions: list[Any] = Field(min_length=1, max_length=MACRO_LENGTH)


class Success(BaseModel):
    kind: SuccessKind
    item: Target = None
    target: Target = None
    facility: Target = None
    count: int | None = None


CRITIQUE_PROBLEM = "the critic reply needs a boolean success field"
CRITIQUE_PROBLEMS = {"success": CRITIQUE_PROBLEM, "reasoning": "reasoning is a short string",
                     "critique": "critique is a short string"}
PROGRAM_PROBLEMS = {"actions": f"program.actions must list 1..{MACRO_LENGTH} primitive actions",
                    **{k: f"program.{k} is a short string" for k in ("name", "description", "subgoal")}}
SUCCESS_PROBLEMS = {"kind": f"success.kind must be one of {', '.join(SUCCESS_KINDS)}",
                    **{k: f"success.{k} is an id of at most {ID_CHARS} characters"
                       for k in ("item", "target", "facility")},
                    "count": "success.count is an integer"}
CRITIQUE_SCHEMA = schemas.contract("voyager_critique", Critique)


def program_schema(reusable: tuple[str, ...]) -> schemas.Schema:
    """The action agent's reply schema: a new program, or one of the ``reusable`` skills."""
    return reply_schemas.program("voyager_program", Program, Success, reusable)


def _critique(data: Any) -> dict[str, Any]:
    check(Critique, data, CRITIQUE_PROBLEMS, root=CRITIQUE_PROBLEM)
    return {"success": data["success"], "critique": data.get("critique") or "",
            "reasoning": data.get("reasoning") or ""}


def _tokens(text: str) -> set[str]:
    return {t for t in re.split(r"[^a-z0-9]+", text.lower()) if len(t) > 2 and t != "minecraft"}


class VoyagerAgent(LLMAgent):
    name = "voyager"

    def reset_memory(self) -> None:
        self.library: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.program: dict[str, Any] | None = None     # the running program
        self.queue: list[dict[str, Any]] = []          # its actions still to run
        self.exec_trace: list[dict[str, Any]] = []
        self.start_obs: Mapping[str, Any] | None = None
        self.feedback: dict[str, Any] | None = None    # last program and feedback, for a repair
        self.repairs = 0                               # repairs made for the current failing lineage
        self.programs = 0
        self.critiques = 0

    # ------------------------------------------------------------------ library
    def retrieve(self, obs: Mapping[str, Any]) -> list[dict[str, Any]]:
        query = _tokens(compact([obs.get("next_milestone"), list(inventory(obs)),
                                   list(obs.get("nearby_targets") or {})]))
        scored = []
        for rank, proc in enumerate(reversed(self.library.values())):
            text = " ".join([proc["name"], proc.get("description", ""), proc.get("subgoal", ""), compact(proc["actions"])])
            scored.append((-len(query & _tokens(text)), rank, proc))
        scored.sort(key=lambda t: (t[0], t[1]))
        return [dict(p) for _, _, p in scored[:RETRIEVE]]

    def remember(self, program: dict[str, Any]) -> None:
        name = program["name"]
        self.library.pop(name, None)
        self.library[name] = {k: program[k] for k in ("name", "description", "subgoal", "success", "actions")}
        while len(self.library) > LIBRARY_SIZE:
            self.library.popitem(last=False)

    # ------------------------------------------------------------------ program contract
    def _program(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise ContractError(NOT_OBJECT)
        prog = data.get("program", data)
        reuse = data.get("reuse_skill") or (prog.get("reuse_skill") if isinstance(prog, Mapping) else None)
        if reuse:
            if reuse not in self.library:
                raise ContractError(f"reuse_skill {reuse!r} is not a retrieved skill")
            self.library.move_to_end(reuse)
            return {**self.library[reuse], "reused": True}
        check(Program, prog, PROGRAM_PROBLEMS, root="program must be an object")
        parsed = [parse_action(a) for a in prog["actions"]]
        success = prog.get("success") if isinstance(prog.get("success"), Mapping) else {"kind": "state_change"}
        check(Success, success, SUCCESS_PROBLEMS)
        name = re.sub(r"[^a-z0-9_]+", "_", str(prog.get("name") or f"program_{self.programs + 1}").lower()).strip("_")
        return {"name": name or f"program_{self.programs + 1}", "description": prog.get("description") or "",
                "subgoal": prog.get("subgoal") or "", "success": dict(success), "actions": parsed}

    def generate(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        retrieved = self.retrieve(obs)
        obs_text = self.observation_text(obs)
        system = P.render("voyager_system.j2", macro_length=MACRO_LENGTH)

        def user(repair: bool, previous: str) -> str:
            return P.render("voyager_user.j2", retrieved=retrieved, feedback=self.feedback, obs_text=obs_text,
                            json_repair=repair)

        schema = program_schema(tuple(p["name"] for p in retrieved))
        program = self.ask_json("action_agent", system, user, self._program, schema)
        if program is None:       # fallback: one ReAct-style action as a one-skill program
            action = self.ask_action("fallback", P.render("react_system.j2"),
                                     P.render("observation.j2", o=P.observation_view(self.bounded(obs)), show_task=True),
                                     extras=("thought",))
            program = {"name": "fallback_action", "description": action.get("thought", ""), "subgoal": "",
                       "success": {"kind": "action_result"}, "actions": [parse_action(action)], "fallback": True}
        self.programs += 1
        return program

    # ------------------------------------------------------------------ execution and review
    def on_outcome(self, outcome: SeenOutcome, obs: Mapping[str, Any]) -> None:
        if self.program is None:
            return
        self.exec_trace.append({"action": {"skill": outcome.action["skill"], "args": outcome.action["args"]},
                                **outcome.summary()})
        if not outcome.ok or not self.queue:
            self.finish(obs)

    def finish(self, obs: Mapping[str, Any]) -> None:
        program, start = self.program, self.start_obs
        if program is None or start is None:           # no program under way
            return
        check = deterministic_check(program, start, obs, self.exec_trace)
        system = P.render("critic_system.j2")
        shown = {k: program[k] for k in ("name", "description", "subgoal", "success", "actions")}
        view = lambda o: {"inventory": inventory(o), "position": o.get("position"),
                          "progress": o.get("progress"), "equipped": o.get("equipped")}

        def user(repair: bool, previous: str) -> str:
            return P.render("critic_user.j2", program=shown, start=view(start), final=view(obs),
                            trace=self.exec_trace, check=check, json_repair=repair)

        verdict = self.ask_json("critic", system, user, _critique, CRITIQUE_SCHEMA)
        self.critiques += 1
        success = verdict["success"] if verdict is not None else check["passed"]
        if success:
            if not program.get("fallback"):
                self.remember(program)
            self.feedback, self.repairs = None, 0
        elif self.repairs < MAX_REPAIRS:
            self.feedback = {"program": shown, "execution_trace": self.exec_trace, "deterministic_check": check,
                             "critique": (verdict or {}).get("critique", "")}
        else:                      # repair budget spent: start afresh
            self.feedback, self.repairs = None, 0
        self.program, self.queue, self.exec_trace, self.start_obs = None, [], [], None

    def choose(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        if self.program is None:
            repairing = self.feedback is not None
            self.program = self.generate(obs)
            if repairing:
                self.repairs += 1
            self.queue = [dict(a) for a in self.program["actions"]]
            self.start_obs = obs
        action = self.queue.pop(0)
        return action
