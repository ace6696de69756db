"""The keyword side of search: BM25 candidates from FTS5, and a lexical relevance in [0, 1].

BM25 scores rank documents for one query but mean nothing across queries. The relevance here does: it is
the share of the query's information a memory contains. Each query term weighs by its specificity (1 for
a term in a few memories, near 0 for one in almost all of them), so a memory holding every term of
"Hexo" or "PR #4242" scores 1, and "the" scores almost nothing anywhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from openclaw_cli.memory.store.sqlite import vec
from openclaw_cli.memory.text.analysis import fts_match

if TYPE_CHECKING:
    import apsw

    from openclaw_cli.memory.store.protocol import VectorFilter

COMMON_TERM_SHARE = 0.05
COMMON_TERM_MIN_DOCS = 1000
# A term found in at most this share of the memories is fully specific.
SPECIFIC_SHARE = 0.02
MAX_FETCH = 20_000


def store_size(conn: apsw.Connection) -> int:
    """An upper bound of the number of memories, in O(log n): the largest rowid."""
    row = conn.execute("SELECT max(rowid) FROM records").fetchone()
    return int((row and row[0]) or 0)


def document_counts(conn: apsw.Connection, terms: Sequence[str]) -> dict[str, int]:
    if not terms:
        return {}
    marks = ", ".join("?" for _ in terms)
    rows = conn.execute(f"SELECT term, doc FROM temp.records_vocab WHERE term IN ({marks})", list(terms))
    return {str(term): int(doc) for term, doc in rows}


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


def bm25_candidates(
    conn: apsw.Connection, terms: Sequence[str], where: VectorFilter, pool: int
) -> list[tuple[int, float]]:
    """(rowid, BM25 score) of the best `pool` live matches, best first.

    FTS5 ranks its own matches first and the filter is applied afterwards: joining every match to
    `records` before sorting cost 13.6 ms p50 at 100k memories against 5 ms this way. The FTS index holds
    only live records, so without a filter no join is needed; with one, the fetch deepens until enough
    rows pass it.
    """
    expression = fts_match(terms)
    if expression is None:
        return []
    clause, params = vec.filter_sql(where)
    fetch = pool if not clause else pool * 4
    while True:
        rows = [
            (int(rowid), -float(score))
            for rowid, score in conn.execute(
                "SELECT rowid, bm25(records_fts, 1.0, 0.4) AS s FROM records_fts WHERE records_fts MATCH ? "
                "ORDER BY s LIMIT ?",
                (expression, fetch),
            )
        ]
        if not clause:
            return rows
        allowed = _passing(conn, [r for r, _ in rows], clause, params)
        kept = [(rowid, score) for rowid, score in rows if rowid in allowed]
        if len(kept) >= pool or len(rows) < fetch or fetch >= MAX_FETCH:
            return kept[:pool]
        fetch *= 4


def _passing(conn: apsw.Connection, rowids: Sequence[int], clause: str, params: list[object]) -> set[int]:
    passing: set[int] = set()
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        sql = f"SELECT rowid FROM records WHERE rowid IN ({marks}) AND deleted = 0{clause}"
        passing.update(int(r[0]) for r in conn.execute(sql, (*chunk, *params)))
    return passing


def relevance(
    conn: apsw.Connection, rowids: Iterable[int], terms: Sequence[str], weights: dict[str, float]
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
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        for rowid, l0, l1 in conn.execute(
            f"SELECT rowid, l0, l1 FROM records_fts WHERE rowid IN ({marks})", chunk
        ):
            if spaced:
                row = f" {l0} {l1 or ''} "
                held_weight = sum(weight for probe, _, weight in probes if probe in row)
            else:
                held = set(str(l0).split()) | set(str(l1 or "").split())
                held_weight = sum(weight for _, t, weight in probes if t in held)
            out[int(rowid)] = held_weight / total * strength
    return {rowid: out.get(rowid, 0.0) for rowid in wanted}
