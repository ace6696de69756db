"""How a memory record maps to its database rows: the `records` columns read back into a record, what
ranking reads of a row, and a new record's derived fields."""

from __future__ import annotations

import json
import operator
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from openclaw_cli.memory.store.forgetting import initial_state, recall_probability
from openclaw_cli.memory.store.records import FsrsState, MemoryRecord, parse_iso, utc_now

RECORD_COLUMNS = (
    "rowid, id, scope, user_id, agent_id, category, l0, l1, l2, language, l0_hash, created_at, updated_at, "
    "source, fsrs_stability, fsrs_difficulty, fsrs_last_review, fsrs_next_review, fsrs_reps, fsrs_lapses, "
    "deleted, vector_status, attribute, reflected_at"
)
# A row's place among records of the same text or attribute: the newest is the one meant.
CREATED_THEN_ROWID = operator.itemgetter(RECORD_COLUMNS.split(", ").index("created_at"), 0)


class RankingFacts(NamedTuple):
    """A named tuple, not a frozen dataclass: search makes one per candidate (~150 a query at 100k), and a
    frozen dataclass's __init__ took 1.6 us against 0.5 us."""

    language: str
    category: str
    fsrs_columns: tuple[Any, ...]  # stability, difficulty, last review, next review
    l0: str = ""
    source: str | None = None

    def retrievability(self, now: datetime) -> float:
        """forgetting.retrievability of this memory's FSRS state, without building the state (only the
        stability and the last review matter) for each of ~70 candidates a search."""
        stability, _, last, _ = self.fsrs_columns
        return recall_probability(stability, parse_iso(last), now)


def to_json(value: object) -> str | None:
    """A value as the JSON text a row stores (`source`, history's old and new values); None stays NULL."""
    return None if value is None else json.dumps(value, ensure_ascii=False)


def row_to_record(row: Sequence[Any]) -> MemoryRecord:
    return MemoryRecord.model_validate(
        {
            "id": row[1],
            "scope": row[2],
            "userId": row[3],
            "agentId": row[4],
            "category": row[5],
            "l0": row[6],
            "l1": row[7],
            "l2": row[8],
            "language": row[9],
            "l0Hash": row[10],
            "createdAt": parse_iso(row[11]),
            "updatedAt": parse_iso(row[12]),
            "source": json.loads(row[13]) if row[13] else None,
            "fsrs": FsrsState.model_validate(
                {
                    "stability": row[14],
                    "difficulty": row[15],
                    "lastReview": parse_iso(row[16]),
                    "nextReview": parse_iso(row[17]),
                    "reps": row[18],
                    "lapses": row[19],
                }
            ),
            "deleted": bool(row[20]),
            "vectorStatus": row[21],
            "attribute": row[22],
            "reflectedAt": parse_iso(row[23]),
        }
    )


def new_record(
    *,
    record_id: str,
    l0: str,
    agent_id: str,
    scope: str,
    user_id: str | None,
    category: str,
    l1: str | None = None,
    l2: str | None = None,
    created_at: datetime | None = None,
    source: dict[str, Any] | None = None,
    fsrs: FsrsState | None = None,
    attribute: str | None = None,
) -> MemoryRecord:
    """A record with its derived fields (language, L0 hash, FSRS start state) filled in."""
    from openclaw_cli.memory.text.analysis import detect_language, l0_hash

    now = utc_now()
    created = created_at or now
    return MemoryRecord.model_validate(
        {
            "id": record_id,
            "scope": scope,
            "userId": user_id,
            "agentId": agent_id,
            "category": category,
            "l0": l0,
            "l1": l1,
            "l2": l2,
            # The language of L0, the text whose vector is stored: it decides how far each model's half
            # of that vector is trusted (store/layout.py LANGUAGE_TRUST), so it must describe that text alone.
            "language": detect_language(l0),
            "l0Hash": l0_hash(l0),
            "createdAt": created,
            "updatedAt": now,
            "source": source,
            "fsrs": fsrs or initial_state(created),
            "attribute": attribute,
        }
    )
