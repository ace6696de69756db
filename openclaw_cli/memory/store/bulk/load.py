"""Bulk writes as a pipeline: the models embed the coming chunks while the records are still being
validated, and then while each earlier chunk is checked for duplicates and written.

Records arrive one by one (`feed`) and are cut into chunks. As soon as a chunk is full its embedding is
handed to one worker thread (onnxruntime releases the GIL while a model runs), up to `AHEAD` chunks in
advance of the one being written, so at most that many chunks' vectors wait in memory. Nothing is
written until `write`: a caller that validates its whole input first (`memory add --batch`) feeds every
record, and only then writes; if validation fails it calls `cancel` and nothing was stored.

`write` stores one chunk per transaction, in order, the last records in smaller pieces. The embedder is
first resolved in the worker (the models may still be loading in the background): the main thread goes on
validating meanwhile. A failure of the embedder service leaves the vectors pending with a warning, as a
single add does; any other error stops the run after the chunks already committed, which stay whole and
readable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from openclaw_cli.memory.store.bulk.embedding_worker import EmbeddingWorker
from openclaw_cli.memory.store.records import utc_now
from openclaw_cli.memory.store.vectors.cache import embedder_key, passage_hash

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.embedder import Embedder
    from openclaw_cli.memory.store.protocol import MemoryStorage
    from openclaw_cli.memory.store.records import MemoryRecord

CHUNK = 256  # records per transaction and per embedding call
AHEAD = 3  # chunks embedded ahead of the one being written (their vectors wait in memory)
MISMATCH = "the configured embedder differs from the index's: run `openclaw memory index --rebuild`"


@dataclass
class WriteReport:
    """What a write did: ids stored, how many vectors are pending, and why."""

    ids: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # (id not stored, id of the memory it duplicates): same user, scope and normalised L0 (writing/dedup.py).
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    pending_vectors: int = 0
    warning: str | None = None


class ChunkTarget(Protocol):
    """Where the chunks go: MemoryStore, which writes each in one transaction."""

    def write_chunk(
        self,
        records: Sequence[MemoryRecord],
        vectors: Sequence[np.ndarray | None],
        moment: datetime,
        report: WriteReport,
    ) -> None: ...

    def bulk_load(self) -> AbstractContextManager[None]:
        """Around all the chunks of one load (MemoryStorage.bulk_load)."""
        ...


@dataclass
class _Chunk:
    records: list[MemoryRecord]
    hashes: list[str]
    cached: dict[str, Any]  # passage hash -> vector of a stored record with that text
    future: Future[tuple[list[Any], str | None]] | None = None


@dataclass
class _Resolved:
    embedder: Embedder | None = None
    warning: str | None = None
    done: bool = False


class BulkWriter:
    """Feed records, then `write` them into the store `open_store` gives (see the module doc)."""

    def __init__(
        self,
        embedder_factory: Callable[[], Embedder] | None,
        cache: MemoryStorage | None,
        open_store: Callable[[], ChunkTarget],
        *,
        chunk: int = CHUNK,
    ) -> None:
        """`cache`: the storage to take already stored vectors of the same texts from (None when the
        database does not exist yet: it is only created by `write`)."""
        self._factory = embedder_factory
        self._cache = cache
        self._open_store = open_store
        self._chunk = chunk
        # Read before any write: the identity the stored vectors were made with, if any.
        self._stored = cache.vector_identity() if cache is not None and cache.has_vectors() else None
        self._worker = EmbeddingWorker("bulk-embed")
        self._resolved = _Resolved()
        self._filling: list[MemoryRecord] = []
        self._chunks: list[_Chunk] = []
        self._written = 0
        self.moment = utc_now()  # when duplicates found by this load count as reviewed

    def feed(self, record: MemoryRecord) -> None:
        self._filling.append(record)
        if len(self._filling) >= self._chunk:
            self._close_chunk()

    def cancel(self) -> None:
        """Drop everything fed (nothing was written) and stop the worker."""
        for chunk in self._chunks:
            if chunk.future is not None:
                chunk.future.cancel()
        self._chunks.clear()
        self._shutdown()

    def write(self, report: WriteReport, progress: Callable[[int], None] | None = None) -> None:
        """Write every chunk fed, one transaction each, into `report`."""
        try:
            self._close_tail()
            if not self._chunks:
                return
            store = self._open_store()
            with store.bulk_load():
                while self._written < len(self._chunks):
                    chunk = self._chunks[self._written]
                    self._submit_ahead(self._written + 1)  # the worker goes on while this one is written
                    vectors, warning = self._vectors(chunk)
                    report.warning = report.warning or warning
                    store.write_chunk(chunk.records, vectors, self.moment, report)
                    self._chunks[self._written] = _Chunk([], [], {})  # its vectors may go
                    self._written += 1
                    if progress is not None:
                        progress(len(chunk.records))
        finally:
            self._shutdown()

    # ------------------------------------------------------------------ the worker

    def _close_tail(self) -> None:
        """Close the last records in pieces of a quarter chunk (with the last full chunk, unless the
        worker has it already): once the models finish, only the last piece is left to write, not a
        whole chunk (60-150 ms of a 2,000-record load), and each earlier piece is written while the
        next one embeds."""
        if not self._filling and self._chunks and self._chunks[-1].future is None:
            self._filling = self._chunks.pop().records
        rest, piece = self._filling, max(1, self._chunk // 4)
        for start in range(0, len(rest), piece):
            self._filling = rest[start : start + piece]
            self._close_chunk()

    def _close_chunk(self) -> None:
        records, self._filling = self._filling, []
        hashes = [passage_hash(r.l0) for r in records]
        cached: dict[str, Any] = {}
        if self._stored is not None and self._cache is not None:
            # Read now, in this thread (one connection, used by one thread at a time).
            cached = self._cache_rows(hashes)
        self._chunks.append(_Chunk(records, hashes, cached))
        self._submit_ahead(self._written)

    def _cache_rows(self, hashes: Sequence[str]) -> dict[str, Any]:
        assert self._cache is not None
        found: dict[str, Any] = {}
        for digest in set(hashes):
            rowid = self._cache.row_with_text(digest)
            vector = None if rowid is None else self._cache.read_vectors([rowid]).get(rowid)
            if vector is not None:
                found[digest] = vector
        return found

    def _submit_ahead(self, first: int) -> None:
        """Hand the worker every chunk up to AHEAD past `first` that it does not have yet."""
        for chunk in self._chunks[first : first + AHEAD + 1]:
            if chunk.future is None:
                chunk.future = self._worker.submit(self._embed, chunk)

    def _embed(self, chunk: _Chunk) -> tuple[list[Any], str | None]:
        """In the worker: one vector (or None: pending) per record, and the warning when there are none."""
        import numpy as np

        from openclaw_cli.memory.store.embedder import EmbeddingUnavailable

        embedder = self._embedder()
        if embedder is None:
            return [None] * len(chunk.hashes), self._resolved.warning
        key = embedder_key(embedder.identity.to_dict())
        found = dict(chunk.cached) if self._stored is not None and embedder_key(self._stored) == key else {}
        missing = sorted(
            {h: r.l0 for h, r in zip(chunk.hashes, chunk.records, strict=True) if h not in found}.items()
        )
        warning = None
        if missing:
            try:
                computed = embedder.embed_passages([text for _, text in missing])
                found.update(
                    {d: np.asarray(v, dtype=np.float32) for (d, _), v in zip(missing, computed, strict=True)}
                )
            except EmbeddingUnavailable as exc:
                warning = f"{exc.message}; vectors are pending, run `openclaw memory index` later"
        return [found.get(h) for h in chunk.hashes], warning

    def _embedder(self) -> Embedder | None:
        """The embedder new vectors come from, resolved once (in the worker: loading may take seconds)."""
        from openclaw_cli.memory.store.embedder import EmbeddingUnavailable

        resolved = self._resolved
        if not resolved.done:
            resolved.done = True
            if self._factory is not None:
                try:
                    embedder = self._factory()
                    if self._stored is not None and self._stored != embedder.identity.to_dict():
                        resolved.warning = MISMATCH
                    else:
                        resolved.embedder = embedder
                except EmbeddingUnavailable as exc:
                    resolved.warning = (
                        f"{exc.message}; vectors are pending, run `openclaw memory index` later"
                    )
        return resolved.embedder

    def _vectors(self, chunk: _Chunk) -> tuple[list[np.ndarray | None], str | None]:
        assert chunk.future is not None
        return chunk.future.result()

    def _shutdown(self) -> None:
        self._worker.shutdown()
