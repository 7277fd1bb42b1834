"""Post-packaging audit of a biome pack (paper F.2): the zip a biome spec compiled to, re-read.
Returns ``Findings`` and a summary; the compiler stops on a hard failure and copies both into
``report.json``.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterator

from mcbuild.compiler.biome import files as wf
from mcbuild.compiler.biome.layout import (
    creature_positions,
)
from mcbuild.compiler.core.canonical import sha256
from mcbuild.compiler.core.findings import Findings
from mcbuild.compiler.rules import functions
from mcbuild.compiler.rules.commands import validate_function
from mcbuild.compiler.rules.pack import MINECRAFT_VERSION, PACK_FORMAT
from mcbuild.compiler.spec.biome import BiomeSpec
from mcbuild.compiler.spec.worldgen_catalog import catalog


ID_PATTERN = re.compile(r"^[a-z0-9_.-]+:[a-z0-9_./-]+$")
PATH_PATTERN = re.compile(r"^data/([a-z0-9_.-]+)/([a-z0-9_./-]+)$")
REQUIRED_KINDS = ("worldgen/world_preset", "worldgen/noise_settings", "worldgen/density_function",
                  "worldgen/noise", "worldgen/biome", "worldgen/configured_feature", "worldgen/placed_feature")
KIND_FOLDERS = {"functions": "function", "tags/functions": "function_tag"}
BIOME_PACK_KINDS = set(REQUIRED_KINDS) | {"function", "function_tag"}


def resource_key(path: str) -> tuple[str, str] | None:
    """(kind, id) of an archive path under ``data/``; kinds as in ``worldgen/placed_feature``."""
    m = PATH_PATTERN.match(path)
    if not m:
        return None
    ns, rest = m.groups()
    for folder, kind in KIND_FOLDERS.items():
        for ext in (".json", ".mcfunction"):
            if rest.startswith(folder + "/") and rest.endswith(ext):
                return kind, f"{ns}:{rest[len(folder) + 1:-len(ext)]}"
    parts = rest.rsplit(".", 1)[0].split("/")
    if parts[0] == "worldgen" and len(parts) >= 3:
        return f"worldgen/{parts[1]}", f"{ns}:{'/'.join(parts[2:])}"
    return (parts[0], f"{ns}:{'/'.join(parts[1:])}") if len(parts) >= 2 else None


def vanilla_references() -> dict[str, set[str]]:
    """Vanilla resources a biome pack may reference, by kind."""
    cat = catalog()
    return {
        "worldgen/placed_feature": {t["placed_feature"] for t in cat["trees"].values()}
        | {d["placed_feature"] for d in cat["decorations"].values()} | set(cat["vanilla_backbone"]),
        "worldgen/configured_feature": {v["configured_feature"] for v in cat["vegetation"].values()}
        | {cat["sugar_cane_feature"]},
        "worldgen/noise_settings": {"minecraft:nether", "minecraft:end"},
        "worldgen/density_function": set(),
        "worldgen/noise": set(),
        "function": set(),
    }


class _Pack:
    """Parsed contents of a pack: JSON documents, function lines, resources by (kind, id)."""

    def __init__(self, files: dict[str, bytes], f: Findings):
        self.files = files
        self.json: dict[str, Any] = {}
        self.resources: dict[tuple[str, str], Any] = {}
        for path in sorted(files):
            data = files[path]
            if path.endswith((".json", ".mcmeta")):
                try:
                    self.json[path] = json.loads(data.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                    f.hard("json_parse", path, "<file>", f"does not parse: {exc}")
                    continue
            key = resource_key(path)
            if key is not None:
                self.resources[key] = self.json.get(path, data.decode("utf-8", "replace"))

    def of_kind(self, kind: str) -> dict[str, Any]:
        return {rid: v for (k, rid), v in self.resources.items() if k == kind}

    def has(self, kind: str, rid: str) -> bool:
        return (kind, rid) in self.resources or rid in vanilla_references().get(kind, set())

    def path(self, kind: str, rid: str) -> str:
        ns, _, name = rid.partition(":")
        folder = {v: k for k, v in KIND_FOLDERS.items()}.get(kind, kind)
        ext = ".mcfunction" if kind == "function" else ".json"
        return f"data/{ns}/{folder}/{name}{ext}"


def post_package(files: dict[str, bytes], spec: BiomeSpec) -> tuple[Findings, dict[str, Any]]:
    """Audit the packaged files; returns findings and a summary of what was checked."""
    f = Findings()
    pack = _Pack(files, f)
    checks = [
        ("pack_format", _pack_format), ("artifact_metadata", _metadata), ("resource_types", _required_types),
        ("identifiers", _identifiers), ("references", _references), ("feature_stages", _feature_stages),
        ("ore_placements", _ore_placements), ("noise_settings", _noise_settings), ("functions", _functions),
    ]
    for _, check in checks:
        check(pack, spec, f)
    counts: dict[str, int] = {}
    for kind, _ in pack.resources:
        counts[kind] = counts.get(kind, 0) + 1
    return f, {"checks": ["json_parse"] + [name for name, _ in checks], "resource_counts": counts,
               "files": len(files)}


def _pack_format(pack: _Pack, spec: BiomeSpec, f: Findings) -> None:
    meta = pack.json.get("pack.mcmeta")
    if not isinstance(meta, dict) or meta.get("pack", {}).get("pack_format") != PACK_FORMAT:
        f.hard("pack_format", "pack.mcmeta", "pack.pack_format", f"must be {PACK_FORMAT} (Minecraft {MINECRAFT_VERSION})")


def _metadata(pack: _Pack, spec: BiomeSpec, f: Findings) -> None:
    meta = pack.json.get(wf.METADATA_FILE)
    expected = {"kind": "biome", "id": spec.id, "pack_format": PACK_FORMAT, "minecraft_version": MINECRAFT_VERSION,
                "spec_sha256": sha256(spec.normalized()), "base_biome": spec.base_biome}
    if not isinstance(meta, dict):
        f.hard("artifact_metadata", wf.METADATA_FILE, "<file>", "missing artifact metadata")
        return
    for key, value in expected.items():
        if meta.get(key) != value:
            f.hard("artifact_metadata", wf.METADATA_FILE, key, f"is {meta.get(key)!r}, expected {value!r}")


def _required_types(pack: _Pack, spec: BiomeSpec, f: Findings) -> None:
    for kind in REQUIRED_KINDS:
        if not pack.of_kind(kind):
            f.hard("missing_resource_type", f"data/*/{kind}/", "<folder>", f"the pack has no {kind} file")
    needed = [("worldgen/world_preset", f"mcbuild:{spec.id}"), ("worldgen/noise_settings", f"mcbuild:{spec.id}"),
              ("worldgen/biome", spec.base_biome), ("function", functions.LOAD), ("function", functions.SETUP),
              ("function", functions.SPAWN), ("function_tag", "minecraft:load")]
    for kind, rid in needed:
        if (kind, rid) not in pack.resources:
            f.hard("missing_resource_type", pack.path(kind, rid), "<file>", f"required {kind} {rid} is missing")
    preset = pack.resources.get(("worldgen/world_preset", f"mcbuild:{spec.id}"), {})
    if "minecraft:overworld" not in preset.get("dimensions", {}):
        f.hard("world_preset", pack.path("worldgen/world_preset", f"mcbuild:{spec.id}"), "dimensions",
               "must define minecraft:overworld")


def _identifiers(pack: _Pack, spec: BiomeSpec, f: Findings) -> None:
    allowed_overrides = {("worldgen/biome", spec.base_biome), ("function_tag", "minecraft:load")}
    for path in sorted(pack.files):
        if path in ("pack.mcmeta", wf.METADATA_FILE):
            continue
        key = resource_key(path)
        if key is None:
            f.hard("bad_identifier", path, "<path>", "not a recognised data file path (lowercase ids only)")
            continue
        ns = key[1].split(":")[0]
        if key[0] not in BIOME_PACK_KINDS:
            f.hard("unexpected_file", path, "<path>", f"a biome pack holds no {key[0]} files")
        elif ns not in ("mcbuild", "minecraft"):
            f.hard("bad_identifier", path, "<path>", f"unexpected namespace {ns!r}")
        elif ns == "minecraft" and key not in allowed_overrides:
            f.hard("unexpected_override", path, "<path>", f"the pack may not override vanilla {key[0]} {key[1]}")


def _walk(node: Any, at: str = "") -> Iterator[tuple[str, Any, Any]]:
    """Yield (json path, key, value) for every value in a JSON document."""
    if isinstance(node, dict):
        for k in sorted(node):
            yield f"{at}.{k}" if at else k, k, node[k]
            yield from _walk(node[k], f"{at}.{k}" if at else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield f"{at}[{i}]", i, v
            yield from _walk(v, f"{at}[{i}]")


def _density_refs(node: Any, at: str) -> Iterator[tuple[str, str, str]]:
    """(json path, kind, id) of the noises and density functions a density function uses."""
    if isinstance(node, str):
        yield at, "worldgen/density_function", node
    elif isinstance(node, dict):
        if node.get("type") in ("minecraft:noise", "minecraft:shifted_noise"):
            yield f"{at}.noise", "worldgen/noise", node.get("noise", "")
        for key in ("argument", "argument1", "argument2", "input"):
            if key in node:
                yield from _density_refs(node[key], f"{at}.{key}" if at else key)


def _references(pack: _Pack, spec: BiomeSpec, f: Findings) -> None:
    refs: list[tuple[str, str, str, str]] = []          # (file, json path, kind, id)
    for rid, preset in pack.of_kind("worldgen/world_preset").items():
        file = pack.path("worldgen/world_preset", rid)
        for dim, stem in preset.get("dimensions", {}).items():
            gen = stem.get("generator", {})
            refs.append((file, f"dimensions.{dim}.generator.settings", "worldgen/noise_settings", gen.get("settings", "")))
            biome = gen.get("biome_source", {}).get("biome")
            if biome is not None:
                refs.append((file, f"dimensions.{dim}.generator.biome_source.biome", "worldgen/biome", biome))
    for rid, settings in pack.of_kind("worldgen/noise_settings").items():
        file = pack.path("worldgen/noise_settings", rid)
        for name, fn in settings.get("noise_router", {}).items():
            refs += [(file, p, k, i) for p, k, i in _density_refs(fn, f"noise_router.{name}")]
    for rid, fn in pack.of_kind("worldgen/density_function").items():
        refs += [(pack.path("worldgen/density_function", rid), p, k, i) for p, k, i in _density_refs(fn, "")]
    for rid, data in pack.of_kind("worldgen/biome").items():
        file = pack.path("worldgen/biome", rid)
        for s, stage in enumerate(data.get("features", [])):
            refs += [(file, f"features[{s}][{i}]", "worldgen/placed_feature", p) for i, p in enumerate(stage)]
    for rid, data in pack.of_kind("worldgen/placed_feature").items():
        refs.append((pack.path("worldgen/placed_feature", rid), "feature", "worldgen/configured_feature",
                     data.get("feature", "")))
    for rid, data in pack.of_kind("worldgen/configured_feature").items():
        if data.get("type") == "minecraft:random_selector":
            file, cfg = pack.path("worldgen/configured_feature", rid), data.get("config", {})
            refs += [(file, f"config.features[{i}].feature", "worldgen/placed_feature", o.get("feature", ""))
                     for i, o in enumerate(cfg.get("features", []))]
            refs.append((file, "config.default", "worldgen/placed_feature", cfg.get("default", "")))
    for rid, data in pack.of_kind("function_tag").items():
        refs += [(pack.path("function_tag", rid), f"values[{i}]", "function", v) for i, v in enumerate(data.get("values", []))]
    for rid, text in pack.of_kind("function").items():
        for n, line in enumerate(text.splitlines(), 1):
            if line.startswith("function "):
                refs.append((pack.path("function", rid), f"line {n}", "function", line.split()[1]))
    for file, at, kind, ident in refs:
        if not isinstance(ident, str) or not ID_PATTERN.match(ident):
            f.hard("bad_identifier", file, at, f"{ident!r} is not a namespaced id")
        elif not pack.has(kind, ident):
            f.hard("unresolved_reference", file, at, f"{kind} {ident} is neither in the pack nor an allowed vanilla id")
    known = {rid for _, rid in pack.resources}
    for path, doc in pack.json.items():
        for at, _, value in _walk(doc):
            if isinstance(value, str) and value.startswith("mcbuild:") and value not in known:
                f.hard("unresolved_reference", path, at, f"{value} names no resource of the pack")


def _expected_stage(pack: _Pack, placed: str) -> str:
    cat = catalog()
    if placed in set(cat["vanilla_backbone"]):
        return "underground_ores"
    if placed in {d["placed_feature"] for d in cat["decorations"].values()}:
        return "top_layer_modification"
    feature = pack.resources.get(("worldgen/placed_feature", placed), {}).get("feature", "")
    ftype = pack.resources.get(("worldgen/configured_feature", feature), {}).get("type")
    return {"minecraft:ore": "underground_ores", "minecraft:lake": "lakes"}.get(ftype, "vegetal_decoration")


def _feature_stages(pack: _Pack, spec: BiomeSpec, f: Findings) -> None:
    for rid, data in pack.of_kind("worldgen/biome").items():
        file = pack.path("worldgen/biome", rid)
        stages = data.get("features")
        if not isinstance(stages, list) or len(stages) != len(wf.STAGES) or not all(isinstance(s, list) for s in stages):
            f.hard("feature_stages", file, "features", f"must be {len(wf.STAGES)} lists, one per generation step")
            continue
        seen: set[str] = set()
        for s, stage in enumerate(stages):
            for i, placed in enumerate(stage):
                if placed in seen:
                    f.hard("feature_stages", file, f"features[{s}][{i}]", f"{placed} is listed twice")
                seen.add(placed)
                expected = _expected_stage(pack, placed)
                if wf.STAGES[s] != expected:
                    f.hard("feature_stages", file, f"features[{s}][{i}]",
                           f"{placed} belongs to step {expected}, not {wf.STAGES[s]}")
        if not stages[wf.STAGES.index("vegetal_decoration")]:
            f.warn("feature_stages", file, "features", "no vegetal decoration (trees, sugar cane)")


def _ore_placements(pack: _Pack, spec: BiomeSpec, f: Findings) -> None:
    cat = catalog()
    low = cat["dimension"]["min_y"]
    high = low + cat["dimension"]["height"] - 1
    blocks = {v for o in cat["ores"].values() for v in (o["stone"], o["deepslate"])} | set(cat["surface_blocks"]["patch"])
    for rid, placed in pack.of_kind("worldgen/placed_feature").items():
        feature = pack.resources.get(("worldgen/configured_feature", placed.get("feature")))
        if not isinstance(feature, dict) or feature.get("type") != "minecraft:ore":
            continue
        file = pack.path("worldgen/placed_feature", rid)
        cfg = feature.get("config", {})
        if not 0 <= cfg.get("size", -1) <= 64 or not 0.0 <= cfg.get("discard_chance_on_air_exposure", -1) <= 1.0:
            f.hard("ore_placement", pack.path("worldgen/configured_feature", placed["feature"]), "config",
                   "size must be 0..64 and discard_chance_on_air_exposure 0..1")
        for i, target in enumerate(cfg.get("targets", [])):
            if target.get("state", {}).get("Name") not in blocks:
                f.hard("ore_placement", pack.path("worldgen/configured_feature", placed["feature"]),
                       f"config.targets[{i}].state", "not a whitelisted ore or patch block")
        types = [m.get("type") for m in placed.get("placement", [])]
        if "minecraft:in_square" not in types or "minecraft:biome" not in types or "minecraft:count" not in types:
            f.hard("ore_placement", file, "placement", "needs count, in_square and biome modifiers")
        for j, mod in enumerate(placed.get("placement", [])):
            if mod.get("type") != "minecraft:height_range":
                continue
            height = mod.get("height", {})
            lo = height.get("min_inclusive", {}).get("absolute")
            hi = height.get("max_inclusive", {}).get("absolute")
            if not (isinstance(lo, int) and isinstance(hi, int) and low <= lo <= hi <= high):
                f.hard("ore_placement", file, f"placement[{j}].height", f"height range must lie within y {low}..{high}")


def _noise_settings(pack: _Pack, spec: BiomeSpec, f: Findings) -> None:
    dim = catalog()["dimension"]
    for rid, settings in pack.of_kind("worldgen/noise_settings").items():
        file = pack.path("worldgen/noise_settings", rid)
        noise = settings.get("noise", {})
        if noise.get("min_y") != dim["min_y"] or noise.get("height") != dim["height"]:
            f.hard("noise_settings", file, "noise", f"must span y {dim['min_y']} with height {dim['height']}")
        if noise.get("min_y", 1) % 16 or noise.get("height", 1) % 16:
            f.hard("noise_settings", file, "noise", "min_y and height must be multiples of 16")
        if not (1 <= noise.get("size_horizontal", 0) <= 4 and 1 <= noise.get("size_vertical", 0) <= 4):
            f.hard("noise_settings", file, "noise", "cell sizes must be 1..4")
        router = settings.get("noise_router", {})
        if sorted(router) != sorted(wf.NOISE_ROUTER_FIELDS):
            f.hard("noise_settings", file, "noise_router", f"must have exactly the fields {', '.join(wf.NOISE_ROUTER_FIELDS)}")
        if settings.get("sea_level") != spec.terrain.sea_level:
            f.hard("noise_settings", file, "sea_level", f"must be the spec's {spec.terrain.sea_level}")
        if settings.get("surface_rule", {}).get("type") != "minecraft:sequence":
            f.hard("noise_settings", file, "surface_rule", "must be a sequence rule")
        for key in ("disable_mob_generation", "aquifers_enabled", "ore_veins_enabled", "legacy_random_source"):
            if not isinstance(settings.get(key), bool):
                f.hard("noise_settings", file, key, "must be a boolean")


def _functions(pack: _Pack, spec: BiomeSpec, f: Findings) -> None:
    lines: dict[str, list[str]] = {}
    for rid, text in pack.of_kind("function").items():
        body = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
        lines[rid] = body
        for problem in validate_function(body):
            f.hard("function_syntax", pack.path("function", rid), "<line>", problem)
    setup = lines.get(functions.SETUP, [])
    for effect in spec.runtime.effects:
        if not any(ln.startswith(f"effect give @s {effect.effect} ") and ln.endswith(" true") for ln in setup):
            f.hard("runtime_setup", pack.path("function", functions.SETUP), "effects", f"{effect.effect} is not given")
    if f"experience set @s {spec.runtime.experience_levels} levels" not in setup:
        f.hard("runtime_setup", pack.path("function", functions.SETUP), "experience", "experience level not set")
    if f"function {functions.SPAWN}" not in setup:
        f.hard("runtime_setup", pack.path("function", functions.SETUP), "spawn", "does not summon the creatures")
    summons = [ln for ln in lines.get(functions.SPAWN, []) if ln.startswith("summon ")]
    if len(summons) != len(creature_positions(spec)):
        f.hard("runtime_setup", pack.path("function", functions.SPAWN), "summon",
               f"{len(summons)} summons for {len(creature_positions(spec))} creatures")
    load = lines.get(functions.LOAD, [])
    rt = spec.runtime
    for needed in (f"difficulty {rt.difficulty}", f"time set {rt.initial_time}", f"weather {rt.weather}",
                   f"gamerule doDaylightCycle {str(rt.day_cycle).lower()}",
                   f"gamerule doWeatherCycle {str(rt.weather_cycle).lower()}"):
        if needed not in load:
            f.hard("runtime_setup", pack.path("function", functions.LOAD), "runtime", f"missing '{needed}'")
