"""What the use cases may ask of one agent's memory, and what a caller gives to add a memory.

`MemoryService` (service.py) is the one composition point: it builds the embedder, opens the stores and
runs search, and it calls the use cases (writing, upkeep, workspace). Those use cases need a few of its
services back (the store a scope lives in, the settings, a search) without importing it, which would make
a circle: they type against `AgentMemory` here, which `MemoryService` implements.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from openclaw_cli.config.loading import MemorySettings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.embedding.onnx_embedder import Embedder
    from openclaw_cli.memory.search.result import SearchRequest, SearchResult
    from openclaw_cli.memory.store.memory_store import MemoryStore
    from openclaw_cli.memory.store.records import MemoryRecord


@dataclass(frozen=True)
class NewMemory:
    """What a caller gives to add a memory; everything else is derived."""

    l0: str
    category: str = "note"
    scope: str = "user"
    user_id: str | None = None
    l1: str | None = None
    l2: str | None = None
    record_id: str | None = None
    created_at: datetime | None = None
    source: dict[str, Any] | None = None
    attribute: str | None = None


def record_of(item: NewMemory, agent_id: str, max_chars: int) -> MemoryRecord:
    """The record `item` asks for, written by `agent_id`: every field checked (texts up to `max_chars`),
    a user-scope memory without a user given belonging to the default user."""
    from openclaw_cli.memory.store import records as rec
    from openclaw_cli.memory.store.record_rows import new_record

    l0 = rec.check_text("text", item.l0, max_chars, required=True)
    assert l0 is not None
    scope = rec.validate_scope(item.scope)
    default_user = rec.DEFAULT_USER if scope == "user" else None
    return new_record(
        # An empty id is a mistake (`--id ""`), not a request for a new one.
        record_id=rec.new_record_id() if item.record_id is None else rec.validate_record_id(item.record_id),
        l0=l0,
        agent_id=agent_id,
        scope=scope,
        user_id=default_user if item.user_id is None else rec.validate_user(item.user_id),
        category=rec.validate_category(item.category),
        l1=rec.check_text("l1", item.l1, max_chars),
        l2=rec.check_text("l2", item.l2, max_chars),
        created_at=item.created_at,
        source=item.source,
        attribute=rec.validate_attribute(item.attribute),
    )


class AgentMemory(Protocol):
    """One agent's memory as the use cases see it: where each scope lives, its stores, its search."""

    home: Home
    agent_id: str
    settings: MemorySettings

    def db_path(self, scope: str) -> Path: ...

    def db_paths(self) -> list[Path]: ...

    def store(self, path: Path, *, create: bool = True) -> MemoryStore: ...

    def existing_stores(self) -> Iterator[MemoryStore]: ...

    def damage_guard(self) -> AbstractContextManager[None]: ...

    def embedder(self) -> Embedder: ...

    def build_record(self, item: NewMemory) -> MemoryRecord: ...

    def search(self, request: SearchRequest, now: datetime | None = None) -> SearchResult: ...

    def record_hits(self, record_ids: Sequence[str], now: datetime | None = None) -> list[str]:
        """Review the hits of one search, best first (the rank rates each review)."""
        ...

    def check_indexes(self) -> list[Any]: ...

    def repair_indexes(self, progress: Callable[[int], None] | None = None) -> list[Any]: ...

    def close(self) -> None: ...
