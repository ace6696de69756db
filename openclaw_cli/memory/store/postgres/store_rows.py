"""Every row of a postgres store as stored, for moving a store to another backend (the StoreRows role of
store/protocol.py): a part of `PostgresStorage`, kept here so that class stays about the use cases."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from openclaw_cli.memory.store.postgres.records import scalar
from openclaw_cli.memory.store.protocol import HistoryRow, PersonRow, StoredChange
from openclaw_cli.memory.store.record_rows import RECORD_COLUMNS, row_to_record

if TYPE_CHECKING:
    import psycopg

    from openclaw_cli.memory.store.records import MemoryRecord


class PostgresStoreRows:
    """The StoreRows role over `self.conn`."""

    conn: psycopg.Connection

    def records_after(self, after: int, limit: int) -> list[tuple[int, MemoryRecord]]:
        rows = self.conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE rowid > %s ORDER BY rowid LIMIT %s", (after, limit)
        )
        return [(int(row[0]), row_to_record(row)) for row in rows]

    def count_records(self) -> int:
        return scalar(self.conn, "SELECT count(*) FROM records")

    def history_after(self, after: int, limit: int) -> list[StoredChange]:
        rows = self.conn.execute(
            "SELECT seq, record_id, user_id, action, old_value, new_value, at, reason FROM history "
            "WHERE seq > %s ORDER BY seq LIMIT %s",
            (after, limit),
        )
        return [
            StoredChange(str(record), user, HistoryRow(int(seq), str(action), old, new, str(at), reason))
            for seq, record, user, action, old, new, at, reason in rows
        ]

    def count_history(self) -> int:
        return scalar(self.conn, "SELECT count(*) FROM history")

    def append_history(self, changes: Sequence[StoredChange]) -> None:
        with self.conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO history(record_id, user_id, action, old_value, new_value, at, reason) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
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

    def put_person(self, person: PersonRow) -> None:
        self.conn.execute(
            "INSERT INTO people(user_id, kind, name, mentions) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (user_id, kind, name) DO UPDATE SET mentions = EXCLUDED.mentions",
            (person.user_id, person.kind, person.name, person.mentions),
        )

