"""Every row of a postgres store as stored, for moving a store to another backend (the StoreRows role of
store/protocol.py): a part of `PostgresStorage`, kept here so that class stays about the use cases."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from openclaw_cli.memory.store.postgres.schema import TERM_STATS
from openclaw_cli.memory.store.record_rows import RECORD_COLUMNS

BUILD_MEMORY = "256MB"  # the index builds' working memory: an HNSW graph of 100k vectors fits
COUNTING_TRIGGER = "keyword_rows_counted"  # postgres/schema.py: keeps keyword_totals and keyword_vocab
# What the counting trigger keeps, counted again from every keyword row at once (after a bulk load).
_RECOUNT = f"""
UPDATE keyword_totals SET documents = (SELECT count(*) FROM keyword_rows),
    tokens = (SELECT coalesce(sum(length), 0) FROM keyword_rows);
DELETE FROM keyword_vocab;
INSERT INTO keyword_vocab(term, documents, max_freq, min_length) {TERM_STATS};
"""

if TYPE_CHECKING:
    import numpy as np
    import psycopg

    from openclaw_cli.memory.store.records import MemoryRecord


class PostgresStoreRows:
    """The StoreRows role over `self.conn`."""

    conn: psycopg.Connection

    def insert_copies(self, copies: Sequence[tuple[MemoryRecord, np.ndarray | None]]) -> list[int]:
        """Three batched statements (psycopg pipelines executemany) instead of three round trips a record:
        the rows are numbered first from the records' own identity sequence."""
        from psycopg import sql

        from openclaw_cli.memory.store.postgres import keyword, records, vectors

        if not copies:
            return []
        rowids = [
            int(n)
            for (n,) in self.conn.execute(
                "SELECT nextval(pg_get_serial_sequence('records', 'rowid')) FROM generate_series(1, %s)",
                (len(copies),),
            )
        ]
        pairs = list(zip(rowids, copies, strict=True))
        marks = ", ".join(["%s"] * (len(RECORD_COLUMNS.split(",")) + 1))
        with self.conn.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO records({RECORD_COLUMNS}, text_hash) VALUES ({marks})",
                [
                    (rowid, *records.row_values(record, _ready(record, vector)))
                    for rowid, (record, vector) in pairs
                ],
            )
            cursor.executemany(
                keyword.WRITE_ROW, [keyword.row_values(rowid, r.l0, r.l1) for rowid, (r, _) in pairs]
            )
            with_vectors = [(rowid, r, v) for rowid, (r, v) in pairs if v is not None]
            if with_vectors:
                table = vectors.current_table(self.conn)
                assert table is not None, "ensure_vectors first"
                cursor.executemany(
                    sql.SQL(
                        "INSERT INTO {} (rowid, embedding, scope, user_id, category) "
                        "VALUES (%s, %s::halfvec, %s, %s, %s)"
                    ).format(sql.Identifier(table)),
                    [
                        (rowid, vectors.literal(v), r.scope, r.user_id or "", r.category)
                        for rowid, r, v in with_vectors
                    ],
                )
        return rowids

    def copy_in_bulk(self) -> AbstractContextManager[None]:
        return self._copy_in_bulk()

    @contextmanager
    def _copy_in_bulk(self) -> Iterator[None]:
        """Drop the schema's HNSW and GIN indexes for the load and create them again from their own
        definitions at the end, in the same transaction: one build is many times cheaper than 100k
        inserts into a graph, and a failed load rolls the drop back with everything else."""
        from psycopg import sql

        found = self.conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() "
            "AND indexdef ~ ' USING (hnsw|gin) '"
        ).fetchall()
        for name, _ in found:
            self.conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(str(name))))
        # The counting trigger updates one totals row, and a row per term, for every keyword row: in one
        # transaction each update adds a version the next one walks past, so 100k rows cost quadratic time.
        self.conn.execute(f"ALTER TABLE keyword_rows DISABLE TRIGGER {COUNTING_TRIGGER}")
        yield
        self.conn.execute(_RECOUNT)
        self.conn.execute(f"ALTER TABLE keyword_rows ENABLE TRIGGER {COUNTING_TRIGGER}")
        self.conn.execute(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'")
        for _, definition in found:
            self.conn.execute(str(definition))  # type: ignore[arg-type]  # the server's own DDL text
        # Fresh statistics, or the planner takes the loaded tables for empty ones: at 20k memories a
        # keyword query then hash-joins every record through temp files (330 ms instead of a few).
        tables = self.conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
        for (table,) in tables:
            self.conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(str(table))))


def _ready(record: MemoryRecord, vector: np.ndarray | None) -> bool:
    """A copy is ready when its vector comes with it; a tombstone (no vector) keeps the status it had."""
    return vector is not None or (record.deleted and record.vector_status == "ready")
