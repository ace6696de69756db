"""The one storage interface of a memory database: what the service and every use case may ask of it.

A store holds records (the source of truth), their history, a keyword index and a vector index derived
from them, a few `meta` values, the people its memories name, and the workspace files indexed into it.
Records are addressed by id, and by a row number (`rowid`) that the indexes share. Every write runs in
`transaction()`; a read may run in `snapshot()` to see one consistent state.

Signatures use plain Python types, numpy arrays and the record dataclasses only, so a second backend
(PostgreSQL with pgvector) can implement the same Protocol; the SQLite one is store/sqlite/.
tests/test_storage_conformance.py runs the contract against each backend. The interface is the sum of
small roles (transactions, record reads and writes, history, the keyword index, the vector index, meta,
people, workspace files, and every row as stored for moving a store between backends), so a reader sees
each part on its own. The plain row types they take and return are in store/protocol_types.py, and the two
record roles in store/record_roles.py; both are re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from openclaw_cli.memory.store.protocol_types import (
    HistoryRow,
    LiveFilter,
    PersonRow,
    RecordMatch,
    StoredChange,
    StoredRows,
    VectorFilter,
    WorkspaceFile,
)
from openclaw_cli.memory.store.record_roles import RecordReads, RecordWrites

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.embedder import EmbedderIdentity
    from openclaw_cli.memory.store.records import MemoryRecord
    from openclaw_cli.memory.store.vector_codec import VectorFormat

__all__ = [
    "History",
    "HistoryRow",
    "KeywordIndex",
    "LiveFilter",
    "MemoryStorage",
    "Meta",
    "People",
    "PersonRow",
    "RecordMatch",
    "RecordReads",
    "RecordWrites",
    "StoreRows",
    "StoredChange",
    "StoredRows",
    "Transactions",
    "VectorFilter",
    "VectorIndex",
    "VectorSource",
    "WorkspaceFile",
    "WorkspaceFiles",
]


class VectorSource(Protocol):
    """Nearest rows of the current vector index and their stored vectors (the backend's own scan, or a
    warm in-memory copy)."""

    def knn(self, query: np.ndarray, k: int, where: VectorFilter) -> list[tuple[int, float]]: ...

    def rows(self, rowids: Sequence[int]) -> dict[int, np.ndarray]: ...


class Transactions(Protocol):
    """Every write runs in `transaction()`; a read may run in `snapshot()` to see one consistent state."""

    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction: committed on success, rolled back (nothing written) on an exception.
        Nested, it joins the outer one (a savepoint)."""
        ...

    def snapshot(self) -> AbstractContextManager[None]:
        """A read transaction: every read inside sees the same state while other writers go on."""
        ...

    def bulk_load(self) -> AbstractContextManager[None]:
        """Many transactions of writes in a row (a batch of memories): the backend may hold more of the
        store in memory meanwhile."""
        ...

    def close(self) -> None: ...


class History(Protocol):
    """One row per change of a record, with the values it had."""

    def log_change(
        self, record_id: str, user_id: str | None, action: str, old: Any, new: Any, reason: str | None
    ) -> None:
        """One history row (`old`/`new`: JSON-serialisable values or None)."""
        ...

    def history_rows(self, record_id: str) -> list[HistoryRow]:
        """The history rows of a record, oldest first."""
        ...

    def forget_history(self, *, user_ids: Sequence[str] = (), record_ids: Sequence[str] = ()) -> int:
        """Delete the history rows of these users and of these records; returns how many went."""
        ...


class KeywordIndex(Protocol):
    """The keyword (BM25) index derived from the records' text."""

    def keyword_candidates(
        self, terms: Sequence[str], where: VectorFilter, pool: int
    ) -> list[tuple[int, float]]:
        """(rowid, BM25 score) of the best `pool` live matches of any of `terms`, best first."""
        ...

    def keep_keywords_in_memory(self, *, wait: bool = False) -> None:
        """From now on answer `keyword_candidates` from a copy of the index held in memory, where the
        backend has one (a warm process: same results, less work per search). `wait`: until a build of
        the copy under way is done (benchmarks measure the copy)."""
        ...

    def document_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """How many live records hold each term (terms held by none are left out)."""
        ...

    def store_size(self) -> int:
        """An upper bound of the number of records, cheap to read."""
        ...

    def indexed_terms(self, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """The keyword-index text (L0 terms, L1 terms) of these rows."""
        ...


class VectorIndex(Protocol):
    """The vector index derived from the records: one table per embedder identity."""

    def vector_identity(self) -> dict[str, Any] | None:
        """The identity (provider, model, dimensions) of the embedder the vectors were made with."""
        ...

    def has_vectors(self) -> bool:
        """Whether a current vector index exists."""
        ...

    def ensure_vectors(self, identity: EmbedderIdentity) -> None:
        """Create the vector index for this embedder when there is none."""
        ...

    def delete_vector(self, rowid: int) -> None:
        """Drop a row's vector from the current index (its text changed; it is pending again)."""
        ...

    def put_vector(self, rowid: int, vector: np.ndarray, meta: tuple[str, str, str]) -> None:
        """Store a row's vector with its (scope, user id, category) filter columns."""
        ...

    def read_vectors(self, rowids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these rows, as float32 (rows without one are left out)."""
        ...

    def knn(self, query: np.ndarray, k: int, where: VectorFilter) -> list[tuple[int, float]]:
        """The `k` nearest rows by cosine, best first."""
        ...

    def vector_source(self) -> VectorSource:
        """The backend's own nearest-neighbour scan of the current index."""
        ...

    def vectors_changed(self) -> None:
        """Note that the vectors changed, so warm copies (vector matrix, dedup index) reload."""
        ...

    def vector_batch(self) -> AbstractContextManager[None]:
        """Records added one by one inside the caller's transaction while nothing else changes which
        vector index is current: the backend may look the index up once, and note the change
        (`vectors_changed`) once at the end instead of after each vector."""
        ...

    def vector_generation(self) -> int: ...

    def vector_table(self) -> str | None:
        """The name of the current vector index (None when there is none): a rebuild swaps in a new one."""
        ...

    def stored_vectors(self) -> StoredRows:
        """Every row of the current vector index, for the warm in-memory matrix."""
        ...

    def vector_filter_columns(self) -> list[tuple[int, str, str, str]]:
        """(rowid, scope, user id or '', category) of every row that may hold a vector: what a filtered
        search checks when `stored_vectors` gave the vectors without them (`StoredRows.chunks`)."""
        ...

    def vector_blobs(self) -> tuple[VectorFormat, Iterator[bytes]]:
        """How the current index stores vectors, and each stored vector's bytes, streamed (the mean of
        the vectors reads them all). Call only when `vector_table()` is not None."""
        ...


class Meta(Protocol):
    """A few named values of the store (schema facts, the index's analysis version, the vectors' mean)."""

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: Any) -> None: ...

    def delete_meta(self, key: str) -> None: ...


class People(Protocol):
    """The names memories introduce with a relation, counted per user (store/people.py)."""

    def count_person(self, user_id: str, kind: str, name: str) -> None:
        """One more mention of `name` as `kind` for `user_id`."""
        ...

    def drop_person(self, user_id: str, kind: str | None = None, name: str | None = None) -> None:
        """Forget a user's name (`kind` and `name` given) or every name of the user."""
        ...

    def drop_people(self) -> None:
        """Forget every name (before they are counted again from every memory)."""
        ...

    def people_count(self) -> int: ...

    def person_names(self, user_id: str | None, kind: str) -> list[tuple[str, int]]:
        """(name, mentions) of `kind` for `user_id`; every user's (mentions summed) when None."""
        ...

    def live_text_mentions(self, user_id: str | None, name: str) -> bool:
        """Whether a live record of `user_id` still holds `name` in its L0."""
        ...

    def live_texts(self, user_ids: Sequence[str] | None = None) -> Iterator[tuple[str | None, str]]:
        """(user id, L0) of every live record (of these users)."""
        ...


class WorkspaceFiles(Protocol):
    """The workspace Markdown files indexed into the store as note records."""

    def workspace_files(self) -> dict[str, WorkspaceFile]: ...

    def put_workspace_file(self, file: WorkspaceFile, *, keep_chunks: bool = False) -> None:
        """Record a file's state (`keep_chunks`: its bytes did not change, keep the chunk count)."""
        ...

    def drop_workspace_file(self, path: str) -> None: ...

    def note_rows(self, path: str) -> list[int]:
        """The rows of the live `note` records made from the workspace file `path`."""
        ...

    def stray_notes(self, owner: str) -> list[tuple[int, str]]:
        """(rowid, id) of the live workspace notes that are not `owner`'s user-scope memories."""
        ...


class StoreRows(Protocol):
    """Every row as stored, tombstones and history of removed records included, for moving a whole store to
    another backend (portability/backends.py): read from one, written into the other as they were."""

    def records_after(self, after: int, limit: int) -> list[tuple[int, MemoryRecord]]:
        """(rowid, record) of every record, live or tombstoned, with a row after `after`, in row order."""
        ...

    def count_records(self) -> int:
        """Every record, live or tombstoned."""
        ...

    def history_after(self, after: int, limit: int) -> list[StoredChange]:
        """The history rows with a seq after `after`, in seq order."""
        ...

    def count_history(self) -> int: ...

    def append_history(self, changes: Sequence[StoredChange]) -> None:
        """Store history rows as they were (times and values kept; each gets this store's next seq, in order)."""
        ...

    def meta_items(self) -> dict[str, str]:
        """Every `meta` value by key."""
        ...

    def people_rows(self) -> list[PersonRow]: ...

    def insert_copies(self, copies: Sequence[tuple[MemoryRecord, np.ndarray | None]]) -> list[int]:
        """Insert records as they are (as live rows: `mark_deleted` makes a tombstone of one), each with its
        stored vector or None (then it is pending, unless a tombstone said ready), in as few round trips as
        the backend allows; returns their new rowids in order. Give vectors after `ensure_vectors`."""
        ...

    def copy_in_bulk(self) -> AbstractContextManager[None]:
        """A stretch of many inserts inside one transaction: the backend may set its derived search indexes
        aside and build them once at the end (a no-op where inserting into them costs no more). Not named
        bulk_load: that is MemoryStorage's, and one object plays both roles (the postgres one's bulk_load
        hid this one, and a move then inserted 100k rows with the counting trigger on)."""
        ...

    def put_person(self, person: PersonRow) -> None:
        """Store a people row with its mentions (replacing one of the same user, kind and name)."""
        ...


class MemoryStorage(
    Transactions,
    RecordReads,
    RecordWrites,
    History,
    KeywordIndex,
    VectorIndex,
    Meta,
    People,
    WorkspaceFiles,
    StoreRows,
    Protocol,
):
    """One memory database: every role above. Methods that write must be called inside `transaction()`."""
