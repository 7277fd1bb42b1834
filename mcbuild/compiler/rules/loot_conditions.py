"""Loot conditions of Minecraft 1.19 and the context they read.

Every condition is a probability: exactly 0 or 1 unless ``random_chance`` is involved, so one
definition serves sampling (:func:`mcbuild.compiler.rules.loot.roll`) and exact expectation
(:func:`mcbuild.compiler.rules.loot.expected`). :func:`check` refuses, when a table is read, any condition
or predicate field not implemented here, naming it.

The context is one player acting: the player breaks blocks (no explosion, so
``survives_explosion`` always holds) and is the killer, direct killer and damage source of a mob
it kills in melee (no lightning, projectile or fire damage). "this" is the killed mob in entity
tables and the player elsewhere. Luck is 0 (no luck effects or attribute in our worlds).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from mcbuild.compiler.rules.catalog import Catalog, game_facts, ns
from mcbuild.compiler.rules.loot_numbers import LootError, construct

PLAYER = "minecraft:player"
ENTITY_FLAGS = {"is_on_fire", "is_baby", "is_sneaking", "is_sprinting", "is_swimming"}
# type_specific "type" -> the entity ids of that class (catalogs/game_facts.yaml)
TYPE_SPECIFIC: dict[str, frozenset[str]] = {kind: frozenset(ids) for kind, ids in
                                            game_facts()["loot_type_specific"].items()}
DAMAGE_FLAGS = {"is_projectile", "is_explosion", "bypasses_armor", "bypasses_invulnerability", "bypasses_magic",
                "is_fire", "is_magic", "is_lightning"}


class LootPlace(Protocol):
    """Where a table is rolled (read by ``location_check``)."""

    @property
    def biome(self) -> str:
        """The biome at the origin."""

    def block_at(self, offset: tuple[int, int, int]) -> tuple[str, dict[str, str]]:
        """(block id, state properties) at ``offset`` from the origin."""


class LootRules(Protocol):
    """What the loot engine reads of the rules (a ``mcbuild.compiler.rules.rulebook.Rulebook``)."""

    catalog: Catalog

    def get(self, kind: str, rid: str) -> Any: ...

    def tag(self, kind: str, tag_id: str) -> frozenset[str]: ...

    def loot_table(self, rid: str) -> dict | None: ...

    def smelting_result(self, item: str) -> str | None: ...


@dataclass(frozen=True)
class LootContext:
    """What the game knows when a table is rolled."""

    tool: str | None = None                               # the item in the player's hand (None: empty)
    enchantments: tuple[tuple[str, int], ...] = ()        # of that item
    killed_by_player: bool = True                         # entity tables: the player dealt the killing blow
    entity: str | None = None                             # entity tables: the killed mob ("this")
    on_fire: bool = False                                 # "this" is burning
    entity_data: tuple[tuple[str, Any], ...] = ()         # type_specific facts of "this": size, variant, ...
    block: str | None = None                              # block tables: the broken block
    block_state: tuple[tuple[str, str], ...] = ()         # ... and its state properties
    place: LootPlace | None = field(default=None, compare=False)

    def level(self, enchantment: str) -> int:
        return dict(self.enchantments).get(ns(enchantment), 0)


# ---------------------------------------------------------------- checking (when a table is read)
def check(cond: Any, where: str) -> None:
    kind, where = construct(cond, "condition", CONDITIONS, "condition", where)
    if kind == "minecraft:inverted":
        check(cond["term"], where)
    elif kind == "minecraft:alternative":
        for i, term in enumerate(cond["terms"]):
            check(term, f"{where}.terms[{i}]")
    elif kind == "minecraft:match_tool":
        _only(cond.get("predicate", {}), {"items", "tag", "enchantments"}, f"{where}.predicate")
    elif kind == "minecraft:entity_properties":
        _check_entity(cond.get("predicate", {}), f"{where}.predicate")
        if cond.get("entity", "this") not in ("this", "killer", "direct_killer", "killer_player"):
            raise LootError(f"{where}: unsupported entity target {cond.get('entity')!r}")
    elif kind == "minecraft:damage_source_properties":
        pred = cond.get("predicate", {})
        _only(pred, DAMAGE_FLAGS | {"source_entity", "direct_entity"}, f"{where}.predicate")
        for key in ("source_entity", "direct_entity"):
            if key in pred:
                _check_entity(pred[key], f"{where}.predicate.{key}")
    elif kind == "minecraft:location_check":
        pred = cond.get("predicate", {})
        _only(pred, {"biome", "block"}, f"{where}.predicate")
        _only(pred.get("block", {}), {"blocks", "tag", "state"}, f"{where}.predicate.block")
    elif kind == "minecraft:table_bonus" and not cond.get("chances"):
        raise LootError(f"{where}: no chances")


def _only(pred: dict, allowed: set[str], where: str) -> None:
    extra = sorted(set(pred) - allowed)
    if extra:
        raise LootError(f"{where}: unsupported predicate field(s) {', '.join(extra)}")


def _check_entity(pred: dict, where: str) -> None:
    _only(pred, {"type", "flags", "type_specific"}, where)
    _only(pred.get("flags", {}), ENTITY_FLAGS, f"{where}.flags")
    if "type_specific" in pred and pred["type_specific"].get("type") not in TYPE_SPECIFIC:
        raise LootError(f"{where}: unsupported type_specific {pred['type_specific'].get('type')!r}")


# ---------------------------------------------------------------- evaluation
def chance(rb: LootRules, ctx: LootContext, conditions: list[dict] | None) -> float:
    """Probability that all ``conditions`` hold (independent random draws multiply)."""
    p = 1.0
    for cond in conditions or []:
        p *= CONDITIONS[ns(cond["condition"])](rb, ctx, cond)
        if p == 0:
            return 0.0
    return p


def holds(rb: LootRules, ctx: LootContext, conditions: list[dict] | None, rng: random.Random) -> bool:
    """One random draw of ``conditions`` (no draw when their chance is 0 or 1)."""
    p = chance(rb, ctx, conditions)
    return p >= 1 or (p > 0 and rng.random() < p)


def _one(rb: LootRules, ctx: LootContext, cond: dict) -> float:
    return CONDITIONS[ns(cond["condition"])](rb, ctx, cond)


def _alternative(rb: LootRules, ctx: LootContext, cond: dict) -> float:
    miss = 1.0
    for term in cond["terms"]:
        miss *= 1.0 - _one(rb, ctx, term)
    return 1.0 - miss


def _in_range(value: Any, want: Any) -> bool:
    """A state/number predicate value: exact (compared as text) or a {min, max} range."""
    if isinstance(want, dict):
        try:
            v = float(value)
        except (TypeError, ValueError):
            return False
        return want.get("min", -float("inf")) <= v <= want.get("max", float("inf"))
    return str(value).lower() == str(want).lower()


def _state_matches(state: dict[str, str], want: dict[str, Any]) -> bool:
    return all(key in state and _in_range(state[key], value) for key, value in want.items())


def _block_state(rb: LootRules, ctx: LootContext, cond: dict) -> float:
    if ctx.block is not None and ctx.block != ns(cond["block"]):
        return 0.0
    return float(_state_matches(dict(ctx.block_state), cond.get("properties", {})))


def _match_tool(rb: LootRules, ctx: LootContext, cond: dict) -> float:
    pred, tool = cond.get("predicate", {}), ctx.tool
    if ctx.entity is not None:
        return 0.0          # entity tables carry no tool
    if "items" in pred and tool not in {ns(i) for i in pred["items"]}:
        return 0.0
    if "tag" in pred and (tool is None or tool not in rb.tag("item", pred["tag"])):
        return 0.0
    levels = dict(ctx.enchantments)
    for ench in pred.get("enchantments", []):
        want = ench.get("levels")
        if "enchantment" in ench:
            level = levels.get(ns(ench["enchantment"]))
            if level is None or (want is not None and not _in_range(level, want)):
                return 0.0
        elif want is not None and not any(_in_range(level, want) for level in levels.values()):
            return 0.0
    return 1.0


def _entity(ctx: LootContext, target: str) -> tuple[str, bool, dict[str, Any]] | None:
    """(type, on fire, type_specific facts) of a context entity, None when absent."""
    if target == "this":
        return (ctx.entity, ctx.on_fire, dict(ctx.entity_data)) if ctx.entity else (PLAYER, False, {})
    return (PLAYER, False, {}) if ctx.killed_by_player else None


def _entity_matches(rb: LootRules, entity: tuple[str, bool, dict[str, Any]] | None, pred: dict) -> bool:
    if entity is None:
        return False
    kind, on_fire, data = entity
    if "type" in pred:
        want = pred["type"]
        if want.startswith("#") and kind not in rb.tag("entity_type", want):
            return False
        if not want.startswith("#") and ns(want) != kind:
            return False
    for flag, value in pred.get("flags", {}).items():
        if (on_fire if flag == "is_on_fire" else False) != value:
            return False
    spec = pred.get("type_specific")
    if spec is not None:
        if kind not in TYPE_SPECIFIC[spec["type"]]:
            return False
        return all(key in data and _in_range(data[key], want) for key, want in spec.items() if key != "type")
    return True


def _entity_properties(rb: LootRules, ctx: LootContext, cond: dict) -> float:
    return float(_entity_matches(rb, _entity(ctx, cond.get("entity", "this")), cond.get("predicate", {})))


def _damage_source(rb: LootRules, ctx: LootContext, cond: dict) -> float:
    pred = cond.get("predicate", {})
    if any(pred.get(flag, False) for flag in DAMAGE_FLAGS):
        return 0.0          # melee by the player: none of these flags is set
    killer = _entity(ctx, "killer")
    return float(all(_entity_matches(rb, killer, pred[k]) for k in ("source_entity", "direct_entity") if k in pred))


def _location(rb: LootRules, ctx: LootContext, cond: dict) -> float:
    place, pred = ctx.place, cond.get("predicate", {})
    if place is None:
        return 0.0
    if "biome" in pred and ns(pred["biome"]) != place.biome:
        return 0.0
    if "block" in pred:
        want = pred["block"]
        block, state = place.block_at((cond.get("offsetX", 0), cond.get("offsetY", 0), cond.get("offsetZ", 0)))
        if "blocks" in want and block not in {ns(b) for b in want["blocks"]}:
            return 0.0
        if "tag" in want and block not in rb.tag("block", want["tag"]):
            return 0.0
        if not _state_matches(state, want.get("state", {})):
            return 0.0
    return 1.0


CONDITIONS: dict[str, Callable[[LootRules, LootContext, dict], float]] = {
    "minecraft:inverted": lambda rb, ctx, c: 1.0 - _one(rb, ctx, c["term"]),
    "minecraft:alternative": _alternative,
    "minecraft:survives_explosion": lambda rb, ctx, c: 1.0,
    "minecraft:match_tool": _match_tool,
    "minecraft:random_chance": lambda rb, ctx, c: min(1.0, max(0.0, float(c["chance"]))),
    "minecraft:random_chance_with_looting": lambda rb, ctx, c: min(1.0, max(0.0, float(c["chance"]) + (
        ctx.level("looting") if _entity(ctx, "killer") else 0) * float(c["looting_multiplier"]))),
    "minecraft:table_bonus": lambda rb, ctx, c: float(c["chances"][min(ctx.level(c["enchantment"]), len(c["chances"]) - 1)]),
    "minecraft:killed_by_player": lambda rb, ctx, c: float(_entity(ctx, "killer_player") is not None),
    "minecraft:entity_properties": _entity_properties,
    "minecraft:block_state_property": _block_state,
    "minecraft:damage_source_properties": _damage_source,
    "minecraft:location_check": _location,
}
