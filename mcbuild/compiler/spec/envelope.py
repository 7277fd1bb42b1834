"""The envelope every spec file of a world shares: ``schema_version``, ``kind``, ``id`` and
``selected_tasks`` (the ids of task specs of ``specs/tasks/``, themselves spec files read by
``task``)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from mcbuild.compiler.spec.base import SpecId, Strict
from mcbuild.compiler.spec.task import tasks


class Envelope(Strict):
    schema_version: Literal["1.0"]
    kind: str
    id: SpecId
    selected_tasks: list[str] = Field(min_length=1)

    @field_validator("selected_tasks")
    @classmethod
    def _known_tasks(cls, value: list[str]) -> list[str]:
        known = tasks()
        for t in value:
            if t not in known:
                raise ValueError(f"unknown task {t!r} (known: {', '.join(sorted(known))})")
        if len(set(value)) != len(value):
            raise ValueError("tasks must not repeat")
        return value
