"""Where a memory database's bytes go: pages per table, grouped into what they are for."""

from __future__ import annotations

from typing import Any


def group_of(name: str) -> str:
    if name.startswith("vec_"):
        return "vectors"
    if name.startswith("records_fts"):
        return "fts"
    if name in ("records", "history", "embedding_cache", "meta"):
        return name
    if name.startswith("sqlite_autoindex_records") or name.startswith("records_"):
        return "record indexes"
    if name.startswith("history_") or name.startswith("sqlite_autoindex_history"):
        return "history"
    if name.startswith("sqlite_autoindex_embedding_cache"):
        return "embedding_cache"
    return "other"


def breakdown(conn: Any) -> dict[str, int]:
    """Bytes per group, from SQLite's dbstat table (pages in use, including their free space)."""
    sizes: dict[str, int] = {}
    for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        sizes[group_of(str(name))] = sizes.get(group_of(str(name)), 0) + int(size)
    return dict(sorted(sizes.items(), key=lambda item: -item[1]))


def report(conn: Any, memories: int) -> dict[str, Any]:
    parts = breakdown(conn)
    total = sum(parts.values())
    return {
        "memories": memories,
        "bytes": total,
        "bytes_per_memory": round(total / memories),
        "per_memory": {name: round(size / memories) for name, size in parts.items()},
    }
