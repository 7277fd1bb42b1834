"""Rule manifests (kind: mirror) -> the concrete transitions each change edits.

Each change is validated against the operator allowlist and the vanilla catalog and expanded
into :class:`ChangedTransition` s (a recipe, a cooked input at a station, a block's or an
entity's drops, with the new outputs). ``mcbuild.compiler.mirror.emit`` turns them into pack files.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from mcbuild.compiler.core.errors import SpecError
from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.rules.rulebook import Rulebook
from mcbuild.compiler.spec import operators as ops
from mcbuild.compiler.spec.mirror import Change, MirrorSpec


@dataclass(frozen=True)
class ChangedTransition:
    """One concrete edited transition, as the skills see it."""

    skill: str                    # craft_grid | smelt | mine | attack
    target: str                   # recipe id | input item | block | entity
    station: str | None = None    # smelt only
    outputs: tuple[tuple[str, int], ...] = ()

    def key(self) -> str:
        return f"{self.skill}:{self.target}" + (f"@{self.station}" if self.station else "")


@dataclass
class Resolved:
    change: Change
    index: int
    transitions: list[ChangedTransition] = field(default_factory=list)


def _fail(file: str, field_: str, msg: str) -> SpecError:
    return SpecError(file, field_, msg)


def resolve(spec: MirrorSpec, file: str, rb: Rulebook) -> list[Resolved]:
    """Validate every change and expand it into concrete transitions."""
    allow = ops.load()
    seen_ids: set[str] = set()
    claimed: dict[str, str] = {}
    out: list[Resolved] = []
    for i, ch in enumerate(spec.changes):
        where = f"changes[{i}]"
        if ch.id in seen_ids:
            raise _fail(file, f"{where}.id", f"duplicate change id {ch.id!r}")
        seen_ids.add(ch.id)
        op = allow["operators"][ch.operator]
        if len(ch.outputs) > op["outputs"]:
            raise _fail(file, f"{where}.outputs", f"{ch.operator} takes at most {op['outputs']} output(s)")
        if (ch.stations is not None) != (ch.operator == "cook_output"):
            raise _fail(file, f"{where}.stations", "stations are required for cook_output and only there")
        for j, o in enumerate(ch.outputs):
            _check_output(file, f"{where}.outputs[{j}].item", o.item, ch.operator, rb, allow)
        res = Resolved(ch, i)
        for t_idx, target in enumerate(ch.targets()):
            tfield = f"{where}.target" + (f"[{t_idx}]" if isinstance(ch.target, list) else "")
            members = _expand_target(file, tfield, target, op["target_kind"], rb, allow)
            for member in members:
                res.transitions.extend(_transitions(file, where, ch, member, rb))
        for tr in res.transitions:
            if tr.key() in claimed:
                raise _fail(file, f"{where}.target", f"{tr.key()} is already changed by {claimed[tr.key()]!r}")
            claimed[tr.key()] = ch.id
        out.append(res)
    return out


def _check_output(file, field_, item, operator, rb, allow) -> None:
    if item is None:
        if operator != "craft_output":
            raise _fail(file, field_, "an output item is required")
        return
    if item.startswith("matching:"):
        if item[len("matching:"):] not in allow["relative_outputs"]:
            raise _fail(file, field_, f"unknown relative output {item!r}")
    elif ns(item) not in rb.catalog.items:
        raise _fail(file, field_, f"unknown item id {item!r}")
    if item not in allow["outputs"] and ns(item) not in allow["outputs"]:
        raise _fail(file, field_, f"{item!r} is not an allowed output (catalogs/operators.yaml)")


def _expand_target(file, field_, target, kind, rb: Rulebook, allow) -> tuple[str, ...]:
    if target not in allow["targets"][kind] and ns(target) not in allow["targets"][kind]:
        known = {"recipe": "recipe", "cook_input": "item", "block": "block", "entity": "entity"}[kind]
        registry = {"recipe": set(rb.recipes), "cook_input": rb.catalog.items, "block": rb.catalog.blocks,
                    "entity": rb.catalog.entities}[kind]
        if not target.startswith("group:") and ns(target) not in registry:
            raise _fail(file, field_, f"unknown {known} id {target!r}")
        raise _fail(file, field_, f"{target!r} is not an editable {known} target (catalogs/operators.yaml)")
    if target.startswith("group:"):
        return ops.group_members(target[len("group:"):], rb)
    return (ns(target),)


def _transitions(file, where, ch: Change, member: str, rb: Rulebook) -> list[ChangedTransition]:
    def outs(m: str) -> tuple[tuple[str, int], ...]:
        result = []
        for o in ch.outputs:
            item = o.item
            if item is not None and item.startswith("matching:"):
                item = ops.relative_output(item[len("matching:"):], m, rb)
            result.append((ns(item) if item else "", o.count))
        return tuple(result)

    skill = ops.skill(ch.operator)
    if ch.operator == "craft_output":
        recipe = rb.recipes.get(member)
        if recipe is None or not recipe["type"].startswith("minecraft:crafting_"):
            raise _fail(file, f"{where}.target", f"{member} is not a crafting recipe")
        (item, count), = outs(member)
        return [ChangedTransition(skill, member, None, ((item or ns(recipe["result"]["item"]), count),))]
    if ch.operator == "cook_output":
        return [ChangedTransition(skill, member, st, outs(member)) for st in ch.stations or ()]
    table = rb.block_loot(member) if skill == "mine" else rb.entity_loot(member)
    if table is None:
        raise _fail(file, f"{where}.target", f"{member} has no vanilla loot table")
    return [ChangedTransition(skill, member, None, outs(member))]
