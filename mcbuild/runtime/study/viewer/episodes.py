"""The viewer's data of one episode, built from its stored trajectory (pure functions, no I/O).

An episode becomes a compact JSON-able dict: its identity and outcome, one entry per action
(skill, arguments, result, inventory change, Score, newly completed milestones, rule encounters
and the model calls made for it), and optionally the body's path from :mod:`.body_path`.
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Mapping, Sequence

from mcbuild.runtime.records import EpisodeRecord

#: Characters kept of a model reply and of the last prompt message in the viewer.
TEXT_CHARS = 1200


def _short(x: Any) -> Any:
    """Item ids without the ``minecraft:`` namespace, recursively."""
    if isinstance(x, str):
        return x.removeprefix("minecraft:")
    if isinstance(x, Mapping):
        return {_short(k): _short(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_short(v) for v in x]
    return x


def _llm_call(c: Mapping[str, Any]) -> dict[str, Any]:
    messages = c.get("messages") or []
    last = messages[-1].get("content", "") if messages and isinstance(messages[-1], Mapping) else ""
    return {"role": c.get("role"), "model": c.get("model"), "in": int(c.get("prompt_tokens") or 0),
            "out": int(c.get("completion_tokens") or 0), "cost": float(c.get("cost_usd") or 0.0),
            "repair": bool(c.get("repair")), "prompt": str(last)[-TEXT_CHARS:],
            "reply": str(c.get("reply") or "")[:TEXT_CHARS]}


def parse_trajectory(text: str) -> list[dict[str, Any]]:
    """The JSONL trajectory as a list of step dicts (blank lines skipped)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def steps_of(trajectory: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One compact entry per action; a trailing ``llm_calls``-only line is attached to the last action."""
    out: list[dict[str, Any]] = []
    done: set[str] = set()
    for step in trajectory:
        if "action" not in step:
            if out and step.get("llm_calls"):
                out[-1]["llm"] += [_llm_call(c) for c in step["llm_calls"]]
            continue
        act, res = step.get("action") or {}, step.get("result") or {}
        completed = list(step.get("completed") or [])
        new = [m for m in completed if m not in done]
        done.update(completed)
        out.append({
            "i": int(step["index"]), "skill": act.get("skill"), "args": _short(act.get("args") or {}),
            "ok": bool(res.get("ok")), "reason": res.get("reason"), "msg": str(res.get("message") or "").replace("minecraft:", ""),
            "delta": _short(step.get("inventory_delta") or {}), "score": step.get("score", 0),
            "new": _short(new), "sig": step.get("signature", ""),
            "enc": [{"rule": _short(e.get("rule")), "first": bool(e.get("first"))} for e in step.get("evaluator") or []],
            "llm": [_llm_call(c) for c in step.get("llm_calls") or []],
        })
    return out


def episode_data(record: EpisodeRecord, info: Mapping[str, Any], trajectory: Sequence[Mapping[str, Any]],
                 path: Sequence[Sequence[int]] | None = None) -> dict[str, Any]:
    """Everything the episode page shows."""
    steps = steps_of(trajectory)
    return {
        "id": record.episode_id, "world": record.world, "biome": record.biome, "condition": record.condition,
        "task": record.task, "configuration": record.configuration, "model": record.model,
        "repetition": record.repetition, "budget": record.budget, "disclosure": record.disclosure,
        "seed": info.get("seed"), "score": record.score, "success": record.success, "actions": record.actions,
        "end": str(info.get("end_reason") or ""), "attempts": info.get("attempts"),
        "tokens": [int(info.get("tokens_in") or 0), int(info.get("tokens_out") or 0)], "cost": record.cost_usd,
        "encounters": [e.to_dict() for e in record.encounters], "steps": steps,
        "path": [list(p) for p in path] if path is not None else None,
    }


def first_divergence(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The first action index at which two step lists differ: in the action itself (``action``), in its
    result (``outcome``: items gained or lost, success), or because one episode ended (``length``)."""
    for sa, sb in zip(a, b):
        if sa["sig"] != sb["sig"]:
            return {"index": sa["i"], "kind": "action"}
        if sa["delta"] != sb["delta"] or sa["ok"] != sb["ok"]:
            return {"index": sa["i"], "kind": "outcome"}
    if len(a) != len(b):
        return {"index": min(len(a), len(b)) + 1, "kind": "length"}
    return None


def pair_key(r: EpisodeRecord) -> tuple:
    """What a Mirror episode shares with its Vanilla partner: world, task, configuration, model, budget, repetition."""
    return (r.world, r.task, r.configuration, r.model, r.budget, r.repetition)


def pairs_of(records: Iterable[EpisodeRecord]) -> list[tuple[EpisodeRecord, EpisodeRecord]]:
    """(Vanilla, hidden-rule Mirror) episode pairs, in a fixed order."""
    rs = sorted(records, key=lambda r: (pair_key(r), r.condition))
    vanilla = {pair_key(r): r for r in rs if r.is_vanilla}
    return [(vanilla[pair_key(r)], r) for r in rs
            if not r.is_vanilla and r.disclosure == "hidden" and pair_key(r) in vanilla]
