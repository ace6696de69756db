"""`memory index`, `--check`, `--rebuild` and `memory status` for a store on PostgreSQL (memory.backend
postgres): the same reports as the SQLite file's (upkeep/index.py, index_check.py, status.py), read and
mended through the postgres backend's upkeep (store/postgres/upkeep.py) instead of the file itself.

There is no file to check for page damage, back up or vacuum here: the server's own tools do that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from openclaw_cli.memory.store import people
from openclaw_cli.memory.store.vectors import centroid

if TYPE_CHECKING:
    from openclaw_cli.memory.embedding.onnx_embedder import Embedder
    from openclaw_cli.memory.store.memory_store import MemoryStore
    from openclaw_cli.memory.store.postgres.storage import PostgresStorage

Progress = Callable[[int], None]
CHUNK = 256


def _server(store: MemoryStore) -> PostgresStorage:
    return cast("PostgresStorage", store.storage)


def where(store: MemoryStore) -> str:
    """The server store as reports name it (the server without its password, and the schema): its
    `path` is only the SQLite file the same agent would have, which does not exist."""
    from openclaw_cli.core.dsn import mask_dsn

    server = _server(store)
    return f"{mask_dsn(server.dsn)} schema {server.schema}"


def check(store: MemoryStore, report: Any) -> None:
    """Fill `report` (an index_check.IndexCheck) with the server store's counts and where it is."""
    from openclaw_cli.memory.store.postgres import upkeep

    report.path = where(store)
    for key, value in upkeep.index_counts(_server(store)).items():
        setattr(report, key, value)


def repair(
    store: MemoryStore,
    embedder_factory: Callable[[], Embedder] | None,
    report: Any,
    progress: Progress | None,
) -> None:
    """Mend the server store's indexes, then fill its pending vectors; counts go into `report` (an
    index.RepairReport)."""
    from openclaw_cli.memory.store.postgres import upkeep

    for key, value in upkeep.repair(_server(store)).items():
        setattr(report, key, value)
    _fill_pending(store, embedder_factory, report, progress)
    report.still_pending = store.storage.pending_vectors()
    with store.storage.transaction():
        centroid.refresh(store.storage)


def _fill_pending(
    store: MemoryStore,
    embedder_factory: Callable[[], Embedder] | None,
    report: Any,
    progress: Progress | None,
) -> None:
    from openclaw_cli.memory.embedding.onnx_embedder import EmbeddingUnavailable
    from openclaw_cli.memory.store.postgres import upkeep

    if embedder_factory is None or store.storage.pending_vectors() == 0:
        return
    embedder = embedder_factory()
    if not store.identity_matches(embedder):
        report.warning = (
            "the configured embedder differs from the index's: run `openclaw memory index --rebuild`"
        )
        return
    server, last = _server(store), 0
    while rows := upkeep.pending_rows(server, last, CHUNK):
        last = rows[-1][0]
        try:
            found = store.embed_cached(embedder, [r[1] for r in rows])
        except EmbeddingUnavailable as exc:
            report.warning = f"{exc.message}; the remaining vectors stay pending"
            return
        with server.transaction():
            server.ensure_vectors(embedder.identity)
            for (rowid, _, scope, user_id, category), vector in zip(rows, found, strict=True):
                server.put_vector(rowid, vector, (scope, user_id, category))
            upkeep.mark_ready(server, [r[0] for r in rows])
            server.vectors_changed()
        report.vectors_added += len(rows)
        if progress is not None:
            progress(len(rows))


def rebuild(store: MemoryStore, embedder: Embedder, report: Any, progress: Progress | None) -> None:
    """Into `report` (an index.RebuildReport): re-embed every live record into a new vector table and swap it in with one commit; the old table
    serves searches until then, and a failure half-way drops the new one."""
    from openclaw_cli.memory.store.postgres import upkeep, vectors

    server = _server(store)
    with server.transaction():
        for table in upkeep.stale_tables(server):
            upkeep.drop_table(server, table)
        new_table = vectors.create_table(server.conn, embedder.identity.dimensions)
    try:
        last = 0
        while rows := server.live_after(last, CHUNK):
            last = rows[-1][0]
            found = store.embed_cached(embedder, [record.l0 for _, record in rows])
            with server.transaction():
                for (rowid, record), vector in zip(rows, found, strict=True):
                    meta = (record.scope, record.user_id or "", record.category)
                    vectors.upsert(server.conn, new_table, rowid, vector, meta)
            report.records += len(rows)
            if progress is not None:
                progress(len(rows))
        with server.transaction():
            report.fts_rows = upkeep.swap_in(server, new_table, embedder.identity)
            people.rebuild(server)  # names of deleted memories go
            centroid.refresh(server)  # the new table's vectors
    except BaseException:
        with server.transaction():
            upkeep.drop_table(server, new_table)
        raise
    report.vector_table, report.embedder = new_table, embedder.identity.to_dict()


def database_status(store: MemoryStore) -> dict[str, Any]:
    """What `memory status` says of a server store beside its index check: per-scope counts, persons,
    the embedder and the server's facts (in place of the file's sizes and migrations)."""
    from openclaw_cli.memory.store.persons import persons
    from openclaw_cli.memory.store.postgres import upkeep

    server = _server(store)
    facts = upkeep.server_status(server)
    return {
        "path": f"{facts['server']} schema {server.schema}",
        "byScope": upkeep.scope_counts(server),
        "persons": [person.to_dict() for person in persons(server)],
        "embedder": server.vector_identity(),
        "server": facts,
    }
