"""Java 1.19 block states: ``name[key=value,...]`` strings and their complete form.

A 1.19 server writes every property of a block into a save's palette. The properties, their
allowed values and each block's default state come from minecraft-data 1.19 (``blocks.json`` of
the npm package that ``make setup`` installs): the game's data-generator output has no block
states. The world builder completes every state it writes here, and the tests check the saves
against the same file.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from mcbuild.compiler.core.errors import CompileError
from mcbuild.compiler.core.paths import CHECKOUT, PACKAGES

BLOCKS_JSON = (CHECKOUT or PACKAGES) / "node_modules" / "minecraft-data" / "minecraft-data" / "data" / "pc" / "1.19" / "blocks.json"
BOOL_VALUES = ("true", "false")      # minecraft-data's order of a boolean property's values


def parse_state(state: str) -> tuple[str, dict[str, str]]:
    """``minecraft:oak_leaves[distance=1,persistent=true]`` -> name and properties."""
    name, _, rest = state.partition("[")
    if not rest:
        return name, {}
    pairs = [p.split("=", 1) for p in rest.rstrip("]").split(",")]
    if any(len(p) != 2 for p in pairs):
        raise ValueError(f"malformed block state {state!r}")
    return name, dict(pairs)


def format_state(name: str, properties: dict[str, str]) -> str:
    """The state string with properties in name order (the order a 1.19 server writes them)."""
    if not properties:
        return name
    return f"{name}[{','.join(f'{k}={properties[k]}' for k in sorted(properties))}]"


@dataclass(frozen=True)
class BlockStates:
    values: dict[str, dict[str, tuple[str, ...]]]    # block -> property -> allowed values
    defaults: dict[str, dict[str, str]]              # block -> its default state's properties

    def complete(self, state: str) -> tuple[str, dict[str, str]]:
        """Name and every property of ``state``: the given values (checked), the rest from the
        block's default state. An unknown block, property or value is a ValueError naming it."""
        name, given = parse_state(state)
        if name not in self.values:
            raise ValueError(f"{state}: no block {name} in Minecraft 1.19")
        allowed = self.values[name]
        for key, value in given.items():
            if key not in allowed:
                raise ValueError(f"{state}: {name} has no property {key!r} (it has {sorted(allowed) or 'none'})")
            if value not in allowed[key]:
                raise ValueError(f"{state}: {key}={value} is not one of {list(allowed[key])}")
        return name, {**self.defaults[name], **given}


def _values(prop: dict) -> tuple[str, ...]:
    if prop["type"] == "bool":
        return BOOL_VALUES
    return tuple(str(v) for v in prop["values"])


@lru_cache(maxsize=1)
def block_states(path: Path = BLOCKS_JSON) -> BlockStates:
    """Every 1.19 block's properties and default state (minecraft-data orders a block's state ids
    with its last property varying fastest)."""
    try:
        blocks = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise CompileError(str(path), f"minecraft-data 1.19 block states unreadable ({type(exc).__name__}); "
                           "run `make setup` (npm install)") from None
    values: dict[str, dict[str, tuple[str, ...]]] = {}
    defaults: dict[str, dict[str, str]] = {}
    for block in blocks:
        name = f"minecraft:{block['name']}"
        props = [(p["name"], _values(p)) for p in block.get("states", [])]
        offset = block["defaultState"] - block["minStateId"]
        default = {}
        for key, options in reversed(props):
            offset, index = divmod(offset, len(options))
            default[key] = options[index]
        values[name] = dict(props)
        defaults[name] = dict(sorted(default.items()))
    return BlockStates(values, defaults)
