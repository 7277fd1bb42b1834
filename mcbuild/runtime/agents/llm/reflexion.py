"""Reflexion (Appendix D; prompts L.3): ReAct plus at most three temporary lessons.

A deterministic evaluator watches the outcomes and triggers a review on repeated failure,
conflicting evidence, stalled progress or a schedule. A review is a separate reflector call (no
action, but counted in cost) whose lesson joins the active memory for 16 actions. At most six
reviews per episode; at most three lessons are active (the oldest gives way).
"""
from __future__ import annotations

from typing import Annotated, Any, Mapping

from pydantic import BaseModel, Field

from mcbuild.compiler.core.canonical import compact
from mcbuild.llm import schemas

from . import rendering as P
from .base import SeenOutcome, signature
from .contracts import NOTE_CHARS, Note, check, text
from .react import ReActAgent

MAX_LESSONS = 3
MAX_REVIEWS = 6
LESSON_ACTIONS = 16         # a lesson is shown for the 16 actions after its review
FAILURE_STREAK = 2          # consecutive failed actions = repeated failure
STALL_ACTIONS = 8           # actions without progress or any inventory change = stalled progress
REVIEW_EVERY = 12           # scheduled review after this many actions without one
REVIEW_COOLDOWN = 3         # actions between two triggered reviews
SEGMENT = 4                 # trace steps handed to the reflector
HINTS = 4                   # entries of avoid / try kept

Text = Annotated[str, text(NOTE_CHARS)]
Hints = Note | Annotated[list[Note], Field(max_length=HINTS)]


class Lesson(BaseModel):
    """The reflector's reply; ``avoid`` and ``try`` may be one string."""

    failure_type: Text
    diagnosis: Text
    next_subgoal: Text
    expiry_condition: Text
    avoid: Hints = []
    try_: Hints = Field([], alias="try")


TEXTS = ("failure_type", "diagnosis", "next_subgoal", "expiry_condition")
LISTS = ("avoid", "try")
LESSON_PROBLEMS = {**{k: f"{k} must be a non-empty string of at most {NOTE_CHARS} characters" for k in TEXTS},
                   **{k: f"{k} must be a list of at most {HINTS} strings of at most {NOTE_CHARS} characters"
                      for k in LISTS}}
LESSON_SCHEMA = schemas.contract("reflexion_lesson", Lesson)


def _lesson(data: Any) -> dict[str, Any]:
    check(Lesson, data, LESSON_PROBLEMS)
    out: dict[str, Any] = {k: data[k].strip() for k in TEXTS}
    for key in LISTS:
        value = data.get(key, [])
        out[key] = [value] if isinstance(value, str) else value
    return out


class ReflexionAgent(ReActAgent):
    name = "reflexion"
    system_template = "reflexion_system.j2"
    user_template = "reflexion_user.j2"

    def reset_memory(self) -> None:
        super().reset_memory()
        self.lessons: list[dict[str, Any]] = []
        self.reviews = 0
        self.last_review = 0           # action index of the last review (0 = none yet)
        self.seen: dict[str, tuple[bool, str]] = {}
        self.since_change = 0

    # ------------------------------------------------------------------ evaluator
    def triggers(self, outcome: SeenOutcome) -> dict[str, Any] | None:
        """Immutable evidence for a review, or ``None``."""
        key = signature(outcome.action)
        effect = (outcome.ok, compact(outcome.gained))
        earlier = self.seen.get(key)
        self.seen[key] = effect
        self.since_change = 0 if (outcome.progressed or outcome.gained or outcome.lost) else self.since_change + 1
        streak = 0
        for o in reversed(self.outcomes):
            if o.ok:
                break
            streak += 1
        cooled = outcome.step - self.last_review >= REVIEW_COOLDOWN or self.last_review == 0
        evidence = {"action": outcome.step, "ok": outcome.ok, "reason": outcome.reason,
                    "gained": outcome.gained, "lost": outcome.lost}
        if streak >= FAILURE_STREAK and cooled:
            return {"trigger": "repeated_failure", "consecutive_failures": streak, **evidence}
        if earlier is not None and earlier != effect and cooled:
            return {"trigger": "conflicting_evidence", "earlier": {"ok": earlier[0], "gained": earlier[1]}, **evidence}
        if self.since_change >= STALL_ACTIONS and cooled:
            return {"trigger": "stalled_progress", "actions_without_change": self.since_change, **evidence}
        if outcome.step - self.last_review >= REVIEW_EVERY:
            return {"trigger": "scheduled_review", "actions_since_review": outcome.step - self.last_review, **evidence}
        return None

    def on_outcome(self, outcome: SeenOutcome, obs: Mapping[str, Any]) -> None:
        super().on_outcome(outcome, obs)
        evidence = self.triggers(outcome)
        if evidence is not None and self.reviews < MAX_REVIEWS:
            self.review(evidence, outcome, obs)
        self.lessons = [l for l in self.lessons if l["expires_after"] >= self.step]

    def review(self, evidence: dict[str, Any], outcome: SeenOutcome, obs: Mapping[str, Any]) -> None:
        self.reviews += 1
        self.last_review = outcome.step
        segment = []
        outcomes = {o.step: o for o in self.outcomes[-SEGMENT:]}
        for s in list(self.trace.steps)[-SEGMENT:]:
            o = outcomes.get(s["step"])
            segment.append({**s, "ok": o.ok if o else None, "reason": o.reason if o else None,
                            "result": o.summary() if o else s["result"]})
        system = P.render("reflector_system.j2")
        obs_text = self.observation_text(obs)

        def user(repair: bool, previous: str) -> str:
            return P.render("reflector_user.j2", goal=P.goal_text(obs), evidence=evidence, obs_text=obs_text,
                            segment=segment, repair=repair, previous=previous)

        lesson = self.ask_json("reflector", system, user, _lesson, LESSON_SCHEMA)
        if lesson is None:
            return
        lesson.update(evidence=evidence, created_after=outcome.step, expires_after=outcome.step + LESSON_ACTIONS)
        self.lessons.append(lesson)
        del self.lessons[:-MAX_LESSONS]

    def user_context(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().user_context(obs), "lessons": [dict(l) for l in self.lessons]}
