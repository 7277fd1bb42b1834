"""XENON (Appendix D; prompts L.6), adapted to one episode.

An initializer call builds a fallible dependency graph (at most 32 nodes) from prior knowledge.
Every outcome updates the graph and a failure-aware action memory (at most 32 entries): an action
that reaches its subgoal verifies the node and records the action; one that yields a different
item is a failure for the subgoal and evidence for the produced item's node (its requirements
are corrected to what was consumed). Three memory entries relevant to the frontier are shown per
call. After two failures on one subgoal the node is marked revisionNeeded and the graph is
re-planned from the updated frontier (one more initializer call, counted in cost, no action).
A proposal the memory marks invalid for the same subgoal is rejected once and asked again.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Annotated, Any, Mapping

from pydantic import BaseModel, Field

from mcbuild.compiler.rules.catalog import ns
from mcbuild.llm import schemas

from . import rendering as P
from .base import LLMAgent, SeenOutcome, inventory, same_id, signature
from .contracts import ID_CHARS, Id, Note, check, text

GRAPH_NODES = 32
MEMORY_SIZE = 32
RETRIEVE = 3
REPLAN_AFTER = 2            # failures on one subgoal before revising the graph
MAX_REPLANS = 6
FRONTIER = 3
REQUIREMENTS = 4            # prerequisites of one node in the initializer's reply


def _norm(item: Any) -> str:
    """A model-written item name as a namespaced id (lenient: graph text comes from the model)."""
    return ns(str(item).strip().lower())


class Graph(BaseModel):
    root: Annotated[str, text(ID_CHARS, required=False)] | None = None
    nodes: list[Any] = Field(max_length=GRAPH_NODES)


class Requirement(BaseModel):
    item: Id
    count: int = 1


class Node(BaseModel):
    item: Id
    requirements: Annotated[list[Requirement | Id], Field(max_length=REQUIREMENTS)] = []
    action_hint: Note | None = None


GRAPH_PROBLEM = f'the graph needs "root" and a "nodes" list of at most {GRAPH_NODES} nodes'
NODE_PROBLEMS = {"item": f"every node needs an item id of at most {ID_CHARS} characters",
                 "requirements": f"a node's requirements are at most {REQUIREMENTS} {{item, count}} objects",
                 "action_hint": "a node's action_hint is a short string"}
GRAPH_SCHEMA = schemas.contract("xenon_graph", Graph, {"nodes": Node})


def _graph(data: Any) -> dict[str, Any]:
    check(Graph, data, {"root": GRAPH_PROBLEM, "nodes": GRAPH_PROBLEM}, root=GRAPH_PROBLEM)
    nodes: OrderedDict[str, dict[str, Any]] = OrderedDict()
    for n in data["nodes"]:
        check(Node, n, NODE_PROBLEMS, root=NODE_PROBLEMS["item"])
        reqs = []
        for r in n.get("requirements", []):
            item, count = (r, 1) if isinstance(r, str) else (r["item"], r.get("count", 1))
            reqs.append({"item": _norm(item), "count": max(count, 1)})
        nodes[_norm(n["item"])] = {"requirements": reqs, "action_hint": n.get("action_hint") or "",
                                   "status": "hypothesized", "observedActions": []}
        if len(nodes) == GRAPH_NODES:
            break
    return {"root": str(data.get("root") or ""), "nodes": nodes}


class XenonAgent(LLMAgent):
    name = "xenon"
    action_extras = ("thought", "subgoal")

    def reset_memory(self) -> None:
        self.root = ""
        self.nodes: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.initialized = False
        self.memory: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.failures: dict[str, int] = {}
        self.replans = 0

    # ------------------------------------------------------------------ graph
    def initialize(self, obs: Mapping[str, Any], *, revision: bool = False) -> None:
        system = P.render("xenon_init_system.j2")
        state = {"task_state": P.observation_view(obs)["task_state"], "inventory": inventory(obs),
                 "progress": obs.get("progress")}
        if revision:
            state["graph"] = self.graph_view()
            state["failure_memory"] = list(self.memory.values())[-RETRIEVE:]

        def user(repair: bool, previous: str) -> str:
            return P.render("xenon_init_user.j2", max_nodes=GRAPH_NODES, task=P.task_text(obs), task_state=state,
                            repair=repair, previous=previous)

        graph = self.ask_json("initializer" if not revision else "replanner", system, user, _graph, GRAPH_SCHEMA)
        self.initialized = True
        task = obs.get("task")
        if not self.root and isinstance(task, Mapping):
            self.root = str(task.get("goal") or "")
        if graph is None:
            return
        self.root = graph["root"] or self.root
        kept = OrderedDict((k, v) for k, v in self.nodes.items() if v["status"] == "verified")
        for k, v in graph["nodes"].items():
            if k not in kept:
                old = self.nodes.get(k)
                if old is not None and old.get("revisionNeeded"):
                    v["revisionNeeded"] = True
                kept[k] = v
        while len(kept) > GRAPH_NODES:
            victim = next((k for k, v in kept.items() if v["status"] != "verified"), next(iter(kept)))
            kept.pop(victim)
        self.nodes = kept

    def graph_view(self) -> dict[str, Any]:
        return {"root": self.root, "nodes": [{"item": k, **v} for k, v in self.nodes.items()]}

    def frontier(self, obs: Mapping[str, Any]) -> list[str]:
        inv = inventory(obs)
        have = lambda item, n=1: sum(c for k, c in inv.items() if same_id(k, item)) >= n
        open_nodes = [k for k, v in self.nodes.items()
                      if not have(k) and v["status"] != "inadmissible" and not v.get("revisionNeeded")]
        ready = [k for k in open_nodes if all(have(r["item"], r["count"]) for r in self.nodes[k]["requirements"])]
        if ready:
            return ready[:FRONTIER]
        leaves = [k for k in open_nodes if not self.nodes[k]["requirements"]]
        return leaves[:FRONTIER] or [self.root or "unknown"]

    def _add_node(self, item: str, requirements: list[dict[str, Any]], action: dict[str, Any]) -> None:
        node = self.nodes.get(item)
        if node is None:
            if len(self.nodes) >= GRAPH_NODES:
                victim = next((k for k, v in self.nodes.items() if v["status"] != "verified"), None)
                if victim is None:
                    return
                self.nodes.pop(victim)
            node = self.nodes[item] = {"requirements": requirements, "action_hint": "", "status": "hypothesized",
                                       "observedActions": []}
        elif requirements != node["requirements"] and node["status"] != "verified":
            node["requirements"] = requirements          # correct a contradicted edge
        node["status"] = "verified"
        node.pop("revisionNeeded", None)
        if action not in node["observedActions"]:
            node["observedActions"] = (node["observedActions"] + [action])[-2:]

    # ------------------------------------------------------------------ memory
    def _remember(self, subgoal: str, action: dict[str, Any], outcome: str, detail: dict[str, Any]) -> None:
        key = f"{subgoal}|{signature(action)}"
        entry = self.memory.pop(key, None) or {"subgoal": subgoal, "action": action, "success": 0, "failure": 0}
        entry["success" if outcome == "success" else "failure"] += 1
        entry.update(last=outcome, detail=detail, invalid=entry["failure"] > 0 and entry["success"] == 0)
        self.memory[key] = entry
        while len(self.memory) > MEMORY_SIZE:
            self.memory.popitem(last=False)

    def retrieve(self, frontier: list[str]) -> list[dict[str, Any]]:
        entries = list(self.memory.values())[::-1]
        relevant = [e for e in entries if any(same_id(e["subgoal"], f) for f in frontier)]
        rest = [e for e in entries if e not in relevant]
        return (relevant + rest)[:RETRIEVE]

    def on_outcome(self, outcome: SeenOutcome, obs: Mapping[str, Any]) -> None:
        act = {"skill": outcome.action["skill"], "args": outcome.action["args"]}
        subgoal = _norm(outcome.action.get("subgoal") or "unknown")
        reached = any(same_id(k, subgoal) for k in outcome.gained) or outcome.progressed or any(
            same_id(a, subgoal) for a in (obs.get("completed_advancements") or []))
        if outcome.ok and reached:
            self._remember(subgoal, act, "success", outcome.summary())
            for item in outcome.gained:
                self._add_node(_norm(item), [{"item": _norm(k), "count": n} for k, n in outcome.lost.items()], act)
            self.failures.pop(subgoal, None)
            return
        if outcome.ok and not outcome.gained:
            return                      # no evidence either way (e.g. moving, exploring)
        if outcome.ok:                  # a different item than the subgoal: failure + evidence for the output
            for item in outcome.gained:
                self._add_node(_norm(item), [{"item": _norm(k), "count": n} for k, n in outcome.lost.items()], act)
        self._remember(subgoal, act, "failure", outcome.summary())
        self.failures[subgoal] = self.failures.get(subgoal, 0) + 1
        if self.failures[subgoal] >= REPLAN_AFTER:
            self.failures[subgoal] = 0
            node = self.nodes.get(subgoal)
            if node is not None and node["status"] != "verified":
                node["revisionNeeded"] = True
            if self.replans < MAX_REPLANS:
                self.replans += 1
                self.initialize(obs, revision=True)

    # ------------------------------------------------------------------ acting
    def choose(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        if not self.initialized:
            self.initialize(obs)
        frontier = self.frontier(obs)
        system = P.render("xenon_system.j2")
        obs_text = self.observation_text(obs)
        ctx = {"frontier": frontier, "graph": self.graph_view(), "memory": self.retrieve(frontier), "obs_text": obs_text}
        action = self.ask_action("actor", system, P.render("xenon_user.j2", rejected=None, **ctx))
        key = f"{_norm(action.get('subgoal') or 'unknown')}|{signature(action)}"
        if self.memory.get(key, {}).get("invalid"):
            rejected = {"subgoal": action.get("subgoal"), "skill": action["skill"], "args": action["args"],
                        "why": "FAILURE_AWARE_ACTION_MEMORY marks this action invalid for this subgoal"}
            action = self.ask_action("actor", system, P.render("xenon_user.j2", rejected=rejected, **ctx))
        return action
