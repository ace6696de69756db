"""The postgres keyword leg's SQL as it was before issue 54 (openclaw_cli/memory/store/postgres/keyword.py at
85c2145), kept verbatim so tests/test_postgres_keyword.py can assert that today's results are still its."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from openclaw_cli.memory.store.postgres.keyword import K1, L0_WEIGHT, L1_WEIGHT, MIN_IDF, B
from openclaw_cli.memory.store.postgres.records import filter_sql
from openclaw_cli.memory.store.protocol import VectorFilter
from openclaw_cli.memory.text.analysis import match_terms

if TYPE_CHECKING:
    import psycopg
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


def bm25_before(
    conn: psycopg.Connection, terms: Sequence[str], where: VectorFilter, pool: int
) -> list[tuple[int, float]]:
    """bm25_candidates as it was: every row holding any term scored, in one aggregate."""
    cleaned = match_terms(terms)
    if not cleaned:
        return []
    clause, params = filter_sql(where, "r.")
    named = {f"f{i}": value for i, value in enumerate(params)}
    for i in range(len(params)):
        clause = clause.replace("%s", f"%(f{i})s", 1)
    rows = conn.execute(_BM25.format(clause=clause), {"terms": cleaned, "pool": pool, **named})
    return [(int(rowid), float(score)) for rowid, score in rows]
