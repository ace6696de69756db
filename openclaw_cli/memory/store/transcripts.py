"""The transcript index's storage interface: what session transcript search may ask of its database.

One file per agent beside the memory database (`transcripts.sqlite`): a derived index of every session's
messages and context.json summary, rebuilt from the JSON Lines whenever needed (the transcript stays the
source of truth). Each row is one turn, addressed by (session id, kind, index) and by a `rowid` that the
keyword and vector indexes share. The SQLite implementation is store/sqlite/transcripts/statements.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.embedder import EmbedderIdentity
    from openclaw_cli.memory.store.vector_codec import VectorFormat

KINDS = ("message", "summary")


@dataclass(frozen=True)
class Turn:
    """One indexed message (kind `message`, `index` = its idx) or summary (kind `summary`, `index` = the
    summary's checkpoint: it covers messages 0..index)."""

    session_id: str
    session_key: str
    kind: str
    index: int
    role: str
    sender: str | None
    ts: str | None
    text: str


@dataclass(frozen=True)
class TurnFilter:
    """Which rows a search may return. `person`: only sessions this person took part in (None: every
    session, the owner's view); `sessions`/`keys`: only these session ids or session keys (empty: any);
    `since`/`until`: ISO
    timestamps, `until` exclusive; summaries have no role and pass a role filter only when none is set."""

    person: str | None = None
    sessions: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    role: str | None = None
    since: str | None = None
    until: str | None = None


@dataclass(frozen=True)
class SessionProgress:
    """How far a session is indexed: the bytes of messages.jsonl read, and the summary checkpoint indexed."""

    messages_bytes: int = 0
    summary_checkpoint: int | None = None
    # Which file was read ("dev:inode"): a purge rewrites messages.jsonl, and its rows must go with it.
    file_id: str = ""
    context_mtime_ns: int = 0
    # Archived and indexed to its end: an archived session takes no more messages, so a catch-up skips it
    # (a purge that rewrites one re-indexes it explicitly).
    final: bool = False


class TranscriptStorage(Protocol):
    """One transcript index. Methods that write must be called inside `transaction()`."""

    def transaction(self) -> AbstractContextManager[None]: ...

    def close(self) -> None: ...

    def add_turns(self, turns: Sequence[Turn]) -> int:
        """Index these turns (one already indexed at the same address is replaced); returns how many."""
        ...

    def add_people(self, session_id: str, people: Iterable[str], *, only: bool = False) -> None:
        """Record that these people took part in the session (`only`: they alone do)."""
        ...

    def progress(self, session_id: str) -> SessionProgress: ...

    def set_progress(self, session_id: str, progress: SessionProgress) -> None: ...

    def indexed_sessions(self) -> dict[str, int]:
        """Session id -> number of indexed messages, for every session with any row or progress."""
        ...

    def forget_session(self, session_id: str) -> int:
        """Remove a session's rows, vectors, people and progress; returns the rows removed."""
        ...

    def forget_summary(self, session_id: str) -> None: ...

    def keyword_candidates(
        self, terms: Sequence[str], where: TurnFilter, pool: int
    ) -> list[tuple[int, float]]:
        """(rowid, BM25 score) of the best `pool` rows holding any of `terms` that `where` allows."""
        ...

    def document_counts(self, terms: Sequence[str]) -> dict[str, int]: ...

    def store_size(self) -> int: ...

    def indexed_terms(self, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """The keyword-index text of these rows (and an empty second field, as the memory index has)."""
        ...

    def turns(self, rowids: Sequence[int]) -> dict[int, tuple[Turn, str]]:
        """(turn, language) of these rows."""
        ...

    def neighbour_rowid(self, turn: Turn, step: int) -> int | None: ...

    def neighbour(self, turn: Turn, step: int) -> Turn | None:
        """The message `step` places before (-1) or after (+1) `turn` in its session."""
        ...

    def allowed(self, rowids: Sequence[int], where: TurnFilter) -> set[int]: ...

    def sender_names(self) -> frozenset[str]:
        """The senders of the indexed turns (a name a query may ask about)."""
        ...

    def vector_identity(self) -> dict[str, object] | None: ...

    def pending(self, limit: int, where: TurnFilter) -> list[tuple[int, str]]:
        """(rowid, text) of rows `where` allows that have no vector yet, newest first."""
        ...

    def pending_count(self, where: TurnFilter) -> int:
        """How many rows `where` allows have no vector yet."""
        ...

    def put_vectors(self, identity: EmbedderIdentity, vectors: dict[int, np.ndarray]) -> None: ...

    def vector_generation(self) -> int:
        """A number that changes whenever stored vectors are removed (a warm copy must then reload)."""
        ...

    def vectors_after(self, vid: int, *, with_int8: bool = False) -> tuple[int, np.ndarray, bytes, bytes]:
        """(the last vector id, turn rows (int64), their sign words joined, their int8 rows joined when
        `with_int8` (else b"")) of the vectors stored after vector id `vid`, row for row (no rows when none
        are)."""
        ...

    def int8_rows(self, rowids: Sequence[int]) -> tuple[list[int], bytes]:
        """(the rows of these that have a vector, their int8 vectors joined in that order)."""
        ...

    def rowids_where(self, where: TurnFilter) -> list[int]:
        """Every row `where` allows."""
        ...

    def vector_format(self) -> VectorFormat: ...

    def read_vectors(self, rowids: Sequence[int]) -> dict[int, np.ndarray]: ...

    def sessions_of(self, person: str) -> list[str]: ...

    def people_of(self, session_id: str) -> list[str]: ...

    def has_key(self, key: str) -> bool: ...

    def drop_vectors(self) -> None:
        """Forget every vector (the embedder changed): rows are embedded again as searches need them."""
        ...
