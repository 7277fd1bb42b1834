"""The embedded simulator backend (the default runtime): a headless, deterministic model of the
paper's Mineflayer body over a world save's blocks and rules. See docs/simulator.md.

* ``save``, ``world``, ``loading``: a save read into arrays, the derived access structure, its cache.
* ``episode_terrain``: an episode's mutable copy of the blocks with an undo journal.
* ``body``, ``entities``: the player body, mobs, dropped items and episode controls.
* ``primitives``: what the shared skills (``mcbuild.runtime.skills``) ask of the simulator.
* ``backend``: ``SimBackend``, which ties them to one world's ``Rulebook``.
* ``synthetic``: a small built-in test world.
"""
