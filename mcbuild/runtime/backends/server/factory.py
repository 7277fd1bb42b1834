"""Opening server backends: one checked configuration per process, optionally one server pre-started.

``ServerFactory()`` checks the jar, the EULA and Java first (``mcbuild.runtime.backends.server.config``)
and raises :class:`mcbuild.runtime.errors.BackendUnavailable` with one line saying what to set. With
``prestart`` (``MCBUILD_SERVER_PRESTART=1``), whenever a server on a save is taken, the next one on
the same save starts in a background thread, so the next episode (or reset) need not wait for
Java; ``timings`` of a backend say whether its server was pre-started.
"""
from __future__ import annotations

import atexit
import os
import threading
import weakref
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

from .backend import ServerBackend
from .config import ServerConfig
from .instance import ServerInstance

if TYPE_CHECKING:
    from mcbuild.compiler.rules.rulebook import Rulebook

PRESTART_ENV = "MCBUILD_SERVER_PRESTART"
_FACTORIES: "weakref.WeakSet[ServerFactory]" = weakref.WeakSet()


@atexit.register
def _stop_spares() -> None:
    for factory in list(_FACTORIES):
        factory.close()


class ServerFactory:
    name = "server"

    def __init__(self, config: ServerConfig | None = None, prestart: bool | None = None, root: Path | None = None):
        self.config = config or ServerConfig.resolve()
        self.prestart = os.environ.get(PRESTART_ENV, "") == "1" if prestart is None else prestart
        self.root = root
        self._lock = threading.Lock()
        self._spare: tuple[Path, Future] | None = None
        _FACTORIES.add(self)

    def open(self, save: Path, rules: "Rulebook", seed: int) -> ServerBackend:
        """A backend on ``save``; every reset takes a fresh server on a fresh copy of it."""
        save = save.resolve()
        return ServerBackend(rules, seed, lambda: self.take(save))

    def take(self, save: Path) -> ServerInstance:
        """A ready server on a fresh copy of ``save`` (the pre-started one when it is for ``save``)."""
        with self._lock:
            spare, self._spare = self._spare, None
        instance = None
        if spare is not None:
            if spare[0] == save:
                instance = spare[1].result()
                instance.timings["prestarted"] = 1.0
            else:
                _discard(spare[1])
        if instance is None:
            instance = ServerInstance(self.config, save, self.root).start()
            instance.timings["prestarted"] = 0.0
        if self.prestart:
            self._start_spare(save)
        return instance

    def _start_spare(self, save: Path) -> None:
        future: Future = Future()

        def run() -> None:
            try:
                future.set_result(ServerInstance(self.config, save, self.root).start())
            except BaseException as err:  # noqa: BLE001 - handed to whoever takes the spare
                future.set_exception(err)

        threading.Thread(target=run, name="server-prestart", daemon=True).start()
        with self._lock:
            old, self._spare = self._spare, (save, future)
        if old is not None:
            _discard(old[1])

    def close(self) -> None:
        """Stop a pre-started server that nobody took."""
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            _discard(spare[1])


def _discard(future: Future) -> None:
    """Stop the server of ``future`` once it has started (or failed to)."""
    def stop(done: Future) -> None:
        if done.exception() is None:
            done.result().stop()
    future.add_done_callback(stop)
