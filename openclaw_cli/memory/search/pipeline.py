"""Hybrid retrieval (seed 000 §4): keyword and vector candidates, one relevance in [0, 1], optional
rerank, x retrievability.

Rank fusion (RRF) throws the strength of the evidence away: a memory holding the one rare word of a query
and a vaguely similar one can swap places depending on the embedder. Here each leg gives a relevance in
[0, 1] that means the same for every query: the keyword leg the specificity-weighted share of the query's
terms a memory holds (search/legs/lexical.py), the vector leg a similarity calibrated per embedder (search/profiles.py,
search/legs/semantic.py). They combine as independent evidence, 1 - (1 - lexical)(1 - semantic), so strong evidence on
either side wins and agreement ranks highest. Results below the profile's relevance floor are left out.

The search is an ordered list of named steps (PIPELINE): the core ones here, the hand-set stages in
search/stages.py, each measured by what removing it costs on the held-out half of the eval set. Every step is
timed; with `explain` each result carries its ranks, the fusion and each stage that moved it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from openclaw_cli.memory.search import stages
from openclaw_cli.memory.search.candidate import Candidate, by_relevance
from openclaw_cli.memory.search.context_stages.about import ContextSteps
from openclaw_cli.memory.search.legs import lexical, semantic
from openclaw_cli.memory.search.legs.neighbours import WordVectors, word_vectors
from openclaw_cli.memory.search.profiles import profile_for
from openclaw_cli.memory.search.result import (
    MAX_K,
    MAX_QUERY_CHARS,
    Mode,
    SearchHit,
    SearchRequest,
    SearchResult,
    note_location,
    validate_request,
)
from openclaw_cli.memory.search.stages import STOPWORD_WEIGHT, Pass
from openclaw_cli.memory.search.timing import StepClock
from openclaw_cli.memory.store.vectors import query as vectors
from openclaw_cli.memory.text.analysis import is_stopword, query_terms

__all__ = [
    "MAX_K",
    "MAX_QUERY_CHARS",
    "PIPELINE",
    "STAGES",
    "HybridSearcher",
    "Mode",
    "SearchHit",
    "SearchRequest",
    "SearchResult",
    "note_location",
    "validate_request",
]

if TYPE_CHECKING:
    from openclaw_cli.config.loading import SearchSettings
    from openclaw_cli.memory.embedding.onnx_embedder import Embedder, QueryEmbedding
    from openclaw_cli.memory.embedding.word_table import WordTables
    from openclaw_cli.memory.search.rerank import Reranker
    from openclaw_cli.memory.store.memory_store import MemoryStore


class HybridSearcher:
    """Runs requests against one store with fixed settings; reuse it to keep models and vectors warm.

    `disabled` names stages (stages.STAGES) to leave out: only the ablation benchmark sets it. `context`:
    the context steps of an earlier searcher of the same store and settings, whose per-memory caches a
    warm process keeps across searches (MemoryService makes a searcher per search). `word_tables`: the
    home's tables of single words' vectors, as they were when the search started (embedding/word_table.py)."""

    def __init__(
        self,
        store: MemoryStore,
        settings: SearchSettings,
        embedder: Embedder | None,
        reranker: Reranker | None = None,
        *,
        warm: bool = False,
        disabled: frozenset[str] = frozenset(),
        context: ContextSteps | None = None,
        word_tables: WordTables | None = None,
    ) -> None:
        unknown = disabled - set(STAGES)
        if unknown:
            raise ValueError(f"no such search stages: {sorted(unknown)}")
        self.store = store
        self.settings = settings
        self.embedder = embedder
        self.reranker = reranker
        self.warm = warm
        self.disabled = disabled
        self.profile = profile_for(store.storage.vector_identity(), settings)
        self.context = context if context is not None else ContextSteps(store, settings)
        self.word_tables = word_tables
        if warm:  # repeated searches: rank keyword matches from a copy of the index in memory
            store.storage.keep_keywords_in_memory()

    def search(self, request: SearchRequest, now: datetime) -> SearchResult:
        validate_request(request)
        clock = StepClock()
        where = vectors.VectorFilter(request.user_id, request.scopes, request.categories)
        result = SearchResult(hits=[], profile=self.profile, query=request.query)
        p = Pass(request, now, result, where, request.query)
        try:
            for step in PIPELINE:
                if step.name in self.disabled:
                    continue
                step.run(self, p)
                clock.lap(step.timing)
                if p.finished:
                    break
        finally:
            if p.prefetch is not None:  # never leave a model running at interpreter exit (it aborts)
                p.prefetch.settle()
        clock.total()
        p.result.timings_ms = clock.timings
        return p.result

    # ------------------------------------------------------------------ core steps

    def _analyse(self, p: Pass) -> None:
        """The query's terms and each term's weight (its specificity in this store)."""
        p.result.terms = query_terms(p.text)
        if not p.result.terms:
            p.result.warnings.append("the query has no words or numbers to search for")
            p.finished = True
            return
        if self.embedder is not None and p.request.mode != "bm25":
            # Only a query with terms is embedded: the keyword leg runs meanwhile.
            p.prefetch = semantic.QueryPrefetch(self.embedder, p.text)
        self._term_weights(p.result.terms)

    def _term_weights(self, terms: Sequence[str]) -> None:
        storage = self.store.storage
        self._size = storage.store_size()
        self._counts = storage.document_counts(terms)
        self._weights = {
            t: lexical.specificity(self._counts.get(t, 0), self._size)
            * (STOPWORD_WEIGHT if is_stopword(t) else 1.0)
            for t in terms
        }

    def _keywords(self, p: Pass) -> None:
        """The keyword leg: the best BM25 matches of the query's terms."""
        if p.request.mode == "vector":
            return
        terms = p.result.terms
        searched = lexical.without_common_terms(terms, self._counts, self._size)
        pool = max(self.settings.candidates, p.request.k)
        hits = self.store.storage.keyword_candidates(searched, p.where, pool)
        # A short list holds every memory matching a searched term: the others hold none of them.
        p.every_match_listed = len(hits) < pool and len(searched) == len(terms)
        for rank, (rowid, score) in enumerate(hits, start=1):
            cand = p.by_row.setdefault(rowid, Candidate(rowid))
            cand.bm25_rank, cand.bm25_score = rank, score

    def _keyword_facts(self, p: Pass) -> None:
        """What ranking reads of the keyword hits, read while the query's vector is still being computed
        on other threads: their ranking facts and their share of the query's terms (~1 ms at 100k
        memories, which no longer waits for the embedding). The vector leg's other rows are read after it."""
        rows = list(p.by_row)
        p.facts = self.store.ranking_facts(rows)
        if p.request.mode != "vector":
            p.coverage = lexical.relevance(self.store.storage, rows, p.result.terms, self._weights)

    def _embed(self, p: Pass) -> None:
        """The query's vector, unless the mode, the index or the embedder rules the vector leg out."""
        request, result = p.request, p.result
        if request.mode == "bm25":
            return
        if self.embedder is None or not self.store.storage.has_vectors():
            # Degraded search must say so: every vector is pending (the embedder failed when they were stored).
            pending = self.store.storage.pending_vectors()
            if pending:
                result.warnings.append(
                    f"{pending} memories have no vector yet (the embedder was unavailable when they were "
                    "stored): keyword results only; `openclaw memory index` fills them in"
                )
            return
        from openclaw_cli.memory.embedding.onnx_embedder import EmbeddingUnavailable

        try:  # an API embedder without configured dimensions calls the API to learn its identity
            if not self.store.identity_matches(self.embedder):
                result.warnings.append(
                    "the configured embedder differs from the one this index was built with: vector search "
                    "is off until `openclaw memory index --rebuild` re-embeds it"
                )
                return
            ahead = p.prefetch
            query: QueryEmbedding = (
                ahead.result()
                if ahead is not None and ahead.text == p.text
                else self.embedder.embed_query(p.text)
            )
        except EmbeddingUnavailable as exc:
            result.warnings.append(f"{exc.message}: keyword results only")
            return
        result.unknown_share = round(query.unknown_share, 4)
        result.vector_weight = round(
            semantic.english_weight(self.profile, query.unknown_share)
            if len(self.profile.legs) > 1
            else semantic.single_leg_weight(self.profile, query.unknown_share),
            4,
        )
        p.query = query

    def _vectors(self, p: Pass) -> None:
        """The vector leg: the nearest memories, and every keyword hit's cosines too (an exact fusion)."""
        if p.query is not None:
            source = self._source()
            pool = max(self.settings.candidates, p.request.k)
            # The keyword hits' cosines are read with the nearest rows' (one gather, one product per leg).
            found = semantic.candidates(
                source, p.query, self.profile, pool, p.where, p.hubs, also=list(p.by_row)
            )
            for rowid, legs in found.items():
                p.by_row.setdefault(rowid, Candidate(rowid)).legs = legs
        # The keyword hits were read (keyword_facts): one missing from the facts is not live.
        p.facts.update(self.store.ranking_facts(r for r in p.by_row if r not in p.coverage))
        p.candidates = [c for c in p.by_row.values() if c.rowid in p.facts]

    def any_term_stored(self, terms: Sequence[str]) -> bool:
        """Whether any memory of the store holds one of `terms` (read by `analyse`)."""
        return any(self._counts.get(term, 0) for term in terms)

    def word_vectors(self) -> WordVectors | None:
        """The embedder's cache of single-word vectors (search/legs/neighbours.py), if it has one."""
        return None if self.embedder is None else word_vectors(self.embedder)

    def hub_correction(self) -> semantic.HubCorrection | None:
        """The store's centroid (kept by the store until the next write) with the profile's weight."""
        if self.profile.hub_weight <= 0:
            return None
        found = self.store.vector_centroid(self.profile.legs)
        return None if found is None else semantic.HubCorrection(found, self.profile.hub_weight)

    def _source(self) -> semantic.VectorSource:
        if self.warm or self.store.vectors_in_memory:
            return self.store.vector_matrix()
        return self.store.storage.vector_source()

    def _similarity(self, p: Pass) -> None:
        """One similarity per candidate from its per-model cosines, weighed by the query's and the
        memory's languages (semantic.combine)."""
        if p.query is None:
            return
        english = p.result.vector_weight
        for cand in p.candidates:
            if cand.legs is not None:
                similarity = semantic.combine(cand.legs, english, p.facts[cand.rowid].language)
                if len(self.profile.legs) == 1:
                    similarity *= english  # a lone English model's vector counts less for unreadable queries
                cand.vector_score = similarity

    def _fuse(self, p: Pass) -> None:
        """Keyword share and calibrated meaning, combined as independent evidence (profile.fuse)."""
        profile, terms = self.profile, p.result.terms
        # Term coverage is read from each candidate's FTS row (~15 us each); when the keyword leg listed
        # every match, the vector-only candidates are known to hold no query term and are not read.
        readable = [c.rowid for c in p.candidates if c.bm25_rank is not None or not p.every_match_listed]
        scores: dict[int, float] = {}
        if p.request.mode != "vector":  # the keyword hits' shares were read while the query embedded
            scores = {rowid: p.coverage[rowid] for rowid in readable if rowid in p.coverage}
            rest = [rowid for rowid in readable if rowid not in p.coverage]
            scores.update(lexical.relevance(self.store.storage, rest, terms, self._weights))
        strength = max(self._weights.values(), default=0.0)
        p.full_matches = {rowid for rowid, score in scores.items() if score > 0 and score >= strength - 1e-9}
        for cand in p.candidates:
            cand.lexical = scores.get(cand.rowid, 0.0) ** profile.lexical_exponent
            if cand.vector_score is not None:
                cand.semantic = profile.semantic(cand.vector_score) * p.topic
            cand.relevance = cand.fused = profile.fuse(cand.lexical, cand.semantic)
        # Whether anything relevant is stored at all is decided on the evidence, before the context
        # stages move memories about other people or mere questions down.
        p.best_evidence = max((c.relevance for c in p.candidates), default=0.0)

    def _rank(self, p: Pass) -> None:
        """Each candidate's rank by similarity (for --explain), and the candidates best first."""
        ranked = sorted(
            (c for c in p.candidates if c.vector_score is not None), key=lambda c: -(c.vector_score or 0.0)
        )
        for rank, cand in enumerate(ranked, start=1):
            cand.vector_rank = rank
        by_relevance(p.candidates)

    def _rerank(self, p: Pass) -> None:
        """Re-score the best candidates with the cross-encoder, where it helps: pairs in its languages."""
        if self.reranker is None or not p.candidates:
            return
        from openclaw_cli.memory.search.rerank import rerank_candidates

        rerank_candidates(self.reranker, self.settings.rerank, self.store, p)

    def _floor(self, p: Pass) -> None:
        """Nothing when the best evidence is below the floor; else everything down to the tail floor."""
        if p.request.all_results:
            p.candidates = [c for c in p.candidates if c.relevance > 0]
            return
        floor = self.profile.relevance_floor if p.floor is None else p.floor
        p.result.floor = floor
        if p.best_evidence < floor:
            if p.candidates:
                p.result.warnings.append(
                    f"nothing relevant enough (best relevance {p.best_evidence:.2f}, floor "
                    f"{floor:.2f}); --all shows weaker matches"
                )
            p.candidates = []
            return
        best = max((c.relevance for c in p.candidates), default=0.0)
        p.candidates = [c for c in p.candidates if c.relevance >= p.kept_from(self.profile, best, c.rowid)]

    def _score(self, p: Pass) -> None:
        """Score = relevance x retrievability (how well the memory is remembered); the top k.

        A retrievability is at most 1, so no score exceeds its relevance: once k scores are known, a
        candidate whose relevance is below the k-th best of them cannot enter the top k, nor can any
        after it by relevance. Their retrievability (~4 us each, ~100 candidates a query) is not computed."""
        facts, k = p.facts, p.request.k
        kth: list[float] = []  # the k best scores so far, a min-heap
        scored: list[Candidate] = []
        for candidate in sorted(p.candidates, key=lambda c: -c.relevance):
            if len(kth) == k and candidate.relevance < kth[0]:
                break
            candidate.retrievability = facts[candidate.rowid].retrievability(p.now)
            candidate.score = candidate.relevance * candidate.retrievability
            scored.append(candidate)
            if len(kth) < k:
                heapq.heappush(kth, candidate.score)
            elif candidate.score > kth[0]:
                heapq.heapreplace(kth, candidate.score)
        scored.sort(key=lambda c: (-c.score, _category_order(facts[c.rowid].category), c.rowid))
        p.candidates = scored
        top = p.candidates[: p.request.k]
        records = self.store.by_rowids(c.rowid for c in top)
        p.result.hits = [
            SearchHit(records[c.rowid], c, profile=self.profile) for c in top if c.rowid in records
        ]


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[HybridSearcher, Pass], None]
    timing: str  # the timings_ms entry its time counts towards


# The search, in order. Steps named in stages.STAGES are the hand-set stages, each removable by name;
# the others are the core. Order matters: the floor stages set the floors before `dialogue` (which lends
# only to turns relevant enough to be kept by themselves) and `floor` read them;
# `fuse` records the best evidence before the context stages move anything; `dialogue` runs on the
# ranking `rank` sorts, before `question` and `assistant` so a question still lends its answer its
# full relevance; `answer_kind` after `dialogue` so the turn naming the topic lends the turn with the
# date its full relevance.
PIPELINE: tuple[Step, ...] = (
    Step("analyse", HybridSearcher._analyse, "analyse"),
    Step("keywords", HybridSearcher._keywords, "bm25"),
    Step("keyword_facts", HybridSearcher._keyword_facts, "bm25"),
    Step("embed", HybridSearcher._embed, "embed"),
    Step("hubness", stages.hubness, "vector"),
    Step("vectors", HybridSearcher._vectors, "vector"),
    Step("similarity", HybridSearcher._similarity, "fuse"),
    Step("language_bonus", stages.language_bonus, "fuse"),
    Step("stopword_query", stages.stopword_query, "fuse"),
    Step("fuse", HybridSearcher._fuse, "fuse"),
    Step("neighbours", stages.neighbours, "fuse"),
    Step("sentence_floor", stages.sentence_floor, "fuse"),
    Step("unmatched_floor", stages.unmatched_floor, "fuse"),
    Step("other_person", stages.other_person, "fuse"),
    Step("rank", HybridSearcher._rank, "fuse"),
    Step("dialogue", stages.dialogue, "fuse"),
    Step("answer_kind", stages.answer_kind, "fuse"),
    Step("question", stages.question, "fuse"),
    Step("assistant", stages.assistant, "fuse"),
    Step("rerank", HybridSearcher._rerank, "rerank"),
    Step("floor", HybridSearcher._floor, "score"),
    Step("score", HybridSearcher._score, "score"),
)
STAGES: tuple[str, ...] = tuple(
    step.name for step in PIPELINE if getattr(stages, step.name, None) is step.run
)


_ORDER = {"insight": 0}


def _category_order(category: str) -> int:
    # Insights come before facts at equal scores (seed 000 §7).
    return _ORDER.get(category, 1)
