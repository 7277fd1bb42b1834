"""Executes 1.19 function files the way the server does, for the commands our packs use.

Lines are parsed with mecha (so every emitted line is a valid 1.19 command) and interpreted on
a player (:class:`Target`, in practice a ``PlayerState``): ``give``, ``clear``, ``function``,
``advancement grant|revoke``, ``scoreboard objectives add``, ``scoreboard players set|add|remove``,
``execute store ... run``, ``execute if|unless score ... matches``, ``effect give``,
``experience set|add``. World-level commands (``summon``, ``gamerule``, ``time``, ``weather``,
``difficulty``, ``setworldspawn``) are handed to a world hook. Anything else is an error: nothing is
silently skipped.
"""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Mapping, Protocol

from mecha import AstCommand, AstNode, AstNumber, Mecha, MechaError

from mcbuild.compiler.rules.advancements import Advancements
from mcbuild.compiler.rules.catalog import ns

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook

WORLD_COMMANDS = ("summon", "gamerule", "time", "weather", "difficulty", "setworldspawn", "kill", "tp", "say", "tellraw")
MAX_CHAIN = 65536  # the game's maxCommandChainLength default


class CommandError(RuntimeError):
    pass


class Target(Protocol):
    """The player a command acts on (a ``mcbuild.compiler.rules.player.PlayerState``)."""

    scores: dict[str, int]
    objectives: set[str]
    effects: dict[str, tuple[int, int]]
    xp_levels: int
    advancements: Advancements

    def count(self, item: str | None) -> int: ...

    def add_items(self, items: Mapping[str, int], settle: bool = True) -> list[str]: ...

    def clear(self, item: str | None, limit: int | None) -> int: ...


@lru_cache(maxsize=1)
def _mecha() -> Mecha:
    return Mecha(version="1.19")


@lru_cache(maxsize=4096)
def parse(line: str) -> AstCommand:
    """Parse one command line as 1.19 (raises on anything the game would reject)."""
    root = _mecha().parse(line, multiline=False)
    if len(root.commands) != 1:
        raise CommandError(f"expected one command: {line!r}")
    return root.commands[0]


#: Node texts kept by the node's identity (with the node, so an id is never reused while kept): the
#: nodes of parsed lines live in ``parse``'s cache and run again every episode.
_TEXTS: dict[int, tuple[object, str]] = {}
TEXTS_KEPT = 16384


def text(node) -> str:
    """A node's command text (serialized once per node object)."""
    known = _TEXTS.get(id(node))
    if known is not None and known[0] is node:
        return known[1]
    out = _mecha().serialize(node)
    if len(_TEXTS) >= TEXTS_KEPT:
        _TEXTS.clear()
    _TEXTS[id(node)] = (node, out)
    return out


class CommandRunner:
    def __init__(self, rulebook: "Rulebook", world_hook: Callable[[AstCommand], None] | None = None):
        self.rulebook = rulebook
        self.world_hook = world_hook
        self.executed = 0

    def run_function(self, fid: str, player: Target) -> int:
        total = 0
        for line in self.rulebook.function(ns(fid)):
            total += self.run(parse(line), player)[1]
        return total

    def run(self, cmd: AstCommand, player: Target) -> tuple[int, int]:
        """Execute one parsed command; returns (success, result) like the game's store."""
        self.executed += 1
        if self.executed > MAX_CHAIN:
            raise CommandError("command chain limit exceeded")
        ident = cmd.identifier
        head = ident.split(":", 1)[0]
        args = cmd.arguments
        if head == "execute":
            return self._execute(cmd, player)
        if head == "give":
            count = number(args[2]) if len(args) > 2 else 1
            player.add_items({ns(text(args[1])): count}, settle=False)
            return 1, count
        if head == "clear":
            item = ns(text(args[1])) if len(args) > 1 else None
            limit = number(args[2]) if len(args) > 2 else None
            if limit == 0:  # counts without removing
                held = player.count(item)
                return int(held > 0), held
            removed = player.clear(item, limit)
            return int(removed > 0), removed
        if head == "function":
            return 1, self.run_function(text(args[0]), player)
        if ident.startswith("advancement:"):
            parts = ident.split(":")
            adv = ns(text(args[-1]))
            if parts[1] == "revoke":
                player.advancements.revoke(adv)
            else:
                player.advancements.grant(adv)
            return 1, 1
        if ident.startswith("scoreboard:objectives:add"):
            player.objectives.add(text(args[0]))
            return 1, len(player.objectives)
        if ident.startswith("scoreboard:players:"):
            op = ident.split(":")[2]
            obj, value = text(args[1]), number(args[2])
            cur = player.scores.get(obj, 0)
            player.scores[obj] = {"set": value, "add": cur + value, "remove": cur - value}[op]
            return 1, player.scores[obj]
        if ident.startswith("effect:give"):
            effect = ns(text(args[1]))
            seconds = number(args[2]) if len(args) > 2 else 30
            amplifier = number(args[3]) if len(args) > 3 else 0
            player.effects[effect] = (seconds, amplifier)
            return 1, 1
        if ident.startswith("experience:"):
            op = ident.split(":")[1]
            amount = number(args[1])
            if ident.endswith(":levels"):
                player.xp_levels = amount if op == "set" else player.xp_levels + amount
            return 1, amount
        if head in WORLD_COMMANDS:
            if self.world_hook is None:
                return 1, 1
            self.world_hook(cmd)
            return 1, 1
        raise CommandError(f"unsupported command {ident}")

    def _execute(self, cmd: AstCommand, player: Target) -> tuple[int, int]:
        store: list[tuple[str, str]] = []
        node = cmd
        while True:
            sub = command(node.arguments[0]) if node.identifier == "execute:subcommand" else node
            ident = sub.identifier
            if ident.startswith("execute:store:"):
                kind = ident.split(":")[2]
                store.append((kind, text(sub.arguments[1])))
            elif ident.startswith(("execute:if:score", "execute:unless:score")):
                holds = _matches(player.scores.get(text(sub.arguments[1])), sub.arguments[2])
                if holds != ident.startswith("execute:if"):
                    return 0, 0
            elif ident == "execute:run:subcommand":
                success, result = self.run(command(sub.arguments[0]), player)
                for kind, obj in store:
                    player.scores[obj] = success if kind == "success" else result
                return success, result
            elif not ident.startswith("execute:as") and not ident.startswith("execute:at"):
                raise CommandError(f"unsupported execute form {ident}")
            node = command(sub.arguments[-1])


def number(node: AstNode) -> int:
    """A numeric argument's value."""
    if not isinstance(node, AstNumber):
        raise CommandError(f"expected a number, got {type(node).__name__}")
    return int(node.value)


def command(node: AstNode) -> AstCommand:
    """A nested command (an ``execute`` subcommand, what it runs)."""
    if not isinstance(node, AstCommand):
        raise CommandError(f"expected a command, got {type(node).__name__}")
    return node


def _matches(value: int | None, rng) -> bool:
    if value is None:
        return False
    return (rng.min is None or value >= rng.min) and (rng.max is None or value <= rng.max)


def validate_function(lines: list[str]) -> list[str]:
    """Problems parsing each line as a 1.19 command (empty list if all parse)."""
    problems = []
    for i, line in enumerate(lines, 1):
        try:
            parse(line)
        except (MechaError, CommandError) as exc:  # mecha's diagnostics, or not one command
            problems.append(f"line {i}: {line!r}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    return problems
