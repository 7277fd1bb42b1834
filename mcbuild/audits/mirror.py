"""Post-packaging audit of a Mirror (``kind: mirror``) datapack.

Three families of checks, all returning ``Findings``:

* **pack integrity** — ``pack.mcmeta`` declares pack_format 10, every JSON document parses,
  every ``.mcfunction`` line parses as a 1.19 command, no cooking recipe has an object
  ``result`` (1.19 only accepts a bare item id there), no stray file rides along;
* **hidden-rule integrity** — the pack overrides exactly the transitions its manifest declares
  (what the mirror compiler emits for each change, compared through the rulebook with vanilla),
  and nothing an agent-side interface could read from the pack names the suite, its title, a
  change id or the manifest itself;
* **tracer-derived checks** — each selected task stays reachable, each change lies on a selected
  route (relevance), is met before the task completes (encounterability) and is reported by a
  skill's outcome (observability) and is not bypassed by an unchanged twin
  (``mcbuild.compiler.planning.bypass``); extreme route changes are warnings.

``audit_mirror`` takes the files already in memory (as ``compile`` has them) or as read back
from ``datapack.zip`` (as ``mcbuild audit`` has them), with the resolved changes, the files the
manifest implies (:class:`Expected`) and the tracer's report: the pipeline
(``mcbuild.compiler.build``) computes all of them, the audit only judges.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

from mcbuild.compiler.core.findings import Findings
from mcbuild.compiler.mirror.resolve import Resolved
from mcbuild.compiler.rules import rulebook as rulebook_mod
from mcbuild.compiler.rules.commands import validate_function
from mcbuild.compiler.rules.pack import PACK_FORMAT, parse_resource_path, resource_path, to_bytes
from mcbuild.compiler.rules.rulebook import Rulebook

COOKING_TYPES = {*rulebook_mod.STATION_RECIPE_TYPES.values(), "minecraft:campfire_cooking"}   # stations + campfire
# Words that only a manifest or a rule sheet would contain; never in a neutral override file.
MANIFEST_WORDS = ("mirror", "manifest", "selected_tasks", "rule suite", "rulesheet", "rules.md")
# A suite route this much shorter / longer than the vanilla one is flagged for the Judge.
SHORTCUT_RATIO = 0.4
DETOUR_RATIO = 2.5
PREFERRED_CHANGES = (2, 6)


@dataclass(frozen=True)
class Expected:
    """The pack files a manifest implies: all its changes together, and each change alone."""

    whole: Mapping[str, Any]
    alone: tuple[Mapping[str, Any], ...]


def audit_mirror(files: Mapping[str, bytes | dict | str], spec, resolved: list[Resolved], expected: Expected,
                 tracer_report: dict | None, file: str) -> Findings:
    """Every static check of a compiled Mirror pack (see the module docstring)."""
    raw = {name: to_bytes(value) for name, value in files.items()}
    found = Findings()
    parsed = _pack_integrity(raw, found)
    _rule_integrity(raw, parsed, resolved, expected, found)
    _leaks(raw, spec, found)
    _tracer_checks(spec, resolved, tracer_report, file, found)
    n = len(spec.changes)
    if not PREFERRED_CHANGES[0] <= n <= PREFERRED_CHANGES[1]:
        found.warn("change_count", file, "changes",
                   f"{n} change(s); prefer {PREFERRED_CHANGES[0]} to {PREFERRED_CHANGES[1]} interpretable changes")
    return found


# ------------------------------------------------------------------ pack integrity
def _pack_integrity(raw: dict[str, bytes], found: Findings) -> bool:
    """Format checks; returns whether the pack is parseable enough for the rulebook comparison."""
    ok = True
    if "pack.mcmeta" not in raw:
        found.hard("pack_mcmeta_missing", "pack.mcmeta", "<file>", "the pack has no pack.mcmeta")
        ok = False
    for name in sorted(raw):
        data = raw[name]
        if name.endswith((".json", ".mcmeta")):
            try:
                doc = json.loads(data.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                found.hard("json_invalid", name, "<file>", f"not valid JSON: {exc}")
                ok = False
                continue
            if name == "pack.mcmeta":
                fmt = doc.get("pack", {}).get("pack_format") if isinstance(doc, dict) else None
                if fmt != PACK_FORMAT:
                    found.hard("pack_format", name, "pack.pack_format",
                               f"pack_format must be {PACK_FORMAT} (Minecraft 1.19.0), got {fmt!r}")
            elif _is_cooking(doc) and isinstance(doc.get("result"), dict):
                found.hard("cooking_result_object", name, "result",
                           "1.19 cooking recipes take a bare item id as result, not an object")
        elif name.endswith(".mcfunction"):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                found.hard("function_invalid", name, "<file>", "not UTF-8 text")
                continue
            lines = [ln.strip() for ln in text.splitlines()]
            numbered = [(i, ln) for i, ln in enumerate(lines, 1) if ln and not ln.startswith("#")]
            for problem, (lineno, _) in zip(_problems([ln for _, ln in numbered]), numbered):
                if problem is not None:
                    found.hard("function_invalid", name, f"line {lineno}", problem)
        else:
            found.hard("unexpected_file", name, "<file>",
                       "only pack.mcmeta, JSON resources and .mcfunction files belong in the pack")
            continue
        if name != "pack.mcmeta" and parse_resource_path(name) is None:
            found.hard("unexpected_file", name, "<file>", "not a resource path of a 1.19 datapack")
    return ok


def _problems(lines: list[str]) -> list[str | None]:
    """One entry per line: None when it parses, else the parser's message."""
    out: list[str | None] = []
    for line in lines:
        problems = validate_function([line])
        out.append(problems[0].split(": ", 2)[-1] if problems else None)
    return out


def _is_cooking(doc: Any) -> bool:
    return isinstance(doc, dict) and str(doc.get("type", "")).removeprefix("minecraft:") in {
        t.removeprefix("minecraft:") for t in COOKING_TYPES}


# ------------------------------------------------------------------ hidden-rule integrity
def _resource_file(key: tuple[str, str]) -> str:
    kind, rid = key
    return resource_path(kind, rid, ".mcfunction" if kind == "function" else ".json")


def _rule_integrity(raw: dict[str, bytes], parseable: bool, resolved: list[Resolved], manifest: Expected,
                    found: Findings) -> None:
    vanilla = rulebook_mod.vanilla()
    try:
        actual_rb = Rulebook(vanilla.catalog, [("pack", raw)])
    except Exception as exc:  # noqa: BLE001 - an unparseable pack: reported above, or malformed beyond that
        if parseable:
            found.hard("pack_unreadable", "datapack.zip", "<pack>", f"the rulebook cannot read the pack: {exc}")
        return
    expected_rb = Rulebook(vanilla.catalog, [("manifest", {k: to_bytes(v) for k, v in manifest.whole.items()})])
    actual = set(actual_rb.changed_keys(vanilla))
    expected = set(expected_rb.changed_keys(vanilla))

    owner: dict[tuple[str, str], str] = {}
    for res, alone in zip(resolved, manifest.alone):
        keys = Rulebook(vanilla.catalog, [("c", {k: to_bytes(v) for k, v in alone.items()})]).changed_keys(vanilla)
        own = [k for k in keys if k in expected]
        if not own:
            found.hard("change_noop", "spec", f"changes[{res.index}]",
                       f"change {res.change.id!r} produces no difference from vanilla rules")
        for k in own:
            owner.setdefault(k, res.change.id)

    for key in sorted(actual - expected):
        found.hard("undeclared_override", _resource_file(key), f"{key[0]}:{key[1]}",
                   "the pack changes this resource but no manifest change declares it")
    for key in sorted(expected - actual):
        who = owner.get(key, "the compiler's support files")
        found.hard("missing_override", _resource_file(key), f"{key[0]}:{key[1]}",
                   f"declared by {who} but the pack leaves it as in vanilla")
    for key in sorted(actual & expected):
        if actual_rb.resources.get(key) != expected_rb.resources.get(key):
            who = owner.get(key, "the compiler's support files")
            found.hard("override_mismatch", _resource_file(key), f"{key[0]}:{key[1]}",
                       f"differs from what {who} compiles to")


# ------------------------------------------------------------------ information leaks
def _leak_patterns(spec) -> list[tuple[str, re.Pattern[str]]]:
    words: list[tuple[str, str]] = [("suite id", spec.id), ("title", spec.title)]
    words += [("change id", ch.id) for ch in spec.changes]
    words += [("manifest word", w) for w in MANIFEST_WORDS]
    out = []
    for what, word in words:
        word = word.strip().lower()
        if len(word) < 2:
            continue
        out.append((f"{what} {word!r}", re.compile(r"(?<![a-z0-9_:/.#-])" + re.escape(word) + r"(?![a-z0-9_-])")))
    return out


def _leaks(raw: dict[str, bytes], spec, found: Findings) -> None:
    patterns = _leak_patterns(spec)
    vanilla_files = rulebook_mod.vanilla().catalog.files
    for name in sorted(raw):
        base = vanilla_files.get(name, b"").decode("utf-8", "replace").lower()
        for where, text in (("<path>", name.lower()), ("<content>", raw[name].decode("utf-8", "replace").lower())):
            for what, pat in patterns:
                # a word the vanilla file already contains (e.g. a recipe group) reveals nothing
                if pat.search(text) and not (where == "<content>" and pat.search(base)):
                    found.hard("rule_text_leak", name, where,
                               f"the pack names the {what}; an agent-side interface could read it")


# ------------------------------------------------------------------ tracer checks
def _tracer_checks(spec, resolved: list[Resolved], report: dict | None, file: str, found: Findings) -> None:
    if not report:
        found.warn("tracer_missing", file, "<report>", "no tracer report: reachability and relevance were not checked")
        return
    tasks = report.get("tasks", {})
    for tid in spec.selected_tasks:
        t = tasks.get(tid)
        fld = f"selected_tasks[{tid}]"
        if t is None:
            found.hard("task_untraced", file, fld, f"the tracer report has no route for task {tid}")
            continue
        suite = t.get("suite", {})
        if not suite.get("reachable"):
            found.hard("task_unreachable", file, fld, f"task {tid} has no route under this suite")
            continue
        v_len, s_len = t.get("vanilla", {}).get("route_length"), suite.get("route_length")
        if v_len and s_len is not None:
            if s_len <= SHORTCUT_RATIO * v_len:
                found.warn("route_shortcut", file, fld,
                           f"route shrinks from {v_len} to {s_len} actions: a shortcut this strong may trivialize {tid}")
            elif s_len >= DETOUR_RATIO * v_len:
                found.warn("route_detour", file, fld,
                           f"route grows from {v_len} to {s_len} actions: scarcity this strong may exhaust the budget")
        for code, m in sorted(t.get("milestones", {}).items()):
            if not m.get("suite_reachable", True):
                found.warn("milestone_unreachable", file, f"{fld}.{code}", f"milestone {code} has no route under this suite")

    by_id = {c.get("id"): c for c in report.get("changes", [])}
    selected = set(spec.selected_tasks)
    for res in resolved:
        cid, fld = res.change.id, f"changes[{res.index}]"
        c = by_id.get(cid)
        if c is None:
            found.hard("change_untraced", file, fld, f"the tracer report does not place change {cid!r}")
            continue
        on = set(c.get("on_routes", [])) & selected
        if not on:
            found.hard("change_off_route", file, fld, f"change {cid!r} lies on no selected task route")
            continue
        if not c.get("observed_by"):
            found.hard("change_unobservable", file, fld,
                       f"no skill reports the outcome of change {cid!r}; it could only be learned by inspection")
        for key, keys in sorted(c.get("bypassed_by", {}).items()):
            found.hard("change_bypassed", file, fld,
                       f"change {cid!r} is bypassed: unchanged, {', '.join(keys)} still yields what {key} "
                       "yielded in vanilla, from no other inputs; change the twin too")
        met = set(c.get("encountered_before_completion", [])) & selected
        if not met:
            found.warn("change_not_encountered", file, fld,
                       f"change {cid!r} is not met before any selected task completes")
        if c.get("in_dependency_graph") is False:
            found.warn("change_outside_graph", file, fld,
                       f"change {cid!r} edits a transition the dependency graph never uses")
