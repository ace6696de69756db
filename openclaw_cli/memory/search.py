"""Hybrid retrieval (seed 000 §4): keyword and vector candidates, one relevance in [0, 1], optional
rerank, x retrievability.

Rank fusion (RRF) throws the strength of the evidence away: a memory holding the one rare word of a query
and a vaguely similar one can swap places depending on the embedder. Here each leg gives a relevance in
[0, 1] that means the same for every query: the keyword leg the specificity-weighted share of the query's
terms a memory holds (lexical.py), the vector leg a similarity calibrated per embedder (profiles.py,
semantic.py). They combine as independent evidence, 1 - (1 - lexical)(1 - semantic), so strong evidence on
either side wins and agreement ranks highest. Results below the profile's relevance floor are left out.

Every stage is timed; with `explain` each result carries its ranks and scores from each stage.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from openclaw_cli.errors import InvalidInput
from openclaw_cli.memory import lexical, semantic, vectors
from openclaw_cli.memory.candidate import Candidate, by_relevance
from openclaw_cli.memory.forgetting import retrievability
from openclaw_cli.memory.profiles import SearchProfile, profile_for
from openclaw_cli.memory.records import MemoryRecord, iso
from openclaw_cli.memory.search_context import ContextSteps
from openclaw_cli.memory.text import detect_language, is_stopword, query_terms

if TYPE_CHECKING:
    from openclaw_cli.config import SearchSettings
    from openclaw_cli.memory.embed import Embedder, QueryEmbedding
    from openclaw_cli.memory.record_rows import RankingFacts
    from openclaw_cli.memory.rerank import Reranker
    from openclaw_cli.memory.store import MemoryStore

MAX_QUERY_CHARS = 2000
MAX_K = 200
# A query of stopwords only ("the", "的") still searches them, but matching them is weak evidence.
STOPWORD_WEIGHT = 0.2
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


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


@dataclass
class SearchHit:
    record: MemoryRecord
    candidate: Candidate
    store_label: str = ""

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
            c = self.candidate
            out["explain"] = {
                "relevance": round(c.relevance, 4),
                "lexical": round(c.lexical, 4),
                "semantic": round(c.semantic, 4),
                "bm25Rank": c.bm25_rank,
                "bm25Score": _round(c.bm25_score),
                "vectorRank": c.vector_rank,
                "similarity": _round(c.vector_score),
                "legSimilarities": None if c.legs is None else [round(v, 4) for v in c.legs],
                "rerankScore": _round(c.rerank_score),
                "retrievability": round(c.retrievability, 4),
                "language": self.record.language,
                "context": dict(c.context),
            }
        return out


def note_location(source: dict[str, Any] | None) -> str | None:
    """`path:start-end` of a chunk of workspace Markdown (markdown_index.py), else None."""
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
    searched_as: str | None = None  # the query with the user's own names as pronouns, when it differs
    floor: float | None = None  # the relevance floor this query was held to (none with --all)

    def to_dict(self, request: SearchRequest) -> dict[str, Any]:
        return {
            "query": request.query,
            "k": request.k,
            "mode": request.mode,
            "results": [hit.to_dict(request.explain) for hit in self.hits],
            "timingsMs": {key: round(value, 3) for key, value in self.timings_ms.items()},
            "analysis": {
                "terms": self.terms,
                "searchedAs": self.searched_as,
                "englishWeight": self.vector_weight,
                "unknownShare": self.unknown_share,
                "floor": self.floor,
                "profile": None if self.profile is None else self.profile.to_dict(),
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
        self.profile = profile_for(vectors.stored_identity(store.conn), settings)
        self.context = ContextSteps(store, settings)

    def search(self, request: SearchRequest, now: datetime) -> SearchResult:
        validate_request(request)
        clock = _Clock()
        result = SearchResult(hits=[], profile=self.profile)
        self._best_evidence = 0.0
        text = self.context.as_searched(request.query, request.user_id)
        result.searched_as = text if text != request.query else None
        result.terms = query_terms(text)
        if not result.terms:
            result.warnings.append("the query has no words or numbers to search for")
            return result
        self._term_weights(result.terms)
        self._every_match_listed = False
        clock.lap("analyse")
        where = vectors.VectorFilter(request.user_id, request.scopes, request.categories)
        pool = max(self.settings.candidates, request.k)
        by_row: dict[int, Candidate] = {}
        if request.mode != "vector":
            self._keyword_leg(result.terms, where, pool, by_row)
        clock.lap("bm25")
        query = self._embed(request, result, clock)
        if query is not None:
            self._vector_leg(query, where, pool, by_row, clock)
        facts = self.store.ranking_facts(by_row)
        merged = [c for c in by_row.values() if c.rowid in facts]
        self._relevance(merged, facts, result, request, query)
        self.context.lend_to_neighbours(merged, facts, where)
        self.context.weigh_answer_kind(merged, facts, request.query)
        self.context.weigh_utterances(merged, facts)
        clock.lap("fuse")
        if self.reranker is not None and merged:
            merged = self._rerank(request.query, merged, facts, result)
            clock.lap("rerank")
        merged = self._floor(merged, request, result)
        for candidate in merged:
            candidate.retrievability = retrievability(facts[candidate.rowid].fsrs(), now)
            candidate.score = candidate.relevance * candidate.retrievability
        merged.sort(key=lambda c: (-c.score, _category_order(facts[c.rowid].category), c.rowid))
        top = merged[: request.k]
        records = self.store.by_rowids(c.rowid for c in top)
        result.hits = [SearchHit(records[c.rowid], c) for c in top if c.rowid in records]
        clock.lap("score")
        clock.total()
        result.timings_ms = clock.timings
        return result

    # ------------------------------------------------------------------ keyword leg

    def _term_weights(self, terms: Sequence[str]) -> None:
        conn = self.store.conn
        self._size = lexical.store_size(conn)
        self._counts = lexical.document_counts(conn, terms)
        self._weights = {
            t: lexical.specificity(self._counts.get(t, 0), self._size)
            * (STOPWORD_WEIGHT if is_stopword(t) else 1.0)
            for t in terms
        }

    def _keyword_leg(
        self,
        terms: Sequence[str],
        where: vectors.VectorFilter,
        pool: int,
        by_row: dict[int, Candidate],
    ) -> None:
        searched = lexical.without_common_terms(terms, self._counts, self._size)
        hits = lexical.bm25_candidates(self.store.conn, searched, where, pool)
        # A short list holds every memory matching a searched term: the others hold none of them.
        self._every_match_listed = len(hits) < pool and len(searched) == len(terms)
        for rank, (rowid, score) in enumerate(hits, start=1):
            cand = by_row.setdefault(rowid, Candidate(rowid))
            cand.bm25_rank, cand.bm25_score = rank, score

    # ------------------------------------------------------------------ vector leg

    def _embed(self, request: SearchRequest, result: SearchResult, clock: _Clock) -> QueryEmbedding | None:
        if request.mode == "bm25":
            return None
        if self.embedder is None or vectors.current_table(self.store.conn) is None:
            # Degraded search must say so: every vector is pending (the embedder failed when they were stored).
            pending = next(
                iter(
                    self.store.conn.execute(
                        "SELECT count(*) FROM records WHERE deleted = 0 AND vector_status = 'pending'"
                    )
                )
            )[0]
            if pending:
                result.warnings.append(
                    f"{pending} memories have no vector yet (the embedder was unavailable when they were "
                    "stored): keyword results only; `openclaw memory index` fills them in"
                )
            return None
        from openclaw_cli.memory.embed import EmbeddingUnavailable

        try:  # an API embedder without configured dimensions calls the API to learn its identity
            if not vectors.identity_matches(self.store.conn, self.embedder.identity):
                result.warnings.append(
                    "the configured embedder differs from the one this index was built with: vector search "
                    "is off until `openclaw memory index --rebuild` re-embeds it"
                )
                return None
            query: QueryEmbedding = self.embedder.embed_query(result.searched_as or request.query)
        except EmbeddingUnavailable as exc:
            result.warnings.append(f"{exc.message}: keyword results only")
            return None
        clock.lap("embed")
        result.unknown_share = round(query.unknown_share, 4)
        result.vector_weight = round(
            semantic.english_weight(self.profile, query.unknown_share)
            if len(self.profile.legs) > 1
            else semantic.single_leg_weight(self.profile, query.unknown_share),
            4,
        )
        return query

    def _vector_leg(
        self,
        query: QueryEmbedding,
        where: vectors.VectorFilter,
        pool: int,
        by_row: dict[int, Candidate],
        clock: _Clock,
    ) -> None:
        source = self._source()
        hubs = self._hub_correction()
        found = semantic.candidates(source, query, self.profile, pool, where, hubs)
        for rowid, legs in found.items():
            cand = by_row.setdefault(rowid, Candidate(rowid))
            cand.legs = legs
        # Rows the keyword leg found but the vector scans did not: their similarity, for an exact fusion.
        missing = [rowid for rowid, cand in by_row.items() if cand.legs is None]
        if missing:
            for rowid, legs in semantic.leg_similarities(source, query, self.profile, missing, hubs).items():
                by_row[rowid].legs = legs
        clock.lap("vector")

    def _hub_correction(self) -> semantic.HubCorrection | None:
        """The store's centroid (kept by the store until the next write) with the profile's weight."""
        if self.profile.hub_weight <= 0:
            return None
        found = self.store.vector_centroid(self.profile.legs)
        return None if found is None else semantic.HubCorrection(found, self.profile.hub_weight)

    def _source(self) -> semantic.VectorSource:
        table = vectors.current_table(self.store.conn)
        assert table is not None
        if self.warm:
            return self.store.vector_matrix()
        return vectors.TableSource(self.store.conn, table)

    # ------------------------------------------------------------------ fusion

    def _relevance(
        self,
        merged: list[Candidate],
        facts: dict[int, RankingFacts],
        result: SearchResult,
        request: SearchRequest,
        query: QueryEmbedding | None,
    ) -> None:
        profile = self.profile
        # Term coverage is read from each candidate's FTS row (~15 us each); when the keyword leg listed
        # every match, the vector-only candidates are known to hold no query term and are not read.
        readable = [c.rowid for c in merged if c.bm25_rank is not None or not self._every_match_listed]
        lexical_scores = (
            lexical.relevance(self.store.conn, readable, result.terms, self._weights)
            if request.mode != "vector"
            else {}
        )
        english = result.vector_weight if query is not None else 0.0
        query_language = detect_language(request.query)
        # A query of stopwords only ("呃", "的了吗", "the") has no topic: its meaning counts as little as
        # its words, or the models' nearest sentence would always look like an answer.
        topic = STOPWORD_WEIGHT if all(is_stopword(t) for t in result.terms) else 1.0
        for cand in merged:
            cand.lexical = lexical_scores.get(cand.rowid, 0.0) ** profile.lexical_exponent
            if cand.legs is not None and query is not None:
                language = facts[cand.rowid].language
                similarity = semantic.combine(cand.legs, english, language)
                if len(profile.legs) == 1:
                    similarity *= english  # a lone English model's vector counts less for unreadable queries
                # A profile measured with a multilingual model sets a bonus; mixed text is never across.
                similarity += profile.bonus(query_language, language)
                cand.vector_score = similarity
                cand.semantic = profile.semantic(similarity) * topic
            cand.relevance = profile.fuse(cand.lexical, cand.semantic)
        # Whether anything relevant is stored at all is decided on the evidence, before the context
        # weights below move memories about other people or mere questions down.
        self._best_evidence = max((c.relevance for c in merged), default=0.0)
        self.context.weigh_subjects(merged, facts, result.searched_as or request.query, request.user_id)
        ranked = sorted(
            (c for c in merged if c.vector_score is not None), key=lambda c: -(c.vector_score or 0.0)
        )
        for rank, cand in enumerate(ranked, start=1):
            cand.vector_rank = rank
        by_relevance(merged)

    def _floor(
        self, merged: list[Candidate], request: SearchRequest, result: SearchResult
    ) -> list[Candidate]:
        """Nothing when the best result is below the relevance floor; else everything down to the tail floor."""
        if request.all_results:
            return [c for c in merged if c.relevance > 0]
        best = self._best_evidence
        unmatched = not any(self._counts.get(term, 0) for term in result.terms)
        floor = self.profile.floor_for(len(result.terms), unmatched)
        result.floor = floor
        if best < floor:
            if merged:
                result.warnings.append(
                    f"nothing relevant enough (best relevance {best:.2f}, floor "
                    f"{floor:.2f}); --all shows weaker matches"
                )
            return []
        return [c for c in merged if c.relevance >= self.profile.kept_floor()]

    def _rerank(
        self, query: str, merged: list[Candidate], facts: dict[int, RankingFacts], result: SearchResult
    ) -> list[Candidate]:
        """Re-score the best candidates with the cross-encoder, where it helps: pairs in its languages."""
        from openclaw_cli.memory.rerank import RerankUnavailable

        assert self.reranker is not None
        languages = set(self.settings.rerank.languages)
        if languages and detect_language(query) not in languages:
            return merged
        top = [c for c in merged[: self.settings.rerank.top_n]]
        top = [c for c in top if not languages or facts[c.rowid].language in languages]
        if not top:
            return merged
        records = self.store.by_rowids(c.rowid for c in top)
        top = [c for c in top if c.rowid in records]
        try:
            scores = self.reranker.rerank(query, [records[c.rowid].l0 for c in top])
        except RerankUnavailable as exc:
            result.warnings.append(f"{exc.message}: results are in fused order")
            return merged
        for candidate, score in zip(top, scores, strict=True):
            candidate.rerank_score = float(score)
        # The reranker decides the order of the candidates it scored; they keep the relevance values
        # they had between them, so scores stay on the one documented scale and the floors mean the same.
        values = sorted((c.relevance for c in top), reverse=True)
        for candidate, value in zip(sorted(top, key=lambda c: -(c.rerank_score or 0.0)), values, strict=True):
            candidate.relevance = value
        return sorted(merged, key=lambda c: (-c.relevance, -(c.rerank_score or 0.0), c.rowid))


_ORDER = {"insight": 0}


def _category_order(category: str) -> int:
    # Insights come before facts at equal scores (seed 000 §7).
    return _ORDER.get(category, 1)
