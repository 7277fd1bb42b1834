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
    """The SR, end-reason, fault and model-settings tables, then one changed-transition table per suite."""
    return [table_sr_wilson(d, k), table_end_reasons(d), table_faults(d), table_model_settings(d)] + [
        table_changes(s, build) for s in d.suites]


def table_model_settings(d: StudyData) -> Table:
    """How each model was called: its provider profile and endpoint, and each sampling setting as asked
    and as sent (a profile's or an endpoint's adjustment says why they differ: ``mcbuild.llm.shape``)."""
    from mcbuild.llm.providers import profile_of, resolved
    from mcbuild.llm.shape import Adjustment
    from mcbuild.runtime.agents.llm import CONFIGURATIONS
    from mcbuild.runtime.study.store.adaptations import stored

    key, title = "tableS_model_settings", "How each model was called"
    cols = ["Model", "Setting", "Asked", "Sent"]
    if not any(d.config.agent_for(c) in CONFIGURATIONS for c in d.config.all_configurations()):
        return Table(key, title, "", cols, [], omitted="no configuration calls a model")
    adapted = stored(d.meta)
    rows = []
    for model in d.models:
        s = resolved(d.config.llm_settings(model))
        profile = profile_of(s)
        adj = {a.field: a for a in map(Adjustment.from_json, adapted.get(model, []))}
        cap = adj.get("token_cap")
        asked = {"temperature": s.temperature, "top_p": s.top_p, "seed": s.sampling_seed,
                 "reasoning": "on" if s.reasoning else "off", "response_format": s.structured}
        rows += [[mname(model), "provider profile", EM, f"{profile.name} ({profile.title})"],
                 [mname(model), "endpoint", EM, s.base_url or "https://api.openai.com/v1"],
                 [mname(model), "token cap", f"max_tokens {s.max_tokens}" if s.max_tokens else "not sent",
                  (f"{cap.sent} {s.max_tokens} ({cap.line()})" if cap else f"{profile.token_cap} {s.max_tokens}")
                  if s.max_tokens else "not sent"]]
        for name, value in asked.items():
            shown = "not sent" if value is None else str(value)
            rows.append([mname(model), name, shown, adj[name].line().split(": ", 1)[1] if name in adj else shown])
    return Table(key, title, "Each model's settings as the study asked for them and as its requests carried them: "
                 "a provider profile (mcbuild/llm/profiles.yaml) or the endpoint's refusal of a field explains each "
                 "difference; an endpoint's adaptation was made once, recorded and printed when the study met it.",
                 cols, rows)


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


def vanilla_outputs(transitions: list[dict]) -> dict[str, dict[str, float]]:
    """Rule key -> expected Vanilla outputs of each changed transition (from the vanilla rulebook)."""
    from mcbuild.compiler.mirror.resolve import ChangedTransition
    from mcbuild.compiler.planning.model import model_from_rulebook
    from mcbuild.compiler.rules.rulebook import vanilla
    from mcbuild.compiler.rules.tasks import world_resources

    # The model keeps only the steps the skills reach, so it starts from the worlds' resources too.
    targets, res = [t["target"] for t in transitions], world_resources()
    model = model_from_rulebook(vanilla(), sorted({*targets, *res["blocks"]}), sorted({*targets, *res["entities"]}))
    keys = {ChangedTransition(t["skill"], t["target"], t.get("station")).key() for t in transitions}
    out: dict[str, dict[str, float]] = {}
    for step in model.steps.values():
        if step.rule_key in keys:
            out.setdefault(step.rule_key, {}).update(step.outputs)
    return out


def table_changes(suite: str, build: Path) -> Table:
    """Figure 2 as a table: each changed transition's input, operation, Vanilla and Mirror output."""
    from mcbuild.compiler.mirror.resolve import ChangedTransition

    key, title = f"changes_{suite}", f"Changed transitions in {sname(suite)}"
    cols = ["Change", "Input", "Operation", "Vanilla output", f"{sname(suite)} output"]
    path = build / suite / "report.json"
    try:
        report = suite_report(path)
    except ValueError as exc:
        return Table(key, title, "", cols, [], omitted=str(exc))
    if report is None:
        return Table(key, title, "", cols, [], omitted=f"{path} is missing (build the suite with `mcbuild build`).")
    changes = report.get("changes", [])
    van = vanilla_outputs([t for ch in changes for t in ch["transitions"]])
    rows = []
    for ch in changes:
        ts = ch["transitions"]
        for t in ts[:_ROWS_PER_CHANGE]:
            rk = ChangedTransition(t["skill"], t["target"], t.get("station")).key()
            op = _OPERATIONS.get(t["skill"], t["skill"]) + (f" in {t['station'].replace('_', ' ')}" if t.get("station") else "")
            target = ("recipe " if t["skill"] == "craft_grid" else "") + t["target"].removeprefix("minecraft:")
            vo = ", ".join(_item(i, n) for i, n in sorted(van.get(rk, {}).items())) or "(none)"
            rows.append([ch["id"], target, op, vo, ", ".join(_item(i, n) for i, n in t["outputs"])])
        if len(ts) > _ROWS_PER_CHANGE:
            rows.append([ch["id"], f"… {len(ts) - _ROWS_PER_CHANGE} more inputs", EM, EM, "same change"])
    return Table(key, title, f"From {suite}/report.json: each row applies an operation to an input; Vanilla "
                 "outputs are the vanilla rules' expected drops or products (means for random drops).", cols, rows)
