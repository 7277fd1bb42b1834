"""Report figures: one style per configuration across figures, clipped intervals, legends off the data."""
from __future__ import annotations

import pytest
from matplotlib.colors import to_hex
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from mcbuild.runtime.study.report import load_study
from mcbuild.runtime.study.report.plots import RIE_RANGE, figures, write_plots
from mcbuild.runtime.study.report.styles import KNOWN, style
from test_study_report import make_study


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A study whose configurations are listed out of alphabetical order; (study folder, build folder)."""
    tmp = tmp_path_factory.mktemp("plots")
    _, out = make_study(tmp, configurations=["xenon", "react", "direct"], models=["ma"])
    return out, tmp / "build"


@pytest.fixture(scope="module")
def figs(study):
    """Every figure of ``study``, drawn."""
    made = figures(load_study(study[0]), 5, study[1])
    for f in made.values():
        f.canvas.draw()
    yield made
    import matplotlib.pyplot as plt

    plt.close("all")


def series_styles(fig) -> dict[str, set]:
    """configuration -> every (colour, hatch-or-marker) its bars and lines are drawn with."""
    out: dict[str, set] = {}
    for ax in fig.axes:
        for a in ax.patches:
            if isinstance(a, Rectangle) and a.get_gid():
                out.setdefault(a.get_gid(), set()).add((to_hex(a.get_facecolor()), "hatch", a.get_hatch() or ""))
        for a in ax.lines:
            if isinstance(a, Line2D) and a.get_gid():
                out.setdefault(a.get_gid().split("/")[0], set()).add((to_hex(a.get_color()), "marker", a.get_marker()))
    return out


def test_a_configuration_has_one_style_in_every_figure(figs):
    seen: dict[str, dict[str, set]] = {}
    for name, fig in figs.items():
        for c, st in series_styles(fig).items():
            seen.setdefault(c, {}).setdefault(name, set()).update(st)
    assert {"xenon", "react", "direct"} <= set(seen)
    shared = [c for c, by_fig in seen.items() if len(by_fig) >= 2]
    assert shared, "no configuration appears in two figures"
    for c in shared:
        colours = {col for st in seen[c].values() for col, _, _ in st}
        hatches = {v for st in seen[c].values() for _, kind, v in st if kind == "hatch"}
        markers = {v for st in seen[c].values() for _, kind, v in st if kind == "marker"}
        assert colours == {style(c).color.lower()}, (c, seen[c])
        assert len(hatches) <= 1 and len(markers) <= 1, (c, seen[c])


def test_styles_come_from_the_name():
    assert style("react") == KNOWN["react"]
    assert style("my-agent") == style("my-agent")
    assert len({style(f"custom-{i}") for i in range(20)}) > 10
    assert len({s.color for s in KNOWN.values()}) == len(KNOWN)


def test_intervals_stay_in_the_feasible_range(figs):
    lo, hi = RIE_RANGE
    for name in ("rie_by_suite", "figure3"):
        for ax in figs[name].axes:
            for coll in ax.collections:
                for seg in getattr(coll, "get_segments", lambda: [])():
                    ys = [p[1] for p in seg]
                    assert lo - 1e-9 <= min(ys) and max(ys) <= hi + 1e-9, (name, ys)


def test_legends_never_cover_data(figs):
    for name, fig in figs.items():
        r = fig.canvas.get_renderer()
        for leg in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
            box = leg.get_window_extent(r)
            for ax in fig.axes:
                assert not box.overlaps(ax.get_window_extent(r)), name


def test_same_study_same_png_bytes(study, tmp_path):
    d = load_study(study[0])
    a, b = write_plots(d, tmp_path / "a", 5, study[1]), write_plots(d, tmp_path / "b", 5, study[1])
    assert {n: p.read_bytes() for n, p in a.items()} == {n: p.read_bytes() for n, p in b.items()}


def test_thin_data_keeps_the_rie_scale_and_labels_inside_the_axes(study):
    """No cell reaches the minimum n: the RIE axes still span the feasible range, the suites' ticks
    sit inside the frame, and every ``n/a`` label is drawn within its axes."""
    import matplotlib.pyplot as plt

    made = figures(load_study(study[0]), 10**6, study[1])
    try:
        for name in ("rie_by_suite", "figure3"):
            fig = made[name]
            fig.canvas.draw()
            r = fig.canvas.get_renderer()
            labels = 0
            for ax in fig.axes:
                if not ax.get_xticks().size:
                    continue
                lo, hi = ax.get_ylim()
                assert lo <= RIE_RANGE[0] and hi >= RIE_RANGE[1], (name, ax.get_ylim())
                x0, x1 = ax.get_xlim()
                assert all(x0 < t < x1 for t in ax.get_xticks()), (name, ax.get_xlim(), ax.get_xticks())
                box = ax.get_window_extent(r)
                for t in ax.texts:
                    if t.get_text() == "n/a":
                        labels += 1
                        e = t.get_window_extent(r)
                        assert box.x0 <= e.x0 and e.x1 <= box.x1 and box.y0 <= e.y0 and e.y1 <= box.y1, (name, e, box)
            assert labels, name
    finally:
        plt.close("all")
