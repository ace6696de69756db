"""The hand-set stages of search, each a small function, in the order search runs them.

Search is an ordered list of steps (search.PIPELINE). The core steps (the keyword and vector legs, their
fusion, the relevance floor, the final score) always run; the stages here are the hand-set rules between
them, each measured by what removing it costs on the held-out half of the eval set
(benchmarks/test_bench_ablation.py; fixtures/eval/README.md says how the set is split). Each docstring
ends with that measurement: ΔMRR is the held-out MRR of the full pipeline (0.788) minus the MRR without
the stage, so a positive figure is what the stage earns. A stage that earned less than 0.005 was removed:
reading the user's own names in a query as pronouns (held-out ΔMRR -0.001; their names still tell
other_person that a query is about the user). The two nonsense guards earn nothing MRR can see, since
nonsense queries have no answers to rank; they are kept for the empty share on nonsense they were not
tuned on (fixtures/eval/nonsense_unseen.jsonl).

A stage reads and changes one `Pass`: the state of one search on its way through the pipeline. A searcher
can be built with stages disabled by name (`HybridSearcher(disabled=...)`): only the ablation uses that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from openclaw_cli.memory.search.candidate import Candidate
from openclaw_cli.memory.search.legs import neighbours as word_neighbours
from openclaw_cli.memory.search.legs.vocabulary import reads_as_words
from openclaw_cli.memory.search.profiles import SENTENCE_TERMS
from openclaw_cli.memory.text.analysis import detect_language, is_stopword

if TYPE_CHECKING:
    from datetime import datetime

    from openclaw_cli.memory.embedding.onnx_embedder import QueryEmbedding
    from openclaw_cli.memory.embedding.word_table import WordTables
    from openclaw_cli.memory.search.context_stages.about import ContextSteps
    from openclaw_cli.memory.search.legs.semantic import HubCorrection, QueryPrefetch
    from openclaw_cli.memory.search.profiles import SearchProfile
    from openclaw_cli.memory.search.result import SearchRequest, SearchResult
    from openclaw_cli.memory.store.protocol import VectorFilter
    from openclaw_cli.memory.store.record_rows import RankingFacts

# A query of stopwords only ("the", "的") still searches them, but matching them is weak evidence.
STOPWORD_WEIGHT = 0.2
# An unmatched query's results must reach this share of the best one's relevance (unmatched_floor).
UNMATCHED_TAIL = 0.7


class Searcher(Protocol):
    """What a stage may read of the searcher running it (search/pipeline.py implements it)."""

    profile: SearchProfile
    context: ContextSteps
    word_tables: WordTables | None

    def hub_correction(self) -> HubCorrection | None: ...

    def any_term_stored(self, terms: Sequence[str]) -> bool: ...

    def word_vectors(self) -> word_neighbours.WordVectors | None: ...


@dataclass
class Pass:
    """One search on its way through the pipeline: what the steps before have found and decided."""

    request: SearchRequest
    now: datetime
    result: SearchResult
    where: VectorFilter
    text: str  # the query as searched
    candidates: list[Candidate] = field(default_factory=list)
    by_row: dict[int, Candidate] = field(default_factory=dict)
    facts: dict[int, RankingFacts] = field(default_factory=dict)
    coverage: dict[int, float] = field(default_factory=dict)  # keyword hits' share of the query's terms
    query: QueryEmbedding | None = None
    prefetch: QueryPrefetch | None = None  # the query's vector on its way (semantic.QueryPrefetch)
    hubs: HubCorrection | None = None
    topic: float = 1.0  # how much the query's meaning counts (stopword_query)
    every_match_listed: bool = False  # the keyword leg listed every memory holding a query term
    full_matches: set[int] = field(default_factory=set)  # rows holding every term of the query
    best_evidence: float = 0.0  # the best relevance before the context stages: what the floor reads
    floor: float | None = None  # set by the floor stages; the profile's relevance floor otherwise
    # The share of the best result's relevance a result in the other language must reach (unmatched_floor).
    tail_share: float = 0.0
    floor_reason: str = ""
    finished: bool = False

    def kept_from(self, profile: SearchProfile, best: float, rowid: int) -> float:
        """The relevance a result must reach to be kept, when the best result has `best`."""
        if not self.tail_share:
            return profile.kept_floor()
        across = profile.bonus(detect_language(self.request.query), self.facts[rowid].language) > 0
        return max(profile.kept_floor(), self.tail_share * best if across else 0.0)


def hubness(searcher: Searcher, p: Pass) -> None:
    """Take a share (the profile's hub_weight) of each memory's hubness off its cosines: generic sentences
    close to every query ("Assistant: Quite a change of tone.") stop looking like answers (store/vectors/centroid.py).
    Runs before the vector leg, which applies the correction to every cosine it computes.

    Held-out ΔMRR +0.044 (tuning +0.027)."""
    p.hubs = searcher.hub_correction()


def language_bonus(searcher: Searcher, p: Pass) -> None:
    """Add the profile's cross-language bonus to the similarity of a memory in the other language (English
    query and Chinese memory, or the reverse): a multilingual model scores a translation lower than a
    same-language sentence on another topic.

    Held-out ΔMRR +0.089 (tuning +0.071)."""
    query_language = detect_language(p.request.query)
    for cand in p.candidates:
        if cand.vector_score is not None:
            cand.vector_score += searcher.profile.bonus(query_language, p.facts[cand.rowid].language)


def stopword_query(searcher: Searcher, p: Pass) -> None:
    """A query of stopwords only ("呃", "的了吗", "the") has no topic: its meaning counts as little as its
    words (STOPWORD_WEIGHT), or the models' nearest sentence would always look like an answer.

    Held-out ΔMRR 0.000: kept for what MRR cannot see. Without it 7 more of the 30 unseen nonsense
    queries get answers (empty share 0.83 -> 0.60), and 4 of the tuning half's 11 (1.00 -> 0.64)."""
    if all(is_stopword(t) for t in p.result.terms):
        p.topic = STOPWORD_WEIGHT


def other_person(searcher: Searcher, p: Pass) -> None:
    """A memory about somebody the query does not name counts for less: ×other_person_factor for a fact,
    ×other_person_turn_factor for a dialogue turn (text/subject.py, search_context.weigh_subjects).

    Held-out ΔMRR +0.119 (tuning +0.065)."""
    searcher.context.weigh_subjects(p.candidates, p.facts, p.text, p.request.user_id, p.full_matches)


def dialogue(searcher: Searcher, p: Pass) -> None:
    """The best hits lend a share of their relevance to the turns said next to them (search/context_stages/dialogue.py), when
    those are relevant enough to be kept by themselves or answer a hit that asks.

    Held-out ΔMRR +0.021 (tuning +0.049)."""
    searcher.context.lend_to_neighbours(
        p.candidates, p.facts, p.where, lambda rowid: p.kept_from(searcher.profile, p.best_evidence, rowid)
    )


def answer_kind(searcher: Searcher, p: Pass) -> None:
    """When the query asks when, how many, where or which, a memory holding no such expression counts
    for less: ×answer_kind_factor (search/context_stages/answer_type.py).

    Held-out ΔMRR +0.024 (tuning +0.015)."""
    searcher.context.weigh_answer_kind(p.candidates, p.facts, p.request.query)


def question(searcher: Searcher, p: Pass) -> None:
    """A memory that only asks states no fact: ×question_factor. After the dialogue stage, so a question
    still lends its answer its full relevance.

    Held-out ΔMRR +0.0056 (tuning +0.002)."""
    searcher.context.weigh_questions(p.candidates, p.facts)


def assistant(searcher: Searcher, p: Pass) -> None:
    """A stored turn the assistant said repeats or asks; the user's own words are the evidence:
    ×assistant_factor.

    Held-out ΔMRR +0.0057 (tuning -0.009)."""
    searcher.context.weigh_assistant(p.candidates, p.facts)


def neighbours(searcher: Searcher, p: Pass) -> None:
    """A question with weak keyword evidence may be a paraphrase: a candidate holding close neighbours
    of its words ("money" for "cash", 儿子 for 小孩) gets them as keyword evidence, fused as the keyword
    leg's is (search/legs/neighbours.py says when it runs and on which candidates). Before the floors, which
    read the evidence.

    Held-out ΔMRR +0.0044 (tuning +0.0028): under the 0.005 bar on the whole half, since it acts on
    paraphrases only (23 of the held-out half's queries). On them: held-out paraphrase MRR 0.601 ->
    0.640, tuning paraphrase MRR 0.358 -> 0.375 and recall@10 0.417 -> 0.438, no other kind of either
    half moves by more than 0.001, nonsense left empty as before (both halves 1.00, unseen 0.83); the
    paraphrase set (fixtures/paraphrase) hit@3 0.625 -> 0.708, hit@1 0.375 -> 0.542."""
    if p.query is None or not p.candidates:
        return
    best_keywords = max(c.lexical for c in p.candidates)
    if not word_neighbours.applies(p.text, p.result.terms, best_keywords, SENTENCE_TERMS):
        return
    vectors = searcher.word_vectors()
    if vectors is None:
        return
    pool = word_neighbours.best_first({c.rowid: c.relevance for c in p.candidates})
    texts = {r: p.facts[r].l0 for r in pool}
    shares = word_neighbours.neighbour_shares(p.text, texts, vectors, searcher.word_tables)
    for cand in p.candidates:
        share = shares.get(cand.rowid, 0.0) ** searcher.profile.lexical_exponent
        if share > cand.lexical:
            cand.lexical = share
            cand.relevance = cand.fused = searcher.profile.fuse(cand.lexical, cand.semantic)
            # Not a stage step of --explain: the share is keyword evidence, shown in the fusion's
            # `keywords`; the context says where it came from.
            cand.context["neighbours"] = round(share, 4)
    p.best_evidence = max(p.best_evidence, max(c.relevance for c in p.candidates))


def sentence_floor(searcher: Searcher, p: Pass) -> None:
    """A query of SENTENCE_TERMS or more terms is held to the profile's lower sentence_floor: a
    paraphrased question's best match is often weaker than a keyword hit, and nonsense is short.

    Held-out ΔMRR +0.008 (tuning 0.000)."""
    floor = searcher.profile.sentence_floor
    if floor is not None and len(p.result.terms) >= SENTENCE_TERMS:
        p.floor, p.floor_reason = floor, "sentence"


def unmatched_floor(searcher: Searcher, p: Pass) -> None:
    """A query none of whose words any memory holds ("lorem ipsum dolor", or 我用什么编辑器 in an English
    store) has only its meaning to go on. A short one is held to the higher unmatched_floor. And for any
    length, its results in the other language must come within UNMATCHED_TAIL of the best: the
    cross-language bonus lifts an unrelated memory as much as a related one, and "I'm allergic to
    peanuts" was shown at 0.47 under the editors at 0.87. Within the query's language there is no
    bonus, and a weaker answer stays (用户更喜欢用Vim键位 at 0.48 for 编辑器快捷键偏好). A query that reads
    as words of a language (at least two content words a dictionary lists, search/legs/vocabulary.py) is a real
    question put in other words than the store's ("do I eat meat?" against "User is vegetarian"): it keeps
    the relevance floor.

    Held-out ΔMRR +0.0028 (tuning -0.004; full pipeline 0.791 since real words keep the relevance
    floor): kept for what MRR cannot see. Without it 5 more of the 30 unseen nonsense queries get
    answers (empty share 0.83 -> 0.67), 3 of the tuning half's 11 (1.00 -> 0.73), and a new user's
    English store answers 我用什么编辑器 with peanuts."""
    profile = searcher.profile
    if searcher.any_term_stored(p.result.terms):
        return
    p.tail_share = UNMATCHED_TAIL
    if p.floor_reason or profile.unmatched_floor is None:
        return
    if reads_as_words(p.text):
        # A real question in words the store does not use: the relevance floor is enough (vocabulary.py).
        p.floor_reason = "unmatched, real words"
        return
    p.floor = max(profile.relevance_floor, profile.unmatched_floor)
    p.floor_reason = "unmatched"
