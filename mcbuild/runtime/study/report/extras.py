"""Report tables beyond the paper's numbered ones: SR with Wilson intervals beside the Vanilla
baseline, why episodes ended, the fault log, and each suite's changed transitions (Figure 2)."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from mcbuild.runtime.records import VANILLA
from mcbuild.runtime.study import metrics as M
from mcbuild.runtime.study.metrics.stats import wilson_interval
from .data import StudyData
from .difficulty import suite_report
from .labels import EM, cname, mname, models_note, pct_interval, sname
from .table import Table

#: End reasons in display order, with what they mean.
END_REASONS = {
    "final_milestone": "reached the task's final milestone",
    "budget_exhausted": "used the whole action budget",
    "death": "the body died",
    "no_action": "the agent returned no executable action",
    "policy_error": "the agent raised an error",
}
_OPERATIONS = {"mine": "break", "craft_grid": "craft", "smelt": "smelt", "attack": "defeat"}
_ROWS_PER_CHANGE = 3


def extra_tables(d: StudyData, k: int, build: Path) -> list[Table]:
    """The SR, end-reason and fault tables, then one changed-transition table per suite."""
    return [table_sr_wilson(d, k), table_end_reasons(d), table_faults(d)] + [
        table_changes(s, build) for s in d.suites]


def _row_label(d: StudyData, c: str, mo: str) -> str:
    return cname(c) if len(d.models) == 1 else f"{cname(c)} · {mname(mo)}"


def table_sr_wilson(d: StudyData, k: int) -> Table:
    """SR per configuration (and model) in each condition, Vanilla first, with Wilson intervals."""
    cells = M.score_sr(d.records, ("configuration", "model", "condition"))
    conds = [VANILLA] + d.suites
    rows = []
    for mo in d.models:
        for c in d.configs:
            row = [_row_label(d, c, mo)]
            for cond in conds:
                cell = cells.get((c, mo, cond))
                if cell is None:
                    row.append(EM)
                elif cell.n < k:
                    row.append(f"n<{k}")
                else:
                    x = round(cell.sr * cell.n / 100)
                    row.append(f"{cell.sr:.1f} {pct_interval(*wilson_interval(x, cell.n))} (n={cell.n})")
            rows.append(row)
    return Table("tableSR_wilson", "SR by configuration and condition, with the Vanilla baseline",
                 "SR (%) with 95% Wilson score intervals, which stay informative at 0% and 100% (unlike the normal "
                 "interval); n = episodes. – : no episodes planned in that cell (a disclosed configuration runs "
                 f"only in Mirror worlds). {models_note(d.models)}",
                 ["Configuration"] + [sname(c) if c != VANILLA else "Vanilla" for c in conds], rows)


def table_end_reasons(d: StudyData) -> Table:
    """How many episodes ended for each reason, by configuration (and model) and condition."""
    counts: Counter = Counter()
    for r in d.records:
        counts[(r.model, r.configuration, r.condition, d.end_reason(r.episode_id))] += 1
    seen = {key[3] for key in counts}
    reasons = [x for x in END_REASONS if x in seen] + sorted(seen - set(END_REASONS))
    rows = []
    for mo in d.models:
        for c in d.configs:
            for cond in [VANILLA] + d.suites:
                n = sum(counts[(mo, c, cond, x)] for x in reasons)
                if n:
                    rows.append([_row_label(d, c, mo), "Vanilla" if cond == VANILLA else sname(cond)]
                                + [str(counts[(mo, c, cond, x)]) for x in reasons] + [str(n)])
    meaning = "; ".join(f"{x}: {END_REASONS.get(x, 'recorded by the runner')}" for x in reasons)
    return Table("tableE_end_reasons", "Why episodes ended",
                 f"Episodes by end reason ({meaning}). All of them stay in the denominators (§3.7).",
                 ["Configuration", "Condition"] + reasons + ["n"], rows)


def table_faults(d: StudyData) -> Table:
    """The fault log: every infrastructure fault (rerun under the same id) and runner error."""
    cols = ["Episode", "Attempt", "Kind", "Stored", "Message"]
    if not d.faults:
        return Table("tableF_faults", "Fault log", "", cols, [],
                     omitted="no infrastructure fault or runner error was logged for this study.")
    stored = {r.episode_id for r in d.records}
    rows = [[str(f["episode_id"]), str(f["attempt"]), str(f["kind"]),
             "yes" if f["episode_id"] in stored else "no",
             " ".join(str(f["message"]).split())[:240]] for f in d.faults]
    return Table("tableF_faults", "Fault log",
                 f"{len(d.faults)} logged faults. Infrastructure faults are rerun under the same id and seed (up to "
                 "3 attempts); Stored says whether the episode finally has a result. Runner errors are not stored "
                 "and `--resume` reruns them.", cols, rows)


def _item(name: str, count: float) -> str:
    short = name.removeprefix("minecraft:")
    return f"{short} ×{count:g}" if count != 1 else short


def transition_key(t: dict) -> tuple[str, str, str | None]:
    """(skill, target, station) of a transition of a suite's report.json."""
    return t["skill"], t["target"], t.get("station")


def suite_rules(build: Path, suite: str):
    """The rules of a Mirror world of ``suite``: vanilla under the suite's compiled pack (None: no pack)."""
    from mcbuild.compiler.rules.pack import read_zip
    from mcbuild.compiler.rules.rulebook import with_packs

    pack = build / suite / "datapack.zip"
    return with_packs([(suite, read_zip(pack.read_bytes()))]) if pack.is_file() else None


def outputs_text(outputs: dict[str, float]) -> str:
    return ", ".join(_item(i, n) for i, n in sorted(outputs.items())) or "(none)"


def table_changes(suite: str, build: Path) -> Table:
    """Figure 2 as a table: each changed transition's input, operation, and what it yields under the
    game's own rules and under the suite's pack, both read from the rules themselves."""
    from mcbuild.compiler.planning.model import transition_outputs
    from mcbuild.compiler.rules.rulebook import vanilla

    key, title = f"changes_{suite}", f"Changed transitions in {sname(suite)}"
    cols = ["Change", "Input", "Operation", "Vanilla output", f"{sname(suite)} output"]
    path = build / suite / "report.json"
    try:
        report = suite_report(path)
    except ValueError as exc:
        return Table(key, title, "", cols, [], omitted=str(exc))
    if report is None:
        return Table(key, title, "", cols, [], omitted=f"{path} is missing (build the suite with `mcbuild build`).")
    mirror = suite_rules(build, suite)
    if mirror is None:
        return Table(key, title, "", cols, [], omitted=f"{build / suite / 'datapack.zip'} is missing "
                     "(compile the suite with `mcbuild compile`).")
    rows = []
    for ch in report.get("changes", []):
        ts = ch["transitions"]
        for t in ts[:_ROWS_PER_CHANGE]:
            skill, target, station = transition_key(t)
            op = _OPERATIONS.get(skill, skill) + (f" in {station.replace('_', ' ')}" if station else "")
            shown = ("recipe " if skill == "craft_grid" else "") + target.removeprefix("minecraft:")
            rows.append([ch["id"], shown, op, outputs_text(transition_outputs(vanilla(), skill, target, station)),
                         outputs_text(transition_outputs(mirror, skill, target, station))])
        if len(ts) > _ROWS_PER_CHANGE:
            rows.append([ch["id"], f"… {len(ts) - _ROWS_PER_CHANGE} more inputs", EM, EM, "same change"])
    return Table(key, title, f"From {suite}/report.json: each row applies an operation to an input. The outputs are "
                 f"what the game's own 1.19 rules (Vanilla) and the rules under the {sname(suite)} pack give for it, "
                 "read from the rules themselves: mean counts for random drops, mined or killed without an "
                 "enchantment; (none): no such recipe or drop.", cols, rows)
