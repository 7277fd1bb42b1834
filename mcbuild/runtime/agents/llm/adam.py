"""ADAM (Appendix D; prompts L.7), adapted to one episode.

A planner call orders up to eight causal subgoals; the actor chooses actions toward the first
unfinished one. Every outcome becomes a before/action/after record in the interaction memory
(at most 32). When one grounded action (``sample_key``) has two comparable samples, a discovery
call proposes cause -> effect edges for the causal graph (at most 48 nodes). When progress is
blocked and a hypothesized multi-cause edge is testable with the current inventory, the causal
module runs an intervention probe: the same grid with one cause removed, an ordinary action that
costs budget. At most two probes per episode and none in the final 12 actions. Planner, discovery
and rejected-action calls cost no action but are counted in cost.
"""
from __future__ import annotations

from collections import OrderedDict, deque
from typing import Annotated, Any, Mapping

from pydantic import BaseModel, Field

from mcbuild.compiler.core.canonical import compact
from mcbuild.llm import schemas

from . import rendering as P
from .base import LLMAgent, SeenOutcome, inventory, remaining_actions, same_id, signature
from .contracts import ID_CHARS, ContractError, Id, Note, check, text

GRAPH_NODES = 48
MEMORY_SIZE = 32
LEARN_SAMPLES = 2
MAX_PROBES = 2
NO_PROBE_LAST = 12          # no probe while at most this many actions remain
PLAN_STEPS = 8
REPLAN_AFTER = 2            # failures toward one plan target before replanning
STALL = 3                   # actions without progress before uncertainty counts as blocking
DISCOVERY_GROUPS = 4


class Plan(BaseModel):
    subgoals: list[Any] = Field(min_length=1, max_length=PLAN_STEPS)


class Subgoal(BaseModel):
    target: Id
    reason: Note | None = None


class Edges(BaseModel):
    edges: list[Any] = Field(max_length=DISCOVERY_GROUPS)


class Cause(BaseModel):
    type: Annotated[str, text(16)] = "item"
    name: Id
    count: int = 1


class Effect(BaseModel):
    type: Annotated[str, text(16)] = "item"
    name: Id


class Edge(BaseModel):
    sample_key: str
    causes: Annotated[list[Cause], Field(max_length=4)] = []
    effects: Annotated[list[Effect], Field(max_length=4)] = []


PLAN_PROBLEM = f'the plan needs a "subgoals" list of 1..{PLAN_STEPS} subgoals'
SUBGOAL_PROBLEMS = {"target": f"every subgoal needs a target id (at most {ID_CHARS} characters)",
                    "reason": "a subgoal's reason is a short string"}
EDGES_PROBLEM = f'the reply needs an "edges" list of at most {DISCOVERY_GROUPS} edges'
EDGE_PROBLEM = "every edge must copy one supplied sample_key exactly"
EDGE_PROBLEMS = {"sample_key": EDGE_PROBLEM, "causes": "an edge's causes are at most 4 {type, name, count} objects",
                 "effects": "an edge's effects are at most 4 {type, name} objects"}
PLAN_SCHEMA = schemas.contract("adam_plan", Plan, {"subgoals": Subgoal})
EDGES_SCHEMA = schemas.contract("adam_edges", Edges, {"edges": Edge})
SAMPLE_KEY = ("properties", "edges", "items", "properties", "sample_key")     # in EDGES_SCHEMA


def _plan(data: Any) -> list[dict[str, Any]]:
    check(Plan, data, {"subgoals": PLAN_PROBLEM}, root=PLAN_PROBLEM)
    out = []
    for s in data["subgoals"][:PLAN_STEPS]:
        check(Subgoal, s, SUBGOAL_PROBLEMS, root=SUBGOAL_PROBLEMS["target"])
        out.append({"target": s["target"].strip(), "reason": s.get("reason") or "", "completed": False})
    return out


def _fingerprint(sample: Mapping[str, Any]) -> str:
    return compact([sample["consumedItems"], sample["addedItems"]])


class AdamAgent(LLMAgent):
    name = "adam"
    action_extras = ("thought", "subgoal")

    def reset_memory(self) -> None:
        self.plan: list[dict[str, Any]] = []
        self.need_plan = True
        self.edges: list[dict[str, Any]] = []
        self.memory: deque[dict[str, Any]] = deque(maxlen=MEMORY_SIZE)
        self.samples: dict[str, list[dict[str, Any]]] = {}
        self.actions: dict[str, dict[str, Any]] = {}
        self.analyzed: dict[str, set[str]] = {}     # sample_key -> outcome fingerprints already analysed
        self.probes = 0
        self.probe_log: list[dict[str, Any]] = []
        self.failures: dict[str, int] = {}
        self.since_progress = 0

    # ------------------------------------------------------------------ causal graph
    def nodes(self) -> list[str]:
        seen: OrderedDict[str, None] = OrderedDict()
        for e in self.edges:
            for c in e["causes"] + e["effects"]:
                seen[c["name"]] = None
        return list(seen)

    def graph_view(self) -> dict[str, Any]:
        return {"nodes": self.nodes(), "edges": [dict(e) for e in self.edges]}

    def _merge(self, data: Any, keys: set[str]) -> list[dict[str, Any]]:
        check(Edges, data, {"edges": EDGES_PROBLEM}, root=EDGES_PROBLEM)
        out = []
        for e in data["edges"]:
            check(Edge, e, EDGE_PROBLEMS, root=EDGE_PROBLEM)
            if e["sample_key"] not in keys:
                raise ContractError(EDGE_PROBLEM)
            causes = [{"type": c.get("type", "item"), "name": c["name"], "count": c.get("count", 1),
                       "status": "hypothesized"} for c in e.get("causes", [])]
            effects = [{"type": c.get("type", "item"), "name": c["name"]} for c in e.get("effects", [])]
            if effects:
                out.append({"sample_key": e["sample_key"], "causes": causes, "effects": effects})
        return out

    def discover(self, keys: list[str]) -> None:
        groups = [{"sample_key": k, "samples": [{x: s[x] for x in ("initialItems", "consumedItems", "addedItems")}
                                                  for s in self.samples[k]]} for k in keys]
        system = P.render("adam_discovery_system.j2")

        def user(repair: bool, previous: str) -> str:
            return P.render("adam_discovery_user.j2", groups=groups, graph=self.graph_view(), repair=repair,
                            previous=previous)

        schema = schemas.choices(EDGES_SCHEMA, SAMPLE_KEY, tuple(keys))
        edges = self.ask_json("discovery", system, user, lambda d: self._merge(d, set(keys)), schema)
        for k in keys:
            self.analyzed[k] = {_fingerprint(s) for s in self.samples[k]}
        for edge in edges or []:
            n = len(self.samples[edge["sample_key"]])
            agree = len({compact(s["addedItems"]) for s in self.samples[edge["sample_key"]]}) == 1
            edge.update(samples=n, status="supported" if agree and n >= LEARN_SAMPLES else "hypothesized")
            self.edges = [e for e in self.edges if e["sample_key"] != edge["sample_key"]] + [edge]
        while len(self.nodes()) > GRAPH_NODES and self.edges:
            victim = next((e for e in self.edges if e["status"] != "verified"), self.edges[0])
            self.edges.remove(victim)

    # ------------------------------------------------------------------ probes
    def blocked(self) -> bool:
        return bool(self.outcomes) and not self.outcomes[-1].ok and self.since_progress >= STALL

    def probe_action(self, obs: Mapping[str, Any]) -> dict[str, Any] | None:
        """An intervention on a hypothesized multi-cause craft edge, or ``None`` (limits apply)."""
        if self.probes >= MAX_PROBES:
            return None
        remaining = remaining_actions(obs)
        if remaining is not None and remaining <= NO_PROBE_LAST:
            return None
        if not self.blocked():
            return None
        inv = inventory(obs)
        for edge in reversed(self.edges):
            action = self.actions.get(edge["sample_key"])
            items = [c["name"] for c in edge["causes"] if c["type"] == "item" and c.get("status") == "hypothesized"]
            if edge["status"] == "verified" or action is None or action["skill"] != "craft_grid" or len(set(items)) < 2:
                continue
            grid = action["args"]["grid"]
            cells = [c for row in grid for c in row if c]
            if any(sum(n for k, n in inv.items() if same_id(k, c)) < cells.count(c) for c in set(cells)):
                continue
            removed = sorted(set(items))[-1]
            probe_grid = [[None if c and same_id(c, removed) else c for c in row] for row in grid]
            if not any(c for row in probe_grid for c in row):
                continue
            return {"skill": "craft_grid", "args": {**action["args"], "grid": probe_grid},
                    "thought": f"intervention: remove {removed} from {edge['sample_key']}",
                    "subgoal": edge["effects"][0]["name"], "probe": {"edge": edge["sample_key"], "removed": removed}}
        return None

    def _probe_result(self, outcome: SeenOutcome) -> None:
        probe = outcome.action["probe"]
        edge = next((e for e in self.edges if e["sample_key"] == probe["edge"]), None)
        if edge is None:
            return
        still = any(any(same_id(k, eff["name"]) for k in outcome.gained) for eff in edge["effects"])
        for c in edge["causes"]:
            if c["name"] == probe["removed"]:
                c["status"] = "rejected" if still else "verified"
        if not still:
            edge["status"] = "verified"

    # ------------------------------------------------------------------ outcomes and plan
    def on_outcome(self, outcome: SeenOutcome, obs: Mapping[str, Any]) -> None:
        act = {"skill": outcome.action["skill"], "args": outcome.action["args"]}
        key = signature(act)
        record = {"sample_key": key, "initialItems": inventory(outcome.before), "consumedItems": outcome.lost,
                  "addedItems": outcome.gained, "ok": outcome.ok, "action": outcome.step}
        self.memory.append(record)
        if outcome.ok:
            self.samples.setdefault(key, []).append(record)
            self.samples[key] = self.samples[key][-LEARN_SAMPLES * 2:]
            self.actions[key] = act
        self.since_progress = 0 if outcome.progressed else self.since_progress + 1
        if outcome.action.get("probe"):
            self._probe_result(outcome)
        self._mark(obs)
        target = next((p["target"] for p in self.plan if not p["completed"]), None)
        if target is not None and not outcome.ok:
            self.failures[target] = self.failures.get(target, 0) + 1
            if self.failures[target] >= REPLAN_AFTER:
                self.failures[target] = 0
                self.need_plan = True
        ready = [k for k, s in self.samples.items() if len(s) >= LEARN_SAMPLES
                 and not {_fingerprint(x) for x in s} <= self.analyzed.get(k, set())]
        if ready:
            self.discover(ready[-DISCOVERY_GROUPS:])

    def _mark(self, obs: Mapping[str, Any]) -> None:
        inv = inventory(obs)
        done = obs.get("completed_advancements") or []
        view = P.observation_view(obs)
        facilities = P.facility_ids(view["observed_facilities"])
        for p in self.plan:
            t = p["target"]
            if any(same_id(k, t) for k in inv) or any(same_id(a, t) for a in done) or any(same_id(f, t) for f in facilities):
                p["completed"] = True
        if self.plan and all(p["completed"] for p in self.plan):
            self.need_plan = True

    def replan(self, obs: Mapping[str, Any]) -> None:
        view = P.observation_view(obs)
        ctx = {"task": P.task_text(obs), "task_state": view["task_state"], "inventory": inventory(obs),
               "targets": view["nearby_targets"] or {}, "entities": view["nearby_entities"] or {},
               "capabilities": view["capabilities"], "facilities": view["observed_facilities"],
               "last_action": view["latest_result"], "constraints": view["blocked_actions"] or [],
               "graph": self.graph_view()}
        system = P.render("adam_planner_system.j2")

        def user(repair: bool, previous: str) -> str:
            return P.render("adam_planner_user.j2", repair=repair, previous=previous, **ctx)

        plan = self.ask_json("planner", system, user, _plan, PLAN_SCHEMA)
        self.need_plan = False
        if plan is not None:
            self.plan = plan
            self._mark(obs)
            self.need_plan = False

    # ------------------------------------------------------------------ acting
    def choose(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        if self.need_plan:
            self.replan(obs)
        probe = self.probe_action(obs)
        if probe is not None:
            self.probes += 1
            self.probe_log.append({"step": self.step, "remaining": remaining_actions(obs), **probe["probe"]})
            return probe
        system = P.render("adam_system.j2")
        memory = [{k: v for k, v in r.items() if k != "initialItems"} for r in self.memory]
        ctx = {"plan": self.plan, "graph": self.graph_view(), "memory": memory, "obs_text": self.observation_text(obs)}
        action = self.ask_action("actor", system, P.render("adam_user.j2", rejected=None, **ctx))
        blocked = obs.get("blocked_actions") or []
        if any(isinstance(b, Mapping) and isinstance(b.get("action"), Mapping)
               and signature(b["action"]) == signature(action) for b in blocked):
            rejected = {"skill": action["skill"], "args": action["args"],
                        "why": "this exact action is blocked until its prerequisite or access state changes"}
            action = self.ask_action("actor", system, P.render("adam_user.j2", rejected=rejected, **ctx))
        return action
