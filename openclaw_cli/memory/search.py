"""Hybrid retrieval (seed 000 §4): BM25 + vectors, weighted RRF, optional rerank, × retrievability.

Every stage is timed; with `explain` each result carries its ranks and scores from each stage.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from openclaw_cli.errors import InvalidInput
from openclaw_cli.memory import vectors
from openclaw_cli.memory.forgetting import retrievability
from openclaw_cli.memory.records import MemoryRecord, iso
from openclaw_cli.memory.text import fts_match, query_terms

if TYPE_CHECKING:
    from openclaw_cli.config import SearchSettings
    from openclaw_cli.memory.embed import Embedder, QueryEmbedding
    from openclaw_cli.memory.rerank import Reranker
    from openclaw_cli.memory.store import MemoryStore

MAX_QUERY_CHARS = 2000
COMMON_TERM_SHARE = 0.05
COMMON_TERM_MIN_DOCS = 1000
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


@dataclass
class Candidate:
    rowid: int
    bm25_rank: int | None = None
    bm25_score: float | None = None
    vector_rank: int | None = None
    vector_score: float | None = None
    fused: float = 0.0
    rerank_score: float | None = None
    retrievability: float = 1.0
    score: float = 0.0


@dataclass
class SearchHit:
    record: MemoryRecord
    candidate: Candidate
    store_label: str = ""

    def to_dict(self, explain: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.record.id,
            "score": round(self.candidate.score, 6),
            "category": self.record.category,
            "scope": self.record.scope,
            "userId": self.record.user_id,
            "l0": self.record.l0,
            "createdAt": iso(self.record.created_at),
        }
        if explain:
            c = self.candidate
            out["explain"] = {
                "bm25Rank": c.bm25_rank,
                "bm25Score": None if c.bm25_score is None else round(c.bm25_score, 4),
                "vectorRank": c.vector_rank,
                "vectorScore": None if c.vector_score is None else round(c.vector_score, 4),
                "fused": round(c.fused, 6),
                "rerankScore": c.rerank_score,
                "retrievability": round(c.retrievability, 4),
            }
        return out


@dataclass
class SearchResult:
    hits: list[SearchHit]
    timings_ms: dict[str, float] = field(default_factory=dict)
    terms: list[str] = field(default_factory=list)
    vector_weight: float = 0.0
    unknown_share: float | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self, request: SearchRequest) -> dict[str, Any]:
        return {
            "query": request.query,
            "k": request.k,
            "mode": request.mode,
            "results": [hit.to_dict(request.explain) for hit in self.hits],
            "timingsMs": {key: round(value, 3) for key, value in self.timings_ms.items()},
            "analysis": {
                "terms": self.terms,
                "vectorWeight": self.vector_weight,
                "unknownShare": self.unknown_share,
            },
            "warnings": self.warnings,
        }


class _Clock:
    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._start = self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = self.timings.get(stage, 0.0) + (now - self._last) * 1000
        self._last = now

    def total(self) -> None:
        self.timings["total"] = (time.perf_counter() - self._start) * 1000


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


class HybridSearcher:
    """Runs requests against one store with fixed settings; reuse it to keep models and vectors warm."""

    def __init__(
        self,
        store: MemoryStore,
        settings: SearchSettings,
        embedder: Embedder | None,
        reranker: Reranker | None = None,
        *,
        warm: bool = False,
    ) -> None:
        self.store = store
        self.settings = settings
        self.embedder = embedder
        self.reranker = reranker
        self.warm = warm

    def search(self, request: SearchRequest, now: datetime) -> SearchResult:
        validate_request(request)
        clock = _Clock()
        result = SearchResult(hits=[])
        result.terms = query_terms(request.query)
        clock.lap("analyse")
        where = vectors.VectorFilter(request.user_id, request.scopes, request.categories)
        pool = max(self.settings.candidates, request.k)
        bm25 = self._bm25(result.terms, where, pool) if request.mode != "vector" else []
        clock.lap("bm25")
        vec_hits, weight = self._vectors(request, where, pool, result, clock)
        merged = self._fuse(bm25, vec_hits, weight if request.mode != "bm25" else 0.0, request.mode)
        clock.lap("fuse")
        records = self.store.by_rowids(c.rowid for c in merged)
        merged = [c for c in merged if c.rowid in records]
        if self.reranker is not None and merged:
            merged = self._rerank(request.query, merged, records, result)
            clock.lap("rerank")
        for candidate in merged:
            candidate.retrievability = retrievability(records[candidate.rowid].fsrs, now)
            base = candidate.fused if candidate.rerank_score is None else _sigmoid(candidate.rerank_score)
            candidate.score = base * candidate.retrievability
        merged.sort(key=lambda c: (-c.score, _category_order(records[c.rowid].category), c.rowid))
        result.hits = [SearchHit(records[c.rowid], c) for c in merged[: request.k]]
        clock.lap("score")
        clock.total()
        result.timings_ms = clock.timings
        return result

    def _bm25(self, terms: Sequence[str], where: vectors.VectorFilter, pool: int) -> list[tuple[int, float]]:
        expression = fts_match(self._without_common_terms(terms))
        if expression is None:
            return []
        clause, params = where.sql()
        clause = (
            clause.replace("user_id", "r.user_id")
            .replace("scope", "r.scope")
            .replace("category", "r.category")
        )
        sql = (
            "SELECT f.rowid, bm25(records_fts, 1.0, 0.4) AS s FROM records_fts f JOIN records r ON r.rowid = f.rowid "
            f"WHERE records_fts MATCH ? AND r.deleted = 0{clause} ORDER BY s LIMIT ?"
        )
        return [
            (int(rowid), -float(score))
            for rowid, score in self.store.conn.execute(sql, (expression, *params, pool))
        ]

    def _without_common_terms(self, terms: Sequence[str]) -> Sequence[str]:
        """Leave out terms found in a large share of all memories when the query has rarer ones.

        Every match is scored, so a term in 10% of 100k memories costs ~20 ms while its IDF adds
        little to the ranking; the rarer terms decide it anyway. In small stores nothing is dropped.
        """
        if len(terms) < 2:
            return terms
        conn = self.store.conn
        size = conn.execute("SELECT max(rowid) FROM records").fetchone()  # O(log n) upper bound of the count
        limit = max(COMMON_TERM_MIN_DOCS, COMMON_TERM_SHARE * int((size and size[0]) or 0))
        marks = ", ".join("?" for _ in terms)
        counts = dict(
            conn.execute(f"SELECT term, doc FROM temp.records_vocab WHERE term IN ({marks})", list(terms))
        )
        kept = [t for t in terms if counts.get(t, 0) <= limit]
        return kept or [min(terms, key=lambda t: counts.get(t, 0))]

    def _vectors(
        self,
        request: SearchRequest,
        where: vectors.VectorFilter,
        pool: int,
        result: SearchResult,
        clock: _Clock,
    ) -> tuple[list[tuple[int, float]], float]:
        if request.mode == "bm25" or self.embedder is None:
            return [], 0.0
        table = vectors.current_table(self.store.conn)
        if table is None:
            return [], 0.0
        if not vectors.identity_matches(self.store.conn, self.embedder.identity):
            result.warnings.append(
                "the configured embedder differs from the one this index was built with: vector search is off "
                "until `openclaw memory index --rebuild` re-embeds it"
            )
            return [], 0.0
        from openclaw_cli.memory.embed import EmbeddingUnavailable

        try:
            query: QueryEmbedding = self.embedder.embed_query(request.query)
        except EmbeddingUnavailable as exc:
            result.warnings.append(f"{exc.message}: keyword results only")
            return [], 0.0
        clock.lap("embed")
        result.unknown_share = round(query.unknown_share, 4)
        weight = self.vector_weight(query.unknown_share)
        if self.warm:
            hits = self.store.vector_matrix().knn(query.vector, pool, where)
        else:
            hits = vectors.knn(self.store.conn, table, query.vector, pool, where)
        clock.lap("vector")
        hits = [(rowid, score) for rowid, score in hits if score >= self.settings.min_vector_score]
        result.vector_weight = weight
        return hits, weight

    def vector_weight(self, unknown_share: float) -> float:
        """The vector weight, lowered when the model could not read much of the query (e.g. Chinese)."""
        weight = self.settings.vector_weight
        if unknown_share > self.settings.unknown_token_threshold:
            weight *= max(0.0, 1.0 - unknown_share)
        return weight

    def _fuse(
        self, bm25: list[tuple[int, float]], vec: list[tuple[int, float]], vec_weight: float, mode: Mode
    ) -> list[Candidate]:
        k = self.settings.rrf_k
        bm25_weight = self.settings.bm25_weight if mode != "vector" else 0.0
        if mode == "vector":
            vec_weight = self.settings.vector_weight or 1.0
        if mode == "bm25":
            bm25_weight = self.settings.bm25_weight or 1.0
        by_row: dict[int, Candidate] = {}
        for rank, (rowid, score) in enumerate(bm25, start=1):
            cand = by_row.setdefault(rowid, Candidate(rowid))
            cand.bm25_rank, cand.bm25_score = rank, score
            cand.fused += bm25_weight / (k + rank)
        for rank, (rowid, score) in enumerate(vec, start=1):
            cand = by_row.setdefault(rowid, Candidate(rowid))
            cand.vector_rank, cand.vector_score = rank, score
            cand.fused += vec_weight / (k + rank)
        # A keyword-only hit keeps its BM25 share: nothing is dropped for lacking a vector rank. A candidate
        # with no weight at all (a vector hit while the vector weight is 0) carries no evidence and goes.
        return sorted((c for c in by_row.values() if c.fused > 0), key=lambda c: (-c.fused, c.rowid))

    def _rerank(
        self, query: str, merged: list[Candidate], records: dict[int, MemoryRecord], result: SearchResult
    ) -> list[Candidate]:
        from openclaw_cli.memory.rerank import RerankUnavailable

        assert self.reranker is not None
        top = merged[: self.settings.rerank.top_n]
        try:
            scores = self.reranker.rerank(query, [records[c.rowid].l0 for c in top])
        except RerankUnavailable as exc:
            result.warnings.append(f"{exc.message}: results are in fused order")
            return merged
        for candidate, score in zip(top, scores, strict=True):
            candidate.rerank_score = float(score)
        return sorted(top, key=lambda c: -(c.rerank_score or 0.0))


def _sigmoid(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, value))))


_ORDER = {"insight": 0}


def _category_order(category: str) -> int:
    # Insights come before facts at equal scores (seed 000 §7).
    return _ORDER.get(category, 1)
