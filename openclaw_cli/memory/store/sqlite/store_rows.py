"""Every row of the SQLite file as stored, for moving a store to another backend (the StoreRows role of
store/protocol.py): a part of `SqliteStorage`, kept here so that class stays about the use cases."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import apsw
    import numpy as np

    from openclaw_cli.memory.store.records import MemoryRecord


def _count(conn: apsw.Connection, table: str) -> int:
    return int(next(iter(conn.execute(f"SELECT count(*) FROM {table}")))[0])


class SqliteStoreRows:
    """The StoreRows role over `self.conn`."""

    conn: apsw.Connection

    def insert_copies(self, copies: Sequence[tuple[MemoryRecord, np.ndarray | None]]) -> list[int]:
        """One statement per row costs no round trip in an embedded database: the ordinary writes."""
        from openclaw_cli.memory.store.sqlite import keyword, records, vec

        table = vec.current_table(self.conn)
        rowids = []
        for record, vector in copies:
            rowid = records.insert(self.conn, record, _ready(record, vector))
            keyword.write_row(self.conn, rowid, record.l0, record.l1)
            if vector is not None:
                assert table is not None, "ensure_vectors first"
                vec.upsert(
                    self.conn, table, rowid, vector, (record.scope, record.user_id or "", record.category)
                )
            rowids.append(rowid)
        return rowids

    def copy_in_bulk(self) -> AbstractContextManager[None]:
        """FTS5 and vec0 take rows in bulk as cheaply as one by one: nothing to set aside, but the larger
        page cache of a bulk load (SqliteStorage.bulk_load) helps here too."""
        bulk_load = getattr(self, "bulk_load", None)
        return bulk_load() if bulk_load is not None else nullcontext()


def _ready(record: MemoryRecord, vector: np.ndarray | None) -> bool:
    """A copy is ready when its vector comes with it; a tombstone (no vector) keeps the status it had."""
    return vector is not None or (record.deleted and record.vector_status == "ready")
