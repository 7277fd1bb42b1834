"""Living entities and dropped item stacks of a simulated world.

Mobs come only from the save's packs: the setup function's ``summon`` commands reach
:meth:`Entities.world_command`. Peaceful passive mobs never respawn, and in semantic time they
stand where they were summoned. Other world commands (difficulty, time, weather, game rules)
are recorded as the episode controls.

A mob's loot table is the game's ``getDefaultLootTable``: ``DeathLootTable`` from the summon's NBT,
else ``entities/<id>``, except an unsheared sheep, which drops from ``entities/sheep/<colour>``.
A sheep's colour and shearing come from the summon's ``Color`` byte and ``Sheared`` flag; a sheep
summoned without ``Color`` gets a random colour as in ``Sheep.finalizeSpawn`` (the weights of
``game_facts.yaml`` ``sheep``, a fact of the game's code), drawn from the episode seed.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from mecha import AstCommand, AstNbtCompound, AstNode

from mcbuild.compiler.rules.catalog import load as load_catalog
from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.commands import text

Vec = tuple[float, float, float]
SHEEP = "minecraft:sheep"


def _sheep_facts() -> dict[str, Any]:
    """The sheep colours of ``catalogs/game_facts.yaml``: dye colours by id and spawn weights."""
    return load_catalog().facts["sheep"]


@dataclass
class Mob:
    entity: str
    pos: Vec
    alive: bool = True
    nbt: dict[str, Any] = field(default_factory=dict)     # what the summon set, plus a sheep's colour

    @property
    def loot_table(self) -> str:
        """The id of the table the mob drops from when killed."""
        if "DeathLootTable" in self.nbt:
            return ns(str(self.nbt["DeathLootTable"]))
        space, _, name = self.entity.partition(":")
        if self.entity == SHEEP and not self.nbt.get("Sheared"):
            return f"{space}:entities/{name}/{_sheep_facts()['dye_colours'][int(self.nbt['Color']) & 15]}"
        return f"{space}:entities/{name}"


@dataclass
class ItemStack:
    item: str
    count: int
    pos: tuple[int, int, int]


@dataclass
class Entities:
    origin: Vec = (0.0, 0.0, 0.0)          # position that relative coordinates refer to
    seed: int = 0                            # the episode's: random spawn facts (a sheep's colour)
    mobs: list[Mob] = field(default_factory=list)
    drops: list[ItemStack] = field(default_factory=list)
    controls: dict[str, str] = field(default_factory=dict)

    def world_command(self, cmd: AstCommand) -> None:
        """Apply a world-level command run by a pack function."""
        head = cmd.identifier.split(":", 1)[0]
        if head == "summon":
            entity = ns(text(cmd.arguments[0]))
            pos = self._position(cmd.arguments[1]) if len(cmd.arguments) > 1 else self.origin
            tags = _compound(cmd.arguments[2]).evaluate() if len(cmd.arguments) > 2 else {}
            nbt = {str(k): v.unpack() for k, v in tags.items()}
            if entity == SHEEP and "Color" not in nbt:
                nbt["Color"] = self._sheep_colour(len(self.mobs))
            self.mobs.append(Mob(entity, pos, nbt=nbt))
        elif head in ("gamerule", "time"):
            parts = cmd.identifier.split(":")
            self.controls[f"{head}.{parts[1]}"] = " ".join(text(a) for a in cmd.arguments)
        elif head in ("difficulty", "weather"):
            self.controls[head] = cmd.identifier.split(":")[1]
        else:
            self.controls[head] = " ".join(text(a) for a in cmd.arguments)

    def _sheep_colour(self, index: int) -> int:
        facts = _sheep_facts()
        names, weights = zip(*facts["spawn_weights"].items())
        colour = random.Random(f"{self.seed}|summon|{index}").choices(names, weights=weights)[0]
        return facts["dye_colours"].index(colour)

    def _position(self, vec) -> Vec:
        out = []
        for axis, base in zip((vec.x, vec.y, vec.z), self.origin):
            if axis.type == "absolute":
                out.append(float(axis.value))
            elif axis.type == "relative":
                out.append(base + float(axis.value))
            else:
                raise ValueError("local (^) coordinates are not supported in summon positions")
        return out[0], out[1], out[2]

    # ------------------------------------------------------------------ queries
    def alive(self, entity: str | None = None) -> list[Mob]:
        return [m for m in self.mobs if m.alive and (entity is None or m.entity == entity)]

    def drop(self, item: str, count: int, pos: tuple[int, int, int]) -> None:
        if count > 0:
            self.drops.append(ItemStack(item, count, pos))

    def take(self, stack: ItemStack, count: int) -> None:
        stack.count -= count
        if stack.count <= 0:
            self.drops.remove(stack)


def _compound(node: AstNode) -> AstNbtCompound:
    """A ``summon``'s NBT argument."""
    if not isinstance(node, AstNbtCompound):
        raise ValueError(f"summon: expected an NBT compound, got {type(node).__name__}")
    return node


def distance(a: Vec | tuple[int, int, int], b: Vec | tuple[int, int, int]) -> float:
    return math.dist(a, b)
