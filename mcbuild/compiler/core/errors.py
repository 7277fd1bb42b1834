"""Errors that the CLI turns into one readable line and a non-zero exit code."""
from __future__ import annotations


class SpecError(Exception):
    """An invalid spec: names the file and the field (none: the whole file) (exit code 2)."""

    def __init__(self, file: str, field: str, message: str):
        message = " ".join(str(message).split())       # always one line, whatever the parser said
        self.file, self.field, self.message = file, field, message
        super().__init__(f"{file}: {field}: {message}" if field else f"{file}: {message}")


class CompileError(Exception):
    """A spec that is well-formed but fails a hard check (unsolvable route, irrelevant change...): exit 1."""

    def __init__(self, file: str, message: str, findings: list | None = None):
        self.file, self.message, self.findings = file, message, findings or []
        super().__init__(f"{file}: {message}")
