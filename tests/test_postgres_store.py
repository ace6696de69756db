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
from typing import Any

import pytest

from openclaw_cli.core.dsn import mask_dsn
from openclaw_cli.core.errors import StoreError
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


def test_the_warm_matrix_read_from_postgres_finds_what_the_hnsw_query_finds(
    postgres: PostgresStorage,
) -> None:
    import numpy as np

    from openclaw_cli.memory.store.embedder import EmbedderIdentity
    from openclaw_cli.memory.store.vectors.matrix import VectorMatrix

    vectors = np.random.default_rng(7).normal(size=(40, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with postgres.transaction():
        postgres.ensure_vectors(EmbedderIdentity("test", "random", 16))
        for n, vector in enumerate(vectors):
            rowid = postgres.insert(_record(f"m{n}", f"memory {n}", user=f"u{n % 2}"), vector_ready=True)
            postgres.put_vector(rowid, vector, ("user", f"u{n % 2}", "preference"))
        postgres.vectors_changed()
    matrix = VectorMatrix()
    matrix.refresh(postgres)
    for where in (VectorFilter(), VectorFilter(user_id="u1")):
        expected = postgres.knn(vectors[3], 5, where)
        found = matrix.knn(vectors[3], 5, where)
        assert [r for r, _ in found] == [r for r, _ in expected]
        # Both score the same float16 components against the float32 query: float32 rounding of 16 terms.
        assert np.allclose([s for _, s in found], [s for _, s in expected], atol=16 * 2**-23)
    assert not matrix.stale(postgres)
    with postgres.transaction():
        postgres.vectors_changed()
    assert matrix.stale(postgres)


def test_a_connection_lost_mid_write_keeps_every_committed_record_and_none_of_the_rest(
    pg_shared_dsn: str, pg_server: Any
) -> None:
    import psycopg

    name = f"pg_store_{next(_NAMES)}"
    storage = open_storage(pg_shared_dsn, name)
    with storage.transaction():
        storage.insert(_record("kept", "acknowledged before the loss"), vector_ready=False)
    pid = storage.conn.info.backend_pid
    with pytest.raises(psycopg.OperationalError), storage.transaction():
        storage.insert(_record("lost", "never acknowledged"), vector_ready=False)
        pg_server.execute("SELECT pg_terminate_backend(%s)", (pid,))
        storage.insert(_record("lost2", "never acknowledged either"), vector_ready=False)
    again = open_storage(pg_shared_dsn, name)
    assert again.get("kept") is not None and again.get("lost") is None and again.count_live() == 1
    again.close()


def test_the_service_turns_a_lost_server_into_one_line(
    tmp_path: Path, pg_shared_dsn: str, pg_server: Any
) -> None:
    from tests.memory_helpers import service_for, settings_with

    settings = settings_with(backend="postgres", postgres={"dsn": pg_shared_dsn})
    service = service_for(tmp_path / "home", settings)
    try:
        store = service.store(service.db_path("user"))
        pg_server.execute("SELECT pg_terminate_backend(%s)", (store.storage.conn.info.backend_pid,))  # type: ignore[attr-defined]
        with (
            pytest.raises(StoreError, match="lost the connection to PostgreSQL") as caught,
            service.damage_guard(),
        ):
            store.storage.count_live()
        assert "\n" not in caught.value.message
    finally:
        service.close()
