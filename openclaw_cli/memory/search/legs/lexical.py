"""The keyword side of search: which terms to search for, and a lexical relevance in [0, 1] (the BM25
candidates themselves come from the storage's keyword index, `MemoryStorage.keyword_candidates`).

BM25 scores rank documents for one query but mean nothing across queries. The relevance here does: it is
the share of the query's information a memory contains. Each query term weighs by its specificity (1 for
a term in a few memories, near 0 for one in almost all of them), so a memory holding every term of
"Hexo" or "PR #4242" scores 1, and "the" scores almost nothing anywhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Protocol


class IndexedTerms(Protocol):
    """What the relevance reads of an index: each row's analysed terms (the memory store, the transcript index)."""

    def indexed_terms(self, rowids: Sequence[int]) -> dict[int, tuple[str, str]]: ...


COMMON_TERM_SHARE = 0.05
COMMON_TERM_MIN_DOCS = 1000
# A term found in at most this share of the memories is fully specific.
SPECIFIC_SHARE = 0.02


def specificity(count: int, size: int) -> float:
    """1 for a term in at most SPECIFIC_SHARE of the memories (or in one or none), falling towards 0 for a term in
    all of them; on a log scale, like IDF, but relative to the store so that small stores work too."""
    if count <= 0:
        return 1.0  # in no memory at all: a memory without it lacks part of what was asked
    size = max(size, count)
    ceiling = math.log(min(size + 1, 1.0 / SPECIFIC_SHARE))
    return min(1.0, math.log((size + 1) / count) / ceiling)


def without_common_terms(terms: Sequence[str], counts: dict[str, int], size: int) -> list[str]:
    """Leave out terms found in a large share of all memories when the query has rarer ones.

    Every match is scored, so a term in 10% of 100k memories costs ~20 ms while its weight adds little;
    the rarer terms decide the ranking anyway. In small stores nothing is dropped.
    """
    if len(terms) < 2:
        return list(terms)
    limit = max(COMMON_TERM_MIN_DOCS, COMMON_TERM_SHARE * size)
    kept = [t for t in terms if counts.get(t, 0) <= limit]
    return kept or [min(terms, key=lambda t: counts.get(t, 0))]


def relevance(
    storage: IndexedTerms, rowids: Iterable[int], terms: Sequence[str], weights: dict[str, float]
) -> dict[int, float]:
    """For each memory, the specificity-weighted share of the query's terms it contains, in [0, 1].

    The share is scaled by the query's own specificity (its most specific term), so a query of common
    words cannot reach full relevance by matching them.
    """
    total = sum(weights.get(t, 0.0) for t in terms)
    wanted = list(rowids)
    if total <= 0 or not wanted:
        return dict.fromkeys(wanted, 0.0)
    strength = max(weights.get(t, 0.0) for t in terms)
    # A stored row is its terms joined by single spaces (text.index_terms), and an analysed term holds no
    # whitespace, so " term " inside " row " is the same test as membership of the row's split, without
    # building a set per candidate (~150 a query).
    spaced = all(t and not any(c.isspace() for c in t) for t in terms)
    probes = [(f" {t} ", t, weights.get(t, 0.0)) for t in terms]
    out: dict[int, float] = {}
    for rowid, (l0, l1) in storage.indexed_terms(wanted).items():
        if spaced:
            row = f" {l0} {l1} "
            held_weight = sum(weight for probe, _, weight in probes if probe in row)
        else:
            held = set(l0.split()) | set(l1.split())
            held_weight = sum(weight for _, t, weight in probes if t in held)
        out[rowid] = held_weight / total * strength
    return {rowid: out.get(rowid, 0.0) for rowid in wanted}
