"""The one write path for memories that come from conversations, reflection and imports.

Every caller (extraction, "remember this", reflection, import) hands over candidates and gets back, for
each, what happened to it: added, merged into an existing memory, a duplicate (a no-op that counts as a
review), or skipped, with the reason. Dedup and the merge strategy by category (seed 000 §6) live
behind this interface, so callers never decide them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.writing.candidate import Candidate, Judge, WriteOutcome

if TYPE_CHECKING:
    from openclaw_cli.memory.agent_memory import AgentMemory, NewMemory
    from openclaw_cli.memory.store.records import MemoryRecord


def write_memories(
    service: AgentMemory,
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
    from openclaw_cli.core.errors import OpenclawError
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
    from openclaw_cli.memory.agent_memory import NewMemory

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


def replaces_by_attribute(item: NewMemory) -> bool:
    """Whether a bulk line is a keyed fact ("job", "city") whose new value replaces the person's old one:
    those go through the write path (with a history row), not the bulk loader, which never merges."""
    from openclaw_cli.memory.writing.dedup import KEYED_CATEGORIES

    return bool(item.attribute and item.attribute.strip()) and item.category in KEYED_CATEGORIES


def candidate_of(item: NewMemory) -> Candidate:
    return Candidate(
        l0=item.l0,
        category=item.category,
        l1=item.l1,
        l2=item.l2,
        scope=item.scope,
        user_id=item.user_id,
        attribute=item.attribute,
        source=item.source,
        created_at=item.created_at,
        record_id=item.record_id,
    )
