"""The on-disk layout at 1k memories: one copy of each vector (int8), no JSON copy in add rows."""

from __future__ import annotations

from pathlib import Path

from openclaw_cli.memory.store.memory_store import MemoryStore
from openclaw_cli.memory.store.record_rows import new_record
from openclaw_cli.memory.store.sqlite import vec
from tests.fake_embedder import CompositeFake

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
