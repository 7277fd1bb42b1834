"""Fake episode executors for the runner and scheduler tests. A light module (no report, no
plotting): study subprocesses and Ray workers import it to unpickle these functions."""
from __future__ import annotations

import dataclasses
import os
import random
import signal
import time
from pathlib import Path

from mcbuild.runtime.study.design.plan import PlanEntry
from mcbuild.runtime.study.outcome import EpisodeOutcome

MILESTONES = {"iron_armor": [15, 35, 65, 100], "diamond": [10, 25, 50, 70, 100], "enchantment": [10, 25, 45, 60, 75, 90, 100]}


def plan_entries(*ids: str) -> list[PlanEntry]:
    """Plan entries with these episode ids, for scheduler tests that run no real episode."""
    return [PlanEntry(episode_id=eid, biome="plains", world="plains-1", condition="vanilla", task="iron_armor",
                      configuration="vanilla-planner", model="none", budget=1, disclosure="hidden", repetition=i,
                      seed=i, agent="vanilla-planner") for i, eid in enumerate(ids)]


def fake_outcome(e) -> EpisodeOutcome:
    """Deterministic outcome from the episode seed (Mirror M01/M04 a bit harder)."""
    r = random.Random(e.seed)
    values = [0] + MILESTONES[e.task]
    harder = 1 if e.condition in ("m01", "m04") else 0
    depth = max(0, min(len(values) - 1, r.randint(1, len(values) - 1) - harder * r.randint(0, 2)))
    score = values[depth]
    actions = r.randint(max(depth, 1), e.budget)
    traj = [{"i": i + 1, "skill": "mine", "args": {"block": "stone"}, "ok": True} for i in range(actions)]
    encs = []
    if e.condition != "vanilla" and actions >= 2:
        encs = [{"rule": "r1", "action_index": 1, "signature": "mine|stone", "next_signature": "mine|stone",
                 "score_before": 0, "recovery_index": 2}]
    return EpisodeOutcome(score=score, success=score == 100, actions=actions, cost_usd=0.001 * actions,
                          tokens_in=10 * actions, tokens_out=actions, trajectory=traj, encounters=encs,
                          events=[{"action_index": 1, "rule": "r1"}] if encs else [],
                          success_action=actions if score == 100 else None,
                          end_reason="success" if score == 100 else "budget", biome=e.biome)


def milestone_outcome(e) -> EpisodeOutcome:
    """``fake_outcome`` with the milestone counts an executor reports (the milestones up to its Score)."""
    out = fake_outcome(e)
    values = MILESTONES[e.task]
    return dataclasses.replace(out, milestones_met=sum(v <= out.score for v in values), milestones_total=len(values))


def kill_once(markers: Path, victims: frozenset[str], e) -> EpisodeOutcome:
    """``fake_outcome``, but the process running a victim's first attempt is SIGKILLed mid-episode."""
    marker = markers / e.episode_id
    if e.episode_id in victims and not marker.exists():
        marker.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.01)
    return fake_outcome(e)


def slow(delay: float, e) -> EpisodeOutcome:
    """``fake_outcome`` after ``delay`` seconds."""
    time.sleep(delay)
    return fake_outcome(e)


def with_env(expected: dict[str, str], delay: float, e, markers: str | None = None) -> EpisodeOutcome:
    """``slow(delay)``, refusing to run unless this process's environment holds ``expected`` ("": unset
    or empty): settings that must reach a worker from the coordinator, never from the worker's own
    environment. With ``markers``, the episode first writes its process's parent pid (on Ray, its
    node's raylet) to ``markers/<episode id>``."""
    wrong = {k: os.environ.get(k) for k, v in expected.items() if (os.environ.get(k) or "") != v}
    if wrong:
        raise RuntimeError(f"this worker's environment differs from the coordinator's: {wrong}")
    if markers is not None:
        (Path(markers) / e.episode_id).write_text(str(os.getppid()))
    return slow(delay, e)
