"""Per-embedder search profiles: every search parameter whose right value depends on the embedder.

A cosine of 0.4 means "closely related" for one model and "unrelated" for another, so the calibration of
vector similarity, the weight of each model in a composite vector, and the fusion weights are measured
per embedder on the eval set (tests/evalset.py; tests/test_search_defaults.py keeps them honest) and
looked up here by the identity stored in the database. An embedder nobody measured gets the `generic`
profile, and search says so instead of silently applying numbers tuned for another model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openclaw_cli.config.loading import SearchSettings

from openclaw_cli.memory.store.layout import COMPOSITE as COMPOSITE
from openclaw_cli.memory.store.layout import MINILM as MINILM
from openclaw_cli.memory.store.layout import MINILM_DIMS as MINILM_DIMS
from openclaw_cli.memory.store.layout import USE_M3 as USE_M3
from openclaw_cli.memory.store.layout import USE_M3_DIMS as USE_M3_DIMS

SENTENCE_TERMS = 4


@dataclass(frozen=True)
class SearchProfile:
    """How to turn one embedder's similarities into a relevance in [0, 1] and fuse it with keywords.

    - `legs`: the widths of the model vectors concatenated in one stored vector (one entry for a
      single model). Each leg's cosine is computed separately.
    - `english_weight`: in a two-leg vector, the weight of the first (English-only) leg for an English
      query and an English memory; it shrinks with the share of the query the English model cannot read
      and is 0 for a memory not written in English (its English vector is built from unknown tokens).
    - `cos_floor`, `cos_full`: the similarities at which semantic relevance is low (0.12) and high (0.88).
    - `lexical_weight`, `semantic_weight`, `agreement`: how the two legs' relevances combine (`fuse`).
    - `unknown_token_threshold`: for a single English leg, the query share of unknown tokens above which
      the vector is down-weighted by (1 - share).
    - `relevance_floor`, `tail_floor`: a query whose best result is below `relevance_floor` gets nothing
      (nothing relevant is stored); otherwise results down to `tail_floor` (default: the same) are kept.
      Deciding "is there anything?" once per query lets weaker but real answers through after a strong
      one without letting nonsense queries return noise.
    - `sentence_floor`: the floor instead of `relevance_floor` for a query of SENTENCE_TERMS or more terms
      (a paraphrased question's best match is often weaker than a keyword hit, and nonsense is short).
    - `cross_language_bonus`: added to the similarity of an English query and a Chinese memory, and
      `chinese_to_english_bonus` (default: the same) for the reverse. A multilingual model scores a
      translation lower than a same-language sentence on the same topic, so without it a Chinese query
      finds Chinese memories about something else first.
    - `lexical_exponent`: the keyword share is raised to it, so matching one word of three counts for
      less than a third: a partial match is weak evidence, a full one strong.
    - `dedup_new_below`, `dedup_duplicate_above`: semantic dedup's zones (memory/writing/dedup.py): a candidate
      less similar than the first to every neighbour is new, more similar than the second is a duplicate,
      and in between the LLM judges. Chosen on the tuning half of fixtures/dedup/pairs.jsonl, with
      duplicate_above 0.04 above that half's best (which alone dropped a held-out update), and judged on
      the held-out half (tests/test_dedup_zones.py).
    - `dedup_english_weight`: the English leg's weight when comparing two memories for dedup (default:
      `english_weight`); the zones were measured with it, so retuning search does not move them.
    - `unmatched_floor`: the floor for a query of fewer than SENTENCE_TERMS terms none of which any memory
      holds ("lorem ipsum dolor"), when it is higher than `relevance_floor`.
    - `hub_weight`: how much of each memory's hubness (store/vectors/centroid.py: how much more it points along the
      mean of all stored vectors than the average memory) is taken off every leg's cosine. 0 for an
      embedder it was not measured on.
    - `dedup_english_only`: the embedder reads English only, so two other texts are never compared (their
      vectors are built from unknown tokens and look alike whatever they say).
    """

    name: str
    legs: tuple[int, ...]
    english_weight: float
    cos_floor: float
    cos_full: float
    lexical_weight: float
    semantic_weight: float
    unknown_token_threshold: float
    relevance_floor: float
    cross_language_bonus: float = 0.0
    chinese_to_english_bonus: float | None = None
    lexical_exponent: float = 1.0
    agreement: float = 1.0
    tail_floor: float | None = None
    tuned: bool = True
    # The seed's boundaries (for its embedder) until a profile is measured.
    dedup_new_below: float = 0.70
    dedup_duplicate_above: float = 0.92
    dedup_english_only: bool = False
    dedup_english_weight: float | None = None
    sentence_floor: float | None = None
    hub_weight: float = 0.0
    unmatched_floor: float | None = None

    def dedup_weight(self) -> float:
        return self.english_weight if self.dedup_english_weight is None else self.dedup_english_weight

    def fuse(self, lexical: float, semantic: float) -> float:
        """The stronger evidence, raised towards 1 by the weaker one: `agreement` 1 treats them as
        independent (1 - (1-a)(1-b)), 0 takes the stronger alone."""
        a, b = self.lexical_weight * lexical, self.semantic_weight * semantic
        high, low = max(a, b), min(a, b)
        return high + self.agreement * low * (1.0 - high)

    def semantic(self, similarity: float) -> float:
        """A similarity mapped onto (0, 1): 0.12 at cos_floor, 0.5 half-way, 0.88 at cos_full.

        A logistic curve rather than a clipped line: it never ties two different similarities, so the
        vector leg's order survives the calibration."""
        mid, width = self.logistic()
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, (similarity - mid) / width))))

    def logistic(self) -> tuple[float, float]:
        return (self.cos_floor + self.cos_full) / 2, max(self.cos_full - self.cos_floor, 1e-6) / 4

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "tuned": self.tuned,
            "legs": list(self.legs),
            "englishWeight": self.english_weight,
            "cosFloor": self.cos_floor,
            "cosFull": self.cos_full,
            "lexicalWeight": self.lexical_weight,
            "semanticWeight": self.semantic_weight,
            "unknownTokenThreshold": self.unknown_token_threshold,
            "relevanceFloor": self.relevance_floor,
            "sentenceFloor": self.sentence_floor,
            "hubWeight": self.hub_weight,
            "unmatchedFloor": self.unmatched_floor,
            "crossLanguageBonus": self.cross_language_bonus,
            "chineseToEnglishBonus": self.bonus("zh", "en"),
            "lexicalExponent": self.lexical_exponent,
            "agreement": self.agreement,
            "tailFloor": self.kept_floor(),
            "dedupNewBelow": self.dedup_new_below,
            "dedupDuplicateAbove": self.dedup_duplicate_above,
            "dedupEnglishOnly": self.dedup_english_only,
        }

    def bonus(self, query_language: str, memory_language: str) -> float:
        """The cross-language bonus for this pair of languages (0 within a language)."""
        if (query_language, memory_language) == ("en", "zh"):
            return self.cross_language_bonus
        if (query_language, memory_language) == ("zh", "en"):
            return (
                self.cross_language_bonus
                if self.chinese_to_english_bonus is None
                else self.chinese_to_english_bonus
            )
        return 0.0

    def floor_for(self, terms: int, unmatched: bool = False) -> float:
        """The relevance floor for a query of `terms` distinct terms: a sentence (SENTENCE_TERMS or more)
        says enough to be a real question even when its best match is a paraphrase, and random words are
        rarely that many, so it may use `sentence_floor`. A shorter query none of whose words any memory
        holds (`unmatched`) has only its meaning to go on, so that must be stronger (`unmatched_floor`)."""
        if self.sentence_floor is not None and terms >= SENTENCE_TERMS:
            return self.sentence_floor
        if unmatched and self.unmatched_floor is not None:
            return max(self.relevance_floor, self.unmatched_floor)
        return self.relevance_floor

    def kept_floor(self) -> float:
        return self.relevance_floor if self.tail_floor is None else self.tail_floor


# Values measured on fixtures/eval (see fixtures/eval/README.md and the closing notes of the search work).
_PROFILES: dict[str, SearchProfile] = {
    COMPOSITE: SearchProfile(
        name=COMPOSITE,
        legs=(MINILM_DIMS, USE_M3_DIMS),
        english_weight=0.4,
        cos_floor=0.3,
        cos_full=0.55,
        lexical_weight=1.0,
        semantic_weight=1.0,
        unknown_token_threshold=0.3,
        relevance_floor=0.35,
        sentence_floor=0.3,
        unmatched_floor=0.7,
        hub_weight=0.3,
        tail_floor=0.1,
        cross_language_bonus=0.15,
        chinese_to_english_bonus=0.22,
        lexical_exponent=1.0,
        agreement=1.0,
        dedup_new_below=0.61,
        dedup_duplicate_above=0.88,
        dedup_english_weight=0.6,
    ),
    # Measured alone (tests/fusion_eval.py, coordinate search from three starting points, hub weight 0 and
    # 0.3), confirmed by the real searcher: MRR 0.536 -> 0.582, recall@10 0.535 -> 0.636. It reads English
    # only, so Chinese and cross-language queries rest on keywords; fusion stays behind its vector leg on
    # paraphrase and its keyword leg on mixed queries (against legs ranked without any floor).
    MINILM: SearchProfile(
        name=MINILM,
        legs=(MINILM_DIMS,),
        english_weight=1.0,
        cos_floor=0.15,
        cos_full=0.65,
        lexical_weight=1.0,
        semantic_weight=1.0,
        unknown_token_threshold=0.3,
        relevance_floor=0.35,
        sentence_floor=0.15,
        unmatched_floor=0.65,
        tail_floor=0.05,
        hub_weight=0.3,
        dedup_english_only=True,
        dedup_new_below=0.59,  # measured on the English pairs: it reads no other language
        dedup_duplicate_above=0.88,
    ),
    # Measured alone, as above: MRR 0.636 -> 0.772, recall@10 0.661 -> 0.898 (the pair: 0.771 and 0.861).
    # Its cosines are lower than the pair's, hence the lower calibration and floors; a Chinese query needs
    # the bonus to reach English memories (cross-zh-en 0.65 -> 0.82 at 0.1), an English query does not.
    USE_M3: SearchProfile(
        name=USE_M3,
        legs=(USE_M3_DIMS,),
        english_weight=1.0,
        cos_floor=0.05,
        cos_full=0.4,
        lexical_weight=1.0,
        semantic_weight=1.0,
        unknown_token_threshold=1.0,
        relevance_floor=0.25,
        sentence_floor=0.2,
        unmatched_floor=0.75,
        tail_floor=0.05,
        hub_weight=0.3,
        lexical_exponent=1.5,
        cross_language_bonus=0.0,
        chinese_to_english_bonus=0.1,
        dedup_new_below=0.59,
        dedup_duplicate_above=0.88,
    ),
}


def generic_profile(dimensions: int) -> SearchProfile:
    """For an embedder nobody measured: cosines of most modern embedders put unrelated text around 0.1-0.3
    and paraphrases above 0.6; the numbers are a guess, and search reports the profile as untuned."""
    return SearchProfile(
        name="generic",
        legs=(dimensions,),
        english_weight=1.0,
        cos_floor=0.3,
        cos_full=0.75,
        lexical_weight=1.0,
        semantic_weight=1.0,
        unknown_token_threshold=1.0,
        relevance_floor=0.3,
        tuned=False,
    )


def profile_for(identity: dict[str, Any] | None, settings: SearchSettings | None = None) -> SearchProfile:
    """The profile of the embedder that built a database (its identity from `meta`), with any values the
    user set in `memory.search` applied on top."""
    if identity is None:
        base = _PROFILES[COMPOSITE]
    elif identity.get("provider") == "local" and identity.get("model") in _PROFILES:
        base = _PROFILES[str(identity["model"])]
    else:
        base = generic_profile(int(identity.get("dimensions") or 0))
    return base if settings is None else apply_overrides(base, settings)


def apply_overrides(profile: SearchProfile, settings: SearchSettings) -> SearchProfile:
    overrides: dict[str, Any] = {
        field: value
        for field, value in (
            ("cos_floor", settings.cos_floor),
            ("cos_full", settings.cos_full),
            ("lexical_weight", settings.lexical_weight),
            ("semantic_weight", settings.semantic_weight),
            ("english_weight", settings.english_weight),
            ("relevance_floor", settings.relevance_floor),
            ("sentence_floor", settings.sentence_floor),
            ("unknown_token_threshold", settings.unknown_token_threshold),
            ("hub_weight", settings.hub_weight),
            ("unmatched_floor", settings.unmatched_floor),
        )
        if value is not None
    }
    return replace(profile, **overrides) if overrides else profile
