"""What the write path speaks: a candidate memory, the verdict on a near-duplicate, and each outcome.

Callers (extraction, reflection, "remember this", import) build `Candidate`s and read `WriteOutcome`s;
writing/write_path.py decides and writes them through writing/plan.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from openclaw_cli.core.errors import OpenclawError
    from openclaw_cli.memory.store.records import MemoryRecord

Action = Literal["added", "merged", "duplicate", "skipped"]
Verdict = Literal["same", "update", "different"]


@dataclass(frozen=True)
class Candidate:
    """A memory someone wants written: L0 one line, L1 detail, L2 the verbatim source with timestamps."""

    l0: str
    category: str
    l1: str | None = None
    l2: str | None = None
    scope: str = "user"
    user_id: str | None = None
    attribute: str | None = None
    source: dict[str, Any] | None = None
    created_at: datetime | None = None
    # Only for an operator's `memory add --id`: the id a new memory gets (ignored when it is not new).
    record_id: str | None = None


@dataclass(frozen=True)
class WriteOutcome:
    candidate: Candidate
    action: Action
    reason: str
    record_id: str | None = None
    # The memory it was merged into or found a duplicate of, when that is not record_id itself.
    existing_id: str | None = None
    # Why a candidate that failed validation was skipped (its message is `reason`), with its hint.
    error: OpenclawError | None = field(default=None, compare=False)

    def describe(self) -> str:
        """One line for the person: what was stored, or what it matched and why nothing new was."""
        said = f'"{self.candidate.l0}"'
        if self.action == "added":
            # Beside a memory it is a new value of: say which, so the person knows both are kept.
            return (
                f"Saved to memory: {said} ({self.reason})."
                if self.existing_id
                else f"Saved to memory: {said}."
            )
        if self.action == "merged":
            return f"Updated memory {self.record_id}: {said} ({self.reason})."
        if self.action == "duplicate":
            return f"Not saved again: {said} is already remembered ({self.reason})."
        return f"Not saved: {said} ({self.reason})."

    def added_dict(self, record: MemoryRecord | None) -> dict[str, Any]:
        """The answer of an entry point that added one memory (gateway `memory.add`, MCP `memory_add`):
        the stored record (when one was), what happened, and what to tell the person."""
        pending = record is not None and record.vector_status == "pending"
        return {
            **(record.public_dict() if record is not None else {}),
            "id": self.record_id,
            "action": self.action,
            "reason": self.reason,
            "existingId": self.existing_id,
            "said": self.describe(),
            "warning": f"the vector is pending ({self.reason})" if pending else None,
        }

    def public_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "reason": self.reason,
            "id": self.record_id,
            "existingId": self.existing_id,
            "l0": self.candidate.l0,
            "category": self.candidate.category,
        }


class Judge(Protocol):
    """Decides the grey zone of semantic dedup; in practice the LLM. None means: treat as new."""

    def __call__(self, candidate: Candidate, existing: MemoryRecord) -> Verdict: ...
