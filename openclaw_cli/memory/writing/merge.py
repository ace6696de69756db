"""Merging a new memory into an existing one, by category (seed 000 §3.1, §6.1).

- profile: overwrite by attribute, the new value wins;
- preference, insight: latest wins;
- lesson: append: L1 gains the new lesson with its date, L0 becomes the latest;
- event, case (and note, the workspace's own text): never merged, each stays its own memory.

A merge keeps the record's id, writes an `update` history row holding the old value, and re-indexes
the record's keyword row and vector. L2, the user's own words, is never replaced by a summary: when the
new memory brings none, the old L2 stays; when it does, the old one is still in history.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal

from openclaw_cli.memory.store import people

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.memory_store import MemoryStore
    from openclaw_cli.memory.store.records import MemoryRecord

Strategy = Literal["overwrite", "latest-wins", "append", "never"]

STRATEGIES: dict[str, Strategy] = {
    "profile": "overwrite",
    "preference": "latest-wins",
    "insight": "latest-wins",
    "lesson": "append",
    "event": "never",
    "case": "never",
    "note": "never",
}


def strategy(category: str) -> Strategy:
    return STRATEGIES.get(category, "never")


def merged(existing: MemoryRecord, new: MemoryRecord, now: datetime) -> MemoryRecord | None:
    """The existing record with the new one merged in, or None when its category never merges."""
    rule = strategy(existing.category)
    if rule == "never":
        return None
    if rule == "append":
        return _appended(existing, new, now)
    # overwrite / latest-wins: the new value is the memory now. createdAt moves to when this value was
    # recorded, so an injected memory shows the date of what it says (history keeps the first date).
    return existing.model_copy(
        update={
            "l0": new.l0,
            "l1": new.l1,
            "l2": new.l2 if new.l2 is not None else existing.l2,
            "language": new.language,
            "l0_hash": new.l0_hash,
            "attribute": new.attribute or existing.attribute,
            "source": new.source or existing.source,
            "created_at": new.created_at,
            "updated_at": now,
        }
    )


def _appended(existing: MemoryRecord, new: MemoryRecord, now: datetime) -> MemoryRecord:
    """A lesson learned again, or refined: keep every version in L1, each with its date."""
    from openclaw_cli.memory.text.analysis import detect_language

    earlier = existing.l1 or f"[{existing.created_at:%Y-%m-%d}] {existing.l0}"
    latest = f"[{new.created_at:%Y-%m-%d}] {new.l1 or new.l0}"
    l1 = f"{earlier}\n{latest}"
    l2 = "\n\n".join(part for part in (existing.l2, new.l2) if part) or None
    return existing.model_copy(
        update={
            "l0": new.l0,
            "l1": l1,
            "l2": l2,
            "language": detect_language(new.l0),  # of the embedded text (record_rows.new_record)
            "l0_hash": new.l0_hash,
            "source": new.source or existing.source,
            "updated_at": now,
        }
    )


def apply(
    store: MemoryStore, old: MemoryRecord, new: MemoryRecord, vector: np.ndarray | None, reason: str
) -> None:
    """Write `new` (same id as `old`) over `old` with its indexes and a history row. Call inside a
    write transaction."""
    storage = store.storage
    rowid = store.rowid(old.id)
    people.note(storage, new.user_id, new.l0)
    storage.replace_row(rowid, new, vector_ready=vector is not None)
    if vector is None:
        # The old vector describes the old text: a pending vector is filled by `memory index`.
        storage.delete_vector(rowid)
    else:
        storage.ensure_vectors(store.embedder().identity)
        storage.put_vector(rowid, vector, (new.scope, new.user_id or "", new.category))
    storage.vectors_changed()
    store.log_change(old.id, old.user_id, "update", old.public_dict(), None, reason)
