"""Keeping the derived indexes honest: incremental repair, and a full rebuild swapped in atomically (the
check is upkeep/index_check.py).

`records` is the truth. `records_fts` must hold exactly the live records; the current vec0 table must
hold a vector for every live record whose vector is `ready`, made by the embedder named in `meta`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import StoreError
from openclaw_cli.memory.store import people
from openclaw_cli.memory.store.sqlite import vec
from openclaw_cli.memory.store.sqlite.keyword import write_row as write_fts_row
from openclaw_cli.memory.store.sqlite.meta import FTS_ANALYSIS_KEY, fts_analysis_version, set_meta, write_txn
from openclaw_cli.memory.store.sqlite.storage import SqliteStorage
from openclaw_cli.memory.store.vectors import centroid
from openclaw_cli.memory.text.analysis import ANALYSIS_VERSION
from openclaw_cli.memory.upkeep.index_check import camel_keys, count, stale_tables
from openclaw_cli.memory.upkeep.integrity import RESTORE_HINT, Damage, drop_derived, find_damage

if TYPE_CHECKING:
    from openclaw_cli.memory.embedding.onnx_embedder import Embedder
    from openclaw_cli.memory.store.memory_store import MemoryStore

Progress = Callable[[int], None]
CHUNK = 256


@dataclass
class RepairReport:
    fts_added: int = 0
    fts_removed: int = 0
    fts_reanalysed: int = 0
    vectors_added: int = 0
    vectors_removed: int = 0
    tombstones_purged: int = 0
    vectors_reembedded: int = 0  # stored vectors that were not their text's (upkeep/vector_check.py)
    stale_tables_dropped: int = 0
    still_pending: int = 0
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return camel_keys(self)


def repair(
    store: MemoryStore, embedder_factory: Callable[[], Embedder] | None, progress: Progress | None = None
) -> RepairReport:
    """Bring the indexes in line with the records, touching only what is wrong."""
    report = RepairReport()
    if not store.is_sqlite:
        from openclaw_cli.memory.upkeep import server_index

        server_index.repair(store, embedder_factory, report, progress)
        return report
    conn = store.conn
    _clear_damage(store)
    if fts_analysis_version(conn) < ANALYSIS_VERSION:
        report.fts_reanalysed = _reanalyse_fts(store)
    table = vec.current_table(conn)
    with write_txn(conn):
        for name in stale_tables(store, table):
            vec.drop_table(conn, name)
            report.stale_tables_dropped += 1
        live = "SELECT rowid FROM records WHERE deleted = 0"
        report.fts_removed = count(store, f"SELECT count(*) FROM records_fts WHERE rowid NOT IN ({live})")
        conn.execute(f"DELETE FROM records_fts WHERE rowid NOT IN ({live})")
        missing = list(
            conn.execute(
                "SELECT rowid, l0, l1 FROM records WHERE deleted = 0 AND rowid NOT IN (SELECT rowid FROM records_fts)"
            )
        )
        for rowid, l0, l1 in missing:
            write_fts_row(conn, rowid, l0, l1)
        report.fts_added = len(missing)
        if table is not None:
            report.vectors_removed = count(store, f"SELECT count(*) FROM {table} WHERE rowid NOT IN ({live})")
            conn.execute(f"DELETE FROM {table} WHERE rowid NOT IN ({live})")
            conn.execute(
                f"UPDATE records SET vector_status = 'pending' WHERE deleted = 0 AND vector_status = 'ready' "
                f"AND rowid NOT IN (SELECT rowid FROM {table})"
            )
        report.tombstones_purged = count(store, "SELECT count(*) FROM records WHERE deleted = 1")
        conn.execute("DELETE FROM records WHERE deleted = 1")
        vec.bump_generation(conn)
    report.vectors_reembedded = forget_wrong_vectors(store, embedder_factory, report)
    _fill_pending(store, embedder_factory, report, progress)
    report.still_pending = count(
        store, "SELECT count(*) FROM records WHERE deleted = 0 AND vector_status = 'pending'"
    )
    with write_txn(conn):
        centroid.refresh(store.storage)
    return report


def forget_wrong_vectors(
    store: MemoryStore, embedder_factory: Callable[[], Embedder] | None, report: RepairReport
) -> int:
    """Mark the stored vectors that are not their text's (a wrong norm or type, or a sampled one that
    disagrees with its text's fresh vector) pending, for `_fill_pending` to re-embed; how many."""
    from openclaw_cli.memory.upkeep import vector_check

    table = vec.current_table(store.conn)
    if embedder_factory is None or table is None:
        return 0
    found = vector_check.check(store.conn, embedder_factory)
    if found.not_compared:
        report.warning = f"{found.not_compared}; the stored vectors were not compared with their texts"
    wrong = found.wrong
    if wrong:
        with write_txn(store.conn):
            vec.delete(store.conn, table, wrong)
            store.conn.executemany(
                "UPDATE records SET vector_status = 'pending' WHERE rowid = ? AND deleted = 0",
                [(rowid,) for rowid in wrong],
            )
            vec.bump_generation(store.conn)
    return len(wrong)


def refill_wrong_vectors(store: MemoryStore, embedder_factory: Callable[[], Embedder]) -> RepairReport:
    """Only the vector part of `repair`: re-embed what is not its text's and what is pending (a restored
    copy keeps everything else as it was, its deleted records included)."""
    report = RepairReport()
    report.vectors_reembedded = forget_wrong_vectors(store, embedder_factory, report)
    _fill_pending(store, embedder_factory, report, None)
    report.still_pending = pending_count(store)
    return report


def _reanalyse_fts(store: MemoryStore) -> int:
    """Rewrite every live record's keyword row with the current analysis, a page per transaction so
    other writers are not locked out; the version is recorded last, so an interrupted run starts over."""
    done = 0
    for rows in _record_chunks(store, "1", columns="rowid, l0, l1"):
        with write_txn(store.conn):
            store.conn.executemany("DELETE FROM records_fts WHERE rowid = ?", [(r[0],) for r in rows])
            for rowid, l0, l1 in rows:
                write_fts_row(store.conn, rowid, l0, l1)
        done += len(rows)
    with write_txn(store.conn):
        set_meta(store.conn, FTS_ANALYSIS_KEY, ANALYSIS_VERSION)
    return done


def pending_count(store: MemoryStore) -> int:
    return store.storage.pending_vectors()


def _fill_pending(
    store: MemoryStore,
    embedder_factory: Callable[[], Embedder] | None,
    report: RepairReport,
    progress: Progress | None,
) -> None:
    from openclaw_cli.memory.embedding.onnx_embedder import EmbeddingUnavailable

    if embedder_factory is None or pending_count(store) == 0:
        return
    embedder = embedder_factory()
    if not store.identity_matches(embedder):
        report.warning = (
            "the configured embedder differs from the index's: run `openclaw memory index --rebuild`"
        )
        return
    for rows in _record_chunks(store, "vector_status = 'pending'"):
        try:
            found = store.embed_cached(embedder, [r[1] for r in rows])
        except EmbeddingUnavailable as exc:
            report.warning = f"{exc.message}; the remaining vectors stay pending"
            return
        with write_txn(store.conn):
            table = vec.ensure_table(store.conn, embedder.identity)
            _upsert_rows(store, table, rows, found)
            store.conn.executemany(
                "UPDATE records SET vector_status = 'ready' WHERE rowid = ?", [(r[0],) for r in rows]
            )
            vec.bump_generation(store.conn)
        report.vectors_added += len(rows)
        if progress is not None:
            progress(len(rows))


@dataclass
class RebuildReport:
    records: int = 0
    vector_table: str = ""
    embedder: dict[str, Any] = field(default_factory=dict)
    fts_rows: int = 0

    def to_dict(self) -> dict[str, Any]:
        return camel_keys(self)


def rebuild(store: MemoryStore, embedder: Embedder, progress: Progress | None = None) -> RebuildReport:
    """Re-embed every live record into a new vec0 table and swap it in with one commit.

    The old table keeps serving searches until the swap; if anything fails half-way the new table is
    dropped and nothing else has changed.
    """
    if not store.is_sqlite:
        from openclaw_cli.memory.upkeep import server_index

        report = RebuildReport()
        server_index.rebuild(store, embedder, report, progress)
        return report
    conn = store.conn
    _clear_damage(store)
    with write_txn(conn):
        for name in stale_tables(store, vec.current_table(conn)):
            vec.drop_table(conn, name)
        new_table = vec.create_table(conn, embedder.identity.dimensions)
    try:
        done = _fill_table(store, embedder, new_table, progress)
        with write_txn(conn):
            old = vec.current_table(conn)
            conn.execute(
                f"UPDATE records SET vector_status = CASE WHEN rowid IN (SELECT rowid FROM {new_table}) "
                "THEN 'ready' ELSE 'pending' END WHERE deleted = 0"
            )
            vec.set_current(conn, new_table, embedder.identity)
            if old is not None:
                vec.drop_table(conn, old)
            conn.execute("DELETE FROM records_fts")
            rows = list(conn.execute("SELECT rowid, l0, l1 FROM records WHERE deleted = 0"))
            for rowid, l0, l1 in rows:
                write_fts_row(conn, rowid, l0, l1)
            set_meta(conn, FTS_ANALYSIS_KEY, ANALYSIS_VERSION)
            people.rebuild(SqliteStorage(conn))  # names of deleted memories go
            centroid.refresh(SqliteStorage(conn))  # the new table's vectors
    except BaseException:
        with write_txn(conn):
            vec.drop_table(conn, new_table)
        raise
    return RebuildReport(
        records=done, vector_table=new_table, embedder=embedder.identity.to_dict(), fts_rows=len(rows)
    )


def _clear_damage(store: MemoryStore) -> Damage:
    """Refuse to touch damaged records; replace damaged derived tables with empty ones to refill."""
    damage = find_damage(store.conn)
    if damage.core:
        raise StoreError(f"{store.path}: {damage.describe()}", hint=RESTORE_HINT)
    if not damage.ok:
        drop_derived(store.conn)
    return damage


def _fill_table(store: MemoryStore, embedder: Embedder, table: str, progress: Progress | None) -> int:
    done = 0
    for rows in _record_chunks(store, "1"):
        found = store.embed_cached(embedder, [r[1] for r in rows])
        with write_txn(store.conn):
            _upsert_rows(store, table, rows, found)
        done += len(rows)
        if progress is not None:
            progress(len(rows))
    return done


def _record_chunks(
    store: MemoryStore, condition: str, columns: str = "rowid, l0, scope, user_id, category"
) -> Iterator[list[Any]]:
    """`columns` (constant SQL, rowid first) of the live records matching `condition` (a constant SQL
    expression), CHUNK at a time, in rowid order.

    Paging by rowid, not OFFSET, keeps every page cheap and tolerates the writes made between pages.
    """
    last = 0
    while True:
        rows = list(
            store.conn.execute(
                f"SELECT {columns} FROM records "
                f"WHERE deleted = 0 AND ({condition}) AND rowid > ? ORDER BY rowid LIMIT ?",
                (last, CHUNK),
            )
        )
        if not rows:
            return
        last = int(rows[-1][0])
        yield rows


def _upsert_rows(store: MemoryStore, table: str, rows: list[Any], found: list[Any]) -> None:
    for (rowid, _, scope, user_id, category), vector in zip(rows, found, strict=True):
        vec.upsert(store.conn, table, int(rowid), vector, (scope, user_id or "", category))


def total_live(store: MemoryStore) -> int:
    return store.storage.count_live()
