"""The ``kind: biome`` spec model: one controlled biome factorized into terrain, resources,
access, ecology and runtime controls (paper F.2).

Every numeric bound and every allowed id comes from ``catalogs/worldgen.yaml``; a value outside
them fails validation with the offending field's path, which ``mcbuild.compiler.spec.base.parse_spec`` turns
into a ``SpecError``. Checks that relate several fields (an ore band above the terrain, a task
resource the world lacks) are the pre-compile audit's job (``audits/worldgen_spec.py``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal

import annotated_types
from pydantic import Field, GetCoreSchemaHandler, GetJsonSchemaHandler, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from mcbuild.compiler.core.canonical import dump_bytes
from mcbuild.compiler.spec.base import Strict
from mcbuild.compiler.spec.envelope import Envelope
from mcbuild.compiler.spec.worldgen_catalog import bounds, catalog, lookup


def within(path: str) -> annotated_types.Interval:
    """Annotated metadata: a number within the catalog's bounds at ``path`` (its JSON Schema's minimum and maximum)."""
    low, high = bounds(path)
    return annotated_types.Interval(ge=low, le=high)


def _member(path: str, what: str) -> Callable[[str], str]:
    """Validator: the value must be listed (as a key or an item) at ``path`` in the catalog."""

    def check(value: str) -> str:
        allowed = lookup(path)
        if value not in allowed:
            raise ValueError(f"unknown {what} {value!r} (allowed: {', '.join(sorted(allowed))})")
        return value

    return check


@dataclass(frozen=True)
class Listed:
    """Annotated metadata: a string listed at ``path`` in the catalog (a ``what`` the error names); its
    JSON Schema is an enum of the listed values."""

    path: str
    what: str

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(_member(self.path, self.what), handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {**handler(schema), "enum": sorted(lookup(self.path))}


# ----------------------------------------------------------------------------- terrain
class Relief(Strict):
    """Height-field noise: surface = base_height ± amplitude, features about `wavelength` wide."""

    amplitude: Annotated[int, within("terrain_bounds.relief_amplitude")]
    wavelength: Annotated[int, within("terrain_bounds.relief_wavelength")]
    octaves: Annotated[int, within("terrain_bounds.relief_octaves")]


class Surface(Strict):
    top: Annotated[str, Listed("surface_blocks.top", "top block")]
    filler: Annotated[str, Listed("surface_blocks.filler", "filler block")]
    depth: Annotated[int, within("terrain_bounds.surface_depth")]


class Terrain(Strict):
    sea_level: Annotated[int, within("terrain_bounds.sea_level")]
    base_height: Annotated[int, within("terrain_bounds.base_height")]
    clearing_radius: Annotated[int, within("terrain_bounds.clearing_radius")] = Field(
        description="flat, tree-free disc around spawn at base_height (spawn and creatures stand here)")
    relief: Relief
    surface: Surface


# ----------------------------------------------------------------------------- resources
class OreBand(Strict):
    min_y: Annotated[int, within("ore_band.y")]
    max_y: Annotated[int, within("ore_band.y")]
    distribution: Literal["uniform", "trapezoid"] = "uniform"
    vein_size: Annotated[int, within("ore_band.vein_size")]
    attempts_per_chunk: Annotated[int, within("ore_band.attempts_per_chunk")]
    discard_on_air_exposure: Annotated[float, within("ore_band.discard_on_air_exposure")] = 0.0

    @model_validator(mode="after")
    def _ordered(self) -> "OreBand":
        if self.min_y > self.max_y:
            raise ValueError(f"min_y {self.min_y} is above max_y {self.max_y}")
        return self


class OreEntry(Strict):
    ore: Annotated[str, Listed("ores", "ore")]
    bands: list[OreBand] = Field(min_length=1, max_length=lookup("ore_band.max_bands_per_ore"))


class Resources(Strict):
    ores: list[OreEntry] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> "Resources":
        names = [o.ore for o in self.ores]
        if len(set(names)) != len(names):
            raise ValueError("each ore may be listed once (give it several bands instead)")
        return self


# ----------------------------------------------------------------------------- access
class Exposure(Strict):
    ore: Annotated[str, Listed("ores", "ore")]
    count: Annotated[int, within("access_bounds.exposed_per_ore")]


class Quarry(Strict):
    """A terraced pit near spawn; its faces expose plain ores, its floor holds obsidian."""

    offset_x: int
    offset_z: int
    width: Annotated[int, within("access_bounds.quarry_width")]
    depth: Annotated[int, within("access_bounds.quarry_depth")]
    exposed: list[Exposure] = Field(default_factory=list)
    obsidian_size: Annotated[int, within("access_bounds.obsidian_size")]

    @model_validator(mode="after")
    def _near_spawn(self) -> "Quarry":
        reach = lookup("access_bounds.max_distance")
        if max(abs(self.offset_x), abs(self.offset_z)) > reach:
            raise ValueError(f"quarry offset ({self.offset_x}, {self.offset_z}) is more than {reach} blocks from spawn")
        return self


class Access(Strict):
    quarry: Quarry


# ----------------------------------------------------------------------------- ecology
class TreeKind(Strict):
    kind: Annotated[str, Listed("trees", "tree kind")]
    weight: Annotated[int, within("tree_bounds.weight")]


class Trees(Strict):
    per_chunk: Annotated[float, within("tree_bounds.per_chunk")]
    kinds: list[TreeKind] = Field(min_length=lookup("tree_bounds.kinds")[0], max_length=lookup("tree_bounds.kinds")[1])


class Vegetation(Strict):
    kind: Annotated[str, Listed("vegetation", "vegetation")]
    per_chunk: Annotated[float, within("vegetation_bounds.per_chunk")]


class Patch(Strict):
    block: Annotated[str, Listed("surface_blocks.patch", "patch block")]
    per_chunk: Annotated[float, within("patch_bounds.per_chunk")]
    radius: Annotated[int, within("patch_bounds.radius")]


class SugarCane(Strict):
    density: Annotated[float, within("water_bounds.sugar_cane_density")]
    min_count: Annotated[int, within("water_bounds.sugar_cane_min")]
    max_height: Annotated[int, within("water_bounds.sugar_cane_height")]


class Water(Strict):
    ponds: Annotated[int, within("water_bounds.ponds")]
    radius: Annotated[int, within("water_bounds.radius")]
    depth: Annotated[int, within("water_bounds.depth")]
    nearest_distance: Annotated[int, within("water_bounds.nearest_distance")]
    shore: Annotated[str, Listed("surface_blocks.shore", "shore block")]
    floor: Annotated[str, Listed("surface_blocks.pond_floor", "pond floor block")]
    lakes_rarity: Annotated[int, within("water_bounds.lakes_rarity")] = Field(
        0, description="beyond the playable area: one water lake per this many chunks (0 = none)")
    sugar_cane: SugarCane


class Creature(Strict):
    entity: Annotated[str, Listed("creatures", "creature")]
    count: Annotated[int, within("creature_bounds.count")]
    spawn_weight: Annotated[int, within("creature_bounds.spawn_weight")]
    group: Annotated[int, within("creature_bounds.group")]


class Ecology(Strict):
    policy: Annotated[str, Listed("feature_policies", "feature policy")]
    trees: Trees
    vegetation: list[Vegetation] = Field(default_factory=list, max_length=lookup("vegetation_bounds.kinds")[1])
    patches: list[Patch] = Field(default_factory=list)
    decorations: list[Annotated[str, Listed("decorations", "decoration")]] = Field(default_factory=list)
    water: Water
    creatures: list[Creature] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> "Ecology":
        for name, keys in (("trees.kinds", [t.kind for t in self.trees.kinds]),
                           ("vegetation", [v.kind for v in self.vegetation]),
                           ("creatures", [c.entity for c in self.creatures])):
            if len(set(keys)) != len(keys):
                raise ValueError(f"{name}: each entry may be listed once")
        return self


# ----------------------------------------------------------------------------- runtime
class Effect(Strict):
    effect: Annotated[str, Listed("runtime_bounds.effects", "effect")]
    amplifier: Annotated[int, within("runtime_bounds.effect_amplifier")]


class Runtime(Strict):
    difficulty: Annotated[str, Listed("runtime_bounds.difficulty", "difficulty")]
    initial_time: Annotated[int, within("runtime_bounds.initial_time")]
    day_cycle: bool
    weather_cycle: bool
    weather: Annotated[str, Listed("runtime_bounds.weather", "weather")]
    mob_spawning: bool = False
    effects: list[Effect] = Field(default_factory=list)
    experience_levels: Annotated[int, within("runtime_bounds.experience_levels")]


# ----------------------------------------------------------------------------- the spec
class BiomeSpec(Envelope):
    """A controlled biome: the world-gen datapack and the playable area are built from it."""

    kind: Literal["biome"]
    title: str = Field(min_length=1, max_length=80)
    base_biome: Annotated[str, Listed("base_biomes", "base biome")]
    terrain: Terrain
    resources: Resources
    access: Access
    ecology: Ecology
    runtime: Runtime

    def normalized(self) -> bytes:
        """The canonical JSON of the spec (``spec.json``; its hash identifies the spec)."""
        return dump_bytes(self.model_dump(mode="json"))

    def ore(self, name: str) -> OreEntry | None:
        return next((o for o in self.resources.ores if o.ore == name), None)

    def log_blocks(self) -> list[str]:
        """The log blocks of this biome's trees, in spec order."""
        trees = catalog()["trees"]
        return [trees[t.kind]["log"] for t in self.ecology.trees.kinds]
