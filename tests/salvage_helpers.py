"""Stores for the backup and salvage tests, and real damage: garbage over one page `dbstat` places."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import apsw

from openclaw_cli.memory.store.memory_store import MemoryStore
from openclaw_cli.memory.store.record_rows import new_record
from openclaw_cli.security.database import connect
from tests.conftest import run_cli
from tests.fake_embedder import CompositeFake


def text(i: int) -> str:
    return f"memory {i} about garden {i % 7} and teapot number {i}"


def fake_store(path: Path, count: int, first: int = 0) -> Path:
    """A store of `count` memories `mem-NNN` with vectors from the deterministic fake embedder (fast)."""
    fake = CompositeFake()
    store = MemoryStore.open(path, lambda: fake)
    try:
        store.add(
            [
                new_record(
                    record_id=f"mem-{i:03d}",
                    l0=text(i),
                    agent_id="main",
                    scope="user",
                    user_id="default",
                    category="note",
                )
                for i in range(first, first + count)
            ]
        )
    finally:
        store.close()
    return path


def fake_factory() -> Callable[[], CompositeFake]:
    fake = CompositeFake()
    return lambda: fake


def leaf_pages(path: Path, table: str) -> list[int]:
    """The leaf pages of `table`, in page order (after a checkpoint, so the file holds them)."""
    conn = connect(path)  # keyed in an encrypted home
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return [
            int(r[0])
            for r in conn.execute(
                "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno", (table,)
            )
        ]
    finally:
        conn.close()


def overwrite_page(path: Path, page: int) -> None:
    conn = connect(path)  # keyed in an encrypted home
    size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    conn.close()
    with path.open("r+b") as handle:
        handle.seek((page - 1) * size)
        handle.write(os.urandom(size))


def damage_middle_leaf(path: Path, table: str = "records") -> int:
    """Garbage over the middle leaf page of `table`; returns the page number."""
    pages = leaf_pages(path, table)
    page = pages[len(pages) // 2]
    overwrite_page(path, page)
    return page


def live_ids(path: Path) -> set[str]:
    conn = connect(path, flags=apsw.SQLITE_OPEN_READONLY)  # keyed in an encrypted home
    try:
        return {str(r[0]) for r in conn.execute("SELECT id FROM records WHERE deleted = 0")}
    finally:
        conn.close()


def cli_store(home: Path, texts: list[tuple[str, str]]) -> Path:
    """A home holding (id, text) memories added through the CLI with the default local embedder."""
    lines = "\n".join(json.dumps({"text": body, "id": memory_id}) for memory_id, body in texts)
    done = run_cli(home, "memory", "add", "--batch", "-", input=lines)
    assert done.returncode == 0, done.stderr
    return home


def copy_home(source: Path, tmp_path: Path) -> Path:
    """A copy of a home built once per module, for a test that changes it."""
    home = tmp_path / "home"
    shutil.copytree(source, home)
    return home
