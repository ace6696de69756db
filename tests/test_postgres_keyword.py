"""The postgres keyword leg scores the rarest terms' rows first (postgres/keyword.py): its result is the
one scoring every matching row gives, row for row and score for score, on every eval query, for the pool
sizes the search uses and smaller ones, with and without a person's filter; and each term's statistics
its bound comes from, kept by the counting trigger, by a move's recount and by the migration that added
them. On the real test server."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.core.paths import Home
from openclaw_cli.memory.portability.backends import Side, plan_move
from openclaw_cli.memory.store.postgres import keyword, schema
from openclaw_cli.memory.store.postgres.connection import open_storage
from openclaw_cli.memory.store.postgres.storage import PostgresStorage
from openclaw_cli.memory.store.protocol import VectorFilter
from openclaw_cli.memory.store.record_rows import new_record
from openclaw_cli.memory.store.sqlite.connection import open_db
from openclaw_cli.memory.store.sqlite.storage import SqliteStorage
from openclaw_cli.memory.text.analysis import query_terms
from tests.evalset import MEMORY_FILES, load_jsonl, load_queries
from tests.pg_keyword_before import bm25_before

_NAMES = itertools.count(1)
MOMENT = datetime(2026, 1, 15, tzinfo=UTC)


def _eval_record(memory: dict[str, Any]) -> Any:
    record = new_record(
        record_id=memory["id"], l0=memory["l0"], l1=memory.get("l1") or None, agent_id="main",
        scope=memory["scope"], user_id=memory["userId"], category=memory["category"], created_at=MOMENT,
    )  # fmt: skip
    return record.model_copy(update={"updated_at": MOMENT})


@pytest.fixture(scope="module")
def eval_store(pg_shared_dsn: str) -> Iterator[PostgresStorage]:
    """Every eval record (memories, distractors, dialogue turns) in one postgres store, keywords only."""
    storage = open_storage(pg_shared_dsn, f"pg_keyword_{next(_NAMES)}")
    with storage.transaction():
        for name in MEMORY_FILES:
            for memory in load_jsonl(name):
                storage.insert(_eval_record(memory), vector_ready=False)
    yield storage
    storage.close()


def _queries() -> list[tuple[list[str], str]]:
    return [(query_terms(item["query"]), item["userId"]) for item in load_queries()]


@pytest.mark.parametrize("pool", [50, 5])
@pytest.mark.parametrize("filtered", [False, True])
def test_every_eval_query_gets_what_scoring_every_match_gives(
    eval_store: PostgresStorage, pool: int, filtered: bool
) -> None:
    queries = _queries()
    pruned = 0
    for terms, user in queries:
        where = VectorFilter(user_id=user) if filtered else VectorFilter()
        hits, scored = keyword.rarest_first(eval_store.conn, terms, where, pool)
        assert hits == keyword.bm25_every_match(eval_store.conn, terms, where, pool), terms
        held = [t for t in set(terms) if eval_store.document_counts([t])]
        pruned += scored < len(held)
    # The comparison is not vacuous: queries left their commonest terms' rows unscored (many of them with a
    # small pool; with the search's own, the eval's 2.5k memories mostly have too few rows to skip).
    assert pruned >= (len(queries) // 10 if pool <= 5 else 1), (pruned, len(queries))


def test_terms_no_row_holds_find_nothing_and_are_left_out(eval_store: PostgresStorage) -> None:
    assert keyword.rarest_first(eval_store.conn, ["zzqxnotaword", "qqzzneither"], VectorFilter(), 10) == (
        [],
        0,
    )
    with_one = keyword.rarest_first(
        eval_store.conn, ["zzqxnotaword", *query_terms("coffee grinder")], VectorFilter(), 10
    )
    assert with_one[0] == keyword.bm25_every_match(
        eval_store.conn, query_terms("coffee grinder"), VectorFilter(), 10
    )


def test_empty_and_unsafe_terms_find_nothing(eval_store: PostgresStorage) -> None:
    assert keyword.bm25_candidates(eval_store.conn, [], VectorFilter(), 10) == []
    assert keyword.bm25_candidates(eval_store.conn, ["", "\x00", " "], VectorFilter(), 10) == []


def test_a_filter_that_leaves_fewer_rows_than_the_pool_scores_every_term(eval_store: PostgresStorage) -> None:
    """A person holding few matches: the rarest terms' rows cannot fill the pool, so no score bounds
    the rest and every term's rows are scored."""
    terms = query_terms("coffee grinder morning work")
    where = VectorFilter(user_id="u-nobody-has-this-id")
    assert keyword.rarest_first(eval_store.conn, terms, where, 10)[0] == []
    lin = VectorFilter(user_id="u-lin")
    hits, scored = keyword.rarest_first(eval_store.conn, terms, lin, 1000)
    assert scored == len([t for t in terms if eval_store.document_counts([t])])
    assert hits == keyword.bm25_every_match(eval_store.conn, terms, lin, 1000) and hits


def _vocabulary(storage: PostgresStorage) -> dict[str, tuple[int, float, int]]:
    rows = storage.conn.execute("SELECT term, documents, max_freq, min_length FROM keyword_vocab")
    return {str(t): (int(n), float(f), int(m)) for t, n, f, m in rows}


def _recounted(storage: PostgresStorage) -> dict[str, tuple[int, float, int]]:
    rows = storage.conn.execute(schema.TERM_STATS)
    return {str(t): (int(n), float(f), int(m)) for t, n, f, m in rows}


def test_the_trigger_keeps_each_terms_statistics_as_a_recount_finds_them(eval_store: PostgresStorage) -> None:
    assert _vocabulary(eval_store) == _recounted(eval_store)


def test_after_deletes_the_kept_statistics_still_bound_the_rows_left(pg_shared_dsn: str) -> None:
    storage = open_storage(pg_shared_dsn, f"pg_keyword_{next(_NAMES)}")
    try:
        memories = load_jsonl("memories.jsonl")
        with storage.transaction():
            rows = [storage.insert(_eval_record(m), vector_ready=False) for m in memories]
            storage.remove(rows[::3])
        kept, recount = _vocabulary(storage), _recounted(storage)
        assert set(kept) == set(recount)  # a term no row holds any more is gone
        for term, (held, freq, length) in recount.items():
            assert kept[term][0] == held and kept[term][1] >= freq and kept[term][2] <= length
        for item in load_queries(("queries",))[:60]:
            terms = query_terms(item["query"])
            got = keyword.rarest_first(storage.conn, terms, VectorFilter(), 5)[0]
            assert got == keyword.bm25_every_match(storage.conn, terms, VectorFilter(), 5)
    finally:
        storage.close()


def test_a_version_1_store_gains_the_statistics_and_keeps_its_rows(
    pg_shared_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"pg_keyword_{next(_NAMES)}"
    with monkeypatch.context() as patched:
        patched.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
        patched.setattr(schema, "SCHEMA_VERSION", 1)
        old = open_storage(pg_shared_dsn, name)
        with old.transaction():
            for memory in load_jsonl("memories.jsonl"):
                old.insert(_eval_record(memory), vector_ready=False)
        assert schema.stored_version(old.conn) == 1
        old.close()
    storage = open_storage(pg_shared_dsn, name)
    try:
        assert schema.stored_version(storage.conn) == 2
        assert storage.conn.execute("SELECT count(*) FROM records").fetchone() == (
            len(load_jsonl("memories.jsonl")),
        )
        assert _vocabulary(storage) == _recounted(storage)
    finally:
        storage.close()


def test_a_move_into_postgres_loads_in_bulk_and_keeps_the_statistics(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`memory migrate-backend` sets the counting trigger aside for the copy (one recount at the end, not a
    row's updates per record: quadratic in one transaction) and the recount keeps each term's statistics."""
    home = Home(tmp_path / "home")
    sqlite = SqliteStorage(open_db(home.ensure(home.memory_dir("main")) / "memory.sqlite"))
    memories = load_jsonl("memories.jsonl")
    with sqlite.transaction():
        for memory in memories:
            sqlite.insert(_eval_record(memory), vector_ready=False)
    sqlite.close()
    calls = []
    bulk = PostgresStorage.copy_in_bulk

    def watched(storage: PostgresStorage) -> Any:
        calls.append(storage)
        return bulk(storage)

    monkeypatch.setattr(PostgresStorage, "copy_in_bulk", watched)
    plan_move(home, "main", Side("sqlite"), "postgres", pg_dsn).run()
    assert len(calls) == 1
    storage = open_storage(pg_dsn, "main")
    try:
        assert _vocabulary(storage) and _vocabulary(storage) == _recounted(storage)
        enabled = storage.conn.execute(
            "SELECT tgenabled FROM pg_trigger WHERE tgname = 'keyword_rows_counted'"
        ).fetchone()
        assert enabled == ("O",)  # on again for ordinary writes
        before = storage.conn.execute("SELECT documents FROM keyword_totals").fetchone()
        with storage.transaction():
            storage.insert(_eval_record({**memories[0], "id": "m-new"}), vector_ready=False)
        assert storage.conn.execute("SELECT documents FROM keyword_totals").fetchone() == (before[0] + 1,)
        assert _vocabulary(storage) == _recounted(storage)
    finally:
        storage.close()


@pytest.mark.parametrize("filtered", [False, True])
def test_every_eval_query_gets_what_it_got_before_issue_54(
    eval_store: PostgresStorage, filtered: bool
) -> None:
    """Against the SQL as it was (tests/pg_keyword_before.py): the same rows in the same order, and the same
    scores but for the last bits a float sum's order changes (that order was the plan's before, and a row
    holding a term whose contribution is 0 now skips adding it)."""
    for terms, user in _queries():
        where = VectorFilter(user_id=user) if filtered else VectorFilter()
        now = keyword.bm25_candidates(eval_store.conn, terms, where, 50)
        before = bm25_before(eval_store.conn, terms, where, 50)
        _same_ranking(now, before, terms)


def _same_ranking(now: list[tuple[int, float]], before: list[tuple[int, float]], terms: object) -> None:
    """The same rows in the same order, but for rows whose scores tie to the last bits: the old SQL summed a
    row's terms in its plan's order, so two rows equal but for rounding may come either way round (seen in
    CI: one plan's sum put row 490 ahead of row 1685, the other behind)."""
    assert len(now) == len(before), terms
    for rank, ((row, score), (old_row, old_score)) in enumerate(zip(now, before, strict=True)):
        assert math.isclose(score, old_score, rel_tol=1e-12), (terms, rank)
        if row != old_row:  # a tie: the other row is among the ones of that score in the old ranking
            tied = {r for r, sc in before if math.isclose(sc, score, rel_tol=1e-12)}
            assert row in tied or math.isclose(score, before[-1][1], rel_tol=1e-12), (terms, rank)
    cut = before[-1][1] if before else 0.0
    kept = {r for r, sc in now if not math.isclose(sc, cut, rel_tol=1e-12)}
    assert kept == {r for r, sc in before if not math.isclose(sc, cut, rel_tol=1e-12)}, terms
