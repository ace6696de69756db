"""The agent's memory_search with `sources` other than the default ["memory"] (seed 003 §4.2): the person's
memories (memory/inject.recall, as the plain tool) and the transcript turns they may see (the session_search
tool's own search), merged by memory/search/sources.py into one ranking, each hit marked with its source."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openclaw_cli.memory.inject import Expander
    from openclaw_cli.memory.service import MemoryService

_TURN_FIELDS = ("sessionKey", "index", "role", "sender", "ts", "text", "kind")


def search_both(
    query: str,
    limit: int,
    sources: Sequence[str],
    memory: MemoryService,
    user_id: str | None,
    session_search: Callable[[str, int], dict[str, Any]] | None,
    expander: Expander | None,
    guard: AbstractContextManager[Any],
    notes: bool,
) -> dict[str, Any]:
    """`session_search` is bound to the person of the turn (agent/services.search_transcripts): their own
    sessions, every one for the owner, none without an identity; None where no transcripts exist."""
    from openclaw_cli.memory.inject import recall
    from openclaw_cli.memory.search.sources import memory_ids, search_sources

    def memory_leg() -> dict[str, Any]:
        found, warnings = recall(memory, query, limit, user_id, expander=expander, lock=guard, notes=notes)
        return {"results": [hit.to_dict(False) for hit in found], "warnings": warnings}

    def sessions_leg() -> dict[str, Any]:
        assert session_search is not None
        with guard:  # as the session_search tool runs it
            return session_search(query, limit)

    merged = search_sources(
        sources,
        limit,
        memory_leg,
        None if session_search is None else sessions_leg,
        query=query,
    )
    with guard:
        memory.record_hits(memory_ids(merged))  # recalled by the model: an FSRS review
    return {"results": [_shown(hit) for hit in merged["results"]], "warnings": merged["warnings"]}


def _shown(hit: dict[str, Any]) -> dict[str, Any]:
    """What the model reads of a hit: a memory's id, category and text (as the plain tool), a turn's place."""
    if hit["source"] == "memory":
        return {
            "source": "memory",
            "id": hit["id"],
            "category": hit["category"],
            "text": hit["l0"],
            "score": hit["score"],
        }
    return {"source": "sessions", **{name: hit.get(name) for name in _TURN_FIELDS}, "score": hit["score"]}
