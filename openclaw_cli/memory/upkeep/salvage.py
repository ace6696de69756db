"""Salvage: a new database built from every record a damaged one still reads, and the newest backup.

The new database is a fresh store (every migration applied) in the same directory. Into it go, row by
row past the damaged pages (upkeep/salvage_read.py), the tables that are the truth: `records`, `history`,
`meta` (less what describes the derived indexes) and `workspace_files`; the columns both schemas have,
so an older damaged file is read too. The newest backup that passes its check then brings back its
history rows and the records the damaged pages took, unless the history says they were deleted since.
The keyword index and the people table are rebuilt from the records; every vector is marked pending, to be
computed again once the new file is in place (the vectors of a damaged file cannot be trusted byte for
byte). Nothing here touches the damaged file.

Which records were lost: the unique index on `records.id` lists every id and its rowid, and usually
survives damage to the table's pages; so does the backup. Ids known only from the history are named when
the index itself is damaged (a workspace note replaced by a re-index leaves an add row behind, so the
history alone can name records that are not lost).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import StoreError
from openclaw_cli.memory.upkeep.salvage_read import (
    TableRead,
    columns,
    keyword_texts,
    quote,
    read_table,
    record_ids,
)

if TYPE_CHECKING:
    import apsw

# The tables salvage copies: the truth. The keyword and vector tables, `people` and `schema_migrations`
# are made new.
COPIED = ("records", "history", "meta", "workspace_files")
DERIVED_META = ("vector_table", "vectors_generation", "vector_centroid", "fts_analysis_version")
DERIVED_META_PREFIXES = ("vector_dtype:", "vector_clip:")


@dataclass
class Salvage:
    """What went into the new database, and what is known to be missing from it."""

    salvaged: int = 0  # live records read from the damaged file
    restored: list[str] = field(default_factory=list)  # ids brought back from the backup
    lost: list[dict[str, Any]] = field(default_factory=list)  # {"id", "knownFrom", "keywords"?}
    backup: str | None = None
    history_restored: int = 0
    ids_complete: bool = True  # the id index read whole: every lost id is named
    tables: dict[str, TableRead] = field(default_factory=dict)
    rejected: int = 0  # rows read but refused by the schema (garbage that parsed)

    def to_dict(self) -> dict[str, Any]:
        total = self.salvaged + len(self.restored) + len(self.lost)
        return {
            "salvaged": self.salvaged,
            "restoredFromBackup": len(self.restored),
            "lost": len(self.lost),
            "recoveredShare": round((self.salvaged + len(self.restored)) / total, 4) if total else 1.0,
            "restoredIds": self.restored,
            "lostRecords": self.lost,
            "lostIdsComplete": self.ids_complete,
            "backup": self.backup,
            "historyRowsFromBackup": self.history_restored,
            "rejectedRows": self.rejected,
            "tables": {name: read.to_dict() for name, read in self.tables.items()},
        }


def check_known_migrations(source: apsw.Connection) -> None:
    """A file from a newer openclaw has columns this one would drop: refuse rather than lose them."""
    from openclaw_cli.memory.store.sqlite.migrations import MIGRATIONS

    known = {name for name, _ in MIGRATIONS}
    try:
        names = [str(r[0]) for r in source.execute("SELECT name FROM schema_migrations")]
    except Exception:  # noqa: BLE001 - unreadable: the columns are compared instead
        return
    newer = [name for name in names if name not in known]
    if newer:
        raise StoreError(
            f"the damaged database was written by a newer openclaw (migration {newer[0]})",
            hint="upgrade openclaw, then run `openclaw memory recover` again; nothing was changed",
        )


def salvage_rows(source: apsw.Connection, target: apsw.Connection, done: Salvage) -> None:
    """Copy what `source` still reads of the COPIED tables into the fresh store `target` (one transaction)."""
    from openclaw_cli.memory.store.sqlite.meta import write_txn

    present = _tables(source)
    with write_txn(target):
        for table in COPIED:
            if table in present:
                done.tables[table] = TableRead(table)
                done.rejected += _copy_table(source, target, table, done.tables[table])
    done.salvaged = _count(target, "SELECT count(*) FROM records WHERE deleted = 0")


def _tables(conn: apsw.Connection) -> set[str]:
    try:
        return {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    except Exception:  # noqa: BLE001 - the schema page itself is damaged: nothing can be read
        return set()


def _copy_table(source: apsw.Connection, target: apsw.Connection, table: str, read: TableRead) -> int:
    """Insert every readable row; returns how many the target's constraints refused."""
    wanted = [c for c in columns(source, table) if c in set(columns(target, table))]
    sql = f"INSERT INTO {quote(table)}({', '.join(quote(c) for c in wanted)}) VALUES ({', '.join('?' * len(wanted))})"
    refused = 0
    for values in read_table(source, table, wanted, read):
        if table == "meta" and _derived_meta(str(values[wanted.index("key")])):
            continue
        refused += _insert(target, sql, values)
    return refused


def _insert(target: apsw.Connection, sql: str, values: tuple[Any, ...]) -> int:
    import apsw

    try:
        target.execute(sql, values)
    except (apsw.ConstraintError, apsw.MismatchError, apsw.TooBigError):
        return 1
    return 0


def _derived_meta(key: str) -> bool:
    return key in DERIVED_META or key.startswith(DERIVED_META_PREFIXES)


def _count(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> int:
    row = conn.execute(sql, params).fetchone()
    return 0 if row is None else int(row[0])


# --- the backup --------------------------------------------------------------------------------------


def merge_backup(backup: apsw.Connection, target: apsw.Connection, done: Salvage) -> None:
    """From the backup: the history rows, meta keys and workspace entries the new database lacks, then
    the live records it lacks whose id the history does not say was deleted later."""
    from openclaw_cli.memory.store.sqlite.meta import write_txn

    with write_txn(target):
        before = _count(target, "SELECT count(*) FROM history")
        _copy_missing(backup, target, "history", "seq")
        done.history_restored = _count(target, "SELECT count(*) FROM history") - before
        _copy_missing(backup, target, "meta", "key")
        _copy_missing(backup, target, "workspace_files", "path")
        have = {str(r[0]) for r in target.execute("SELECT id FROM records")}
        gone = deleted_ids(target)
        wanted = [c for c in columns(backup, "records") if c in set(columns(target, "records"))]
        cols = ", ".join(quote(c) for c in wanted)
        marks = ", ".join("?" * len(wanted))
        at = wanted.index("id")
        for values in backup.execute(f"SELECT {cols} FROM records WHERE deleted = 0 ORDER BY rowid"):
            record_id = str(values[at])
            if record_id in have or record_id in gone:
                continue
            row = _free_rowid(target, list(values), wanted)
            if not _insert(target, f"INSERT INTO records({cols}) VALUES ({marks})", tuple(row)):
                done.restored.append(record_id)


def _copy_missing(backup: apsw.Connection, target: apsw.Connection, table: str, key: str) -> None:
    if table not in _tables(backup):
        return
    wanted = [c for c in columns(backup, table) if c in set(columns(target, table))]
    cols = ", ".join(quote(c) for c in wanted)
    sql = f"INSERT OR IGNORE INTO {quote(table)}({cols}) VALUES ({', '.join('?' * len(wanted))})"
    for values in backup.execute(f"SELECT {cols} FROM {quote(table)}"):
        if table == "meta" and _derived_meta(str(values[wanted.index(key)])):
            continue
        _insert(target, sql, tuple(values))


def _free_rowid(target: apsw.Connection, values: list[Any], wanted: list[str]) -> list[Any]:
    """The backup's rowid when the new database has no row there, else a new one."""
    if "rowid" in wanted:
        at = wanted.index("rowid")
        if _count(target, "SELECT count(*) FROM records WHERE rowid = ?", (values[at],)):
            values[at] = None
    return values


def deleted_ids(conn: apsw.Connection) -> set[str]:
    """Ids whose latest history row is a delete."""
    rows = conn.execute(
        "SELECT record_id FROM (SELECT record_id, action, row_number() OVER "
        "(PARTITION BY record_id ORDER BY seq DESC) AS n FROM history) WHERE n = 1 AND action = 'delete'"
    )
    return {str(r[0]) for r in rows}


# --- what is missing --------------------------------------------------------------------------------


def find_lost(
    source: apsw.Connection | None,
    target: apsw.Connection,
    backup: apsw.Connection | None,
    done: Salvage,
) -> None:
    """Name the records neither read nor restored: from the id index, the backup, else the history."""
    have = {str(r[0]) for r in target.execute("SELECT id FROM records")}
    gone = deleted_ids(target)
    indexed, done.ids_complete = record_ids(source) if source is not None else ({}, False)
    known: dict[str, str] = {i: "index" for i in indexed}
    if backup is not None:
        for (record_id,) in backup.execute("SELECT id FROM records WHERE deleted = 0"):
            known.setdefault(str(record_id), "backup")
    if not done.ids_complete:
        for (record_id,) in target.execute("SELECT DISTINCT record_id FROM history WHERE record_id != '*'"):
            known.setdefault(str(record_id), "history")
    missing = sorted(i for i in known if i not in have and i not in gone)
    texts = keyword_texts(source, [indexed[i] for i in missing if i in indexed]) if source else {}
    for record_id in missing:
        entry: dict[str, Any] = {"id": record_id, "knownFrom": known[record_id]}
        text = texts.get(indexed.get(record_id, -1))
        if text:
            entry["keywords"] = text
        done.lost.append(entry)


# --- finishing ---------------------------------------------------------------------------------------


def finish(target: apsw.Connection) -> None:
    """Derived data made new from the records: keyword rows, people, a text hash where an older file had
    none, every vector pending; workspace files whose notes are incomplete are re-read at the next sync."""
    from openclaw_cli.memory.store import people
    from openclaw_cli.memory.store.sqlite.keyword import write_row as write_fts_row
    from openclaw_cli.memory.store.sqlite.meta import write_txn
    from openclaw_cli.memory.store.sqlite.records import text_hash
    from openclaw_cli.memory.store.sqlite.storage import SqliteStorage

    with write_txn(target):
        target.execute("UPDATE records SET vector_status = 'pending' WHERE deleted = 0")
        missing = list(target.execute("SELECT rowid, l0 FROM records WHERE text_hash IS NULL"))
        target.executemany(
            "UPDATE records SET text_hash = ? WHERE rowid = ?", [(text_hash(str(l0)), r) for r, l0 in missing]
        )
        target.execute("DELETE FROM records_fts")
        for rowid, l0, l1 in list(target.execute("SELECT rowid, l0, l1 FROM records WHERE deleted = 0")):
            write_fts_row(target, int(rowid), str(l0), l1)
        people.rebuild(SqliteStorage(target))
        target.execute(
            "DELETE FROM workspace_files WHERE chunks != (SELECT count(*) FROM records WHERE category = 'note' "
            "AND deleted = 0 AND json_extract(source, '$.path') = workspace_files.path)"
        )
    lines = [str(r[0]) for r in target.execute("PRAGMA quick_check")]
    if lines != ["ok"]:
        raise StoreError(f"the salvaged database failed its check ({lines[0]})", hint="nothing was changed")
