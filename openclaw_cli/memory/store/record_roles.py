"""The record roles of the storage interface (store/protocol.py): reading records, the source of truth, and
changing them with the indexes kept in step. protocol.py composes them into `MemoryStorage` and re-exports
them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from openclaw_cli.memory.store.protocol_types import LiveFilter, RecordMatch, VectorFilter
    from openclaw_cli.memory.store.record_rows import RankingFacts
    from openclaw_cli.memory.store.records import FsrsState, MemoryRecord


class RecordReads(Protocol):
    """Records, the source of truth, as the use cases read them: by id, by row, listed, matched."""

    def get(self, record_id: str, *, include_deleted: bool = False) -> MemoryRecord | None: ...

    def rowid(self, record_id: str) -> int | None:
        """The row of a record, live or deleted; None when there is none."""
        ...

    def by_rowids(self, rowids: Iterable[int]) -> dict[int, MemoryRecord]:
        """The live records among `rowids`."""
        ...

    def ranking_facts(self, rowids: Iterable[int]) -> dict[int, RankingFacts]:
        """What ranking reads of each live row, without building whole records."""
        ...

    def list_records(
        self, where: LiveFilter, *, limit: int | None = None, offset: int = 0
    ) -> list[MemoryRecord]:
        """Live records matching every field `where` gives, oldest first."""
        ...

    def live_after(
        self,
        after: int,
        limit: int,
        *,
        scope: str | None = None,
        user_id: str | None = None,
        notes: bool = True,
    ) -> list[tuple[int, MemoryRecord]]:
        """(rowid, record) of the live records with a row after `after`, in row order (keyset paging);
        `notes=False` leaves out the workspace notes (statements.NOT_WORKSPACE_NOTE)."""
        ...

    def count_live(
        self, *, scope: str | None = None, user_id: str | None = None, notes: bool = True
    ) -> int: ...

    def has_user(self, user_id: str, *, scope: str | None = None) -> bool:
        """Whether `user_id` has a live record (of `scope`, when given)."""
        ...

    def user_records(self, user_id: str, matches: Sequence[RecordMatch]) -> list[MemoryRecord]:
        """The live user-scope records of `user_id` that meet every match, oldest first."""
        ...

    def same_text(self, record: MemoryRecord) -> MemoryRecord | None:
        """The newest live record of the same user and scope with the same L0 hash (not `record` itself)."""
        ...

    def same_attribute(self, record: MemoryRecord) -> MemoryRecord | None:
        """The newest live record of the same user, scope and category about the same attribute."""
        ...

    def unreflected(self, categories: Sequence[str]) -> list[MemoryRecord]:
        """Live records of these categories no reflection has used, by scope, user, category, age."""
        ...

    def unreflected_summary(self, categories: Sequence[str]) -> tuple[int, str | None]:
        """How many live records of these categories are unreflected, and the oldest one's creation time."""
        ...

    def session_places(self, session: str, where: VectorFilter) -> list[tuple[int, str]]:
        """(rowid, source JSON) of the live records said in `session` that `where` allows."""
        ...

    def ready_rows(self, user_id: str | None, scope: str, category: str) -> list[tuple[int, str]]:
        """(rowid, language) of the live records of this user, scope and category whose vector is ready."""
        ...

    def user_counts(self) -> list[tuple[str, int]]:
        """(user id, live user-scope records) of every user with any, by user id."""
        ...

    def conversation_sessions(self, user_id: str, kinds: Sequence[str]) -> list[str | None]:
        """For each live record of `user_id` a conversation wrote (its source names a session, or one of
        `kinds`): its session id, or None."""
        ...

    def pending_vectors(self) -> int:
        """How many live records wait for their vector."""
        ...

    def row_with_text(self, digest: str) -> int | None:
        """A live record with a ready vector whose L0 has this SHA-256 (hex digest): the vector cache."""
        ...

    def sourced_rows(self) -> Iterator[tuple[int, str, str | None, str, str]]:
        """(rowid, id, user id, L0, source JSON) of every record with a source, live or not."""
        ...

    def rows_of_users(self, user_ids: Sequence[str]) -> list[tuple[int, str]]:
        """(rowid, id) of every record, live or not, of these users."""
        ...

    def texts_of_users(self, user_ids: Sequence[str]) -> list[tuple[str, str | None]]:
        """(L0, L1) of every record, live or not, of these users: what a purge looks for elsewhere."""
        ...

    def user_ids(self) -> list[str]:
        """Every user id any record holds, live or not, sorted."""
        ...


class RecordWrites(Protocol):
    """Changes to records; each keeps the keyword and vector indexes in step."""

    def insert(self, record: MemoryRecord, *, vector_ready: bool) -> int:
        """Store a new record and its keyword-index row; returns its rowid. Its vector, when ready, is
        written with `put_vector`."""
        ...

    def replace_row(self, rowid: int, record: MemoryRecord, *, vector_ready: bool) -> None:
        """Overwrite the record at `rowid` in place (same rowid), keyword row included."""
        ...

    def delete_row(self, rowid: int) -> None:
        """Remove one row with its keyword row and current vector (a replace inserts it again)."""
        ...

    def mark_deleted(self, rowid: int, at: datetime) -> None:
        """Tombstone a record: it leaves the keyword and vector indexes; the row stays until cleanup."""
        ...

    def remove(self, rowids: Sequence[int]) -> None:
        """Remove rows entirely: records, keyword rows and vectors (history stays)."""
        ...

    def set_fsrs(self, record_id: str, state: FsrsState, reflected_at: datetime | None = None) -> None: ...

    def reassign(
        self, rowid: int, record_id: str, user_id: str, at: datetime, *, scope: str | None = None
    ) -> None:
        """Give a record, its vectors and its history rows to `user_id` (updated at `at`); `scope`, when
        given, becomes the record's and its vectors' scope too (a workspace note given to the owner)."""
        ...

    def compact(self) -> None:
        """Rewrite the storage so removed text lingers nowhere on disk (after a purge)."""
        ...
