"""The memory storage contract (store/protocol.py), run against every backend through the Protocol only.

Each backend is a fixture param that yields an opened, empty storage: a real SQLite file, or a store in
its own schema on a real PostgreSQL server with pgvector (tests/pg_server.py). Nothing here reaches past the Protocol, so a second backend passes these
tests or does not implement the contract.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from openclaw_cli.memory.store.embedder import EmbedderIdentity
from openclaw_cli.memory.store.protocol import (
    LiveFilter,
    MemoryStorage,
    RecordMatch,
    VectorFilter,
    WorkspaceFile,
)
from openclaw_cli.memory.store.record_rows import new_record
from openclaw_cli.memory.store.records import FsrsState, MemoryRecord
from openclaw_cli.memory.text.analysis import index_terms, query_terms

DIMS = 8
_STORE_NUMBERS = itertools.count(1)
IDENTITY = EmbedderIdentity("test", "axes", DIMS)


def _open_sqlite(path: Path) -> MemoryStorage:
    from openclaw_cli.memory.store.sqlite.connection import open_db
    from openclaw_cli.memory.store.sqlite.storage import SqliteStorage

    return SqliteStorage(open_db(path))


def _open_postgres(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryStorage:
    from openclaw_cli.memory.store.postgres.connection import open_storage

    dsn = request.getfixturevalue("pg_shared_dsn")  # the real test server
    return open_storage(dsn, f"conformance_{next(_STORE_NUMBERS)}")  # a fresh, empty store


OPENERS = {
    "sqlite": lambda request, tmp_path: _open_sqlite(tmp_path / "memory.sqlite"),
    "postgres": _open_postgres,
}


@pytest.fixture(params=sorted(OPENERS))
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStorage]:
    opened = OPENERS[request.param](request, tmp_path)
    yield opened
    opened.close()


def _record(
    record_id: str,
    l0: str,
    *,
    user: str | None = "alice",
    scope: str = "user",
    category: str = "preference",
    attribute: str | None = None,
    source: dict[str, object] | None = None,
    created: datetime | None = None,
) -> MemoryRecord:
    moment = created or datetime(2026, 1, 1, 8, 30, tzinfo=UTC)  # whole milliseconds, as stored
    record = new_record(
        record_id=record_id,
        l0=l0,
        agent_id="main",
        scope=scope,
        user_id=user,
        category=category,
        attribute=attribute,
        source=source,
        created_at=moment,
    )
    return record.model_copy(update={"updated_at": moment})


def _axis(n: int, lean: float = 0.0) -> np.ndarray:
    """A unit vector along axis `n`, leaning `lean` towards the next axis."""
    vector = np.zeros(DIMS, dtype=np.float32)
    vector[n] = 1.0
    vector[(n + 1) % DIMS] = lean
    return vector / np.linalg.norm(vector)


def _insert(storage: MemoryStorage, record: MemoryRecord, vector: np.ndarray | None = None) -> int:
    with storage.transaction():
        rowid = storage.insert(record, vector_ready=vector is not None)
        if vector is not None:
            storage.ensure_vectors(IDENTITY)
            storage.put_vector(rowid, vector, (record.scope, record.user_id or "", record.category))
            storage.vectors_changed()
    return rowid


# ---------------------------------------------------------------------------------------------- records


def test_an_inserted_record_reads_back_by_id_and_by_row_as_it_was_written(storage: MemoryStorage) -> None:
    record = _record(
        "mem-1", "Prefers green tea in the morning", source={"sessionId": "s-1", "messages": [2]}
    )
    rowid = _insert(storage, record)
    assert storage.get("mem-1") == record
    assert storage.rowid("mem-1") == rowid
    assert storage.by_rowids([rowid, rowid + 1]) == {rowid: record}
    assert storage.get("mem-2") is None and storage.rowid("mem-2") is None


def test_history_rows_come_back_in_order_with_their_values(storage: MemoryStorage) -> None:
    with storage.transaction():
        storage.log_change("mem-1", "alice", "add", None, None, None)
        storage.log_change("mem-1", "alice", "delete", {"l0": "tea 茶"}, None, "gone")
    rows = storage.history_rows("mem-1")
    assert [(r.action, r.old, r.new, r.reason) for r in rows] == [
        ("add", None, None, None),
        ("delete", '{"l0": "tea 茶"}', None, "gone"),
    ]
    assert rows[0].seq < rows[1].seq
    assert storage.history_rows("mem-2") == []


def test_replacing_a_row_keeps_its_rowid_and_changes_its_text_everywhere(storage: MemoryStorage) -> None:
    rowid = _insert(storage, _record("mem-1", "Drinks coffee daily"))
    changed = _record("mem-1", "Drinks matcha daily")
    with storage.transaction():
        storage.replace_row(rowid, changed, vector_ready=False)
    assert storage.get("mem-1") == changed and storage.rowid("mem-1") == rowid
    assert storage.keyword_candidates(query_terms("matcha"), VectorFilter(), 10)[0][0] == rowid
    assert storage.keyword_candidates(query_terms("coffee"), VectorFilter(), 10) == []


def test_a_deleted_record_leaves_reads_and_indexes_but_stays_readable_as_deleted(
    storage: MemoryStorage,
) -> None:
    rowid = _insert(storage, _record("mem-1", "Owns a red bicycle"), _axis(0))
    with storage.transaction():
        storage.mark_deleted(rowid, datetime(2026, 1, 2, tzinfo=UTC))
    assert storage.get("mem-1") is None
    tombstone = storage.get("mem-1", include_deleted=True)
    assert tombstone is not None and tombstone.deleted
    assert storage.by_rowids([rowid]) == {} and storage.list_records(LiveFilter()) == []
    assert storage.keyword_candidates(query_terms("bicycle"), VectorFilter(), 10) == []
    assert storage.knn(_axis(0), 5, VectorFilter()) == []


def test_removed_rows_are_gone_entirely_and_their_history_can_be_forgotten(storage: MemoryStorage) -> None:
    first = _insert(storage, _record("mem-1", "Plays chess on Sundays"), _axis(1))
    _insert(storage, _record("mem-2", "Plays tennis on Mondays", user="bob"))
    with storage.transaction():
        storage.log_change("mem-1", "alice", "add", None, None, None)
        storage.log_change("mem-2", "bob", "add", None, None, None)
        storage.remove([first])
        forgotten = storage.forget_history(user_ids=["alice"], record_ids=["mem-1"])
    assert forgotten == 1
    assert storage.get("mem-1", include_deleted=True) is None
    assert storage.read_vectors([first]) == {}
    assert len(storage.history_rows("mem-2")) == 1


def test_a_deleted_row_leaves_no_trace_and_its_id_can_be_inserted_again(storage: MemoryStorage) -> None:
    rowid = _insert(storage, _record("mem-1", "Likes jazz"), _axis(1))
    with storage.transaction():
        storage.delete_row(rowid)
    assert storage.get("mem-1", include_deleted=True) is None and storage.rowid("mem-1") is None
    assert storage.keyword_candidates(query_terms("jazz"), VectorFilter(), 5) == []
    assert storage.read_vectors([rowid]) == {}
    again = _insert(storage, _record("mem-1", "Likes blues"))
    assert storage.rowid("mem-1") == again and storage.get("mem-1").l0 == "Likes blues"  # type: ignore[union-attr]


def test_listing_filters_by_user_scope_and_category_and_skips_deleted(storage: MemoryStorage) -> None:
    _insert(storage, _record("a1", "Alice likes tea", created=datetime(2026, 1, 1, tzinfo=UTC)))
    _insert(
        storage,
        _record("a2", "Alice went to Rome", category="event", created=datetime(2026, 1, 2, tzinfo=UTC)),
    )
    _insert(storage, _record("b1", "Bob likes coffee", user="bob"))
    _insert(storage, _record("g1", "The agent answers briefly", user=None, scope="agent", category="lesson"))
    gone = _insert(storage, _record("a3", "Alice likes cake"))
    with storage.transaction():
        storage.mark_deleted(gone, datetime(2026, 1, 3, tzinfo=UTC))
    assert [r.id for r in storage.list_records(LiveFilter(user_id="alice"))] == ["a1", "a2"]
    assert [r.id for r in storage.list_records(LiveFilter(user_id="alice", category="event"))] == ["a2"]
    assert [r.id for r in storage.list_records(LiveFilter(scope="agent"))] == ["g1"]
    assert [r.id for r in storage.list_records(LiveFilter(user_id="alice"), limit=1, offset=1)] == ["a2"]
    assert storage.count_live() == 4 and storage.count_live(user_id="bob") == 1
    assert [r.id for _, r in storage.live_after(0, 2)] == ["a1", "a2"]


def test_the_fsrs_state_and_reflection_time_are_stored(storage: MemoryStorage) -> None:
    _insert(storage, _record("mem-1", "Learns Italian", category="event"))
    state = FsrsState(stability=3.5, difficulty=4.0, reps=2, lapses=1)
    reflected = datetime(2026, 2, 1, tzinfo=UTC)
    with storage.transaction():
        storage.set_fsrs("mem-1", state, reflected)
    stored = storage.get("mem-1")
    assert stored is not None and stored.fsrs.stability == 3.5 and stored.fsrs.reps == 2
    assert stored.reflected_at == reflected
    assert storage.unreflected(["event"]) == []


def test_same_text_and_same_attribute_find_the_live_match_of_the_same_user(storage: MemoryStorage) -> None:
    _insert(storage, _record("a1", "Works as a nurse", category="profile", attribute="job"))
    _insert(storage, _record("b1", "Works as a nurse", user="bob", category="profile", attribute="job"))
    again = _record("a2", "works as a NURSE", category="profile", attribute="job")
    other_job = _record("a3", "Works as a pilot", category="profile", attribute="job")
    assert storage.same_text(again) is not None and storage.same_text(again).id == "a1"  # type: ignore[union-attr]
    assert storage.same_attribute(other_job).id == "a1"  # type: ignore[union-attr]
    assert storage.same_text(_record("c1", "Works as a nurse", user="carol")) is None


# ---------------------------------------------------------------------------------------------- keywords


def test_keyword_candidates_rank_matches_in_english_and_chinese(storage: MemoryStorage) -> None:
    tea = _insert(storage, _record("en-1", "Drinks green tea every morning"))
    both = _insert(storage, _record("en-2", "Green tea and green apples"))
    piano = _insert(storage, _record("zh-1", "我女儿每周六上钢琴课"))
    _insert(storage, _record("zh-2", "同事老周每天早上一杯气泡水"))
    english = storage.keyword_candidates(query_terms("green tea"), VectorFilter(), 10)
    assert {rowid for rowid, _ in english} == {tea, both}
    assert all(score > 0 for _, score in english)
    chinese = storage.keyword_candidates(query_terms("钢琴"), VectorFilter(), 10)
    assert [rowid for rowid, _ in chinese] == [piano]
    assert storage.keyword_candidates([], VectorFilter(), 10) == []


def test_document_counts_count_live_records_per_term(storage: MemoryStorage) -> None:
    _insert(storage, _record("1", "green tea"))
    _insert(storage, _record("2", "green apples"))
    _insert(storage, _record("3", "学习钢琴"))
    terms = query_terms("green tea") + query_terms("钢琴") + ["absentterm"]
    counts = storage.document_counts(terms)
    assert counts[query_terms("green")[0]] == 2 and counts[query_terms("tea")[0]] == 1
    assert all(counts[t] == 1 for t in query_terms("钢琴"))
    assert "absentterm" not in counts
    assert storage.store_size() >= 3


def test_indexed_terms_are_the_analysed_words_not_the_raw_text(storage: MemoryStorage) -> None:
    rowid = _insert(storage, _record("1", "Running shoes"))
    l0, l1 = storage.indexed_terms([rowid])[rowid]
    assert l0.split() == index_terms("Running shoes").split() and "Running" not in l0 and l1 == ""


# ---------------------------------------------------------------------------------------------- vectors


def test_knn_returns_the_nearest_rows_best_first_and_reads_back_stored_vectors(
    storage: MemoryStorage,
) -> None:
    assert not storage.has_vectors() and storage.vector_identity() is None
    near = _insert(storage, _record("1", "near"), _axis(0, 0.1))
    middle = _insert(storage, _record("2", "middle"), _axis(0, 1.0))
    far = _insert(storage, _record("3", "far"), _axis(4))
    assert storage.has_vectors() and storage.vector_identity() == IDENTITY.to_dict()
    hits = storage.knn(_axis(0), 3, VectorFilter())
    assert [rowid for rowid, _ in hits] == [near, middle, far]
    assert hits[0][1] > hits[1][1] > hits[2][1]
    stored = storage.read_vectors([near, far, far + 100])
    assert set(stored) == {near, far}
    assert np.allclose(stored[near], _axis(0, 0.1), atol=0.02)
    assert [rowid for rowid, _ in storage.vector_source().knn(_axis(4), 1, VectorFilter())] == [far]


def test_a_vector_deleted_or_changed_moves_the_generation(storage: MemoryStorage) -> None:
    rowid = _insert(storage, _record("1", "x"), _axis(2))
    before = storage.vector_generation()
    with storage.transaction():
        storage.delete_vector(rowid)
        storage.vectors_changed()
    assert storage.read_vectors([rowid]) == {} and storage.vector_generation() > before


def test_a_vector_put_again_replaces_the_rows_vector_and_a_new_rows_vector_is_added(
    storage: MemoryStorage,
) -> None:
    first = _insert(storage, _record("1", "x"), _axis(2))
    with storage.transaction():
        storage.put_vector(first, _axis(5), ("user", "u1", "note"))
    second = _insert(storage, _record("2", "y"), _axis(1))
    stored = storage.read_vectors([first, second])
    assert np.allclose(stored[first], _axis(5), atol=0.02) and np.allclose(
        stored[second], _axis(1), atol=0.02
    )
    assert sorted(rowid for rowid, _ in storage.knn(_axis(5), 10, VectorFilter())) == [first, second]


def test_vectors_put_in_a_batch_are_stored_and_move_the_generation_by_the_end(storage: MemoryStorage) -> None:
    first = _insert(storage, _record("0", "before"), _axis(0))
    before = storage.vector_generation()
    with storage.transaction(), storage.vector_batch():
        rowids = []
        for n in range(1, 4):
            record = _record(str(n), f"text {n}")
            rowids.append(storage.insert(record, vector_ready=True))
            storage.ensure_vectors(IDENTITY)
            storage.put_vector(rowids[-1], _axis(n), (record.scope, record.user_id or "", record.category))
            storage.vectors_changed()
    assert storage.vector_generation() > before
    stored = storage.read_vectors([first, *rowids])
    assert all(np.allclose(stored[r], _axis(n), atol=0.02) for n, r in enumerate([first, *rowids]))


def test_a_failed_batch_stores_no_vector_and_the_next_write_reads_the_index_again(
    storage: MemoryStorage,
) -> None:
    _insert(storage, _record("0", "before"), _axis(0))
    generation = storage.vector_generation()
    with pytest.raises(RuntimeError, match="midway"), storage.transaction(), storage.vector_batch():
        rowid = storage.insert(_record("1", "lost"), vector_ready=True)
        storage.put_vector(rowid, _axis(1), ("user", "u1", "note"))
        storage.vectors_changed()
        raise RuntimeError("midway")
    assert storage.vector_generation() == generation and storage.rowid("1") is None
    later = _insert(storage, _record("2", "after"), _axis(2))
    assert np.allclose(storage.read_vectors([later])[later], _axis(2), atol=0.02)


def test_records_with_a_ready_vector_serve_as_the_embedding_cache(storage: MemoryStorage) -> None:
    import hashlib

    ready = _insert(storage, _record("1", "cached text"), _axis(3))
    _insert(storage, _record("2", "pending text"))
    digest = hashlib.sha256(b"cached text").hexdigest()
    assert storage.row_with_text(digest) == ready
    assert storage.row_with_text(hashlib.sha256(b"pending text").hexdigest()) is None
    assert storage.pending_vectors() == 1


# ---------------------------------------------------------------------------------------------- meta, transactions


def test_meta_values_are_set_read_and_overwritten(storage: MemoryStorage) -> None:
    assert storage.get_meta("reflection.lastRunAt") is None
    with storage.transaction():
        storage.set_meta("reflection.lastRunAt", "2026-01-01T00:00:00Z")
        storage.set_meta("count", 3)
        storage.set_meta("reflection.lastRunAt", "2026-01-02T00:00:00Z")
    assert storage.get_meta("reflection.lastRunAt") == "2026-01-02T00:00:00Z"
    assert storage.get_meta("count") == "3"


def test_a_transaction_that_raises_leaves_nothing_written(storage: MemoryStorage) -> None:
    with pytest.raises(RuntimeError, match="stop"), storage.transaction():
        storage.insert(_record("mem-1", "never stored"), vector_ready=False)
        storage.log_change("mem-1", "alice", "add", None, None, None)
        storage.set_meta("k", "v")
        raise RuntimeError("stop")
    assert storage.get("mem-1") is None and storage.history_rows("mem-1") == []
    assert storage.get_meta("k") is None
    assert storage.keyword_candidates(query_terms("stored"), VectorFilter(), 5) == []


def test_a_nested_transaction_joins_the_outer_one(storage: MemoryStorage) -> None:
    with pytest.raises(RuntimeError), storage.transaction():
        with storage.transaction():
            storage.insert(_record("inner", "inner write"), vector_ready=False)
        raise RuntimeError("outer fails")
    assert storage.get("inner") is None


# ---------------------------------------------------------------------------------------------- per-user isolation


def test_one_users_rows_never_come_back_for_another(storage: MemoryStorage) -> None:
    alice = _insert(storage, _record("a1", "Favourite colour is teal"), _axis(5))
    bob = _insert(storage, _record("b1", "Favourite colour is teal", user="bob"), _axis(5, 0.01))
    for_bob = VectorFilter(user_id="bob")
    assert [r for r, _ in storage.keyword_candidates(query_terms("teal colour"), for_bob, 10)] == [bob]
    assert [r for r, _ in storage.knn(_axis(5), 10, for_bob)] == [bob]
    assert [r.id for r in storage.list_records(LiveFilter(user_id="bob"))] == ["b1"]
    assert storage.same_text(_record("b2", "favourite colour is teal", user="bob")).id == "b1"  # type: ignore[union-attr]
    assert storage.has_user("alice") and not storage.has_user("carol")
    assert dict(storage.user_counts()) == {"alice": 1, "bob": 1}
    assert alice in storage.by_rowids([alice, bob])


def test_filters_by_scope_and_category_hold_for_keywords_and_vectors(storage: MemoryStorage) -> None:
    note = _insert(
        storage,
        _record("n1", "Deploy with make release", user=None, scope="agent", category="note"),
        _axis(6),
    )
    _insert(
        storage,
        _record("l1", "Deploy on Fridays is risky", user=None, scope="agent", category="lesson"),
        _axis(6),
    )
    notes = VectorFilter(scopes=("agent",), categories=("note",))
    assert [r for r, _ in storage.keyword_candidates(query_terms("deploy"), notes, 10)] == [note]
    assert [r for r, _ in storage.knn(_axis(6), 10, notes)] == [note]


def test_user_records_match_sessions_categories_dates_and_ids(storage: MemoryStorage) -> None:
    _insert(
        storage,
        _record("a1", "said in s-1", source={"sessionId": "s-1"}, created=datetime(2026, 1, 5, tzinfo=UTC)),
    )
    _insert(storage, _record("a2", "said in s-2", source={"sessionId": "s-2"}, category="event"))
    _insert(storage, _record("b1", "bob in s-1", user="bob", source={"sessionId": "s-1"}))
    assert [r.id for r in storage.user_records("alice", [RecordMatch("session", ("s-1",))])] == ["a1"]
    assert [r.id for r in storage.user_records("alice", [RecordMatch("category", ("event",))])] == ["a2"]
    assert [r.id for r in storage.user_records("alice", [RecordMatch("since", ("2027-01-01",))])] == []
    assert [r.id for r in storage.user_records("alice", [RecordMatch("id", ("a2",))])] == ["a2"]


def test_reassigning_a_record_moves_it_with_its_vector_and_history(storage: MemoryStorage) -> None:
    rowid = _insert(storage, _record("d1", "Owns a kayak", user="default"), _axis(7))
    with storage.transaction():
        storage.log_change("d1", "default", "add", None, None, None)
        storage.reassign(rowid, "d1", "alice", datetime(2026, 3, 1, tzinfo=UTC))
    moved = storage.get("d1")
    assert moved is not None and moved.user_id == "alice"
    assert [r for r, _ in storage.knn(_axis(7), 5, VectorFilter(user_id="alice"))] == [rowid]
    assert storage.knn(_axis(7), 5, VectorFilter(user_id="default")) == []


def test_stray_workspace_notes_are_found_and_given_to_the_owner_with_their_vectors(
    storage: MemoryStorage,
) -> None:
    """Issue 47: a workspace note indexed as agent scope (an older version) is every person's; it moves to
    the owner's user scope in place, its vector with it. SHARED.md's notes and ordinary notes stay."""
    old = _record(
        "n1", "alarm code 4417", user=None, scope="agent", category="note", source={"path": "MEMORY.md"}
    )
    old_row = _insert(storage, old, _axis(3))
    shared = _record(
        "n2", "wifi name", user=None, scope="agent", category="note", source={"path": "SHARED.md"}
    )
    _insert(storage, shared, _axis(4))
    other = _record("n3", "under another owner", user="bob", category="note", source={"path": "memory/a.md"})
    other_row = _insert(storage, other, _axis(5))
    _insert(storage, _record("n4", "an added note", user="default", category="note", source={"kind": "cli"}))
    _insert(
        storage, _record("n5", "the owner's", user="default", category="note", source={"path": "MEMORY.md"})
    )
    assert sorted(storage.stray_notes("default")) == [(old_row, "n1"), (other_row, "n3")]
    with storage.transaction():
        for rowid, record_id in storage.stray_notes("default"):
            storage.reassign(rowid, record_id, "default", datetime(2026, 3, 1, tzinfo=UTC), scope="user")
        storage.vectors_changed()
    assert storage.stray_notes("default") == []
    moved = storage.get("n1")
    assert moved is not None and (moved.scope, moved.user_id) == ("user", "default")
    owners = VectorFilter(user_id="default", scopes=("user",))
    assert [r for r, _ in storage.knn(_axis(3), 1, owners)] == [old_row]
    assert storage.knn(_axis(3), 5, VectorFilter(scopes=("agent",)))[0][0] != old_row
    kept = storage.get("n2")
    assert kept is not None and (kept.scope, kept.user_id) == ("agent", None)


def test_dedup_reassign_and_export_reads_leave_workspace_notes_alone(storage: MemoryStorage) -> None:
    note = _record(
        "w1", "User's dentist is Dr Wu", user="default", category="note", source={"path": "MEMORY.md"}
    )
    note_row = _insert(storage, note, _axis(2))
    said = _record("u1", "User's dentist is Dr Wu", user="default", category="note", source={"kind": "cli"})
    assert storage.same_text(said) is None  # the owner saying what MEMORY.md says is not a duplicate of it
    assert note_row not in [rowid for rowid, _ in storage.ready_rows("default", "user", "note")]
    assert storage.user_records("default", []) == []  # what `memory reassign` would move
    assert storage.live_after(0, 10, notes=False) == []
    assert storage.count_live(notes=False) == 0 and storage.count_live() == 1


# ---------------------------------------------------------------------------------------------- people, workspace


def test_person_mentions_count_per_user_and_kind_and_can_be_dropped(storage: MemoryStorage) -> None:
    with storage.transaction():
        storage.count_person("alice", "cast", "Gao Feng")
        storage.count_person("alice", "cast", "Gao Feng")
        storage.count_person("bob", "cast", "Priya")
        storage.count_person("alice", "own", "Alice")
    assert storage.person_names("alice", "cast") == [("Gao Feng", 2)]
    assert {name for name, _ in storage.person_names(None, "cast")} == {"Gao Feng", "Priya"}
    with storage.transaction():
        storage.drop_person("alice", "cast", "Gao Feng")
        storage.drop_person("bob")
    assert storage.person_names("alice", "cast") == [] and storage.person_names("bob", "cast") == []
    assert storage.people_count() == 1


def test_workspace_files_are_remembered_and_their_note_rows_found(storage: MemoryStorage) -> None:
    rowid = _insert(
        storage, _record("n1", "# Notes", user=None, scope="agent", category="note", source={"path": "a.md"})
    )
    with storage.transaction():
        storage.put_workspace_file(WorkspaceFile("a.md", "h1", 10, 5, 1, None))
        storage.put_workspace_file(WorkspaceFile("a.md", "h2", 12, 6, 9, None), keep_chunks=True)
        storage.put_workspace_file(WorkspaceFile("b.md", "h3", 1, 1, 0, "not UTF-8"))
    files = storage.workspace_files()
    assert files["a.md"] == WorkspaceFile("a.md", "h2", 12, 6, 1, None)
    assert files["b.md"].problem == "not UTF-8"
    assert storage.note_rows("a.md") == [rowid] and storage.note_rows("b.md") == []
    with storage.transaction():
        storage.drop_workspace_file("b.md")
    assert set(storage.workspace_files()) == {"a.md"}


def test_a_purge_finds_every_record_of_a_person_live_or_deleted(storage: MemoryStorage) -> None:
    """What forgetting a person reads: whose records the store holds, and the words of each of theirs,
    deleted ones too (a deleted record's text is still on disk until it is purged)."""
    kept = _record("a1", "Alice keeps bees on the roof")
    gone = _record("a2", "Alice once lived in Lisbon").model_copy(update={"l1": "Moved away in 2019"})
    _insert(storage, kept)
    rowid = _insert(storage, gone)
    _insert(storage, _record("b1", "Bob collects stamps", user="bob"))
    _insert(storage, _record("n1", "The assistant answers in English", user=None, scope="agent"))
    with storage.transaction():
        storage.mark_deleted(rowid, gone.updated_at)
    assert storage.user_ids() == ["alice", "bob"]
    assert sorted(storage.texts_of_users(["alice"])) == [
        ("Alice keeps bees on the roof", None),
        ("Alice once lived in Lisbon", "Moved away in 2019"),
    ]
    assert storage.texts_of_users(["carol"]) == []
    assert [i for _, i in storage.rows_of_users(["bob"])] == ["b1"]


def test_an_empty_list_of_users_finds_nothing(storage: MemoryStorage) -> None:
    _insert(storage, _record("a1", "Alice keeps bees on the roof"))
    assert storage.rows_of_users([]) == [] and storage.texts_of_users([]) == []
    assert list(storage.live_texts([])) == []


def test_live_texts_are_every_live_records_or_the_given_users(storage: MemoryStorage) -> None:
    _insert(storage, _record("a1", "Alice keeps bees on the roof"))
    gone = _insert(storage, _record("a2", "Alice once lived in Lisbon"))
    _insert(storage, _record("b1", "Bob collects stamps", user="bob"))
    _insert(storage, _record("n1", "The assistant answers in English", user=None, scope="agent"))
    with storage.transaction():
        storage.mark_deleted(gone, datetime(2026, 2, 1, tzinfo=UTC))
    assert sorted(storage.live_texts(), key=lambda row: row[1]) == [
        ("alice", "Alice keeps bees on the roof"),
        ("bob", "Bob collects stamps"),
        (None, "The assistant answers in English"),
    ]
    assert list(storage.live_texts(["bob"])) == [("bob", "Bob collects stamps")]
    assert storage.live_text_mentions("alice", "bees") and not storage.live_text_mentions("alice", "Lisbon")
    assert storage.live_text_mentions(None, "English") and not storage.live_text_mentions(None, "stamps")


def test_names_of_every_user_sum_their_mentions_in_name_order(storage: MemoryStorage) -> None:
    with storage.transaction():
        for user, name in [("bob", "Priya"), ("alice", "Gao Feng"), ("bob", "Gao Feng"), ("alice", "Ana")]:
            storage.count_person(user, "cast", name)
    assert storage.person_names(None, "cast") == [("Ana", 1), ("Gao Feng", 2), ("Priya", 1)]
    assert storage.person_names("bob", "cast") == [("Gao Feng", 1), ("Priya", 1)]


def test_of_two_equal_texts_made_at_once_the_later_row_is_the_match(storage: MemoryStorage) -> None:
    """Both backends break a tie of creation times the same way: the row inserted last."""
    _insert(storage, _record("a1", "Works as a nurse"))
    _insert(storage, _record("a2", "Works as a nurse"))
    assert storage.same_text(_record("a3", "works as a nurse")).id == "a2"  # type: ignore[union-attr]


def test_of_equal_texts_or_attributes_the_newest_is_the_match_whatever_order_they_were_stored_in(
    storage: MemoryStorage,
) -> None:
    later, earlier = datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC)
    for record_id, created in (("a2", earlier), ("a1", later), ("a3", earlier)):  # the newest in the middle
        _insert(
            storage,
            _record(record_id, "Works as a nurse", category="profile", attribute="job", created=created),
        )
    assert storage.same_text(_record("a4", "works as a nurse")).id == "a1"  # type: ignore[union-attr]
    pilot = _record("a5", "Works as a pilot", category="profile", attribute="job")
    assert storage.same_attribute(pilot).id == "a1"  # type: ignore[union-attr]


def test_a_record_without_a_user_matches_only_records_without_one(storage: MemoryStorage) -> None:
    nobodys = _insert(storage, _record("g1", "Answer in English", user=None, scope="agent"), _axis(0))
    _insert(storage, _record("a1", "Answer in English", scope="agent"), _axis(1))
    assert storage.same_text(_record("g2", "answer in english", user=None, scope="agent")).id == "g1"  # type: ignore[union-attr]
    assert [row for row, _ in storage.ready_rows(None, "agent", "preference")] == [nobodys]
    assert len(storage.ready_rows("alice", "agent", "preference")) == 1


def test_live_rows_page_by_row_filtered_by_scope_and_user(storage: MemoryStorage) -> None:
    rows = [
        _insert(storage, _record("a1", "one")),
        _insert(storage, _record("g1", "two", user=None, scope="agent")),
        _insert(storage, _record("a2", "three")),
        _insert(storage, _record("b1", "four", user="bob")),
    ]
    with storage.transaction():
        storage.mark_deleted(rows[2], datetime(2026, 2, 1, tzinfo=UTC))
    assert [r.id for _, r in storage.live_after(0, 10)] == ["a1", "g1", "b1"]
    assert [r.id for _, r in storage.live_after(rows[0], 1)] == ["g1"]
    assert [r.id for _, r in storage.live_after(0, 10, scope="user", user_id="alice")] == ["a1"]
    assert storage.count_live() == 3 and storage.count_live(scope="user") == 2
    assert storage.count_live(scope="user", user_id="bob") == 1 and storage.count_live(user_id="carol") == 0


def test_rows_asked_for_by_the_thousand_come_back_live_ones_only(storage: MemoryStorage) -> None:
    rows = [_insert(storage, _record(f"a{n}", f"memory number {n}")) for n in range(3)]
    with storage.transaction():
        storage.mark_deleted(rows[1], datetime(2026, 2, 1, tzinfo=UTC))
    wanted = range(1, max(rows) + 1200)  # more than one statement's marks in SQLite
    assert sorted(storage.by_rowids(wanted)) == [rows[0], rows[2]]
    assert sorted(storage.ranking_facts(wanted)) == [rows[0], rows[2]]
    assert storage.by_rowids([]) == {} and storage.ranking_facts([]) == {}
