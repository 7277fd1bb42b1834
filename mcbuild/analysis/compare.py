"""``mcbuild study compare A B``: two studies (or their results cards) on the episodes they share.

Each side is a results card (``card.json``), or a study folder whose card is made on the spot
against a build folder. Episodes are paired by world, condition, task and repetition, within one
*arm* of each side (a configuration and model): the only arm of each, the arms both sides have, or
the arms named with ``--a-arm`` / ``--b-arm``. Per condition, pooled over the Mirror suites and over
everything, the comparison gives both sides' Score and SR, the paired difference B - A of the
Scores with its 95% t interval and paired t-test, and McNemar's exact test of paired success.

Two studies are compared only when they ran on the same worlds and packs: the hashes of the saves
and packs the paired episodes used must agree (cards made against their own builds), or else the
two stores' build fingerprints. Otherwise the comparison is refused, naming what differs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from mcbuild.compiler.worlds.layout import VANILLA
from mcbuild.analysis.card import build_card, read_card
from mcbuild.runtime.study.metrics import stats

__all__ = ["Incomparable", "Side", "Row", "ArmComparison", "Comparison", "load_side", "compare", "check_same_build"]

PAIR_KEY = ("world", "condition", "task", "repetition")


class Incomparable(ValueError):
    """Two studies that cannot be paired (other worlds or packs, no common arm or episode)."""


@dataclass(frozen=True)
class Side:
    """One side of a comparison: where it came from and its card."""

    label: str
    card: dict[str, Any]

    @property
    def episodes(self) -> list[dict[str, Any]]:
        cols = self.card["episodes"]["columns"]
        return [dict(zip(cols, row)) for row in self.card["episodes"]["rows"]]

    def arms(self) -> list[tuple[str, str]]:
        """(configuration, model) of every arm with episodes, in card order."""
        return list(dict.fromkeys((e["configuration"], e["model"]) for e in self.episodes))


def load_side(path: str | Path, build: str | Path | None = None) -> Side:
    """A card file, or the card of the study at ``path`` made against ``build``."""
    path = Path(path)
    card = read_card(path) if path.suffix == ".json" and path.is_file() else build_card(path, build)
    return Side(str(path), card)


@dataclass(frozen=True)
class Row:
    """One line of a comparison: ``n`` paired episodes of a condition (or a pool)."""

    label: str
    n: int
    score_a: float
    score_b: float
    score: stats.PairedDifference | None        # B - A; None with fewer than 2 pairs
    sr_a: float
    sr_b: float
    success: stats.McNemar                       # b: A only, c: B only

    def to_json(self) -> dict[str, Any]:
        s = self.score
        return {"label": self.label, "n": self.n, "score_a": self.score_a, "score_b": self.score_b,
                "score_diff": None if s is None else {"mean": s.mean, "ci": [s.lower, s.upper], "t": s.t, "df": s.df,
                                                      "p": s.p_value},
                "sr_a": self.sr_a, "sr_b": self.sr_b,
                "mcnemar": {"a_only": self.success.b, "b_only": self.success.c, "p": self.success.p_value}}


@dataclass(frozen=True)
class ArmComparison:
    arm_a: tuple[str, str]
    arm_b: tuple[str, str]
    rows: list[Row]
    only_a: int
    only_b: int


@dataclass(frozen=True)
class Comparison:
    a: Side
    b: Side
    build: str
    arms: list[ArmComparison] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"A: {self.a.label} ({_version(self.a)}; {len(self.a.episodes)} episodes)",
               f"B: {self.b.label} ({_version(self.b)}; {len(self.b.episodes)} episodes)",
               f"build: {self.build}"]
        for arm in self.arms:
            out += ["", f"A {_arm(arm.arm_a)} vs B {_arm(arm.arm_b)}: {arm.rows[-1].n if arm.rows else 0} episode "
                        f"pairs by {', '.join(PAIR_KEY)} ({arm.only_a} only in A, {arm.only_b} only in B)",
                    "| condition | n | Score A | Score B | ΔScore B−A [95% CI] | p (paired t) | SR A | SR B "
                    "| A only / B only | p (McNemar) |",
                    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
            out += [_line(r) for r in arm.rows]
        out += ["", "ΔScore: mean of the paired differences (B − A) with its t interval; McNemar: exact test on the "
                    "pairs where only one side succeeded."]
        return out

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a.label, "b": self.b.label, "build": self.build,
                "arms": [{"a": list(x.arm_a), "b": list(x.arm_b), "only_a": x.only_a, "only_b": x.only_b,
                          "rows": [r.to_json() for r in x.rows]} for x in self.arms]}


def _version(side: Side) -> str:
    return f"mcbuild {side.card['toolkit']['version']}, study {side.card['study']['name']}"


def _arm(arm: tuple[str, str]) -> str:
    return f"{arm[0]}@{arm[1]}"


def _p(p: float | None) -> str:
    return "–" if p is None else "<0.001" if p < 0.001 else f"{p:.3f}"


def _line(r: Row) -> str:
    s = r.score
    diff = "–" if s is None else f"{s.mean:+.1f} [{s.lower:+.1f}, {s.upper:+.1f}]"
    return (f"| {r.label} | {r.n} | {r.score_a:.1f} | {r.score_b:.1f} | {diff} | {_p(None if s is None else s.p_value)} "
            f"| {r.sr_a:.1f} | {r.sr_b:.1f} | {r.success.b} / {r.success.c} | {_p(r.success.p_value)} |")


# ---------------------------------------------------------------------------- same worlds and packs
def _used(pairs: Iterable[tuple[dict, dict]]) -> tuple[set[str], set[str]]:
    """The saves (``world/condition``) and the packs (suites) the paired episodes ran on."""
    saves, packs = set(), set()
    for a, _ in pairs:
        saves.add(f"{a['world']}/{a['condition']}")
        if a["condition"] != VANILLA:
            packs.add(a["condition"])
            saves.add(f"{a['world']}/{VANILLA}")                # the evaluator's twin
    return saves, packs


def check_same_build(a: Side, b: Side, pairs: Sequence[tuple[dict, dict]]) -> str:
    """How it is known that the paired episodes ran on the same worlds and packs; raises
    :class:`Incomparable` naming what differs (or what cannot be checked)."""
    ba, bb = a.card["build"], b.card["build"]
    saves, packs = _used(pairs)
    if ba.get("verified") and bb.get("verified"):
        differ = [f"pack {p} (A {_short(ba['packs'].get(p))}, B {_short(bb['packs'].get(p))})" for p in sorted(packs)
                  if ba["packs"].get(p) != bb["packs"].get(p)]
        differ += [f"save {s} (A {_short(ba['saves'].get(s))}, B {_short(bb['saves'].get(s))})" for s in sorted(saves)
                   if ba["saves"].get(s) != bb["saves"].get(s)]
        if differ:
            raise Incomparable("A and B ran on different worlds or packs: " + "; ".join(differ[:12])
                               + (f"; and {len(differ) - 12} more" if len(differ) > 12 else ""))
        return f"the {len(saves)} saves and {len(packs)} packs the paired episodes used have the same hashes"
    if ba["fingerprint"] == bb["fingerprint"]:
        return f"the same build fingerprint ({ba['fingerprint'][:20]}…)"
    unverified = [name for name, x in (("A", ba), ("B", bb)) if not x.get("verified")]
    raise Incomparable(f"A and B ran on different builds (fingerprints {ba['fingerprint'][:20]}…, "
                       f"{bb['fingerprint'][:20]}…) and the packs and saves of {' and '.join(unverified)} cannot be "
                       "checked here: compare their cards (report/card.json, made against their own builds) or pass "
                       "--build with the build each ran on")


def _short(digest: str | None) -> str:
    return "absent" if digest is None else digest[:12] + "…"


# ---------------------------------------------------------------------------- pairing
def _pick_arms(a: Side, b: Side, arm_a: str | None, arm_b: str | None) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    def chosen(side: Side, spec: str | None, name: str) -> list[tuple[str, str]]:
        arms = side.arms()
        if spec is None:
            return arms
        config, _, model = spec.partition("@")
        found = [x for x in arms if x[0] == config and (not model or x[1] == model)]
        if not found:
            raise Incomparable(f"--{name}-arm {spec}: no such arm in {side.label} (arms: "
                               f"{', '.join(map(_arm, arms)) or 'none'})")
        return found

    xs, ys = chosen(a, arm_a, "a"), chosen(b, arm_b, "b")
    if len(xs) == 1 and len(ys) == 1:
        return [(xs[0], ys[0])]
    common = [x for x in xs if x in ys]
    if not common:
        raise Incomparable(f"A and B share no arm (A: {', '.join(map(_arm, xs))}; B: {', '.join(map(_arm, ys))}); "
                           "name one of each with --a-arm CONFIGURATION[@MODEL] and --b-arm")
    return [(x, x) for x in common]


def _rows(pairs: list[tuple[dict, dict]], conditions: Sequence[str]) -> list[Row]:
    groups: list[tuple[str, list[tuple[dict, dict]]]] = [
        (c.upper() if c != VANILLA else "Vanilla", [p for p in pairs if p[0]["condition"] == c]) for c in conditions]
    groups += [("Mirror (pooled)", [p for p in pairs if p[0]["condition"] != VANILLA]), ("All", pairs)]
    out = []
    for label, ps in groups:
        if not ps:
            continue
        a = [float(x["score"]) for x, _ in ps]
        b = [float(y["score"]) for _, y in ps]
        a_only = sum(1 for x, y in ps if x["success"] and not y["success"])
        b_only = sum(1 for x, y in ps if y["success"] and not x["success"])
        out.append(Row(label, len(ps), sum(a) / len(a), sum(b) / len(b),
                       stats.paired_difference(b, a) if len(ps) >= 2 else None,
                       100.0 * sum(1 for x, _ in ps if x["success"]) / len(ps),
                       100.0 * sum(1 for _, y in ps if y["success"]) / len(ps), stats.mcnemar(a_only, b_only)))
    return out


def compare(a: Side, b: Side, *, arm_a: str | None = None, arm_b: str | None = None) -> Comparison:
    """Pair the episodes of ``a`` and ``b`` and test them (raises :class:`Incomparable`)."""
    arms = []
    everything: list[tuple[dict, dict]] = []
    for xa, xb in _pick_arms(a, b, arm_a, arm_b):
        mine = {tuple(e[k] for k in PAIR_KEY): e for e in a.episodes if (e["configuration"], e["model"]) == xa}
        theirs = {tuple(e[k] for k in PAIR_KEY): e for e in b.episodes if (e["configuration"], e["model"]) == xb}
        keys = sorted(mine.keys() & theirs.keys())
        pairs = [(mine[k], theirs[k]) for k in keys]
        budgets = sorted({(p[0]["task"], p[0]["budget"], p[1]["budget"]) for p in pairs if p[0]["budget"] != p[1]["budget"]})
        if budgets:
            raise Incomparable("A and B gave their tasks different budgets: "
                               + ", ".join(f"{t} {x} vs {y}" for t, x, y in budgets))
        conditions = list(dict.fromkeys([*a.card["study"]["conditions"], *b.card["study"]["conditions"]]))
        arms.append(ArmComparison(xa, xb, _rows(pairs, conditions), len(mine) - len(keys), len(theirs) - len(keys)))
        everything += pairs
    if not everything:
        raise Incomparable(f"A and B have no episode in common (paired by {', '.join(PAIR_KEY)})")
    return Comparison(a, b, check_same_build(a, b, everything), arms)

