"""`memory status`: what one database holds and how healthy its indexes are."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store.persons import persons
from openclaw_cli.memory.store.sqlite import vec
from openclaw_cli.memory.upkeep.index_check import check

if TYPE_CHECKING:
    from openclaw_cli.memory.store.memory_store import MemoryStore


def database_status(
    store: MemoryStore, configured: dict[str, Any] | None, embedder_problem: str | None = None
) -> dict[str, Any]:
    if not store.is_sqlite:
        from openclaw_cli.memory.upkeep import server_index

        found = server_index.database_status(store)
        health = check(store, configured, embedder_problem)
        return {
            "path": found["path"],
            "records": health.records,
            "byScope": found["byScope"],
            "persons": found["persons"],
            "tombstones": health.tombstones,
            "pendingVectors": health.vectors_pending,
            "embedder": found["embedder"],
            "searchProfile": _profile(found["embedder"]),
            "vectorTable": health.vector_table,
            "index": {"ok": health.ok, "problems": health.problems()},
            "server": found["server"],
        }
    conn = store.conn
    counts: dict[str, dict[str, int]] = {}
    for scope, category, count in conn.execute(
        "SELECT scope, category, count(*) FROM records WHERE deleted = 0 GROUP BY scope, category ORDER BY 1, 2"
    ):
        counts.setdefault(str(scope), {})[str(category)] = int(count)
    health = check(store, configured, embedder_problem)
    files = {}
    for suffix in ("", "-wal", "-shm"):
        path = store.path.with_name(store.path.name + suffix)
        if path.exists():
            files[path.name] = path.stat().st_size
    migrations = [str(r[0]) for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    return {
        "path": str(store.path),
        "records": health.records,
        "byScope": counts,
        "persons": [person.to_dict() for person in persons(store.storage)],
        "tombstones": health.tombstones,
        "pendingVectors": health.vectors_pending,
        "embedder": vec.stored_identity(conn),
        "searchProfile": _profile(vec.stored_identity(conn)),
        "vectorTable": health.vector_table,
        "index": {"ok": health.ok, "problems": health.problems()},
        "files": files,
        "migrations": migrations,
    }


def _profile(identity: dict[str, Any] | None) -> dict[str, Any]:
    """The search profile this database's embedder gets: an untuned one is worth knowing about."""
    from openclaw_cli.memory.search.profiles import profile_for

    profile = profile_for(identity)
    return {"name": profile.name, "tuned": profile.tuned}


def agent_status(
    agent_id: str, shared: bool, stores: list[MemoryStore], configured: dict[str, Any], problem: str | None
) -> dict[str, Any]:
    """`memory status` of one agent: whether user memory is `shared`, the persons it reads and every
    database it reads (`stores`)."""
    from openclaw_cli.memory.store.persons import merged

    return {
        "agent": agent_id,
        "shareUserMemory": shared,
        "configuredEmbedder": configured,
        "embedderProblem": problem,
        # Whose memories this agent reads: its own store's and, when shared, the shared store's.
        "persons": [p.to_dict() for p in merged([persons(store.storage) for store in stores])],
        "databases": [database_status(store, configured, problem) for store in stores],
    }
