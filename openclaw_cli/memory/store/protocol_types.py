"""The plain row types of the storage interface (store/protocol.py): what its methods take and return
besides records and numpy arrays. protocol.py re-exports each, so callers import them from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openclaw_cli.memory.store.vector_codec import VectorFormat


@dataclass(frozen=True)
class LiveFilter:
    """Which live records a listing returns: each field given (not None) must match exactly."""

    user_id: str | None = None
    scope: str | None = None
    category: str | None = None


@dataclass(frozen=True)
class VectorFilter:
    """Which rows a search may return. Empty tuples mean no restriction."""

    user_id: str | None = None
    scopes: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class HistoryRow:
    """One stored change of a record; `old`/`new` are the JSON texts as written (None when not copied)."""

    seq: int
    action: str
    old: str | None
    new: str | None
    at: str
    reason: str | None


@dataclass(frozen=True)
class WorkspaceFile:
    """What the store knows of an indexed workspace Markdown file (workspace/markdown_index.py)."""

    path: str
    file_hash: str
    size: int
    mtime_ns: int
    chunks: int = 0
    problem: str | None = None


@dataclass(frozen=True)
class StoredRows:
    """Every row of the current vector table as stored (bytes in `fmt`), for the warm in-memory matrix
    (store/vectors/matrix.py): plain values, so a thread of its own can read them without numpy."""

    table: str | None
    generation: int
    fmt: VectorFormat
    rows: list[tuple[int, bytes, str, str, str]]  # rowid, vector bytes, scope, user id, category
    # Or, from SQLite, the vec0 table's chunks read whole (sqlite/vec_chunks.Chunk: many times faster than
    # row by row), without the filter columns (MemoryStorage.vector_filter_columns has them).
    chunks: list[Any] | None = None


@dataclass(frozen=True)
class RecordMatch:
    """One condition on records: `field` is session (the source's session id is one of `values`),
    category, since (created at or after the ISO date `values[0]`) or id."""

    field: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class StoredChange:
    """One history row with the record and user it belongs to: what moving a store copies as it is."""

    record_id: str
    user_id: str | None
    row: HistoryRow


@dataclass(frozen=True)
class PersonRow:
    """One row of the people table (store/people.py): a name of `kind` for `user_id`, said `mentions` times."""

    user_id: str
    kind: str
    name: str
    mentions: int
