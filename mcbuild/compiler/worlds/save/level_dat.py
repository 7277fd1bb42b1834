"""``level.dat`` of a Java 1.19.0 save, written with nbtlib (deterministic bytes).

Readers need its world-gen settings: without an overworld dimension, editors such as amulet
assume heights 0..255 and drop every block below y=0 (docs/worlds.md). We write
``Data.WorldGenSettings`` with the biome pack's dimensions (overworld type
``minecraft:overworld``, so y -64..319), the enabled packs in load order, the game rules and
the spawn point. The gzip header carries no timestamp, so equal data gives equal bytes.
"""
from __future__ import annotations

import gzip
import io
import struct
from pathlib import Path
from typing import Any

from nbtlib import tag as nbt

from mcbuild.compiler.biome import files as wf
from mcbuild.compiler.biome.layout import spawn_point
from mcbuild.compiler.spec.biome import BiomeSpec

DATA_VERSION = 3105          # Minecraft Java 1.19.0
NBT_VERSION = 19133
VERSION_NAME = "1.19"
DIFFICULTY = {"peaceful": 0, "easy": 1, "normal": 2, "hard": 3}


def to_nbt(value: Any) -> nbt.Base:
    """JSON-like data -> NBT (bool -> Byte, int -> Int, float -> Double, str -> String)."""
    if isinstance(value, bool):
        return nbt.Byte(int(value))
    if isinstance(value, int):
        return nbt.Int(value)
    if isinstance(value, float):
        return nbt.Double(value)
    if isinstance(value, str):
        return nbt.String(value)
    if isinstance(value, dict):
        return nbt.Compound({k: to_nbt(value[k]) for k in sorted(value)})
    raise TypeError(f"no NBT form for {type(value).__name__}")


def game_rules(spec: BiomeSpec) -> dict[str, str]:
    rt = spec.runtime
    return {"doDaylightCycle": str(rt.day_cycle).lower(), "doWeatherCycle": str(rt.weather_cycle).lower(),
            "doMobSpawning": str(rt.mob_spawning).lower(), "spawnRadius": "0"}


def level_data(spec: BiomeSpec, world_id: str, seed: int, packs: list[str]) -> nbt.Compound:
    """The ``Data`` compound; ``packs`` are the enabled pack names after ``vanilla``."""
    x, y, z = spawn_point(spec)
    rt = spec.runtime
    return nbt.Compound({
        "DataVersion": nbt.Int(DATA_VERSION),
        "version": nbt.Int(NBT_VERSION),
        "Version": nbt.Compound({"Id": nbt.Int(DATA_VERSION), "Name": nbt.String(VERSION_NAME),
                                 "Series": nbt.String("main"), "Snapshot": nbt.Byte(0)}),
        "LevelName": nbt.String(world_id),
        "GameType": nbt.Int(0),
        "Difficulty": nbt.Byte(DIFFICULTY[rt.difficulty]),
        "DifficultyLocked": nbt.Byte(1),
        "hardcore": nbt.Byte(0),
        "allowCommands": nbt.Byte(1),
        "initialized": nbt.Byte(1),
        "SpawnX": nbt.Int(x), "SpawnY": nbt.Int(y), "SpawnZ": nbt.Int(z), "SpawnAngle": nbt.Float(0.0),
        "Time": nbt.Long(0), "DayTime": nbt.Long(rt.initial_time), "LastPlayed": nbt.Long(0),
        "raining": nbt.Byte(0), "rainTime": nbt.Int(0), "thundering": nbt.Byte(0), "thunderTime": nbt.Int(0),
        "clearWeatherTime": nbt.Int(0),
        "GameRules": nbt.Compound({k: nbt.String(v) for k, v in sorted(game_rules(spec).items())}),
        "DataPacks": nbt.Compound({
            "Enabled": nbt.List[nbt.String]([nbt.String(p) for p in ["vanilla", *packs]]),
            "Disabled": nbt.List[nbt.String]([])}),
        "WorldGenSettings": nbt.Compound({
            "seed": nbt.Long(seed), "generate_features": nbt.Byte(1), "bonus_chest": nbt.Byte(0),
            "dimensions": to_nbt(wf.dimensions(spec))}),
        "WasModded": nbt.Byte(0),
    })


def nbt_bytes(root: nbt.Compound) -> bytes:
    """Uncompressed NBT of ``root`` as the unnamed root compound of a file or a chunk."""
    buf = io.BytesIO()
    buf.write(b"\x0a" + struct.pack(">H", 0))
    root.write(buf)
    return buf.getvalue()


def encode(data: nbt.Compound) -> bytes:
    """Gzipped NBT file with an unnamed root compound holding ``Data`` (fixed gzip mtime)."""
    return gzip.compress(nbt_bytes(nbt.Compound({"Data": data})), compresslevel=9, mtime=0)


def level_dat(spec: BiomeSpec, world_id: str, seed: int, packs: list[str]) -> bytes:
    return encode(level_data(spec, world_id, seed, packs))


def read_data(path: Path) -> nbt.Compound:
    """The ``Data`` compound of a level.dat (nbtlib 1.x and 2.x); a damaged file is a ValueError naming it."""
    import nbtlib

    try:
        root = nbtlib.load(path)
        if "Data" not in root and len(root) == 1:      # nbtlib 1.x wraps the unnamed root
            root = next(iter(root.values()))
        return root["Data"]
    except FileNotFoundError:
        raise
    except Exception as exc:  # noqa: BLE001 - gzip, struct and nbtlib errors of a damaged file
        raise ValueError(f"{path}: unreadable level.dat ({type(exc).__name__}: {exc})") from None
