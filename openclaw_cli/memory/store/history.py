"""Reading the history of a record: one row per change, with the values the rows do not copy filled in.

An add, update or merge leaves its new value in the records table, so its row stores none (at 100k
memories the JSON copies of adds took 78 MB). That value is the next change's old value, or, for the
latest change, the record as it is now.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import apsw

# History actions whose new value is the record itself: their rows store no copy of it.
VALUE_IN_RECORDS = frozenset({"add", "update", "merge"})


def entries(
    conn: apsw.Connection, record_id: str, current: Callable[[str], dict[str, Any] | None]
) -> list[dict[str, Any]]:
    """The history rows of `record_id`, oldest first; `current(id)` gives the record as it is now."""
    rows = list(
        conn.execute(
            "SELECT seq, action, old_value, new_value, at, reason FROM history WHERE record_id = ? ORDER BY seq",
            (record_id,),
        )
    )
    olds = [json.loads(old) if old else None for _, _, old, _, _, _ in rows]
    out = []
    for n, (seq, action, _, new, at, reason) in enumerate(rows):
        value = json.loads(new) if new else None
        if value is None and action in VALUE_IN_RECORDS:
            value = olds[n + 1] if n + 1 < len(rows) else current(record_id)
        out.append({"seq": seq, "action": action, "old": olds[n], "new": value, "at": at, "reason": reason})
    return out
