"""The report's matplotlib figures (Agg backend), saved as PNGs."""
from __future__ import annotations

from pathlib import Path

from .. import metrics as M
from .data import StudyData
from .labels import cname, sname


def write_plots(d: StudyData, out: Path, k: int) -> dict[str, Path]:
    """Write every plot into ``out``; returns plot name -> PNG path."""
    import matplotlib

    matplotlib.use("Agg")
    out.mkdir(parents=True, exist_ok=True)
    return {"rie_by_suite": _rie_by_suite(d, out / "rie_by_suite.png", k),
            "checkpoints": _checkpoints(d, out / "checkpoints.png", k)}


def _rie_by_suite(d: StudyData, path: Path, k: int) -> Path:
    """Bars of RIE_SR per suite, one bar per hidden configuration."""
    import matplotlib.pyplot as plt

    suites = d.suites
    r = M.rie(d.records, ("condition", "configuration"), min_pairs=k)
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / max(1, len(d.hidden_configs))
    for i, c in enumerate(d.hidden_configs):
        xs, ys = [], []
        for j, s in enumerate(suites):
            cell = r.get((s, c))
            if cell is not None:
                xs.append(j - 0.4 + width * (i + 0.5))
                ys.append(cell.rie_sr)
        ax.bar(xs, ys, width=width, label=cname(c))
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(range(len(suites)), [sname(s) for s in suites])
    ax.set_ylabel("RIE_SR (points)")
    ax.set_title("RIE_SR by suite and configuration (Vanilla − Mirror)")
    if d.hidden_configs:
        ax.legend(fontsize=8)
    return _save(fig, path)


def _checkpoints(d: StudyData, path: Path, k: int) -> Path:
    """Cumulative SR at the action checkpoints, Vanilla solid and Mirror dashed."""
    import matplotlib.pyplot as plt

    cps = d.config.report_checkpoints()
    cp = M.checkpoint_sr(d.records, cps, ("configuration", "is_vanilla"), average_over="task", min_episodes=k)
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, c in enumerate(d.configs):
        color = f"C{i % 10}"
        for is_v, style in ((True, "-"), (False, "--")):
            cell = cp.get((c, is_v))
            if cell is not None:
                ax.plot(cps, [cell[x] for x in cps], style, color=color, marker="o",
                        label=f"{cname(c)} ({'Vanilla' if is_v else 'Mirror'})")
    ax.set_xlabel("actions")
    ax.set_ylabel("cumulative SR (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Cumulative SR at action checkpoints")
    if ax.lines:
        ax.legend(fontsize=7)
    return _save(fig, path)


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
