"""One memory database: records, their derived FTS and vector rows, and the history of every change.

Records are written in one transaction together with their FTS row and (when the embedder is available
and matches the one the database was built with) their vector; otherwise the vector is marked pending and
`memory index` fills it later. Nothing is lost when the embedder fails.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.errors import Conflict, InvalidInput, NotFound
from openclaw_cli.memory.search import centroid
from openclaw_cli.memory.store import people, vectors
from openclaw_cli.memory.store.db import open_db, text_hash, write_txn
from openclaw_cli.memory.store.history import VALUE_IN_RECORDS
from openclaw_cli.memory.store.record_rows import RECORD_COLUMNS, RankingFacts, row_to_record, write_fts_row
from openclaw_cli.memory.store.records import FsrsState, MemoryRecord, iso, utc_now
from openclaw_cli.memory.store.vector_matrix import VectorMatrix

if TYPE_CHECKING:
    import apsw
    import numpy as np

    from openclaw_cli.memory.embedding.onnx_embedder import Embedder

EmbedderFactory = Callable[[], "Embedder"]

Progress = Callable[[int], None]


@dataclass
class WriteReport:
    """What a write did: ids stored, how many vectors are pending, and why."""

    ids: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # (id not stored, id of the memory it duplicates): same user, scope and normalised L0 (writing/dedup.py).
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    pending_vectors: int = 0
    warning: str | None = None


def passage_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embedder_key(identity_dict: dict[str, Any]) -> str:
    return f"{identity_dict['provider']}:{identity_dict['model']}:{identity_dict['dimensions']}"


class MemoryStore:
    """A memory database file. Open with `MemoryStore.open(path, embedder_factory)`."""

    def __init__(self, conn: apsw.Connection, path: Path, embedder_factory: EmbedderFactory | None) -> None:
        self.conn = conn
        self.path = path
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        self._centroid_due: int | None = None
        self._centroid: tuple[int, tuple[int, ...], centroid.Centroid | None] = (-1, (), None)
        self.matrix: VectorMatrix | None = None
        self.dedup_index: Any = None  # dedup.NeighbourIndex, made by the first write that dedups

    @classmethod
    def open(
        cls, path: Path, embedder_factory: EmbedderFactory | None = None, *, create: bool = True
    ) -> MemoryStore:
        return cls(open_db(path, create=create), path, embedder_factory)

    def close(self) -> None:
        self.conn.close()

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
        row = self.conn.execute(f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ?", (record_id,)).fetchone()
        if row is None or (row[20] and not include_deleted):
            raise NotFound(f"no memory with id {record_id!r}", hint="list ids with `openclaw memory list`")
        return row_to_record(row)

    def exists(self, record_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM records WHERE id = ?", (record_id,)).fetchone() is not None

    def has_user(self, user_id: str) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM records WHERE user_id = ? AND deleted = 0 LIMIT 1", (user_id,)
        ).fetchone()
        return row is not None

    def ranking_facts(self, rowids: Iterable[int]) -> dict[int, RankingFacts]:
        """What ranking needs of each live candidate, without building whole records (search builds
        those only for the results it returns: validating ~150 records cost ~3 ms at every query)."""
        wanted = list(rowids)
        found: dict[int, RankingFacts] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            for rowid, language, category, l0, source, *fsrs in self.conn.execute(
                "SELECT rowid, language, category, l0, source, fsrs_stability, fsrs_difficulty, "
                f"fsrs_last_review, fsrs_next_review FROM records WHERE rowid IN ({marks}) AND deleted = 0",
                chunk,
            ):
                found[int(rowid)] = RankingFacts(str(language), str(category), tuple(fsrs), str(l0), source)
        return found

    def by_rowids(self, rowids: Iterable[int]) -> dict[int, MemoryRecord]:
        wanted = list(rowids)
        found: dict[int, MemoryRecord] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            for row in self.conn.execute(
                f"SELECT {RECORD_COLUMNS} FROM records WHERE rowid IN ({marks}) AND deleted = 0", chunk
            ):
                found[int(row[0])] = row_to_record(row)
        return found

    def list_records(
        self,
        *,
        user_id: str | None = None,
        scope: str | None = None,
        category: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[MemoryRecord]:
        clauses: list[str] = ["deleted = 0"]
        params: list[Any] = []
        for column, value in (("user_id", user_id), ("scope", scope), ("category", category)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        sql = f"SELECT {RECORD_COLUMNS} FROM records WHERE {' AND '.join(clauses)} ORDER BY created_at, rowid"
        sql += " LIMIT ? OFFSET ?"
        params.extend([limit if limit is not None else -1, offset])
        return [row_to_record(row) for row in self.conn.execute(sql, params)]

    def has_history(self, record_id: str) -> bool:
        return (
            self.conn.execute("SELECT 1 FROM history WHERE record_id = ? LIMIT 1", (record_id,)).fetchone()
            is not None
        )

    def history(self, record_id: str) -> list[dict[str, Any]]:
        """Every change of a record, oldest first, live or gone (tombstone cleared) alike."""
        from openclaw_cli.memory.store.history import entries

        found = entries(self.conn, record_id, self._current_value)
        if not found and not self.exists(record_id):
            raise NotFound(f"no memory with id {record_id!r}", hint="list ids with `openclaw memory list`")
        return found

    def _current_value(self, record_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ?", (record_id,)).fetchone()
        return None if row is None else row_to_record(row).public_dict()

    # ------------------------------------------------------------------ writes

    def set_fsrs(
        self, record_id: str, state: FsrsState, *, reason: str, reflected_at: datetime | None = None
    ) -> None:
        """Overwrite a record's FSRS state (and, when given, when it was reflected on), with a history
        row holding the old value."""
        with write_txn(self.conn):
            old = self.get(record_id)
            self._write_fsrs(record_id, state, reflected_at)
            self.log_change(record_id, old.user_id, "update", old.public_dict(), None, reason)

    def add(
        self, records: Sequence[MemoryRecord], *, progress: Progress | None = None, chunk: int = 256
    ) -> WriteReport:
        """Store `records` in transactions of `chunk`; records whose id already exists are skipped, and
        an exact duplicate of a live memory (dedup.exact_duplicate) is not stored but counts as a review
        of that memory, so rerunning an import or a batch without ids changes nothing but FSRS state.

        Embedding runs one chunk ahead in a worker thread (onnxruntime releases the GIL), so the model
        computes chunk n+1 while chunk n is analysed and written.
        """
        from concurrent.futures import ThreadPoolExecutor

        from openclaw_cli.memory.writing.dedup import exact_duplicate

        report = WriteReport()
        moment = utc_now()
        batches = [list(records[i : i + chunk]) for i in range(0, len(records), chunk)]
        embedder, report.warning = self.usable_embedder()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed") as pool:
            jobs = [_EmbeddingJob(self, embedder, batches[0], pool)] if batches else []
            for number, batch in enumerate(batches):
                job = jobs[number]
                if number + 1 < len(batches):
                    jobs.append(_EmbeddingJob(self, embedder, batches[number + 1], pool))
                found, warning = job.result()
                report.warning = report.warning or warning
                with write_txn(self.conn):
                    for record, vector in zip(batch, found, strict=True):
                        if self.exists(record.id):
                            report.skipped.append(record.id)
                            continue
                        known = exact_duplicate(self.conn, record)
                        if known is not None:
                            self.review(known.id, moment)
                            report.duplicates.append((record.id, known.id))
                            continue
                        self.insert_record(record, vector)
                        report.ids.append(record.id)
                        report.pending_vectors += vector is None
                if progress is not None:
                    progress(len(batch))
        return report

    def add_one(self, record: MemoryRecord) -> WriteReport:
        if self.exists(record.id):
            raise Conflict(f"a memory with id {record.id!r} already exists", hint="choose another --id")
        return self.add([record])

    def usable_embedder(self) -> tuple[Embedder | None, str | None]:
        """The embedder new vectors come from, or None (and why) when vectors must stay pending."""
        from openclaw_cli.memory.embedding.onnx_embedder import EmbeddingUnavailable

        if self._embedder_factory is None:
            return None, None
        try:
            embedder = self.embedder()
            if not vectors.identity_matches(self.conn, embedder.identity):
                return (
                    None,
                    "the configured embedder differs from the index's: run `openclaw memory index --rebuild`",
                )
        except EmbeddingUnavailable as exc:
            return None, f"{exc.message}; vectors are pending, run `openclaw memory index` later"
        return embedder, None

    def cached_vectors(self, key: str, hashes: Iterable[str]) -> dict[str, Any]:
        """Vectors already stored for texts with these `passage_hash`es, made by the embedder `key`.

        The cache is the vector table itself: a live record whose text has the same hash and whose
        vector is ready supplies it. Nothing is found when the table was made by another embedder.
        """
        table = vectors.current_table(self.conn)
        stored = vectors.stored_identity(self.conn)
        if table is None or stored is None or embedder_key(stored) != key:
            return {}
        found: dict[str, Any] = {}
        for digest in set(hashes):
            rowid = self._rowid_for_hash(digest)
            vector = None if rowid is None else vectors.read(self.conn, table, [rowid]).get(rowid)
            if vector is not None:
                found[digest] = vector
        return found

    def _rowid_for_hash(self, digest: str) -> int | None:
        """A live, vector-ready record whose text has this full SHA-256 (the 64-bit key may collide)."""
        rows = self.conn.execute(
            "SELECT rowid, l0 FROM records WHERE text_hash = ? AND deleted = 0 AND vector_status = 'ready'",
            (int.from_bytes(bytes.fromhex(digest[:16]), "big", signed=True),),
        )
        return next((int(rowid) for rowid, l0 in rows if passage_hash(l0) == digest), None)

    def embed_cached(self, embedder: Embedder, texts: Sequence[str]) -> list[np.ndarray]:
        """Passage vectors, taken from the stored vectors where the same text has one, computed otherwise.

        Computed vectors are cached by storing them: the caller writes them to the vector table.
        """
        key = embedder_key(embedder.identity.to_dict())
        hashes = [passage_hash(t) for t in texts]
        found = self.cached_vectors(key, hashes)
        missing = sorted({h: t for h, t in zip(hashes, texts, strict=True) if h not in found}.items())
        if missing:
            import numpy as np

            computed = embedder.embed_passages([t for _, t in missing])
            found.update(
                {
                    digest: np.asarray(v, dtype=np.float32)
                    for (digest, _), v in zip(missing, computed, strict=True)
                }
            )
        return [found[h] for h in hashes]

    def replace(self, record: MemoryRecord, vector: np.ndarray | None, reason: str) -> MemoryRecord:
        """Overwrite the record with `record.id` inside the caller's `write_txn`; returns the old value,
        which goes to history as an 'update' row. The row is re-inserted so every derived index (FTS,
        vector) is rebuilt through the one insert path."""
        old = self.get(record.id, include_deleted=True)
        rowid = self.rowid(record.id)
        self.conn.execute("DELETE FROM records_fts WHERE rowid = ?", (rowid,))
        vectors.delete(self.conn, vectors.current_table(self.conn), [rowid])
        self.conn.execute("DELETE FROM records WHERE rowid = ?", (rowid,))
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
    ) -> None:
        """Insert a record whose vector (or None: pending) is already known, inside the caller's
        `write_txn` (an import or a workspace sync writes many in one transaction)."""
        people.note(self.conn, record.user_id, record.l0)
        fs = record.fsrs
        self.conn.execute(
            f"INSERT INTO records({RECORD_COLUMNS.replace('rowid, ', '')}, text_hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)",
            (
                record.id,
                record.scope,
                record.user_id,
                record.agent_id,
                record.category,
                record.l0,
                record.l1,
                record.l2,
                record.language,
                record.l0_hash,
                iso(record.created_at),
                iso(record.updated_at),
                json.dumps(record.source, ensure_ascii=False) if record.source else None,
                fs.stability,
                fs.difficulty,
                iso(fs.last_review),
                iso(fs.next_review),
                fs.reps,
                fs.lapses,
                "pending" if vector is None else "ready",
                record.attribute,
                iso(record.reflected_at),
                text_hash(record.l0),
            ),
        )
        rowid = self.conn.last_insert_rowid()
        write_fts_row(self.conn, rowid, record.l0, record.l1)
        if vector is not None:
            table = vectors.ensure_table(self.conn, self.embedder().identity)
            vectors.upsert(self.conn, table, rowid, vector, _vector_meta(record))
            vectors.bump_generation(self.conn)
            self._keep_centroid_current(rowid)
        self.log_change(record.id, record.user_id, action, old, record.public_dict(), reason)

    def vector_centroid(self, legs: Sequence[int]) -> centroid.Centroid | None:
        """The vectors' mean direction for search (search/centroid.py), read again only after a write: a warm
        process (the gateway) builds a searcher per request but keeps its stores."""
        generation = vectors.generation(self.conn)
        cached_generation, cached_legs, found = self._centroid
        if cached_generation != generation or cached_legs != tuple(legs):
            found = centroid.current(self.conn, legs)
            self._centroid = (generation, tuple(legs), found)
        return found

    def _keep_centroid_current(self, rowid: int) -> None:
        """Recompute the vectors' mean direction (search/centroid.py) once the store has grown by a tenth since:
        one comparison per insert otherwise, and about 11 reads of each row over a bulk load from empty."""
        if self._centroid_due is None:
            self._centroid_due = centroid.next_refresh(centroid.load(self.conn))
        if rowid > self._centroid_due:
            self._centroid_due = centroid.next_refresh(centroid.refresh(self.conn))

    def log_change(
        self, record_id: str, user_id: str | None, action: str, old: Any, new: Any, reason: str | None = None
    ) -> None:
        """One history row per change. The new value of an add, update or merge is what the records table
        holds (or the next change's old value), so it is not copied here; a delete keeps the old value,
        because `memory index` later removes the tombstone."""
        if action in VALUE_IN_RECORDS:
            new = None
        self.conn.execute(
            "INSERT INTO history(record_id, user_id, action, old_value, new_value, at, reason) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                record_id,
                user_id,
                action,
                None if old is None else json.dumps(old, ensure_ascii=False),
                None if new is None else json.dumps(new, ensure_ascii=False),
                iso(utc_now()),
                reason,
            ),
        )

    def delete(self, record_id: str) -> MemoryRecord:
        """Remove a record from every index at once; the row stays as a tombstone until `memory index`."""
        with write_txn(self.conn):
            record = self.get(record_id)
            rowid = self.rowid(record_id)
            self.conn.execute("DELETE FROM records_fts WHERE rowid = ?", (rowid,))
            vectors.delete(self.conn, vectors.current_table(self.conn), [rowid])
            vectors.bump_generation(self.conn)
            self.conn.execute(
                "UPDATE records SET deleted = 1, updated_at = ? WHERE rowid = ?", (iso(utc_now()), rowid)
            )
            people.forget_if_unused(self.conn, record.user_id, record.l0)
            self.log_change(record_id, record.user_id, "delete", record.public_dict(), None)
        return record

    def purge_user(self, user_id: str) -> int:
        """Remove every memory of `user_id` and their history so the text is gone from the file (writing/purge.py)."""
        from openclaw_cli.memory.writing.purge import purge_store

        return purge_store(self, user_id)[0]

    def _write_fsrs(self, record_id: str, state: FsrsState, reflected_at: datetime | None = None) -> None:
        """Store a record's FSRS state (and, from reflection, when it was reflected on)."""
        self.conn.execute(
            "UPDATE records SET fsrs_stability = ?, fsrs_difficulty = ?, fsrs_last_review = ?, "
            "fsrs_next_review = ?, fsrs_reps = ?, fsrs_lapses = ?, "
            "reflected_at = COALESCE(?, reflected_at) WHERE id = ?",
            (
                state.stability,
                state.difficulty,
                iso(state.last_review),
                iso(state.next_review),
                state.reps,
                state.lapses,
                iso(reflected_at),
                record_id,
            ),
        )

    def record_hits(self, record_ids: Sequence[str], now: datetime) -> list[str]:
        """An agent turn retrieved these memories: each counts as a successful FSRS review.

        A memory deleted since the search (by another process) is skipped: there is nothing left to review,
        and the search's results must still reach the user. Returns the ids reviewed.
        """
        reviewed: list[str] = []
        with write_txn(self.conn):
            for record_id in record_ids:
                if self.review(record_id, now):
                    reviewed.append(record_id)
        return reviewed

    def review(self, record_id: str, now: datetime) -> bool:
        """One successful FSRS review of a live record (False when it is gone). Call inside a transaction."""
        from openclaw_cli.memory.store.forgetting import review

        try:
            state = review(self.get(record_id).fsrs, now)
        except NotFound:
            return False
        self._write_fsrs(record_id, state)
        return True

    def rowid(self, record_id: str) -> int:
        row = self.conn.execute("SELECT rowid FROM records WHERE id = ?", (record_id,)).fetchone()
        if row is None:
            raise NotFound(f"no memory with id {record_id!r}")
        return int(row[0])

    def vector_matrix(self) -> VectorMatrix:
        """The in-memory copy of the vectors, loaded on first use and refreshed after writes."""
        if self.matrix is None:
            self.matrix = VectorMatrix()
        self.matrix.refresh(self.conn)
        return self.matrix


class _EmbeddingJob:
    """The vectors for one chunk of new records: cache hits now, the rest computed in the background."""

    def __init__(
        self, store: MemoryStore, embedder: Embedder | None, batch: Sequence[MemoryRecord], pool: Any
    ) -> None:
        self.store = store
        self.hashes = [passage_hash(r.l0) for r in batch]
        self.key = "" if embedder is None else embedder_key(embedder.identity.to_dict())
        self.found = {} if embedder is None else store.cached_vectors(self.key, self.hashes)
        missing = {h: r.l0 for h, r in zip(self.hashes, batch, strict=True) if h not in self.found}
        self.missing = sorted(missing.items())
        self.fresh: dict[str, Any] = {}
        self.future = None
        if embedder is not None and self.missing:
            self.future = pool.submit(embedder.embed_passages, [text for _, text in self.missing])

    def result(self) -> tuple[list[Any], str | None]:
        """One vector (or None: pending) per record, and a warning when the embedder failed."""
        import numpy as np

        from openclaw_cli.memory.embedding.onnx_embedder import EmbeddingUnavailable

        warning = None
        if self.future is not None:
            try:
                computed = self.future.result()
                self.fresh = {
                    d: np.asarray(v, dtype=np.float32)
                    for (d, _), v in zip(self.missing, computed, strict=True)
                }
            except EmbeddingUnavailable as exc:
                warning = f"{exc.message}; vectors are pending, run `openclaw memory index` later"
        vectors_by_hash = {**self.found, **self.fresh}
        return [vectors_by_hash.get(h) for h in self.hashes], warning


def _vector_meta(record: MemoryRecord) -> tuple[str, str, str]:
    return record.scope, record.user_id or "", record.category
