"""The Gymnasium spaces of ``mcbuild/MirrorCraft-v0``.

* :class:`SkillCall` -- one semantic skill call ``{"skill": ..., "args": {...}}``. ``contains`` is the
  contract's own validation (``runtime/contract/skills.validate``); ``sample`` draws a skill and its
  arguments from the JSON Schema of the skill table (ids from the game's 1.19 registry), so a new skill
  or argument is sampled without another edit.
* :class:`ObservationText` -- the paper's observation as the agents' prompts render it.
* :class:`ObservationDict` -- the same observation as its structured mapping of JSON values (by
  default a read-only :class:`~.state.State`, a plain dict with ``copy=True``).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gymnasium import spaces

from mcbuild.compiler.rules.catalog import Catalog
from mcbuild.runtime.contract.skills import SKILLS, ActionError, arg_schema, id_defs, validate

__all__ = ["SkillCall", "ObservationText", "ObservationDict", "MAX_TEXT"]

MAX_TEXT = 1 << 20          # characters; an observation's text is a few thousand
_DRAWS = 64                 # samples tried before giving up on drawing a valid action


class SkillCall(spaces.Space[dict]):
    """One action: a skill of the paper's 13 and its arguments."""

    def __init__(self, catalog: Catalog, seed: int | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)
        self.catalog = catalog
        self._defs = id_defs(catalog)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        try:
            validate(x, self.catalog)
        except ActionError:
            return False
        return True

    def sample(self, mask: Any = None, probability: Any = None) -> dict:
        """A random valid action (uniform over skills, then over each argument's values)."""
        if mask is not None or probability is not None:
            raise NotImplementedError("SkillCall.sample takes no mask or probability")
        names = sorted(SKILLS)
        for _ in range(_DRAWS):
            skill = names[int(self.np_random.integers(len(names)))]
            action = {"skill": skill, "args": {a.name: self._draw(arg_schema(a)) for a in SKILLS[skill]}}
            if self.contains(action):
                return action
        raise RuntimeError(f"no valid action drawn in {_DRAWS} tries")       # pragma: no cover

    def _draw(self, schema: dict[str, Any]) -> Any:
        rng = self.np_random
        if "$ref" in schema:
            return self._draw(self._defs[schema["$ref"].rsplit("/", 1)[-1]])
        if "anyOf" in schema:
            return self._draw(schema["anyOf"][int(rng.integers(len(schema["anyOf"])))])
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return schema["enum"][int(rng.integers(len(schema["enum"])))]
        kind = schema.get("type")
        if kind == "integer":
            return int(rng.integers(schema["minimum"], schema["maximum"] + 1))
        if kind == "array":
            n = int(rng.integers(schema.get("minItems", 0), schema.get("maxItems", 3) + 1))
            return [self._draw(schema["items"]) for _ in range(n)]
        if kind == "null":
            return None
        raise ValueError(f"cannot sample the argument schema {schema}")

    def __repr__(self) -> str:
        return f"SkillCall({len(SKILLS)} skills)"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, SkillCall)


class ObservationText(spaces.Space[str]):
    """The observation as text (``runtime/agents/llm/prompts/observation.j2``)."""

    def __init__(self, max_length: int = MAX_TEXT, seed: int | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)
        self.max_length = max_length

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return ""

    def __repr__(self) -> str:
        return f"ObservationText(max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ObservationText) and other.max_length == self.max_length


class ObservationDict(spaces.Space[dict]):
    """The observation as its structured dict (the fields of ``runtime/contract/observation.py``)."""

    def __init__(self, seed: int | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        return isinstance(x, Mapping) and all(isinstance(k, str) for k in x)

    def sample(self, mask: Any = None, probability: Any = None) -> dict:
        raise NotImplementedError("observations are made by the episode, not sampled")

    def __repr__(self) -> str:
        return "ObservationDict()"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ObservationDict)
