"""The paper's tables built from a study's valid records.

Paper numbering: 2 by configuration, 3 by suite, 4 disclosure split,
5 checkpoint SR, 8 per task, 9 by biome, 10 disclosure split by model,
11 intervals; plus H (IRR/RL by suite) and Q (within-suite Cochran's Q).
Every value cell carries its n (episodes, comparisons or encounters) or reads
``n<k``; a table that does not apply to the study is kept with ``omitted`` set.
"""
from __future__ import annotations

from typing import Callable

from mcbuild.runtime.records import HIDDEN, VANILLA, select
from mcbuild.runtime.study import metrics as M
from .data import StudyData
from .table import Table
from .labels import (EM, bname, cname, mname, model_columns, models_note, num, pm, signed, sname, ss,
                     suite_title, task_title, with_n)

#: Default minimum number of episodes (or comparisons) behind a printed cell.
MIN_EPISODES = 5

def build_tables(d: StudyData, k: int = MIN_EPISODES) -> list[Table]:
    """Every table of the report, in paper order; cells below ``k`` read ``n<k``."""
    return [f(d, k) for f in (table2_configuration, table3_suite, table4_disclosure, table5_checkpoints,
                              table8_task, table9_biome, table10_model_split, table11_intervals,
                              tableH_behavior, tableQ_within_suite)]


def _rie_cell(r: M.RIE | None, attr: str, k: int) -> str:
    return f"n<{k}" if r is None else with_n(signed(getattr(r, attr), k), r.n_pairs)


_NO_DISCLOSURE = ("the study has no disclosed configuration (`disclosure.configurations` is empty), so there is "
                  "no Hidden/Disclosed split.")


def table2_configuration(d: StudyData, k: int) -> Table:
    vanilla = select(d.records, condition=VANILLA)
    mirror = select(d.records, is_mirror=True)
    v_cm = M.score_sr(vanilla, ("configuration", "model"), min_episodes=k)
    m_cm = M.score_sr(mirror, ("configuration", "model"), min_episodes=k)
    r_cm = M.rie(d.records, ("configuration", "model"), min_pairs=k)
    u_cm = M.mean_actions_cost(mirror, ("configuration", "model"), min_episodes=k)
    cols = ["Configuration"] + model_columns(d.models, ["Vanilla", "Mirror", "RIE_SC", "RIE_SR", "Actions",
                                                        "Cost (USD)"])
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
                EM if disclosed else _rie_cell(r, "rie_sc", k),
                EM if disclosed else _rie_cell(r, "rie_sr", k),
                num(u.actions if u else None, k),
                num(u.cost_usd if u else None, k, 2),
            ]
        rows.append(row)
    return Table("table2_configuration", "Table 2. Results by configuration and disclosure condition",
                 "Pooled over tasks and Vanilla worlds; Mirror pools the suites. Vanilla and Mirror are "
                 "Score / SR (SR in %) with n episodes; RIE_SC and RIE_SR in points with n Vanilla-Mirror comparisons; "
                 "Actions and Cost (USD) averaged over Mirror episodes. – : a disclosed configuration has no Vanilla "
                 f"episodes. {models_note(d.models)}", cols, rows)


def table3_suite(d: StudyData, k: int) -> Table:
    hidden_mirror = select(d.records, disclosure=HIDDEN, is_mirror=True)
    m_s = M.score_sr(hidden_mirror, "condition", min_episodes=k)
    m_all = M.score_sr(hidden_mirror, (), min_episodes=k).get(())
    r_s = M.rie(d.records, "condition", min_pairs=k)
    r_all = M.rie(d.records, (), min_pairs=k).get(())
    v = M.score_sr(select(d.records, disclosure=HIDDEN, condition=VANILLA), (), min_episodes=k).get(())
    rows = [["Vanilla", "Baseline (unchanged rules)", with_n(num(v.score if v else None, k), v.n if v else None),
             with_n(num(v.sr if v else None, k), v.n if v else None), EM, EM]]
    for s in d.suites:
        c, r = m_s.get((s,)), r_s.get((s,))
        rows.append([sname(s), suite_title(s), with_n(num(c.score if c else None, k), c.n if c else None),
                     with_n(num(c.sr if c else None, k), c.n if c else None),
                     _rie_cell(r, "rie_sc", k), _rie_cell(r, "rie_sr", k)])
    rows.append(["Pooled", "All suites", with_n(num(m_all.score if m_all else None, k), m_all.n if m_all else None),
                 with_n(num(m_all.sr if m_all else None, k), m_all.n if m_all else None),
                 _rie_cell(r_all, "rie_sc", k), _rie_cell(r_all, "rie_sr", k)])
    return Table("table3_suite", "Table 3. Mirror performance and RIE by rule suite",
                 "Pooled over models, tasks, the configurations evaluated without rule descriptions and worlds; "
                 "the Vanilla row is the baseline of the same configurations. SR in %, RIE in points (Vanilla minus "
                 "Mirror); n counts episodes (Score, SR) or Vanilla-Mirror comparisons (RIE).",
                 ["Suite", "Rule change", "Score", "SR", "RIE_SC", "RIE_SR"], rows)


def table4_disclosure(d: StudyData, k: int) -> Table:
    pairs = d.disclosure_pairs
    vanilla = select(d.records, condition=VANILLA)
    cols = ["Suite", "Hidden SR", "Disclosed SR", "RIE_SR", "Gap", "ΔSR", "ΔScore", "n"]
    rows: list[list[str]] = []
    if not pairs:
        return Table("table4_disclosure", "Table 4. Disclosure split by suite", "", cols, [], omitted=_NO_DISCLOSURE)
    for hc, dc in pairs:
        split_s = M.disclosure_split(d.records, "condition", hidden_configuration=hc, disclosed_configuration=dc,
                                     min_pairs=k)
        split_all = M.disclosure_split(d.records, (), hidden_configuration=hc, disclosed_configuration=dc,
                                       min_pairs=k).get(())
        vsr = M.score_sr(select(vanilla, configuration=hc), (), min_episodes=k).get(())
        cap = (f"{cname(hc)} SR (%) with hidden or disclosed ({cname(dc)}) rules by suite, pooled over models and "
               f"tasks (Vanilla SR {num(vsr.sr if vsr else None, k)}%). RIE_SR = Gap (Vanilla − Disclosed) + ΔSR "
               f"(Disclosed − Hidden), in points; n = comparisons.")
        for s, sp in [(sname(x), split_s.get((x,))) for x in d.suites] + [("Pooled", split_all)]:
            label = s if len(pairs) == 1 else f"{s} ({cname(hc)})"
            rows.append([label] + ([f"n<{k}"] * 7 if sp is None else [
                num(sp.hidden_sr, k), num(sp.disclosed_sr, k), signed(sp.rie_sr, k), signed(sp.gap_sr, k),
                signed(sp.delta_sr, k), signed(sp.delta_score, k), str(sp.n_pairs)]))
    return Table("table4_disclosure", "Table 4. Disclosure split by suite", cap, cols, rows)


def table5_checkpoints(d: StudyData, k: int) -> Table:
    cps = d.config.report_checkpoints()
    cp = M.checkpoint_sr(d.records, cps, ("configuration", "is_vanilla"), average_over="task", min_episodes=k)
    n = {key: s.n for key, s in M.score_sr(d.records, ("configuration", "is_vanilla")).items() if s}
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
                    row.append(with_n(num(None if cell is None else cell[x], k), n.get((c, is_v))))
        rows.append(row)
    source = "the study config's `checkpoints`" if d.config.checkpoints else \
        "the default (half the smallest budget and each task budget), as the study config sets none"
    return Table("table5_checkpoints", "Table 5. Cumulative SR (%) at action checkpoints",
                 f"SR at checkpoints of the same trajectories (success within the first c actions), averaged "
                 f"over tasks; Mirror pools the suites; n = episodes. Checkpoints {', '.join(map(str, cps))} come "
                 f"from {source}.", cols, rows)


def task_configuration_rows(d: StudyData, cells: Callable[[tuple, bool], list[str]]) -> list[list[str]]:
    """One row per task and configuration: the task's title, the configuration's name, then
    ``cells((task, configuration, model), disclosed)`` for each model."""
    rows = []
    for t in d.config.tasks:
        for c in d.configs:
            row = [task_title(t), cname(c)]
            for mo in d.models:
                row += cells((t, c, mo), c in d.disclosed_configs)
            rows.append(row)
    return rows


def table8_task(d: StudyData, k: int) -> Table:
    by = ("task", "configuration", "model")
    v_t = M.score_sr(select(d.records, condition=VANILLA), by, min_episodes=k)
    m_t = M.score_sr(select(d.records, is_mirror=True), by, min_episodes=k)
    r_t = M.rie(d.records, by, min_pairs=k)
    cols = ["Task", "Configuration"] + model_columns(d.models, ["Vanilla", "Mirror", "RIE_SC", "RIE_SR"])

    def cells(key: tuple, disclosed: bool) -> list[str]:
        r = r_t.get(key)
        return [EM if disclosed else ss(v_t.get(key), k), ss(m_t.get(key), k),
                EM if disclosed else _rie_cell(r, "rie_sc", k), EM if disclosed else _rie_cell(r, "rie_sr", k)]

    rows = task_configuration_rows(d, cells)
    return Table("table8_task", "Table 8. Results by task, configuration and model",
                 "Vanilla and Mirror are Score / SR (SR in %) with n episodes; Mirror pools the suites; RIE in points "
                 f"with n comparisons. {models_note(d.models)}", cols, rows)


def table9_biome(d: StudyData, k: int) -> Table:
    hidden = select(d.records, disclosure=HIDDEN)
    v_b = M.score_sr(select(hidden, condition=VANILLA), "biome", min_episodes=k)
    m_b = M.score_sr(select(hidden, is_mirror=True), "biome", min_episodes=k)
    r_b = M.rie(d.records, "biome", min_pairs=k)
    rows = []
    for b in dict.fromkeys(d.config.biome_of(w) for w in d.config.worlds):
        v, m, r = v_b.get((b,)), m_b.get((b,)), r_b.get((b,))
        rows.append([bname(b), num(v.score if v else None, k), with_n(num(v.sr if v else None, k), v.n if v else None),
                     num(m.score if m else None, k), with_n(num(m.sr if m else None, k), m.n if m else None),
                     _rie_cell(r, "rie_sc", k), _rie_cell(r, "rie_sr", k)])
    return Table("table9_biome", "Table 9. Vanilla and paired Mirror Score, SR and RIE by biome",
                 "Pooled over models, tasks and the configurations evaluated without rule descriptions; n = episodes "
                 "(SR) or comparisons (RIE).",
                 ["Biome", "Vanilla Score", "Vanilla SR", "Mirror Score", "Mirror SR", "RIE_SC", "RIE_SR"], rows)


def table10_model_split(d: StudyData, k: int) -> Table:
    pairs = d.disclosure_pairs
    cols = ["Suite"] + model_columns(d.models, ["RIE_SR", "Gap", "ΔSR"])
    rows: list[list[str]] = []
    if not pairs:
        return Table("table10_model_split", "Table 10. Disclosure split by suite and model", "", cols, [],
                     omitted=_NO_DISCLOSURE)
    for hc, dc in pairs:
        cap = (f"Split of {cname(hc)}'s RIE_SR by suite and model, pooled over tasks; Gap = Vanilla − Disclosed, "
               f"ΔSR = Disclosed − Hidden (points); n = comparisons. {models_note(d.models)}")
        sp_ms = M.disclosure_split(d.records, ("model", "condition"), hidden_configuration=hc,
                                   disclosed_configuration=dc, min_pairs=k)
        sp_m = M.disclosure_split(d.records, ("model",), hidden_configuration=hc, disclosed_configuration=dc,
                                  min_pairs=k)
        for s in d.suites + [None]:
            row = [(sname(s) if s else "Pooled") + ("" if len(pairs) == 1 else f" ({cname(hc)})")]
            for mo in d.models:
                sp = sp_ms.get((mo, s)) if s else sp_m.get((mo,))
                row += [f"n<{k}"] * 3 if sp is None else [with_n(signed(sp.rie_sr, k), sp.n_pairs),
                                                          signed(sp.gap_sr, k), signed(sp.delta_sr, k)]
            rows.append(row)
    return Table("table10_model_split", "Table 10. Disclosure split by suite and model", cap, cols, rows)


def table11_intervals(d: StudyData, k: int) -> Table:
    pairs = d.disclosure_pairs
    iv_s = M.rie_sr_interval(d.records, "condition", min_pairs=k)
    iv_all = M.rie_sr_interval(d.records, (), min_pairs=k).get(())
    ac_s = M.rie_sr_interval(d.records, "condition", min_pairs=k, variance="agresti_coull")
    ac_all = M.rie_sr_interval(d.records, (), min_pairs=k, variance="agresti_coull").get(())
    n_s = {key: r.n_pairs for key, r in M.rie(d.records, "condition").items() if r}
    n_all = (M.rie(d.records, ()).get(()) or M.RIE(0, 0, 0, 0, 0, 0, 0)).n_pairs
    cols = ["Row", "RIE_SR (binomial)", "RIE_SR (Agresti–Coull)", "n"]
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
        row = [sname(s) if s else "Pooled", pm(iv_s.get((s,)) if s else iv_all, k),
               pm(ac_s.get((s,)) if s else ac_all, k), str(n_s.get((s,), 0) if s else n_all)]
        if pairs:
            sp = split_iv_s.get((s,)) if s else split_iv_all
            row += [f"n<{k}"] * 3 if sp is None else [pm(sp["rie_sr"], k), pm(sp["gap_sr"], k), pm(sp["delta_sr"], k)]
        rows.append(row)
    iv_c = M.rie_sr_interval(d.records, "configuration", min_pairs=k)
    ac_c = M.rie_sr_interval(d.records, "configuration", min_pairs=k, variance="agresti_coull")
    n_c = {key: r.n_pairs for key, r in M.rie(d.records, "configuration").items() if r}
    for c in d.hidden_configs:
        rows.append([f"Configuration: {cname(c)}", pm(iv_c.get((c,)), k), pm(ac_c.get((c,)), k),
                     str(n_c.get((c,), 0))] + ([EM] * 3 if pairs else []))
    return Table("table11_intervals", "Table 11. Estimates with 95% intervals",
                 "The paper's intervals: normal, from binomial variances stratified by model and task, in points "
                 "(a stratum at 0% or 100% on both sides has variance 0, so an all-or-nothing row reads ± 0.0). "
                 "The Agresti–Coull column uses the continuity-corrected variances instead, which stay positive "
                 "there. Suite rows pool the configurations evaluated without rule descriptions; n = comparisons.",
                 cols, rows)


def tableH_behavior(d: StudyData, k: int) -> Table:
    mirror = select(d.records, is_mirror=True)
    beh = M.behavior(mirror, ("configuration", "condition"), min_encounters=k)
    beh_c = M.behavior(mirror, ("configuration",), min_encounters=k)

    def irr_rl(b: M.Behavior | None) -> str:
        if b is None:
            return f"n<{k}"
        irr = EM if b.irr is None and b.n_followed == 0 else num(b.irr, k)
        rl = EM if b.rl is None and b.n_recovered == 0 else num(b.rl, k)
        return f"{irr} / {rl} (n={b.n_encounters})"

    cols = ["Configuration"] + [f"{sname(s)} IRR / RL" for s in d.suites] + ["Pooled IRR / RL"]
    rows = [[cname(c)] + [irr_rl(beh.get((c, s))) for s in d.suites] + [irr_rl(beh_c.get((c,)))] for c in d.configs]
    return Table("tableH_behavior", "Table H. Behaviour after rule encounters",
                 "IRR (%) / RL (semantic actions) per suite with n rule encounters; pooled values are equal-weight "
                 "means over suites. IRR is undefined (–) when no encounter was followed by another action, RL when "
                 "the Score never rose after an encounter; n<k when fewer than k encounters.", cols, rows)


def _q_cells(compared: list[str], het: M.Heterogeneity) -> list[str]:
    """Q, df and p of one test, or why it is undefined."""
    if len(compared) < 2:
        return ["undefined: needs ≥ 2 compared configurations", EM, EM]
    if het.q is None:
        return ["undefined: zero variance (an all-or-nothing cell)", EM, EM]
    q = het.q
    return [f"{q.q:.1f}", str(q.df), "<0.001" if q.p_value < 0.001 else f"{q.p_value:.3f}"]


def tableQ_within_suite(d: StudyData, k: int) -> Table:
    hidden = select(d.records, disclosure=HIDDEN)
    q_tasks = [t for t in ("iron_armor", "diamond") if t in d.config.tasks] or list(d.config.tasks)
    rows = []
    for mo in d.models:
        for s in d.suites:
            compared, het = M.within_suite_comparison(hidden, model=mo, suite=s, tasks=q_tasks)
            _, het_ac = M.within_suite_comparison(hidden, model=mo, suite=s, tasks=q_tasks, variance="agresti_coull")
            rows.append([mname(mo), sname(s), ", ".join(cname(c) for c in compared) or "none",
                         *_q_cells(compared, het), *_q_cells(compared, het_ac)])
    return Table("tableQ_within_suite", "Within-suite comparison of configurations (Cochran's Q)",
                 f"Compared set (§3.5): configurations with Vanilla SR ≥ 50% on each of "
                 f"{', '.join(task_title(t) for t in q_tasks)}. Q weights each configuration's RIE_SR (stratified by "
                 "task) by its inverse variance: binomial as in the paper, and Agresti–Coull, which stays defined "
                 "when a cell is all-or-nothing.",
                 ["Model", "Suite", "Compared", "Q (binomial)", "df", "p", "Q (Agresti–Coull)", "df (AC)", "p (AC)"],
                 rows)
