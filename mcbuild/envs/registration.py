"""The id of MirrorCraft's Gymnasium environment and its registration."""
from __future__ import annotations

__all__ = ["ENV_ID", "ENTRY_POINT", "register_envs"]

ENV_ID = "mcbuild/MirrorCraft-v0"
ENTRY_POINT = "mcbuild.envs.mirrorcraft:MirrorCraftEnv"


def register_envs() -> None:
    """Register ``mcbuild/MirrorCraft-v0`` with Gymnasium (once per process; the entry point's target)."""
    from gymnasium.envs.registration import register, registry

    if ENV_ID not in registry:
        register(id=ENV_ID, entry_point=ENTRY_POINT)
