"""The structured observation ``mcbuild/MirrorCraft-v0`` hands out: a :class:`State`.

The episode builds each observation from the previous one (``runtime/contract/observation.py``): a
part whose inputs did not change is the same object as before, a part that changed is a new object,
and a part already handed out is never changed in place. An observation handed to the user must not
share a mutable object with the episode or with another observation, yet copying every part every
step costs about a third of a simulator step, mostly for parts (the recipe hypotheses, the verified
effects) that many agents never read. A :class:`State` holds the episode's dict and copies a part
the first time it is read, as a fresh plain JSON value; a part nobody reads is never copied. So the
user holds nothing of the episode's (only copies) and the episode keeps nothing of the user's; what a
state shows never changes as the episode advances, because its parts are either the user's own
copies or the episode's parts, which are never changed in place.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NoReturn

import orjson

__all__ = ["State"]

_SCALARS = frozenset({str, int, float, bool, type(None)})
#: A longer list of objects or arrays (the recipe hypotheses, the verified effects) is copied by orjson.
_NESTED_IN_PYTHON = 8


class State(Mapping[str, Any]):
    """One structured observation: a read-only mapping of the episode's observation ``source`` whose
    parts are fresh plain copies (dicts and lists), each made when first read and then kept.
    ``dict(state)`` is a plain dict of them (what ``json.dumps`` takes); ``==``, ``pickle`` and
    ``copy.deepcopy`` treat a state as that dict."""

    __slots__ = ("_source", "_read")
    _source: Mapping[str, Any]
    _read: dict[str, Any]

    def __init__(self, source: Mapping[str, Any]):
        object.__setattr__(self, "_source", source)     # the episode's: read, never changed, never handed out
        object.__setattr__(self, "_read", {})           # the copies handed out

    def __getitem__(self, key: str) -> Any:
        try:
            return self._read[key]
        except KeyError:
            value = self._read[key] = _fresh(self._source[key])
            return value

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self._read[key]
        except KeyError:
            if key not in self._source:
                return default
            value = self._read[key] = _fresh(self._source[key])
            return value

    def __contains__(self, key: object) -> bool:
        return key in self._source

    def __iter__(self) -> Iterator[str]:
        return iter(self._source)

    def __len__(self) -> int:
        return len(self._source)

    def _values(self) -> dict[str, Any]:
        """The values as read so far, the episode's parts for the rest (to compare, never to hand out)."""
        return {**self._source, **self._read}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, State):
            return self._values() == other._values()
        return self._values() == dict(other.items()) if isinstance(other, Mapping) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"State({self._values()!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return State, (dict(self.items()),)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("a State is read-only: dict(state) is a mutable copy")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("a State is read-only: dict(state) is a mutable copy")


def _fresh(value: Any) -> Any:
    """A fresh copy of a JSON value that shares no dict or list with it (strings and numbers are shared:
    they cannot change): in Python for the small parts of an observation, where that is faster than an
    orjson round trip, by orjson for the long lists."""
    kind = type(value)
    if kind is dict:
        out = value.copy()
        if not _SCALARS.issuperset(map(type, out.values())):
            for k, v in value.items():
                if type(v) not in _SCALARS:
                    out[k] = _fresh(v)
        return out
    if kind is list or kind is tuple:
        if _SCALARS.issuperset(map(type, value)):
            return list(value)
        if len(value) > _NESTED_IN_PYTHON:
            return orjson.loads(orjson.dumps(value))      # a long list of objects: faster in C
        return [v if type(v) in _SCALARS else _fresh(v) for v in value]
    if kind in _SCALARS:
        return value
    return orjson.loads(orjson.dumps(value))      # not a JSON value: what JSON makes of it, or a TypeError
