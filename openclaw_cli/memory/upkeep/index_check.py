"""Checking the derived indexes of one database (`memory index --check`, `memory status`, doctor).

`records` is the truth. `records_fts` must hold exactly the live records; the current vec0 table must
hold a vector for every live record whose vector is `ready`, made by the embedder named in `meta`. The
counts are read straight from the SQLite tables, vec0 shadow tables included (upkeep/ is the SQLite
backend's file-level care).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store.sqlite import vec
from openclaw_cli.memory.store.sqlite.meta import fts_analysis_version
from openclaw_cli.memory.text.analysis import ANALYSIS_VERSION
from openclaw_cli.memory.upkeep.integrity import find_damage

if TYPE_CHECKING:
    from openclaw_cli.memory.embedding.onnx_embedder import Embedder
    from openclaw_cli.memory.store.memory_store import MemoryStore


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
    # upkeep/vector_check.py: vectors checked for type and norm, and a sample against their texts.
    vectors_checked: int = 0
    vectors_malformed: int = 0
    vectors_sampled: int = 0
    vectors_disagreeing: int = 0
    vectors_not_compared: str | None = None  # the embedder failed: no sample was re-embedded

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
            or self.vectors_malformed
            or self.vectors_disagreeing
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
            (
                self.vectors_malformed,
                "stored vectors with a wrong norm or impossible values (not their text's)",
            ),
        ]
        out = [f"{count} {what}" for count, what in named if count]
        if self.vectors_disagreeing:
            out.append(
                f"{self.vectors_disagreeing} of {self.vectors_sampled} sampled vectors disagree with a fresh "
                "embedding of their text"
            )
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
            **camel_keys(self),
            "ok": self.ok,
            "ftsOutdated": self.fts_outdated,
            "problems": self.problems(),
        }


def camel_keys(report: Any) -> dict[str, Any]:
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


def count(store: MemoryStore, sql: str) -> int:
    row = store.conn.execute(sql).fetchone()
    return 0 if row is None else int(row[0])


def check(
    store: MemoryStore,
    configured: dict[str, Any] | None,
    embedder_problem: str | None = None,
    embedder_factory: Callable[[], Embedder] | None = None,
) -> IndexCheck:
    """`configured`: the identity the settings name (embedders.configured_identity); a None dimension means
    unknown without calling an API, and is then left out of the comparison. With `embedder_factory`, the
    stored vectors are checked too (upkeep/vector_check.py): their norms, and a sample re-embedded."""
    report = IndexCheck(path=str(store.path), embedder_problem=embedder_problem)
    if not store.is_sqlite:  # no file to check for page damage: the counts come from the server
        from openclaw_cli.memory.upkeep import server_index

        server_index.check(store, report)
        _compare_embedders(report, configured)
        return report
    damage = find_damage(store.conn)
    if not damage.ok:
        # Counting through damaged tables would fail or lie: report where the damage is and stop.
        report.damaged_indexes, report.damaged_records = damage.derived, damage.core
        report.damage = damage.describe()
        return report
    _count_rows(store, report, configured)
    if embedder_factory is not None and not (report.embedder_problem or report.embedder_mismatch):
        _check_vectors(store, report, embedder_factory)
    return report


def _check_vectors(store: MemoryStore, report: IndexCheck, embedder_factory: Callable[[], Embedder]) -> None:
    from openclaw_cli.memory.upkeep import vector_check

    found = vector_check.check(store.conn, embedder_factory)
    report.vectors_not_compared = found.not_compared
    report.vectors_checked, report.vectors_sampled = found.checked, found.sampled
    report.vectors_malformed, report.vectors_disagreeing = len(found.malformed), len(found.disagreeing)


def _count_rows(store: MemoryStore, report: IndexCheck, configured: dict[str, Any] | None) -> None:
    live = "SELECT rowid FROM records WHERE deleted = 0"
    report.records = count(store, "SELECT count(*) FROM records WHERE deleted = 0")
    report.tombstones = count(store, "SELECT count(*) FROM records WHERE deleted = 1")
    report.fts_rows = count(store, "SELECT count(*) FROM records_fts")
    report.fts_missing = count(
        store, f"SELECT count(*) FROM ({live}) WHERE rowid NOT IN (SELECT rowid FROM records_fts)"
    )
    report.fts_orphans = count(store, f"SELECT count(*) FROM records_fts WHERE rowid NOT IN ({live})")
    report.fts_analysis = fts_analysis_version(store.conn)
    table = vec.current_table(store.conn)
    report.vector_table = table
    report.stale_tables = stale_tables(store, table)
    report.vectors_pending = count(
        store, "SELECT count(*) FROM records WHERE deleted = 0 AND vector_status = 'pending'"
    )
    if table is not None:
        report.vector_rows = count(store, f"SELECT count(*) FROM {table}")
        report.vectors_missing = count(
            store,
            f"SELECT count(*) FROM records WHERE deleted = 0 AND vector_status = 'ready' "
            f"AND rowid NOT IN (SELECT rowid FROM {table})",
        )
        report.vector_orphans = count(store, f"SELECT count(*) FROM {table} WHERE rowid NOT IN ({live})")
    report.stored_embedder = vec.stored_identity(store.conn)
    _compare_embedders(report, configured)


def _compare_embedders(report: IndexCheck, configured: dict[str, Any] | None) -> None:
    report.configured_embedder = configured
    stored = report.stored_embedder
    report.embedder_mismatch = (
        stored is not None
        and configured is not None
        and any(value is not None and stored[key] != value for key, value in configured.items())
    )


def stale_tables(store: MemoryStore, current: str | None) -> list[str]:
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
