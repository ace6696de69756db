"""The one write path for memories that come from conversations, reflection and imports.

Every caller (extraction, "remember this", reflection, import) hands over candidates and gets back, for
each, what happened to it: added, merged into an existing memory, a duplicate (a no-op that counts as a
review), or skipped, with the reason. Dedup and the merge strategy by category (seed 000 §6) live
behind this interface, so callers never decide them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from openclaw_cli.errors import OpenclawError
    from openclaw_cli.memory.service import MemoryService
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
    """Write each candidate through dedup and merge; nothing is deleted on a guess.

    One outcome per candidate, in order. A candidate that fails validation is `skipped` with the reason
    and the others are still written. Decisions (and judge calls, which may be slow model calls) happen
    before the write transaction, so the database is never locked while a model thinks; the writes then
    go in one transaction per database. `dry_run` decides without writing.
    """
    from openclaw_cli.errors import OpenclawError
    from openclaw_cli.memory.store.records import utc_now
    from openclaw_cli.memory.writing.plan import StoreWriter

    moment = now or utc_now()
    outcomes: list[WriteOutcome | None] = [None] * len(candidates)
    groups: dict[Any, list[tuple[int, MemoryRecord]]] = {}
    for number, candidate in enumerate(candidates):
        try:
            record = service.build_record(_new_memory(candidate, moment))
        except OpenclawError as exc:
            outcomes[number] = WriteOutcome(candidate, "skipped", exc.message, error=exc)
            continue
        groups.setdefault(service.db_path(record.scope), []).append((number, record))
    for path, items in groups.items():
        with service.damage_guard():
            writer = StoreWriter(service, service.store(path), judge, moment)
            written = writer.write([candidates[n] for n, _ in items], [r for _, r in items], dry_run)
        for (number, _), outcome in zip(items, written, strict=True):
            outcomes[number] = outcome
    return [outcome for outcome in outcomes if outcome is not None]


def _new_memory(candidate: Candidate, now: datetime) -> Any:
    from openclaw_cli.memory.service import NewMemory

    return NewMemory(
        l0=candidate.l0,
        category=candidate.category,
        scope=candidate.scope,
        user_id=candidate.user_id,
        l1=candidate.l1,
        l2=candidate.l2,
        record_id=candidate.record_id,
        created_at=candidate.created_at or now,
        source=candidate.source,
        attribute=candidate.attribute,
    )
