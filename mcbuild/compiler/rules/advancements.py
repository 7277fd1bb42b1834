"""Advancement criteria of 1.19, evaluated after every change of a player's state.

Supports the triggers our packs and the story milestones use: ``inventory_changed``,
``enchanted_item``, ``recipe_unlocked`` and ``impossible``. Criteria fire regardless of whether
the parent advancement is done (as in the game). A completed advancement runs its
``rewards.function`` through the ``reward`` callable its owner gives (the player runs it as ``@s``);
``revoke`` clears its progress so it can fire again.
The criteria are filed once per rulebook and shared by its players: with the game's ~1,000 recipe
advancements, an inventory change tries only the criteria of the items held. A player's
``inventory_changed`` is quiet (fires nothing, tries nothing) on the inventory state of its last
try when no reward function or revoke ran since: every criterion still pending failed on it, and
the criteria read only the inventory.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from mcbuild.compiler.core.memo import LRU
from mcbuild.compiler.rules.catalog import ns

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook

INVENTORY_CHANGED = "minecraft:inventory_changed"
# an inventory_changed criterion compiled: (the items each predicate accepts (None: any), its count range)
Predicates = tuple[tuple[frozenset[str] | None, Any], ...]
# an advancement, its criteria of one trigger, whether meeting any one criterion completes it (its
# requirements are one group naming every criterion, as a recipe advancement's are) and its reward function
Entry = tuple[str, list[tuple[str, Any]], bool, "str | None"]
_NOTHING: frozenset[str] = frozenset()
HELD_MEMO = 4096        # sets of held items whose inventory_changed entries a rulebook keeps
MAX_SETTLE_ROUNDS = 64  # inventory_changed rounds of one settle (reward functions may chain)


class _Criteria:
    """A rulebook's advancement criteria by trigger, shared by all its players (read-only but for
    the memos). ``inventory_changed`` criteria are also filed by item: one needs a
    held item its smallest specific predicate accepts, so only those of the held items are tried."""

    def __init__(self, rulebook: "Rulebook"):
        self.rulebook = rulebook
        self.defs = {aid: a for aid, a in sorted(rulebook.advancements.items()) if a.get("criteria")}
        self.accepted_memo: dict[int, frozenset[str] | None] = {}
        self.groups_memo: dict[str, list[list[str]]] = {}
        self.held_memo: LRU[list[Entry]] = LRU(HELD_MEMO)
        self.gained_memo: dict[frozenset[str], list[Entry]] = {}     # cleared when full (a duplicate is harmless)
        self.by_trigger: dict[str, list[Entry]] = {}      # trigger -> per advancement
        for aid, adv in self.defs.items():
            groups = self.groups(aid)
            alone, reward = len(groups) == 1 and set(groups[0]) >= set(adv["criteria"]), self.reward(aid)
            for name, crit in sorted(adv["criteria"].items()):
                entries = self.by_trigger.setdefault(ns(crit["trigger"]), [])
                if not entries or entries[-1][0] != aid:
                    entries.append((aid, [], alone, reward))
                entries[-1][1].append((name, crit.get("conditions", {})))
        self.any_items: list[int] = []             # inventory_changed entries any inventory may fire
        self.by_item: dict[str, list[int]] = {}
        self.counts_matter = False                 # whether an inventory_changed predicate reads a count
        self.by_any_item: dict[str, list[int]] = {}  # item -> entries with a predicate that accepts it
        self.wild: list[int] = []                  # entries with a criterion that any held item may satisfy
        self.inventory_changed: list[Entry] = [    # by_trigger's, with each predicate's accepted items read
            (aid, [(name, tuple((self.accepted(p), p.get("count")) for p in conditions.get("items", ())))
                   for name, conditions in criteria], alone, reward)
            for aid, criteria, alone, reward in self.by_trigger.get(INVENTORY_CHANGED, ())]
        for pos, (_, criteria, _, _) in enumerate(self.by_trigger.get(INVENTORY_CHANGED, ())):
            self._file_any(pos, criteria)
            needs: set[str] = set()
            for _, conditions in criteria:
                self.counts_matter |= any("count" in pred for pred in conditions.get("items", []))
                specific = [a for a in map(self.accepted, conditions.get("items", [])) if a is not None]
                if not specific:
                    self.any_items.append(pos)
                    break
                needs |= min(specific, key=len)
            else:
                for item in needs:
                    self.by_item.setdefault(item, []).append(pos)

    def _file_any(self, pos: int, criteria: list[tuple[str, dict]]) -> None:
        """File entry ``pos`` under every item one of its predicates accepts (``wild`` when a
        criterion has no predicate or one that accepts any item)."""
        items: set[str] = set()
        wild = False
        for _, conditions in criteria:
            preds = conditions.get("items", ())
            wild |= not preds
            for pred in preds:
                accepted = self.accepted(pred)
                if accepted is None:
                    wild = True
                else:
                    items |= accepted
        if wild:
            self.wild.append(pos)
        for item in items:
            self.by_any_item.setdefault(item, []).append(pos)

    def state(self, held: frozenset[str], inventory: Mapping[str, int]) -> frozenset:
        """What ``inventory_changed`` criteria read of ``inventory`` (whose positive items are
        ``held``): the held items, with their counts if a predicate reads one."""
        return frozenset((i, inventory[i]) for i in held) if self.counts_matter else held

    def inventory_entries(self, held: frozenset[str]) -> list[Entry]:
        """The ``inventory_changed`` entries an inventory holding ``held`` may fire, in definition
        order (memoized per set of held items)."""

        def make() -> list[Entry]:
            entries = self.inventory_changed
            positions = set(self.any_items).union(*(self.by_item.get(i, ()) for i in held))
            return [entries[p] for p in sorted(positions)]

        return self.held_memo.get_or_make(held, make)

    def gaining(self, gained: frozenset[str]) -> list[Entry]:
        """The ``inventory_changed`` entries a count-free criterion of which may newly hold once the
        items ``gained`` are held: those with a predicate accepting one of them, and the wild ones,
        in definition order (memoized per set of items)."""
        found = self.gained_memo.get(gained)
        if found is None:
            if len(self.gained_memo) >= HELD_MEMO:
                self.gained_memo.clear()
            entries = self.inventory_changed
            positions = set(self.wild).union(*(self.by_any_item.get(i, ()) for i in gained))
            found = self.gained_memo[gained] = [entries[p] for p in sorted(positions)]
        return found

    @staticmethod
    def holds(predicates: Predicates, held: frozenset[str], inventory: Mapping[str, int]) -> bool:
        """Whether an ``inventory_changed`` criterion (its compiled ``predicates``) holds for
        ``inventory`` (positive items ``held``)."""
        for accepted, count in predicates:
            if count is None:
                if not held if accepted is None else accepted.isdisjoint(held):
                    return False
            elif not any(_in_range(count, inventory[i]) for i in (held if accepted is None else accepted & held)):
                return False
        return True

    def reward(self, aid: str) -> str | None:
        """The reward function of advancement ``aid``."""
        return self.defs[aid].get("rewards", {}).get("function")

    def groups(self, aid: str) -> list[list[str]]:
        """The requirements of advancement ``aid``: groups of criteria, one of each to be met (memoized)."""
        groups = self.groups_memo.get(aid)
        if groups is None:
            adv = self.defs[aid]
            groups = self.groups_memo[aid] = adv.get("requirements") or [[c] for c in adv["criteria"]]
        return groups

    def accepted(self, pred: dict) -> frozenset[str] | None:
        """Items an item predicate accepts (its ``items`` and/or ``tag``); None if any item does.
        Memoized per predicate object: the definitions live as long as the rulebook."""
        key = id(pred)
        if key not in self.accepted_memo:
            sets = []
            if "items" in pred:
                sets.append(frozenset(ns(i) for i in pred["items"]))
            if "tag" in pred:
                sets.append(self.rulebook.tag("item", pred["tag"]))
            self.accepted_memo[key] = frozenset.intersection(*sets) if sets else None
        return self.accepted_memo[key]


class Advancements:
    def __init__(self, rulebook: "Rulebook", reward: Callable[[str], object]):
        """``reward`` runs a completed advancement's reward function (given its id)."""
        self.rulebook = rulebook
        self._reward = reward
        self._criteria: _Criteria = rulebook.memo("advancement_criteria", 1).get_or_make(
            "criteria", lambda: _Criteria(rulebook))
        self.defs = self._criteria.defs
        self.progress: dict[str, set[str]] = {}
        self.done: list[str] = []  # completion order
        self._done: set[str] = set()
        self._revision = 0              # bumped by what may revive a criterion or change the inventory
        self._tried: tuple[frozenset, int] | None = None  # (inventory state, revision) of the last whole try

    def is_done(self, aid: str) -> bool:
        return ns(aid) in self._done

    def revoke(self, aid: str) -> None:
        aid = ns(aid)
        self._revision += 1
        self.progress.pop(aid, None)
        if aid in self._done:
            self.done.remove(aid)
            self._done.discard(aid)

    def grant(self, aid: str) -> None:
        aid = ns(aid)
        self._revision += 1
        self.progress[aid] = set(self.defs[aid]["criteria"])
        self._complete(aid, self._criteria.reward(aid))

    def settle(self, inventory: Mapping[str, int]) -> list[str]:
        """Fire ``inventory_changed`` until nothing new completes (at most ``MAX_SETTLE_ROUNDS``
        times); returns the completions in order. A round whose completions ran no reward function
        and no revoke is the last: only those change the inventory or revive a criterion, so another
        round would try the state this one tried (and fire nothing)."""
        completed: list[str] = []
        for _ in range(MAX_SETTLE_ROUNDS):
            newly = self.trigger(INVENTORY_CHANGED, inventory)
            completed.extend(newly)
            if not newly or self._tried is not None:       # set: no reward or revoke ran in the round
                break
        return completed

    def trigger(self, trigger: str, inventory: Mapping[str, int], **event: Any) -> list[str]:
        """Evaluate every criterion of ``trigger`` for a player holding ``inventory``; returns
        advancements completed by it."""
        if trigger != INVENTORY_CHANGED:
            return self._fire(self._criteria.by_trigger.get(trigger, ()), self._criterion_holds, trigger, event)
        held = frozenset(inventory)
        if held and min(inventory.values()) <= 0:
            held = frozenset(i for i, n in inventory.items() if n > 0)
        criteria = self._criteria
        state, tried = criteria.state(held, inventory), self._tried
        # every pending criterion failed on ``was`` (None: not known)
        was = tried[0] if tried is not None and tried[1] == self._revision else None
        if state == was:
            return []
        if was is not None and not criteria.counts_matter:      # only a gained item can make one hold
            gained = held - was
            entries = criteria.gaining(gained) if gained else []
        else:
            entries = criteria.inventory_entries(held)
        revision = self._revision
        newly = self._fire(entries, criteria.holds, held, inventory) if entries else []
        # every pending criterion was tried on this one inventory (no reward or revoke ran meanwhile)
        self._tried = (state, revision) if revision == self._revision else None
        return newly

    def _fire(self, entries: Iterable[Entry], holds: Callable[..., bool], *args: Any) -> list[str]:
        """Try the criteria of ``entries`` not yet met (``holds(conditions, *args)``); returns the
        advancements completed."""
        newly: list[str] = []
        done, progress = self._done, self.progress
        for aid, criteria, alone, reward in entries:
            if aid in done:
                continue
            got = progress.get(aid, _NOTHING)
            met = False
            for name, conditions in criteria:
                if name not in got and holds(conditions, *args):
                    got = progress.setdefault(aid, set())
                    got.add(name)
                    met = True
            # an advancement not done has its requirements unmet until a criterion is met
            if met and (alone or self._requirements_met(aid)):
                newly.append(aid)
                self._complete(aid, reward)
        return newly

    def _requirements_met(self, aid: str) -> bool:
        got = self.progress.get(aid, set())
        return bool(got) and all(any(c in got for c in group) for group in self._criteria.groups(aid))

    def _complete(self, aid: str, reward: str | None) -> None:
        """``aid`` is done (again, after a grant); its ``reward`` function runs."""
        if aid not in self._done:
            self.done.append(aid)
            self._done.add(aid)
        if reward:
            self._revision += 1
            self._reward(reward)

    def _criterion_holds(self, cond: dict, trigger: str, event: dict) -> bool:
        """Whether a criterion of a trigger other than ``inventory_changed`` holds for ``event``."""
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

    def _item_matches(self, pred: dict, item: str) -> bool:
        accepted = self._accepted(pred)
        return accepted is None or ns(item) in accepted

    def _accepted(self, pred: dict) -> frozenset[str] | None:
        return self._criteria.accepted(pred)


def _in_range(spec: Any, value: int) -> bool:
    if spec is None:
        return True
    if isinstance(spec, (int, float)):
        return value == spec
    return spec.get("min", value) <= value <= spec.get("max", value)
