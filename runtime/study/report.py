"""Study report: the paper's tables, plots and one self-contained HTML page.

``write_report(study_path)`` reads ``results.sqlite``, checks every record
against the study plan (``metrics.check_records``; excluded records are listed
with their reasons), and writes into ``<study>/report/``:

* ``report.md`` -- every table in Markdown, plus exclusions and faults;
* ``tables/<key>.csv`` and ``tables/<key>.tex`` -- each table as CSV and LaTeX;
* ``plots/rie_by_suite.png``, ``plots/checkpoints.png`` (matplotlib, Agg);
* ``report.html`` -- tables and plots (images embedded as base64) with links
  to ``trajectories/<episode_id>.jsonl`` (first line: the episode record and
  its evaluator events; then one line per action).

Tables (paper numbering): 2 by configuration, 3 by suite, 4 disclosure split,
5 checkpoint SR, 8 per task, 9 by biome, 10 disclosure split by model,
11 intervals; plus H (IRR/RL by suite) and Q (within-suite Cochran's Q).
All numbers come from :mod:`runtime.study.metrics`; a cell with fewer than
``min_episodes`` episodes (or comparisons) reads ``n<k``.
"""
from __future__ import annotations

import base64
import csv
import html
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from compiler.core.canonical import atomic_write
from runtime.records import HIDDEN, VANILLA, EpisodeRecord, select

from . import metrics as M
from .config import StudyConfig
from .plan import build_plan, expected_map
from .store import Store

__all__ = ["Table", "StudyData", "load_study", "build_tables", "write_report", "ReportResult", "MIN_EPISODES"]

MIN_EPISODES = 5
EM = "–"

CONFIG_NAMES = {
    "direct": "Direct LLM", "react": "ReAct", "reflexion": "Reflexion", "voyager": "Voyager",
    "xenon": "XENON", "adam": "ADAM", "react_rules": "ReAct w/rules",
}


def suite_title(suite: str) -> str:
    """The ``title`` of the suite's rule manifest in ``specs/`` (blank for a suite without one)."""
    from compiler.core.paths import SPECS
    from compiler.spec.base import read_yaml

    path = SPECS / f"{suite}.yaml"
    return str(read_yaml(path).get("title", "")) if path.is_file() else ""


def task_title(task: str) -> str:
    from compiler.rules.tasks import tasks

    return tasks()[task].title if task in tasks() else task


def cname(c: str) -> str:
    return CONFIG_NAMES.get(c, c)


def sname(s: str) -> str:
    return s.upper() if s.startswith("m") else s


def bname(b: str) -> str:
    return b.replace("_", " ").title()


# ====================================================================== tables


@dataclass
class Table:
    key: str
    title: str
    caption: str
    columns: list[str]
    rows: list[list[str]]

    def markdown(self) -> str:
        out = [f"### {self.title}", "", self.caption, ""]
        out.append("| " + " | ".join(self.columns) + " |")
        out.append("| " + " | ".join("---" for _ in self.columns) + " |")
        for r in self.rows:
            out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
        return "\n".join(out) + "\n"

    def csv_text(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        w.writerows(self.rows)
        return buf.getvalue()

    def latex(self) -> str:
        def esc(s: str) -> str:
            out = []
            for ch in str(s):
                out.append(_LATEX.get(ch, ch))
            return "".join(out)

        spec = "l" + "r" * (len(self.columns) - 1)
        lines = [r"% requires \usepackage{booktabs}", r"\begin{table}[t]", r"\centering", rf"\caption{{{esc(self.title)}. {esc(self.caption)}}}",
                 rf"\begin{{tabular}}{{{spec}}}", r"\toprule", " & ".join(esc(c) for c in self.columns) + r" \\",
                 r"\midrule"]
        lines += [" & ".join(esc(c) for c in r) + r" \\" for r in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines) + "\n"

    def html(self) -> str:
        h = [f'<h3 id="{self.key}">{html.escape(self.title)}</h3>', f"<p class=cap>{html.escape(self.caption)}</p>",
             "<table><thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in self.columns) + "</tr></thead><tbody>"]
        for r in self.rows:
            h.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>")
        h.append("</tbody></table>")
        return "\n".join(h)


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "$": r"\$", "{": r"\{",
          "}": r"\}", "<": r"$<$", ">": r"$>$", "±": r"$\pm$", "Δ": r"$\Delta$", "–": "--", "−": "$-$", "≥": r"$\geq$",
          "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def num(x: float | None, k: int, digits: int = 1) -> str:
    return f"n<{k}" if x is None else f"{x:.{digits}f}"


def signed(x: float | None, k: int, digits: int = 1) -> str:
    if x is None:
        return f"n<{k}"
    v = round(x, digits)
    return f"{0.0:.{digits}f}" if v == 0 else f"{v:+.{digits}f}"


def pm(e: M.Estimate | None, k: int) -> str:
    if e is None:
        return f"n<{k}"
    return f"{signed(e.value, k)} ± {e.half_width:.1f}"


def ss(cell: M.ScoreSR | None, k: int) -> str:
    return f"n<{k}" if cell is None else f"{cell.score:.1f} / {cell.sr:.1f}"


# ======================================================================= data


@dataclass
class StudyData:
    path: Path
    config: StudyConfig
    plan_size: int
    records: list[EpisodeRecord]
    excluded: list[M.Exclusion]
    missing: list[str]
    faults: list[dict]
    store_path: Path
    meta: dict = field(default_factory=dict)

    @property
    def hidden_configs(self) -> list[str]:
        return list(self.config.configurations)

    @property
    def disclosed_configs(self) -> list[str]:
        return list(self.config.disclosure.configurations)

    @property
    def models(self) -> list[str]:
        return list(self.config.models)


def load_study(path: str | Path) -> StudyData:
    """Open a study folder (or its results.sqlite), check records against the plan."""
    path = Path(path)
    store = Store.open(path, create=False)
    try:
        cfg_json = store.config_json()
        if cfg_json is None:
            raise ValueError(f"{store.path} has no study config; was it written by `mcbuild study run`?")
        config = StudyConfig.model_validate(cfg_json)
        plan = build_plan(config)
        expected = expected_map(plan)
        valid, excluded = M.check_records(store.records(), expected)
        return StudyData(
            path=store.path.parent, config=config, plan_size=len(plan), records=valid, excluded=excluded,
            missing=M.missing_episodes(valid, expected), faults=store.faults(), store_path=store.path, meta=store.meta(),
        )
    finally:
        store.close()


def _disclosure_pairs(d: StudyData) -> list[tuple[str, str]]:
    """(hidden configuration, disclosed configuration) pairs: ``react_rules`` -> ``react``."""
    out = []
    for dc in d.disclosed_configs:
        for suffix in ("_rules", "-rules", "_disclosed"):
            if dc.endswith(suffix) and dc[: -len(suffix)] in d.hidden_configs:
                out.append((dc[: -len(suffix)], dc))
                break
    return out


def _suites(d: StudyData) -> list[str]:
    return list(d.config.mirror_conditions)


def build_tables(d: StudyData, k: int = MIN_EPISODES) -> list[Table]:
    recs = d.records
    hidden = select(recs, disclosure=HIDDEN)
    vanilla = select(recs, condition=VANILLA)
    mirror = select(recs, is_mirror=True)
    models = d.models
    configs = d.hidden_configs + d.disclosed_configs
    suites = _suites(d)
    tables: list[Table] = []

    # ---- Table 2: by configuration ------------------------------------------------
    v_cm = M.score_sr(vanilla, ("configuration", "model"), min_episodes=k)
    m_cm = M.score_sr(mirror, ("configuration", "model"), min_episodes=k)
    r_cm = M.rie(recs, ("configuration", "model"), min_pairs=k)
    u_cm = M.mean_actions_cost(mirror, ("configuration", "model"), min_episodes=k)
    cols = ["Configuration"]
    for mo in models:
        cols += [f"{mo} Vanilla", f"{mo} Mirror", f"{mo} RIE_SC", f"{mo} RIE_SR", f"{mo} Actions", f"{mo} Cost"]
    rows = []
    for c in configs:
        row = [cname(c)]
        disclosed = c in d.disclosed_configs
        for mo in models:
            r = r_cm.get((c, mo))
            u = u_cm.get((c, mo))
            row += [
                EM if disclosed else ss(v_cm.get((c, mo)), k),
                ss(m_cm.get((c, mo)), k),
                EM if disclosed else signed(r.rie_sc if r else None, k),
                EM if disclosed else signed(r.rie_sr if r else None, k),
                num(u.actions if u else None, k),
                num(u.cost_usd if u else None, k, 2),
            ]
        rows.append(row)
    tables.append(Table("table2_configuration", "Table 2. Results by configuration and disclosure condition",
                        "Pooled over tasks and Vanilla worlds; Mirror pools the suites. Vanilla and Mirror are "
                        "Score / SR (SR in %); RIE_SR in points; Actions and Cost (USD) averaged over Mirror episodes.",
                        cols, rows))

    # ---- Table 3: by suite ------------------------------------------------------------
    m_s = M.score_sr(select(hidden, is_mirror=True), "condition", min_episodes=k)
    m_all = M.score_sr(select(hidden, is_mirror=True), (), min_episodes=k).get(())
    r_s = M.rie(recs, "condition", min_pairs=k)
    r_all = M.rie(recs, (), min_pairs=k).get(())
    rows = []
    for s in suites:
        c, r = m_s.get((s,)), r_s.get((s,))
        rows.append([sname(s), suite_title(s), num(c.score if c else None, k), num(c.sr if c else None, k),
                     signed(r.rie_sc if r else None, k), signed(r.rie_sr if r else None, k)])
    rows.append(["Pooled", "All suites", num(m_all.score if m_all else None, k), num(m_all.sr if m_all else None, k),
                 signed(r_all.rie_sc if r_all else None, k), signed(r_all.rie_sr if r_all else None, k)])
    tables.append(Table("table3_suite", "Table 3. Mirror performance and RIE by rule suite",
                        "Pooled over models, tasks, the configurations evaluated without rule descriptions and worlds. "
                        "SR in %, RIE_SR in points (Vanilla minus Mirror).",
                        ["Suite", "Rule change", "Score", "SR", "RIE_SC", "RIE_SR"], rows))

    # ---- Table 4 / 10 / 11: disclosure split ----------------------------------------
    pairs = _disclosure_pairs(d)
    cols4 = ["Suite", "Hidden SR", "Disclosed SR", "RIE_SR", "Gap", "ΔSR", "ΔScore"]
    rows4: list[list[str]] = []
    cap4 = "No disclosed configuration in this study."
    for hc, dc in pairs:
        split_s = M.disclosure_split(recs, "condition", hidden_configuration=hc, disclosed_configuration=dc, min_pairs=k)
        split_all = M.disclosure_split(recs, (), hidden_configuration=hc, disclosed_configuration=dc, min_pairs=k).get(())
        vsr = M.score_sr(select(vanilla, configuration=hc), (), min_episodes=k).get(())
        cap4 = (f"{cname(hc)} SR (%) with hidden or disclosed ({cname(dc)}) rules by suite, pooled over models and "
                f"tasks (Vanilla SR {num(vsr.sr if vsr else None, k)}%). RIE_SR = Gap (Vanilla − Disclosed) + ΔSR "
                f"(Disclosed − Hidden), in points.")
        for s, sp in [(sname(x), split_s.get((x,))) for x in suites] + [("Pooled", split_all)]:
            label = s if len(pairs) == 1 else f"{s} ({cname(hc)})"
            rows4.append([label] + ([f"n<{k}"] * 6 if sp is None else [
                num(sp.hidden_sr, k), num(sp.disclosed_sr, k), signed(sp.rie_sr, k), signed(sp.gap_sr, k),
                signed(sp.delta_sr, k), signed(sp.delta_score, k)]))
    if not pairs:
        rows4.append(["–"] * len(cols4))
    tables.append(Table("table4_disclosure", "Table 4. Disclosure split by suite", cap4, cols4, rows4))

    # ---- Table 5: checkpoints ----------------------------------------------------------
    cps = d.config.report_checkpoints()
    cp = M.checkpoint_sr(recs, cps, ("configuration", "is_vanilla"), average_over="task", min_episodes=k)
    cols5 = ["Configuration"] + [f"{c} actions {side}" for c in cps for side in ("Vanilla", "Mirror")]
    rows5 = []
    for c in configs:
        row = [cname(c)]
        for x in cps:
            for is_v in (True, False):
                cell = cp.get((c, is_v))
                if c in d.disclosed_configs and is_v:
                    row.append(EM)
                else:
                    row.append(num(None if cell is None else cell[x], k))
        rows5.append(row)
    tables.append(Table("table5_checkpoints", "Table 5. Cumulative SR (%) at action checkpoints",
                        "SR at checkpoints of the same trajectories (success within the first c actions), averaged "
                        "over tasks; Mirror pools the suites.", cols5, rows5))

    # ---- Table 8: per task ------------------------------------------------------------
    v_t = M.score_sr(vanilla, ("task", "configuration", "model"), min_episodes=k)
    m_t = M.score_sr(mirror, ("task", "configuration", "model"), min_episodes=k)
    r_t = M.rie(recs, ("task", "configuration", "model"), min_pairs=k)
    cols8 = ["Task", "Configuration"]
    for mo in models:
        cols8 += [f"{mo} Vanilla", f"{mo} Mirror", f"{mo} RIE_SC", f"{mo} RIE_SR"]
    rows8 = []
    for t in d.config.tasks:
        for c in configs:
            disclosed = c in d.disclosed_configs
            row = [task_title(t), cname(c)]
            for mo in models:
                r = r_t.get((t, c, mo))
                row += [EM if disclosed else ss(v_t.get((t, c, mo)), k), ss(m_t.get((t, c, mo)), k),
                        EM if disclosed else signed(r.rie_sc if r else None, k),
                        EM if disclosed else signed(r.rie_sr if r else None, k)]
            rows8.append(row)
    tables.append(Table("table8_task", "Table 8. Results by task, configuration and model",
                        "Vanilla and Mirror are Score / SR (SR in %); Mirror pools the suites.", cols8, rows8))

    # ---- Table 9: by biome ------------------------------------------------------------
    v_b = M.score_sr(select(hidden, condition=VANILLA), "biome", min_episodes=k)
    m_b = M.score_sr(select(hidden, is_mirror=True), "biome", min_episodes=k)
    r_b = M.rie(recs, "biome", min_pairs=k)
    biomes = sorted({d.config.biome_of(w) for w in d.config.worlds}, key=lambda b: [d.config.biome_of(w) for w in d.config.worlds].index(b))
    rows9 = []
    for b in biomes:
        v, m, r = v_b.get((b,)), m_b.get((b,)), r_b.get((b,))
        rows9.append([bname(b), num(v.score if v else None, k), num(v.sr if v else None, k),
                      num(m.score if m else None, k), num(m.sr if m else None, k),
                      signed(r.rie_sc if r else None, k), signed(r.rie_sr if r else None, k)])
    tables.append(Table("table9_biome", "Table 9. Vanilla and paired Mirror Score, SR and RIE by biome",
                        "Pooled over models, tasks and the configurations evaluated without rule descriptions.",
                        ["Biome", "Vanilla Score", "Vanilla SR", "Mirror Score", "Mirror SR", "RIE_SC", "RIE_SR"], rows9))

    # ---- Table 10: split by model -------------------------------------------------------
    cols10 = ["Suite"]
    for mo in models:
        cols10 += [f"{mo} RIE_SR", f"{mo} Gap", f"{mo} ΔSR"]
    rows10: list[list[str]] = []
    cap10 = "No disclosed configuration in this study."
    for hc, dc in pairs:
        cap10 = f"Split of {cname(hc)}'s RIE_SR by suite and model, pooled over tasks; Gap = Vanilla − Disclosed, ΔSR = Disclosed − Hidden (points)."
        sp_ms = M.disclosure_split(recs, ("model", "condition"), hidden_configuration=hc, disclosed_configuration=dc, min_pairs=k)
        sp_m = M.disclosure_split(recs, ("model",), hidden_configuration=hc, disclosed_configuration=dc, min_pairs=k)
        for s in suites + [None]:
            row = [(sname(s) if s else "Pooled") + ("" if len(pairs) == 1 else f" ({cname(hc)})")]
            for mo in models:
                sp = sp_ms.get((mo, s)) if s else sp_m.get((mo,))
                row += [f"n<{k}"] * 3 if sp is None else [signed(sp.rie_sr, k), signed(sp.gap_sr, k), signed(sp.delta_sr, k)]
            rows10.append(row)
    if not pairs:
        rows10.append(["–"] * len(cols10))
    tables.append(Table("table10_model_split", "Table 10. Disclosure split by suite and model", cap10, cols10, rows10))

    # ---- Table 11: intervals ------------------------------------------------------------
    iv_s = M.rie_sr_interval(recs, "condition", min_pairs=k)
    iv_all = M.rie_sr_interval(recs, (), min_pairs=k).get(())
    cols11 = ["Row", "All configurations RIE_SR"]
    split_iv_s: dict = {}
    split_iv_all = None
    hc = dc = None
    if pairs:
        hc, dc = pairs[0]
        cols11 += [f"{cname(hc)} RIE_SR", "Gap", "ΔSR"]
        split_iv_s = M.disclosure_split_intervals(recs, "condition", hidden_configuration=hc, disclosed_configuration=dc, min_pairs=k)
        split_iv_all = M.disclosure_split_intervals(recs, (), hidden_configuration=hc, disclosed_configuration=dc, min_pairs=k).get(())
    rows11 = []
    for s in suites + [None]:
        row = [sname(s) if s else "Pooled", pm(iv_s.get((s,)) if s else iv_all, k)]
        if pairs:
            sp = split_iv_s.get((s,)) if s else split_iv_all
            row += [f"n<{k}"] * 3 if sp is None else [pm(sp["rie_sr"], k), pm(sp["gap_sr"], k), pm(sp["delta_sr"], k)]
        rows11.append(row)
    iv_c = M.rie_sr_interval(recs, "configuration", min_pairs=k)
    for c in d.hidden_configs:
        rows11.append([f"Configuration: {cname(c)}", pm(iv_c.get((c,)), k)] + ([""] * 3 if pairs else []))
    tables.append(Table("table11_intervals", "Table 11. Estimates with 95% intervals",
                        "Binomial, stratified by model and task, in points. Suite rows pool the configurations "
                        "evaluated without rule descriptions.", cols11, rows11))

    # ---- Table H: behaviour -------------------------------------------------------------
    beh = M.behavior(mirror, ("configuration", "condition"), min_encounters=k)
    beh_c = M.behavior(mirror, ("configuration",), min_encounters=k)
    colsH = ["Configuration"] + [f"{sname(s)} IRR / RL" for s in suites] + ["Pooled IRR / RL"]
    rowsH = []

    def irr_rl(b: M.Behavior | None) -> str:
        if b is None:
            return f"n<{k}"
        irr = EM if b.irr is None and b.n_followed == 0 else num(b.irr, k)
        rl = EM if b.rl is None and b.n_recovered == 0 else num(b.rl, k)
        return f"{irr} / {rl}"

    for c in configs:
        rowsH.append([cname(c)] + [irr_rl(beh.get((c, s))) for s in suites] + [irr_rl(beh_c.get((c,)))])
    tables.append(Table("tableH_behavior", "Table H. Behaviour after rule encounters",
                        "IRR (%) / RL (semantic actions) per suite; pooled values are equal-weight means over suites.",
                        colsH, rowsH))

    # ---- Table Q: within-suite Cochran's Q ---------------------------------------------
    rowsQ = []
    q_tasks = [t for t in ("iron_armor", "diamond") if t in d.config.tasks] or list(d.config.tasks)
    for mo in models:
        for s in suites:
            compared, het = M.within_suite_comparison(select(recs, disclosure=HIDDEN), model=mo, suite=s, tasks=q_tasks)
            q = het.q
            rowsQ.append([mo, sname(s), ", ".join(cname(c) for c in compared) or "none",
                          EM if q is None else f"{q.q:.1f}", EM if q is None else str(q.df),
                          EM if q is None else ("<0.001" if q.p_value < 0.001 else f"{q.p_value:.3f}")])
    tables.append(Table("tableQ_within_suite", "Within-suite comparison of configurations (Cochran's Q)",
                        f"Configurations with Vanilla SR ≥ 50% on each of {', '.join(task_title(t) for t in q_tasks)}; "
                        "Q weights each RIE_SR by its inverse binomial variance (– when undefined).",
                        ["Model", "Suite", "Compared", "Q", "df", "p"], rowsQ))
    return tables


# ======================================================================= plots


def _plots(d: StudyData, out: Path, k: int) -> dict[str, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    suites = _suites(d)

    r = M.rie(d.records, ("condition", "configuration"), min_pairs=k)
    fig, ax = plt.subplots(figsize=(8, 4))
    n = max(1, len(d.hidden_configs))
    width = 0.8 / n
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
    paths["rie_by_suite"] = _save(fig, out / "rie_by_suite.png")

    cps = d.config.report_checkpoints()
    cp = M.checkpoint_sr(d.records, cps, ("configuration", "is_vanilla"), average_over="task", min_episodes=k)
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, c in enumerate(d.hidden_configs + d.disclosed_configs):
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
    paths["checkpoints"] = _save(fig, out / "checkpoints.png")
    return paths


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


# ====================================================================== writer


@dataclass
class ReportResult:
    out_dir: Path
    markdown: Path
    html: Path
    tables: list[Table]
    n_valid: int
    n_excluded: int
    n_missing: int

    def table(self, key: str) -> Table:
        return next(t for t in self.tables if t.key == key)


def _exclusion_rows(d: StudyData) -> list[list[str]]:
    return [[x.episode_id or "?", "; ".join(x.reasons)] for x in d.excluded]


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
                 ["Episode", "Reasons"], _exclusion_rows(d))
    atomic_write(out / "exclusions.csv", excl.csv_text().encode())
    plots = _plots(d, out / "plots", k)

    # trajectories
    index_rows: list[dict] = []
    rec_by_id = {r.episode_id: r for r in d.records}
    if trajectories:
        tdir = out / "trajectories"
        tdir.mkdir(exist_ok=True)
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
    for r in d.records:
        index_rows.append({"id": r.episode_id, "world": r.world, "condition": r.condition, "task": r.task,
                           "configuration": r.configuration, "model": r.model, "repetition": r.repetition,
                           "score": r.score, "actions": r.actions})

    summary = (f"{len(d.records)} valid episodes of {d.plan_size} planned; {len(d.excluded)} excluded; "
               f"{len(d.missing)} missing; {len(d.faults)} logged faults. Build {d.meta.get('fingerprint', '?')}. "
               f"Cells with fewer than {k} episodes (or comparisons) read n<{k}.")
    md = [f"# Study report: {d.config.name}", "", d.config.description, "", summary, ""]
    md += [t.markdown() for t in tables]
    md += [excl.markdown() if d.excluded else "### Excluded records\n\nNone.\n"]
    md += ["### Plots", "", *(f"![{n}](plots/{p.name})" for n, p in plots.items()), ""]
    md_path = out / "report.md"
    atomic_write(md_path, "\n".join(md).encode())

    imgs = "".join(
        f'<figure><img alt="{n}" src="data:image/png;base64,{base64.b64encode(p.read_bytes()).decode()}"></figure>'
        for n, p in plots.items()
    )
    ep_rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(x[c]))}</td>" for c in ("world", "condition", "task", "configuration", "model", "repetition", "score", "actions"))
        + (f'<td><a href="trajectories/{x["id"]}.jsonl">{x["id"]}</a></td>' if trajectories else f"<td>{x['id']}</td>") + "</tr>"
        for x in index_rows
    )
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>Study {html.escape(d.config.name)}</title>
<style>body{{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}}table{{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}td:first-child,th:first-child{{text-align:left}}.cap{{color:#555;font-size:13px}}
img{{max-width:100%}}</style></head><body>
<h1>Study report: {html.escape(d.config.name)}</h1><p>{html.escape(d.config.description)}</p><p>{html.escape(summary)}</p>
{''.join(t.html() for t in tables)}
<h2>Plots</h2>{imgs}
{excl.html() if d.excluded else '<h3>Excluded records</h3><p>None.</p>'}
<h2>Episodes</h2><details><summary>{len(index_rows)} valid episodes (trajectory links)</summary>
<table><thead><tr><th>World</th><th>Condition</th><th>Task</th><th>Configuration</th><th>Model</th><th>Rep</th><th>Score</th><th>Actions</th><th>Trajectory</th></tr></thead>
<tbody>{ep_rows}</tbody></table></details></body></html>
"""
    html_path = out / "report.html"
    atomic_write(html_path, page.encode())
    return ReportResult(out, md_path, html_path, tables, len(d.records), len(d.excluded), len(d.missing))
