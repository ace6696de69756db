"""The keyword index of the postgres backend: each live record's analysed terms, a GIN-indexed tsvector
of them for matching, and BM25 computed in SQL exactly as FTS5's bm25() computes it for the SQLite file.

The terms come from the project's own analysis (text/analysis.py: jieba for Han, bigrams for kana and
Hangul, stems for Latin), never from a Postgres text-search configuration: `array_to_tsvector` takes them
as they are. So both backends index the same words, and the same BM25 over the same words gives the same
scores, which keeps each embedder's relevance profile and floor meaning the same on both.

FTS5's bm25 (k1 1.2, b 0.75): for each query term, idf = ln((N - n + 0.5) / (n + 0.5)), at least 1e-6,
with N the indexed rows and n those holding the term; f = the term's count in L0 x 1.0 + in L1 x 0.4 (the
column weights of store/sqlite/keyword.py); the row's length D counts every term of both columns, the
average over all rows avgdl; score = sum of idf x f x (k1 + 1) / (f + k1 x (1 - b + b x D / avgdl)).
N, the tokens behind avgdl and each term's n are kept by triggers (postgres/schema.py).

A row's terms are summed in the query's order, whatever plan the server picks: a float sum's last bits
depend on its order, and the same row must get the same score from every query that scores it.

Query terms are one bound text[] and one bound tsquery of them, each term a quoted lexeme (any_term), so
no term is ever read as tsquery syntax.

Scoring every row that holds any query term cost 268/434 ms p50/p95 at 100k (issue 54): a sentence query
holds common words, each in thousands of rows. So the rarest terms go first (MaxScore): the rows holding
them are scored in full, and the pool's last score then bounds what the other terms can do. A term adds
at most the formula at its largest f in any row and its shortest row (kept per term beside its count,
postgres/schema.py), so a row holding only terms whose bounds sum below that score cannot enter the pool,
and only rows holding one of the other terms are scored. The
result is the one scoring every row gives, row for row and score for score (bm25_every_match; asserted on
the eval set by tests/test_postgres_keyword.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store.postgres.records import filter_sql
from openclaw_cli.memory.store.protocol import VectorFilter
from openclaw_cli.memory.text.analysis import index_terms, match_terms

if TYPE_CHECKING:
    import psycopg

K1 = 1.2
B = 0.75
L0_WEIGHT = 1.0  # the column weights bm25(records_fts, 1.0, 0.4) gives in store/sqlite/keyword.py
L1_WEIGHT = 0.4
MIN_IDF = 1e-6

# A bound on what idf may differ by between Python and the server (the last bits of a double): pruning
# keeps this margin, so rounding never drops a row that belongs in the pool.
BOUND_MARGIN = 1e-9

# The terms a row must hold one of to be scored (every query term, or the rarest of them) as a tsquery
# value: a bound parameter, so the planner sees which terms it holds and reads the GIN index. Built in SQL
# (an InitPlan) the query's value was unknown when planning, and the plan read every keyword row: 38 ms
# for 3 terms at 5k rows.
_ANY_TERM = "%(match)s::tsquery"

# Each row is scored in a subquery of its own over the query's terms, summed in the query's order, and only
# over the terms the row holds (the others add exactly 0, so leaving them out changes no bit of the sum):
# against one aggregate over every (row, term) pair sorted by row, 1.6-1.8x faster at 100k with the same
# scores. `{join}` joins the records only when the filter needs their columns (a keyword row's record
# always exists: a foreign key).
_BM25 = f"""
WITH totals AS (
    SELECT documents::float8 AS n, greatest(tokens, 1)::float8 / greatest(documents, 1) AS avgdl
    FROM keyword_totals LIMIT 1
), weights AS MATERIALIZED (
    SELECT q.t, q.position, greatest(ln((totals.n - coalesce(v.documents, 0) + 0.5) / (coalesce(v.documents, 0) + 0.5)),
                         {MIN_IDF}) AS idf,
           ('''' || replace(replace(q.t, '\\', '\\\\'), '''', '''''') || '''')::tsquery AS lexeme
    FROM unnest(%(terms)s::text[]) WITH ORDINALITY AS q(t, position) CROSS JOIN totals
    LEFT JOIN keyword_vocab v ON v.term = q.t
), hits AS MATERIALIZED (
    SELECT k.rowid, k.l0_terms, k.l1_terms, k.length, k.terms FROM keyword_rows k{{join}}
    WHERE k.terms @@ {_ANY_TERM}{{clause}}
)
SELECT h.rowid, s.score
FROM hits h CROSS JOIN totals
CROSS JOIN LATERAL (
    SELECT sum(w.idf * f.freq * {K1 + 1} / (f.freq + {K1} * (1 - {B} + {B} * h.length / totals.avgdl))
               ORDER BY w.position) AS score
    FROM weights w CROSS JOIN LATERAL (
        SELECT {L0_WEIGHT} * coalesce(cardinality(array_positions(h.l0_terms, w.t)), 0)
             + {L1_WEIGHT} * coalesce(cardinality(array_positions(h.l1_terms, w.t)), 0) AS freq
    ) f
    WHERE h.terms @@ w.lexeme
) s
ORDER BY s.score DESC, h.rowid LIMIT %(pool)s
"""


WRITE_ROW = (
    "INSERT INTO keyword_rows(rowid, l0_terms, l1_terms, terms, length) "
    "VALUES (%s, %s::text[], %s::text[], array_to_tsvector(%s::text[]), %s)"
)


def write_row(conn: psycopg.Connection, rowid: int, l0: str, l1: str | None) -> None:
    """The keyword row of a live record: its analysed terms, never the raw text."""
    conn.execute(WRITE_ROW, row_values(rowid, l0, l1))


def row_values(rowid: int, l0: str, l1: str | None) -> tuple[Any, ...]:
    """The values of WRITE_ROW for one record."""
    l0_terms, l1_terms = index_terms(l0).split(), index_terms(l1 or "").split()
    return rowid, l0_terms, l1_terms, list(dict.fromkeys(l0_terms + l1_terms)), len(l0_terms) + len(l1_terms)


def delete_rows(conn: psycopg.Connection, rowids: Sequence[int]) -> None:
    conn.execute("DELETE FROM keyword_rows WHERE rowid = ANY(%s)", (list(rowids),))


def bm25_candidates(
    conn: psycopg.Connection, terms: Sequence[str], where: VectorFilter, pool: int
) -> list[tuple[int, float]]:
    """(rowid, BM25 score) of the best `pool` live matches that `where` allows, best first; the filter is
    part of the query, so the pool is never short of rows that pass it. The rarest terms' rows first (the
    module's docstring): the result is bm25_every_match's."""
    return rarest_first(conn, terms, where, pool)[0]


def rarest_first(
    conn: psycopg.Connection, terms: Sequence[str], where: VectorFilter, pool: int
) -> tuple[list[tuple[int, float]], int]:
    """bm25_candidates' result, and how many of the (held) terms a row had to hold one of to be scored."""
    cleaned = match_terms(terms)
    if not cleaned:
        return [], 0
    stats, totals = _term_stats(conn, cleaned)
    counts = {t: held for t, (held, _, _) in stats.items()}
    order = sorted(counts, key=lambda t: (counts[t], t))  # rarest first
    if not order:
        return [], 0  # no live row holds any of the terms
    bounds = {t: _bound(totals, *stats[t]) for t in order}
    # Enough of the rarest terms that their rows could fill the pool; at least one.
    scored, held = 0, 0
    while scored < len(order) and (scored == 0 or held < pool):
        held += counts[order[scored]]
        scored += 1
    hits = _scored(conn, cleaned, order[:scored], where, pool)
    while scored < len(order):
        # Not full, the pool bounds nothing: every other term's rows are needed. Full, only the rows of
        # the terms its last score says a row must hold one of.
        needed = len(order) if len(hits) < pool else _essential(order, bounds, hits[-1][1])
        if needed <= scored:
            break
        # Only the rows not scored yet (those holding none of the terms scored so far): each row is scored
        # once, by the same SQL, so merging the two lists gives what one query over all of them would.
        more = _scored(conn, cleaned, order[scored:needed], where, pool, scored_already=order[:scored])
        hits = sorted([*hits, *more], key=lambda hit: (-hit[1], hit[0]))[:pool]
        scored = needed  # these rows can only raise the pool's last score
    return hits, scored


def bm25_every_match(
    conn: psycopg.Connection, terms: Sequence[str], where: VectorFilter, pool: int
) -> list[tuple[int, float]]:
    """The same by scoring every row that holds any of the terms (what bm25_candidates did before issue
    54): the reference its result is compared with."""
    cleaned = match_terms(terms)
    return _scored(conn, cleaned, cleaned, where, pool) if cleaned else []


def any_term(terms: Sequence[str]) -> str:
    """A tsquery matching any of `terms`, each a quoted lexeme (a backslash escaped, a quote doubled): no
    term is ever read as tsquery syntax (operators, weights, prefixes)."""
    return " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)


def _essential(order: Sequence[str], bounds: dict[str, float], floor: float) -> int:
    """How many of the rarest terms a row must hold one of to possibly score `floor`: the commonest terms
    whose bounds sum (with a margin) below `floor` cannot lift a row to it on their own."""
    rest = 0.0
    for position in range(len(order) - 1, -1, -1):
        rest += bounds[order[position]]
        if rest * (1 + BOUND_MARGIN) + BOUND_MARGIN >= floor:
            return position + 1
    return 0


def _bound(totals: tuple[int, int], holding: int, max_freq: float | None, min_length: int | None) -> float:
    """The most a term held by `holding` rows adds to a row's score: _BM25's formula at the term's largest
    f and its shortest row (the formula grows with f and shrinks with the row's length); idf x (k1 + 1)
    when they are not known."""
    documents, tokens = totals
    idf = max(math.log((documents - holding + 0.5) / (holding + 0.5)), MIN_IDF)
    if max_freq is None or min_length is None:
        return idf * (K1 + 1)
    avgdl = max(tokens, 1) / max(documents, 1)
    return idf * max_freq * (K1 + 1) / (max_freq + K1 * (1 - B + B * min_length / avgdl))


def _term_stats(
    conn: psycopg.Connection, terms: Sequence[str]
) -> tuple[dict[str, tuple[int, float | None, int | None]], tuple[int, int]]:
    """Per term some live row holds: (rows holding it, largest f, shortest row); and the indexed rows and
    their terms (keyword_totals), in one round trip."""
    rows = conn.execute(
        "SELECT v.term, v.documents, v.max_freq, v.min_length, t.documents, t.tokens FROM keyword_totals t "
        "LEFT JOIN keyword_vocab v ON v.term = ANY(%s) AND v.documents > 0",
        (list(terms),),
    ).fetchall()
    totals = (int(rows[0][4]), int(rows[0][5])) if rows else (0, 0)
    stats = {
        str(term): (int(held), None if freq is None else float(freq), None if length is None else int(length))
        for term, held, freq, length, _, _ in rows
        if term is not None
    }
    return stats, totals


def _scored(
    conn: psycopg.Connection,
    terms: Sequence[str],
    match: Sequence[str],
    where: VectorFilter,
    pool: int,
    scored_already: Sequence[str] = (),
) -> list[tuple[int, float]]:
    """The best `pool` rows that hold one of `match` and none of `scored_already`, each scored over all of
    `terms`."""
    clause, params = filter_sql(where, "r.")
    named = {f"f{i}": value for i, value in enumerate(params)}
    for i in range(len(params)):
        clause = clause.replace("%s", f"%(f{i})s", 1)
    query = any_term(match)
    if scored_already:
        query = f"({query}) & !({any_term(scored_already)})"
    arguments = {"terms": list(terms), "match": query, "pool": pool, **named}
    join = " JOIN records r ON r.rowid = k.rowid" if clause else ""
    rows = conn.execute(_BM25.format(clause=clause, join=join), arguments)
    return [(int(rowid), float(score)) for rowid, score in rows]


def document_counts(conn: psycopg.Connection, terms: Sequence[str]) -> dict[str, int]:
    if not terms:
        return {}
    rows = conn.execute(
        "SELECT term, documents FROM keyword_vocab WHERE term = ANY(%s) AND documents > 0", (list(terms),)
    )
    return {str(term): int(documents) for term, documents in rows}


def indexed_terms(conn: psycopg.Connection, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
    rows = conn.execute(
        "SELECT rowid, l0_terms, l1_terms FROM keyword_rows WHERE rowid = ANY(%s)", (list(rowids),)
    )
    return {int(rowid): (" ".join(l0), " ".join(l1)) for rowid, l0, l1 in rows}
