"""Errors the study runner classifies.

An :class:`InfrastructureFault` is a failure of the machinery, never of the agent: a backend
crash, a missing or damaged world or pack, a disconnect, a model endpoint that stopped answering.
The runner reruns such an episode under the same id and seed and never stores it as a score.
Backend and endpoint errors subclass it. :class:`BackendUnavailable` means a study cannot start.
An :class:`AgentError` is a configuration whose agent cannot be imported or built: the same for
every episode of it, so it is reported once and never rerun.
"""
from __future__ import annotations


class InfrastructureFault(RuntimeError):
    """The episode could not be run as planned: rerun it under the same id and seed."""


class BackendUnavailable(RuntimeError):
    """The study cannot start: unknown backend, or a model endpoint that fails its preflight."""


class AgentError(Exception):
    """A configuration's agent cannot be used (it does not load, its factory raises or returns no agent)."""

    def __str__(self) -> str:
        return str(self.args[0])
