"""``mcbuild/MirrorCraft-v0``: one MirrorCraft task in one world as a ``gymnasium.Env``.

``gymnasium.make("mcbuild/MirrorCraft-v0", world="plains-1", condition="m04", task="iron_armor")``
opens the episode the way a study does (``runtime/episode/opening.open_episode``: names checked,
saves verified, rules read from the save, the backend from the registry), at the first ``reset``:

* an observation is ``{"text": ..., "state": ...}``: the paper's observation as the LLM agents'
  prompts render it, and the same observation as a :class:`~.state.State`: a read-only mapping
  whose parts are fresh plain copies made when first read, so the user and the episode never share
  a mutable object and a part nobody reads costs nothing (``copy=True``: the whole observation
  copied into a plain dict every step, which costs about a third of a simulator step; see
  docs/environment.md).
  ``observation="state"`` (or ``"text"``) keeps only one of them: rendering the text costs more than
  the rest of the wrapper;
* an action is one semantic skill call ``{"skill": ..., "args": {...}}`` (:class:`~.spaces.SkillCall`);
  a malformed one is refused by the contract and costs its unit of budget, as in a study;
* the reward is the Score gained by the action (the Score is the deepest milestone's value, so the
  rewards of an episode add up to its Score);
* ``terminated`` at the final milestone or death, ``truncated`` when the budget is spent;
* ``info`` has the action's ``skill``, ``ok``, reason code (``reason``) and ``message``, the Score, the
  budget, the milestones met and the end reason.

The hidden evaluator stays inside the episode: neither the observation nor ``info`` carries its
events, the rules, the condition, the world's paths or which copy of a pair this is
(``tests/test_agent_boundary.py``). ``reset(seed=s)`` starts the pristine world with episode seed
``s``; without a seed, the seed is drawn from the environment's ``np_random``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import gymnasium
import orjson
from gymnasium import spaces

from mcbuild.compiler.core.paths import BUILD
from mcbuild.compiler.rules.catalog import load as load_catalog
from mcbuild.envs.state import State
from mcbuild.envs.spaces import ObservationDict, ObservationText, SkillCall
from mcbuild.runtime.agents.llm.rendering import observation_text
from mcbuild.runtime.backends.registry import factory
from mcbuild.runtime.episode.episode import DEATH, SUCCESS, Episode
from mcbuild.runtime.episode.opening import check_names, open_episode

__all__ = ["MirrorCraftEnv", "SEED_BOUND", "OBSERVATIONS"]

SEED_BOUND = 2**31 - 1      # episode seeds drawn by reset() without a seed: 0 .. SEED_BOUND - 1
#: What an observation holds, by the ``observation`` argument.
OBSERVATIONS = {"both": ("text", "state"), "text": ("text",), "state": ("state",)}
_RESULT_INFO = ("skill", "ok", "reason", "message")


class Opening(NamedTuple):
    """What the first ``reset`` opens: ``open_episode``'s arguments."""

    world: str
    condition: str
    task: str
    budget: int | None
    backend: str
    build: Path


class MirrorCraftEnv(gymnasium.Env[dict, dict]):
    """One task in one world (``condition``: ``vanilla`` or a suite ``m01`` ... ``m06``) on ``backend``."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}     # ansi: the text, once per step

    def __init__(self, world: str = "plains-1", condition: str = "vanilla", task: str = "iron_armor",
                 budget: int | None = None, backend: str = "sim", build: str | Path | None = None,
                 observation: str = "both", copy: bool = False, render_mode: str | None = None):
        check_names(world, condition, task)
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation {observation!r} (known: {', '.join(OBSERVATIONS)})")
        if budget is not None and budget < 1:
            raise ValueError(f"budget must be at least 1, got {budget}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} (known: {', '.join(self.metadata['render_modes'])})")
        factory(backend)                              # an unknown or unavailable backend fails here
        self.render_mode = render_mode
        self._opening = Opening(world, condition, task, budget, backend, Path(build) if build is not None else BUILD)
        self.action_space = SkillCall(load_catalog())
        self._parts = OBSERVATIONS[observation]
        self._copy = copy
        self.observation_space = spaces.Dict({k: {"text": ObservationText, "state": ObservationDict}[k]()
                                              for k in self._parts})
        self._episode: Episode | None = None
        self._score = 0
        self._text = ""

    # ------------------------------------------------------------------ the gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        episode_seed = int(seed) if seed is not None else int(self.np_random.integers(SEED_BOUND))
        if self._episode is None:
            o = self._opening
            self._episode = open_episode(o.world, o.condition, o.task, o.budget, episode_seed, build=o.build,
                                         backend=o.backend)
        else:
            self._episode.reset(episode_seed)
        self._score = self._episode.score
        return self._observation(), self._info(None)

    def step(self, action: dict) -> tuple[dict, float, bool, bool, dict]:
        episode = self._require()
        if episode.done:
            raise gymnasium.error.ResetNeeded(f"the episode has ended ({episode.end_reason}); call reset()")
        result = episode.step(action)
        score = episode.score
        reward, self._score = float(score - self._score), score
        terminated = episode.end_reason in (SUCCESS, DEATH)
        truncated = episode.done and not terminated
        return self._observation(), reward, terminated, truncated, self._info(result)

    def render(self) -> str | None:
        return self._text if self.render_mode == "ansi" else None

    def close(self) -> None:
        if self._episode is not None:
            self._episode.close()
            self._episode = None

    # ------------------------------------------------------------------ what the agent gets
    def _require(self) -> Episode:
        if self._episode is None:
            raise gymnasium.error.ResetNeeded("call reset() before step()")
        return self._episode

    def _observation(self) -> dict[str, Any]:
        state = self._require().observe()
        out: dict[str, Any] = {}
        if "text" in self._parts or self.render_mode == "ansi":
            self._text = observation_text(state)
        if "text" in self._parts:
            out["text"] = self._text
        if "state" in self._parts:
            # never the episode's own dict, which shares parts with later observations
            out["state"] = orjson.loads(orjson.dumps(state)) if self._copy else State(state)
        return out

    def _info(self, result: dict[str, Any] | None) -> dict[str, Any]:
        ep = self._require()
        total = ep.setup.budget
        info: dict[str, Any] = {"score": float(ep.score), "milestones": list(ep.milestones_met),
                                "budget": {"used": ep.used, "remaining": total - ep.used, "total": total},
                                "end_reason": ep.end_reason}
        if result is not None:
            info.update({k: result.get(k) for k in _RESULT_INFO})
        return info
