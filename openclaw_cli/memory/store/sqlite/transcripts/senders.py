"""The names of the people who sent the indexed turns (issue 54, transcript recall), for the speaker cue of
transcripts/speakers.py: "When did Priya go to the food bank?" is asked about what Priya said.

Kept per connection and brought up to date by reading only the rows added since the last read (rowids
grow as turns are indexed), so a search in the gateway's turn pays a `max(rowid)` lookup, not a scan of
every sender. A name whose turns were all purged stays known until the index is emptied or shrinks: it can
only steer the ranking towards turns that no longer exist, never show anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import apsw


class SenderNames:
    def __init__(self) -> None:
        self._upto = 0  # the highest rowid read
        self._names: set[str] = set()
        self._frozen: frozenset[str] = frozenset()

    def names(self, conn: apsw.Connection) -> frozenset[str]:
        row = conn.execute("SELECT coalesce(max(rowid), 0) FROM turns").fetchone()
        top = int(row[0]) if row is not None else 0
        if top < self._upto:  # emptied or rebuilt: read again from the start
            self._upto, self._names = 0, set()
        if top > self._upto:
            rows = conn.execute(
                "SELECT DISTINCT sender FROM turns WHERE rowid > ? AND sender IS NOT NULL", (self._upto,)
            )
            self._names.update(str(sender) for (sender,) in rows if str(sender).strip())
            self._upto = top
            self._frozen = frozenset(self._names)
        return self._frozen
