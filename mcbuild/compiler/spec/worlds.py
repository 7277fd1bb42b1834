"""The ``kind: worlds`` spec model: the benchmark's Vanilla worlds (id, biome, seed) and the
rule packs each is copied with (``specs/worlds.yaml``)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, model_validator

from mcbuild.compiler.core.paths import SPECS
from mcbuild.compiler.spec.base import SpecId, Strict, read_yaml, validate
from mcbuild.compiler.spec.envelope import Envelope

WORLDS_FILE = SPECS / "worlds.yaml"


class WorldEntry(Strict):
    id: Annotated[str, Field(pattern=r"^[a-z][a-z_]*-[0-9]+$")]
    biome: SpecId
    seed: int = Field(ge=-(2 ** 63), lt=2 ** 63)


class WorldsSpec(Envelope):
    """The benchmark's Vanilla worlds and the rule packs each is copied with."""

    kind: Literal["worlds"]
    mirrors: list[Annotated[str, Field(pattern=r"^m[0-9]{2}$")]] = Field(min_length=1)
    worlds: list[WorldEntry] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> "WorldsSpec":
        for what, values in (("world ids", [w.id for w in self.worlds]), ("seeds", [w.seed for w in self.worlds]),
                             ("mirrors", self.mirrors)):
            if len(set(values)) != len(values):
                raise ValueError(f"{what} must be unique")
        return self


def load_worlds(path: Path = WORLDS_FILE) -> WorldsSpec:
    return validate(WorldsSpec, read_yaml(path), str(path))
