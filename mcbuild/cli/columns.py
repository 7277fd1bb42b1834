"""Plain-text tables whose columns line up whatever their contents' widths."""
from __future__ import annotations

GAP = "  "


def aligned(header: list[str], rows: list[list[str]], right: frozenset[int] = frozenset()) -> list[str]:
    """The lines of a table: each column as wide as its widest cell, two spaces apart; the columns
    in ``right`` (numbers) aligned right."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return GAP.join(str(c).rjust(w) if i in right else str(c).ljust(w)
                        for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(header), *(line(r) for r in rows)]
