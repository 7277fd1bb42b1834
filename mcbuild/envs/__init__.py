"""MirrorCraft as a Gymnasium environment (the ``gym`` extra: ``pip install 'mcbuild[gym]'``).

``mcbuild/MirrorCraft-v0`` (:class:`~.mirrorcraft.MirrorCraftEnv`) is registered when this package is
imported, and the package declares it under Gymnasium's entry-point group ``gymnasium.envs`` (the
plugin hook of Gymnasium 0.26-0.29, which load it on ``import gymnasium``). Gymnasium 1.0 dropped
that hook, so there name the module in the id, which imports it first::

    import gymnasium
    env = gymnasium.make("mcbuild.envs:mcbuild/MirrorCraft-v0", world="plains-1", condition="m04",
                         task="iron_armor")

(or ``import mcbuild.envs`` and then ``gymnasium.make("mcbuild/MirrorCraft-v0", ...)``).
:func:`~.pair.make_pair` opens the Vanilla and Mirror copies of one world with the same seed. The
structured observation is a read-only :class:`~.state.State` whose parts are copied when first read.
"""
from __future__ import annotations

from mcbuild.envs.pair import Pair, make_pair
from mcbuild.envs.registration import ENTRY_POINT, ENV_ID, register_envs
from mcbuild.envs.state import State

__all__ = ["ENV_ID", "ENTRY_POINT", "register_envs", "make_pair", "Pair", "State"]

register_envs()
