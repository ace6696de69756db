"""Reading every row SQLite can still read from a damaged table.

A scan stops at the first damaged page with CorruptError, but the b-tree still leads past it: a search
for rowid >= N descends from the interior pages straight to the leaf that holds N. So after a failure the
reader looks for the smallest rowid from which a search succeeds (doubling steps past the damage, then
bisecting back), and carries on from there; a row that is found but cannot be read (a damaged overflow
page) is skipped on its own. Rows on the damaged pages are what is lost, and nothing else.

Tables WITHOUT ROWID (meta, workspace_files) are small and keyed by text: they are read in key order up
to the first damage.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import apsw

MAX_ROWID = 2**63 - 1


@dataclass
class TableRead:
    """What reading one table met: rows read, rows found but unreadable, and whether damage was met."""

    table: str
    rows: int = 0
    unreadable_rows: list[int] = field(default_factory=list)
    damaged: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "damaged": self.damaged, "unreadableRows": len(self.unreadable_rows)}


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _is_damage(exc: BaseException) -> bool:
    """SQLite errors that mean "this page cannot be read" (not: busy, interrupted)."""
    import apsw

    if isinstance(exc, apsw.BusyError | apsw.InterruptError):
        return False
    return isinstance(exc, apsw.Error | UnicodeDecodeError | ValueError)


def columns(conn: apsw.Connection, table: str) -> list[str]:
    return [str(r[1]) for r in conn.execute(f"PRAGMA table_info({quote(table)})")]


def has_rowid(conn: apsw.Connection, table: str) -> bool:
    rows = conn.execute("SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?", (table,))
    row = rows.fetchone()
    return row is not None and not row[0]


def read_table(
    conn: apsw.Connection, table: str, wanted: list[str], report: TableRead
) -> Iterator[tuple[Any, ...]]:
    """The readable rows of `table`, as tuples of the `wanted` columns."""
    if has_rowid(conn, table):
        yield from _by_rowid(conn, table, wanted, report)
    else:
        yield from _in_key_order(conn, table, wanted, report)


def _by_rowid(
    conn: apsw.Connection, table: str, wanted: list[str], report: TableRead
) -> Iterator[tuple[Any, ...]]:
    cols = ", ".join(quote(c) for c in wanted)
    sql = f"SELECT _rowid_, {cols} FROM {quote(table)} WHERE _rowid_ >= ? ORDER BY _rowid_"
    start: int | None = -MAX_ROWID - 1
    while start is not None:
        last: int | None = None
        try:
            for rowid, *values in conn.execute(sql, (start,)):
                last = int(rowid)
                report.rows += 1
                yield tuple(values)
            return
        except Exception as exc:
            if not _is_damage(exc):
                raise
        report.damaged = True
        resumed = _resume(conn, table, sql, start if last is None else last + 1, report)
        # No progress (the same start failed again without a row): step over that rowid.
        start = start + 1 if resumed == start and last is None else resumed


def _resume(conn: apsw.Connection, table: str, sql: str, after: int, report: TableRead) -> int | None:
    """Where reading can go on after a failure at or after rowid `after`: the next row itself when only
    that row is unreadable, else the first rowid a search reaches past the damaged pages (None: none)."""
    found = _probe(conn, table, after)
    if found is not False and found is not None:
        try:
            next(iter(conn.execute(sql + " LIMIT 1", (found,))))
            return found  # the row reads on its own: the failure was further on
        except Exception as exc:
            if not _is_damage(exc):
                raise
            report.unreadable_rows.append(found)
            return found + 1 if found < MAX_ROWID else None
    if found is None:
        return None  # nothing after `after`
    return _past_damage(conn, table, after)


def _probe(conn: apsw.Connection, table: str, start: int) -> int | None | bool:
    """The first rowid >= `start` (None: there is none), or False when the search itself fails."""
    try:
        row = conn.execute(
            f"SELECT _rowid_ FROM {quote(table)} WHERE _rowid_ >= ? ORDER BY _rowid_ LIMIT 1", (start,)
        ).fetchone()
    except Exception as exc:
        if not _is_damage(exc):
            raise
        return False
    return None if row is None else int(row[0])


def _past_damage(conn: apsw.Connection, table: str, bad: int) -> int | None:
    """The smallest start >= `bad` from which a search succeeds; searches fail on a run of rowids that
    lead to damaged pages, and succeed again past it."""
    step = 1
    good = None
    while bad + step <= MAX_ROWID:
        if _probe(conn, table, bad + step) is not False:
            good = bad + step
            break
        bad, step = bad + step, step * 2
    if good is None:
        return None
    while good - bad > 1:
        middle = (bad + good) // 2
        if _probe(conn, table, middle) is False:
            bad = middle
        else:
            good = middle
    return good


def _in_key_order(
    conn: apsw.Connection, table: str, wanted: list[str], report: TableRead
) -> Iterator[tuple[Any, ...]]:
    cols = ", ".join(quote(c) for c in wanted)
    try:
        for values in conn.execute(f"SELECT {cols} FROM {quote(table)}"):
            report.rows += 1
            yield tuple(values)
    except Exception as exc:
        if not _is_damage(exc):
            raise
        report.damaged = True


def record_ids(conn: apsw.Connection) -> tuple[dict[str, int], bool]:
    """id -> rowid of every record the unique index on `records.id` still lists (it survives damage to
    the table's own pages), and whether the index read to its end."""
    try:
        index = conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'records' "
            "AND name GLOB 'sqlite_autoindex_records_*' ORDER BY name LIMIT 1"
        ).fetchone()
    except Exception as exc:
        if not _is_damage(exc):
            raise
        return {}, False
    if index is None:
        return {}, False
    found: dict[str, int] = {}
    try:
        for record_id, rowid in conn.execute(
            f"SELECT id, _rowid_ FROM records INDEXED BY {quote(str(index[0]))} ORDER BY id"
        ):
            found[str(record_id)] = int(rowid)
    except Exception as exc:
        if not _is_damage(exc):
            raise
        return found, False
    return found, True


def keyword_texts(conn: apsw.Connection, rowids: list[int]) -> dict[int, str]:
    """L0 of these rows as the keyword index stores it (records_fts keeps its own copy of the text)."""
    found: dict[int, str] = {}
    for rowid in rowids:
        try:
            row = conn.execute("SELECT c0 FROM records_fts_content WHERE id = ?", (rowid,)).fetchone()
        except Exception as exc:
            if not _is_damage(exc):
                raise
            continue
        if row is not None and isinstance(row[0], str):
            found[rowid] = row[0]
    return found
