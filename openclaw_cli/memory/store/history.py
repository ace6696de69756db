"""Reading the history of a record: one row per change, with the values the rows do not copy filled in.

An add, update or merge leaves its new value in the records table, so its row stores none (at 100k
memories the JSON copies of adds took 78 MB). That value is the next change's old value, or, for the
latest change, the record as it is now.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openclaw_cli.memory.store.protocol import HistoryRow

# History actions whose new value is the record itself: their rows store no copy of it.
VALUE_IN_RECORDS = frozenset({"add", "update", "merge"})


def entries(
    record_id: str, rows: Sequence[HistoryRow], current: Callable[[str], dict[str, Any] | None]
) -> list[dict[str, Any]]:
    """The history `rows` of `record_id` (oldest first) as values; `current(id)` gives the record as it is now."""
    olds = [json.loads(row.old) if row.old else None for row in rows]
    out = []
    for n, row in enumerate(rows):
        value = json.loads(row.new) if row.new else None
        if value is None and row.action in VALUE_IN_RECORDS:
            value = olds[n + 1] if n + 1 < len(rows) else current(record_id)
        out.append(
            {
                "seq": row.seq,
                "action": row.action,
                "old": olds[n],
                "new": value,
                "at": row.at,
                "reason": row.reason,
            }
        )
    return out
