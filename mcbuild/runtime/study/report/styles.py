"""One drawing style per series identity, the same in every figure of every report.

A configuration (or any other series name: a model, a custom agent) gets its colour, hatch and
marker from its name, never from its position in a list: the known configurations have fixed
entries, and any other name picks its entries by a hash of the name (stable across runs and
machines). The condition decides the rest: Vanilla draws solid lines and filled markers, a
Mirror suite dashed lines and open markers. Colours are the Okabe–Ito colour-blind-safe set,
and hatch and marker differ too, so the figures also read in greyscale.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Style:
    """How one series is drawn: bar fill and hatch, line marker."""

    color: str
    hatch: str
    marker: str


#: Fixed styles of the known configurations (the registry's names).
KNOWN: dict[str, Style] = {
    "vanilla-planner": Style("#0072B2", "..", "o"),
    "adaptive-planner": Style("#D55E00", "//", "s"),
    "direct": Style("#999999", "\\\\", "v"),
    "react": Style("#E69F00", "xx", "^"),
    "react_rules": Style("#F0E442", "--", "P"),
    "reflexion": Style("#56B4E9", "oo", "D"),
    "voyager": Style("#009E73", "++", "X"),
    "xenon": Style("#CC79A7", "||", "*"),
    "adam": Style("#000000", "", "h"),
}

#: Entries an unknown name draws from (Paul Tol's muted set, other hatches and markers).
_COLORS = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499")
_HATCHES = ("///", "...", "xxx", "\\\\\\", "ooo", "+++", "O", "*")
_MARKERS = ("p", "H", "<", ">", "d", "8", "1", "2")


def style(name: str) -> Style:
    """The style of the series called ``name`` (a configuration, model or other identity)."""
    if name in KNOWN:
        return KNOWN[name]
    h = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
    return Style(_COLORS[h % len(_COLORS)], _HATCHES[(h // 16) % len(_HATCHES)], _MARKERS[(h // 256) % len(_MARKERS)])


def bar_kw(name: str) -> dict:
    """Keyword arguments of ``Axes.bar`` for the series ``name``."""
    s = style(name)
    return {"color": s.color, "hatch": s.hatch, "edgecolor": "black", "lw": 0.7, "gid": name}


def line_kw(name: str, vanilla: bool) -> dict:
    """Keyword arguments of ``Axes.plot`` for the series ``name`` in Vanilla or in a Mirror suite."""
    s = style(name)
    return {"color": s.color, "marker": s.marker, "linestyle": "-" if vanilla else "--",
            "mfc": s.color if vanilla else "white", "mec": s.color, "mew": 1.3,
            "gid": f"{name}/{'vanilla' if vanilla else 'mirror'}"}


def bar_handle(name: str, label: str):
    """A legend entry for a bar series."""
    from matplotlib.patches import Patch

    kw = bar_kw(name)
    return Patch(facecolor=kw["color"], hatch=kw["hatch"], edgecolor="black", lw=0.7, label=label)


def line_handle(name: str, vanilla: bool, label: str, *, line: bool = True):
    """A legend entry for a line (or, with ``line`` false, a marker-only) series."""
    from matplotlib.lines import Line2D

    kw = line_kw(name, vanilla)
    kw.pop("gid")
    if not line:
        kw["linestyle"] = "none"
    return Line2D([], [], label=label, ms=6, **kw)
