"""The hidden evaluator: which actions trigger a changed rule (paper §3.6).

It compares the episode's rules with those of the world's Vanilla twin (the same save with only
the biome pack), so a changed rule is exactly what the Mirror pack changed
(``Rulebook.changed_keys``). For every transition an action exercised (reported by the backend)
it asks whether the outcome under the episode's rules differs from the outcome under the twin's:
the crafted item and count, the cooked result as it lands in the inventory (pack functions
included), or the expected drops of a loot table for the tool used. A differing transition
*triggers* the rule that produced it (``recipe:<id>`` or ``loot_table:<id>``); the first trigger
of each rule in an episode is its encounter. Only the episode and its trace hold an evaluator;
agents never see it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcbuild.compiler.core.memo import LRU
from mcbuild.compiler.rules.cooking import cooked_outputs
from mcbuild.compiler.rules.loot import LootContext, expected
from mcbuild.compiler.rules.rulebook import MEMO_SIZE
from mcbuild.runtime.contract.backend import Transition

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook


@dataclass(frozen=True)
class Trigger:
    action: int          # 1-based index of the budgeted action
    rule: str
    signature: str
    first: bool          # the rule's encounter

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.action, "rule": self.rule, "signature": self.signature, "first": self.first}


class Evaluator:
    def __init__(self, rules: "Rulebook", twin: "Rulebook"):
        self.rules, self.twin = rules, twin
        self.changed = frozenset(f"{kind}:{rid}" for kind, rid in rules.changed_keys(twin))
        self.triggers: list[Trigger] = []
        self.first: dict[str, int] = {}
        self._memo: LRU[str | None] = rules.memo("evaluator").get_or_make(twin, lambda: LRU(MEMO_SIZE))

    def reset(self) -> None:
        self.triggers.clear()
        self.first.clear()

    def observe(self, action: int, signature: str, transitions: list[Transition]) -> list[Trigger]:
        """Record the rules the transitions of action ``action`` triggered (none when no resource
        differs from the twin's, as in a Vanilla episode)."""
        if not self.changed:
            return []
        out = []
        for rule in sorted({r for r in (self.rule_of(t) for t in transitions) if r}):
            trigger = Trigger(action, rule, signature, rule not in self.first)
            self.first.setdefault(rule, action)
            out.append(trigger)
        self.triggers.extend(out)
        return out

    def rule_of(self, t: Transition) -> str | None:
        """The changed rule ``t`` ran into, or None when the twin's rules give the same outcome."""
        judge = {"craft": self._craft, "cook": self._cook, "mine": self._loot, "attack": self._loot}[t.kind]
        return self._memo.get_or_make(t, lambda: judge(t))

    def _craft(self, t: Transition) -> str | None:
        grid = json.loads(t.target)
        mine, base = self.rules.craft(grid), self.twin.craft(grid)
        changed = mine or base
        if changed is None or (mine and (mine.item, mine.count)) == (base and (base.item, base.count)):
            return None
        return f"recipe:{changed.recipe}"

    def _cook(self, t: Transition) -> str | None:
        station = t.station
        assert station is not None                  # a cook transition names its station
        mine, base = self.rules.cooking_recipe(t.target, station), self.twin.cooking_recipe(t.target, station)
        changed = mine or base
        if changed is None or _cooked(self.rules, mine) == _cooked(self.twin, base):
            return None
        return f"recipe:{changed[0]}"

    def _loot(self, t: Transition) -> str | None:
        lookup = "block_loot" if t.kind == "mine" else "entity_loot"
        mine, base = getattr(self.rules, lookup)(t.target), getattr(self.twin, lookup)(t.target)
        if mine == base:
            return None
        ctx = LootContext(tool=t.tool, killed_by_player=True)
        if _drops(self.rules, mine, ctx) == _drops(self.twin, base, ctx):
            return None
        space, _, name = t.target.partition(":")
        return f"loot_table:{space}:{'blocks' if t.kind == 'mine' else 'entities'}/{name}"


def _cooked(rb: "Rulebook", found: tuple[str, dict] | None) -> dict[str, float] | None:
    return None if found is None else cooked_outputs(rb, found[1]["result"])


def _drops(rb: "Rulebook", table: dict | None, ctx: LootContext) -> dict[str, tuple[int, int, float]]:
    if table is None:
        return {}
    return {item: (d.min, d.max, round(d.mean, 9)) for item, d in expected(rb, table, ctx).items()}
