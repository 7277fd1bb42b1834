"""Owned copies of the items that do not stack (tools, weapons, armour, enchanted books), as the game
tells them apart: the damage each took and its enchantments. Every backend reports them
(``Primitives.copies``) the same way, so the body's choices and the observation agree."""
from __future__ import annotations

from dataclasses import dataclass

Enchantments = tuple[tuple[str, int], ...]       # (enchantment id, level)


@dataclass(frozen=True)
class Copy:
    """One copy of an item: the uses it has worn off (``Damage``) and its enchantments (an enchanted
    book's stored ones)."""

    damage: int = 0
    enchantments: Enchantments = ()

    @property
    def enchanted(self) -> bool:
        return bool(self.enchantments)

    def level(self, enchantment: str) -> int:
        """The level of ``enchantment`` on this copy (0: none)."""
        return dict(self.enchantments).get(enchantment, 0)
