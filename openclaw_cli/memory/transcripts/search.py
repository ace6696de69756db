"""Searching session transcripts (issue 24): the memory search's evidence model over turns.

The same analysis (both languages), the same keyword relevance (the specificity-weighted share of the
query's terms a turn holds, search/legs/lexical.py), the same calibrated vector similarity per embedder
profile (search/legs/semantic.py, search/profiles.py) and the same fusion and floors: a score means what it
means in `memory search`, and a nonsense query is answered with nothing. The memory-only stages (FSRS
recall, who a memory is about, categories) have nothing to read here and are left out.

Vectors are deferred: a turn is indexed without one. A running process (the gateway, chat) embeds new
turns in the background (memory/transcripts/index.py); a search that still meets rows without one (a one-shot
process, or a backlog the background has not reached) embeds the newest it may return, at most LAZY_EMBED,
and finds the rest by their words only (it says how many in its warnings and --explain; `memory index`
embeds them all).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.search.legs import lexical, semantic
from openclaw_cli.memory.search.profiles import profile_for
from openclaw_cli.memory.search.result import SearchRequest, validate_request
from openclaw_cli.memory.store.transcripts import Turn, TurnFilter
from openclaw_cli.memory.text.analysis import detect_language, is_stopword, query_terms
from openclaw_cli.memory.transcripts.speakers import (
    lower_cosines,
    name_free_share,
    plain_terms,
    speaker_cue,
    weigh,
)
from openclaw_cli.memory.transcripts.vectors import TurnVectors

if TYPE_CHECKING:
    from openclaw_cli.config.loading import SearchSettings
    from openclaw_cli.memory.search.profiles import SearchProfile
    from openclaw_cli.memory.store.embedder import Embedder
    from openclaw_cli.memory.store.transcripts import TranscriptStorage

LAZY_EMBED = 16  # ~10 ms a turn on one core: a one-shot search spends at most ~0.2 s on it
# A turn lends this share of its relevance to the turns just before and after it: an answer rarely repeats
# the words of its question ("which piece am I practising?" -> "A Chopin nocturne"), as in memory search's
# dialogue stage. Only the best LEND_FROM candidates lend, and only what they hold themselves.
DIALOGUE_SHARE = 0.85
LEND_FROM = 20
EMBED_BATCH = 64
STOPWORD_WEIGHT = 0.1


@dataclass(frozen=True)
class TranscriptRequest:
    query: str
    k: int = 10
    where: TurnFilter = TurnFilter()
    explain: bool = False
    all_results: bool = False
    embed_limit: int = LAZY_EMBED  # turns without a vector this search may embed first


@dataclass
class TranscriptHit:
    turn: Turn
    score: float
    before: Turn | None = None
    after: Turn | None = None
    explain: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        out = turn_dict(self.turn)
        out["score"] = round(self.score, 4)
        out["context"] = {
            "before": None if self.before is None else turn_dict(self.before),
            "after": None if self.after is None else turn_dict(self.after),
        }
        if explain:
            out["explain"] = self.explain
        return out


def turn_dict(turn: Turn) -> dict[str, Any]:
    return {
        "sessionKey": turn.session_key,
        "sessionId": turn.session_id,
        "index": turn.index,
        "kind": turn.kind,
        "role": turn.role,
        "sender": turn.sender,
        "ts": turn.ts,
        "text": turn.text,
    }


@dataclass
class TranscriptResult:
    hits: list[TranscriptHit]
    terms: list[str] = field(default_factory=list)
    floor: float | None = None
    warnings: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    embedded: int = 0  # rows this search embedded first
    pending: int = 0  # rows it may return that still have no vector (found by their words only)

    def to_dict(self, request: TranscriptRequest) -> dict[str, Any]:
        return {
            "query": request.query,
            "k": request.k,
            "results": [hit.to_dict(request.explain) for hit in self.hits],
            "analysis": {"terms": self.terms, "floor": self.floor},
            "timingsMs": {key: round(value, 3) for key, value in self.timings_ms.items()},
            "warnings": self.warnings,
        } | (
            {"vectors": {"embeddedNow": self.embedded, "withoutVector": self.pending}}
            if request.explain
            else {}
        )


@dataclass
class _Candidate:
    rowid: int
    bm25_rank: int | None = None
    bm25: float = 0.0
    legs: tuple[float, ...] | None = None
    lexical: float = 0.0
    semantic: float = 0.0
    relevance: float = 0.0
    lent: bool = False  # its relevance is a neighbour's share (DIALOGUE_SHARE)


def validate(request: TranscriptRequest) -> None:
    from openclaw_cli.core.errors import InvalidInput
    from openclaw_cli.core.textcheck import find_bad_text

    bad = find_bad_text(request.query)
    if bad is not None:
        raise InvalidInput(bad.describe("query"), hint="give the query as UTF-8 text")
    validate_request(SearchRequest(request.query, request.k))


class TranscriptSearcher:
    """Runs requests against one transcript index; `embedder` None searches by keywords alone."""

    def __init__(
        self,
        storage: TranscriptStorage,
        settings: SearchSettings,
        embedder: Embedder | None,
        vectors: TurnVectors | None = None,
    ) -> None:
        self.storage = storage
        self.vectors = vectors or TurnVectors()  # a long-lived process passes the one it keeps warm
        self.settings = settings
        self.embedder = embedder
        identity = storage.vector_identity() or (
            embedder.identity.to_dict() if embedder is not None else None
        )
        self.profile: SearchProfile = profile_for(identity, settings)

    def search(self, request: TranscriptRequest) -> TranscriptResult:
        validate(request)
        started = time.perf_counter()
        # A sender's name is searched as who said it, not as what a turn means (transcripts/speakers.py).
        cue = speaker_cue(request.query, self.storage.sender_names())
        result = TranscriptResult(hits=[], terms=query_terms(request.query))
        if not result.terms:
            result.warnings.append("the query has no words or numbers to search for")
            return result
        terms = result.terms
        size = self.storage.store_size()
        counts = self.storage.document_counts(terms)
        weights = {
            t: lexical.specificity(counts.get(t, 0), size) * (STOPWORD_WEIGHT if is_stopword(t) else 1.0)
            for t in terms
        }
        pool = max(self.settings.candidates, request.k)
        found: dict[int, _Candidate] = {}
        plain = plain_terms(terms, cue)  # a name is not a word a turn is credited for holding
        searched = lexical.without_common_terms(plain, counts, size)
        for rank, (rowid, score) in enumerate(
            self.storage.keyword_candidates(searched, request.where, pool), 1
        ):
            found[rowid] = _Candidate(rowid, rank, score)
        result.timings_ms["bm25"] = _ms(started)
        english = self._vector_leg(request, found, pool, result, cue.query)
        result.timings_ms["vector"] = _ms(started) - result.timings_ms["bm25"]
        rows = self.storage.turns(list(found))
        self._fuse(request, found, rows, terms, weights, english, plain)
        self._lend(request, found, rows)
        kept = self._floor(request, list(found.values()), terms, any(counts.values()), result)
        weigh(kept, rows, cue.names)
        kept.sort(key=lambda c: (-c.relevance, -(rows[c.rowid][0].index), c.rowid))
        result.hits = [self._hit(c, rows[c.rowid][0], request.explain) for c in kept[: request.k]]
        result.timings_ms["total"] = _ms(started)
        return result

    def _vector_leg(
        self,
        request: TranscriptRequest,
        found: dict[int, _Candidate],
        pool: int,
        result: TranscriptResult,
        plain_query: str | None = None,
    ) -> float:
        """Embed what the search may need, then the nearest allowed turns and every keyword hit's cosines.
        Returns the English leg's weight for this query (0 without vectors)."""
        if self.embedder is None:
            return 0.0
        from openclaw_cli.memory.store.embedder import EmbeddingUnavailable

        try:
            result.embedded = self.embed_pending(request.where, request.embed_limit)
            query = self.embedder.embed_query(request.query)
            # Without the names it names (transcripts/speakers.py): finds, never raises a score.
            plain = query
            if plain_query is not None and plain_query != request.query:
                plain = self.embedder.embed_query(plain_query)
        except EmbeddingUnavailable as exc:
            result.warnings.append(f"{exc.message}: keyword results only")
            return 0.0
        result.pending = self.storage.pending_count(request.where)
        if result.pending:
            result.warnings.append(
                f"{result.pending} turns have no vector yet and are found by their words only "
                "(a running gateway embeds new turns in the background; `openclaw memory index` embeds them all)"
            )
        self.vectors.refresh(self.storage)
        # A filter applies before the ranking (a person's rows only), so every row returned may be used.
        allowed = None if request.where == TurnFilter() else self.storage.rowids_where(request.where)
        for rowid, _ in self.vectors.knn(self.storage, plain.vector, 2 * pool, allowed):
            if len(found) >= 2 * pool:
                break
            found.setdefault(rowid, _Candidate(rowid))
        vectors = self.storage.read_vectors(list(found))
        cosines = semantic.leg_cosines(query.vector, vectors, self.profile.legs)
        if plain is not query:
            cosines = lower_cosines(cosines, semantic.leg_cosines(plain.vector, vectors, self.profile.legs))
        for rowid, legs in cosines.items():
            found[rowid].legs = legs
        if len(self.profile.legs) > 1:
            return semantic.english_weight(self.profile, query.unknown_share)
        return semantic.single_leg_weight(self.profile, query.unknown_share)

    def embed_pending(self, where: TurnFilter, limit: int) -> int:
        """Embed up to `limit` of the newest turns `where` allows that have no vector; returns how many."""
        if self.embedder is None:
            return 0
        done = 0
        while done < limit:
            batch = self.storage.pending(min(EMBED_BATCH, limit - done), where)
            if not batch:
                break
            vectors = self.embedder.embed_passages([text for _, text in batch])
            with self.storage.transaction():
                self.storage.put_vectors(
                    self.embedder.identity, {rowid: vectors[i] for i, (rowid, _) in enumerate(batch)}
                )
            done += len(batch)
        return done

    def _fuse(
        self,
        request: TranscriptRequest,
        found: dict[int, _Candidate],
        rows: dict[int, tuple[Turn, str]],
        terms: list[str],
        weights: dict[str, float],
        english: float,
        plain: list[str] | None = None,
    ) -> None:
        profile = self.profile
        plain = terms if plain is None else plain
        scores = lexical.relevance(self.storage, list(found), plain, weights)
        share = name_free_share(terms, plain, weights)
        query_language = detect_language(request.query)
        topic = STOPWORD_WEIGHT if all(is_stopword(t) for t in terms) else 1.0
        for rowid, cand in list(found.items()):
            if rowid not in rows:
                del found[rowid]
                continue
            language = rows[rowid][1]
            cand.lexical = (scores.get(rowid, 0.0) * share) ** profile.lexical_exponent
            if cand.legs is not None:
                similarity = semantic.combine(cand.legs, english, language)
                if len(profile.legs) == 1:
                    similarity *= english
                similarity += profile.bonus(query_language, language)
                cand.semantic = profile.semantic(similarity) * topic
            cand.relevance = profile.fuse(cand.lexical, cand.semantic)

    def _lend(
        self, request: TranscriptRequest, found: dict[int, _Candidate], rows: dict[int, tuple[Turn, str]]
    ) -> None:
        lenders = sorted(found.values(), key=lambda c: -c.relevance)[:LEND_FROM]
        offers: dict[int, float] = {}
        for cand in lenders:
            for step in (-1, 1):
                rowid = self.storage.neighbour_rowid(rows[cand.rowid][0], step)
                if rowid is not None:
                    offers[rowid] = max(offers.get(rowid, 0.0), DIALOGUE_SHARE * cand.relevance)
        allowed = self.storage.allowed(list(offers), request.where)
        new = [rowid for rowid in allowed if rowid not in found]
        rows.update(self.storage.turns(new))
        for rowid in allowed:
            cand = found.setdefault(rowid, _Candidate(rowid))
            if offers[rowid] > cand.relevance:
                cand.relevance, cand.lent = offers[rowid], True

    def _floor(
        self,
        request: TranscriptRequest,
        candidates: list[_Candidate],
        terms: list[str],
        any_stored: bool,
        result: TranscriptResult,
    ) -> list[_Candidate]:
        if request.all_results:
            return [c for c in candidates if c.relevance > 0]
        floor = self.profile.floor_for(len(set(terms)), unmatched=not any_stored)
        if not any_stored:
            # No turn holds any word of the query: only its meaning speaks for it, and a sentence of
            # Han characters analyses into several overlapping terms however nonsensical it is, so
            # the length that earns memory search's lower sentence floor says nothing here.
            floor = max(floor, self.profile.floor_for(0, unmatched=True))
        result.floor = round(floor, 4)
        best = max((c.relevance for c in candidates), default=0.0)
        if best < floor:
            if candidates:
                result.warnings.append(
                    f"nothing relevant enough (best relevance {best:.2f}, floor {floor:.2f}); --all shows weaker matches"
                )
            return []
        return [c for c in candidates if c.relevance >= self.profile.kept_floor()]

    def _hit(self, cand: _Candidate, turn: Turn, explain: bool) -> TranscriptHit:
        hit = TranscriptHit(
            turn, cand.relevance, self.storage.neighbour(turn, -1), self.storage.neighbour(turn, +1)
        )
        if explain:
            hit.explain = {
                "bm25Rank": cand.bm25_rank,
                "bm25": round(cand.bm25, 4),
                "lexical": round(cand.lexical, 4),
                "cosines": None if cand.legs is None else [round(v, 4) for v in cand.legs],
                "semantic": round(cand.semantic, 4),
                "relevance": round(cand.relevance, 4),
                "fromNeighbour": cand.lent,
                "profile": self.profile.name,
            }
        return hit


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
