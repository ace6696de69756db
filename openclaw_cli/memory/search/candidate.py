"""One search candidate on its way through the legs, fusion and the context steps (search/pipeline.py)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Candidate:
    rowid: int
    bm25_rank: int | None = None
    bm25_score: float | None = None
    vector_rank: int | None = None
    vector_score: float | None = None
    legs: tuple[float, ...] | None = None
    lexical: float = 0.0
    semantic: float = 0.0
    fused: float = 0.0  # the relevance fusion gave, before the context stages
    relevance: float = 0.0
    rerank_score: float | None = None
    retrievability: float = 1.0
    score: float = 0.0
    phrasing: str | None = None  # the model's phrasing of the query that found it (query expansion)
    context: dict[str, float] = field(default_factory=dict)  # what subject/dialogue rules did, for --explain
    # (stage, its factor or share, the relevance it left), in the order the stages ran: for --explain.
    trail: list[tuple[str, float, float]] = field(default_factory=list)

    def note(self, stage: str, value: float) -> None:
        """Record what a stage did, after it changed `relevance`."""
        self.context[stage] = value
        self.trail.append((stage, value, self.relevance))


def by_relevance(merged: list[Candidate]) -> None:
    """Best first; ties go to the closer vector, then the better keyword score, then the older row."""
    merged.sort(key=lambda c: (-c.relevance, -(c.vector_score or 0.0), -(c.bm25_score or 0.0), c.rowid))
