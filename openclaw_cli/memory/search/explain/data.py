"""What `memory search --explain` says about a query and each result, as data: the words as typed with the
terms searched for them, the fusion of the two legs as a formula that adds up, and each stage that moved a
result, with its factor, its reason and the relevance after it. The CLI renders it; `--json` carries it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.text.analysis import typed_words

if TYPE_CHECKING:
    from openclaw_cli.memory.search.candidate import Candidate
    from openclaw_cli.memory.search.profiles import SearchProfile

# Why each stage moved a result (the keys are Candidate.context's).
REASONS = {
    "otherPerson": "about someone the query does not name",
    "dialogue": "said next to a hit in the same conversation, which lends it a share",
    "answerKind": "holds no time, quantity, place or name of the kind the question asks for",
    "question": "only asks",
    "assistant": "said by the assistant",
    "rerank": "put in its place by the reranker, taking the relevance of that place",
}
INDEPENDENT = "1 - (1 - keywords) * (1 - meaning)"


def query_words(text: str, terms: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The words searched, as typed, each with the terms made of it; and the words left out (stopwords
    beside other words)."""
    wanted = set(terms)
    searched: list[dict[str, Any]] = []
    left_out: list[str] = []
    for word, made in typed_words(text):
        kept = [t for t in dict.fromkeys(made) if t in wanted]
        if kept:
            searched.append({"typed": word, "terms": kept})
        else:
            left_out.append(word)
    return searched, left_out


def fusion(profile: SearchProfile, keywords: float, meaning: float) -> dict[str, Any]:
    """How the legs' relevances made the fused one: with unit weights and full agreement (every
    packaged profile) the independent-evidence formula, else the weighted form profile.fuse computes."""
    out: dict[str, Any] = {
        "keywords": round(keywords, 4),
        "meaning": round(meaning, 4),
        "relevance": round(profile.fuse(keywords, meaning), 4),
    }
    if (profile.lexical_weight, profile.semantic_weight, profile.agreement) == (1.0, 1.0, 1.0):
        out["formula"] = INDEPENDENT
    else:
        out["formula"] = "stronger + agreement * weaker * (1 - stronger)"
        out.update(
            lexicalWeight=profile.lexical_weight,
            semanticWeight=profile.semantic_weight,
            agreement=profile.agreement,
        )
    return out


def stage_steps(candidate: Candidate) -> list[dict[str, Any]]:
    """Each stage that moved the candidate after fusion, in order, with the relevance it left."""
    steps = []
    for stage, value, after in candidate.trail:
        kind = {"dialogue": "lent", "rerank": "rerankScore"}.get(stage, "factor")
        steps.append(
            {"stage": stage, kind: round(value, 4), "reason": REASONS[stage], "relevance": round(after, 4)}
        )
    return steps


def details(c: Candidate, language: str, profile: SearchProfile | None) -> dict[str, Any]:
    """A result's `explain` object: each leg's evidence, the fusion, the stages, the final factors."""
    out: dict[str, Any] = {
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
        "language": language,
        "context": dict(c.context),
        "stages": stage_steps(c),
    }
    if profile is not None:
        out["fusion"] = fusion(profile, c.lexical, c.semantic)
    if c.phrasing is not None:
        out["phrasing"] = c.phrasing
    return out


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)
