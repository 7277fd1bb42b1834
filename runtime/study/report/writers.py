"""The report folder: tables as CSV and LaTeX, report.md, report.html, plots and trajectories."""
from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass
from pathlib import Path

from compiler.core.canonical import atomic_write
from runtime.records import EpisodeRecord

from ..store import Store
from .data import StudyData, load_study
from .plots import write_plots
from .tables import MIN_EPISODES, Table, build_tables

#: Episode fields listed in the HTML episode index, in column order.
_INDEX_FIELDS = ("world", "condition", "task", "configuration", "model", "repetition", "score", "actions")


@dataclass
class ReportResult:
    """Where a report was written, its tables and the record counts behind it."""

    out_dir: Path
    markdown: Path
    html: Path
    tables: list[Table]
    n_valid: int
    n_excluded: int
    n_missing: int

    def table(self, key: str) -> Table:
        return next(t for t in self.tables if t.key == key)


def write_report(path: str | Path, *, out_dir: str | Path | None = None, min_episodes: int = MIN_EPISODES,
                 trajectories: bool = True) -> ReportResult:
    """Render every table, plot and the HTML page of the study at ``path``."""
    d = load_study(path)
    k = int(min_episodes)
    out = Path(out_dir) if out_dir is not None else d.path / "report"
    out.mkdir(parents=True, exist_ok=True)
    tables = build_tables(d, k)
    for t in tables:
        atomic_write(out / "tables" / f"{t.key}.csv", t.csv_text().encode())
        atomic_write(out / "tables" / f"{t.key}.tex", t.latex().encode())
    excl = Table("exclusions", "Excluded records", "Records that failed the plan check (Appendix D) and why.",
                 ["Episode", "Reasons"], [[x.episode_id or "?", "; ".join(x.reasons)] for x in d.excluded])
    atomic_write(out / "exclusions.csv", excl.csv_text().encode())
    plots = write_plots(d, out / "plots", k)
    if trajectories:
        _write_trajectories(d, out / "trajectories")
    summary = (f"{len(d.records)} valid episodes of {d.plan_size} planned; {len(d.excluded)} excluded; "
               f"{len(d.missing)} missing; {len(d.faults)} logged faults. Build {d.meta.get('fingerprint', '?')}. "
               f"Cells with fewer than {k} episodes (or comparisons) read n<{k}.")
    md_path = out / "report.md"
    atomic_write(md_path, _markdown(d, summary, tables, excl, plots).encode())
    html_path = out / "report.html"
    atomic_write(html_path, _html(d, summary, tables, excl, plots, trajectories).encode())
    return ReportResult(out, md_path, html_path, tables, len(d.records), len(d.excluded), len(d.missing))


def _write_trajectories(d: StudyData, tdir: Path) -> None:
    """One ``<episode_id>.jsonl`` per stored trajectory: a head line (the episode record, if valid,
    and its evaluator events), then one line per action."""
    tdir.mkdir(exist_ok=True)
    rec_by_id = {r.episode_id: r for r in d.records}
    store = Store.open(d.store_path, create=False)
    try:
        for eid, traj, events in store.iter_trajectories():
            r = rec_by_id.get(eid)
            head = {"type": "episode", "episode_id": eid, "valid": r is not None, "events": json.loads(events or "[]")}
            if r is not None:
                head["record"] = r.to_dict()
            (tdir / f"{eid}.jsonl").write_text(json.dumps(head, sort_keys=True) + "\n" + traj)
    finally:
        store.close()


def _markdown(d: StudyData, summary: str, tables: list[Table], excl: Table, plots: dict[str, Path]) -> str:
    md = [f"# Study report: {d.config.name}", "", d.config.description, "", summary, ""]
    md += [t.markdown() for t in tables]
    md += [excl.markdown() if d.excluded else "### Excluded records\n\nNone.\n"]
    md += ["### Plots", "", *(f"![{n}](plots/{p.name})" for n, p in plots.items()), ""]
    return "\n".join(md)


def _episode_row(r: EpisodeRecord, link: bool) -> str:
    cells = "".join(f"<td>{html.escape(str(getattr(r, c)))}</td>" for c in _INDEX_FIELDS)
    eid = r.episode_id
    return "<tr>" + cells + (f'<td><a href="trajectories/{eid}.jsonl">{eid}</a></td>' if link else f"<td>{eid}</td>") + "</tr>"


def _html(d: StudyData, summary: str, tables: list[Table], excl: Table, plots: dict[str, Path],
          link_trajectories: bool) -> str:
    """The self-contained HTML page: tables, plots embedded as base64, the episode index."""
    imgs = "".join(
        f'<figure><img alt="{n}" src="data:image/png;base64,{base64.b64encode(p.read_bytes()).decode()}"></figure>'
        for n, p in plots.items()
    )
    ep_rows = "".join(_episode_row(r, link_trajectories) for r in d.records)
    name = html.escape(d.config.name)
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Study {name}</title>
<style>body{{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}}table{{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}td:first-child,th:first-child{{text-align:left}}.cap{{color:#555;font-size:13px}}
img{{max-width:100%}}</style></head><body>
<h1>Study report: {name}</h1><p>{html.escape(d.config.description)}</p><p>{html.escape(summary)}</p>
{''.join(t.html() for t in tables)}
<h2>Plots</h2>{imgs}
{excl.html() if d.excluded else '<h3>Excluded records</h3><p>None.</p>'}
<h2>Episodes</h2><details><summary>{len(d.records)} valid episodes (trajectory links)</summary>
<table><thead><tr><th>World</th><th>Condition</th><th>Task</th><th>Configuration</th><th>Model</th><th>Rep</th><th>Score</th><th>Actions</th><th>Trajectory</th></tr></thead>
<tbody>{ep_rows}</tbody></table></details></body></html>
"""
