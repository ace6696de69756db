"""Tuning and checking the fusion on the eval set: every query's evidence computed once, every profile
scored from it.

For each query, every memory of the query's user gets its features once: lexical relevance (lexical.py),
each model leg's cosine, the memory's language and its BM25 score. A profile is then a cheap numpy
computation over those features, so thousands of combinations can be compared. Scoring every memory
rather than only the candidate pools makes this slightly optimistic for a real search, which only sees
its pools; `evalset.evaluate` runs the real searcher to confirm the chosen defaults.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from openclaw_cli.config.loading import SearchSettings
from openclaw_cli.memory.search import stages
from openclaw_cli.memory.search.context_stages import answer_type, dialogue
from openclaw_cli.memory.search.legs import lexical, semantic
from openclaw_cli.memory.search.pipeline import HybridSearcher
from openclaw_cli.memory.search.profiles import SearchProfile
from openclaw_cli.memory.search.stages import STOPWORD_WEIGHT
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.store import people
from openclaw_cli.memory.store.vectors import query as vectors
from openclaw_cli.memory.text import subject
from openclaw_cli.memory.text.analysis import detect_language, is_stopword, query_terms
from tests.evalset import evidence_pieces

NONSENSE = "nonsense"


@dataclass
class Features:
    query: str
    kind: str
    expected: set[str]
    pieces: list[set[str]]  # evalset.evidence_pieces: recall counts a piece found by any of its records
    ids: list[str]
    lexical: np.ndarray
    bm25: np.ndarray
    legs: np.ndarray  # (memories, legs)
    trust: np.ndarray
    languages: tuple[str, np.ndarray]  # the query's, and each memory's
    unknown_share: float
    has_terms: bool
    terms: int
    topic: float  # STOPWORD_WEIGHT for a query of stopwords only, else 1
    context: Context
    # The memories each leg's candidate pool holds (search scores only those, and their dialogue
    # neighbours): the hubness correction re-scores the vector pool, it does not widen it.
    unmatched: bool = False  # no memory holds any of the query's words
    keyword_pool: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    vector_pool: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    similarity: np.ndarray = field(default_factory=lambda: np.zeros(0))
    best_evidence: float = 0.0  # the best relevance before the context weights (the floor decides on it)
    languages_present: tuple[str, ...] | None = None  # the distinct memory languages, worked out on first use


@dataclass
class Context:
    """What search weighs after fusion (subject.py, dialogue.py), per memory of the query's user."""

    other_person: np.ndarray  # about someone the query does not name
    lacks_answer: np.ndarray  # holds no time, quantity, place or name where the query asks for one
    question: np.ndarray
    assistant: np.ndarray
    turn: np.ndarray  # a stored dialogue turn, weighed less for naming someone else
    places: list[dialogue.Place | None]  # where each memory was said
    sessions: dict[str, list[tuple[int, dialogue.Place]]]  # memory indexes by session
    settings: SearchSettings = field(default_factory=SearchSettings)


@dataclass
class _UserMemories:
    """What does not depend on the query, computed once per user (~30 queries each): subjects, utterances,
    places, each memory's stored terms, and its vectors with their norms and hubness (_UserVectors)."""

    names: frozenset[str]
    own: frozenset[str]  # the user's own names (people.own_names)
    subjects: list[subject.Subject]
    question: np.ndarray
    assistant: np.ndarray
    turn: np.ndarray
    texts: list[str]
    places: list[dialogue.Place | None]
    sessions: dict[str, list[tuple[int, dialogue.Place]]]
    rowids: list[int]
    ids: list[str]
    trust: np.ndarray
    languages: np.ndarray
    terms: _StoredTerms
    vectors: _UserVectors
    lacks: dict[str, np.ndarray] = field(default_factory=dict)  # lacks_answer, by the kind asked for


class _StoredTerms:
    """lexical.IndexedTerms over one user's rows, read from the index once instead of once per query."""

    def __init__(self, storage: lexical.IndexedTerms, rowids: list[int]) -> None:
        self.rowids = rowids
        self.found = storage.indexed_terms(rowids)

    def indexed_terms(self, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
        assert list(rowids) == self.rowids, "asked for other rows than the user's"
        return self.found


class _UserVectors:
    """semantic.leg_cosines over all of one user's memories, with what does not depend on the query (the
    stacked vectors, each leg's row norms and hubness) worked out once. The same numpy operations in the
    same order, so the same bits: `check` compares one query with leg_cosines itself."""

    def __init__(
        self, rows: dict[int, np.ndarray], rowids: list[int], legs: Sequence[int], hubs: Any
    ) -> None:
        self.rows, self.legs, self.hubs = rows, legs, hubs
        matrix = np.stack([rows[rowid] for rowid in rowids]).astype(np.float32, copy=False)
        self.blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []
        start = 0
        for leg, width in enumerate(legs):
            block = matrix[:, start : start + width]
            hubness = None if hubs is None else hubs.weight * hubs.centroid.hubness(leg, block)
            self.blocks.append((block, np.linalg.norm(block, axis=1), hubness))
            start += width

    def cosines(self, query: np.ndarray) -> np.ndarray:
        """(memories, legs): each memory's corrected cosine with `query`, leg by leg, as float64 (what
        leg_cosines returns are Python floats)."""
        columns: list[np.ndarray] = []
        start = 0
        for (block, block_norms, hubness), width in zip(self.blocks, self.legs, strict=True):
            q = query[start : start + width]
            norms = block_norms * float(np.linalg.norm(q))
            column = np.where(norms > 0, (block @ q) / np.maximum(norms, 1e-12), 0.0)
            if hubness is not None:
                column = column - hubness
            columns.append(column)
            start += width
        return np.stack(columns, axis=1).astype(np.float64)

    def check(self, query: np.ndarray, table: np.ndarray) -> None:
        expected = semantic.leg_cosines(query, self.rows, self.legs, self.hubs)
        assert np.array_equal(table, np.array([expected[r] for r in self.rows])), (
            "harness drifted from search"
        )


def _user_memories(
    rows: list[tuple[Any, ...]], names: frozenset[str], own: frozenset[str], store: Any, vectors_of: Any
) -> _UserMemories:
    cast = subject.cast_pattern(names)
    places = [dialogue.place_of(r[5]) for r in rows]
    sessions: dict[str, list[tuple[int, dialogue.Place]]] = {}
    for i, place in enumerate(places):
        if place is not None:
            sessions.setdefault(place.session, []).append((i, place))
    rowids = [int(r[0]) for r in rows]
    return _UserMemories(
        names=names,
        own=own,
        subjects=[subject.subject_of(r[4], cast) for r in rows],
        question=np.array([subject.is_question(r[4]) for r in rows]),
        assistant=np.array([subject.said_by_assistant(r[4]) for r in rows]),
        turn=np.array([subject.is_turn(r[4]) for r in rows]),
        texts=[r[4] for r in rows],
        places=places,
        sessions=sessions,
        rowids=rowids,
        ids=[str(r[1]) for r in rows],
        trust=np.array([semantic.LANGUAGE_TRUST.get(str(r[3]), 0.0) for r in rows]),
        languages=np.array([str(r[3]) for r in rows]),
        terms=_StoredTerms(store.storage, rowids),
        vectors=vectors_of(rowids),
    )


def _context(query: str, user: _UserMemories, full_match: np.ndarray) -> Context:
    asked = subject.query_subject(query, user.names, user.own)
    kind = answer_type.asked_for(query)
    # A query that refers to nobody spares the memories holding every word of it (weigh_subjects).
    spared = full_match if asked.is_user and not asked.about_user else np.zeros(len(full_match), dtype=bool)
    return Context(
        other_person=np.array([subject.mismatch(asked, about) for about in user.subjects]) & ~spared,
        lacks_answer=_lacks(user, kind),
        question=user.question,
        assistant=user.assistant,
        turn=user.turn,
        places=user.places,
        sessions=user.sessions,
    )


def _lacks(user: _UserMemories, kind: answer_type.AnswerKind | None) -> np.ndarray:
    """Which memories hold no answer of the kind asked for: a question of a kind asked once per user."""
    key = str(kind)
    if key not in user.lacks:
        user.lacks[key] = np.array(
            [kind is not None and not answer_type.could_answer(kind, t) for t in user.texts]
        )
    return user.lacks[key]


def _weigh_context(f: Features, rel: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """The searcher's steps after fusion, on every memory: subject, dialogue context, utterance. A
    neighbour gets a share only when its own relevance reaches `floor` or it answers a hit that asks
    (search_context.lend_to_neighbours)."""
    c, shares = f.context, dialogue.Shares()
    f.best_evidence = float(rel.max()) if len(rel) else 0.0
    factors = np.where(c.turn, c.settings.other_person_turn_factor, c.settings.other_person_factor)
    rel = rel * np.where(c.other_person, factors, 1.0)
    order = np.lexsort((-f.bm25, -f.similarity, -rel))[: shares.seeds]
    shared = np.zeros_like(rel)
    for i in order:
        place = c.places[i]
        if place is None:
            continue
        session = c.sessions[place.session]
        answers = dialogue.said_after(place, session, shares) if c.question[i] else set()
        for j, value in dialogue.lent_relevance(
            place, float(rel[i]), bool(c.question[i]), session, shares
        ).items():
            if j in answers or rel[j] >= floor[j]:
                shared[j] = max(shared[j], value)
    lent = rel + shared * (1.0 - rel)  # independent evidence, as search_context.lend_to_neighbours
    lent = lent * np.where(c.lacks_answer, c.settings.answer_kind_factor, 1.0)
    lent = lent * np.where(c.question, c.settings.question_factor, 1.0)
    return lent * np.where(c.assistant, c.settings.assistant_factor, 1.0)


def prepare(service: MemoryService, queries: Iterable[dict[str, Any]]) -> list[Features]:
    store = next(iter(service.existing_stores()))
    embedder = service.embedder()
    searcher = HybridSearcher(store, SearchSettings(), embedder, warm=True)
    profile = searcher.profile
    matrix = store.vector_matrix()
    hubs = searcher.hub_correction()
    rows = list(
        store.conn.execute("SELECT rowid, id, user_id, language, l0, source FROM records WHERE deleted = 0")
    )
    out = []
    users: dict[str, _UserMemories] = {}

    def vectors_of(rowids: list[int]) -> _UserVectors:
        return _UserVectors(matrix.rows(rowids), rowids, profile.legs, hubs)

    for item in queries:
        first_of_user = item["userId"] not in users
        if first_of_user:
            users[item["userId"]] = _user_memories(
                [r for r in rows if r[2] == item["userId"]],
                people.cast(store.storage, item["userId"]),
                people.own_names(store.storage, item["userId"]),
                store,
                vectors_of,
            )
        user = users[item["userId"]]
        rowids = user.rowids
        text = item["query"]
        terms = query_terms(text)
        searcher._term_weights(terms)
        lex = lexical.relevance(user.terms, rowids, terms, searcher._weights) if terms else {}
        strength = max(searcher._weights.values(), default=0.0) if terms else 0.0
        full_match = np.array([lex.get(r, 0.0) > 0 and lex.get(r, 0.0) >= strength - 1e-9 for r in rowids])
        bm25 = dict(
            store.storage.keyword_candidates(terms, vectors.VectorFilter(item["userId"]), len(rowids))
        )
        query = embedder.embed_query(text)
        where = vectors.VectorFilter(item["userId"])
        pool = searcher.settings.candidates
        searched = lexical.without_common_terms(terms, searcher._counts, searcher._size)
        keyword_pool = (
            {r for r, _ in store.storage.keyword_candidates(searched, where, pool)} if terms else set()
        )
        vector_pool = set(semantic.candidates(matrix, query, profile, pool, where, hubs))
        legs = user.vectors.cosines(query.vector)
        if first_of_user:
            user.vectors.check(query.vector, legs)
        out.append(
            Features(
                query=item["query"],
                kind=item["kind"],
                expected=set(item["expected"]),
                pieces=evidence_pieces(item),
                ids=user.ids,
                lexical=np.array([lex.get(r, 0.0) for r in rowids]),
                bm25=np.array([bm25.get(r, 0.0) for r in rowids]),
                legs=legs,
                trust=user.trust,
                languages=(detect_language(item["query"]), user.languages),
                unknown_share=query.unknown_share,
                has_terms=bool(terms),
                terms=len(terms),
                topic=STOPWORD_WEIGHT if all(is_stopword(t) for t in terms) else 1.0,
                context=_context(text, user, full_match),
                unmatched=bool(terms) and not any(searcher._counts.get(t, 0) for t in terms),
                keyword_pool=np.array([r in keyword_pool for r in rowids], dtype=bool),
                vector_pool=np.array([r in vector_pool for r in rowids], dtype=bool),
            )
        )
    return out


def relevance(f: Features, profile: SearchProfile, mode: str = "hybrid") -> np.ndarray:
    if not f.has_terms:
        f.similarity = np.zeros(len(f.ids))
        f.best_evidence = 0.0
        return np.zeros(len(f.ids))
    if f.legs.shape[1] == 1:
        similarity = f.legs[:, 0] * semantic.single_leg_weight(profile, f.unknown_share)
    else:
        english = semantic.english_weight(profile, f.unknown_share) * f.trust
        other = 1.0 - semantic.english_weight(profile, f.unknown_share)
        similarity = (english * f.legs[:, 0] + other * f.legs[:, 1]) / np.maximum(english + other, 1e-9)
    query_language, memory_languages = f.languages
    for language in ("en", "zh"):
        similarity = similarity + profile.bonus(query_language, language) * (memory_languages == language)
    mid, width = profile.logistic()
    meaning = f.topic / (1.0 + np.exp(-np.clip((similarity - mid) / width, -60, 60)))
    f.similarity = similarity
    words = f.lexical**profile.lexical_exponent
    if mode == "bm25":
        return _weigh_context(f, words * f.keyword_pool, _kept(f, profile, words * f.keyword_pool))
    if mode == "vector":
        return _weigh_context(f, meaning * f.vector_pool, _kept(f, profile, meaning * f.vector_pool))
    a, b = profile.lexical_weight * words, profile.semantic_weight * meaning
    high, low = np.maximum(a, b), np.minimum(a, b)
    fused = (high + profile.agreement * low * (1.0 - high)) * (f.keyword_pool | f.vector_pool)
    return _weigh_context(f, fused, _kept(f, profile, fused))


def _kept(f: Features, profile: SearchProfile, rel: np.ndarray) -> np.ndarray:
    """What each memory must reach to be kept when the best has `rel.max()` (stages.Pass.kept_from): the
    tail floor, and for an unmatched query a share of the best in the other language."""
    floor = np.full(len(rel), profile.kept_floor())
    if f.unmatched and len(rel):
        query_language, languages = f.languages
        # The bonus depends on the two languages only: asked once per language present, not per memory
        # (this runs for every query under every profile compared).
        across = np.zeros(len(rel), dtype=bool)
        for language in _languages_present(f):
            if profile.bonus(query_language, language) > 0:
                across |= languages == language
        floor = np.where(across, np.maximum(floor, stages.UNMATCHED_TAIL * float(rel.max())), floor)
    return floor


def _languages_present(f: Features) -> tuple[str, ...]:
    if f.languages_present is None:
        f.languages_present = tuple(str(language) for language in np.unique(f.languages[1]))
    return f.languages_present


def ranked(f: Features, profile: SearchProfile, mode: str = "hybrid", k: int = 10) -> list[str]:
    rel = relevance(f, profile, mode)
    if not len(rel) or f.best_evidence < max(profile.floor_for(f.terms, f.unmatched), 1e-9):
        return []
    keep = np.nonzero(rel >= max(profile.kept_floor(), 1e-9))[0]
    if len(keep):
        keep = keep[rel[keep] >= _kept(f, profile, rel)[keep]]
    order = keep[np.lexsort((-f.bm25[keep], -f.similarity[keep], -rel[keep]))]
    return [f.ids[i] for i in order[:k]]


@dataclass
class KindMetrics:
    queries: int = 0
    recall_at_5: float = 0.0
    recall_at_10: float = 0.0
    mrr: float = 0.0
    empty: float = 0.0  # nonsense queries: the share answered with nothing

    def as_dict(self) -> dict[str, float]:
        return {
            "queries": self.queries,
            "recall@5": round(self.recall_at_5, 4),
            "recall@10": round(self.recall_at_10, 4),
            "mrr": round(self.mrr, 4),
            "empty": round(self.empty, 4),
        }


def metrics(
    features: Sequence[Features], profile: SearchProfile, mode: str = "hybrid"
) -> dict[str, KindMetrics]:
    """Per kind, and overall ("all", answerable queries only)."""
    sums: dict[str, KindMetrics] = {}
    for f in features:
        top = ranked(f, profile, mode)
        for key in (f.kind, "all") if f.kind != NONSENSE else (f.kind,):
            m = sums.setdefault(key, KindMetrics())
            m.queries += 1
            if f.kind == NONSENSE:
                m.empty += not top
                continue
            m.recall_at_5 += sum(1 for piece in f.pieces if piece & set(top[:5])) / len(f.pieces)
            m.recall_at_10 += sum(1 for piece in f.pieces if piece & set(top)) / len(f.pieces)
            m.mrr += next((1.0 / n for n, rid in enumerate(top, 1) if rid in f.expected), 0.0)
    for m in sums.values():
        n = max(m.queries, 1)
        m.recall_at_5, m.recall_at_10, m.mrr, m.empty = (
            m.recall_at_5 / n,
            m.recall_at_10 / n,
            m.mrr / n,
            m.empty / n,
        )
    return sums


def objective(result: dict[str, KindMetrics], legs: Sequence[dict[str, KindMetrics]] = ()) -> float:
    """Mean MRR over the answerable kinds (each kind counts once), plus the share of nonsense queries
    answered with nothing (a profile must also know when there is nothing), minus twice the mean amount
    by which fusion falls behind its best single leg on a kind."""
    kinds = [k for k in result if k not in ("all", NONSENSE)]
    nonsense = result.get(NONSENSE)
    score = float(np.mean([result[k].mrr for k in kinds])) + (0.25 * nonsense.empty if nonsense else 0.0)
    if legs:
        shortfall = [max(0.0, max(leg[k].mrr for leg in legs) - result[k].mrr) for k in kinds]
        score -= 2.0 * float(np.mean(shortfall))
    return score


def leg_metrics(features: Sequence[Features], profile: SearchProfile) -> list[dict[str, KindMetrics]]:
    """Each leg alone, ranked without the relevance floor: the baseline fusion has to beat, which a floor
    that only hides a leg's results must not be able to lower."""
    unfloored = replace(
        profile, relevance_floor=0.0, tail_floor=0.0, sentence_floor=None, unmatched_floor=None
    )
    return [metrics(features, unfloored, mode) for mode in ("bm25", "vector")]


GRID: dict[str, tuple[float, ...]] = {
    "english_weight": (0.3, 0.4, 0.5, 0.6),
    "cos_floor": (0.3, 0.35, 0.4),
    "cos_full": (0.5, 0.55, 0.6),
    "lexical_weight": (0.8, 0.9, 1.0),
    "relevance_floor": (0.35,),
    "cross_language_bonus": (0.1, 0.15, 0.2),
    "chinese_to_english_bonus": (0.15, 0.2, 0.25),
    "lexical_exponent": (1.0, 2.0),
    "agreement": (1.0,),
}


def sweep(
    features: Sequence[Features], base: SearchProfile, grid: dict[str, tuple[float, ...]] = GRID
) -> list[tuple[float, SearchProfile]]:
    """Every combination in `grid` applied to `base`, best first."""
    results = []
    for combo in itertools.product(*grid.values()):
        profile = replace(base, **dict(zip(grid, combo, strict=True)))
        if profile.cos_full <= profile.cos_floor:
            continue
        results.append((objective(metrics(features, profile), leg_metrics(features, profile)), profile))
    results.sort(key=lambda row: -row[0])
    return results
