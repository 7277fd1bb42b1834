"""The ``kind: mirror`` spec model: a rule manifest, the changes one Mirror suite makes to
vanilla 1.19 rules (paper §3.3)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from mcbuild.compiler.spec.base import Count, SpecId, Strict
from mcbuild.compiler.spec.envelope import Envelope

Station = Literal["furnace", "blast_furnace", "smoker"]
Operator = Literal["craft_output", "cook_output", "block_drops_replace", "block_drops_add", "entity_loot_add"]


class Output(Strict):
    """One produced stack. ``item`` may be omitted for craft_output (keep the recipe's item) and
    may name a relative output such as ``matching:planks`` defined in catalogs/operators.yaml."""

    item: str | None = None
    count: Count = 1


class Change(Strict):
    id: SpecId
    operator: Operator
    target: str | list[str] = Field(description="recipe/item/block/entity id(s) or group:<name>")
    stations: list[Station] | None = Field(default=None, description="cook_output only")
    outputs: list[Output] = Field(min_length=1, max_length=4)

    def targets(self) -> list[str]:
        return [self.target] if isinstance(self.target, str) else list(self.target)


class MirrorSpec(Envelope):
    """A rule manifest: the changes one Mirror suite makes to vanilla 1.19 rules."""

    kind: Literal["mirror"]
    title: str = Field(min_length=1, max_length=80)
    changes: list[Change] = Field(min_length=1, max_length=12)
