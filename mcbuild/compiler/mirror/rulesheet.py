"""The disclosure rule sheet (``rules.md``) of a Mirror suite, generated from its manifest.

Only the "ReAct w/rules" condition ever sees this text. Each change gets one plain-language
sentence, then every edited transition gets a structured override line of the form
``N. <skill> <target> -> yields <output> x<count> (differs from vanilla Minecraft)``.
"""
from __future__ import annotations

from mcbuild.compiler.mirror.resolve import Resolved
from mcbuild.compiler.rules.catalog import ns
from mcbuild.compiler.spec import operators as ops
from mcbuild.compiler.spec.mirror import MirrorSpec


def _name(rid: str) -> str:
    return rid.split(":", 1)[-1].replace("_", " ")


def _target_phrase(target: str) -> str:
    if target.startswith("group:"):
        return ops.load()["groups"][target[len("group:"):]]["label"]
    return _name(target)


def _outputs_phrase(res: Resolved) -> str:
    parts = []
    for o in res.change.outputs:
        item = o.item or "the usual item"
        item = "planks of the same wood" if item == "matching:planks" else _name(item)
        parts.append(f"{o.count} {item}")
    return " and ".join(parts)


def sentence(res: Resolved) -> str:
    ch = res.change
    targets = ", ".join(_target_phrase(t) for t in ch.targets())
    outs = _outputs_phrase(res)
    if ch.operator == "craft_output":
        if all(o.item is None for o in ch.outputs):
            return f"The usual recipe ({targets}) now gives {ch.outputs[0].count} of its usual item per craft."
        return f"The usual crafting recipe for {targets} now gives {outs} instead."
    if ch.operator == "cook_output":
        stations = " or ".join(_name(s) for s in ch.stations or [])
        return f"Putting {targets} through a {stations} now gives {outs} per item."
    if ch.operator == "block_drops_replace":
        return f"Breaking {targets} now drops {outs} in place of the usual drop."
    if ch.operator == "block_drops_add":
        return f"Breaking {targets} still drops the usual items and also {outs}."
    return f"Defeating a {targets} still gives its usual drops and also {outs}."


def structured_lines(resolved: list[Resolved]) -> list[str]:
    """One override line per (target, station, output); groups stay one line ("any log ...")."""
    lines = []
    for res in resolved:
        ch = res.change
        for target in ch.targets():
            group = ops.load()["groups"].get(target[6:]) if target.startswith("group:") else None
            name = group["label"] if group else _name(target)
            for station in (*(ch.stations or ()),) or (None,):
                where = name + (f" in {_name(station)}" if station else "") + (" recipe" if ch.operator == "craft_output" else "")
                for o in ch.outputs:
                    if o.item is None:
                        item = group["output_label"] if group else _name(next(
                            t.outputs[0][0] for t in res.transitions if t.target == ns(target)))
                    else:
                        item = "matching planks" if o.item == "matching:planks" else _name(o.item)
                    if ch.operator in ("block_drops_add", "entity_loot_add"):
                        item += " (in addition to the usual drops)"
                    lines.append(f"{ops.skill(ch.operator)} {where} -> yields {item} x{o.count} (differs from vanilla Minecraft)")
    return [f"{i}. {ln}" for i, ln in enumerate(lines, 1)]


def render(spec: MirrorSpec, resolved: list[Resolved]) -> str:
    out = ["# Rules in effect in this world", "",
           "Some outcomes in this world are not the ones vanilla Minecraft 1.19 would give. "
           "The list below is exact: everything not listed behaves as usual.", ""]
    out += [f"{i}. {sentence(r)}" for i, r in enumerate(resolved, 1)]
    out += ["", "## Structured overrides", ""]
    out += structured_lines(resolved)
    return "\n".join(out) + "\n"
