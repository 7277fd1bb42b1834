"""Prompt rendering for the LLM agents: jinja2 templates in ``prompts/`` plus the observation view.

The observation dict comes from ``mcbuild.runtime.contract.observation.ObservationTracker.build``;
:func:`observation_view` keeps the fields the L.8 blocks show (the templates read them by the
observation's own names) and passes any other key through as an extra block, so the one shared ``observation.j2`` renders whatever is present.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar, cast

import jinja2
import orjson

from mcbuild.compiler.core.canonical import compact
from mcbuild.compiler.core.memo import LRU
from mcbuild.llm.templates import preview, template_environment

PROMPTS = Path(__file__).with_name("prompts")
T = TypeVar("T")
SYSTEM_PROMPTS = 64         # (template, arguments) pairs of rendered system prompts kept per process

# The observation fields the L.8 blocks show, in their order; the templates read each by its own name
BLOCK_FIELDS: tuple[str, ...] = (
    "task", "next_milestone", "budget", "inventory", "equipped", "durability", "experience", "capabilities",
    "facilities", "nearby_targets", "nearby_drops", "nearby_entities", "position", "progress",
    "completed_advancements", "verified_action_effects", "vanilla_recipe_hypotheses",
    "actionable_verified_transformations", "unused_output_warnings", "latest_result", "stagnation_warning",
    "blocked_actions", "failure_cycle", "stagnation_cycle", "survival", "biome",
)
SHOWN_FIELDS = frozenset(BLOCK_FIELDS)
# observation fields ``observation.j2`` prints only as JSON, after at most an ``is not none`` or ``empty``
# test (an agent may hand them in as :class:`Shown`)
JSON_BLOCKS = ("capabilities", "completed_advancements", "durability", "equipped", "experience", "failure_cycle",
               "inventory", "nearby_drops", "nearby_entities", "nearby_targets", "next_milestone", "survival",
               "vanilla_recipe_hypotheses", "verified_action_effects")
# keys the agents never show the model (bookkeeping of the runtime, not world evidence)
HIDDEN_KEYS = frozenset({"minecraft_version", "step", "episode_id", "seed", "world", "condition", "suite", "configuration",
                         "disclosure", "rules", "rule_sheet", "evaluator", "encounters", "events", "java_version"})


TASK_ROUTES = 256           # rendered task routes kept per process (keyed by the task's JSON text)


class Shown(str):
    """JSON text made once and kept (a completed trace step's arguments and result): the
    ``compact`` filter passes it through instead of serializing its value again."""


def shown(value: Any) -> str:
    """The templates' ``compact`` filter: ``compact(value)``, or ``value`` itself when it is :class:`Shown`."""
    return value if type(value) is Shown else compact(value)


@lru_cache(maxsize=1)
def env() -> jinja2.Environment:
    e = template_environment(PROMPTS, keep_trailing_newline=False, compact=shown, preview=preview,
                             step_lines=step_lines)
    e.getattr = _getattr            # type: ignore[method-assign]  # every `a.b` of a template
    e.globals["skills"] = skill_signatures
    return e


def render(name: str, **context: Any) -> str:
    """The text of a template: a system prompt with only scalar arguments (most have none) is
    rendered once per process (:func:`_system`), everything else on every call."""
    if name.endswith("_system.j2") and all(isinstance(v, (str, int)) for v in context.values()):
        return _system(name, tuple(sorted(context.items())))
    return _render(name, context)


def _render(name: str, context: Mapping[str, Any]) -> str:
    return env().get_template(name).render(**context).strip() + "\n"


@lru_cache(maxsize=SYSTEM_PROMPTS)
def _system(name: str, context: tuple[tuple[str, Any], ...]) -> str:
    """A system prompt depends on nothing but its template and its scalar arguments: rendering
    ReAct's costs about 1 ms, once per action otherwise."""
    return _render(name, dict(context))


def step_line(step: Mapping[str, Any]) -> str:
    """One recent step's line (``recent_step.j2``)."""
    return env().get_template("recent_step.j2").render(s=step)


def step_lines(steps: list[Mapping[str, Any]]) -> str:
    """The templates' ``step_lines`` filter: the recent steps' lines, one a line; a step that has its
    line already (``"line"``: a trace keeps each step's until the step changes) is not rendered again."""
    return "\n".join(s.get("line") or step_line(s) for s in steps)


def template_names() -> list[str]:
    return sorted(p.name for p in PROMPTS.glob("*.j2"))


SYSTEM_HASHES = 64          # system prompts whose hash state is kept per process
_SYSTEM_HASHES: dict[str, Any] = {}


def prompt_hash(messages: list[dict[str, str]]) -> str:
    """16 hex digits of the sha256 of ``compact(messages)``; messages hold only strings, for which
    orjson's sorted-key bytes are exactly ``compact``'s UTF-8, at a tenth of the cost. A leading
    system message (the same in every call of an episode) is hashed once per process: the hash
    continues from the state its bytes left (:func:`_system_state`)."""
    first = messages[0] if len(messages) > 1 else None
    if type(first) is dict and first.keys() == {"role", "content"} and first["role"] == "system" \
            and type(first["content"]) is str:
        h = _system_state(first).copy()
        h.update(orjson.dumps(messages[1:], option=orjson.OPT_SORT_KEYS)[1:])    # the list's "[" is in the state
        return h.hexdigest()[:16]
    return hashlib.sha256(orjson.dumps(messages, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def _system_state(message: dict[str, str]) -> Any:
    """The sha256 state after the bytes of ``[<message>,``, kept per system prompt text."""
    state = _SYSTEM_HASHES.get(message["content"])
    if state is None:
        if len(_SYSTEM_HASHES) >= SYSTEM_HASHES:
            _SYSTEM_HASHES.clear()
        state = _SYSTEM_HASHES[message["content"]] = hashlib.sha256(
            b"[" + orjson.dumps(message, option=orjson.OPT_SORT_KEYS) + b",")
    return state


class View(dict):
    """A dict whose keys also read as attributes, the way templates read them: jinja looks a name
    up as an attribute first, and on a plain dict that costs a caught ``AttributeError`` a lookup.
    A missing key is still an ``AttributeError`` (then jinja's undefined), as on a plain dict."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


_DICT_NAMES = frozenset(dir(View))


def _getattr(obj: Any, attribute: str) -> Any:
    """jinja's ``obj.attribute`` (an attribute first, then an item, else undefined) without the
    caught ``AttributeError`` on a dict, whose only attributes are its methods: the templates
    read about a hundred fields of dicts a prompt."""
    if (type(obj) is dict or type(obj) is View) and attribute not in _DICT_NAMES:
        try:
            return obj[attribute]
        except KeyError:
            pass
    return jinja2.Environment.getattr(env(), obj, attribute)


def skill_signatures() -> dict[str, list[str]]:
    """skill -> argument names (from the runtime's one skill table)."""
    from mcbuild.runtime.contract.skills import SKILLS

    return {name: [a.name for a in spec] for name, spec in SKILLS.items()}


# ---------------------------------------------------------------------------- observation
EMPTY_JSON = frozenset({"{}", "[]", '""'})      # the JSON text of an empty object, array or string


def _empty(value: Any) -> bool:
    """Whether a block is empty (``None``, ``""``, an empty collection), also as :class:`Shown` JSON text."""
    if type(value) is Shown:
        return value in EMPTY_JSON
    return value is None or value == "" or (isinstance(value, (list, dict, tuple, set)) and not value)


Memo = dict[str, tuple[Any, Any]]       # part -> (what it was made from, the value made)


def kept(memo: Memo | None, part: str, source: Any, make: Callable[[], T]) -> T:
    """``make()``; with ``memo`` (an agent's, for one episode), the value made for ``part`` the last
    time when ``source`` is the very object it was made from: an observation is read-only, and a
    block that did not change is shared with the next one."""
    if memo is None:
        return make()
    known = memo.get(part)
    if known is None or known[0] is not source:
        known = memo[part] = (source, make())
    return cast(T, known[1])


def observation_view(obs: Mapping[str, Any], *, omit: tuple[str, ...] = (), memo: Memo | None = None) -> dict[str, Any]:
    """The L.8 blocks' fields (``None`` when absent) and the extra blocks of unknown keys; ``memo``
    keeps what is derived from the task and the key set from one observation to the next."""
    view: dict[str, Any] = {key: None if key in omit else obs.get(key) for key in BLOCK_FIELDS}
    facilities = view["facilities"] or {}
    view["observed_facilities"] = facilities.get("observed")
    view["owned_unplaced_facilities"] = facilities.get("owned_unplaced")
    view["position_xyz"] = _xyz(view["position"])
    view["progress_score"], view["progress_highest"] = progress_parts(view["progress"])
    view["facility_names"] = kept(memo, "facility_names", view["observed_facilities"],
                                  lambda: facility_ids(view["observed_facilities"]))
    view["task_text"], view["task_state"], view["task_route"] = kept(memo, "task", view["task"],
                                                                     lambda: _task_parts(view["task"]))
    view["java_version"] = obs.get("minecraft_version", "1.19")
    view["extras"] = [(name, obs[k]) for name, k in _extra_keys(obs, omit, memo)]
    view["empty"] = _empty
    return View(view)


def _task_parts(task: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None, str | None]:
    """The task's view, its state and its rendered route (None without a route)."""
    text = task_view(task)
    return text, task_state(task), task_route(task) if text else None


def _extra_keys(obs: Mapping[str, Any], omit: tuple[str, ...], memo: Memo | None) -> list[tuple[str, str]]:
    """(BLOCK NAME, key) of the keys of ``obs`` shown as extra blocks, sorted; with ``memo``, made
    again only when the observation's keys or ``omit`` differ from the previous call's."""
    known = memo.get("extras") if memo is not None else None
    if known is not None and known[0][1] == omit and known[0][0] == obs.keys():
        return cast("list[tuple[str, str]]", known[1])
    keys = [(k.upper(), k) for k in sorted(obs)
            if k not in SHOWN_FIELDS and k not in HIDDEN_KEYS and not k.startswith("_") and k not in omit]
    if memo is not None:
        memo["extras"] = ((frozenset(obs), omit), keys)
    return keys


def _xyz(pos: Any) -> tuple[Any, Any, Any] | None:
    if isinstance(pos, Mapping):
        return pos.get("x"), pos.get("y"), pos.get("z")
    if isinstance(pos, (list, tuple)) and len(pos) >= 3:
        return pos[0], pos[1], pos[2]
    return None


def progress_parts(progress: Any) -> tuple[Any, Any]:
    """The score and the highest completed milestone of a ``progress`` block."""
    if isinstance(progress, Mapping):
        score = progress.get("score", progress.get("value", progress.get("current", 0)))
        highest = next((progress[k] for k in ("highest_completed", "highest", "highest_completed_milestone", "milestone")
                        if progress.get(k)), None)
        return score, highest or "none"
    if isinstance(progress, (int, float)):
        return progress, "none"
    return 0, "none"


def facility_ids(facilities: Any) -> list[str]:
    """The sorted facility ids of a facilities block."""
    if isinstance(facilities, Mapping):
        return sorted(str(k) for k in facilities)
    if isinstance(facilities, (list, tuple)):
        out = []
        for f in facilities:
            out.append(str(f.get("id", f.get("name", f.get("block", "")))) if isinstance(f, Mapping) else str(f))
        return sorted(set(o for o in out if o))
    return []


# ---------------------------------------------------------------------------- task (L.10)
def _milestones(task: Any) -> list[dict[str, Any]]:
    if isinstance(task, Mapping):
        for key in ("milestones", "route", "checkpoints", "task_route"):
            if isinstance(task.get(key), (list, tuple)):
                items = list(task[key])
                break
        else:
            items = []
        final = task.get("final")
        if isinstance(final, Mapping) and all(_mid(i) != _mid(final) for i in items if isinstance(i, Mapping)):
            items = items + [dict(final, score=100)]
    elif isinstance(task, (list, tuple)):
        items = list(task)
    else:
        return []
    out = []
    for i in items:
        if isinstance(i, Mapping):
            out.append({"id": _mid(i), "title": i.get("title") or i.get("code") or i.get("name") or _mid(i),
                        "score": i.get("score", i.get("value", i.get("points"))),
                        "description": i.get("description")})
        elif isinstance(i, (list, tuple)) and len(i) == 2:
            out.append({"id": str(i[0]), "title": str(i[0]), "score": i[1], "description": None})
    return out


def _mid(m: Mapping[str, Any]) -> str:
    return str(m.get("id") or m.get("advancement") or m.get("code") or m.get("name") or "")


def task_view(task: Any) -> dict[str, Any] | None:
    """``{"final": milestone, "checkpoints": [...], "name": ...}`` or ``None`` (then rendered as JSON)."""
    ms = _milestones(task)
    if not ms:
        return None
    finals = [m for m in ms if m["score"] == 100]
    final = finals[-1] if finals else ms[-1]
    checkpoints = [m for m in ms if m is not final]
    name = task.get("name", task.get("id")) if isinstance(task, Mapping) else None
    return {"final": final, "checkpoints": checkpoints, "name": name}


_ROUTES: LRU[str] = LRU(TASK_ROUTES)


def task_route(task: Any) -> str:
    """``task.j2`` rendered for ``task``: made once per distinct task (its JSON text is the key),
    since every observation of an episode shows the same route."""
    return _ROUTES.get_or_make(compact(task), lambda: env().get_template("task.j2").render(t=task_view(task)))


def task_state(task: Any) -> dict[str, Any] | None:
    """Completed and pending milestones, from the route's ``completed`` flags."""
    if not isinstance(task, Mapping) or not isinstance(task.get("route"), (list, tuple)):
        return None
    route = [m for m in task["route"] if isinstance(m, Mapping) and "completed" in m]
    if not route:
        return None
    return {"completed": [_mid(m) for m in route if m["completed"]],
            "pending": [_mid(m) for m in route if not m["completed"]]}


def goal_text(obs: Mapping[str, Any]) -> str:
    tv = task_view(obs.get("task"))
    if tv is None:
        return "the configured task"
    f = tv["final"]
    return f'the advancement "{f["title"]}" ({f["id"]})' if f["title"] != f["id"] else f"the advancement {f['id']}"


def task_text(obs: Mapping[str, Any]) -> str:
    """The task and its checkpoint route (L.10), or the goal when the route is unknown."""
    tv = task_view(obs.get("task"))
    return render("task.j2", t=tv).strip() if tv else goal_text(obs)


def observation_text(obs: Mapping[str, Any], *, feedback: bool = True, task: bool = True,
                     memo: Memo | None = None) -> str:
    omit: tuple[str, ...] = () if feedback else ("latest_result",)
    if not task:
        omit = omit + ("task",)
    return render("observation.j2", o=observation_view(obs, omit=omit, memo=memo), show_task=task)
