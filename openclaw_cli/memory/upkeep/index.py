"""Keeping the derived indexes honest: check, incremental repair, and a full rebuild swapped in atomically.

`records` is the truth. `records_fts` must hold exactly the live records; the current vec0 table must
hold a vector for every live record whose vector is `ready`, made by the embedder named in `meta`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from openclaw_cli.errors import StoreError
from openclaw_cli.memory.store import centroid, people
from openclaw_cli.memory.store.sqlite import vec
from openclaw_cli.memory.store.sqlite.keyword import write_row as write_fts_row
from openclaw_cli.memory.store.sqlite.meta import FTS_ANALYSIS_KEY, fts_analysis_version, set_meta, write_txn
from openclaw_cli.memory.store.sqlite.storage import SqliteStorage
from openclaw_cli.memory.text.analysis import ANALYSIS_VERSION
from openclaw_cli.memory.upkeep.integrity import RESTORE_HINT, Damage, drop_derived, find_damage

if TYPE_CHECKING:
    from openclaw_cli.memory.embedding.onnx_embedder import Embedder
    from openclaw_cli.memory.store.memory_store import MemoryStore

Progress = Callable[[int], None]
CHUNK = 256


@dataclass
class IndexCheck:
    path: str
    records: int = 0
    tombstones: int = 0
    fts_rows: int = 0
    fts_missing: int = 0
    fts_orphans: int = 0
    fts_analysis: int = ANALYSIS_VERSION
    vector_table: str | None = None
    vector_rows: int = 0
    vectors_missing: int = 0
    vectors_pending: int = 0
    vector_orphans: int = 0
    stale_tables: list[str] = field(default_factory=list)
    stored_embedder: dict[str, Any] | None = None
    configured_embedder: dict[str, Any] | None = None
    embedder_mismatch: bool = False
    # Page damage (upkeep/integrity.py): derived tables can be rebuilt, records/history need a backup.
    damaged_indexes: list[str] = field(default_factory=list)
    damaged_records: list[str] = field(default_factory=list)
    damage: str | None = None
    # The configured embedder cannot be used, or its identity cannot be known without loading it.
    embedder_problem: str | None = None

    @property
    def ok(self) -> bool:
        return not (
            self.damage
            or self.embedder_problem
            or self.fts_missing
            or self.fts_orphans
            or self.vectors_missing
            or self.vector_orphans
            or self.stale_tables
            or self.embedder_mismatch
            or self.vectors_pending
            or self.fts_outdated
        )

    @property
    def fts_outdated(self) -> bool:
        return self.fts_analysis < ANALYSIS_VERSION

    def problems(self) -> list[str]:
        named = [
            (self.fts_missing, "live records missing from the keyword index"),
            (self.fts_orphans, "keyword-index rows without a live record"),
            (self.vectors_missing, "records marked ready without a vector"),
            (self.vectors_pending, "records whose vector is pending"),
            (self.vector_orphans, "vectors without a live record"),
            (len(self.stale_tables), "left-over vector tables from an interrupted rebuild"),
        ]
        out = [f"{count} {what}" for count, what in named if count]
        if self.damage:
            out.insert(0, self.damage)
        if self.embedder_problem:
            out.append(self.embedder_problem)
        if self.fts_outdated:
            out.append(
                f"keyword index written by text analysis v{self.fts_analysis} (current v{ANALYSIS_VERSION}): "
                "its records need re-analysing"
            )
        if self.embedder_mismatch:
            out.append(
                f"embedder changed ({_label(self.stored_embedder)} in the index, {_label(self.configured_embedder)} "
                "configured): a re-embed is needed"
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            **_camel_keys(self),
            "ok": self.ok,
            "ftsOutdated": self.fts_outdated,
            "problems": self.problems(),
        }


def _camel_keys(report: Any) -> dict[str, Any]:
    """A report dataclass as JSON: camelCase keys like every other --json output (values are left alone)."""
    out = {}
    for name, value in asdict(report).items():
        head, *rest = name.split("_")
        out[head + "".join(part.title() for part in rest)] = value
    return out


def _label(identity: dict[str, Any] | None) -> str:
    return (
        "none"
        if identity is None
        else f"{identity['provider']}:{identity['model']} ({identity['dimensions']}d)"
    )


def _count(store: MemoryStore, sql: str) -> int:
    row = store.conn.execute(sql).fetchone()
    return 0 if row is None else int(row[0])


def check(
    store: MemoryStore, configured: dict[str, Any] | None, embedder_problem: str | None = None
) -> IndexCheck:
    """`configured`: the identity the settings name (embedders.configured_identity); a None dimension means
    unknown without calling an API, and is then left out of the comparison."""
    report = IndexCheck(path=str(store.path), embedder_problem=embedder_problem)
    damage = find_damage(store.conn)
    if not damage.ok:
        # Counting through damaged tables would fail or lie: report where the damage is and stop.
        report.damaged_indexes, report.damaged_records = damage.derived, damage.core
        report.damage = damage.describe()
        return report
    _count_rows(store, report, configured)
    return report


def _count_rows(store: MemoryStore, report: IndexCheck, configured: dict[str, Any] | None) -> None:
    live = "SELECT rowid FROM records WHERE deleted = 0"
    report.records = _count(store, "SELECT count(*) FROM records WHERE deleted = 0")
    report.tombstones = _count(store, "SELECT count(*) FROM records WHERE deleted = 1")
    report.fts_rows = _count(store, "SELECT count(*) FROM records_fts")
    report.fts_missing = _count(
        store, f"SELECT count(*) FROM ({live}) WHERE rowid NOT IN (SELECT rowid FROM records_fts)"
    )
    report.fts_orphans = _count(store, f"SELECT count(*) FROM records_fts WHERE rowid NOT IN ({live})")
    report.fts_analysis = fts_analysis_version(store.conn)
    table = vec.current_table(store.conn)
    report.vector_table = table
    report.stale_tables = _stale_tables(store, table)
    report.vectors_pending = _count(
        store, "SELECT count(*) FROM records WHERE deleted = 0 AND vector_status = 'pending'"
    )
    if table is not None:
        report.vector_rows = _count(store, f"SELECT count(*) FROM {table}")
        report.vectors_missing = _count(
            store,
            f"SELECT count(*) FROM records WHERE deleted = 0 AND vector_status = 'ready' "
            f"AND rowid NOT IN (SELECT rowid FROM {table})",
        )
        report.vector_orphans = _count(store, f"SELECT count(*) FROM {table} WHERE rowid NOT IN ({live})")
    report.stored_embedder = vec.stored_identity(store.conn)
    report.configured_embedder = configured
    stored = report.stored_embedder
    report.embedder_mismatch = (
        stored is not None
        and configured is not None
        and any(value is not None and stored[key] != value for key, value in configured.items())
    )


def _stale_tables(store: MemoryStore, current: str | None) -> list[str]:
    """Vector tables that are not the current one (left by a killed rebuild), and shadow tables whose
    vec0 table is gone."""
    rows = list(
        store.conn.execute(
            "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name GLOB 'vec_[0-9]*'"
        )
    )
    virtual = {str(n) for n, sql in rows if "vec0" in str(sql) and str(sql).startswith("CREATE VIRTUAL")}
    stale = [n for n in virtual if n != current]
    # A shadow table is named after its vec0 table: vec_3_rowids belongs to vec_3.
    shadows = [str(n) for n, _ in rows if str(n) not in virtual and _owner(str(n)) not in virtual]
    return sorted(stale) + sorted(shadows)


def _owner(shadow: str) -> str:
    return "_".join(shadow.split("_")[:2])


@dataclass
class RepairReport:
    fts_added: int = 0
    fts_removed: int = 0
    fts_reanalysed: int = 0
    vectors_added: int = 0
    vectors_removed: int = 0
    tombstones_purged: int = 0
    stale_tables_dropped: int = 0
    still_pending: int = 0
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return _camel_keys(self)


def repair(
    store: MemoryStore, embedder_factory: Callable[[], Embedder] | None, progress: Progress | None = None
) -> RepairReport:
    """Bring the indexes in line with the records, touching only what is wrong."""
    report = RepairReport()
    conn = store.conn
    _clear_damage(store)
    if fts_analysis_version(conn) < ANALYSIS_VERSION:
        report.fts_reanalysed = _reanalyse_fts(store)
    table = vec.current_table(conn)
    with write_txn(conn):
        for name in _stale_tables(store, table):
            vec.drop_table(conn, name)
            report.stale_tables_dropped += 1
        live = "SELECT rowid FROM records WHERE deleted = 0"
        report.fts_removed = _count(store, f"SELECT count(*) FROM records_fts WHERE rowid NOT IN ({live})")
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
            report.vectors_removed = _count(
                store, f"SELECT count(*) FROM {table} WHERE rowid NOT IN ({live})"
            )
            conn.execute(f"DELETE FROM {table} WHERE rowid NOT IN ({live})")
            conn.execute(
                f"UPDATE records SET vector_status = 'pending' WHERE deleted = 0 AND vector_status = 'ready' "
                f"AND rowid NOT IN (SELECT rowid FROM {table})"
            )
        report.tombstones_purged = _count(store, "SELECT count(*) FROM records WHERE deleted = 1")
        conn.execute("DELETE FROM records WHERE deleted = 1")
        vec.bump_generation(conn)
    _fill_pending(store, embedder_factory, report, progress)
    report.still_pending = _count(
        store, "SELECT count(*) FROM records WHERE deleted = 0 AND vector_status = 'pending'"
    )
    with write_txn(conn):
        centroid.refresh(conn)
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
    return _count(store, "SELECT count(*) FROM records WHERE deleted = 0 AND vector_status = 'pending'")


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
    if not vec.identity_matches(store.conn, embedder.identity):
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
        return _camel_keys(self)


def rebuild(store: MemoryStore, embedder: Embedder, progress: Progress | None = None) -> RebuildReport:
    """Re-embed every live record into a new vec0 table and swap it in with one commit.

    The old table keeps serving searches until the swap; if anything fails half-way the new table is
    dropped and nothing else has changed.
    """
    conn = store.conn
    _clear_damage(store)
    with write_txn(conn):
        for name in _stale_tables(store, vec.current_table(conn)):
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
            centroid.refresh(conn)  # the new table's vectors
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
    return _count(store, "SELECT count(*) FROM records WHERE deleted = 0")
