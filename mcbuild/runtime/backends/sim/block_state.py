"""The state of a block as (property, value) pairs sorted by property: read from a save's state
text, or a block's default state (the one a player placing it on the ground gets)."""
from __future__ import annotations

from functools import lru_cache

from mcbuild.compiler.rules.blockstates import block_states

State = tuple[tuple[str, str], ...]


@lru_cache(maxsize=1024)
def default_state(block: str) -> State:
    """``block``'s default state (minecraft-data 1.19, the world builder's source of states)."""
    return tuple(sorted(block_states().defaults.get(block, {}).items()))


@lru_cache(maxsize=4096)
def parsed_state(text: str) -> State:
    """The state a save's text ``k=v,...`` spells."""
    return tuple(sorted((k, v) for k, _, v in (p.partition("=") for p in text.split(",")))) if text else ()
