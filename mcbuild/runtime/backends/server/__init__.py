"""The Java server backend: a user-supplied Minecraft 1.19.0 server per episode, driven through the
Node bridge (``bridge/``, ``bridge_client``). See docs/server.md.

* ``config``: the jar, its SHA-1, the EULA, Java 17 (``BackendUnavailable`` otherwise).
* ``instance``: a run folder (save copy, ``server.properties``), the Java process, readiness, stop.
* ``console``: RCON (the ``rcon`` package) or the bridge's harness command op.
* ``link``: the bridge ops as the backend uses them, faults as ``InfrastructureFault``.
* ``primitives``: what the shared skills (``mcbuild.runtime.skills``) ask of the server, as bridge ops.
* ``backend``: ``ServerBackend``; ``factory``: ``ServerFactory`` (optional pre-start).

``mcbuild server check`` (integrity of the saves on a real server) is ``runtime/episode/server_check.py``.
"""
