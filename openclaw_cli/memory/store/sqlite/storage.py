"""`SqliteStorage`: the memory storage Protocol (store/protocol.py) over one apsw connection.

The SQL itself is in the modules beside this one: records and history (sqlite/records.py), the keyword
index (sqlite/keyword.py), the vec0 tables (sqlite/vec.py), transactions and meta (sqlite/meta.py); the
people and workspace-file tables are small enough to be read and written here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store import vector_codec as codec
from openclaw_cli.memory.store.protocol import (
    HistoryRow,
    RecordMatch,
    StoredRows,
    VectorFilter,
    VectorSource,
    WorkspaceFile,
)
from openclaw_cli.memory.store.records import FsrsState, MemoryRecord, iso
from openclaw_cli.memory.store.sqlite import keyword, meta, records, vec, vec_chunks
from openclaw_cli.memory.store.sqlite.store_rows import SqliteStoreRows
from openclaw_cli.memory.store.vector_codec import VectorFormat

if TYPE_CHECKING:
    import apsw
    import numpy as np

    from openclaw_cli.memory.store.embedder import EmbedderIdentity
    from openclaw_cli.memory.store.protocol import MemoryStorage
    from openclaw_cli.memory.store.record_rows import RankingFacts

ANY_USER = ""  # the people table's user for memories without one


class SqliteStorage(SqliteStoreRows):
    """One SQLite memory database file (see store/protocol.py for what each method promises)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self._terms = keyword.TermCounts()

    # ------------------------------------------------------------ transactions
    def transaction(self) -> AbstractContextManager[None]:
        return self._transaction()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with meta.write_txn(self.conn):
            yield

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
        self.conn.close()

    # ------------------------------------------------------------ records
    def get(self, record_id: str, *, include_deleted: bool = False) -> MemoryRecord | None:
        return records.get(self.conn, record_id, include_deleted)

    def rowid(self, record_id: str) -> int | None:
        return records.rowid(self.conn, record_id)

    def by_rowids(self, rowids: Iterable[int]) -> dict[int, MemoryRecord]:
        return records.by_rowids(self.conn, rowids)

    def ranking_facts(self, rowids: Iterable[int]) -> dict[int, RankingFacts]:
        return records.ranking_facts(self.conn, rowids)

    def list_records(
        self,
        *,
        user_id: str | None = None,
        scope: str | None = None,
        category: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[MemoryRecord]:
        filters = {"user_id": user_id, "scope": scope, "category": category}
        return records.list_live(self.conn, filters, limit, offset)

    def live_after(
        self, after: int, limit: int, *, scope: str | None = None, user_id: str | None = None
    ) -> list[tuple[int, MemoryRecord]]:
        return records.live_after(self.conn, after, limit, scope, user_id)

    def count_live(self, *, scope: str | None = None, user_id: str | None = None) -> int:
        return records.count_live(self.conn, scope, user_id)

    def has_user(self, user_id: str, *, scope: str | None = None) -> bool:
        scoped = "" if scope is None else " AND scope = ?"
        params = (user_id,) if scope is None else (user_id, scope)
        sql = f"SELECT 1 FROM records WHERE user_id = ?{scoped} AND deleted = 0 LIMIT 1"
        return self.conn.execute(sql, params).fetchone() is not None

    def user_records(self, user_id: str, matches: Sequence[RecordMatch]) -> list[MemoryRecord]:
        return records.user_records(self.conn, user_id, matches)

    def reassign(self, rowid: int, record_id: str, user_id: str, at: datetime) -> None:
        self.conn.execute(
            "UPDATE records SET user_id = ?, updated_at = ? WHERE rowid = ?", (user_id, iso(at), rowid)
        )
        for table in vec.all_tables(self.conn):
            self.conn.execute(f"UPDATE {table} SET user_id = ? WHERE rowid = ?", (user_id, rowid))
        self.conn.execute("UPDATE history SET user_id = ? WHERE record_id = ?", (user_id, record_id))

    def same_text(self, record: MemoryRecord) -> MemoryRecord | None:
        return records.newest_live(
            self.conn,
            # The unary + keeps the planner on the hash index: with no statistics it chose the by-user
            # index and scanned a third of the store for each record (29 s of a 10k import).
            "l0_hash = ? AND +scope = ? AND +user_id IS ? AND +id != ?",
            (record.l0_hash, record.scope, record.user_id, record.id),
        )

    def same_attribute(self, record: MemoryRecord) -> MemoryRecord | None:
        return records.newest_live(
            self.conn,
            "user_id IS ? AND category = ? AND attribute = ? AND scope = ? AND id != ?",
            (record.user_id, record.category, record.attribute, record.scope, record.id),
        )

    def unreflected(self, categories: Sequence[str]) -> list[MemoryRecord]:
        return records.unreflected(self.conn, categories)

    def unreflected_summary(self, categories: Sequence[str]) -> tuple[int, str | None]:
        return records.unreflected_summary(self.conn, categories)

    def session_places(self, session: str, where: VectorFilter) -> list[tuple[int, str]]:
        return records.session_places(self.conn, session, where)

    def ready_rows(self, user_id: str | None, scope: str, category: str) -> list[tuple[int, str]]:
        rows = self.conn.execute(
            "SELECT rowid, language FROM records WHERE user_id IS ? AND scope = ? AND category = ? "
            "AND deleted = 0 AND vector_status = 'ready'",
            (user_id, scope, category),
        )
        return [(int(r), str(language)) for r, language in rows]

    def user_counts(self) -> list[tuple[str, int]]:
        rows = self.conn.execute(
            "SELECT user_id, count(*) FROM records WHERE deleted = 0 AND scope = 'user' AND user_id IS NOT NULL "
            "GROUP BY user_id ORDER BY user_id"
        )
        return [(str(user), int(count)) for user, count in rows]

    def conversation_sessions(self, user_id: str, kinds: Sequence[str]) -> list[str | None]:
        rows = self.conn.execute(
            "SELECT json_extract(source, '$.sessionId') FROM records WHERE deleted = 0 AND user_id = ? "
            "AND (json_valid(source) AND (json_extract(source, '$.sessionId') IS NOT NULL "
            f"OR json_extract(source, '$.kind') IN ({records.marks(kinds)})))",
            (user_id, *kinds),
        )
        return [None if session is None else str(session) for (session,) in rows]

    def pending_vectors(self) -> int:
        rows = self.conn.execute(
            "SELECT count(*) FROM records WHERE deleted = 0 AND vector_status = 'pending'"
        )
        return int(next(iter(rows))[0])

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

    def set_fsrs(self, record_id: str, state: FsrsState, reflected_at: datetime | None = None) -> None:
        records.set_fsrs(self.conn, record_id, state, reflected_at)

    def sourced_rows(self) -> Iterator[tuple[int, str, str | None, str, str]]:
        """(rowid, id, user id, L0, source JSON) of every record with a source, live or not."""
        for rowid, record_id, owner, l0, source in self.conn.execute(
            "SELECT rowid, id, user_id, l0, source FROM records WHERE source IS NOT NULL"
        ):
            yield int(rowid), str(record_id), owner, str(l0), str(source)

    def rows_of_users(self, user_ids: Sequence[str]) -> list[tuple[int, str]]:
        """(rowid, id) of every record, live or not, of these users."""
        sql = f"SELECT rowid, id FROM records WHERE user_id IN ({records.marks(user_ids)})"
        return [(int(r), str(i)) for r, i in self.conn.execute(sql, tuple(user_ids))]

    def texts_of_users(self, user_ids: Sequence[str]) -> list[tuple[str, str | None]]:
        sql = f"SELECT l0, l1 FROM records WHERE user_id IN ({records.marks(user_ids)})"
        return [
            (str(l0), None if l1 is None else str(l1)) for l0, l1 in self.conn.execute(sql, tuple(user_ids))
        ]

    def user_ids(self) -> list[str]:
        sql = "SELECT DISTINCT user_id FROM records WHERE user_id IS NOT NULL ORDER BY user_id"
        return [str(user) for (user,) in self.conn.execute(sql)]

    def compact(self) -> None:
        """Rewrite the file so removed text lingers in no free page, FTS segment or WAL frame."""
        self.conn.execute("INSERT INTO records_fts(records_fts) VALUES ('optimize')")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.conn.execute("VACUUM")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # ------------------------------------------------------------ history
    def log_change(
        self, record_id: str, user_id: str | None, action: str, old: Any, new: Any, reason: str | None
    ) -> None:
        records.log_change(self.conn, record_id, user_id, action, old, new, reason)

    def history_rows(self, record_id: str) -> list[HistoryRow]:
        return records.history_rows(self.conn, record_id)

    def forget_history(self, *, user_ids: Sequence[str] = (), record_ids: Sequence[str] = ()) -> int:
        return records.forget_history(self.conn, user_ids, record_ids)

    # ------------------------------------------------------------ keyword index
    def keyword_candidates(
        self, terms: Sequence[str], where: VectorFilter, pool: int
    ) -> list[tuple[int, float]]:
        return keyword.bm25_candidates(self.conn, terms, where, pool)

    def document_counts(self, terms: Sequence[str]) -> dict[str, int]:
        return self._terms.counts(self.conn, terms)

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
        vec.ensure_table(self.conn, identity)

    def put_vector(self, rowid: int, vector: np.ndarray, meta: tuple[str, str, str]) -> None:
        table = vec.current_table(self.conn)
        assert table is not None, "ensure_vectors first"
        vec.upsert(self.conn, table, rowid, vector, meta)

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
        table = vec.current_table(self.conn)
        assert table is not None, "no vector index"
        return vec.table_format(self.conn, table), vec.embeddings(self.conn, table)

    def vectors_changed(self) -> None:
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

    # ------------------------------------------------------------ people
    def count_person(self, user_id: str, kind: str, name: str) -> None:
        self.conn.execute(
            "INSERT INTO people(user_id, kind, name) VALUES (?, ?, ?) "
            "ON CONFLICT DO UPDATE SET mentions = mentions + 1",
            (user_id, kind, name),
        )

    def drop_person(self, user_id: str, kind: str | None = None, name: str | None = None) -> None:
        if kind is None or name is None:
            self.conn.execute("DELETE FROM people WHERE user_id = ?", (user_id,))
        else:
            self.conn.execute(
                "DELETE FROM people WHERE user_id = ? AND kind = ? AND name = ?", (user_id, kind, name)
            )

    def drop_people(self) -> None:
        """Empty the people table (before it is counted again from every memory)."""
        self.conn.execute("DELETE FROM people")

    def person_names(self, user_id: str | None, kind: str) -> list[tuple[str, int]]:
        if user_id is None:
            rows = self.conn.execute(
                "SELECT name, sum(mentions) FROM people WHERE kind = ? GROUP BY name", (kind,)
            )
        else:
            rows = self.conn.execute(
                "SELECT name, mentions FROM people WHERE user_id = ? AND kind = ?", (user_id, kind)
            )
        return [(str(name), int(mentions)) for name, mentions in rows]

    def people_count(self) -> int:
        return int(next(iter(self.conn.execute("SELECT count(*) FROM people")))[0])

    def live_text_mentions(self, user_id: str | None, name: str) -> bool:
        still = self.conn.execute(
            "SELECT 1 FROM records WHERE user_id IS ? AND deleted = 0 AND instr(l0, ?) > 0 LIMIT 1",
            (user_id, name),
        ).fetchone()
        return still is not None

    def live_texts(self, user_ids: Sequence[str] | None = None) -> Iterator[tuple[str | None, str]]:
        if user_ids is None:
            rows = list(self.conn.execute("SELECT user_id, l0 FROM records WHERE deleted = 0"))
        else:
            sql = f"SELECT user_id, l0 FROM records WHERE deleted = 0 AND user_id IN ({records.marks(user_ids)})"
            rows = list(self.conn.execute(sql, tuple(user_ids)))
        for user_id, l0 in rows:
            yield user_id, str(l0)

    # ------------------------------------------------------------ workspace files
    def workspace_files(self) -> dict[str, WorkspaceFile]:
        rows = self.conn.execute(
            "SELECT path, file_hash, size, mtime_ns, chunks, problem FROM workspace_files"
        )
        return {
            str(p): WorkspaceFile(str(p), str(h), int(s), int(m), int(c), pr) for p, h, s, m, c, pr in rows
        }

    def put_workspace_file(self, file: WorkspaceFile, *, keep_chunks: bool = False) -> None:
        count = "chunks" if keep_chunks else "excluded.chunks"
        self.conn.execute(
            "INSERT INTO workspace_files(path, file_hash, size, mtime_ns, chunks, problem) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(path) DO UPDATE SET file_hash = excluded.file_hash, size = excluded.size, "
            f"mtime_ns = excluded.mtime_ns, chunks = {count}, problem = excluded.problem",
            (file.path, file.file_hash, file.size, file.mtime_ns, file.chunks, file.problem),
        )

    def drop_workspace_file(self, path: str) -> None:
        self.conn.execute("DELETE FROM workspace_files WHERE path = ?", (path,))

    def note_rows(self, path: str) -> list[int]:
        rows = self.conn.execute(
            "SELECT rowid FROM records WHERE json_extract(source, '$.path') = ? AND category = 'note' "
            "AND deleted = 0",
            (path,),
        )
        return [int(r[0]) for r in rows]


if TYPE_CHECKING:
    # mypy checks that the class implements the whole storage Protocol.
    _CONFORMS: type[MemoryStorage] = SqliteStorage
