"""Reading a vec0 table by its chunks (store/sqlite/vec_chunks.py): the same rows as reading it row by
row, and a fall back to the row-by-row read whenever the chunks cannot be trusted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.store import vector_codec as codec
from openclaw_cli.memory.store.protocol import StoredRows
from openclaw_cli.memory.store.record_rows import new_record
from openclaw_cli.memory.store.sqlite import vec, vec_chunks
from openclaw_cli.memory.store.sqlite.connection import open_db
from openclaw_cli.memory.store.sqlite.meta import write_txn
from openclaw_cli.memory.store.sqlite.storage import SqliteStorage
from openclaw_cli.memory.store.vectors import matrix as vector_matrix
from openclaw_cli.memory.store.vectors import query as vectors
from tests.fake_embedder import CompositeFake, unit_halves
from tests.memory_helpers import BY_MEANING, REAL_MEMORIES, service_for

ROWS = 2500  # three vec0 chunks of 1024: the last one partly filled


def _table(tmp_path: Path, fmt: codec.VectorFormat | None = None) -> tuple[Any, str, np.ndarray]:
    """A store of ROWS records with vectors; rows 10-19 deleted and rows 30-39 rewritten (which moves
    their vectors to new slots), as a store's life does."""
    rng = np.random.default_rng(3)
    data = unit_halves(rng, ROWS, [rng.normal(size=(16, d)) for d in (384, 512)])
    conn = open_db(tmp_path / "m.sqlite")
    storage = SqliteStorage(conn)
    with write_txn(conn):
        table = vec.create_table(conn, 896, fmt)
        vec.set_current(conn, table, CompositeFake().identity)
        for n, vector in enumerate(data, start=1):
            user = f"u{n % 3}"
            record = new_record(
                record_id=f"m-{n}",
                l0=f"memory {n}",
                agent_id="main",
                scope="user",
                user_id=user,
                category="note",
            )
            assert storage.insert(record, vector_ready=True) == n
            vec.upsert(conn, table, n, vector, ("user", user, "note"))
        vec.delete(conn, table, list(range(10, 20)))
        for n in range(30, 40):
            data[n - 1] = data[n - 1][::-1].copy()
            vec.upsert(conn, table, n, data[n - 1], ("user", f"u{n % 3}", "note"))
    return conn, table, data


@pytest.mark.parametrize("fmt", [None, codec.FLOAT32])
def test_the_chunks_hold_the_rows_vec0_returns(tmp_path: Path, fmt: codec.VectorFormat | None) -> None:
    conn, table, _ = _table(tmp_path, fmt)
    stored = vector_matrix.read_rows(SqliteStorage(conn))
    assert stored.chunks is not None and len(stored.chunks) == 3
    by_rows = vector_matrix.VectorMatrix()
    rows = vec.all_rows(conn, table)
    by_rows.load(StoredRows(table, stored.generation, stored.fmt, rows))
    by_chunks = vector_matrix.VectorMatrix()
    by_chunks.refresh(
        SqliteStorage(conn)
    )  # reads the chunks again, and keeps the storage for the filter columns
    rowids = [r[0] for r in rows]
    assert len(rowids) == ROWS - 10 and not set(range(10, 20)) & set(rowids)
    expected, found = by_rows.rows(rowids), by_chunks.rows(rowids)
    assert expected.keys() == found.keys()
    assert all(np.array_equal(expected[r], found[r]) for r in rowids)
    query = unit_halves(np.random.default_rng(8), 1, [np.zeros((1, 384)), np.zeros((1, 512))])[0]
    for where in (
        vectors.VectorFilter(),
        vectors.VectorFilter(user_id="u1"),
        vectors.VectorFilter(user_id="zz"),
    ):
        assert by_chunks.knn(query, 20, where) == by_rows.knn(query, 20, where)
    assert all(r % 3 == 1 for r, _ in by_chunks.knn(query, 20, vectors.VectorFilter(user_id="u1")))
    conn.close()


def test_an_empty_table_reads_as_no_chunks_and_no_rows(tmp_path: Path) -> None:
    conn = open_db(tmp_path / "m.sqlite")
    with write_txn(conn):
        table = vec.create_table(conn, 896)
        vec.set_current(conn, table, CompositeFake().identity)
    stored = vector_matrix.read_rows(SqliteStorage(conn))
    matrix = vector_matrix.VectorMatrix()
    matrix.load(stored)
    assert matrix.knn(np.ones(896, np.float32), 5, vectors.VectorFilter()) == []
    conn.close()


# Each way the chunks can disagree with vec0 (and whether vec0 itself still reads its rows after it):
# the chunks must not be used; the read goes row by row, as it did before chunks were read.
DAMAGE = {
    "no chunk table": ("ALTER TABLE {table}_chunks RENAME TO elsewhere", False),
    "a chunk's vectors cut short": (
        "UPDATE {table}_vector_chunks00 SET vectors = substr(vectors, 1, 100)",
        False,
    ),
    "a chunk's size wrong": ("UPDATE {table}_chunks SET size = size * 2", True),
    "a chunk's validity cleared": ("UPDATE {table}_chunks SET validity = zeroblob(length(validity))", True),
    "vec0 counts other rows": ("DELETE FROM {table}_rowids WHERE rowid = 2500", True),
    "vec0 finds a row in another slot": ("UPDATE {table}_rowids SET chunk_offset = 1 WHERE rowid = 1", True),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_chunks_that_disagree_with_vec0_are_not_used(tmp_path: Path, damage: str) -> None:
    conn, table, _ = _table(tmp_path)
    row_bytes = vec.row_bytes(conn, vec.table_format(conn, table))
    assert vec_chunks.read_chunks(conn, table, row_bytes) is not None
    sql, vec0_reads = DAMAGE[damage]
    with write_txn(conn):
        conn.execute(sql.format(table=table))
    assert vec_chunks.read_chunks(conn, table, row_bytes) is None
    if vec0_reads:
        stored = vector_matrix.read_rows(SqliteStorage(conn))
        assert stored.chunks is None and len(stored.rows) == len(vec.all_rows(conn, table))
    conn.close()


@pytest.mark.parametrize("fmt", [None, codec.FLOAT32])
def test_the_vectors_mean_reads_by_chunks_the_bytes_and_order_of_vec0s_scan(
    tmp_path: Path, fmt: codec.VectorFormat | None
) -> None:
    conn, table, _ = _table(tmp_path, fmt)
    found_fmt, blobs = SqliteStorage(conn).vector_blobs()
    assert found_fmt == vec.table_format(conn, table)
    by_chunks = list(blobs)
    assert len(by_chunks) == ROWS - 10
    assert by_chunks == list(vec.embeddings(conn, table))
    conn.close()


def test_the_vectors_mean_reads_row_by_row_when_the_chunks_disagree_with_vec0(tmp_path: Path) -> None:
    conn, table, _ = _table(tmp_path)
    with write_txn(conn):
        conn.execute(f"UPDATE {table}_chunks SET size = size * 2")
    assert vec_chunks.read_chunks(conn, table, vec.row_bytes(conn, vec.table_format(conn, table))) is None
    _, blobs = SqliteStorage(conn).vector_blobs()
    assert list(blobs) == list(vec.embeddings(conn, table)) and len(list(vec.embeddings(conn, table))) > 0
    conn.close()


def test_real_vectors_read_by_chunks_are_the_models_and_find_by_meaning(tmp_path: Path) -> None:
    """The chunk read once with the packaged models (the fake above gives the many rows cheaply): each
    stored int8 vector is the model's vector of its text within one step, the chunks hold the rows
    vec0 returns, and the nearest row to a question's real query vector is the memory it means."""
    service = service_for(tmp_path / "home")
    try:
        embedder = service.embedder()
        ids = {service.add(NewMemory(l0=text))[0].id: text for text in REAL_MEMORIES.values()}
        [store] = list(service.existing_stores())
        storage = SqliteStorage(store.conn)
        stored = vector_matrix.read_rows(storage)
        assert stored.chunks is not None and len(stored.chunks) == 1  # one chunk, partly filled
        rows = vec.all_rows(store.conn, stored.table)
        by_rows = vector_matrix.VectorMatrix()
        by_rows.load(StoredRows(stored.table, stored.generation, stored.fmt, rows))
        by_chunks = vector_matrix.VectorMatrix()
        by_chunks.refresh(storage)
        rowids = [r[0] for r in rows]
        assert len(rowids) == len(REAL_MEMORIES)
        expected, found = by_rows.rows(rowids), by_chunks.rows(rowids)
        assert all(np.array_equal(expected[r], found[r]) for r in rowids)
        text_of = {
            int(rowid): ids[str(record_id)]
            for rowid, record_id in store.conn.execute("SELECT rowid, id FROM records")
        }
        for rowid in rowids:  # each half is a unit vector, rounded to int8
            model = embedder.embed_passages([text_of[rowid]])[0]
            assert float(found[rowid] @ model) / 2 > 0.99, text_of[rowid]
        for query, memory in BY_MEANING.items():
            vector = embedder.embed_query(query).vector
            nearest = by_chunks.knn(vector, 1, vectors.VectorFilter())
            assert nearest == by_rows.knn(vector, 1, vectors.VectorFilter())
            assert text_of[nearest[0][0]] == memory, query
    finally:
        service.close()
