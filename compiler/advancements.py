"""Advancement criteria of 1.19, evaluated after every change of a player's state.

Supports the triggers our packs and the story milestones use: ``inventory_changed``,
``enchanted_item``, ``recipe_unlocked`` and ``impossible``. Criteria fire regardless of whether
the parent advancement is done (as in the game). A completed advancement runs its
``rewards.function`` with the player as ``@s``; ``revoke`` clears its progress so it can fire again.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .catalog import ns

if TYPE_CHECKING:
    from .player import PlayerState
    from .rulebook import Rulebook

SUPPORTED = {"minecraft:inventory_changed", "minecraft:enchanted_item", "minecraft:recipe_unlocked",
             "minecraft:impossible", "minecraft:tick"}


class Advancements:
    def __init__(self, rulebook: "Rulebook"):
        self.rulebook = rulebook
        self.defs = {aid: a for aid, a in sorted(rulebook.advancements.items()) if a.get("criteria")}
        self.progress: dict[str, set[str]] = {}
        self.done: list[str] = []  # completion order

    def is_done(self, aid: str) -> bool:
        return ns(aid) in self.done

    def revoke(self, aid: str) -> None:
        aid = ns(aid)
        self.progress.pop(aid, None)
        if aid in self.done:
            self.done.remove(aid)

    def grant(self, aid: str, player: "PlayerState") -> None:
        aid = ns(aid)
        self.progress[aid] = set(self.defs[aid]["criteria"])
        self._complete(aid, player)

    def trigger(self, trigger: str, player: "PlayerState", **event: Any) -> list[str]:
        """Evaluate every criterion of ``trigger``; returns advancements completed by it."""
        newly = []
        for aid, adv in self.defs.items():
            if aid in self.done:
                continue
            for name, crit in sorted(adv["criteria"].items()):
                if ns(crit["trigger"]) != trigger or name in self.progress.get(aid, set()):
                    continue
                if self._criterion_holds(trigger, crit.get("conditions", {}), player, event):
                    self.progress.setdefault(aid, set()).add(name)
            if self._requirements_met(aid):
                newly.append(aid)
                self._complete(aid, player)
        return newly

    def _requirements_met(self, aid: str) -> bool:
        adv = self.defs[aid]
        got = self.progress.get(aid, set())
        groups = adv.get("requirements") or [[c] for c in adv["criteria"]]
        return bool(got) and all(any(c in got for c in group) for group in groups)

    def _complete(self, aid: str, player: "PlayerState") -> None:
        if aid not in self.done:
            self.done.append(aid)
        fn = self.defs[aid].get("rewards", {}).get("function")
        if fn:
            player.runner.run_function(fn, player)

    def _criterion_holds(self, trigger: str, cond: dict, player: "PlayerState", event: dict) -> bool:
        if trigger == "minecraft:inventory_changed":
            return all(self._inventory_has(pred, player) for pred in cond.get("items", []))
        if trigger == "minecraft:enchanted_item":
            item = event.get("item")
            pred = cond.get("item")
            if pred and (item is None or not self._item_matches(pred, item)):
                return False
            return _in_range(cond.get("levels"), event.get("levels", 0))
        if trigger == "minecraft:recipe_unlocked":
            return ns(cond.get("recipe", "")) == ns(event.get("recipe", "-"))
        if trigger in ("minecraft:impossible", "minecraft:tick"):
            return trigger == "minecraft:tick"
        raise ValueError(f"unsupported advancement trigger {trigger}")

    def _inventory_has(self, pred: dict, player: "PlayerState") -> bool:
        return any(self._item_matches(pred, item) and _in_range(pred.get("count"), n)
                   for item, n in player.stacks())

    def _item_matches(self, pred: dict, item: str) -> bool:
        if "items" in pred and ns(item) not in {ns(i) for i in pred["items"]}:
            return False
        if "tag" in pred and ns(item) not in self.rulebook.tag("item", pred["tag"]):
            return False
        return True

    def unsupported_triggers(self) -> list[str]:
        return sorted({ns(c["trigger"]) for a in self.defs.values() for c in a["criteria"].values()} - SUPPORTED)


def _in_range(spec: Any, value: int) -> bool:
    if spec is None:
        return True
    if isinstance(spec, (int, float)):
        return value == spec
    return spec.get("min", value) <= value <= spec.get("max", value)
