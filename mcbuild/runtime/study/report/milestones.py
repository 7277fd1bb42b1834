"""Report tables of the milestone metrics (MSR, TSR beside Score and SR, the paired RIE_MSR) and of
SR against the tasks' difficulty d(τ), organised as the paper's Tables 2, 3 and 8."""
from __future__ import annotations

from pathlib import Path

from mcbuild.runtime.records import HIDDEN, VANILLA, select
from mcbuild.runtime.study import metrics as M
from .data import StudyData
from .difficulty import load_difficulty
from .labels import EM, cname, model_columns, models_note, msr_cell, num, signed, sname, suite_title, task_title, with_n
from .table import Table
from .tables import task_configuration_rows

_CELLS = ("Score / SR / MSR / TSR (SR, MSR and TSR in %) with n episodes; MSR is the mean share of the task's "
          "milestones met, TSR the share of episodes that met every one of them")
_RIE = "RIE_MSR in points (Vanilla minus Mirror MSR) with n Vanilla-Mirror comparisons"


def milestone_tables(d: StudyData, k: int, build: Path) -> list[Table]:
    """The MSR tables by configuration, suite and task, then SR and d(τ) by task and condition."""
    return [table_msr_configuration(d, k), table_msr_suite(d, k), table_msr_task(d, k), table_difficulty(d, k, build)]


def _coverage(d: StudyData) -> tuple[str, str]:
    """(why the MSR tables are left out, or "") and the caption sentence on records left out of them."""
    without = sum(r.milestones_total is None for r in d.records)
    if d.records and without == len(d.records):
        return (f"none of the {without} stored episodes carries milestone counts (the store was written before "
                "they were kept), so MSR, TSR and RIE_MSR cannot be computed; a new run of the study records them."), ""
    return "", f" {without} episodes without milestone counts (stored before they were kept) are left out." if without else ""


def _rie_cell(r: M.MsrRIE | None, k: int) -> str:
    return f"n<{k}" if r is None else with_n(signed(r.rie_msr, k), r.n_pairs)


def table_msr_configuration(d: StudyData, k: int) -> Table:
    key, title = "tableM_configuration", "Milestones (MSR, TSR) by configuration and disclosure condition"
    cols = ["Configuration"] + model_columns(d.models, ["Vanilla", "Mirror", "RIE_MSR"])
    omitted, note = _coverage(d)
    if omitted:
        return Table(key, title, "", cols, [], omitted=omitted)
    by = ("configuration", "model")
    v = M.milestone_rates(select(d.records, condition=VANILLA), by, min_episodes=k)
    m = M.milestone_rates(select(d.records, is_mirror=True), by, min_episodes=k)
    r = M.rie_msr(d.records, by, min_pairs=k)
    rows = []
    for c in d.configs:
        disclosed = c in d.disclosed_configs
        row = [cname(c)]
        for mo in d.models:
            row += [EM if disclosed else msr_cell(v.get((c, mo)), k), msr_cell(m.get((c, mo)), k),
                    EM if disclosed else _rie_cell(r.get((c, mo)), k)]
        rows.append(row)
    return Table(key, title, f"Pooled over tasks and Vanilla worlds; Mirror pools the suites. Vanilla and Mirror are "
                 f"{_CELLS}; {_RIE}. – : a disclosed configuration has no Vanilla episodes. "
                 f"{models_note(d.models)}{note}", cols, rows)


def table_msr_suite(d: StudyData, k: int) -> Table:
    key, title = "tableM_suite", "Milestones (MSR, TSR) and RIE_MSR by rule suite"
    cols = ["Suite", "Rule change", "Score", "SR", "MSR", "TSR", "RIE_MSR"]
    omitted, note = _coverage(d)
    if omitted:
        return Table(key, title, "", cols, [], omitted=omitted)
    hidden = select(d.records, disclosure=HIDDEN)
    rates = M.milestone_rates(hidden, "condition", min_episodes=k)
    pooled = M.milestone_rates(select(hidden, is_mirror=True), (), min_episodes=k).get(())
    r_s, r_all = M.rie_msr(d.records, "condition", min_pairs=k), M.rie_msr(d.records, (), min_pairs=k).get(())

    def cells(c: M.MilestoneRates | None) -> list[str]:
        return [with_n(num(None if c is None else getattr(c, f), k), None if c is None else c.n)
                for f in ("score", "sr", "msr", "tsr")]

    rows = [["Vanilla", "Baseline (unchanged rules)", *cells(rates.get((VANILLA,))), EM]]
    rows += [[sname(s), suite_title(s), *cells(rates.get((s,))), _rie_cell(r_s.get((s,)), k)] for s in d.suites]
    rows.append(["Pooled", "All suites", *cells(pooled), _rie_cell(r_all, k)])
    return Table(key, title, "Pooled over models, tasks, the configurations evaluated without rule descriptions and "
                 "worlds; the Vanilla row is the baseline of the same configurations. SR, MSR and TSR in %; n counts "
                 f"episodes, or Vanilla-Mirror comparisons for RIE_MSR (points, Vanilla minus Mirror).{note}", cols, rows)


def table_msr_task(d: StudyData, k: int) -> Table:
    key, title = "tableM_task", "Milestones (MSR, TSR) by task, configuration and model"
    cols = ["Task", "Configuration"] + model_columns(d.models, ["Vanilla", "Mirror", "RIE_MSR"])
    omitted, note = _coverage(d)
    if omitted:
        return Table(key, title, "", cols, [], omitted=omitted)
    by = ("task", "configuration", "model")
    v = M.milestone_rates(select(d.records, condition=VANILLA), by, min_episodes=k)
    m = M.milestone_rates(select(d.records, is_mirror=True), by, min_episodes=k)
    r = M.rie_msr(d.records, by, min_pairs=k)
    rows = task_configuration_rows(d, lambda key, disclosed: [
        EM if disclosed else msr_cell(v.get(key), k), msr_cell(m.get(key), k),
        EM if disclosed else _rie_cell(r.get(key), k)])
    return Table(key, title, f"Vanilla and Mirror are {_CELLS}; Mirror pools the suites; {_RIE}. "
                 f"{models_note(d.models)}{note}", cols, rows)


def _d_text(values: dict, task: str, condition: str) -> str:
    if (task, condition) not in values:
        return EM
    x = values[(task, condition)]
    return "no route" if x is None else f"{x:.2f}"


def table_difficulty(d: StudyData, k: int, build: Path) -> Table:
    """d(τ) and SR per task and condition: the numbers behind the SR-against-difficulty plot."""
    key, title = "tableD_difficulty", "SR against task difficulty d(τ) by task and condition"
    conds = [VANILLA] + d.suites
    cols = ["Task"] + [f"{'Vanilla' if c == VANILLA else sname(c)} d(τ) / SR" for c in conds]
    values, missing = load_difficulty(build, d.suites)
    if not values:
        return Table(key, title, "", cols, [], omitted=f"no suite report under {build} carries tracer.difficulty "
                     f"(missing or older reports: {', '.join(missing) or 'none built'}); compile the suites with "
                     "`mcbuild compile --all`.")
    sr = M.score_sr(select(d.records, disclosure=HIDDEN), ("task", "condition"), min_episodes=k)
    rows = []
    for t in d.config.tasks:
        row = [task_title(t)]
        for c in conds:
            cell = sr.get((t, c))
            row.append(f"{_d_text(values, t, c)} / " + with_n(num(None if cell is None else cell.sr, k),
                                                              None if cell is None else cell.n))
        rows.append(row)
    gaps = f" No difficulty for {', '.join(sname(s) for s in missing)}: report.json missing or compiled before " \
           "tracer.difficulty (– in those columns)." if missing else ""
    return Table(key, title, "d(τ) from each suite's report.json (the tracer's routes under that condition's rules); "
                 "SR in % pooled over models and the configurations evaluated without rule descriptions, with n "
                 f"episodes. \"no route\": a milestone of the task has no route under those rules.{gaps}", cols, rows)
