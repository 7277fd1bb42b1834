"""Backend names -> factories: ``factory("sim")`` is this process's simulator factory.

A backend kind registers a constructor here; :func:`factory` builds it on first use and keeps that
one instance for the process, so its caches (worlds, terrain pools, servers) are shared by every
episode the process runs. A new backend goes in ``runtime/backends/<name>/`` and adds one line to
:data:`FACTORIES`.
"""
from __future__ import annotations

import threading
from typing import Callable

from mcbuild.runtime.contract.backend import BackendFactory
from mcbuild.runtime.errors import BackendUnavailable


def _sim() -> BackendFactory:
    from mcbuild.runtime.backends.sim.factory import SimFactory

    return SimFactory()


def _server() -> BackendFactory:
    from mcbuild.runtime.backends.server.factory import ServerFactory

    return ServerFactory()


FACTORIES: dict[str, Callable[[], BackendFactory]] = {"sim": _sim, "server": _server}
_OPEN: dict[str, BackendFactory] = {}
_LOCK = threading.Lock()


def names() -> list[str]:
    return sorted(FACTORIES)


def factory(name: str) -> BackendFactory:
    """The process's factory of backend ``name`` (built on first use)."""
    if name not in FACTORIES:
        raise BackendUnavailable(f"unknown backend {name!r} (known: {', '.join(names())})")
    with _LOCK:                           # threads of one process share the one instance
        if name not in _OPEN:
            _OPEN[name] = FACTORIES[name]()
        return _OPEN[name]
