"""The on-disk layout at 1k memories: one copy of each vector (int8), no JSON copy in add rows."""

from __future__ import annotations

from pathlib import Path

from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.memory.store.memory_store import MemoryStore
from openclaw_cli.memory.store.record_rows import new_record
from openclaw_cli.memory.store.sqlite import vec
from tests.fake_embedder import CompositeFake
from tests.memory_helpers import BY_MEANING, REAL_MEMORIES, service_for

COUNT = 1000


def test_layout_holds_each_vector_once_and_no_copies_in_history(tmp_path: Path) -> None:
    fake = CompositeFake()
    store = MemoryStore.open(tmp_path / "m.sqlite", lambda: fake)
    records = [
        new_record(
            record_id=f"m-{n}",
            l0=f"memory number {n} about the staging database and a deploy on friday",
            agent_id="main",
            scope="user",
            user_id=f"u{n % 3}",
            category="note",
        )
        for n in range(COUNT)
    ]
    assert len(store.add(records).ids) == COUNT
    conn = store.conn
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    assert "embedding_cache" not in tables
    # The only vector bytes are the vec0 table's, one int8 byte per dimension.
    table = vec.current_table(conn)
    assert [t for t in tables if t.startswith("vec_") and "_" not in t[4:]] == [table]
    assert conn.execute(f"SELECT count(*), sum(length(embedding)) FROM {table}").fetchone() == (
        COUNT,
        COUNT * 896,
    )
    blobs = conn.execute(
        "SELECT count(*) FROM records WHERE typeof(text_hash) != 'integer' OR text_hash IS NULL"
    ).fetchone()[0]
    assert blobs == 0
    adds = list(conn.execute("SELECT old_value, new_value FROM history WHERE action = 'add'"))
    assert len(adds) == COUNT and all(old is None and new is None for old, new in adds)
    sizes = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
    history = sum(size for name, size in sizes.items() if name.startswith("history"))
    assert history / COUNT < 150  # a row and its index entry, no record copy (was ~880 bytes)
    store.close()


def test_with_the_real_models_each_vector_is_one_int8_copy_that_finds_by_meaning(tmp_path: Path) -> None:
    """The layout above with the packaged models (the fake only makes 1k vectors fast): the vector bytes
    are the vec0 table's alone, 896 int8 per memory, no JSON copy in the history; and those bytes are
    the models' own, since a vector search finds each memory by a question that shares no word with it."""
    service = service_for(tmp_path / "home")
    try:
        for text in REAL_MEMORIES.values():
            service.add(NewMemory(l0=text))
        [store] = list(service.existing_stores())
        conn = store.conn
        table = vec.current_table(conn)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
        assert [t for t in tables if t.startswith("vec_") and "_" not in t[4:]] == [table]
        count = len(REAL_MEMORIES)
        assert conn.execute(f"SELECT count(*), sum(length(embedding)) FROM {table}").fetchone() == (
            count,
            count * 896,
        )
        adds = list(conn.execute("SELECT old_value, new_value FROM history WHERE action = 'add'"))
        assert len(adds) == count and all(old is None and new is None for old, new in adds)
        for query, memory in BY_MEANING.items():
            hits = service.search(SearchRequest(query, mode="vector")).hits
            assert hits and hits[0].record.l0 == memory, (query, [h.record.l0 for h in hits])
    finally:
        service.close()
