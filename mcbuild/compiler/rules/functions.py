"""The function ids every biome pack defines and every backend runs (the simulator and a server
alike): ``#minecraft:load`` -> :data:`LOAD`, :data:`SETUP` as the player at episode start, which
ends with :data:`SPAWN` (the creatures at fixed positions)."""
from __future__ import annotations

LOAD = "mcbuild:world_load"
SETUP = "mcbuild:setup_player"
SPAWN = "mcbuild:spawn_entities"
