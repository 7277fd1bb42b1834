"""Structured audit findings: ``hard_failures`` and ``warnings``, each with code, file, field, message."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Finding:
    code: str
    file: str
    field: str
    message: str

    def line(self) -> str:
        return f"{self.code}: {self.file}: {self.field}: {self.message}"


@dataclass
class Findings:
    hard_failures: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)

    def hard(self, code: str, file: str, field_: str, message: str) -> None:
        self.hard_failures.append(Finding(code, file, field_, message))

    def warn(self, code: str, file: str, field_: str, message: str) -> None:
        self.warnings.append(Finding(code, file, field_, message))

    def extend(self, other: "Findings") -> "Findings":
        self.hard_failures.extend(other.hard_failures)
        self.warnings.extend(other.warnings)
        return self

    @property
    def ok(self) -> bool:
        return not self.hard_failures

    def to_json(self) -> dict:
        key = lambda f: (f.code, f.file, f.field, f.message)
        return {"hard_failures": [asdict(f) for f in sorted(self.hard_failures, key=key)],
                "warnings": [asdict(f) for f in sorted(self.warnings, key=key)]}

    @classmethod
    def from_json(cls, data: dict) -> "Findings":
        return cls([Finding(**f) for f in data.get("hard_failures", [])], [Finding(**f) for f in data.get("warnings", [])])
