"""How a study's model requests differed from its settings, kept with the study.

Each model's requests are shaped by its provider profile and, when an endpoint refused a field the
client chose, adapted once (``mcbuild.llm.shape``: a token cap renamed, a sampling value left to the
provider's default, a ``response_format`` stepped down). Because that changes how the model was
sampled, every such difference is kept in the store's meta (``adaptations``: model -> the
adjustments, as :meth:`~mcbuild.llm.shape.Adjustment.to_json` writes them), printed once as one
``warning:`` line when the study first meets it, and shown by ``study status`` and in the report's
settings table. Each episode's row also carries the ones in force while it ran (its ``adaptations``
column).
"""
from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Mapping

from mcbuild.compiler.core.canonical import compact
from mcbuild.llm.shape import Adjustment

ADAPTATIONS = "adaptations"       # meta key


def stored(meta: Mapping[str, str]) -> dict[str, list[dict[str, Any]]]:
    """The adaptations a store's meta keeps, by model ({} for a store without any)."""
    try:
        data = json.loads(meta.get(ADAPTATIONS) or "{}")
    except ValueError:
        return {}
    return {str(m): [a for a in adjs if isinstance(a, dict)] for m, adjs in data.items()} if isinstance(data, dict) else {}


def lines(meta: Mapping[str, str]) -> list[str]:
    """One line per adaptation: ``model 'm': temperature: provider default (the endpoint refused 0.7: ...)``."""
    return [f"model {model!r}: {Adjustment.from_json(a).line()}" for model, adjs in stored(meta).items() for a in adjs]


class Adaptations:
    """The runner's record: a new adaptation is saved in the store's meta and printed once."""

    def __init__(self, meta: Mapping[str, str], save: Callable[[dict[str, str]], None], warn: Callable[[str], None]):
        self.by_model = stored(meta)
        self.save, self.warn = save, warn

    def note(self, model: str, adjustments: Iterable[Mapping[str, Any]]) -> None:
        known = self.by_model.setdefault(model, [])
        new = [dict(a) for a in adjustments if dict(a) not in known]
        if not new:
            return
        known.extend(new)
        self.save({ADAPTATIONS: compact(self.by_model)})
        for a in new:
            self.warn(f"warning: model {model!r}: {Adjustment.from_json(a).line()}")
