"""The report's matplotlib figures (Agg backend), saved as PNGs.

Every series differs in more than colour (hatching for bars; marker, line style and a small
horizontal offset for lines), so the figures read in greyscale and no line hides another.
A zero bar is drawn as a marked baseline and labelled ``0``; a missing cell is labelled ``n/a``.
"""
from __future__ import annotations

from pathlib import Path

from mcbuild.runtime.records import HIDDEN, VANILLA, select
from mcbuild.runtime.study import metrics as M
from .data import StudyData
from .difficulty import load_difficulty
from .labels import cname, mname, sname, task_title

#: Greys and hatches for bar series (readable without colour).
_FILL = ["#1b1b1b", "#7a7a7a", "#ffffff", "#b5b5b5", "#4a4a4a", "#dcdcdc"]
_HATCH = ["", "//", "..", "xx", "\\\\", "oo"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
FIG3_TASKS = ("iron_armor", "diamond")


def write_plots(d: StudyData, out: Path, k: int, build: Path) -> dict[str, Path]:
    """Write every plot into ``out`` (``build`` holds the suites' report.json); returns plot name -> PNG path."""
    import matplotlib

    matplotlib.use("Agg")
    out.mkdir(parents=True, exist_ok=True)
    return {"rie_by_suite": _rie_by_suite(d, out / "rie_by_suite.png", k),
            "figure3": _figure3(d, out / "figure3.png", k),
            "checkpoints": _checkpoints(d, out / "checkpoints.png", k),
            "sr_difficulty": _sr_difficulty(d, out / "sr_difficulty.png", k, build)}


def _bars(ax, suites: list[str], series: list[tuple[str, dict]], k: int) -> None:
    """Grouped bars: ``series`` is (label, suite -> Estimate | None); error bars are the intervals."""
    width = 0.8 / max(1, len(series))
    for i, (label, cells) in enumerate(series):
        for j, s in enumerate(suites):
            x = j - 0.4 + width * (i + 0.5)
            e = cells.get(s)
            if e is None:
                ax.text(x, 0, "n/a", ha="center", va="bottom", fontsize=7, rotation=90)
                continue
            ax.bar(x, e.value, width=width, color=_FILL[i % 6], hatch=_HATCH[i % 6], edgecolor="black", lw=0.7,
                   label=label if j == 0 else None)
            ax.errorbar(x, e.value, yerr=e.half_width, color="black", capsize=2, lw=0.8)
            if round(e.value, 1) == 0:
                ax.plot([x - width / 2, x + width / 2], [0, 0], color="black", lw=2.5)
                ax.text(x, 1.5, "0", ha="center", va="bottom", fontsize=7)
        if not any(cells.get(s) is not None for s in suites):
            ax.bar([], [], color=_FILL[i % 6], hatch=_HATCH[i % 6], edgecolor="black", label=f"{label} (no data)")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(range(len(suites)), [sname(s) for s in suites])


def _rie_by_suite(d: StudyData, path: Path, k: int) -> Path:
    """RIE_SR per suite and hidden configuration, pooled over models and tasks, with 95% intervals."""
    import matplotlib.pyplot as plt

    iv = M.rie_sr_interval(d.records, ("condition", "configuration"), min_pairs=k, variance="agresti_coull")
    series = [(cname(c), {s: iv.get((s, c)) for s in d.suites}) for c in d.hidden_configs]
    fig, ax = plt.subplots(figsize=(8, 4))
    _bars(ax, d.suites, series, k)
    ax.set_ylabel("RIE_SR (points)")
    ax.set_title("RIE_SR by suite and configuration, pooled over models and tasks")
    if series:
        ax.legend(fontsize=8)
    return _save(fig, path)


def figure3_cells(d: StudyData, k: int) -> dict[tuple[str, str], tuple[list[str], dict]]:
    """(model, task) -> (compared configurations, (configuration, suite) -> RIE_SR Estimate | None)."""
    hidden = select(d.records, disclosure=HIDDEN)
    tasks = [t for t in FIG3_TASKS if t in d.config.tasks]
    out = {}
    for mo in d.models:
        rs = select(hidden, model=mo)
        compared = M.compared_configurations(rs, tasks=tasks) if tasks else []
        for t in tasks:
            iv = M.rie_sr_interval(select(rs, task=t, configuration=set(compared)), ("configuration", "condition"),
                                   strata=("task",), variance="agresti_coull", min_pairs=k)
            out[(mo, t)] = (compared, {(c, s): iv.get((c, s)) for c in compared for s in d.suites})
    return out


def _figure3(d: StudyData, path: Path, k: int) -> Path:
    """Figure 3: RIE_SR by suite for the compared set, one panel per model and task."""
    import matplotlib.pyplot as plt

    cells = figure3_cells(d, k)
    tasks = [t for t in FIG3_TASKS if t in d.config.tasks]
    nrows, ncols = max(1, len(d.models)), max(1, len(tasks))
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols, 3.4 * nrows), squeeze=False, sharey=True)
    for i, mo in enumerate(d.models):
        for j, t in enumerate(tasks):
            ax = axes[i][j]
            compared, iv = cells[(mo, t)]
            ax.set_title(f"{task_title(t)} · {mname(mo)}", fontsize=9)
            if not compared:
                ax.text(0.5, 0.5, "no configuration has Vanilla SR ≥ 50%\non both tasks", ha="center",
                        va="center", transform=ax.transAxes, fontsize=8)
                continue
            _bars(ax, d.suites, [(cname(c), {s: iv[(c, s)] for s in d.suites}) for c in compared], k)
            ax.legend(fontsize=7)
        axes[i][0].set_ylabel("RIE_SR (points)")
    if not tasks:
        axes[0][0].text(0.5, 0.5, "the study has neither Iron Armor nor Diamond", ha="center", transform=axes[0][0].transAxes)
    return _save(fig, path)


def _checkpoints(d: StudyData, path: Path, k: int) -> Path:
    """Cumulative SR at the study's checkpoints; Vanilla solid, Mirror dashed, one marker per configuration."""
    import matplotlib.pyplot as plt

    cps = d.config.report_checkpoints()
    cp = M.checkpoint_sr(d.records, cps, ("configuration", "is_vanilla"), average_over="task", min_episodes=k)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    span = (max(cps) - min(cps)) or max(cps)
    step = 0.012 * span
    n = 0
    for i, c in enumerate(d.configs):
        for is_v, style in ((True, "-"), (False, "--")):
            cell = cp.get((c, is_v))
            if cell is None:
                continue
            dx = (n - (2 * len(d.configs) - 1) / 2) * step
            ax.plot([x + dx for x in cps], [cell[x] for x in cps], style, color="black" if is_v else "0.45",
                    marker=_MARKERS[i % 8], mfc="white" if not is_v else "black", ms=6, lw=1.3,
                    label=f"{cname(c)} ({'Vanilla' if is_v else 'Mirror'})")
            n += 1
    ax.set_xticks(cps)
    ax.set_xlabel("actions (checkpoints from the study config)")
    ax.set_ylabel("cumulative SR (%), mean over tasks")
    ax.set_ylim(-3, 103)
    ax.set_title("Cumulative SR at action checkpoints")
    if ax.lines:
        ax.legend(fontsize=7)
    return _save(fig, path)


def _sr_difficulty(d: StudyData, path: Path, k: int, build: Path) -> Path:
    """SR against d(τ), one point per task and condition: Vanilla filled, suites open, one marker per configuration."""
    import matplotlib.pyplot as plt

    values, _ = load_difficulty(build, d.suites)
    sr = M.score_sr(d.records, ("configuration", "task", "condition"), min_episodes=k)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    xs = [x for x in values.values() if x is not None]
    step = 0.006 * ((max(xs) - min(xs)) or 1.0) if xs else 0.0
    n = 0
    for i, c in enumerate(d.configs):
        for is_v in (True, False):
            pts = sorted((values[(t, cond)], cell.sr) for (cc, t, cond), cell in sr.items()
                         if cc == c and cell is not None and (cond == VANILLA) == is_v
                         and values.get((t, cond)) is not None)
            if not pts:
                continue
            dx = (n - (2 * len(d.configs) - 1) / 2) * step
            ax.plot([x + dx for x, _ in pts], [y for _, y in pts], linestyle="none", marker=_MARKERS[i % 8],
                    mfc="black" if is_v else "white", mec="black", ms=7,
                    label=f"{cname(c)} ({'Vanilla' if is_v else 'Mirror suites'})")
            n += 1
    for t in d.config.tasks:
        x = values.get((t, VANILLA))
        if x is not None:
            ax.axvline(x, color="0.8", lw=0.8, zorder=0)
            ax.text(x, 104, task_title(t), rotation=90, fontsize=7, ha="center", va="bottom")
    if not ax.lines:
        ax.text(0.5, 0.5, "no task with a difficulty and at least k episodes" if values else
                "no suite report.json carries tracer.difficulty", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("task difficulty d(τ) under the condition's rules (tracer)")
    ax.set_ylabel("SR (%)")
    ax.set_ylim(-3, 135)
    ax.set_yticks(range(0, 101, 20))
    ax.set_title("SR against task difficulty across tasks and suites")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="center right")
    return _save(fig, path)


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)
    return path
