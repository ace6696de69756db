"""`PostgresStorage`: the memory storage Protocol (store/protocol.py) over one psycopg connection.

The SQL is in the modules beside this one: records and history (postgres/records.py), the keyword index
(postgres/keyword.py), the vector tables (postgres/vectors.py); what both backends say alike (the people
and workspace-file tables, most record reads, every row as stored) is in store/shared/statements.py, run by the
base class store/shared/storage.py.

Writers of one store take turns: the outermost `transaction()` takes the store's advisory lock first, so
dedup's read-then-write (is this text already stored?) and an FSRS review's read-modify-write see every
earlier writer's commit, on any machine. Readers never wait for it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store.postgres import keyword, records, vectors
from openclaw_cli.memory.store.postgres.schema import lock_key
from openclaw_cli.memory.store.postgres.store_rows import PostgresStoreRows
from openclaw_cli.memory.store.protocol import (
    RecordMatch,
    StoredRows,
    VectorFilter,
    VectorSource,
)
from openclaw_cli.memory.store.records import MemoryRecord, iso
from openclaw_cli.memory.store.shared.statements import POSTGRES
from openclaw_cli.memory.store.shared.storage import SharedStorage
from openclaw_cli.memory.store.vector_codec import FLOAT16_BE, VectorFormat

if TYPE_CHECKING:
    import numpy as np
    import psycopg

    from openclaw_cli.memory.store.embedder import EmbedderIdentity
    from openclaw_cli.memory.store.protocol import MemoryStorage


class PostgresStorage(SharedStorage, PostgresStoreRows):
    """One memory database in its own Postgres schema (see store/protocol.py for what each method promises);
    what both backends run alike is in SharedStorage (store/shared/storage.py)."""

    dialect = POSTGRES

    def __init__(self, conn: psycopg.Connection, schema: str, dsn: str) -> None:
        self.conn = conn
        self.schema = schema
        self.dsn = dsn  # for a second connection (a reader thread); never printed (connection.mask_dsn)
        self._lock = lock_key(schema)

    # ------------------------------------------------------------ transactions
    def transaction(self) -> AbstractContextManager[None]:
        return self._transaction()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        outermost = not self._in_transaction()
        with self.conn.transaction():  # nested: a savepoint
            if outermost:
                self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock,))
            yield

    def snapshot(self) -> AbstractContextManager[None]:
        return self._snapshot()

    def bulk_load(self) -> AbstractContextManager[None]:
        return nullcontext()  # the server sizes its own buffers

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        from psycopg import IsolationLevel

        if self._in_transaction():
            yield
            return
        self.conn.isolation_level, self.conn.read_only = IsolationLevel.REPEATABLE_READ, True
        try:
            with self.conn.transaction():
                yield
        finally:
            self.conn.isolation_level, self.conn.read_only = None, None

    def _in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.conn.info.transaction_status != TransactionStatus.IDLE

    def close(self) -> None:
        self.conn.close()

    # ------------------------------------------------------------ records
    def user_records(self, user_id: str, matches: Sequence[RecordMatch]) -> list[MemoryRecord]:
        return records.user_records(self.conn, user_id, matches)

    def session_places(self, session: str, where: VectorFilter) -> list[tuple[int, str]]:
        return records.session_places(self.conn, session, where)

    def conversation_sessions(self, user_id: str, kinds: Sequence[str]) -> list[str | None]:
        rows = self.conn.execute(
            f"SELECT {records.SESSION} FROM records WHERE deleted = 0 AND user_id = %s AND source IS NOT NULL "
            f"AND ({records.SESSION} IS NOT NULL OR (source::jsonb ->> 'kind') = ANY(%s))",
            (user_id, list(kinds)),
        )
        return [None if session is None else str(session) for (session,) in rows]

    def row_with_text(self, digest: str) -> int | None:
        """A live, vector-ready record whose L0 has this SHA-256 (hex), found by its 64-bit prefix (the
        indexed text_hash) and checked in full in SQL (the prefix may collide)."""
        row = self.conn.execute(
            "SELECT rowid FROM records WHERE text_hash = %s AND deleted = 0 AND vector_status = 'ready' "
            "AND encode(sha256(convert_to(l0, 'UTF8')), 'hex') = %s ORDER BY rowid LIMIT 1",
            (int.from_bytes(bytes.fromhex(digest[:16]), "big", signed=True), digest),
        ).fetchone()
        return None if row is None else int(row[0])

    # ------------------------------------------------------------ record writes
    def insert(self, record: MemoryRecord, *, vector_ready: bool) -> int:
        rowid = records.insert(self.conn, record, vector_ready)
        keyword.write_row(self.conn, rowid, record.l0, record.l1)
        return rowid

    def replace_row(self, rowid: int, record: MemoryRecord, *, vector_ready: bool) -> None:
        records.rewrite(self.conn, rowid, record, vector_ready)
        keyword.delete_rows(self.conn, [rowid])
        keyword.write_row(self.conn, rowid, record.l0, record.l1)

    def delete_row(self, rowid: int) -> None:
        """The record row goes; its keyword row and vectors go with it (ON DELETE CASCADE)."""
        self.conn.execute("DELETE FROM records WHERE rowid = %s", (rowid,))

    def mark_deleted(self, rowid: int, at: datetime) -> None:
        keyword.delete_rows(self.conn, [rowid])
        self.delete_vector(rowid)
        self.conn.execute(
            "UPDATE records SET deleted = 1, updated_at = %s WHERE rowid = %s", (iso(at), rowid)
        )

    def remove(self, rowids: Sequence[int]) -> None:
        if not rowids:
            return
        self.conn.execute("DELETE FROM records WHERE rowid = ANY(%s)", (list(rowids),))  # cascades
        vectors.bump_generation(self.conn)

    def reassign(
        self, rowid: int, record_id: str, user_id: str, at: datetime, *, scope: str | None = None
    ) -> None:
        self.conn.execute(
            "UPDATE records SET user_id = %s, scope = coalesce(%s, scope), updated_at = %s WHERE rowid = %s",
            (user_id, scope, iso(at), rowid),
        )
        vectors.reassign(self.conn, rowid, user_id, scope)
        self.conn.execute("UPDATE history SET user_id = %s WHERE record_id = %s", (user_id, record_id))

    def compact(self) -> None:
        """VACUUM the schema's tables, so removed rows' space is marked free (their bytes remain on disk until
        it is reused: VACUUM FULL, which rewrites each table, is the operator's call, as it locks them)."""
        for (table,) in self.conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall():
            from psycopg import sql

            self.conn.execute(sql.SQL("VACUUM {}").format(sql.Identifier(self.schema, table)))

    # ------------------------------------------------------------ history
    def forget_history(self, *, user_ids: Sequence[str] = (), record_ids: Sequence[str] = ()) -> int:
        return records.forget_history(self.conn, user_ids, record_ids)

    # ------------------------------------------------------------ keyword index
    def keyword_candidates(
        self, terms: Sequence[str], where: VectorFilter, pool: int
    ) -> list[tuple[int, float]]:
        return keyword.bm25_candidates(self.conn, terms, where, pool)

    def keep_keywords_in_memory(self, *, wait: bool = False) -> None:
        """The server ranks keyword matches itself: nothing is held in memory."""

    def document_counts(self, terms: Sequence[str]) -> dict[str, int]:
        return keyword.document_counts(self.conn, terms)

    def indexed_terms(self, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
        return keyword.indexed_terms(self.conn, rowids)

    # ------------------------------------------------------------ vectors
    def vector_identity(self) -> dict[str, Any] | None:
        return vectors.stored_identity(self.conn)

    def has_vectors(self) -> bool:
        return self.vector_table() is not None

    def vector_table(self) -> str | None:
        return vectors.current_table(self.conn)

    def ensure_vectors(self, identity: EmbedderIdentity) -> None:
        vectors.ensure_table(self.conn, identity)

    def put_vector(self, rowid: int, vector: np.ndarray, meta: tuple[str, str, str]) -> None:
        table = self.vector_table()
        assert table is not None, "ensure_vectors first"
        vectors.upsert(self.conn, table, rowid, vector, meta)

    def delete_vector(self, rowid: int) -> None:
        table = self.vector_table()
        if table is not None:
            vectors.delete(self.conn, [table], [rowid])

    def read_vectors(self, rowids: Sequence[int]) -> dict[int, np.ndarray]:
        table = self.vector_table()
        return {} if table is None else vectors.read(self.conn, table, rowids)

    def knn(self, query: np.ndarray, k: int, where: VectorFilter) -> list[tuple[int, float]]:
        table = self.vector_table()
        return [] if table is None else vectors.knn(self.conn, table, query, k, where)

    def vector_source(self) -> VectorSource:
        table = self.vector_table()
        assert table is not None, "no vector index"
        return vectors.TableSource(self.conn, table)

    def stored_vectors(self) -> StoredRows:
        with self.snapshot():
            return vectors.stored_rows(self.conn, self.vector_table(), self.vector_generation())

    def vector_filter_columns(self) -> list[tuple[int, str, str, str]]:
        # stored_vectors brings the columns with every row here; this is only the Protocol's fallback.
        return [
            (rowid, scope, user, category) for rowid, _, scope, user, category in self.stored_vectors().rows
        ]

    def vector_blobs(self) -> tuple[VectorFormat, Iterator[bytes]]:
        table = self.vector_table()
        assert table is not None, "no vector index"
        return FLOAT16_BE, vectors.embeddings(self.conn, table)

    def vectors_changed(self) -> None:
        vectors.bump_generation(self.conn)

    def vector_batch(self) -> AbstractContextManager[None]:
        return nullcontext()  # a round trip per record either way: nothing to keep

    def vector_generation(self) -> int:
        return vectors.generation(self.conn)

    # ------------------------------------------------------------ meta
    def get_meta(self, key: str) -> str | None:
        return vectors.get_meta(self.conn, key)

    def set_meta(self, key: str, value: Any) -> None:
        vectors.set_meta(self.conn, key, value)

    def delete_meta(self, key: str) -> None:
        self.conn.execute("DELETE FROM meta WHERE key = %s", (key,))


if TYPE_CHECKING:
    # mypy checks that the class implements the whole storage Protocol.
    _CONFORMS: type[MemoryStorage] = PostgresStorage
