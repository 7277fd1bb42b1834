"""Episode records: what one finished episode contributes to a study, shared by the episode
(which produces them) and the metrics (which aggregate them).

* :class:`EpisodeRecord` — the analysed outcome of one episode (identity, Score, actions, cost,
  encounters), validated on construction;
* :class:`Encounter` — the first action that ran into one changed rule (paper §3.6);
* :func:`semantic_signature` — the signature two actions are compared by (IRR);
* :func:`build_encounters` — encounters from a trajectory's signatures, scores and triggers.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Iterable, Mapping, Sequence

from mcbuild.compiler.worlds.layout import VANILLA

HIDDEN = "hidden"
DISCLOSED = "disclosed"
#: A condition id: Vanilla or a suite ``mNN`` (the one definition; the study config checks with it too).
CONDITION_RE = re.compile(r"^(vanilla|m\d\d)$")
#: Fields identifying the Vanilla twin of a Mirror episode.
TWIN_FIELDS = ("world", "model", "task", "configuration", "budget")



@dataclass(frozen=True)
class Encounter:
    """One rule encounter: the first action of an episode that triggered a
    modified outcome of rule ``rule`` (Section 3.6).

    Actions are the episode's budgeted semantic actions numbered from 1.

    * ``rule`` -- identifier of the changed rule (unique within the suite).
    * ``action_index`` -- 1-based index of the encounter action.
    * ``signature`` -- semantic signature of the encounter action
      (:func:`semantic_signature`).
    * ``next_signature`` -- signature of the next budgeted action, or ``None``
      when the encounter action was the episode's last action.
    * ``score_before`` -- the episode Score just before the encounter action.
    * ``recovery_index`` -- 1-based index of the first action at or after
      ``action_index`` after which the Score exceeds ``score_before``; ``None``
      if it never does.  ``recovery_index == action_index`` when the encounter
      action itself raised the Score.

    IRR counts the encounter iff ``next_signature is not None`` (numerator:
    ``next_signature == signature``); RL uses ``recovery_index -
    action_index`` iff ``recovery_index is not None``.
    """

    rule: str
    action_index: int
    signature: str
    next_signature: str | None = None
    score_before: float = 0.0
    recovery_index: int | None = None

    def __post_init__(self) -> None:
        if self.action_index < 1:
            raise ValueError(f"action_index is 1-based, got {self.action_index}")
        if self.recovery_index is not None and self.recovery_index < self.action_index:
            raise ValueError(
                f"recovery_index {self.recovery_index} precedes the encounter action {self.action_index}"
            )

    @property
    def followed(self) -> bool:
        """Whether another budgeted action followed the encounter."""
        return self.next_signature is not None

    @property
    def repeated(self) -> bool:
        """Whether the next action has the encounter action's signature."""
        return self.next_signature is not None and self.next_signature == self.signature

    @property
    def latency(self) -> int | None:
        """Recovery latency in semantic actions, or ``None`` if never recovered."""
        return None if self.recovery_index is None else self.recovery_index - self.action_index

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Encounter":
        rec = d.get("recovery_index")
        return cls(
            rule=str(d["rule"]),
            action_index=int(d["action_index"]),
            signature=str(d["signature"]),
            next_signature=None if d.get("next_signature") is None else str(d["next_signature"]),
            score_before=float(d.get("score_before", 0.0)),
            recovery_index=None if rec is None else int(rec),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class EpisodeIdentity:
    """Which episode of a study this is: the fields a study plan gives it and a record carries.

    * ``episode_id`` -- study-plan identifier (stable across infrastructure reruns).
    * ``biome``, ``world`` -- biome and **Vanilla** world id (``"plains-1"``);
      Mirror episodes carry the id of their Vanilla twin.
    * ``condition`` -- ``"vanilla"`` or the suite ``"m01"``..``"m06"`` (normalised to lower case).
    * ``task`` -- ``"iron_armor" | "diamond" | "enchantment"``.
    * ``configuration`` -- agent configuration (``"react"``, ``"react_rules"``, ...).
    * ``model``, ``budget`` (semantic actions), ``repetition``.
    * ``disclosure`` -- ``"hidden"`` or ``"disclosed"`` (ReAct w/rules).
    """

    episode_id: str
    biome: str
    world: str
    condition: str
    task: str
    configuration: str
    model: str
    budget: int
    disclosure: str
    repetition: int


@dataclass(frozen=True, kw_only=True)
class EpisodeResult:
    """What one episode achieved (the executor's outcome and the record share these fields).

    * ``score`` -- 0..100; ``success`` -- ``score == 100`` (``None``: derived from the score).
    * ``actions`` -- budgeted semantic actions used; ``cost_usd`` -- API cost.
    * ``success_action`` -- 1-based index of the action that completed the final milestone.
    * ``score_at`` -- optional ``{checkpoint: Score after the first c actions}``.
    * ``encounters`` -- :class:`Encounter` tuple (empty for Vanilla episodes; dicts are converted).
    * ``milestones_met`` / ``milestones_total`` -- how many of the task's milestones the
      episode completed, of how many (None in records written before they were kept).
    """

    score: float
    success: bool | None = None
    actions: int
    cost_usd: float = 0.0
    success_action: int | None = None
    score_at: Mapping[int, float] = field(default_factory=dict, hash=False)
    encounters: tuple[Encounter, ...] = ()
    milestones_met: int | None = None
    milestones_total: int | None = None

    def __post_init__(self) -> None:
        set_ = lambda name, value: object.__setattr__(self, name, value)
        if self.success is None:
            set_("success", float(self.score) == 100.0)
        set_("score_at", {int(k): float(v) for k, v in dict(self.score_at).items()})
        set_("encounters", tuple(e if isinstance(e, Encounter) else Encounter.from_dict(e) for e in self.encounters))

    @property
    def succeeded(self) -> bool:
        return bool(self.success)


#: The fields of the two parts, in record order.
IDENTITY_FIELDS = tuple(f.name for f in fields(EpisodeIdentity))
RESULT_FIELDS = tuple(f.name for f in fields(EpisodeResult))


@dataclass(frozen=True, kw_only=True)
class EpisodeRecord(EpisodeResult, EpisodeIdentity):
    """The analysed outcome of one episode: its :class:`EpisodeIdentity` and :class:`EpisodeResult`,
    validated on construction. ``success_action`` defaults to ``actions`` for a successful episode,
    since episodes end when the final milestone is reached; ``msr`` is the ratio of milestones met in
    percent and ``all_milestones`` whether every one was met."""

    def __post_init__(self) -> None:
        super().__post_init__()
        set_ = lambda name, value: object.__setattr__(self, name, value)
        cond = str(self.condition).lower()
        if not CONDITION_RE.match(cond):
            raise ValueError(f"condition must be 'vanilla' or 'mNN', got {self.condition!r}")
        set_("condition", cond)
        if self.disclosure not in (HIDDEN, DISCLOSED):
            raise ValueError(f"disclosure must be 'hidden' or 'disclosed', got {self.disclosure!r}")
        if not 0.0 <= float(self.score) <= 100.0:
            raise ValueError(f"score must be in [0, 100], got {self.score!r}")
        if bool(self.success) != (float(self.score) == 100.0):
            raise ValueError(f"success={self.success!r} is inconsistent with score={self.score!r}")
        if self.actions < 0:
            raise ValueError(f"actions must be non-negative, got {self.actions}")
        sa = self.success_action
        if self.success:
            if sa is None:
                set_("success_action", int(self.actions))
            elif not 1 <= sa <= self.actions:
                raise ValueError(f"success_action {sa} outside 1..actions ({self.actions})")
        elif sa is not None:
            raise ValueError("success_action given for an unsuccessful episode")
        if (self.milestones_met is None) != (self.milestones_total is None):
            raise ValueError("milestones_met and milestones_total are given together")
        met, total = self.milestones_met, self.milestones_total
        if met is not None and total is not None and not 0 <= met <= total:
            raise ValueError(f"milestones_met {self.milestones_met} outside 0..{self.milestones_total}")
        for c, s in self.score_at.items():
            if (s >= 100.0) != self.succeeded_by(c):
                raise ValueError(f"score_at[{c}]={s} is inconsistent with success_action={self.success_action}")

    # -- derived --------------------------------------------------------
    @property
    def is_vanilla(self) -> bool:
        return self.condition == VANILLA

    @property
    def is_mirror(self) -> bool:
        return self.condition != VANILLA

    @property
    def suite(self) -> str | None:
        return None if self.is_vanilla else self.condition

    @property
    def msr(self) -> float | None:
        """The share of the task's milestones met, in percent (None if not recorded)."""
        if not self.milestones_total or self.milestones_met is None:
            return None
        return 100.0 * self.milestones_met / self.milestones_total

    @property
    def all_milestones(self) -> bool | None:
        """Whether every milestone of the task was met (TSR counts these; None if not recorded)."""
        return None if not self.milestones_total else self.milestones_met == self.milestones_total

    def twin_key(self) -> tuple:
        """(world, model, task, configuration, budget) of the Vanilla twin."""
        return tuple(getattr(self, f) for f in TWIN_FIELDS)

    def succeeded_by(self, checkpoint: int) -> bool:
        """Whether the final milestone was completed within ``checkpoint`` actions."""
        return self.success_action is not None and self.success_action <= checkpoint

    # -- (de)serialisation ---------------------------------------------
    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "EpisodeRecord":
        """Build from a plain dict; unknown keys are ignored, ``success``
        defaults to ``score == 100``."""
        score = float(d["score"])
        sa = d.get("success_action")
        return cls(
            episode_id=str(d["episode_id"]),
            biome=str(d["biome"]),
            world=str(d["world"]),
            condition=str(d["condition"]),
            task=str(d["task"]),
            configuration=str(d["configuration"]),
            model=str(d["model"]),
            budget=int(d["budget"]),
            disclosure=str(d.get("disclosure", HIDDEN)),
            repetition=int(d.get("repetition", 0)),
            score=score,
            success=bool(d["success"]) if "success" in d else score == 100.0,
            actions=int(d.get("actions", 0)),
            cost_usd=float(d.get("cost_usd", 0.0)),
            success_action=None if sa is None else int(sa),
            score_at=dict(d.get("score_at") or {}),
            encounters=tuple(
                e if isinstance(e, Encounter) else Encounter.from_dict(e) for e in d.get("encounters") or ()
            ),
            milestones_met=None if d.get("milestones_met") is None else int(d["milestones_met"]),
            milestones_total=None if d.get("milestones_total") is None else int(d["milestones_total"]),
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["score_at"] = dict(self.score_at)
        d["encounters"] = [e.to_dict() for e in self.encounters]
        return d


def select(records: Iterable[EpisodeRecord], **criteria: Any) -> list[EpisodeRecord]:
    """Filter records by field: ``select(rs, model="gemini", condition={"m01", "m04"})``.

    A criterion value that is a set/list/tuple/frozenset matches membership;
    a callable is used as a predicate; anything else matches by equality.
    """

    def ok(r: EpisodeRecord) -> bool:
        for name, want in criteria.items():
            have = getattr(r, name)
            if callable(want):
                if not want(have):
                    return False
            elif isinstance(want, (set, frozenset, list, tuple)):
                if have not in want:
                    return False
            elif have != want:
                return False
        return True

    return [r for r in records if ok(r)]


# ---------------------------------------------------------------------- signatures and encounters


def semantic_signature(skill: str, args: Mapping[str, Any] | None = None) -> str:
    """Semantic signature of an action (Section 3.6).

    workstation and grid for ``craft_grid``, input and device for ``smelt``,
    block type for ``mine``, mob type for ``attack``, item and use for
    ``place``, item and option for ``enchant``, the skill name otherwise;
    quantities, fuel, coordinates and entity identity are ignored.
    """
    a = dict(args or {})

    def g(*names: str) -> str:
        for n in names:
            if a.get(n) is not None:
                return str(a[n])
        return ""

    if skill == "craft_grid":
        grid = json.dumps(a.get("grid"), separators=(",", ":"), sort_keys=True)
        return f"craft_grid|{g('station', 'workstation') or 'inventory'}|{grid}"
    if skill == "smelt":
        return f"smelt|{g('input', 'item')}|{g('station', 'device')}"
    if skill == "mine":
        return f"mine|{g('block', 'target')}"
    if skill == "attack":
        return f"attack|{g('target', 'mob', 'entity')}"
    if skill == "place":
        return f"place|{g('block', 'item')}|{g('use', 'purpose')}"
    if skill == "enchant":
        return f"enchant|{g('item')}|{g('option')}"
    return str(skill)


def build_encounters(
    signatures: Sequence[str],
    scores_after: Sequence[float],
    triggers: Iterable[tuple[int, str]],
    *,
    score_start: float = 0.0,
) -> tuple[Encounter, ...]:
    """Derive the encounters of one episode from its trajectory.

    ``signatures[i]`` and ``scores_after[i]`` describe budgeted action ``i+1``
    (its signature and the Score after it).  ``triggers`` lists ``(action_index,
    rule)`` for every action the server-side evaluator flagged as triggering a
    modified outcome; the first trigger of each rule defines its encounter.
    ``score_start`` is the Score before the first action.
    """
    if len(signatures) != len(scores_after):
        raise ValueError("signatures and scores_after must have equal length")
    n = len(signatures)
    first: dict[str, int] = {}
    for idx, rule in sorted(triggers, key=lambda t: t[0]):
        if not 1 <= idx <= n:
            raise ValueError(f"trigger action_index {idx} outside 1..{n}")
        first.setdefault(rule, idx)
    out = []
    for rule, idx in sorted(first.items(), key=lambda kv: kv[1]):
        before = score_start if idx == 1 else scores_after[idx - 2]
        rec = next((j for j in range(idx, n + 1) if scores_after[j - 1] > before), None)
        out.append(
            Encounter(
                rule=rule,
                action_index=idx,
                signature=signatures[idx - 1],
                next_signature=signatures[idx] if idx < n else None,
                score_before=float(before),
                recovery_index=rec,
            )
        )
    return tuple(out)
