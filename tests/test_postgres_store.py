"""What the postgres backend promises beyond the shared storage contract (test_storage_conformance.py):
the same BM25 scores as the SQLite file, terms never read as query syntax, one-line errors for a schema
from a newer openclaw, and writers of one store that take turns. Everything runs on the real test server."""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from openclaw_cli.dsn import mask_dsn
from openclaw_cli.errors import StoreError
from openclaw_cli.memory.store.postgres.connection import open_storage
from openclaw_cli.memory.store.postgres.storage import PostgresStorage
from openclaw_cli.memory.store.protocol import MemoryStorage, VectorFilter
from openclaw_cli.memory.store.record_rows import new_record
from openclaw_cli.memory.store.records import FsrsState, MemoryRecord
from openclaw_cli.memory.store.sqlite.connection import open_db
from openclaw_cli.memory.store.sqlite.storage import SqliteStorage
from openclaw_cli.memory.text.analysis import query_terms

_NAMES = itertools.count(1)
TEXTS = [
    ("Drinks green tea every morning", "Switched from coffee in 2024"),
    ("Green tea and green apples are her favourite snack", None),
    ("我女儿每周六上钢琴课", "钢琴老师姓王"),
    ("同事老周每天早上一杯气泡水", None),
    ("Runs along the river on Sundays", "Training for a half marathon running race"),
    ("The coffee machine at work is broken", None),
]


def _record(record_id: str, l0: str, l1: str | None = None, user: str = "alice") -> MemoryRecord:
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    record = new_record(
        record_id=record_id, l0=l0, l1=l1, agent_id="main", scope="user", user_id=user,
        category="preference", created_at=moment,
    )  # fmt: skip
    return record.model_copy(update={"updated_at": moment})


@pytest.fixture
def postgres(pg_shared_dsn: str) -> Iterator[PostgresStorage]:
    storage = open_storage(pg_shared_dsn, f"pg_store_{next(_NAMES)}")
    yield storage
    storage.close()


def _fill(storage: MemoryStorage) -> dict[str, int]:
    rows = {}
    with storage.transaction():
        for n, (l0, l1) in enumerate(TEXTS):
            rows[f"m{n}"] = storage.insert(_record(f"m{n}", l0, l1), vector_ready=False)
    return rows


@pytest.mark.parametrize("query", ["green tea", "钢琴", "running coffee", "morning marathon river"])
def test_bm25_scores_are_those_of_the_sqlite_files_fts5(
    postgres: PostgresStorage, tmp_path: Path, query: str
) -> None:
    sqlite = SqliteStorage(open_db(tmp_path / "memory.sqlite"))
    try:
        by_id = {}
        for storage in (sqlite, postgres):
            rows = _fill(storage)
            names = {rowid: record_id for record_id, rowid in rows.items()}
            hits = storage.keyword_candidates(query_terms(query), VectorFilter(), 10)
            by_id[type(storage).__name__] = {names[rowid]: score for rowid, score in hits}
        expected, found = by_id["SqliteStorage"], by_id["PostgresStorage"]
        assert expected and set(found) == set(expected)
        for record_id, score in expected.items():
            # Both compute the same formula in doubles: they differ only by rounding.
            assert math.isclose(found[record_id], score, rel_tol=1e-9), record_id
    finally:
        sqlite.close()


def test_a_deleted_record_leaves_the_term_counts_and_its_words_leave_the_vocabulary(
    postgres: PostgresStorage,
) -> None:
    rows = _fill(postgres)
    with postgres.transaction():
        postgres.mark_deleted(rows["m3"], datetime(2026, 1, 2, tzinfo=UTC))
        postgres.remove([rows["m2"]])
    assert postgres.document_counts(query_terms("钢琴 气泡水")) == {}
    assert postgres.document_counts(query_terms("green"))[query_terms("green")[0]] == 2
    left = postgres.conn.execute("SELECT count(*) FROM keyword_vocab WHERE term = ANY(%s)", (["钢琴"],))
    assert left.fetchone() == (0,)


@pytest.mark.parametrize("term", ["it's", "back\\slash", "a & b | !c", "x:*", "(paren", "'", "\\"])
def test_a_term_with_query_syntax_in_it_is_matched_as_text(postgres: PostgresStorage, term: str) -> None:
    _fill(postgres)
    assert postgres.keyword_candidates([term], VectorFilter(), 5) == []
    assert [r for r, _ in postgres.keyword_candidates([term, "green"], VectorFilter(), 5)]


def test_a_schema_from_a_newer_openclaw_is_refused_in_one_line(pg_shared_dsn: str) -> None:
    name = f"pg_store_{next(_NAMES)}"
    storage = open_storage(pg_shared_dsn, name)
    with storage.transaction():
        storage.set_meta("schema_version", 99)
    storage.close()
    with pytest.raises(StoreError, match=r"version 99, newer than this openclaw understands") as caught:
        open_storage(pg_shared_dsn, name)
    assert "\n" not in caught.value.message


def test_fsrs_reviews_from_two_connections_lose_no_increment(pg_shared_dsn: str) -> None:
    """Each writer reads the state and writes the next one inside transaction(): the store's advisory lock
    makes the second wait for the first's commit, so its read sees it."""
    name = f"pg_store_{next(_NAMES)}"
    first, second = open_storage(pg_shared_dsn, name), open_storage(pg_shared_dsn, name)
    with first.transaction():
        first.insert(_record("m1", "Learns Italian"), vector_ready=False)

    def review(storage: PostgresStorage, times: int) -> None:
        for _ in range(times):
            with storage.transaction():
                current = storage.get("m1")
                assert current is not None
                storage.set_fsrs("m1", FsrsState(stability=1.0, reps=current.fsrs.reps + 1))

    workers = [threading.Thread(target=review, args=(s, 25)) for s in (first, second)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    stored = first.get("m1")
    assert stored is not None and stored.fsrs.reps == 50
    first.close()
    second.close()


def test_a_snapshot_reads_one_state_while_another_connection_writes(pg_shared_dsn: str) -> None:
    name = f"pg_store_{next(_NAMES)}"
    reader, writer = open_storage(pg_shared_dsn, name), open_storage(pg_shared_dsn, name)
    with writer.transaction():
        writer.insert(_record("m1", "first"), vector_ready=False)
    with reader.snapshot():
        assert reader.count_live() == 1
        with writer.transaction():
            writer.insert(_record("m2", "second"), vector_ready=False)
        assert reader.count_live() == 1
    assert reader.count_live() == 2
    reader.close()
    writer.close()


@pytest.mark.parametrize(
    ("dsn", "masked"),
    [
        ("postgresql://amy:s3cret@db.example:5432/mem", "postgresql://amy:***@db.example:5432/mem"),
        ("postgresql://amy@db/mem?password=s3cret&sslmode=require", "postgresql://amy@db/mem?password=***&sslmode=require"),
        ("host=db user=amy password=s3cret dbname=mem", "host=db user=amy password=*** dbname=mem"),
        ("host=db password='s3 cret' dbname=mem", "host=db password=*** dbname=mem"),
    ],
)  # fmt: skip
def test_a_dsns_password_is_masked_in_every_form(dsn: str, masked: str) -> None:
    assert mask_dsn(dsn) == masked
