"""Living entities and dropped item stacks of a simulated world.

Mobs come only from the save's packs: the setup function's ``summon`` commands reach
:meth:`Entities.world_command`. Peaceful passive mobs never respawn, and in semantic time they
stand where they were summoned. Other world commands (difficulty, time, weather, game rules)
are recorded as the episode controls.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from mecha import AstCommand

from compiler.rules.catalog import ns
from compiler.rules.commands import text

Vec = tuple[float, float, float]


@dataclass
class Mob:
    entity: str
    pos: Vec
    alive: bool = True


@dataclass
class ItemStack:
    item: str
    count: int
    pos: tuple[int, int, int]


@dataclass
class Entities:
    origin: Vec = (0.0, 0.0, 0.0)          # position that relative coordinates refer to
    mobs: list[Mob] = field(default_factory=list)
    drops: list[ItemStack] = field(default_factory=list)
    controls: dict[str, str] = field(default_factory=dict)

    def world_command(self, cmd: AstCommand) -> None:
        """Apply a world-level command run by a pack function."""
        head = cmd.identifier.split(":", 1)[0]
        if head == "summon":
            entity = ns(text(cmd.arguments[0]))
            self.mobs.append(Mob(entity, self._position(cmd.arguments[1]) if len(cmd.arguments) > 1 else self.origin))
        elif head in ("gamerule", "time"):
            parts = cmd.identifier.split(":")
            self.controls[f"{head}.{parts[1]}"] = " ".join(text(a) for a in cmd.arguments)
        elif head in ("difficulty", "weather"):
            self.controls[head] = cmd.identifier.split(":")[1]
        else:
            self.controls[head] = " ".join(text(a) for a in cmd.arguments)

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


def distance(a: Vec | tuple[int, int, int], b: Vec | tuple[int, int, int]) -> float:
    return math.dist(a, b)
