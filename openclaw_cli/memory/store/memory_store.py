"""One memory database: records, their derived keyword and vector rows, and the history of every change.

Records are written in one transaction together with their keyword row and (when the embedder is available
and matches the one the database was built with) their vector; otherwise the vector is marked pending and
`memory index` fills it later. Nothing is lost when the embedder fails.

`MemoryStore` is what the use cases hold: it embeds new records, keeps the vectors' mean (store/vectors/centroid.py)
and the warm vector matrix current, and reads and writes through `storage` (the Protocol of
store/protocol.py: the SQLite file, or a schema on PostgreSQL). `conn` is the SQLite file itself, for
upkeep/'s file-level care; on postgres it says that such care is the server's.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import Conflict, InvalidInput, NotFound, StoreError
from openclaw_cli.core.thread_imports import settle_numpy
from openclaw_cli.memory.store import people
from openclaw_cli.memory.store.bulk.load import CHUNK, BulkWriter, WriteReport
from openclaw_cli.memory.store.history import VALUE_IN_RECORDS
from openclaw_cli.memory.store.protocol_types import LiveFilter
from openclaw_cli.memory.store.records import FsrsState, MemoryRecord, utc_now
from openclaw_cli.memory.store.sqlite.connection import open_db
from openclaw_cli.memory.store.sqlite.storage import SqliteStorage
from openclaw_cli.memory.store.vectors import centroid
from openclaw_cli.memory.store.vectors.cache import cached_vectors, embed_cached
from openclaw_cli.memory.store.vectors.matrix import VectorMatrix, read_rows

if TYPE_CHECKING:
    import apsw
    import numpy as np

    from openclaw_cli.memory.store.embedder import Embedder
    from openclaw_cli.memory.store.protocol import MemoryStorage
    from openclaw_cli.memory.store.record_rows import RankingFacts

EmbedderFactory = Callable[[], "Embedder"]
StorageOpener = Callable[[], "MemoryStorage"]

Progress = Callable[[int], None]


class MemoryStore:
    """A memory database. Open with `MemoryStore.open(path, embedder_factory)` (a SQLite file) or
    memory/backends.open_store (the configured backend)."""

    def __init__(
        self,
        storage: MemoryStorage,
        path: Path,
        embedder_factory: EmbedderFactory | None,
        *,
        reader: StorageOpener,
        conn: apsw.Connection | None = None,
    ) -> None:
        self._conn = conn  # the SQLite file itself, for upkeep/ (backup, integrity, index repair)
        self.storage = storage  # the use cases see the Protocol only
        self.path = path  # the SQLite file, or where it would be (names the store in messages)
        self._open_reader = reader  # a second connection, for reading the vectors on a thread
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        self.centroids = centroid.Keeper(storage)
        self.matrix: VectorMatrix | None = None
        self._matrix_loader: threading.Thread | None = None
        self._matrix_ahead: VectorMatrix | None = None  # built by load_vectors_ahead's thread
        self.dedup_index: Any = None  # dedup.NeighbourIndex, made by the first write that dedups

    @classmethod
    def open(
        cls, path: Path, embedder_factory: EmbedderFactory | None = None, *, create: bool = True
    ) -> MemoryStore:
        conn = open_db(path, create=create)
        read_only = functools.partial(open_db, path, create=False, readonly=True)

        def reader() -> MemoryStorage:
            return SqliteStorage(read_only())

        return cls(SqliteStorage(conn, read_only), path, embedder_factory, reader=reader, conn=conn)

    @property
    def conn(self) -> apsw.Connection:
        """The SQLite file, for upkeep/'s file-level care (backup, integrity, salvage, vacuum)."""
        if self._conn is None:
            raise StoreError(
                "this works on the SQLite memory file; memory.backend is postgres",
                hint="the server's own tools (pg_dump, amcheck, VACUUM) do this for PostgreSQL",
            )
        return self._conn

    @property
    def is_sqlite(self) -> bool:
        return self._conn is not None

    def close(self) -> None:
        self._join_matrix_loader()
        self.storage.close()

    def embedder(self) -> Embedder:
        if self._embedder_factory is None:
            raise InvalidInput("no embedder configured for this operation")
        # Kept after the first call: a batch asks once per record, and the factory's own cache lookup
        # serialises the settings each time (0.3 ms, a tenth of a record's write).
        if self._embedder is None:
            self._embedder = self._embedder_factory()
        return self._embedder

    # ------------------------------------------------------------------ reads

    def get(self, record_id: str, *, include_deleted: bool = False) -> MemoryRecord:
        record = self.storage.get(record_id, include_deleted=include_deleted)
        if record is None:
            raise NotFound(f"no memory with id {record_id!r}", hint="list ids with `openclaw memory list`")
        return record

    def exists(self, record_id: str) -> bool:
        return self.storage.rowid(record_id) is not None

    def has_user(self, user_id: str) -> bool:
        return self.storage.has_user(user_id)

    def ranking_facts(self, rowids: Iterable[int]) -> dict[int, RankingFacts]:
        """What ranking needs of each live candidate, without building whole records."""
        return self.storage.ranking_facts(rowids)

    def by_rowids(self, rowids: Iterable[int]) -> dict[int, MemoryRecord]:
        return self.storage.by_rowids(rowids)

    def list_records(
        self,
        *,
        user_id: str | None = None,
        scope: str | None = None,
        category: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[MemoryRecord]:
        where = LiveFilter(user_id=user_id, scope=scope, category=category)
        return self.storage.list_records(where, limit=limit, offset=offset)

    def has_history(self, record_id: str) -> bool:
        return bool(self.storage.history_rows(record_id))

    def history(self, record_id: str) -> list[dict[str, Any]]:
        """Every change of a record, oldest first, live or gone (tombstone cleared) alike."""
        from openclaw_cli.memory.store.history import entries

        found = entries(record_id, self.storage.history_rows(record_id), self._current_value)
        if not found and not self.exists(record_id):
            raise NotFound(f"no memory with id {record_id!r}", hint="list ids with `openclaw memory list`")
        return found

    def _current_value(self, record_id: str) -> dict[str, Any] | None:
        record = self.storage.get(record_id, include_deleted=True)
        return None if record is None else record.public_dict()

    def rowid(self, record_id: str) -> int:
        found = self.storage.rowid(record_id)
        if found is None:
            raise NotFound(f"no memory with id {record_id!r}")
        return found

    # ------------------------------------------------------------------ writes

    def set_fsrs(
        self, record_id: str, state: FsrsState, *, reason: str, reflected_at: datetime | None = None
    ) -> None:
        """Overwrite a record's FSRS state (and, when given, when it was reflected on), with a history
        row holding the old value."""
        with self.storage.transaction():
            old = self.get(record_id)
            self.storage.set_fsrs(record_id, state, reflected_at)
            self.log_change(record_id, old.user_id, "update", old.public_dict(), None, reason)

    def add(
        self, records: Sequence[MemoryRecord], *, progress: Progress | None = None, chunk: int = CHUNK
    ) -> WriteReport:
        """Store `records` in transactions of `chunk`; records whose id already exists are skipped, and
        an exact duplicate of a live memory (storage.same_text) is not stored but counts as a review
        of that memory, so rerunning an import or a batch without ids changes nothing but FSRS state.

        Embedding runs ahead in a worker thread (store/bulk/load.py), so the models compute the next chunks
        while one is checked and written.
        """
        writer = self.bulk_writer(chunk=chunk)
        for record in records:
            writer.feed(record)
        report = WriteReport()
        writer.write(report, progress)
        return report

    def bulk_writer(self, *, chunk: int = CHUNK) -> BulkWriter:
        """A pipeline that embeds records as they are fed and writes them on `write` (store/bulk/load.py)."""
        factory = self.embedder if self._embedder_factory is not None else None
        return BulkWriter(factory, self.storage, lambda: self, chunk=chunk)

    def bulk_load(self) -> AbstractContextManager[None]:
        """Around the chunks of one bulk load: the storage may keep more of the store in memory."""
        return self.storage.bulk_load()

    def write_chunk(
        self,
        records: Sequence[MemoryRecord],
        vectors: Sequence[np.ndarray | None],
        moment: datetime,
        report: WriteReport,
    ) -> None:
        """One chunk of a bulk load in one transaction: a crash after it leaves it whole and readable.
        The vectors' mean is checked after each record, as a single add does, so a bulk load stores the
        same centroid (and so the same scores) as adding the records one chunk at a time."""
        with self.storage.transaction(), self.centroids.tracking(), self.storage.vector_batch():
            for record, vector in zip(records, vectors, strict=True):
                self._add_one_of_batch(record, vector, moment, report)

    def _add_one_of_batch(
        self, record: MemoryRecord, vector: np.ndarray | None, moment: datetime, report: WriteReport
    ) -> None:
        if self.exists(record.id):
            report.skipped.append(record.id)
            return
        known = self.storage.same_text(record)
        if known is not None:
            self.review(known.id, moment)
            report.duplicates.append((record.id, known.id))
            return
        self.insert_record(record, vector)
        report.ids.append(record.id)
        report.pending_vectors += vector is None

    def add_one(self, record: MemoryRecord) -> WriteReport:
        if self.exists(record.id):
            raise Conflict(f"a memory with id {record.id!r} already exists", hint="choose another --id")
        return self.add([record])

    def usable_embedder(self) -> tuple[Embedder | None, str | None]:
        """The embedder new vectors come from, or None (and why) when vectors must stay pending."""
        from openclaw_cli.memory.store.embedder import EmbeddingUnavailable

        if self._embedder_factory is None:
            return None, None
        try:
            embedder = self.embedder()
            if not self.identity_matches(embedder):
                return (
                    None,
                    "the configured embedder differs from the index's: run `openclaw memory index --rebuild`",
                )
        except EmbeddingUnavailable as exc:
            return None, f"{exc.message}; vectors are pending, run `openclaw memory index` later"
        return embedder, None

    def identity_matches(self, embedder: Embedder) -> bool:
        """Whether `embedder` made the stored vectors (or none are stored yet)."""
        stored = self.storage.vector_identity()
        return stored is None or stored == embedder.identity.to_dict()

    def cached_vectors(self, key: str, hashes: Iterable[str]) -> dict[str, Any]:
        """Vectors already stored for texts with these `passage_hash`es, made by the embedder `key`
        (store/vectors/cache.py)."""
        return cached_vectors(self.storage, key, hashes)

    def embed_cached(self, embedder: Embedder, texts: Sequence[str]) -> list[np.ndarray]:
        """Passage vectors, from the stored vectors where the same text has one, computed otherwise."""
        return embed_cached(self.storage, embedder, texts)

    def replace(self, record: MemoryRecord, vector: np.ndarray | None, reason: str) -> MemoryRecord:
        """Overwrite the record with `record.id` inside the caller's transaction; returns the old value,
        which goes to history as an 'update' row. The row is re-inserted so every derived index (keyword,
        vector) is rebuilt through the one insert path."""
        old = self.get(record.id, include_deleted=True)
        self.storage.delete_row(self.rowid(record.id))
        self.insert_record(record, vector, action="update", old=old.public_dict(), reason=reason)
        return old

    def insert_record(
        self,
        record: MemoryRecord,
        vector: np.ndarray | None,
        *,
        action: str = "add",
        old: dict[str, Any] | None = None,
        reason: str | None = None,
    ) -> int:
        """Insert a record whose vector (or None: pending) is already known, inside the caller's
        transaction (an import or a workspace sync writes many in one transaction); returns its rowid."""
        people.note(self.storage, record.user_id, record.l0)
        rowid = self.storage.insert(record, vector_ready=vector is not None)
        if vector is not None:
            self.storage.ensure_vectors(self.embedder().identity)
            self.storage.put_vector(rowid, vector, (record.scope, record.user_id or "", record.category))
            self.storage.vectors_changed()
            self.centroids.inserted(rowid, vector)
        # The new value of an add or update is the row itself (log_change): not dumped for nothing.
        new = None if action in VALUE_IN_RECORDS else record.public_dict()
        self.log_change(record.id, record.user_id, action, old, new, reason)
        return rowid

    def vector_centroid(self, legs: Sequence[int]) -> centroid.Centroid | None:
        """The vectors' mean direction for search (store/vectors/centroid.py)."""
        return self.centroids.current(legs)

    def log_change(
        self, record_id: str, user_id: str | None, action: str, old: Any, new: Any, reason: str | None = None
    ) -> None:
        """One history row per change. The new value of an add, update or merge is what the records table
        holds (or the next change's old value), so it is not copied here; a delete keeps the old value,
        because `memory index` later removes the tombstone."""
        if action in VALUE_IN_RECORDS:
            new = None
        self.storage.log_change(record_id, user_id, action, old, new, reason)

    def delete(self, record_id: str) -> MemoryRecord:
        """Remove a record from every index at once; the row stays as a tombstone until `memory index`."""
        with self.storage.transaction():
            record = self.get(record_id)
            self.storage.mark_deleted(self.rowid(record_id), utc_now())
            self.storage.vectors_changed()
            people.forget_if_unused(self.storage, record.user_id, record.l0)
            self.log_change(record_id, record.user_id, "delete", record.public_dict(), None)
        return record

    def record_hits(self, record_ids: Sequence[str], now: datetime, first_rank: int = 0) -> list[str]:
        """An agent turn retrieved these memories, best first: each counts as a successful FSRS review,
        rated by its rank (`first_rank` for the first id, counting on; forgetting.rating_for_rank).

        A memory deleted since the search (by another process) is skipped: there is nothing left to review,
        and the search's results must still reach the user. Returns the ids reviewed.
        """
        reviewed: list[str] = []
        with self.storage.transaction():
            for offset, record_id in enumerate(record_ids):
                if self.review(record_id, now, rank=first_rank + offset):
                    reviewed.append(record_id)
        return reviewed

    def review(
        self, record_id: str, now: datetime, *, rank: int | None = None, corrected: bool = False
    ) -> bool:
        """One successful FSRS review of a live record (False when it is gone): by a search that ranked it
        `rank`, or (None) by seeing it again; `corrected` when a merge changed its value (a lapse). Call
        inside a transaction."""
        from openclaw_cli.memory.store.forgetting import review

        try:
            state = review(self.get(record_id).fsrs, now, rank=rank, corrected=corrected)
        except NotFound:
            return False
        self.storage.set_fsrs(record_id, state)
        return True

    def load_vectors_ahead(self) -> None:
        """Start reading the vectors into memory on a thread of their own, for a process that runs one
        search: the read and the arrays overlap the model's load and the query's analysis, and the scan
        is then the in-memory one (numpy, every row scored exactly, both weightings of the query in one
        pass) instead of two brute-force vec0 passes and a lookup per re-scored row after the query is
        embedded (~1 s at 100k memories)."""
        if not self.is_sqlite:  # the server's HNSW index answers one query without reading every vector
            return
        if self.matrix is None and self._matrix_loader is None:
            settle_numpy()  # the thread builds numpy arrays: numpy must not be imported by two threads at once
            self._matrix_loader = threading.Thread(
                target=self._load_matrix, name="vectors-ahead", daemon=True
            )
            self._matrix_loader.start()

    def _load_matrix(self) -> None:
        # A connection of its own: apsw refuses one connection used by two threads at once, and the
        # search reads through `conn` meanwhile. numpy is settled (load_vectors_ahead): the arrays are
        # built here too, while the models load.
        try:
            reader = self._open_reader()
            # One pass over every vector: SQLite's default 2 MB page cache, not the large one an encrypted
            # home's connections get (security/database.py) for repeated searches. Filling that one here
            # only faulted in fresh memory for pages read once (20k: 128 -> 292 ms, measured).
            getattr(reader, "conn").execute("PRAGMA cache_size = -2000")  # noqa: B009 - SQLite storage (is_sqlite)
            try:
                stored = read_rows(reader)
            finally:
                reader.close()
            # One search: every row is scored, so the sign bits would cost more than they save.
            matrix = VectorMatrix(sign_prefilter=False)
            matrix.load(stored)
            self._matrix_ahead = matrix
        except Exception:  # noqa: BLE001  # read again where it is used, which reports the failure
            return

    def _join_matrix_loader(self) -> None:
        if self._matrix_loader is not None:
            self._matrix_loader.join()
            self._matrix_loader = None

    @property
    def vectors_in_memory(self) -> bool:
        """Whether search should scan the in-memory matrix: it is held, or being read (load_vectors_ahead)."""
        return self.matrix is not None or self._matrix_loader is not None or self._matrix_ahead is not None

    def vector_matrix(self) -> VectorMatrix:
        """The in-memory copy of the vectors, loaded on first use and refreshed after writes."""
        self._join_matrix_loader()
        if self.matrix is None:
            self.matrix, self._matrix_ahead = self._matrix_ahead or VectorMatrix(), None
        self.matrix.refresh(self.storage)
        return self.matrix
