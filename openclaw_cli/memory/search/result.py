"""What a search asks and what it answers: the request, each hit, the result with its analysis.

Kept apart from search/pipeline.py (which re-exports them) so the searcher's module holds the pipeline alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.memory.search.candidate import Candidate
from openclaw_cli.memory.search.explain.data import details, query_words
from openclaw_cli.memory.search.profiles import SearchProfile
from openclaw_cli.memory.store.records import MemoryRecord, iso

MAX_QUERY_CHARS = 2000
MAX_K = 200
Mode = Literal["hybrid", "bm25", "vector"]


@dataclass(frozen=True)
class SearchRequest:
    query: str
    k: int = 10
    user_id: str | None = None
    scopes: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    mode: Mode = "hybrid"
    explain: bool = False
    all_results: bool = False  # include results below the relevance floor


@dataclass
class SearchHit:
    record: MemoryRecord
    candidate: Candidate
    store_label: str = ""
    profile: SearchProfile | None = None  # of the store it came from: how its legs were fused

    def to_dict(self, explain: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.record.id,
            "score": round(self.candidate.score, 4),
            "category": self.record.category,
            "scope": self.record.scope,
            "userId": self.record.user_id,
            "l0": self.record.l0,
            "createdAt": iso(self.record.created_at),
        }
        location = note_location(self.record.source)
        if location is not None:
            out["location"] = location
        if explain:
            out["explain"] = details(self.candidate, self.record.language, self.profile)
        return out


def note_location(source: dict[str, Any] | None) -> str | None:
    """`path:start-end` of a chunk of workspace Markdown (workspace/markdown_index.py), else None."""
    if not source or "path" not in source or "startLine" not in source:
        return None
    return f"{source['path']}:{source['startLine']}-{source.get('endLine', source['startLine'])}"


@dataclass
class SearchResult:
    hits: list[SearchHit]
    timings_ms: dict[str, float] = field(default_factory=dict)
    terms: list[str] = field(default_factory=list)
    vector_weight: float = 0.0
    unknown_share: float | None = None
    warnings: list[str] = field(default_factory=list)
    profile: SearchProfile | None = None
    query: str = ""
    floor: float | None = None  # the relevance floor this query was held to (none with --all)
    # With `memory search --expand` (query_expansion.search_expanded): the model, whether it was asked
    # and the phrasings it gave; None for a search that could not expand.
    expansion: dict[str, Any] | None = None

    def words(self) -> dict[str, Any]:
        """The words searched as typed, each with its terms, and the words left out (for --explain)."""
        searched, left_out = query_words(self.query, self.terms)
        return {"words": searched, "leftOut": left_out}

    def to_dict(self, request: SearchRequest) -> dict[str, Any]:
        return {
            "query": request.query,
            "k": request.k,
            "mode": request.mode,
            "results": [hit.to_dict(request.explain) for hit in self.hits],
            "timingsMs": {key: round(value, 3) for key, value in self.timings_ms.items()},
            "analysis": {
                "terms": self.terms,
                "searchedAs": None,  # kept for readers of the format: the query is searched as typed
                "englishWeight": self.vector_weight,
                "unknownShare": self.unknown_share,
                "floor": self.floor,
                "profile": None if self.profile is None else self.profile.to_dict(),
                **(self.words() if request.explain else {}),
            },
            "warnings": self.warnings,
            **({} if self.expansion is None else {"expansion": self.expansion}),
        }


def validate_request(request: SearchRequest) -> None:
    if not request.query or not request.query.strip():
        raise InvalidInput("the query is empty", hint="give some words to search for")
    if len(request.query) > MAX_QUERY_CHARS:
        raise InvalidInput(
            f"the query is {len(request.query)} characters, over the limit of {MAX_QUERY_CHARS}"
        )
    if "\x00" in request.query:
        raise InvalidInput("the query contains a NUL character")
    if not 1 <= request.k <= MAX_K:
        raise InvalidInput(f"k must be between 1 and {MAX_K}, not {request.k}")


def merge_results(results: list[SearchResult], k: int) -> SearchResult:
    """Several databases' results for one request as one: each memory once, best first, the top `k`;
    warnings and stage timings added up."""
    merged = results[0]
    seen = {hit.record.id for hit in merged.hits}
    for other in results[1:]:
        merged.hits += [hit for hit in other.hits if hit.record.id not in seen]
        merged.warnings += other.warnings
        for stage, value in other.timings_ms.items():
            merged.timings_ms[stage] = merged.timings_ms.get(stage, 0.0) + value
    merged.hits.sort(key=lambda hit: -hit.candidate.score)
    merged.hits = merged.hits[:k]
    return merged
