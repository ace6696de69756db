"""The postgres keyword leg at 100k memories (issue 54): the rarest terms' rows first (postgres/keyword.py)
against scoring every matching row (what it did before), with SQLite's warm keyword leg beside them, on the
same records and the same queries, measured interleaved query by query in one run.

The stores hold keywords only (no vectors: embedding 100k memories takes 10+ minutes, and the vector leg is
the same in-memory scan on both backends once warm). The terms searched are those the search pipeline
sends (query_terms, then lexical.without_common_terms). Every query's result from both postgres plans is
compared: they must be identical, rows and scores. Prints p50/p95 per leg, the ratios and the load. Run:
    python -m pytest benchmarks/test_bench_pg_keyword.py -n 0 -p no:cacheprovider -s
(OPENCLAW_BENCH_COUNT=20000 for a quicker run.)
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from benchmarks import corpus100k
from benchmarks.test_bench_search_100k import spread
from openclaw_cli.memory.search.legs.lexical import without_common_terms
from openclaw_cli.memory.store.postgres import keyword
from openclaw_cli.memory.store.postgres.connection import open_storage
from openclaw_cli.memory.store.postgres.storage import PostgresStorage
from openclaw_cli.memory.store.protocol import VectorFilter
from openclaw_cli.memory.store.record_rows import new_record
from openclaw_cli.memory.store.sqlite.connection import open_db
from openclaw_cli.memory.store.sqlite.storage import SqliteStorage
from openclaw_cli.memory.text.analysis import query_terms
from tests.pg_server import TestServer, remove, start_server

COUNT = int(os.environ.get("OPENCLAW_BENCH_COUNT", "100000"))
POOL = 50  # SearchSettings.candidates: the keyword leg's pool
QUERIES = 200
CHUNK = 5000
MOMENT = datetime(2026, 1, 15, tzinfo=UTC)


@pytest.fixture(scope="module")
def server() -> Iterator[TestServer]:
    started = start_server()
    yield started
    remove(started)


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _records(texts: list[str]) -> Iterator[list[Any]]:
    categories = corpus100k.CATEGORIES
    for start in range(0, len(texts), CHUNK):
        yield [
            new_record(
                record_id=f"r{start + i}",
                l0=text,
                l1=None,
                agent_id="main",
                scope="user",
                user_id="owner",
                category=categories[(start + i) % len(categories)],
                created_at=MOMENT,
            )  # fmt: skip
            for i, text in enumerate(texts[start : start + CHUNK])
        ]


def _fill(storage: PostgresStorage | SqliteStorage, texts: list[str]) -> float:
    started = time.perf_counter()
    # As a move loads a store: in postgres the counting trigger off and the indexes built once at the end.
    with storage.transaction(), storage.copy_in_bulk():
        for chunk in _records(texts):
            storage.insert_copies([(record, None) for record in chunk])
    return time.perf_counter() - started


def _timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


def test_keyword_leg_at_100k(benchmark: Any, server: TestServer, tmp_path: Path) -> None:
    texts = corpus100k.memories(COUNT)
    dsn = server.fresh_database()
    postgres: PostgresStorage = open_storage(dsn, "openclaw_main")
    sqlite_path = tmp_path / "memory.sqlite"
    sqlite = SqliteStorage(open_db(sqlite_path), reader=lambda: open_db(sqlite_path))
    load_seconds = {"postgres": _fill(postgres, texts), "sqlite": _fill(sqlite, texts)}
    sqlite.keep_keywords_in_memory(wait=True)  # as a warm process (the gateway, --batch) holds them
    size = postgres.store_size()
    searches = []
    for query in corpus100k.queries(texts)[:QUERIES]:
        terms = query_terms(query.text)
        searches.append(without_common_terms(terms, postgres.document_counts(terms), size))
    where = VectorFilter()
    legs: dict[str, Callable[[list[str]], Any]] = {
        "sqlite": lambda terms: sqlite.keyword_candidates(terms, where, POOL),
        "postgresEveryMatch": lambda terms: keyword.bm25_every_match(postgres.conn, terms, where, POOL),
        "postgresRarestFirst": lambda terms: keyword.rarest_first(postgres.conn, terms, where, POOL),
    }
    for terms in searches[:20]:  # the server's buffers, the planner's statistics, the in-memory index
        for leg in legs.values():
            leg(terms)
    samples: dict[str, list[float]] = {name: [] for name in legs}
    differ, pruned = 0, 0
    load_before = _load()

    def measure() -> None:
        nonlocal differ, pruned
        for n, terms in enumerate(searches):
            # Interleaved, each query's legs in a rotating order: load swings hit every leg alike.
            names = list(legs)
            names = names[n % 3 :] + names[: n % 3]
            results = {}
            for name in names:
                ms, results[name] = _timed(lambda: legs[name](terms))  # noqa: B023
                samples[name].append(ms)
            hits, scored = results["postgresRarestFirst"]
            differ += hits != results["postgresEveryMatch"]
            pruned += scored < len([t for t in terms if postgres.document_counts([t])])

    benchmark.pedantic(measure, rounds=1, iterations=1)
    figures: dict[str, Any] = {
        "records": size,
        "queries": len(searches),
        "bulkLoadSeconds": {k: round(v, 1) for k, v in load_seconds.items()},
        "keywordLegMs": {name: spread(values) for name, values in samples.items()},
        "queriesThatSkippedCommonTermsRows": pruned,
        "resultsThatDiffer": differ,
        "load": [load_before, _load()],
    }
    legs_ms = figures["keywordLegMs"]
    figures["ratios"] = {
        "everyMatch/rarestFirst p95": round(
            legs_ms["postgresEveryMatch"]["p95"] / legs_ms["postgresRarestFirst"]["p95"], 2
        ),
        "rarestFirst/sqlite p95": round(legs_ms["postgresRarestFirst"]["p95"] / legs_ms["sqlite"]["p95"], 2),
        "rarestFirst/sqlite p50": round(legs_ms["postgresRarestFirst"]["p50"] / legs_ms["sqlite"]["p50"], 2),
    }
    benchmark.extra_info.update(figures)
    print(f"\nkeyword leg, {size} memories:\n" + json.dumps(figures, indent=1))
    postgres.close()
    sqlite.close()
    assert differ == 0, f"{differ} queries got other rows or scores from the rarest terms first"
