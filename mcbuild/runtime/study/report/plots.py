"""The report's matplotlib figures (Agg backend), saved as PNGs.

Each series is drawn in the style of its identity (:mod:`.styles`), so one configuration looks
the same in every figure. Legends sit outside the axes, right of the plot, so they never cover
data; an interval is clipped to its quantity's feasible range. Line and point series are shifted
slightly along x so that none hides another. A zero bar is drawn as a marked baseline and
labelled ``0``; a missing cell is labelled ``n/a`` inside the axes, which keep the quantity's range
when no cell has data.
"""
from __future__ import annotations

from pathlib import Path

from mcbuild.runtime.records import HIDDEN, VANILLA, select
from mcbuild.runtime.study import metrics as M
from .data import StudyData
from .difficulty import load_difficulty
from .labels import cname, mname, sname, task_title
from .styles import bar_handle, bar_kw, line_handle, line_kw

FIG3_TASKS = ("iron_armor", "diamond")
#: The feasible range of RIE_SR, a difference of two success rates in percent.
RIE_RANGE = (-100.0, 100.0)


def write_plots(d: StudyData, out: Path, k: int, build: Path) -> dict[str, Path]:
    """Write every plot into ``out`` (``build`` holds the suites' report.json); returns plot name -> PNG path."""
    out.mkdir(parents=True, exist_ok=True)
    return {name: _save(fig, out / f"{name}.png") for name, fig in figures(d, k, build).items()}


def figures(d: StudyData, k: int, build: Path) -> dict:
    """Every plot as a matplotlib Figure, by plot name (the caller saves or closes them)."""
    import matplotlib

    matplotlib.use("Agg")
    return {"rie_by_suite": _rie_by_suite(d, k), "figure3": _figure3(d, k),
            "checkpoints": _checkpoints(d, k), "sr_difficulty": _sr_difficulty(d, k, build)}


def _bars(ax, suites: list[str], series: list[tuple[str, dict]], bounds: tuple[float, float]) -> None:
    """Grouped bars: ``series`` is (configuration, suite -> Estimate | None); error bars are the
    intervals, clipped to ``bounds``. A missing cell is an ``n/a`` centred on the baseline, inside
    the axes; an axes without any bar spans ``bounds``, so thin data still reads on the quantity's scale."""
    width = 0.8 / max(1, len(series))
    drawn = False
    for i, (c, cells) in enumerate(series):
        for j, s in enumerate(suites):
            x = j - 0.4 + width * (i + 0.5)
            e = cells.get(s)
            if e is None:
                ax.text(x, 0, "n/a", ha="center", va="center", fontsize=7, rotation=90,
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
                continue
            drawn = True
            ax.bar(x, e.value, width=width, **bar_kw(c))
            lo, hi = max(bounds[0], e.value - e.half_width), min(bounds[1], e.value + e.half_width)
            ax.errorbar(x, e.value, yerr=[[e.value - lo], [hi - e.value]], color="black", capsize=2, lw=0.8)
            if round(e.value, 1) == 0:
                ax.plot([x - width / 2, x + width / 2], [0, 0], color="black", lw=2.5)
                ax.text(x, 1.5, "0", ha="center", va="bottom", fontsize=7)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(range(len(suites)), [sname(s) for s in suites])
    ax.set_xlim(-0.5, len(suites) - 0.5)
    if not drawn:
        span = bounds[1] - bounds[0]
        ax.set_ylim(bounds[0] - 0.05 * span, bounds[1] + 0.05 * span)


def _bar_legend(fig, series: list[tuple[str, dict]]) -> None:
    """One legend right of the axes, one entry per configuration (``(no data)`` when it has none)."""
    handles = [bar_handle(c, cname(c) + ("" if any(v is not None for v in cells.values()) else " (no data)"))
               for c, cells in series]
    if handles:
        fig.legend(handles=handles, loc="outside right upper", fontsize=8)


def _rie_by_suite(d: StudyData, k: int):
    """RIE_SR per suite and hidden configuration, pooled over models and tasks, with 95% intervals."""
    import matplotlib.pyplot as plt

    iv = M.rie_sr_interval(d.records, ("condition", "configuration"), min_pairs=k, variance="agresti_coull")
    series = [(c, {s: iv.get((s, c)) for s in d.suites}) for c in d.hidden_configs]
    fig, ax = plt.subplots(figsize=(9, 4), layout="constrained")
    _bars(ax, d.suites, series, RIE_RANGE)
    ax.set_ylabel("RIE_SR (points)")
    ax.set_title("RIE_SR by suite and configuration, pooled over models and tasks")
    _bar_legend(fig, series)
    return fig
def figure3_cells(d: StudyData, k: int) -> dict[tuple[str, str], tuple[list[str], dict]]:
    """(model, task) -> (compared configurations, (configuration, suite) -> RIE_SR Estimate | None)."""
    hidden = select(d.records, disclosure=HIDDEN)
    tasks = [t for t in FIG3_TASKS if t in d.config.tasks]
    out = {}
    for mo in d.models:
        rs = select(hidden, model=mo)
        chosen = set(M.compared_configurations(rs, tasks=tasks)) if tasks else set()
        compared = [c for c in d.configs if c in chosen]
        for t in tasks:
            iv = M.rie_sr_interval(select(rs, task=t, configuration=set(compared)), ("configuration", "condition"),
                                   strata=("task",), variance="agresti_coull", min_pairs=k)
            out[(mo, t)] = (compared, {(c, s): iv.get((c, s)) for c in compared for s in d.suites})
    return out


def _figure3(d: StudyData, k: int):
    """Figure 3: RIE_SR by suite for the compared set, one panel per task (row) and model (column)."""
    import matplotlib.pyplot as plt

    cells = figure3_cells(d, k)
    tasks = [t for t in FIG3_TASKS if t in d.config.tasks]
    nrows, ncols = max(1, len(tasks)), max(1, len(d.models))
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols + 2, 3.2 * nrows), squeeze=False, sharey=True,
                             layout="constrained")
    shown: dict[str, dict] = {}
    for i, mo in enumerate(d.models):
        for j, t in enumerate(tasks):
            ax = axes[j][i]
            compared, iv = cells[(mo, t)]
            ax.set_title(f"{task_title(t)} · {mname(mo)}", fontsize=9)
            if not compared:
                ax.text(0.5, 0.5, "no configuration has Vanilla SR ≥ 50%\non both tasks", ha="center",
                        va="center", transform=ax.transAxes, fontsize=8)
                continue
            series = [(c, {s: iv[(c, s)] for s in d.suites}) for c in compared]
            _bars(ax, d.suites, series, RIE_RANGE)
            for c, by_suite in series:
                shown.setdefault(c, {}).update({(mo, t, s): v for s, v in by_suite.items()})
    for row in axes:
        row[0].set_ylabel("RIE_SR (points)")
    _bar_legend(fig, [(c, shown[c]) for c in d.configs if c in shown])
    if not tasks:
        axes[0][0].text(0.5, 0.5, "the study has neither Iron Armor nor Diamond", ha="center", transform=axes[0][0].transAxes)
    return fig


def _checkpoints(d: StudyData, k: int):
    """Cumulative SR at the study's checkpoints: Vanilla solid, Mirror dashed, in each configuration's style."""
    import matplotlib.pyplot as plt

    cps = d.config.report_checkpoints()
    cp = M.checkpoint_sr(d.records, cps, ("configuration", "is_vanilla"), average_over="task", min_episodes=k)
    fig, ax = plt.subplots(figsize=(7.5, 4), layout="constrained")
    span = (max(cps) - min(cps)) or max(cps)
    cells = [(c, is_v, cell) for c in d.configs for is_v in (True, False) if (cell := cp.get((c, is_v))) is not None]
    drawn = [(c, is_v) for c, is_v, _ in cells]
    for n, (c, is_v, cell) in enumerate(cells):
        dx = (n - (len(drawn) - 1) / 2) * 0.012 * span
        ax.plot([x + dx for x in cps], [cell[x] for x in cps], ms=6, lw=1.3, **line_kw(c, is_v))
    ax.set_xticks(cps)
    ax.set_xlabel("actions (checkpoints from the study config)")
    ax.set_ylabel("cumulative SR (%), mean over tasks")
    ax.set_ylim(-3, 103)
    ax.set_title("Cumulative SR at action checkpoints")
    _line_legend(fig, drawn, ("Vanilla", "Mirror"), line=True)
    return fig


def _sr_difficulty(d: StudyData, k: int, build: Path):
    """SR against d(τ), one point per task and condition: Vanilla filled, suites open, in each configuration's style."""
    import matplotlib.pyplot as plt

    values, _ = load_difficulty(build, d.suites)
    sr = M.score_sr(d.records, ("configuration", "task", "condition"), min_episodes=k)
    fig, ax = plt.subplots(figsize=(7.5, 4), layout="constrained")
    xs = [x for x in values.values() if x is not None]
    step = 0.006 * ((max(xs) - min(xs)) or 1.0) if xs else 0.0
    points = {}
    for c in d.configs:
        for is_v in (True, False):
            pts = sorted((x, cell.sr) for (cc, t, cond), cell in sr.items()
                         if cc == c and cell is not None and (cond == VANILLA) == is_v
                         and (x := values.get((t, cond))) is not None)
            if pts:
                points[(c, is_v)] = pts
    for n, ((c, is_v), pts) in enumerate(points.items()):
        dx = (n - (len(points) - 1) / 2) * step
        kw = line_kw(c, is_v) | {"linestyle": "none"}
        ax.plot([x + dx for x, _ in pts], [y for _, y in pts], ms=7, **kw)
    for t in d.config.tasks:
        x = values.get((t, VANILLA))
        if x is not None:
            ax.axvline(x, color="0.8", lw=0.8, zorder=0)
            ax.text(x, 104, task_title(t), rotation=90, fontsize=7, ha="center", va="bottom")
    if not points:
        ax.text(0.5, 0.5, "no task with a difficulty and at least k episodes" if values else
                "no suite report.json carries tracer.difficulty", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("task difficulty d(τ) under the condition's rules (tracer)")
    ax.set_ylabel("SR (%)")
    ax.set_ylim(-3, 135)
    ax.set_yticks(range(0, 101, 20))
    ax.set_title("SR against task difficulty across tasks and suites")
    _line_legend(fig, list(points), ("Vanilla", "Mirror suites"), line=False)
    return fig


def _line_legend(fig, drawn: list[tuple[str, bool]], names: tuple[str, str], *, line: bool) -> None:
    """One legend right of the axes, one entry per drawn (configuration, is Vanilla) series."""
    handles = [line_handle(c, is_v, f"{cname(c)} ({names[0] if is_v else names[1]})", line=line) for c, is_v in drawn]
    if handles:
        fig.legend(handles=handles, loc="outside right upper", fontsize=7)


def _save(fig, path: Path) -> Path:
    """Save ``fig`` as a PNG without a timestamp or version in its metadata (same data -> same bytes)."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)
    return path
