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

Query terms are one bound text[]; the tsquery is built from it in SQL, each term a quoted lexeme, so no
term is ever read as tsquery syntax.
"""

from __future__ import annotations

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

# Each term as a quoted tsquery lexeme (a quote doubled, a backslash escaped), joined with OR.
_ANY_TERM = (
    "(SELECT string_agg('''' || replace(replace(t, '\\', '\\\\'), '''', '''''') || '''', ' | ')::tsquery "
    "FROM unnest(%(terms)s::text[]) AS t)"
)

_BM25 = f"""
WITH totals AS (
    SELECT documents::float8 AS n, greatest(tokens, 1)::float8 / greatest(documents, 1) AS avgdl
    FROM keyword_totals
), weights AS (
    SELECT q.t, greatest(ln((totals.n - coalesce(v.documents, 0) + 0.5) / (coalesce(v.documents, 0) + 0.5)),
                         {MIN_IDF}) AS idf
    FROM unnest(%(terms)s::text[]) AS q(t) CROSS JOIN totals LEFT JOIN keyword_vocab v ON v.term = q.t
), hits AS (
    SELECT k.rowid, k.l0_terms, k.l1_terms, k.length FROM keyword_rows k JOIN records r ON r.rowid = k.rowid
    WHERE k.terms @@ {_ANY_TERM}{{clause}}
)
SELECT h.rowid, sum(w.idf * f.freq * {K1 + 1} / (f.freq + {K1} * (1 - {B} + {B} * h.length / totals.avgdl)))
    AS score
FROM hits h CROSS JOIN weights w CROSS JOIN totals
CROSS JOIN LATERAL (
    SELECT {L0_WEIGHT} * coalesce(cardinality(array_positions(h.l0_terms, w.t)), 0)
         + {L1_WEIGHT} * coalesce(cardinality(array_positions(h.l1_terms, w.t)), 0) AS freq
) f
GROUP BY h.rowid ORDER BY score DESC, h.rowid LIMIT %(pool)s
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
    part of the query, so the pool is never short of rows that pass it."""
    cleaned = match_terms(terms)
    if not cleaned:
        return []
    clause, params = filter_sql(where, "r.")
    named = {f"f{i}": value for i, value in enumerate(params)}
    for i in range(len(params)):
        clause = clause.replace("%s", f"%(f{i})s", 1)
    rows = conn.execute(_BM25.format(clause=clause), {"terms": cleaned, "pool": pool, **named})
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
