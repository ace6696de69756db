"""`SqliteStorage`: the memory storage Protocol (store/protocol.py) over one apsw connection.

The SQL itself is in the modules beside this one: records and history (sqlite/records.py), the keyword
index (sqlite/keyword.py), the vec0 tables (sqlite/vec.py), transactions and meta (sqlite/meta.py); what
both backends say alike (the people and workspace-file tables, most record reads, every row as stored) is
in store/shared/statements.py, run by the base class store/shared/storage.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store import vector_codec as codec
from openclaw_cli.memory.store.protocol import (
    RecordMatch,
    StoredRows,
    VectorFilter,
    VectorSource,
)
from openclaw_cli.memory.store.records import MemoryRecord, iso
from openclaw_cli.memory.store.shared.statements import SQLITE
from openclaw_cli.memory.store.shared.storage import SharedStorage
from openclaw_cli.memory.store.sqlite import keyword, meta, records, vec, vec_chunks
from openclaw_cli.memory.store.sqlite.keyword_memory import KeywordCache
from openclaw_cli.memory.store.sqlite.keyword_state import index_state
from openclaw_cli.memory.store.sqlite.store_rows import SqliteStoreRows
from openclaw_cli.memory.store.vector_codec import VectorFormat

if TYPE_CHECKING:
    import apsw
    import numpy as np

    from openclaw_cli.memory.store.embedder import EmbedderIdentity
    from openclaw_cli.memory.store.protocol import MemoryStorage

ANY_USER = ""  # the people table's user for memories without one


BULK_CACHE_KIB = 64 * 1024  # the page cache of a bulk load (pages are allocated as they are read)


class SqliteStorage(SharedStorage, SqliteStoreRows):
    """One SQLite memory database file (see store/protocol.py for what each method promises); what both
    backends run alike is in SharedStorage (store/shared/storage.py)."""

    dialect = SQLITE

    def __init__(self, conn: apsw.Connection, reader: Callable[[], apsw.Connection] | None = None) -> None:
        """`reader` opens another, read-only connection to the same file (for keep_keywords_in_memory)."""
        self.conn = conn
        self._open_reader = reader
        self._terms = keyword.TermCounts()
        self._batch: _Batch | None = None  # inside vector_batch
        self._in_memory: KeywordCache | None = None  # keep_keywords_in_memory

    # ------------------------------------------------------------ transactions
    def transaction(self) -> AbstractContextManager[None]:
        return self._transaction()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with meta.write_txn(self.conn):
            yield

    def bulk_load(self) -> AbstractContextManager[None]:
        return self._bulk_load()

    @contextmanager
    def _bulk_load(self) -> Iterator[None]:
        """A page cache of BULK_CACHE_KIB while a bulk load writes, the connection's own afterwards.

        Each vector written opens its chunk's blob (~0.9 MB of int8 vectors, a chain of ~220 overflow
        pages that SQLite walks to reach the vector's slot), beside the records', keyword and history
        pages. In a 100k store, that working set does not fit the default 2 MB cache: measured, a vec0
        insert then took 67 us instead of 19, and a record's writes 0.52 ms of CPU instead of 0.45."""
        (previous,) = self.conn.execute("PRAGMA cache_size").fetchone()
        self.conn.execute(f"PRAGMA cache_size = {-BULK_CACHE_KIB}")
        try:
            yield
        finally:
            self.conn.execute(f"PRAGMA cache_size = {int(previous)}")

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    def snapshot(self) -> AbstractContextManager[None]:
        return self._snapshot()

    def close(self) -> None:
        if self._in_memory is not None:
            self._in_memory.close()
        self.conn.close()

    # ------------------------------------------------------------ records
    def user_records(self, user_id: str, matches: Sequence[RecordMatch]) -> list[MemoryRecord]:
        return records.user_records(self.conn, user_id, matches)

    def reassign(
        self, rowid: int, record_id: str, user_id: str, at: datetime, *, scope: str | None = None
    ) -> None:
        self.conn.execute(
            "UPDATE records SET user_id = ?, scope = coalesce(?, scope), updated_at = ? WHERE rowid = ?",
            (user_id, scope, iso(at), rowid),
        )
        for table in vec.all_tables(self.conn):
            self.conn.execute(
                f"UPDATE {table} SET user_id = ?, scope = coalesce(?, scope) WHERE rowid = ?",
                (user_id, scope, rowid),
            )
        self.conn.execute("UPDATE history SET user_id = ? WHERE record_id = ?", (user_id, record_id))

    def session_places(self, session: str, where: VectorFilter) -> list[tuple[int, str]]:
        return records.session_places(self.conn, session, where)

    def conversation_sessions(self, user_id: str, kinds: Sequence[str]) -> list[str | None]:
        rows = self.conn.execute(
            "SELECT json_extract(source, '$.sessionId') FROM records WHERE deleted = 0 AND user_id = ? "
            "AND (json_valid(source) AND (json_extract(source, '$.sessionId') IS NOT NULL "
            f"OR json_extract(source, '$.kind') IN ({records.marks(kinds)})))",
            (user_id, *kinds),
        )
        return [None if session is None else str(session) for (session,) in rows]

    def insert(self, record: MemoryRecord, *, vector_ready: bool) -> int:
        rowid = records.insert(self.conn, record, vector_ready)
        keyword.write_row(self.conn, rowid, record.l0, record.l1)
        return rowid

    def replace_row(self, rowid: int, record: MemoryRecord, *, vector_ready: bool) -> None:
        records.rewrite(self.conn, rowid, record, vector_ready)
        keyword.delete_row(self.conn, rowid)
        keyword.write_row(self.conn, rowid, record.l0, record.l1)

    def delete_row(self, rowid: int) -> None:
        """Remove one row with its keyword row and current vector (a replace re-inserts it)."""
        keyword.delete_row(self.conn, rowid)
        vec.delete(self.conn, vec.current_table(self.conn), [rowid])
        self.conn.execute("DELETE FROM records WHERE rowid = ?", (rowid,))

    def mark_deleted(self, rowid: int, at: datetime) -> None:
        keyword.delete_row(self.conn, rowid)
        vec.delete(self.conn, vec.current_table(self.conn), [rowid])
        self.conn.execute("UPDATE records SET deleted = 1, updated_at = ? WHERE rowid = ?", (iso(at), rowid))

    def remove(self, rowids: Sequence[int]) -> None:
        if not rowids:
            return
        for table in vec.all_tables(self.conn):
            vec.delete(self.conn, table, rowids)
        for chunk in records.chunks(rowids):
            self.conn.executemany("DELETE FROM records_fts WHERE rowid = ?", [(r,) for r in chunk])
            self.conn.executemany("DELETE FROM records WHERE rowid = ?", [(r,) for r in chunk])
        vec.bump_generation(self.conn)

    def row_with_text(self, digest: str) -> int | None:
        """A live, vector-ready record whose L0 has this SHA-256 (hex): looked up by its 64-bit prefix,
        the indexed `text_hash`, then checked in full (the prefix may collide)."""
        import hashlib

        rows = self.conn.execute(
            "SELECT rowid, l0 FROM records WHERE text_hash = ? AND deleted = 0 AND vector_status = 'ready'",
            (int.from_bytes(bytes.fromhex(digest[:16]), "big", signed=True),),
        )
        return next(
            (int(r) for r, l0 in rows if hashlib.sha256(str(l0).encode("utf-8")).hexdigest() == digest), None
        )

    def compact(self) -> None:
        """Rewrite the file so removed text lingers in no free page, FTS segment or WAL frame."""
        self.conn.execute("INSERT INTO records_fts(records_fts) VALUES ('optimize')")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.conn.execute("VACUUM")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # ------------------------------------------------------------ history
    def forget_history(self, *, user_ids: Sequence[str] = (), record_ids: Sequence[str] = ()) -> int:
        return records.forget_history(self.conn, user_ids, record_ids)

    # ------------------------------------------------------------ keyword index
    def keyword_candidates(
        self, terms: Sequence[str], where: VectorFilter, pool: int
    ) -> list[tuple[int, float]]:
        cache = self._in_memory
        if cache is None:
            return keyword.bm25_candidates(self.conn, terms, where, pool)
        key = index_state(self.conn)
        return keyword.bm25_candidates(
            self.conn, terms, where, pool, lambda wanted, fetch: cache.ranked(self.conn, key, wanted, fetch)
        )

    def keep_keywords_in_memory(self, *, wait: bool = False) -> None:
        if self._in_memory is None and self._open_reader is not None:
            self._in_memory = KeywordCache(self._open_reader)
        if wait and self._in_memory is not None:
            self._in_memory.wait()

    def document_counts(self, terms: Sequence[str]) -> dict[str, int]:
        cache = self._in_memory
        found = None if cache is None else cache.document_counts(self.conn, index_state(self.conn), terms)
        return found if found is not None else self._terms.counts(self.conn, terms)

    def store_size(self) -> int:
        return self._terms.max_rowid(self.conn)

    def indexed_terms(self, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
        return keyword.indexed_terms(self.conn, rowids)

    # ------------------------------------------------------------ vectors
    def vector_identity(self) -> dict[str, Any] | None:
        return vec.stored_identity(self.conn)

    def has_vectors(self) -> bool:
        return vec.current_table(self.conn) is not None

    def ensure_vectors(self, identity: EmbedderIdentity) -> None:
        if self._batch is None or self._batch.target is None:
            vec.ensure_table(self.conn, identity)

    def put_vector(self, rowid: int, vector: np.ndarray, meta: tuple[str, str, str]) -> None:
        target = self._batch.target if self._batch is not None else None
        if target is None:
            table = vec.current_table(self.conn)
            assert table is not None, "ensure_vectors first"
            target = (table, vec.table_format(self.conn, table))
            if self._batch is not None:
                self._batch.target = target
        vec.upsert(self.conn, target[0], rowid, vector, meta, target[1])

    def delete_vector(self, rowid: int) -> None:
        vec.delete(self.conn, vec.current_table(self.conn), [rowid])

    def read_vectors(self, rowids: Sequence[int]) -> dict[int, np.ndarray]:
        table = vec.current_table(self.conn)
        return {} if table is None else vec.stored_rows(self.conn, table, rowids)

    def knn(self, query: np.ndarray, k: int, where: VectorFilter) -> list[tuple[int, float]]:
        table = vec.current_table(self.conn)
        return [] if table is None else vec.knn(self.conn, table, query, k, where)

    def vector_source(self) -> VectorSource:
        table = vec.current_table(self.conn)
        assert table is not None, "no vector index"
        return vec.TableSource(self.conn, table)

    def vector_table(self) -> str | None:
        return vec.current_table(self.conn)

    def stored_vectors(self) -> StoredRows:
        with self.conn:  # one read transaction: no writer slips in between the generation and the rows
            stored = self._stored_vectors()
        return stored

    def _stored_vectors(self) -> StoredRows:
        table = vec.current_table(self.conn)
        if table is None:
            return StoredRows(None, vec.generation(self.conn), codec.FLOAT32, [])
        fmt = vec.table_format(self.conn, table)
        chunks = vec_chunks.read_chunks(self.conn, table, vec.row_bytes(self.conn, fmt))
        if chunks is None:
            return StoredRows(table, vec.generation(self.conn), fmt, vec.all_rows(self.conn, table))
        return StoredRows(table, vec.generation(self.conn), fmt, [], chunks)

    def vector_filter_columns(self) -> list[tuple[int, str, str, str]]:
        return vec.filter_columns(self.conn)

    def vector_blobs(self) -> tuple[VectorFormat, Iterator[bytes]]:
        """Read by vec0's chunks when they can be trusted (vec_chunks.py), in the order and with the bytes
        vec0's own scan gives: the centroid re-reads every vector at each refresh, and vec0 reads them a
        row at a time (~4.6 of a bulk load's ~9 ms per 10 records written from empty)."""
        table = vec.current_table(self.conn)
        assert table is not None, "no vector index"
        fmt = vec.table_format(self.conn, table)
        chunks = vec_chunks.read_chunks(self.conn, table, vec.row_bytes(self.conn, fmt))
        if chunks is None:
            return fmt, vec.embeddings(self.conn, table)
        return fmt, vec_chunks.valid_vectors(chunks)

    def vectors_changed(self) -> None:
        if self._batch is not None:
            self._batch.changed = True
        else:
            vec.bump_generation(self.conn)

    def vector_batch(self) -> AbstractContextManager[None]:
        return self._vector_batch()

    @contextmanager
    def _vector_batch(self) -> Iterator[None]:
        """The current table and its format are read at the first vector put (3 meta reads per record
        otherwise) and the generation moves once at the end (an upsert per record otherwise)."""
        self._batch = _Batch()
        try:
            yield
            changed = self._batch.changed
        finally:
            self._batch = None
        if changed:
            vec.bump_generation(self.conn)

    def vector_generation(self) -> int:
        return vec.generation(self.conn)

    # ------------------------------------------------------------ meta
    def get_meta(self, key: str) -> str | None:
        return meta.get_meta(self.conn, key)

    def set_meta(self, key: str, value: Any) -> None:
        meta.set_meta(self.conn, key, value)

    def delete_meta(self, key: str) -> None:
        meta.delete_meta(self.conn, key)


@dataclass
class _Batch:
    target: tuple[str, VectorFormat] | None = None  # the current vector table and its format
    changed: bool = False


if TYPE_CHECKING:
    # mypy checks that the class implements the whole storage Protocol.
    _CONFORMS: type[MemoryStorage] = SqliteStorage
