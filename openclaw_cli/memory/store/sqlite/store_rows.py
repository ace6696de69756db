"""Every row of the SQLite file as stored, for moving a store to another backend (the StoreRows role of
store/protocol.py): a part of `SqliteStorage`, kept here so that class stays about the use cases."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

from openclaw_cli.memory.store.protocol import HistoryRow, PersonRow, StoredChange
from openclaw_cli.memory.store.record_rows import RECORD_COLUMNS, row_to_record

if TYPE_CHECKING:
    import apsw
    import numpy as np

    from openclaw_cli.memory.store.records import MemoryRecord


def _count(conn: apsw.Connection, table: str) -> int:
    return int(next(iter(conn.execute(f"SELECT count(*) FROM {table}")))[0])


class SqliteStoreRows:
    """The StoreRows role over `self.conn`."""

    conn: apsw.Connection

    def records_after(self, after: int, limit: int) -> list[tuple[int, MemoryRecord]]:
        rows = self.conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE rowid > ? ORDER BY rowid LIMIT ?", (after, limit)
        )
        return [(int(row[0]), row_to_record(row)) for row in rows]

    def count_records(self) -> int:
        return _count(self.conn, "records")

    def history_after(self, after: int, limit: int) -> list[StoredChange]:
        rows = self.conn.execute(
            "SELECT seq, record_id, user_id, action, old_value, new_value, at, reason FROM history "
            "WHERE seq > ? ORDER BY seq LIMIT ?",
            (after, limit),
        )
        return [
            StoredChange(str(record), user, HistoryRow(int(seq), str(action), old, new, str(at), reason))
            for seq, record, user, action, old, new, at, reason in rows
        ]

    def count_history(self) -> int:
        return _count(self.conn, "history")

    def append_history(self, changes: Sequence[StoredChange]) -> None:
        self.conn.executemany(
            "INSERT INTO history(record_id, user_id, action, old_value, new_value, at, reason) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (c.record_id, c.user_id, c.row.action, c.row.old, c.row.new, c.row.at, c.row.reason)
                for c in changes
            ],
        )

    def meta_items(self) -> dict[str, str]:
        return {str(key): str(value) for key, value in self.conn.execute("SELECT key, value FROM meta")}

    def people_rows(self) -> list[PersonRow]:
        rows = self.conn.execute("SELECT user_id, kind, name, mentions FROM people ORDER BY 1, 2, 3")
        return [PersonRow(str(u), str(k), str(n), int(m)) for u, k, n, m in rows]

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

    def bulk_load(self) -> AbstractContextManager[None]:
        """FTS5 and vec0 take rows in bulk as cheaply as one by one: nothing to set aside."""
        return nullcontext()

    def put_person(self, person: PersonRow) -> None:
        self.conn.execute(
            "INSERT INTO people(user_id, kind, name, mentions) VALUES (?, ?, ?, ?) "
            "ON CONFLICT DO UPDATE SET mentions = excluded.mentions",
            (person.user_id, person.kind, person.name, person.mentions),
        )


def _ready(record: MemoryRecord, vector: np.ndarray | None) -> bool:
    """A copy is ready when its vector comes with it; a tombstone (no vector) keeps the status it had."""
    return vector is not None or (record.deleted and record.vector_status == "ready")
