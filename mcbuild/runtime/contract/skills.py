"""The 13 semantic skills of the paper's body (Appendix L.9): arguments, bounds and reason codes.

Every backend validates an agent's action with :func:`validate` before executing it, so the
same malformed action fails the same way everywhere. Ids are checked against the static 1.19
registry (the game's ``reports/registries.json``) only, never against a world's rules, and are
normalized to their namespaced form (``"oak_log"`` -> ``"minecraft:oak_log"``).

The reason codes below are the body's vocabulary for failures; every backend
reports them as a result's ``reason``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Mapping

from mcbuild.compiler.core.memo import LRU
from mcbuild.compiler.rules.catalog import Catalog, ns
from mcbuild.compiler.rules.crafting import grid_size
from mcbuild.compiler.rules.rulebook import STATION_RECIPE_TYPES, Rulebook
from mcbuild.runtime.records import semantic_signature

# ---------------------------------------------------------------------------- reason codes
INVALID_ACTION = "invalid_action"        # not an action object, or an unknown skill
INVALID_ARGS = "invalid_args"            # a missing, unknown or out-of-bounds argument
NEEDS_TOOL = "needs_tool"                # no owned tool lets the block drop anything
MISSING_ITEM = "missing_item"            # an input is not owned in the needed quantity
NEEDS_TABLE = "needs_table"              # no placed crafting/enchanting table nearby
NEEDS_STATION = "needs_station"          # no placed furnace-like station of that kind nearby
STATION_UNREACHABLE = "station_unreachable"
NO_FUEL = "no_fuel"
NO_SPOT = "no_spot"                      # no open position to place or pillar into
NO_TARGET = "no_target"                  # nothing matching nearby / found by exploring
NOT_SEARCHABLE = "not_searchable"        # explore target is not a block or living-entity id
UNREACHABLE = "unreachable"              # target seen but more than one obstruction away
PICKUP_FAILED = "pickup_failed"          # inventory full
NO_RESULT = "no_result"                  # the crafting grid produced nothing
NOT_SMELTABLE = "not_smeltable"          # the station cooks nothing from this input
NOT_ENCHANTABLE = "not_enchantable"
NEEDS_LEVEL = "needs_level"
NOT_EQUIPPABLE = "not_equippable"        # facilities are placed, not equipped
NO_OFFER = "no_offer"
REASONS = (INVALID_ACTION, INVALID_ARGS, NEEDS_TOOL, MISSING_ITEM, NEEDS_TABLE, NEEDS_STATION,
           STATION_UNREACHABLE, NO_FUEL, NO_SPOT, NO_TARGET, NOT_SEARCHABLE, UNREACHABLE, PICKUP_FAILED,
           NO_RESULT, NOT_SMELTABLE, NOT_ENCHANTABLE, NEEDS_LEVEL, NOT_EQUIPPABLE, NO_OFFER)

# ---------------------------------------------------------------------------- interface vocabulary
LOG_ALIAS = "log"                        # mine/explore: any trunk or stem, i.e. a member of LOG_TAG
LOG_TAG = "minecraft:logs"
CRAFT_STATIONS = ("inventory", "crafting_table")
COOK_STATIONS = tuple(STATION_RECIPE_TYPES)
ENCHANT_OPTIONS = ("lowest", "middle", "highest")
CRAFTING_TABLE = "minecraft:crafting_table"
ENCHANTING_TABLE = "minecraft:enchanting_table"
FACILITIES = (CRAFTING_TABLE, *(ns(s) for s in COOK_STATIONS), ENCHANTING_TABLE)
FACILITY_SET = frozenset(FACILITIES)
TRADE_PARTNER = "minecraft:villager"
PLAYER = "minecraft:player"


def burnable(rules: Rulebook, item: str, smelted: str) -> bool:
    """Whether the body burns owned ``item`` as fuel when smelting ``smelted`` (the body's policy
    burns only these; a planner predicts with it): any fuel of the rules except what it protects: the
    input itself, its tools and weapons (every item that wears out: wooden tools, bows, crossbows,
    fishing rods) and the stations of its skills (a crafting table)."""
    return item != smelted and item not in FACILITIES and not rules.max_durability(item) and rules.is_fuel(item) > 0


class ActionError(ValueError):
    """An action that cannot be executed as given; ``reason`` is a reason code."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Action:
    """A validated action: a skill name and its complete, normalized arguments."""

    skill: str
    args: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"skill": self.skill, "args": dict(self.args)}

    @cached_property
    def text(self) -> str:
        """:func:`describe` of this action, made once (a remembered action is handed out again:
        see :class:`Validator`)."""
        return describe(self)


# ---------------------------------------------------------------------------- argument kinds
_REQUIRED = object()


@dataclass(frozen=True)
class Arg:
    name: str
    parse: Callable[[Any, Catalog], Any]
    default: Any = _REQUIRED

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


@dataclass(frozen=True)
class _Integer:
    lo: int
    hi: int

    def __call__(self, value: Any, _: Catalog) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not self.lo <= value <= self.hi:
            raise ValueError(f"must be an integer in {self.lo}..{self.hi}")
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "integer", "minimum": self.lo, "maximum": self.hi}


@dataclass(frozen=True)
class _Choice:
    options: tuple[str, ...]

    def __call__(self, value: Any, _: Catalog) -> str:
        if value not in self.options:
            raise ValueError(f"must be one of {', '.join(self.options)}")
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": list(self.options)}


ID_CHARS = 48       # a bound on an id's length in reply schemas (the 1.19 registry's longest id has 44)


def _identifier(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be an id string")
    return ns(value.strip().lower())


def _block(value: Any, cat: Catalog) -> str:
    if isinstance(value, str) and value.strip().lower() in (LOG_ALIAS, ns(LOG_ALIAS)):
        return LOG_ALIAS
    rid = _identifier(value)
    if rid not in cat.blocks:
        raise ValueError(f"{rid} is not a block id")
    return rid


def _item(value: Any, cat: Catalog) -> str:
    rid = _identifier(value)
    if rid not in cat.items:
        raise ValueError(f"{rid} is not an item id")
    return rid


def _entity(value: Any, cat: Catalog) -> str:
    rid = _identifier(value)
    if rid not in cat.entities:
        raise ValueError(f"{rid} is not an entity id")
    return rid


def _search_target(value: Any, cat: Catalog) -> str:
    """explore: an exact block or entity id, or the log alias (anything else is not searchable)."""
    if isinstance(value, str) and value.strip().lower() in (LOG_ALIAS, ns(LOG_ALIAS)):
        return LOG_ALIAS
    rid = _identifier(value)
    if rid not in cat.blocks and rid not in cat.entities:
        raise ActionError(NOT_SEARCHABLE, f"{rid} is not a block or living-entity id")
    return rid


def _access_target(value: Any, cat: Catalog) -> str:
    return _block(value, cat)


def _grid(value: Any, cat: Catalog) -> list[list[str | None]]:
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(r, (list, tuple)) for r in value):
        raise ValueError("grid must be a nested array of row arrays")
    rows = [[None if cell is None else _item(cell, cat) for cell in row] for row in value]
    if all(c is None for r in rows for c in r):
        raise ValueError("grid is empty")
    return rows


def _fixed_one(value: Any, _: Catalog) -> int:
    if value != 1 or isinstance(value, bool):
        raise ValueError("count is fixed to 1")
    return 1


SKILLS: dict[str, tuple[Arg, ...]] = {
    "mine": (Arg("block", _block), Arg("count", _Integer(1, 4), 1)),
    "explore": (Arg("target", _search_target),),
    "prepare_access": (Arg("target", _access_target),),
    "craft_grid": (Arg("station", _Choice(CRAFT_STATIONS)), Arg("grid", _grid), Arg("count", _fixed_one, 1)),
    "smelt": (Arg("input", _item), Arg("station", _Choice(COOK_STATIONS), "furnace"), Arg("count", _Integer(1, 6), 1)),
    "attack": (Arg("target", _entity), Arg("count", _Integer(1, 4), 1)),
    "enchant": (Arg("item", _item), Arg("option", _Choice(ENCHANT_OPTIONS), "lowest")),
    "place": (Arg("block", _item),),
    "equip": (Arg("item", _item),),
    "collect": (Arg("item", _item),),
    "ascend": (Arg("height", _Integer(0, 6), 0),),
    "trade": (Arg("with", _entity, TRADE_PARTNER), Arg("give", _item), Arg("get", _item),
              Arg("count", _Integer(1, 64), 1)),
    "wait": (Arg("ticks", _Integer(1, 24000), 20),),
}


_ARG_NAMES = {skill: frozenset(a.name for a in spec) for skill, spec in SKILLS.items()}


# ---------------------------------------------------------------------------- JSON Schema of the arguments
def _ref(kind: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{kind}"}


def _grid_schema() -> dict[str, Any]:
    """A crafting grid: rows of item ids or nulls, no larger than the largest station's grid (read
    from the game's data when a schema is first asked for, never at import)."""
    size = max(grid_size(s) for s in CRAFT_STATIONS)
    return {"type": "array", "minItems": 1, "maxItems": size,
            "items": {"type": "array", "maxItems": size, "items": {"anyOf": [_ref("item"), {"type": "null"}]}}}


_ID_SCHEMAS: dict[Callable[[Any, Catalog], Any], Callable[[], dict[str, Any]]] = {
    _block: lambda: _ref("block"), _access_target: lambda: _ref("block"), _item: lambda: _ref("item"),
    _entity: lambda: _ref("entity"), _search_target: lambda: {"anyOf": [_ref("block"), _ref("entity")]},
    _grid: _grid_schema, _fixed_one: lambda: {"type": "integer", "const": 1},
}


def arg_schema(arg: Arg) -> dict[str, Any]:
    """The JSON Schema of one argument: type and bounds; an id is a reference ``#/$defs/<block|item|entity>``
    (:func:`id_defs`)."""
    schema = getattr(arg.parse, "schema", None)
    return schema() if schema is not None else _ID_SCHEMAS[arg.parse]()


def id_defs(catalog: Catalog | None) -> dict[str, Any]:
    """The ``$defs`` the argument schemas refer to: the registry's ids as enums (namespaced; blocks also
    take the log alias), or, when ``catalog`` is None, a non-empty string of at most ``ID_CHARS``."""
    if catalog is None:
        return {kind: {"type": "string", "minLength": 1, "maxLength": ID_CHARS} for kind in ("block", "item", "entity")}
    return {"block": {"enum": [LOG_ALIAS, *sorted(catalog.blocks)]}, "item": {"enum": sorted(catalog.items)},
            "entity": {"enum": sorted(catalog.entities - {PLAYER})}}


def validate(action: Any, catalog: Catalog) -> Action:
    """The normalized :class:`Action` for an agent's ``{"skill": ..., "args": {...}}``.

    Raises :class:`ActionError` (``invalid_action``, ``invalid_args`` or ``not_searchable``).
    """
    if not _is_mapping(action) or not isinstance(action.get("skill"), str):
        raise ActionError(INVALID_ACTION, 'an action is {"skill": <name>, "args": {...}}')
    skill = action["skill"]
    if skill not in SKILLS:
        raise ActionError(INVALID_ACTION, f"unknown skill {skill!r}")
    given = action.get("args", {})
    if not _is_mapping(given):
        raise ActionError(INVALID_ARGS, "args must be an object")
    spec = SKILLS[skill]
    if not _ARG_NAMES[skill].issuperset(given):
        unknown = sorted(set(given) - _ARG_NAMES[skill])
        raise ActionError(INVALID_ARGS, f"{skill}: unknown argument(s) {', '.join(unknown)}")
    args: dict[str, Any] = {}
    for arg in spec:
        if arg.name not in given or given[arg.name] is None and arg.default is not _REQUIRED:
            if arg.default is _REQUIRED:
                raise ActionError(INVALID_ARGS, f"{skill}: missing argument {arg.name!r}")
            args[arg.name] = arg.default
            continue
        try:
            args[arg.name] = arg.parse(given[arg.name], catalog)
        except ActionError:
            raise
        except ValueError as exc:
            raise ActionError(INVALID_ARGS, f"{skill}.{arg.name}: {exc}") from None
    if skill == "craft_grid":
        size = grid_size(args["station"])
        grid = args["grid"]
        if len(grid) > size or any(len(r) > size for r in grid):
            raise ActionError(INVALID_ARGS, f"craft_grid: a {args['station']} grid is at most {size}x{size}")
    if skill == "attack" and args["target"] == PLAYER:
        raise ActionError(INVALID_ARGS, "attack: players are never valid targets")
    return Action(skill, args)


VALIDATED = 4096        # distinct valid actions a validator remembers
def action_key_encoder(c_make_encoder: Callable[..., Any] | None) -> Callable[[Any, int], Any]:
    """An action's canonical JSON text in chunks: ``JSONEncoder(sort_keys=True, separators=(",", ":"),
    allow_nan=False).encode``'s, from one C encoder made once when the interpreter has
    ``c_make_encoder`` (``encode`` makes one per call; no circular-reference check: a circular action
    raises RecursionError), else the encoder's own chunks (a circular action raises ValueError)."""
    encoder = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)
    if c_make_encoder is None:
        return lambda action, _: encoder.iterencode(action)
    return c_make_encoder(None, encoder.default, json.encoder.encode_basestring_ascii, None, ":", ",", True, False,
                          False)


_ACTION_KEY = action_key_encoder(getattr(json.encoder, "c_make_encoder", None))

class Validator:
    """:func:`validate` against one catalog, remembered per action, with the action's semantic
    signature: agents repeat their actions. Keyed by the action's canonical JSON text, for up to
    ``VALIDATED`` distinct valid actions (all forgotten at once when full: a look-up is one dict
    read, safe between threads); an action that is not plain JSON, or is invalid, is validated every
    time. The :class:`Action` handed out is shared: never change its arguments."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self._known: dict[str, tuple[Action, str]] = {}

    def __call__(self, action: Any) -> tuple[Action, str]:
        """(the normalized action, its semantic signature); raises :class:`ActionError` as
        :func:`validate` does."""
        try:
            key = "".join(_ACTION_KEY(action, 0))
        except (TypeError, ValueError, RecursionError):     # not plain JSON (a non-string key, NaN, an object, a cycle)
            return self._checked(action)
        known = self._known.get(key)
        if known is None:
            known = self._checked(action)
            if len(self._known) >= VALIDATED:
                self._known.clear()
            self._known[key] = known
        return known

    def _checked(self, action: Any) -> tuple[Action, str]:
        act = validate(action, self.catalog)
        return act, semantic_signature(act.skill, act.args)


_VALIDATORS: LRU[Validator] = LRU(4)


def validator(catalog: Catalog) -> Validator:
    """The process's :class:`Validator` of ``catalog`` (shared by every episode against it)."""
    found = _VALIDATORS.get_or_make(id(catalog), lambda: Validator(catalog))
    if found.catalog is not catalog:            # an id reused by a later catalog
        found = Validator(catalog)
        _VALIDATORS.put(id(catalog), found)
    return found


def _is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, a plain dict (the usual case) without the ABC check."""
    return type(value) is dict or isinstance(value, Mapping)


def describe(action: Action | Mapping[str, Any]) -> str:
    """One-line text of an action, e.g. ``mine(block=minecraft:stone, count=2)``."""
    if isinstance(action, Action):
        skill, args = action.skill, action.args
    else:
        skill, args = str(action.get("skill")), action.get("args", {})
    inner = ", ".join(f"{k}={_text(v)}" for k, v in sorted(args.items()))
    return f"{skill}({inner})"


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_text(v) for v in value) + "]"
    return "null" if value is None else str(value)
