"""The transcript index's vectors: sign bits stored beside the int8 rows, a sign-ranked pool re-scored
exactly, filters applied before the ranking, a warm copy that follows new and removed vectors, and an
index from before the sign table brought up to date in place. Real SQLite files, vectors from a seeded
generator."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from openclaw_cli.memory.store import vector_codec as codec
from openclaw_cli.memory.store.embedder import EmbedderIdentity
from openclaw_cli.memory.store.sqlite.transcripts.schema import SCHEMA_VERSION
from openclaw_cli.memory.store.sqlite.transcripts.statements import SqliteTranscripts
from openclaw_cli.memory.store.transcripts import Turn, TurnFilter
from openclaw_cli.memory.transcripts.vectors import MAX_BLOCKS, TurnVectors
from tests.transcript_helpers import open_index, write_dialogues

DIMS = 256
IDENTITY = EmbedderIdentity("test", "seeded-random", DIMS)


def _unit(rng: np.random.Generator, count: int) -> np.ndarray:
    rows = rng.normal(size=(count, DIMS)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _add(storage: SqliteTranscripts, session: str, count: int, vectors: np.ndarray) -> list[int]:
    """`count` turns of `session` (its person is the session's name), with these vectors; their rowids."""
    start = len(storage.message_indexes(session))
    turns = [
        Turn(session, f"agent:main:{session}", "message", start + n, "user", session, None, f"turn {n}")
        for n in range(count)
    ]
    with storage.transaction():
        storage.add_turns(turns)
        storage.add_people(session, [session])
        rows = storage.rowids_where(TurnFilter(sessions=(session,)))[-count:]
        storage.put_vectors(IDENTITY, dict(zip(rows, vectors, strict=True)))
    return rows


def _exact(storage: SqliteTranscripts, query: np.ndarray, rows: list[int], k: int) -> list[int]:
    """The k best of `rows` by the exact score against their stored int8 vectors."""
    found, blob = storage.int8_rows(rows)
    scores = np.frombuffer(blob, dtype=np.int8).reshape(len(found), -1).astype(np.float32) @ query
    return [found[i] for i in np.argsort(-scores, kind="stable")[:k]]


@pytest.fixture(params=[False, True], ids=["one-shot", "resident"])
def resident(request: pytest.FixtureRequest) -> bool:
    """Both ways of holding the vectors: signs alone (int8 rows read by rowid), and signs with int8 rows."""
    return bool(request.param)


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SqliteTranscripts]:
    opened = SqliteTranscripts.open(tmp_path / "transcripts.sqlite")
    try:
        yield opened
    finally:
        opened.close()


def test_signs_are_stored_for_every_vector_and_read_back_row_for_row(storage: SqliteTranscripts) -> None:
    vectors = _unit(np.random.default_rng(1), 40)
    rows = _add(storage, "alice", 40, vectors)
    last, read_rows, blob, rows8 = storage.vectors_after(0, with_int8=True)
    assert read_rows.tolist() == rows and last == 40
    int8 = np.stack([codec.quantise(v, storage.vector_format().step) for v in vectors])
    assert blob == codec.sign_words(int8).tobytes() and rows8 == int8.tobytes()
    assert storage.vectors_after(0)[2:] == (blob, b"")
    assert storage.vectors_after(last)[1].size == 0
    assert storage.vector_problem() is None


def test_with_every_row_in_the_pool_the_result_is_the_exact_scan(
    storage: SqliteTranscripts, resident: bool
) -> None:
    rng = np.random.default_rng(2)
    rows = _add(storage, "alice", 300, _unit(rng, 300))
    vectors = TurnVectors(resident=resident)
    vectors.refresh(storage)
    for query in _unit(rng, 5):
        found = [row for row, _ in vectors.knn(storage, query, 10, pool=300)]
        assert found == _exact(storage, query, rows, 10)


def test_the_sign_pool_keeps_the_close_rows_among_many_random_ones(
    storage: SqliteTranscripts, resident: bool
) -> None:
    """Rows at cosine 0.8 to the query disagree with its signs in acos(0.8)/pi = 20.5% of 256 dimensions
    (sd 2.5%); unrelated rows in 50% (sd 3.1%): 9 sd apart, so a pool of 64 among 4,000 holds all 8."""
    rng = np.random.default_rng(3)
    query = _unit(rng, 1)[0]
    noise = _unit(rng, 8)
    noise -= np.outer(noise @ query, query)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    close = 0.8 * query + 0.6 * noise
    _add(storage, "bob", 4000, _unit(rng, 4000))
    close_rows = _add(storage, "alice", 8, close.astype(np.float32))
    vectors = TurnVectors(resident=resident)
    vectors.refresh(storage)
    assert vectors.sign_candidates(query, 64, None) >= set(close_rows)
    assert [row for row, _ in vectors.knn(storage, query, 8, pool=64)] == _exact(
        storage, query, close_rows, 8
    )


def test_a_filter_ranks_only_the_rows_it_allows(storage: SqliteTranscripts, resident: bool) -> None:
    rng = np.random.default_rng(4)
    query = _unit(rng, 1)[0]
    bob = _add(storage, "bob", 500, _unit(rng, 500))
    best_of_all = _add(storage, "bob", 1, query[None, :])  # bob's, and the best match there is
    alice = _add(storage, "alice", 50, _unit(rng, 50))
    vectors = TurnVectors(resident=resident)
    vectors.refresh(storage)
    allowed = storage.rowids_where(TurnFilter(person="alice"))
    assert sorted(allowed) == alice
    found = [row for row, _ in vectors.knn(storage, query, 10, allowed, pool=64)]
    assert found == _exact(storage, query, alice, 10)
    assert vectors.knn(storage, query, 1)[0][0] == best_of_all[0] and best_of_all[0] not in found
    assert set(bob).isdisjoint(found)


def test_a_filter_that_allows_no_embedded_row_finds_nothing(
    storage: SqliteTranscripts, resident: bool
) -> None:
    rng = np.random.default_rng(5)
    _add(storage, "bob", 20, _unit(rng, 20))
    vectors = TurnVectors(resident=resident)
    vectors.refresh(storage)
    assert vectors.knn(storage, _unit(rng, 1)[0], 5, []) == []
    assert vectors.knn(storage, _unit(rng, 1)[0], 5, [10_000]) == []


def test_the_warm_copy_finds_rows_embedded_after_it_was_read(
    storage: SqliteTranscripts, resident: bool
) -> None:
    rng = np.random.default_rng(6)
    _add(storage, "bob", 100, _unit(rng, 100))
    vectors = TurnVectors(resident=resident)
    vectors.refresh(storage)
    added = []
    for _ in range(MAX_BLOCKS + 2):  # past MAX_BLOCKS the blocks are merged
        query = _unit(rng, 1)[0]
        added += _add(storage, "alice", 1, query[None, :])
        vectors.refresh(storage)
        assert vectors.knn(storage, query, 1, pool=16)[0][0] == added[-1]
        assert vectors.knn(storage, query, 1, added, pool=16)[0][0] == added[-1]
    assert vectors.size == 100 + len(added)


def test_the_warm_copy_forgets_removed_vectors(storage: SqliteTranscripts, resident: bool) -> None:
    rng = np.random.default_rng(7)
    query = _unit(rng, 1)[0]
    _add(storage, "bob", 100, _unit(rng, 100))
    gone = _add(storage, "alice", 1, query[None, :])
    vectors = TurnVectors(resident=resident)
    vectors.refresh(storage)
    assert vectors.knn(storage, query, 1)[0][0] == gone[0]
    with storage.transaction():
        storage.forget_session("alice")
    vectors.refresh(storage)
    assert vectors.size == 100 and gone[0] not in [row for row, _ in vectors.knn(storage, query, 10)]


def test_a_replaced_vector_is_scored_as_it_now_is(storage: SqliteTranscripts, resident: bool) -> None:
    rng = np.random.default_rng(8)
    query = _unit(rng, 1)[0]
    _add(storage, "bob", 100, _unit(rng, 100))
    row = _add(storage, "alice", 1, query[None, :])[0]
    vectors = TurnVectors(resident=resident)
    vectors.refresh(storage)
    with storage.transaction():
        storage.put_vectors(IDENTITY, {row: -query})
    vectors.refresh(storage)
    found = dict(vectors.knn(storage, query, 200))
    assert len(found) == 101 and found[row] == min(found.values()) and found[row] < -0.9


def test_an_index_from_before_the_sign_table_gains_it_in_place(tmp_path: Path) -> None:
    path = tmp_path / "transcripts.sqlite"
    storage = SqliteTranscripts.open(path)
    _add(storage, "alice", 30, _unit(np.random.default_rng(9), 30))
    expected = storage.vectors_after(0)
    with storage.transaction():  # what schema 2 held: no sign table
        storage.conn.execute("DROP TABLE turn_signs")
        storage.conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    storage.close()
    reopened = SqliteTranscripts.open(path)
    try:
        assert reopened.stale() is None and reopened.count() == 30  # migrated, not emptied for a rebuild
        last, rows, blob, _ = reopened.vectors_after(0)
        assert (last, rows.tolist(), blob) == (expected[0], expected[1].tolist(), expected[2])
        assert reopened.vector_problem() is None
        assert SCHEMA_VERSION == "3"
    finally:
        reopened.close()


def test_check_reports_a_vector_without_its_signs_and_repair_mends_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_dialogues(home)
    index, service = open_index(home)
    try:
        index.repair()
        assert index.check().ok
        storage = index.storage()
        with storage.transaction():
            storage.conn.execute("DELETE FROM turn_signs WHERE vid = (SELECT min(vid) FROM turn_signs)")
        check = index.check()
        assert not check.ok and "sign rows" in check.problems[0]
        index.repair()
        assert index.check().ok
    finally:
        index.close()
        service.close()


def test_a_running_process_embeds_new_turns_in_the_background(tmp_path: Path) -> None:
    """With long_lived (the gateway, chat), the listener's thread embeds an appended turn after
    indexing it, so the next search has nothing left to embed."""
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.transcripts.index import TranscriptIndex
    from openclaw_cli.memory.transcripts.search import TranscriptRequest
    from openclaw_cli.sessions.store import SessionStore
    from tests.transcript_helpers import OWNER_KEY, at

    home = tmp_path / "home"
    ids = write_dialogues(home, [(OWNER_KEY, "default", 6, [("user", "first words")])])
    plain, service = open_index(home)
    index = TranscriptIndex(Home(home), "main", plain.settings, plain.embedder, long_lived=True)
    store = SessionStore(Home(home), "main")
    store.listeners.append(index.session_changed)
    try:
        store.append(ids[OWNER_KEY][0], "user", "the plumber comes on Monday", at(7), user_id="default")
        index.flush()
        index.embed_new()  # what the worker does after each flush (here without waiting for the thread)
        storage = index.storage()
        assert storage.pending_count() == 0 and storage.vector_problem() is None
        request = TranscriptRequest("plumber Monday", explain=True)
        found = index.search(request)
        assert found.embedded == 0 and found.pending == 0 and not found.warnings
        assert found.hits[0].turn.text == "the plumber comes on Monday" and found.hits[0].explain["cosines"]
    finally:
        store.close()
        index.close()
        plain.close()
        service.close()


def test_a_one_shot_search_embeds_a_bounded_few_and_says_how_many_it_left(tmp_path: Path) -> None:
    from openclaw_cli.memory.transcripts.search import TranscriptRequest
    from tests.transcript_helpers import OWNER_KEY

    home = tmp_path / "home"
    write_dialogues(
        home, [(OWNER_KEY, "default", 6, [("user", f"note {n} about the garden") for n in range(5)])]
    )
    index, service = open_index(home)
    try:
        request = TranscriptRequest("garden", explain=True, embed_limit=2)
        result = index.search(request)
        state = result.to_dict(request)["vectors"]
        assert (state["embeddedNow"], state["withoutVector"]) == (2, 3)
        assert "3 turns have no vector yet" in result.warnings[0]
        assert {hit.turn.text for hit in result.hits} == {f"note {n} about the garden" for n in range(5)}
    finally:
        index.close()
        service.close()
