"""Deterministic datapack packaging (pack_format 10, Minecraft Java 1.19.0).

A pack is a mapping of archive paths (``data/<ns>/...``) to bytes. The zip is byte-identical
for identical content: sorted entries, a fixed timestamp, fixed permissions, no directories.
"""
from __future__ import annotations

import io
import zipfile
from typing import Any, Mapping

from mcbuild.compiler.core.canonical import dump_bytes

PACK_FORMAT = 10
MINECRAFT_VERSION = "1.19"
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)

# Folder names used by pack_format 10 (plural forms; singular names came in later versions).
FOLDERS = {
    "recipe": "recipes",
    "loot_table": "loot_tables",
    "advancement": "advancements",
    "function": "functions",
    "item_tag": "tags/items",
    "block_tag": "tags/blocks",
    "function_tag": "tags/functions",
    "entity_type_tag": "tags/entity_types",
}


def resource_path(kind: str, resource_id: str, ext: str = ".json") -> str:
    """Archive path of a namespaced resource, e.g. ('recipe', 'minecraft:stick')."""
    ns, _, name = resource_id.partition(":")
    if not name:
        ns, name = "minecraft", ns
    return f"data/{ns}/{FOLDERS.get(kind, kind)}/{name}{ext}"


def parse_resource_path(path: str) -> tuple[str, str] | None:
    """Inverse of resource_path for JSON/function files: (kind, 'ns:name') or None."""
    parts = path.split("/")
    if len(parts) < 4 or parts[0] != "data":
        return None
    ns, rest = parts[1], "/".join(parts[2:])
    for kind, folder in sorted(FOLDERS.items(), key=lambda kv: -len(kv[1])):
        if rest.startswith(folder + "/"):
            name = rest[len(folder) + 1:]
            for ext in (".json", ".mcfunction"):
                if name.endswith(ext):
                    return kind, f"{ns}:{name[: -len(ext)]}"
    return None


def pack_mcmeta(description: str, block_filters: list[dict[str, str]] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"pack": {"pack_format": PACK_FORMAT, "description": description}}
    if block_filters:
        meta["filter"] = {"block": block_filters}
    return meta


def build_zip(files: Mapping[str, bytes | dict | list | str]) -> bytes:
    """Serialize files deterministically; dict/list values are written as canonical JSON."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name in sorted(files):
            if name.startswith("/") or ".." in name.split("/"):
                raise ValueError(f"unsafe archive path {name!r}")
            info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            zf.writestr(info, to_bytes(files[name]))
    return buf.getvalue()


def read_zip(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist() if not n.endswith("/")}


def to_bytes(value: bytes | dict | list | str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return dump_bytes(value)
