"""int8 vector tables, the float32 tables made before them, the cache-in-records migration, history rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.search.legs import semantic
from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.memory.store import vector_codec as codec
from openclaw_cli.memory.store.memory_store import MemoryStore
from openclaw_cli.memory.store.record_rows import new_record
from openclaw_cli.memory.store.sqlite import migrations, vec
from openclaw_cli.memory.store.sqlite.connection import open_db
from openclaw_cli.memory.store.sqlite.meta import write_txn
from openclaw_cli.memory.store.sqlite.records import text_hash
from openclaw_cli.memory.store.sqlite.storage import SqliteStorage
from openclaw_cli.memory.store.vectors import leg_scan, row_scan
from openclaw_cli.memory.store.vectors import matrix as vector_matrix
from openclaw_cli.memory.store.vectors import query as vectors
from openclaw_cli.memory.store.vectors.cache import passage_hash
from openclaw_cli.memory.upkeep import index
from openclaw_cli.memory.writing.purge import purge_store
from tests.fake_embedder import CompositeFake, unit_halves
from tests.memory_helpers import BY_MEANING, REAL_MEMORIES, service_for


def _store(path: Path, fake: CompositeFake) -> MemoryStore:
    return MemoryStore.open(path, lambda: fake)


def _add(store: MemoryStore, texts: list[str], user: str = "u1") -> list[str]:
    records = [
        new_record(
            record_id=f"m-{n}-{user}", l0=t, agent_id="main", scope="user", user_id=user, category="note"
        )
        for n, t in enumerate(texts)
    ]
    return store.add(records).ids


def test_new_tables_are_int8_with_their_clip_in_meta(tmp_path: Path) -> None:
    fake = CompositeFake()
    store = _store(tmp_path / "m.sqlite", fake)
    _add(store, [f"note {n} about tea" for n in range(20)])
    table = vec.current_table(store.conn)
    assert table is not None
    sql = store.conn.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (table,)).fetchone()[0]
    assert "int8[896]" in sql and "distance_metric=cosine" in sql
    fmt = vec.table_format(store.conn, table)
    assert fmt.dtype == "int8" and fmt.clip == codec.int8_format(896).clip
    blob = store.conn.execute(f"SELECT embedding FROM {table} LIMIT 1").fetchone()[0]
    assert len(blob) == 896
    query = fake.embed_query("note 3 about tea").vector
    top = vec.knn(store.conn, table, query, 3, vectors.VectorFilter())
    assert top[0][1] == pytest.approx(2.0, abs=0.01)  # the same text: a cosine of 1 in each unit half
    store.close()


def test_a_float32_table_keeps_working_until_a_rebuild_makes_it_int8(tmp_path: Path) -> None:
    fake = CompositeFake()
    store = _store(tmp_path / "m.sqlite", fake)
    with write_txn(store.conn):  # a database made before int8 storage: no format in meta
        old = vec.create_table(store.conn, 896, codec.FLOAT32)
        vec.set_current(store.conn, old, fake.identity)
    texts = [f"memory {n} about {t}" for n, t in enumerate(["tea", "rust", "deploys"] * 10)]
    _add(store, texts)
    assert vec.table_format(store.conn, old) == codec.FLOAT32
    assert len(store.conn.execute(f"SELECT embedding FROM {old} LIMIT 1").fetchone()[0]) == 896 * 4
    query = fake.embed_query(texts[4]).vector
    before = [r for r, _ in store.vector_matrix().knn(query, 5, vectors.VectorFilter())]
    assert before == [r for r, _ in vec.knn(store.conn, old, query, 5, vectors.VectorFilter())]
    calls = fake.calls
    report = index.rebuild(store, fake)
    assert fake.calls == calls  # every vector came from the old table (the embedding cache)
    new = vec.current_table(store.conn)
    assert new == report.vector_table and new != old
    assert vec.table_format(store.conn, new).is_int8
    assert (
        store.conn.execute("SELECT count(*) FROM meta WHERE key LIKE 'vector_%:' || ?", (old,)).fetchone()[0]
        == 0
    )
    after = [r for r, _ in store.vector_matrix().knn(query, 5, vectors.VectorFilter())]
    assert after[0] == before[0]
    assert [r for r, _ in vec.knn(store.conn, new, query, 5, vectors.VectorFilter())] == after
    store.close()


def test_migration_moves_the_cache_into_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.sqlite"
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:1])
    old = open_db(path)
    with write_txn(old):
        old.execute(
            "INSERT INTO records(id, scope, user_id, agent_id, category, l0, language, l0_hash, created_at, "
            "updated_at) VALUES ('m-1', 'user', 'u', 'main', 'note', 'likes tea', 'en', 'h', 't', 't')"
        )
        old.execute("INSERT INTO embedding_cache(content_hash, embedder, vector) VALUES ('x', 'e', x'00')")
        old.execute(
            "INSERT INTO history(record_id, action, new_value, at) VALUES ('m-1', 'add', '{\"l0\": \"likes tea\"}', 't')"
        )
    old.close()
    monkeypatch.undo()
    conn = open_db(path)
    assert conn.execute("SELECT text_hash FROM records").fetchone()[0] == text_hash("likes tea")
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema")}
    assert "embedding_cache" not in names and "records_by_text_hash" in names
    assert conn.execute("SELECT new_value FROM history").fetchone()[0] is None
    conn.close()
    assert migrations.migrate(open_db(path)) == []


def test_cache_hits_come_from_the_vector_table_and_purge_leaves_no_hash(tmp_path: Path) -> None:
    fake = CompositeFake()
    store = _store(tmp_path / "m.sqlite", fake)
    _add(store, ["likes tea", "likes coffee"], user="alice")
    calls = fake.calls
    again = store.embed_cached(fake, ["likes tea", "brand new text"])
    assert fake.calls == calls + 1  # only the new text was embedded
    assert np.allclose(again[0], fake.embed_passages(["likes tea"])[0], atol=codec.int8_format(896).step)
    purge_store(store, "alice")
    assert store.conn.execute("SELECT count(*) FROM records WHERE text_hash IS NOT NULL").fetchone()[0] == 0
    assert store.cached_vectors("fake:composite-minilm-512:896", [passage_hash("likes tea")]) == {}
    store.close()


class Counting:
    """The real embedder, counting the texts it is asked to embed (a cache hit asks for none)."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.texts: list[str] = []

    @property
    def identity(self) -> Any:
        return self.embedder.identity

    def embed_passages(self, texts: Any) -> Any:
        self.texts.extend(texts)
        return self.embedder.embed_passages(texts)

    def embed_query(self, text: str) -> Any:
        return self.embedder.embed_query(text)


def test_with_the_real_models_a_cache_hit_is_the_stored_int8_copy_of_the_models_vector(
    tmp_path: Path,
) -> None:
    """The cache above once with the packaged models (the fake counts calls cheaply): a stored memory's
    text is not embedded again, the vector read back from the int8 table is the model's (to rounding),
    and the table's vectors find a memory by a question that shares no word with it."""
    service = service_for(tmp_path / "home")
    try:
        for text in REAL_MEMORIES.values():
            service.add(NewMemory(l0=text))
        [store] = list(service.existing_stores())
        counting = Counting(service.embedder())
        tea = REAL_MEMORIES["tea"]
        again = store.embed_cached(counting, [tea, "User collects porcelain teapots"])
        assert counting.texts == ["User collects porcelain teapots"]  # the stored text came from the table
        model = service.embedder().embed_passages([tea])[0]
        assert float(again[0] @ model) / 2 > 0.99  # two unit halves: 1.0 but for the int8 rounding
        for query, memory in BY_MEANING.items():
            hits = service.search(SearchRequest(query, mode="vector")).hits
            assert hits and hits[0].record.l0 == memory, query
    finally:
        service.close()


def test_history_keeps_every_change_without_copies(tmp_path: Path) -> None:
    fake = CompositeFake()
    store = _store(tmp_path / "m.sqlite", fake)
    [rid] = _add(store, ["the vpn gateway is vpn-gw-07"])
    first = store.get(rid).public_dict()
    with write_txn(store.conn):  # no update path yet: log one the way an update will
        store.conn.execute("UPDATE records SET l1 = 'moved in May' WHERE id = ?", (rid,))
        store.log_change(rid, "u1", "update", first, store.get(rid).public_dict())
    updated = store.get(rid).public_dict()
    store.delete(rid)
    stored = list(store.conn.execute("SELECT action, old_value, new_value FROM history ORDER BY seq"))
    assert [(a, o is None, n is None) for a, o, n in stored] == [
        ("add", True, True),
        ("update", False, True),
        ("delete", False, True),
    ]
    index.repair(store, lambda: fake)  # clears the tombstone
    assert not store.exists(rid)
    history = store.history(rid)
    assert [h["action"] for h in history] == ["add", "update", "delete"]
    assert history[0]["new"] == first and history[1]["old"] == first
    assert history[1]["new"] == updated and history[2]["old"] == updated
    assert history[2]["new"] is None
    store.close()


def _composite_matrix(tmp_path: Path, data: np.ndarray) -> tuple[Any, vector_matrix.VectorMatrix]:
    """A two-leg store of `data` (rows alternate between users u1 and u0; row n is record n, whose
    columns filters are checked against), and its warm matrix."""
    conn = open_db(tmp_path / "m.sqlite")
    with write_txn(conn):
        table = vec.create_table(conn, 896)
        vec.set_current(conn, table, CompositeFake().identity)
        for n, vector in enumerate(data, start=1):
            user = f"u{n % 2}"
            record = new_record(
                record_id=f"m-{n}",
                l0=f"memory {n}",
                agent_id="main",
                scope="user",
                user_id=user,
                category="note",
            )
            assert SqliteStorage(conn).insert(record, vector_ready=True) == n
            vec.upsert(conn, table, n, vector, ("user", user, "note"))
    matrix = vector_matrix.VectorMatrix()
    matrix.refresh(SqliteStorage(conn))
    return conn, matrix


def test_sign_prefilter_follows_any_weighting_of_the_halves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """recall@10 of the warm matrix (sign prefilter + int8 rescoring) against exact float search."""
    monkeypatch.setattr(vector_matrix, "SIGN_PREFILTER_MIN_ROWS", 1)
    monkeypatch.setattr(vector_matrix, "SIGN_POOL", 300)
    rng = np.random.default_rng(11)
    centers = [rng.normal(size=(64, d)) * 0.6 for d in (384, 512)]
    data = unit_halves(rng, 3000, centers)
    conn, matrix = _composite_matrix(tmp_path, data)
    queries = unit_halves(rng, 40, centers)
    for weights in ((1.0, 0.0), (0.0, 1.0), (0.7, 0.3)):
        recalls = []
        for query in queries:
            query = query * np.repeat(np.array(weights, np.float32), (384, 512))
            truth = set((np.argsort(-(data @ query))[:10] + 1).tolist())
            found = {r for r, _ in matrix.knn(query, 10, vectors.VectorFilter())}
            recalls.append(len(truth & found) / 10)
        assert np.mean(recalls) >= 0.97, weights
    only_u1 = matrix.knn(queries[0], 10, vectors.VectorFilter(user_id="u1"))
    assert len(only_u1) == 10 and all(r % 2 == 1 for r, _ in only_u1)
    conn.close()


@pytest.mark.parametrize("prefilter", [False, True])
def test_weightings_of_the_halves_searched_together_match_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefilter: bool
) -> None:
    """`knn_scaled` (the two scans of a composite query at once) finds what `knn` finds for each
    weighting alone, through the sign prefilter and through the full scan, with and without a filter;
    scores agree to float32 rounding (the full scan sums the halves' products separately)."""
    if prefilter:
        monkeypatch.setattr(vector_matrix, "SIGN_PREFILTER_MIN_ROWS", 1)
        monkeypatch.setattr(vector_matrix, "SIGN_POOL", 400)
    rng = np.random.default_rng(5)
    centers = [rng.normal(size=(32, d)) * 0.6 for d in (384, 512)]
    data = unit_halves(rng, 2500, centers)
    conn, matrix = _composite_matrix(tmp_path, data)
    assert (matrix._signs is not None) == prefilter
    scalings = [(0.0, 1.0), (0.7, 0.3), (1.0, 0.0)]
    for query in unit_halves(rng, 10, centers):
        for where in (vectors.VectorFilter(), vectors.VectorFilter(user_id="u1")):
            together = vectors.knn_scaled(matrix, query, (384, 512), scalings, 20, where)
            table_source = vec.TableSource(conn, vec.current_table(conn))
            for factors, found in zip(scalings, together, strict=True):
                alone = matrix.knn(vectors.scale_legs(query, (384, 512), factors), 20, where)
                assert [r for r, _ in found] == [r for r, _ in alone]
                # float32 products of unit-scale vectors: ~1e-7 relative per term, far below 1e-5
                assert np.allclose([s for _, s in found], [s for _, s in alone], atol=1e-5)
                if where.user_id:
                    assert all(r % 2 == 1 for r, _ in found)
            # A vec0 table (one-shot commands) answers the same through the generic path.
            generic = vectors.knn_scaled(table_source, query, (384, 512), scalings[:1], 20, where)
            assert len(generic) == 1 and len(generic[0]) == 20
    conn.close()


def test_the_sampled_bound_selects_the_same_rows_as_a_full_selection() -> None:
    rng = np.random.default_rng(9)
    for size, pool in ((100_000, 2048), (20_000, 2048), (5000, 100), (3000, 2048)):
        scores = rng.normal(size=size).astype(np.float32)
        mask = rng.random(size) < 0.5
        for where in (None, mask):
            chosen = row_scan.best(scores, pool, where)
            masked = scores if where is None else np.where(where, scores, -np.inf)
            expected = np.argsort(-masked, kind="stable")[:pool]
            expected = expected[np.isfinite(masked[expected])]
            assert sorted(chosen.tolist()) == sorted(expected.tolist())
    # Ties, and a pool larger than what the filter allows.
    flat = np.zeros(50_000, dtype=np.float32)
    assert len(row_scan.best(flat, 2048, None)) == 2048
    few = np.zeros(50_000, dtype=bool)
    few[:100] = True
    assert sorted(row_scan.best(flat, 2048, few).tolist()) == list(range(100))


def test_a_long_full_scan_on_two_threads_gives_the_one_thread_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """At PARALLEL_SCAN_MIN_ROWS rows or more the full scan's second half runs on a thread: every dot
    product is the float32 the one-thread scan gives, to the bit, including the rows that end a chunk
    and the odd rows past the last whole chunk."""
    rng = np.random.default_rng(21)
    rows = rng.integers(-127, 128, size=(row_scan.PARALLEL_SCAN_MIN_ROWS + 3001, 96), dtype=np.int8)
    query = rng.normal(size=96).astype(np.float32)
    started: list[str] = []
    real_thread = row_scan.threading.Thread

    def counted(*args: Any, **kwargs: Any) -> Any:
        started.append(kwargs.get("name", ""))
        return real_thread(*args, **kwargs)

    monkeypatch.setattr(row_scan.threading, "Thread", counted)
    two = row_scan.chunked_dot(rows, query)
    assert started == ["vector-scan"]
    one = np.concatenate([row_scan.dot(rows[at : at + 8192], query) for at in range(0, len(rows), 8192)])
    assert two.dtype == np.float32 and np.array_equal(two, one)
    short = row_scan.chunked_dot(rows[:1000], query)
    assert started == ["vector-scan"] and np.array_equal(short, one[:1000])


@pytest.mark.parametrize("rows", [1000, leg_scan.PARALLEL_MIN_ROWS + 77])
def test_the_sign_prefilter_sums_each_leg_as_one_thread_does(
    rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm search's sign disagreements, each leg summed word by word (the first on a helper thread
    from PARALLEL_MIN_ROWS rows): to the bit the float32 sums of the plain loop, a leg no weighting uses
    left out, and a word of weight 0 skipped."""
    rng = np.random.default_rng(5)
    vectors_ = rng.normal(size=(rows, 896)).astype(np.float32)
    signs = np.ascontiguousarray(codec.sign_words(vectors_).T)  # word-major, as VectorMatrix keeps them
    query = rng.normal(size=896).astype(np.float32)
    query[64:128] = 0  # a word the query has no weight in
    query_words = codec.sign_words(query[None, :])[0]
    weights = codec.word_weights(query, signs.shape[0])
    spans = [range(0, 6), None, range(6, 14)]

    def plain(words: range) -> np.ndarray:
        total = np.zeros(rows, dtype=np.float32)
        for word in words:
            if weights[word] > 0:
                total += np.bitwise_count(signs[word] ^ query_words[word]) * weights[word]
        return total

    handed_over: list[bool] = []
    real_pool = leg_scan._pool

    def pool() -> Any:
        handed_over.append(True)
        return real_pool()

    monkeypatch.setattr(leg_scan, "_pool", pool)
    first, unused, second = leg_scan.leg_disagreements(signs, query_words, weights, spans)
    assert handed_over == ([True] if rows >= leg_scan.PARALLEL_MIN_ROWS else [])
    assert unused is None and first is not None and second is not None
    assert first.dtype == np.float32 and np.array_equal(first, plain(range(0, 6)))
    assert np.array_equal(second, plain(range(6, 14)))


@pytest.mark.parametrize("one_search", [True, False])
def test_the_rows_asked_for_are_found_by_rowid_in_any_order(one_search: bool) -> None:
    """`rows` finds rows by rowid whatever order the matrix holds them in (a rewritten memory's vector
    moves to a later slot): through one pass over the rowids in a one-search process, through a dict of
    every row in the others; rowids it does not hold are left out."""
    rng = np.random.default_rng(4)
    rowids = rng.permutation(np.arange(1, 5001)) * 3
    blob = rng.integers(-127, 128, size=(5000, 896), dtype=np.int8).tobytes()
    fmt = codec.int8_format(896)
    matrix = vector_matrix.VectorMatrix.of_int8(rowids.tolist(), blob, fmt)
    matrix.sign_prefilter = not one_search
    stored = np.frombuffer(blob, dtype=np.int8).reshape(5000, 896)
    asked = [int(rowids[7]), 2, int(rowids[4999]), int(rowids[0]), 15001]
    found = matrix.rows(asked)
    assert list(found) == [int(rowids[7]), int(rowids[4999]), int(rowids[0])]
    for position in (7, 4999, 0):
        expected = stored[position].astype(np.float32) * np.float32(fmt.step)
        assert np.array_equal(found[int(rowids[position])], expected)
    assert (matrix._positions is None) == one_search
    held, block = matrix.block(asked)  # the same rows as one matrix, for search's leg cosines
    assert held == list(found) and np.array_equal(block, np.stack(list(found.values())))
    query = rng.standard_normal(896).astype(np.float32)
    assert semantic.block_cosines(query, held, block, (384, 512)) == semantic.leg_cosines(
        query, found, (384, 512)
    )
    assert (
        matrix.block([2, 15001])[0] == [] and semantic.block_cosines(query, [], block[:0], (384, 512)) == {}
    )


def test_a_warm_search_at_scale_sums_its_legs_on_two_threads_with_the_same_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """From PARALLEL_MIN_ROWS rows a warm search sums its legs' sign disagreements on two threads
    (store/vectors/leg_scan.py): the candidates and their scores are, to the bit, those of one thread."""
    rng = np.random.default_rng(8)
    count = leg_scan.PARALLEL_MIN_ROWS + 500
    blob = rng.integers(-127, 128, size=(count, 896), dtype=np.int8).tobytes()
    fmt = codec.int8_format(896)
    matrix = vector_matrix.VectorMatrix.of_int8(list(range(1, count + 1)), blob, fmt)
    assert matrix._signs is not None  # the sign prefilter's path, as at 100k
    query = rng.normal(size=896).astype(np.float32)
    legs, scalings = (384, 512), [(1.0, 1.0), (0.4, 1.0)]
    where = vectors.VectorFilter()
    two = matrix.knn_scaled(query, legs, scalings, 10, where)
    monkeypatch.setattr(leg_scan, "PARALLEL_MIN_ROWS", 10**9)
    assert matrix.knn_scaled(query, legs, scalings, 10, where) == two and len(two[0]) == 10


def test_a_weightings_sign_agreement_is_minus_the_sum_of_its_scaled_legs_to_the_bit() -> None:
    """The sign pool ranks rows by minus their weighted disagreement, summed leg after leg in place: the
    float32 values of negating the plain sum, with a leg left out when it is None or weighted 0."""
    rng = np.random.default_rng(5)
    rows = 10_007
    legs = [rng.integers(0, 64 * 40, rows).astype(np.float32) * np.float32(rng.random()) for _ in range(2)]
    for per_leg, factors in [
        (legs, (0.37, 0.63)),
        (legs, (0.0, 1.0)),
        ([None, legs[1]], (0.5, 0.5)),
        ([legs[0], None], (1.0, 0.2)),
    ]:
        parts = [d * np.float32(f) for d, f in zip(per_leg, factors, strict=True) if d is not None and f != 0]
        expected = -np.sum(parts, axis=0)
        got = leg_scan.agreement(per_leg, factors, rows)
        assert got.dtype == np.float32 and got.tobytes() == expected.tobytes()
    assert not leg_scan.agreement([None, None], (1.0, 1.0), rows).any()
