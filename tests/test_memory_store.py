"""The memory database: exact schema, writes through every index, deletes, purge, history, FSRS hits."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import apsw
import pytest

from openclaw_cli.core.errors import Conflict, InvalidInput, NotFound, StoreError
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.memory.store.sqlite import vec
from openclaw_cli.memory.store.sqlite.connection import open_db
from openclaw_cli.memory.store.vectors import matrix as vector_matrix
from openclaw_cli.memory.store.vectors import query as vectors
from tests.memory_helpers import add, service_for, settings_with

EXPECTED_OBJECTS = {
    ("table", "records"),
    ("index", "records_by_user"),
    ("index", "records_by_hash"),
    ("index", "records_pending"),
    ("table", "records_fts"),
    ("table", "records_fts_config"),
    ("table", "records_fts_content"),
    ("table", "records_fts_data"),
    ("table", "records_fts_docsize"),
    ("table", "records_fts_idx"),
    ("index", "records_by_text_hash"),
    ("index", "records_by_attribute"),
    ("index", "records_unreflected"),
    ("table", "meta"),
    ("table", "history"),
    ("index", "history_by_record"),
    ("table", "schema_migrations"),
    ("table", "workspace_files"),
    ("index", "records_by_note_path"),
    ("index", "records_by_session"),
    ("table", "people"),
}
RECORD_COLUMNS = [
    "rowid",
    "id",
    "scope",
    "user_id",
    "agent_id",
    "category",
    "l0",
    "l1",
    "l2",
    "language",
    "l0_hash",
    "created_at",
    "updated_at",
    "source",
    "fsrs_stability",
    "fsrs_difficulty",
    "fsrs_last_review",
    "fsrs_next_review",
    "fsrs_reps",
    "fsrs_lapses",
    "deleted",
    "vector_status",
    "text_hash",
    "attribute",
    "reflected_at",
]


def test_new_database_has_exactly_the_expected_schema(tmp_path: Path) -> None:
    conn = open_db(tmp_path / "m.sqlite")
    objects = {
        (t, n) for t, n in conn.execute("SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'")
    }
    assert objects == EXPECTED_OBJECTS
    assert [r[1] for r in conn.execute("PRAGMA table_info(records)")] == RECORD_COLUMNS
    assert [r[1] for r in conn.execute("PRAGMA table_info(history)")] == [
        "seq",
        "record_id",
        "user_id",
        "action",
        "old_value",
        "new_value",
        "at",
        "reason",
    ]
    fts_sql = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'records_fts'").fetchone()[0]
    assert "fts5(l0, l1, tokenize = 'unicode61 remove_diacritics 2')" in fts_sql
    assert [r[0] for r in conn.execute("SELECT name FROM schema_migrations")] == [
        "0001_initial",
        "0002_cache_in_records",
        "0003_history_without_copies",
        "0004_writing_columns",
        "0005_workspace_files",
        "0006_records_by_session",
        "0007_people",
        "0008_vector_centroid",
        "0009_language_of_l0",
        "0010_history_reassign",
    ]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("SELECT v FROM records_fts_config WHERE k = 'secure-delete'").fetchone()[0] == 1
    assert (tmp_path / "m.sqlite").stat().st_mode & 0o777 == 0o600


def test_reopening_applies_no_migration_twice(tmp_path: Path) -> None:
    open_db(tmp_path / "m.sqlite").close()
    conn = open_db(tmp_path / "m.sqlite")
    assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == 10


def test_add_writes_record_fts_vector_and_history(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    rid = add(service, "prefers dark mode in every editor", category="preference", l1="said so twice")
    store = service.store(service.db_path("user"))
    rowid = store.conn.execute("SELECT rowid FROM records WHERE id = ?", (rid,)).fetchone()[0]
    assert store.conn.execute("SELECT count(*) FROM records_fts WHERE rowid = ?", (rowid,)).fetchone()[0] == 1
    table = vec.current_table(store.conn)
    assert table is not None
    assert store.conn.execute(f"SELECT count(*) FROM {table} WHERE rowid = ?", (rowid,)).fetchone()[0] == 1
    record = service.get(rid)
    assert record.vector_status == "ready" and record.l1 == "said so twice" and record.language == "en"
    assert record.fsrs.stability is not None and record.user_id == "default"
    assert [h["action"] for h in service.history(rid)] == ["add"]
    assert vec.stored_identity(store.conn) == {
        "provider": "local",
        "model": "all-MiniLM-L6-v2-int8+use-m3-int8",
        "dimensions": 896,
    }
    service.close()


def test_memory_directory_and_file_are_private(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    add(service, "a private fact")
    path = service.db_path("user")
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert path.stat().st_mode & 0o777 == 0o600
    service.close()


def test_explicit_id_conflict_and_invalid_id(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    add(service, "first", record_id="m-1")
    with pytest.raises(Conflict):
        add(service, "second", record_id="m-1")
    with pytest.raises(InvalidInput):
        add(service, "third", record_id="../etc/passwd")
    service.close()


def test_text_over_limit_is_refused_and_nothing_stored(tmp_path: Path) -> None:
    service = service_for(tmp_path, settings_with(maxTextChars=100))
    with pytest.raises(InvalidInput, match="over the limit of 100"):
        add(service, "x" * 101)
    assert service.list_records() == []
    service.close()


def test_delete_removes_from_every_index_and_keeps_history(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    rid = add(service, "the staging database lives on db-stage-03")
    keep = add(service, "another memory about databases")
    service.delete(rid)
    with pytest.raises(NotFound):
        service.get(rid)
    hits = service.search(SearchRequest("db-stage-03 staging database")).hits
    assert rid not in [h.record.id for h in hits] and keep in [h.record.id for h in hits]
    store = service.store(service.db_path("user"))
    table = vec.current_table(store.conn)
    assert store.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 1
    history = service.history(rid)
    assert [h["action"] for h in history] == ["add", "delete"]
    assert history[1]["old"]["l0"] == "the staging database lives on db-stage-03"
    with pytest.raises(NotFound):
        service.delete("mem-does-not-exist")
    service.close()


def test_purge_removes_the_text_from_the_database_file(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    marker = "zanzibarquokka"
    add(service, f"alice's secret word is {marker}", user_id="alice")
    add(service, f"alice mentioned {marker} again", user_id="alice", l1=f"detail {marker}")
    bob = add(service, "bob likes tea", user_id="bob")
    assert service.purge_user("alice").memories == 2
    assert [r.id for r in service.list_records()] == [bob]
    path = service.db_path("user")
    service.close()
    for suffix in ("", "-wal"):
        file = path.with_name(path.name + suffix)
        if file.exists():
            assert marker.encode() not in file.read_bytes()


def test_search_is_read_only_and_record_hits_review(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    rid = add(service, "likes hiking in the mountains")
    before = service.get(rid).fsrs
    service.search(SearchRequest("hiking"))
    assert service.get(rid).fsrs == before
    service.record_hits([rid], datetime.now(UTC) + timedelta(days=3))
    after = service.get(rid).fsrs
    assert after.reps == before.reps + 1 and after.stability > before.stability
    service.close()


def test_retrievability_sinks_forgotten_memories_without_deleting(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    old = add(service, "uses vim keybindings", created_at=datetime.now(UTC) - timedelta(days=400))
    new = add(service, "uses vim keybindings everywhere")
    hits = service.search(SearchRequest("vim keybindings", explain=True)).hits
    ids = [h.record.id for h in hits]
    assert ids.index(new) < ids.index(old)
    assert hits[ids.index(old)].candidate.retrievability < 0.7
    service.close()


def test_keyword_only_hit_is_kept_and_filters_apply(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    zh = add(service, "我喜欢喝咖啡，不喜欢茶", category="preference", user_id="lin")
    add(service, "coffee every morning", category="preference", user_id="sam")
    ev = add(service, "去杭州出差三天", category="event", user_id="lin")
    hits = service.search(SearchRequest("咖啡", user_id="lin", explain=True)).hits
    assert hits[0].record.id == zh and hits[0].candidate.bm25_rank == 1
    only_events = service.search(SearchRequest("杭州 咖啡", user_id="lin", categories=("event",))).hits
    assert [h.record.id for h in only_events] == [ev]
    assert service.search(SearchRequest("coffee", user_id="nobody")).hits == []
    service.close()


def test_warm_matrix_and_vec0_return_the_same_neighbours(tmp_path: Path) -> None:
    cold = service_for(tmp_path)
    for text in [
        "dark mode in the editor",
        "light theme at night",
        "tea with milk",
        "rust borrow checker",
        "deploys on friday",
        "kubernetes cluster upgrade",
        "birthday in march",
        "prefers tabs",
    ]:
        add(cold, text)
    request = SearchRequest("what colour scheme does the IDE use", mode="vector", k=5)
    cold_ids = [h.record.id for h in cold.search(request).hits]
    warm = service_for(tmp_path, warm=True)
    assert [h.record.id for h in warm.search(request).hits] == cold_ids
    add(warm, "solarized dark colour scheme in the IDE")
    assert warm.search(request).hits[0].record.l0 == "solarized dark colour scheme in the IDE"
    cold.close()
    warm.close()


@pytest.mark.parametrize("content", [b"this is not a database at all, just text\n", b""])
def test_a_file_that_is_not_sqlite_is_refused_and_left_alone(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "memory.sqlite"
    path.write_bytes(content or b"\x00" * 64)
    before = path.read_bytes()
    with pytest.raises(StoreError):
        open_db(path)
    assert path.read_bytes() == before


def test_a_corrupt_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    open_db(path).close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)
    path.write_bytes(bytes(data))
    before = path.read_bytes()
    with pytest.raises(StoreError):
        open_db(path)
    assert path.read_bytes() == before


def test_shared_user_memory_goes_to_the_shared_database(tmp_path: Path) -> None:
    service = service_for(tmp_path, settings_with(shareUserMemory=True))
    user_id = add(service, "shared preference: tea", category="preference")
    agent_id = add(service, "agent lesson: check the logs first", category="lesson", scope="agent")
    assert service.db_path("user") == tmp_path / "agents" / "_shared" / "memory" / "memory.sqlite"
    assert service.db_path("agent") == tmp_path / "agents" / "main" / "memory" / "memory.sqlite"
    ids = {h.record.id for h in service.search(SearchRequest("tea logs lesson preference")).hits}
    assert {user_id, agent_id} <= ids
    service.close()


def test_store_survives_a_rolled_back_write(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    keep = add(service, "kept memory")
    store = service.store(service.db_path("user"))
    bad = service.build_record(NewMemory(l0="will fail"))
    with pytest.raises(apsw.ConstraintError):
        store.add([bad.model_copy(update={"category": "bogus"})])
    assert [r.id for r in service.list_records()] == [keep]
    service.close()


def test_english_model_weight_drops_for_text_it_cannot_read(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    add(service, "我喜欢喝咖啡，不喜欢茶")
    add(service, "prefers dark mode in every editor")
    chinese = service.search(SearchRequest("我喜欢喝什么咖啡"))
    english = service.search(SearchRequest("which editor theme does he like"))
    assert chinese.profile is not None and len(chinese.profile.legs) == 2
    full = chinese.profile.english_weight
    assert chinese.unknown_share is not None and chinese.unknown_share > 0.5
    assert chinese.vector_weight < full * 0.5
    assert english.unknown_share is not None and english.unknown_share < 0.1
    assert english.vector_weight == full
    assert chinese.hits[0].record.l0 == "我喜欢喝咖啡，不喜欢茶"
    service.close()


def test_sign_prefilter_returns_the_exact_neighbours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sign-bit prefilter (used from 20k rows) re-scores its candidates exactly: same answers as vec0."""
    import numpy as np

    monkeypatch.setattr(vector_matrix, "SIGN_PREFILTER_MIN_ROWS", 1)
    monkeypatch.setattr(vector_matrix, "SIGN_POOL", 8)
    service = service_for(tmp_path, warm=True)
    texts = [
        f"memory {n} about {topic}" for n, topic in enumerate(["tea", "rust", "deploys", "birthdays"] * 10)
    ]
    for n, text in enumerate(texts):
        add(service, text, user_id="u1" if n % 2 else "u2")
    store = service.store(service.db_path("user"))
    matrix = store.vector_matrix()
    assert matrix._signs is not None and matrix._rows8 is not None and matrix._matrix is None
    table = vec.current_table(store.conn)
    query = service.embedder().embed_query("a cup of tea").vector
    for where in (vectors.VectorFilter(), vectors.VectorFilter(user_id="u1")):
        warm = matrix.knn(query, 5, where)
        cold = vec.knn(store.conn, table, query, 5, where)
        assert [r for r, _ in warm] == [r for r, _ in cold]
        assert np.allclose([s for _, s in warm], [s for _, s in cold], atol=1e-5)
    service.close()


def test_the_service_points_jieba_at_the_model_cache_dir(tmp_path: Path) -> None:
    from openclaw_cli.memory.text import jieba_dictionary

    service = service_for(tmp_path)
    add(service, "我喜欢喝咖啡")
    assert jieba_dictionary.cache_dir() == service.model_cache_dir()
    service.close()


def test_history_outlives_the_tombstone(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    rid = add(service, "the staging database lives on db-stage-03")
    service.delete(rid)
    service.repair_indexes()  # clears the tombstone: only history rows remain
    history = service.history(rid)
    assert [h["action"] for h in history] == ["add", "delete"]
    assert history[0]["new"]["l0"] == history[1]["old"]["l0"] == "the staging database lives on db-stage-03"
    with pytest.raises(NotFound):
        service.history("mem-never-existed")
    service.close()


def test_a_one_search_process_finds_what_a_warm_one_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-search process reads its vectors ahead from vec0's chunks and scores every row exactly; a warm
    one (sign prefilter forced on, its pool larger than the store) finds the same hits with the same
    scores, with and without a filter."""
    monkeypatch.setattr(vector_matrix, "SIGN_PREFILTER_MIN_ROWS", 1)
    warm = service_for(tmp_path, warm=True)
    for n, text in enumerate(
        ["dark mode in the editor", "tea with milk", "deploys on friday", "林伟早上喝咖啡", "prefers tabs"]
        * 3
    ):
        add(warm, f"{text} ({n})", user_id="lin" if n % 2 else "sam")
    cold = service_for(tmp_path, one_shot=True)
    cold.preload_embedder()
    for request in (
        SearchRequest("the editor's dark colour scheme", k=5, all_results=True),
        SearchRequest("早上喝什么", k=5, user_id="lin", all_results=True),
    ):
        cold_hits = [(h.record.id, h.candidate.score) for h in cold.search(request).hits]
        warm_hits = [(h.record.id, h.candidate.score) for h in warm.search(request).hits]
        assert len(cold_hits) == 5 and [i for i, _ in cold_hits] == [i for i, _ in warm_hits]
        # The one-shot model runs its graph unoptimised: the query vector differs in the last float32 bits.
        assert [s for _, s in cold_hits] == pytest.approx([s for _, s in warm_hits], abs=1e-6)
    store = cold.store(cold.db_path("user"))
    assert store.matrix is not None and store.matrix._signs is None and store.matrix._rows8 is not None
    assert warm.store(warm.db_path("user")).matrix._signs is not None  # type: ignore[union-attr]
    cold.close()
    warm.close()
