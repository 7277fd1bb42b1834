"""The paper's tables built from a study's valid records.

Paper numbering: 2 by configuration, 3 by suite, 4 disclosure split,
5 checkpoint SR, 8 per task, 9 by biome, 10 disclosure split by model,
11 intervals; plus H (IRR/RL by suite) and Q (within-suite Cochran's Q).
A :class:`Table` renders itself as Markdown, CSV, LaTeX and HTML.
"""
from __future__ import annotations

import csv
import html
import io
from dataclasses import dataclass

from runtime.records import HIDDEN, VANILLA, select

from .. import metrics as M
from .data import StudyData
from .labels import EM, bname, cname, num, pm, signed, sname, ss, suite_title, task_title

#: Default minimum number of episodes (or comparisons) behind a printed cell.
MIN_EPISODES = 5

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "$": r"\$", "{": r"\{",
          "}": r"\}", "<": r"$<$", ">": r"$>$", "±": r"$\pm$", "Δ": r"$\Delta$", "–": "--", "−": "$-$", "≥": r"$\geq$",
          "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(s: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in str(s))


@dataclass
class Table:
    """One titled table of text cells, rendered as Markdown, CSV, LaTeX (booktabs) or HTML."""

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
        spec = "l" + "r" * (len(self.columns) - 1)
        lines = [r"% requires \usepackage{booktabs}", r"\begin{table}[t]", r"\centering",
                 rf"\caption{{{_tex(self.title)}. {_tex(self.caption)}}}",
                 rf"\begin{{tabular}}{{{spec}}}", r"\toprule", " & ".join(_tex(c) for c in self.columns) + r" \\",
                 r"\midrule"]
        lines += [" & ".join(_tex(c) for c in r) + r" \\" for r in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines) + "\n"

    def html(self) -> str:
        h = [f'<h3 id="{self.key}">{html.escape(self.title)}</h3>', f"<p class=cap>{html.escape(self.caption)}</p>",
             "<table><thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in self.columns) + "</tr></thead><tbody>"]
        for r in self.rows:
            h.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>")
        h.append("</tbody></table>")
        return "\n".join(h)


def build_tables(d: StudyData, k: int = MIN_EPISODES) -> list[Table]:
    """Every table of the report, in paper order; cells below ``k`` read ``n<k``."""
    return [f(d, k) for f in (table2_configuration, table3_suite, table4_disclosure, table5_checkpoints,
                              table8_task, table9_biome, table10_model_split, table11_intervals,
                              tableH_behavior, tableQ_within_suite)]


def table2_configuration(d: StudyData, k: int) -> Table:
    vanilla = select(d.records, condition=VANILLA)
    mirror = select(d.records, is_mirror=True)
    v_cm = M.score_sr(vanilla, ("configuration", "model"), min_episodes=k)
    m_cm = M.score_sr(mirror, ("configuration", "model"), min_episodes=k)
    r_cm = M.rie(d.records, ("configuration", "model"), min_pairs=k)
    u_cm = M.mean_actions_cost(mirror, ("configuration", "model"), min_episodes=k)
    cols = ["Configuration"]
    for mo in d.models:
        cols += [f"{mo} Vanilla", f"{mo} Mirror", f"{mo} RIE_SC", f"{mo} RIE_SR", f"{mo} Actions", f"{mo} Cost"]
    rows = []
    for c in d.configs:
        row = [cname(c)]
        disclosed = c in d.disclosed_configs
        for mo in d.models:
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
    return Table("table2_configuration", "Table 2. Results by configuration and disclosure condition",
                 "Pooled over tasks and Vanilla worlds; Mirror pools the suites. Vanilla and Mirror are "
                 "Score / SR (SR in %); RIE_SR in points; Actions and Cost (USD) averaged over Mirror episodes.",
                 cols, rows)


def table3_suite(d: StudyData, k: int) -> Table:
    hidden_mirror = select(d.records, disclosure=HIDDEN, is_mirror=True)
    m_s = M.score_sr(hidden_mirror, "condition", min_episodes=k)
    m_all = M.score_sr(hidden_mirror, (), min_episodes=k).get(())
    r_s = M.rie(d.records, "condition", min_pairs=k)
    r_all = M.rie(d.records, (), min_pairs=k).get(())
    rows = []
    for s in d.suites:
        c, r = m_s.get((s,)), r_s.get((s,))
        rows.append([sname(s), suite_title(s), num(c.score if c else None, k), num(c.sr if c else None, k),
                     signed(r.rie_sc if r else None, k), signed(r.rie_sr if r else None, k)])
    rows.append(["Pooled", "All suites", num(m_all.score if m_all else None, k), num(m_all.sr if m_all else None, k),
                 signed(r_all.rie_sc if r_all else None, k), signed(r_all.rie_sr if r_all else None, k)])
    return Table("table3_suite", "Table 3. Mirror performance and RIE by rule suite",
                 "Pooled over models, tasks, the configurations evaluated without rule descriptions and worlds. "
                 "SR in %, RIE_SR in points (Vanilla minus Mirror).",
                 ["Suite", "Rule change", "Score", "SR", "RIE_SC", "RIE_SR"], rows)


def table4_disclosure(d: StudyData, k: int) -> Table:
    pairs = d.disclosure_pairs
    vanilla = select(d.records, condition=VANILLA)
    cols = ["Suite", "Hidden SR", "Disclosed SR", "RIE_SR", "Gap", "ΔSR", "ΔScore"]
    rows: list[list[str]] = []
    cap = "No disclosed configuration in this study."
    for hc, dc in pairs:
        split_s = M.disclosure_split(d.records, "condition", hidden_configuration=hc, disclosed_configuration=dc,
                                     min_pairs=k)
        split_all = M.disclosure_split(d.records, (), hidden_configuration=hc, disclosed_configuration=dc,
                                       min_pairs=k).get(())
        vsr = M.score_sr(select(vanilla, configuration=hc), (), min_episodes=k).get(())
        cap = (f"{cname(hc)} SR (%) with hidden or disclosed ({cname(dc)}) rules by suite, pooled over models and "
               f"tasks (Vanilla SR {num(vsr.sr if vsr else None, k)}%). RIE_SR = Gap (Vanilla − Disclosed) + ΔSR "
               f"(Disclosed − Hidden), in points.")
        for s, sp in [(sname(x), split_s.get((x,))) for x in d.suites] + [("Pooled", split_all)]:
            label = s if len(pairs) == 1 else f"{s} ({cname(hc)})"
            rows.append([label] + ([f"n<{k}"] * 6 if sp is None else [
                num(sp.hidden_sr, k), num(sp.disclosed_sr, k), signed(sp.rie_sr, k), signed(sp.gap_sr, k),
                signed(sp.delta_sr, k), signed(sp.delta_score, k)]))
    if not pairs:
        rows.append(["–"] * len(cols))
    return Table("table4_disclosure", "Table 4. Disclosure split by suite", cap, cols, rows)


def table5_checkpoints(d: StudyData, k: int) -> Table:
    cps = d.config.report_checkpoints()
    cp = M.checkpoint_sr(d.records, cps, ("configuration", "is_vanilla"), average_over="task", min_episodes=k)
    cols = ["Configuration"] + [f"{c} actions {side}" for c in cps for side in ("Vanilla", "Mirror")]
    rows = []
    for c in d.configs:
        row = [cname(c)]
        for x in cps:
            for is_v in (True, False):
                cell = cp.get((c, is_v))
                if c in d.disclosed_configs and is_v:
                    row.append(EM)
                else:
                    row.append(num(None if cell is None else cell[x], k))
        rows.append(row)
    return Table("table5_checkpoints", "Table 5. Cumulative SR (%) at action checkpoints",
                 "SR at checkpoints of the same trajectories (success within the first c actions), averaged "
                 "over tasks; Mirror pools the suites.", cols, rows)


def table8_task(d: StudyData, k: int) -> Table:
    by = ("task", "configuration", "model")
    v_t = M.score_sr(select(d.records, condition=VANILLA), by, min_episodes=k)
    m_t = M.score_sr(select(d.records, is_mirror=True), by, min_episodes=k)
    r_t = M.rie(d.records, by, min_pairs=k)
    cols = ["Task", "Configuration"]
    for mo in d.models:
        cols += [f"{mo} Vanilla", f"{mo} Mirror", f"{mo} RIE_SC", f"{mo} RIE_SR"]
    rows = []
    for t in d.config.tasks:
        for c in d.configs:
            disclosed = c in d.disclosed_configs
            row = [task_title(t), cname(c)]
            for mo in d.models:
                r = r_t.get((t, c, mo))
                row += [EM if disclosed else ss(v_t.get((t, c, mo)), k), ss(m_t.get((t, c, mo)), k),
                        EM if disclosed else signed(r.rie_sc if r else None, k),
                        EM if disclosed else signed(r.rie_sr if r else None, k)]
            rows.append(row)
    return Table("table8_task", "Table 8. Results by task, configuration and model",
                 "Vanilla and Mirror are Score / SR (SR in %); Mirror pools the suites.", cols, rows)


def table9_biome(d: StudyData, k: int) -> Table:
    hidden = select(d.records, disclosure=HIDDEN)
    v_b = M.score_sr(select(hidden, condition=VANILLA), "biome", min_episodes=k)
    m_b = M.score_sr(select(hidden, is_mirror=True), "biome", min_episodes=k)
    r_b = M.rie(d.records, "biome", min_pairs=k)
    rows = []
    for b in dict.fromkeys(d.config.biome_of(w) for w in d.config.worlds):
        v, m, r = v_b.get((b,)), m_b.get((b,)), r_b.get((b,))
        rows.append([bname(b), num(v.score if v else None, k), num(v.sr if v else None, k),
                     num(m.score if m else None, k), num(m.sr if m else None, k),
                     signed(r.rie_sc if r else None, k), signed(r.rie_sr if r else None, k)])
    return Table("table9_biome", "Table 9. Vanilla and paired Mirror Score, SR and RIE by biome",
                 "Pooled over models, tasks and the configurations evaluated without rule descriptions.",
                 ["Biome", "Vanilla Score", "Vanilla SR", "Mirror Score", "Mirror SR", "RIE_SC", "RIE_SR"], rows)


def table10_model_split(d: StudyData, k: int) -> Table:
    pairs = d.disclosure_pairs
    cols = ["Suite"]
    for mo in d.models:
        cols += [f"{mo} RIE_SR", f"{mo} Gap", f"{mo} ΔSR"]
    rows: list[list[str]] = []
    cap = "No disclosed configuration in this study."
    for hc, dc in pairs:
        cap = (f"Split of {cname(hc)}'s RIE_SR by suite and model, pooled over tasks; Gap = Vanilla − Disclosed, "
               "ΔSR = Disclosed − Hidden (points).")
        sp_ms = M.disclosure_split(d.records, ("model", "condition"), hidden_configuration=hc,
                                   disclosed_configuration=dc, min_pairs=k)
        sp_m = M.disclosure_split(d.records, ("model",), hidden_configuration=hc, disclosed_configuration=dc,
                                  min_pairs=k)
        for s in d.suites + [None]:
            row = [(sname(s) if s else "Pooled") + ("" if len(pairs) == 1 else f" ({cname(hc)})")]
            for mo in d.models:
                sp = sp_ms.get((mo, s)) if s else sp_m.get((mo,))
                row += [f"n<{k}"] * 3 if sp is None else [signed(sp.rie_sr, k), signed(sp.gap_sr, k),
                                                          signed(sp.delta_sr, k)]
            rows.append(row)
    if not pairs:
        rows.append(["–"] * len(cols))
    return Table("table10_model_split", "Table 10. Disclosure split by suite and model", cap, cols, rows)


def table11_intervals(d: StudyData, k: int) -> Table:
    pairs = d.disclosure_pairs
    iv_s = M.rie_sr_interval(d.records, "condition", min_pairs=k)
    iv_all = M.rie_sr_interval(d.records, (), min_pairs=k).get(())
    cols = ["Row", "All configurations RIE_SR"]
    split_iv_s: dict = {}
    split_iv_all = None
    if pairs:
        hc, dc = pairs[0]
        cols += [f"{cname(hc)} RIE_SR", "Gap", "ΔSR"]
        split_iv_s = M.disclosure_split_intervals(d.records, "condition", hidden_configuration=hc,
                                                  disclosed_configuration=dc, min_pairs=k)
        split_iv_all = M.disclosure_split_intervals(d.records, (), hidden_configuration=hc,
                                                    disclosed_configuration=dc, min_pairs=k).get(())
    rows = []
    for s in d.suites + [None]:
        row = [sname(s) if s else "Pooled", pm(iv_s.get((s,)) if s else iv_all, k)]
        if pairs:
            sp = split_iv_s.get((s,)) if s else split_iv_all
            row += [f"n<{k}"] * 3 if sp is None else [pm(sp["rie_sr"], k), pm(sp["gap_sr"], k), pm(sp["delta_sr"], k)]
        rows.append(row)
    iv_c = M.rie_sr_interval(d.records, "configuration", min_pairs=k)
    for c in d.hidden_configs:
        rows.append([f"Configuration: {cname(c)}", pm(iv_c.get((c,)), k)] + ([""] * 3 if pairs else []))
    return Table("table11_intervals", "Table 11. Estimates with 95% intervals",
                 "Binomial, stratified by model and task, in points. Suite rows pool the configurations "
                 "evaluated without rule descriptions.", cols, rows)


def tableH_behavior(d: StudyData, k: int) -> Table:
    mirror = select(d.records, is_mirror=True)
    beh = M.behavior(mirror, ("configuration", "condition"), min_encounters=k)
    beh_c = M.behavior(mirror, ("configuration",), min_encounters=k)

    def irr_rl(b: M.Behavior | None) -> str:
        if b is None:
            return f"n<{k}"
        irr = EM if b.irr is None and b.n_followed == 0 else num(b.irr, k)
        rl = EM if b.rl is None and b.n_recovered == 0 else num(b.rl, k)
        return f"{irr} / {rl}"

    cols = ["Configuration"] + [f"{sname(s)} IRR / RL" for s in d.suites] + ["Pooled IRR / RL"]
    rows = [[cname(c)] + [irr_rl(beh.get((c, s))) for s in d.suites] + [irr_rl(beh_c.get((c,)))] for c in d.configs]
    return Table("tableH_behavior", "Table H. Behaviour after rule encounters",
                 "IRR (%) / RL (semantic actions) per suite; pooled values are equal-weight means over suites.",
                 cols, rows)


def tableQ_within_suite(d: StudyData, k: int) -> Table:
    hidden = select(d.records, disclosure=HIDDEN)
    q_tasks = [t for t in ("iron_armor", "diamond") if t in d.config.tasks] or list(d.config.tasks)
    rows = []
    for mo in d.models:
        for s in d.suites:
            compared, het = M.within_suite_comparison(hidden, model=mo, suite=s, tasks=q_tasks)
            q = het.q
            rows.append([mo, sname(s), ", ".join(cname(c) for c in compared) or "none",
                         EM if q is None else f"{q.q:.1f}", EM if q is None else str(q.df),
                         EM if q is None else ("<0.001" if q.p_value < 0.001 else f"{q.p_value:.3f}")])
    return Table("tableQ_within_suite", "Within-suite comparison of configurations (Cochran's Q)",
                 f"Configurations with Vanilla SR ≥ 50% on each of {', '.join(task_title(t) for t in q_tasks)}; "
                 "Q weights each RIE_SR by its inverse binomial variance (– when undefined).",
                 ["Model", "Suite", "Compared", "Q", "df", "p"], rows)
