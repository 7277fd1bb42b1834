"""The Vanilla and Mirror copies of one world as two environments reset with the same seed.

The two saves of a pair differ only by the rule pack, so with one seed the two episodes start from
the same observation, and the same actions give the same observations until an action meets a
changed rule. :func:`make_pair` opens both through ``gymnasium.make`` and resets them with ``seed``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium

from mcbuild.compiler.worlds.layout import VANILLA
from mcbuild.envs.registration import ENV_ID

__all__ = ["Pair", "make_pair"]


@dataclass
class Pair:
    """``vanilla`` and ``mirror`` environments, each reset with ``seed``; ``observations`` and ``infos``
    are what their first reset returned (Vanilla first)."""

    vanilla: gymnasium.Env
    mirror: gymnasium.Env
    seed: int
    observations: tuple[dict[str, Any], dict[str, Any]]
    infos: tuple[dict[str, Any], dict[str, Any]]

    def reset(self, seed: int | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Reset both with ``seed`` (the pair's own by default); returns both observations."""
        if seed is not None:
            self.seed = seed
        (ov, iv), (om, im) = self.vanilla.reset(seed=self.seed), self.mirror.reset(seed=self.seed)
        self.observations, self.infos = (ov, om), (iv, im)
        return self.observations

    def close(self) -> None:
        self.vanilla.close()
        self.mirror.close()

    def __enter__(self) -> "Pair":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def make_pair(world: str, condition: str, task: str, *, seed: int, budget: int | None = None, backend: str = "sim",
              build: str | Path | None = None, **kwargs: Any) -> Pair:
    """The Vanilla copy of ``world`` and its ``condition`` copy (a suite, ``m01`` ... ``m06``), both reset
    with ``seed``."""
    if condition == VANILLA:
        raise ValueError("a pair is the Vanilla copy and a Mirror copy: give the suite (m01 ... m06) as condition")
    envs = [gymnasium.make(ENV_ID, world=world, condition=c, task=task, budget=budget, backend=backend, build=build,
                           **kwargs) for c in (VANILLA, condition)]
    pair = Pair(envs[0], envs[1], seed, ({}, {}), ({}, {}))
    try:
        pair.reset()
    except BaseException:
        pair.close()
        raise
    return pair
