"""The state of the keyword index alone, which keys the in-memory copy of it (sqlite/keyword_memory.py).

keyword.state changes with any write to the database, and a chat turn writes after its searches: the FSRS
state of every memory it showed. The copy was then stale at every turn though no memory's terms changed,
and with several clients at once its rebuild thread took ~17% of the gateway's busy time (10 clients,
2,000 memories) for copies that were stale before any search read them. FTS5's structure record (the row
with id 10 of its `_data` table) is rewritten, with its write counter moved on, by every transaction that
changes the index (an insert, a delete, a rebuild), by any connection; a write elsewhere leaves it as it
was. Inside a transaction the connection's own pending changes are not in it yet: there the key stays
keyword.state's, which never equals a structure's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openclaw_cli.memory.store.sqlite.keyword import state

if TYPE_CHECKING:
    import apsw

STRUCTURE_ROWID = 10  # FTS5_STRUCTURE_ROWID in sqlite's fts5Int.h


def index_state(conn: apsw.Connection) -> object:
    """A value that changes whenever the keyword index may have (see the module doc)."""
    if not conn.getautocommit():
        return ("in transaction", *state(conn))
    row = conn.execute("SELECT block FROM records_fts_data WHERE id = ?", (STRUCTURE_ROWID,)).fetchone()
    return ("structure", None if row is None else bytes(row[0]))
