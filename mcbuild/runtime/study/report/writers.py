"""The report folder: tables as CSV and LaTeX, report.md, report.html, plots and trajectories."""
from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

from mcbuild.compiler.core.canonical import atomic_write
from mcbuild.compiler.core.owned import claim_folder
from mcbuild.compiler.core.scratch import sweep
from mcbuild.runtime.records import EpisodeRecord
from mcbuild.runtime.study.store.results import Store, StoreError
from .data import StudyData, load_study
from .extras import extra_tables
from .labels import models_note
from .milestones import milestone_tables
from .plots import write_plots
from .stamp import STAMP_NAME, inputs_digest, mark_current
from .table import Table
from .tables import MIN_EPISODES, build_tables

#: What each plot shows (its caption on the page and in report.md).
PLOT_CAPTIONS = {
    "rie_by_suite": "RIE_SR by suite for each configuration evaluated without rule descriptions, pooled over models "
                    "and tasks. Error bars: 95% normal intervals from Agresti–Coull variances stratified by model "
                    "and task (they stay informative at 0% and 100%), clipped to RIE_SR's feasible range "
                    "[-100, 100]. A bold baseline marked 0 is a zero effect; n/a marks a cell with fewer than k "
                    "comparisons.",
    "figure3": "Figure 3: RIE_SR by suite on Iron Armor and Diamond, one panel per task and model, for the compared "
               "set of §3.5 (configurations whose Vanilla SR is at least 50% on both tasks, per model). Error bars: "
               "95% normal intervals from Agresti–Coull variances, clipped to [-100, 100].",
    "checkpoints": "Cumulative SR at the study's action checkpoints, averaged over tasks. Vanilla: solid lines with "
                   "filled markers; Mirror: dashed lines with open markers; series are shifted slightly along x so "
                   "that equal lines stay visible.",
    "sr_difficulty": "SR against task difficulty d(τ) (MineExplorer Figure 4): one point per configuration, task and "
                     "condition, at the task's d(τ) under that condition's rules (from the suites' report.json); "
                     "filled markers Vanilla, open markers the Mirror suites, shifted slightly along x so that equal "
                     "points stay visible; grey lines mark each task's Vanilla d(τ). Cells with fewer than k "
                     "episodes are left out.",
}
#: Which table each plot sits beside (a plot whose table is absent goes after the last table).
PLOT_TABLE = {"rie_by_suite": "table3_suite", "figure3": "table8_task", "checkpoints": "table5_checkpoints",
              "sr_difficulty": "tableD_difficulty"}
#: What a report folder holds (``claim_folder``: a folder of other entries is not taken for a report).
REPORT_ENTRIES = ("report.md", "report.html", "exclusions.csv", STAMP_NAME, "tables", "plots", "trajectories", "viewer",
                  "card.json")      # the results card, written beside the report by `study report` (mcbuild.analysis.card)
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
    viewer: Any = None          # what the ViewerWriter returned (mcbuild.runtime.study.viewer.ViewerResult)

    def table(self, key: str) -> Table:
        return next(t for t in self.tables if t.key == key)


class Progress(Protocol):
    """Hears of each stage of the report (``done`` of ``total`` steps, when it has steps)."""

    def __call__(self, stage: str, done: int = 0, total: int = 0) -> None: ...


def _silent(stage: str, done: int = 0, total: int = 0) -> None:
    """No progress shown."""


class ViewerWriter(Protocol):
    """Writes a study's trajectory viewer into ``out`` (``mcbuild.runtime.study.viewer.write_viewer``).

    The report never imports the viewer (the viewer reads the report's labels): its caller, the CLI,
    hands it over, and the report runs it before it links it and marks the folder current."""

    def __call__(self, d: Any, out: Path, *, build: Path, map_limit: int | None = None,
                 progress: Callable[[int, int], None] | None = None) -> Any: ...


def write_report(path: str | Path, *, out_dir: str | Path | None = None, min_episodes: int = MIN_EPISODES,
                 trajectories: bool = True, build: str | Path | None = None, viewer: ViewerWriter | None = None,
                 map_limit: int | None = None, progress: Progress | None = None) -> ReportResult:
    """Render every table, plot and the HTML page of the study at ``path`` (and, with ``viewer``, the
    trajectory viewer beside it); ``build`` holds the suites' report.json and the saves.
    ``progress(stage, done, total)`` hears of each stage (and of each episode of the viewer)."""
    from mcbuild.compiler.core.paths import BUILD

    stage: Progress = progress or _silent
    stage("reading the study")
    if out_dir is not None:
        claim_folder(Path(out_dir), "report", REPORT_ENTRIES, check_only=True)   # refused before any work
    k = int(min_episodes)
    build_dir = Path(build) if build is not None else BUILD
    try:                                # before reading: a store that grows meanwhile is not marked current
        digest: str | None = inputs_digest(Path(path), build_dir,
                                           report_options(k, trajectories, bool(viewer), map_limit))
    except StoreError:
        digest = None                   # load_study says what is wrong with it
    d = load_study(path)
    out = Path(out_dir) if out_dir is not None else d.path / "report"
    claim_folder(out, "report", REPORT_ENTRIES)     # never into a folder of the user's
    sweep(out, "report", recursive=True)            # the temporaries of a killed report
    stage("tables")
    paper, extra = build_tables(d, k), extra_tables(d, k, build_dir)
    at = next(i for i, t in enumerate(paper) if t.key == "table3_suite") + 1
    # the SR baseline table follows Table 3; the milestone tables follow the paper's
    tables = paper[:at] + extra[:1] + paper[at:] + milestone_tables(d, k, build_dir) + extra[1:]
    for t in (t for t in tables if not t.omitted):
        atomic_write(out / "tables" / f"{t.key}.csv", t.csv_text().encode(), tool="report")
        atomic_write(out / "tables" / f"{t.key}.tex", t.latex().encode(), tool="report")
        atomic_write(out / "tables" / f"{t.key}.md", t.markdown().encode(), tool="report")
    excl = Table("exclusions", "Excluded records", "Records that failed the plan check (Appendix D) and why.",
                 ["Episode", "Reasons"], [[x.episode_id or "?", "; ".join(x.reasons)] for x in d.excluded])
    atomic_write(out / "exclusions.csv", excl.csv_text().encode(), tool="report")
    stage("plots")
    plots = write_plots(d, out / "plots", k, build_dir)
    if trajectories:
        stage("trajectories")
        _write_trajectories(d, out / "trajectories")
    viewer_result = None
    if viewer:
        stage("viewer: maps")
        viewer_result = viewer(d, out / "viewer", build=build_dir, map_limit=map_limit,
                               progress=lambda done, total: stage("viewer: episodes", done, total))
    summary = (f"{len(d.records)} valid episodes of {d.plan_size} planned; {len(d.excluded)} excluded; "
               f"{len(d.missing)} missing; {len(d.faults)} logged faults (see the fault log). "
               f"{models_note(d.models)} Cells with fewer than {k} episodes (or comparisons) read n<{k}; "
               "every other cell shows its n.") + cost_stop_note(d)
    fingerprint = str(d.meta.get("fingerprint", "?"))
    md_path = out / "report.md"
    atomic_write(md_path, _markdown(d, summary, fingerprint, tables, excl, plots).encode(), tool="report")
    html_path = out / "report.html"
    atomic_write(html_path, _html(d, summary, fingerprint, tables, excl, plots, trajectories, bool(viewer)).encode(),
                 tool="report")
    if digest is not None:
        mark_current(out, digest)
    return ReportResult(out, md_path, html_path, tables, len(d.records), len(d.excluded), len(d.missing),
                        viewer_result)


def report_options(min_episodes: int = MIN_EPISODES, trajectories: bool = True, viewer: bool = True,
                   map_limit: int | None = None) -> dict[str, Any]:
    """The options a report is made with, as its inputs digest records them."""
    return {"min_episodes": int(min_episodes), "trajectories": trajectories, "viewer": viewer, "map_limit": map_limit}


def cost_stop_note(d: StudyData) -> str:
    """The summary's sentence about a run that stopped at ``max_cost_usd`` ("" when none did)."""
    stop = d.cost_stop
    if stop is None:
        return ""
    return (f" The study stopped at its cost limit: ${stop['spent_usd']:.4f} spent of max_cost_usd "
            f"${stop['limit_usd']:g}, {stop['stored']} of {stop['planned']} planned episodes stored; raise "
            f"max_cost_usd and run `mcbuild study run CONFIG --resume` to continue.")


def _write_trajectories(d: StudyData, tdir: Path) -> None:
    """One ``<episode_id>.jsonl`` per stored trajectory: a head line (the episode record, if valid,
    and its evaluator events), then one line per action."""
    tdir.mkdir(exist_ok=True)
    rec_by_id = {r.episode_id: r for r in d.records}
    store = Store.read_only(d.store_path)
    try:
        for eid, traj, events in store.iter_trajectories():
            r = rec_by_id.get(eid)
            head = {"type": "episode", "episode_id": eid, "valid": r is not None, "events": json.loads(events or "[]")}
            if r is not None:
                head["record"] = r.to_dict()
            (tdir / f"{eid}.jsonl").write_text(json.dumps(head, sort_keys=True) + "\n" + traj)
    finally:
        store.close()


def _markdown(d: StudyData, summary: str, fingerprint: str, tables: list[Table], excl: Table,
              plots: dict[str, Path]) -> str:
    md = [f"# Study report: {d.config.name}", "", d.config.description, "", summary, "",
          f"Build fingerprint: `{fingerprint}`", ""]
    for t, names in _placed(tables, plots):
        md += [t.markdown()] + [f"![{n}](plots/{plots[n].name})\n\n*{PLOT_CAPTIONS[n]}*\n" for n in names]
    md += [excl.markdown() if d.excluded else "### Excluded records\n\nNone.\n"]
    return "\n".join(md)


def _placed(tables: list[Table], plots: dict[str, Path]) -> list[tuple[Table, list[str]]]:
    """Each table with the plots that sit beside it (PLOT_TABLE; the rest beside the last table)."""
    keys = {t.key for t in tables}
    out = [(t, [n for n in plots if PLOT_TABLE.get(n) == t.key]) for t in tables]
    out[-1][1].extend(n for n in plots if PLOT_TABLE.get(n) not in keys)
    return out


def _sorted_records(d: StudyData) -> list[EpisodeRecord]:
    """Episodes in reading order: world, task, model, configuration, condition (Vanilla first), repetition."""
    configs = {c: i for i, c in enumerate(d.configs)}
    return sorted(d.records, key=lambda r: (r.world, d.config.tasks.index(r.task) if r.task in d.config.tasks else 9,
                                            r.model, configs.get(r.configuration, 99), r.condition != "vanilla",
                                            r.condition, r.repetition))


def _episode_row(d: StudyData, r: EpisodeRecord, link: bool) -> str:
    cells = "".join(f"<td>{html.escape(str(getattr(r, c)))}</td>" for c in _INDEX_FIELDS)
    cells += f"<td>{html.escape(d.end_reason(r.episode_id))}</td>"
    eid = r.episode_id
    return "<tr>" + cells + (f'<td><a href="trajectories/{eid}.jsonl">{eid}</a></td>' if link else f"<td>{eid}</td>") + "</tr>"


_CSS = """body{font-family:sans-serif;max-width:1500px;margin:auto;padding:1em;overflow-wrap:anywhere}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;
text-align:right;overflow-wrap:normal}td:first-child,th:first-child{text-align:left}.cap,.omit{color:#444;font-size:13px}
.omit{font-style:italic}code{font-size:12px;word-break:break-all}img{max-width:100%}figcaption{font-size:13px;color:#444}
nav a{margin-right:.8em}.with-plot{display:flex;flex-wrap:wrap;gap:0 1.5em;align-items:flex-start}
.with-plot>div{flex:1 1 520px;min-width:0;overflow-x:auto}.with-plot>figure{flex:1 1 560px;max-width:800px;margin:1em 0}
#episodes th{cursor:pointer}#episodes th[aria-sort=ascending]::after{content:" ▲"}
#episodes th[aria-sort=descending]::after{content:" ▼"}"""


#: The episode index's search (every word must appear in the row) and sort (a header click; numbers
#: sort as numbers, a second click reverses).
_INDEX_JS = """(() => {
const body = document.querySelector("#episodes tbody"), rows = [...body.rows], pos = new Map(rows.map((r, i) => [r, i]));
document.getElementById("ep-search").addEventListener("input", (ev) => {
  const words = ev.target.value.toLowerCase().split(/\\s+/).filter(Boolean);
  rows.forEach((r) => { r.hidden = !words.every((w) => r.textContent.toLowerCase().includes(w)); });
});
document.querySelectorAll("#episodes th").forEach((th, i) => th.addEventListener("click", () => {
  const up = th.getAttribute("aria-sort") !== "ascending", cell = (r) => r.cells[i].textContent;
  const num = rows.every((r) => cell(r) !== "" && !isNaN(cell(r)));
  const key = (r) => (num ? +cell(r) : cell(r));
  document.querySelectorAll("#episodes th").forEach((h) => h.removeAttribute("aria-sort"));
  th.setAttribute("aria-sort", up ? "ascending" : "descending");
  rows.slice().sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : pos.get(a) - pos.get(b)) * (up ? 1 : -1))
    .forEach((r) => body.appendChild(r));
}));
})();"""


def _html(d: StudyData, summary: str, fingerprint: str, tables: list[Table], excl: Table, plots: dict[str, Path],
          link_trajectories: bool, viewer: bool) -> str:
    """The self-contained HTML page: tables, plots embedded as base64, the episode index."""
    def figure(n: str) -> str:
        b64 = base64.b64encode(plots[n].read_bytes()).decode()
        return (f'<figure id="plot-{n}"><img alt="{n}" src="data:image/png;base64,{b64}">'
                f"<figcaption>{html.escape(PLOT_CAPTIONS[n])}</figcaption></figure>")

    body = "".join(f'<section class="with-plot"><div>{t.html()}</div>{"".join(figure(n) for n in names)}</section>'
                   if names else t.html() for t, names in _placed(tables, plots))
    ep_rows = "".join(_episode_row(d, r, link_trajectories) for r in _sorted_records(d))
    name = html.escape(d.config.name)
    nav = "".join(f'<a href="#{t.key}">{html.escape(t.title.split(".")[0])}</a>' for t in tables)
    view = '<p><a id="viewer-link" href="viewer/index.html">Open the trajectory viewer</a> (episode browser, ' \
           'paired Vanilla/Mirror view, world maps).</p>' if viewer else ""
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Study {name}</title>
<style>{_CSS}</style></head><body>
<h1>Study report: {name}</h1><p>{html.escape(d.config.description)}</p><p>{html.escape(summary)}</p>
<p>Build fingerprint: <code>{html.escape(fingerprint)}</code></p>{view}<nav>{nav}</nav>
{body}
{excl.html() if d.excluded else '<h3>Excluded records</h3><p>None.</p>'}
<h2>Episodes</h2><details><summary>{len(d.records)} valid episodes, by world, task, configuration and condition</summary>
<p><label>search <input id="ep-search" type="search" placeholder="world, task, end…"></label>
<span class=cap>Click a column header to sort by it (again to reverse).</span></p>
<table id="episodes"><thead><tr><th>World</th><th>Condition</th><th>Task</th><th>Configuration</th><th>Model</th><th>Rep</th><th>Score</th><th>Actions</th><th>End</th><th>Trajectory</th></tr></thead>
<tbody>{ep_rows}</tbody></table></details><script>{_INDEX_JS}</script></body></html>
"""
