"""What a health check reports: one finding per problem, each with a fix hint."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Severity = Literal["ok", "warning", "error"]


@dataclass(frozen=True)
class Finding:
    """One result of a check. `fixed` is True when `--fix` repaired it."""

    check: str  # e.g. "home.permissions", "sessions.torn-line", "memory.index"
    severity: Severity
    message: str
    hint: str | None = None
    path: str | None = None
    fixed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
