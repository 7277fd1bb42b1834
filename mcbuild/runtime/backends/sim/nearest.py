"""The nearest blocks an episode terrain keeps for one centre across its edits
(``episode_terrain.Terrain.nearby_blocks``), and how an edit's changes bring them up to date."""
from __future__ import annotations

from dataclasses import dataclass

from .cells import rounded_roots

#: one change of a cell's reachable block: its array position, the palette index it was reachable as
#: before and after (-1: not reachable)
Change = tuple[int, int, int, int, int]


@dataclass
class Nearest:
    """The squared distance per palette index around one centre (``far`` where none is within the
    radius), the length of the terrain's log of changes they include, and their rounded dict in
    block-id order (None until asked)."""

    best: list[int]
    far: int
    seen: int
    shown: dict[str, float] | None

    def catch_up(self, log: list[Change], centre: tuple[int, int, int], palette: list[str]) -> bool:
        """Apply the changes of ``log`` since :attr:`seen` around array position ``centre``: a cell that
        came lowers its block's distance; False when a cell that left was as near as its block's
        nearest (the distances must be read again)."""
        best, far, shown = self.best, self.far, self.shown
        cx, cy, cz = centre
        for x, y, z, before, now in log[self.seen:]:
            d2 = (x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2
            if d2 >= far:
                continue
            if before >= 0 and d2 <= best[before]:
                return False
            if now >= 0:
                if now >= len(best):            # a block new to the palette
                    best.extend([far] * (now + 1 - len(best)))
                if d2 < best[now]:
                    if shown is not None and best[now] < far:   # a block shown before: its place is kept
                        shown[palette[now]] = rounded_roots(far - 1)[d2]
                    else:
                        shown = None
                    best[now] = d2
        self.seen, self.shown = len(log), shown
        return True

    def show(self, palette: list[str], by_name: list[int]) -> dict[str, float]:
        """The rounded distances in block-id order (``by_name``: the palette indices in that order)."""
        best, far, rounded = self.best, self.far, rounded_roots(self.far - 1)
        return {palette[i]: rounded[best[i]] for i in by_name if i < len(best) and best[i] < far}
