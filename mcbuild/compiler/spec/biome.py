"""The ``kind: biome`` spec model: one controlled biome factorized into terrain, resources,
access, ecology and runtime controls (paper F.2).

Every numeric bound and every allowed id comes from ``catalogs/worldgen.yaml``; a value outside
them fails validation with the offending field's path, which ``mcbuild.compiler.spec.base.parse_spec`` turns
into a ``SpecError``. Checks that relate several fields (an ore band above the terrain, a task
resource the world lacks) are the pre-compile audit's job (``audits/worldgen_spec.py``).
"""
from __future__ import annotations

from typing import Annotated, Any, Callable, Literal

from pydantic import AfterValidator, Field, model_validator

from mcbuild.compiler.core.canonical import dump_bytes
from mcbuild.compiler.spec.base import Strict
from mcbuild.compiler.spec.envelope import Envelope
from mcbuild.compiler.spec.worldgen_catalog import bounds, catalog, lookup


def _int(path: str) -> Any:
    low, high = bounds(path)
    return Annotated[int, Field(ge=low, le=high)]


def _float(path: str) -> Any:
    low, high = bounds(path)
    return Annotated[float, Field(ge=low, le=high)]


def _member(path: str, what: str) -> Callable[[str], str]:
    """Validator: the value must be listed (as a key or an item) at ``path`` in the catalog."""

    def check(value: str) -> str:
        allowed = lookup(path)
        if value not in allowed:
            raise ValueError(f"unknown {what} {value!r} (allowed: {', '.join(sorted(allowed))})")
        return value

    return check


def _one_of(path: str, what: str) -> Any:
    allowed = sorted(lookup(path))
    return Annotated[str, AfterValidator(_member(path, what)), Field(json_schema_extra={"enum": allowed})]


# ----------------------------------------------------------------------------- terrain
class Relief(Strict):
    """Height-field noise: surface = base_height ± amplitude, features about `wavelength` wide."""

    amplitude: _int("terrain_bounds.relief_amplitude")
    wavelength: _int("terrain_bounds.relief_wavelength")
    octaves: _int("terrain_bounds.relief_octaves")


class Surface(Strict):
    top: _one_of("surface_blocks.top", "top block")
    filler: _one_of("surface_blocks.filler", "filler block")
    depth: _int("terrain_bounds.surface_depth")


class Terrain(Strict):
    sea_level: _int("terrain_bounds.sea_level")
    base_height: _int("terrain_bounds.base_height")
    clearing_radius: _int("terrain_bounds.clearing_radius") = Field(
        description="flat, tree-free disc around spawn at base_height (spawn and creatures stand here)")
    relief: Relief
    surface: Surface


# ----------------------------------------------------------------------------- resources
class OreBand(Strict):
    min_y: _int("ore_band.y")
    max_y: _int("ore_band.y")
    distribution: Literal["uniform", "trapezoid"] = "uniform"
    vein_size: _int("ore_band.vein_size")
    attempts_per_chunk: _int("ore_band.attempts_per_chunk")
    discard_on_air_exposure: _float("ore_band.discard_on_air_exposure") = 0.0

    @model_validator(mode="after")
    def _ordered(self) -> "OreBand":
        if self.min_y > self.max_y:
            raise ValueError(f"min_y {self.min_y} is above max_y {self.max_y}")
        return self


class OreEntry(Strict):
    ore: _one_of("ores", "ore")
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
    ore: _one_of("ores", "ore")
    count: _int("access_bounds.exposed_per_ore")


class Quarry(Strict):
    """A terraced pit near spawn; its faces expose plain ores, its floor holds obsidian."""

    offset_x: int
    offset_z: int
    width: _int("access_bounds.quarry_width")
    depth: _int("access_bounds.quarry_depth")
    exposed: list[Exposure] = Field(default_factory=list)
    obsidian_size: _int("access_bounds.obsidian_size")

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
    kind: _one_of("trees", "tree kind")
    weight: _int("tree_bounds.weight")


class Trees(Strict):
    per_chunk: _float("tree_bounds.per_chunk")
    kinds: list[TreeKind] = Field(min_length=lookup("tree_bounds.kinds")[0], max_length=lookup("tree_bounds.kinds")[1])


class Vegetation(Strict):
    kind: _one_of("vegetation", "vegetation")
    per_chunk: _float("vegetation_bounds.per_chunk")


class Patch(Strict):
    block: _one_of("surface_blocks.patch", "patch block")
    per_chunk: _float("patch_bounds.per_chunk")
    radius: _int("patch_bounds.radius")


class SugarCane(Strict):
    density: _float("water_bounds.sugar_cane_density")
    min_count: _int("water_bounds.sugar_cane_min")
    max_height: _int("water_bounds.sugar_cane_height")


class Water(Strict):
    ponds: _int("water_bounds.ponds")
    radius: _int("water_bounds.radius")
    depth: _int("water_bounds.depth")
    nearest_distance: _int("water_bounds.nearest_distance")
    shore: _one_of("surface_blocks.shore", "shore block")
    floor: _one_of("surface_blocks.pond_floor", "pond floor block")
    lakes_rarity: _int("water_bounds.lakes_rarity") = Field(
        0, description="beyond the playable area: one water lake per this many chunks (0 = none)")
    sugar_cane: SugarCane


class Creature(Strict):
    entity: _one_of("creatures", "creature")
    count: _int("creature_bounds.count")
    spawn_weight: _int("creature_bounds.spawn_weight")
    group: _int("creature_bounds.group")


class Ecology(Strict):
    policy: _one_of("feature_policies", "feature policy")
    trees: Trees
    vegetation: list[Vegetation] = Field(default_factory=list, max_length=lookup("vegetation_bounds.kinds")[1])
    patches: list[Patch] = Field(default_factory=list)
    decorations: list[_one_of("decorations", "decoration")] = Field(default_factory=list)
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
    effect: _one_of("runtime_bounds.effects", "effect")
    amplifier: _int("runtime_bounds.effect_amplifier")


class Runtime(Strict):
    difficulty: _one_of("runtime_bounds.difficulty", "difficulty")
    initial_time: _int("runtime_bounds.initial_time")
    day_cycle: bool
    weather_cycle: bool
    weather: _one_of("runtime_bounds.weather", "weather")
    mob_spawning: bool = False
    effects: list[Effect] = Field(default_factory=list)
    experience_levels: _int("runtime_bounds.experience_levels")


# ----------------------------------------------------------------------------- the spec
class BiomeSpec(Envelope):
    """A controlled biome: the world-gen datapack and the playable area are built from it."""

    kind: Literal["biome"]
    title: str = Field(min_length=1, max_length=80)
    base_biome: _one_of("base_biomes", "base biome")
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
