"""``mcbuild study watch DIR``: a read-only page that follows a running study from another shell.

:mod:`.state` reads the study (the store on read-only connections, the live logs of the episodes in
flight, the world maps), :mod:`.server` serves it on 127.0.0.1, :mod:`.page` is the page. Watching
never takes the store's lock and never writes into the study folder.
"""
from .server import WatchServer

__all__ = ["WatchServer"]
