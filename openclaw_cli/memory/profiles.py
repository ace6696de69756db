"""Per-embedder search profiles: every search parameter whose right value depends on the embedder.

A cosine of 0.4 means "closely related" for one model and "unrelated" for another, so the calibration of
vector similarity, the weight of each model in a composite vector, and the fusion weights are measured
per embedder on the eval set (tests/evalset.py; tests/test_search_defaults.py keeps them honest) and
looked up here by the identity stored in the database. An embedder nobody measured gets the `generic`
profile, and search says so instead of silently applying numbers tuned for another model.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openclaw_cli.config import SearchSettings

MINILM = "all-MiniLM-L6-v2-int8"
USE_M3 = "use-m3-int8"
COMPOSITE = f"{MINILM}+{USE_M3}"
MINILM_DIMS = 384
USE_M3_DIMS = 512


@dataclass(frozen=True)
class SearchProfile:
    """How to turn one embedder's similarities into a relevance in [0, 1] and fuse it with keywords.

    - `legs`: the widths of the model vectors concatenated in one stored vector (one entry for a
      single model). Each leg's cosine is computed separately.
    - `english_weight`: in a two-leg vector, the weight of the first (English-only) leg for an English
      query and an English memory; it shrinks with the share of the query the English model cannot read
      and is 0 for a memory not written in English (its English vector is built from unknown tokens).
    - `cos_floor`, `cos_full`: the similarity at which semantic relevance starts (0) and is certain (1).
    - `lexical_weight`, `semantic_weight`: relevance = 1 - (1 - wl * lexical)(1 - ws * semantic).
    - `unknown_token_threshold`: for a single English leg, the query share of unknown tokens above which
      the vector is down-weighted by (1 - share).
    - `relevance_floor`: results below it are left out (shown with --all).
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
    tuned: bool = True

    def semantic(self, similarity: float) -> float:
        """A similarity mapped linearly onto [0, 1] between cos_floor and cos_full."""
        span = max(self.cos_full - self.cos_floor, 1e-6)
        return min(1.0, max(0.0, (similarity - self.cos_floor) / span))

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
        }


# Values measured on fixtures/eval (see fixtures/eval/README.md and the closing notes of the search work).
_PROFILES: dict[str, SearchProfile] = {
    COMPOSITE: SearchProfile(
        name=COMPOSITE,
        legs=(MINILM_DIMS, USE_M3_DIMS),
        english_weight=0.6,
        cos_floor=0.2,
        cos_full=0.6,
        lexical_weight=1.0,
        semantic_weight=1.0,
        unknown_token_threshold=0.3,
        relevance_floor=0.3,
    ),
    MINILM: SearchProfile(
        name=MINILM,
        legs=(MINILM_DIMS,),
        english_weight=1.0,
        cos_floor=0.25,
        cos_full=0.65,
        lexical_weight=1.0,
        semantic_weight=1.0,
        unknown_token_threshold=0.3,
        relevance_floor=0.3,
    ),
    USE_M3: SearchProfile(
        name=USE_M3,
        legs=(USE_M3_DIMS,),
        english_weight=1.0,
        cos_floor=0.2,
        cos_full=0.6,
        lexical_weight=1.0,
        semantic_weight=1.0,
        unknown_token_threshold=1.0,
        relevance_floor=0.3,
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
            ("unknown_token_threshold", settings.unknown_token_threshold),
        )
        if value is not None
    }
    return replace(profile, **overrides) if overrides else profile
