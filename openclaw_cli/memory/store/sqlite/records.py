"""The `records` and `history` tables of the SQLite backend: every record row read and written here.

A record's keyword-index row is written with it (sqlite/keyword.py); its vector separately (sqlite/vec.py).
Lists of rowids are read 500 at a time, well under SQLite's limit of bound parameters.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store.protocol import HistoryRow, RecordMatch, VectorFilter
from openclaw_cli.memory.store.record_rows import RECORD_COLUMNS, RankingFacts, row_to_record
from openclaw_cli.memory.store.records import FsrsState, MemoryRecord, iso, utc_now
from openclaw_cli.memory.store.sqlite.vec import filter_sql

if TYPE_CHECKING:
    import apsw

CHUNK = 500
_INSERT_COLUMNS = RECORD_COLUMNS.replace("rowid, ", "")


def text_hash(text: str) -> int:
    """The embedding-cache key of a text: the first 8 bytes of its SHA-256 as a signed 64-bit integer
    (an SQLite integer takes 8 bytes where the hex digest took 64)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big", signed=True)


def chunks(rowids: Iterable[int]) -> Iterator[list[int]]:
    wanted = list(rowids)
    for start in range(0, len(wanted), CHUNK):
        yield wanted[start : start + CHUNK]


def marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


def max_rowid(conn: apsw.Connection) -> int:
    """The largest rowid: an upper bound of the number of records, in O(log n)."""
    row = conn.execute("SELECT max(rowid) FROM records").fetchone()
    return int((row and row[0]) or 0)


def get(conn: apsw.Connection, record_id: str, include_deleted: bool) -> MemoryRecord | None:
    row = conn.execute(f"SELECT {RECORD_COLUMNS} FROM records WHERE id = ?", (record_id,)).fetchone()
    if row is None or (row[20] and not include_deleted):
        return None
    return row_to_record(row)


def rowid(conn: apsw.Connection, record_id: str) -> int | None:
    row = conn.execute("SELECT rowid FROM records WHERE id = ?", (record_id,)).fetchone()
    return None if row is None else int(row[0])


def by_rowids(conn: apsw.Connection, rowids: Iterable[int]) -> dict[int, MemoryRecord]:
    found: dict[int, MemoryRecord] = {}
    for chunk in chunks(rowids):
        sql = f"SELECT {RECORD_COLUMNS} FROM records WHERE rowid IN ({marks(chunk)}) AND deleted = 0"
        for row in conn.execute(sql, chunk):
            found[int(row[0])] = row_to_record(row)
    return found


def ranking_facts(conn: apsw.Connection, rowids: Iterable[int]) -> dict[int, RankingFacts]:
    """What ranking needs of each live candidate, without building whole records (search builds those
    only for the results it returns: validating ~150 records cost ~3 ms at every query)."""
    found: dict[int, RankingFacts] = {}
    for chunk in chunks(rowids):
        for row, language, category, l0, source, stability, difficulty, last, due in conn.execute(
            "SELECT rowid, language, category, l0, source, fsrs_stability, fsrs_difficulty, "
            f"fsrs_last_review, fsrs_next_review FROM records WHERE rowid IN ({marks(chunk)}) AND deleted = 0",
            chunk,
        ):
            fsrs = (stability, difficulty, last, due)
            found[int(row)] = RankingFacts(str(language), str(category), fsrs, str(l0), source)
    return found


def list_live(
    conn: apsw.Connection,
    filters: dict[str, str | None],
    limit: int | None,
    offset: int,
) -> list[MemoryRecord]:
    clauses: list[str] = ["deleted = 0"]
    params: list[Any] = []
    for column, value in filters.items():
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    sql = f"SELECT {RECORD_COLUMNS} FROM records WHERE {' AND '.join(clauses)} ORDER BY created_at, rowid"
    params.extend([limit if limit is not None else -1, offset])
    return [row_to_record(row) for row in conn.execute(sql + " LIMIT ? OFFSET ?", params)]


def export_filter(scope: str | None, user_id: str | None) -> tuple[str, list[Any]]:
    clauses: list[str] = ["deleted = 0"]
    params: list[Any] = []
    if scope is not None:
        clauses.append("+scope = ?")  # + : walk in rowid order, filtering (no sort per page)
        params.append(scope)
    if user_id is not None:
        clauses.append("+user_id = ?")
        params.append(user_id)
    return " AND ".join(clauses), params


def live_after(
    conn: apsw.Connection, after: int, limit: int, scope: str | None, user_id: str | None
) -> list[tuple[int, MemoryRecord]]:
    where, params = export_filter(scope, user_id)
    rows = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM records WHERE {where} AND rowid > ? ORDER BY rowid LIMIT ?",
        [*params, after, limit],
    )
    return [(int(row[0]), row_to_record(row)) for row in rows]


def count_live(conn: apsw.Connection, scope: str | None, user_id: str | None) -> int:
    where, params = export_filter(scope, user_id)
    row = conn.execute(f"SELECT count(*) FROM records WHERE {where}", params).fetchone()
    return int(row[0]) if row else 0


def newest_live(conn: apsw.Connection, where: str, params: tuple[object, ...]) -> MemoryRecord | None:
    row = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM records WHERE deleted = 0 AND {where} ORDER BY created_at DESC LIMIT 1",
        params,
    ).fetchone()
    return None if row is None else row_to_record(row)


def _match_sql(match: RecordMatch) -> tuple[str, tuple[str, ...]]:
    if match.field == "session":
        return (
            f"json_valid(source) AND json_extract(source, '$.sessionId') IN ({marks(match.values)})",
            match.values,
        )
    column = {"category": "category = ?", "since": "created_at >= ?", "id": "id = ?"}[match.field]
    return column, match.values[:1]  # ISO UTC text sorts as time, so `since` compares as text


def user_records(conn: apsw.Connection, user_id: str, matches: Sequence[RecordMatch]) -> list[MemoryRecord]:
    parts = [_match_sql(m) for m in matches]
    clauses = ["user_id = ?", "scope = 'user'", "deleted = 0", *(f"({sql})" for sql, _ in parts)]
    params: list[Any] = [user_id, *(p for _, values in parts for p in values)]
    sql = f"SELECT {RECORD_COLUMNS} FROM records WHERE {' AND '.join(clauses)} ORDER BY created_at, rowid"
    return [row_to_record(row) for row in conn.execute(sql, params)]


def unreflected(conn: apsw.Connection, categories: Sequence[str]) -> list[MemoryRecord]:
    rows = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM records WHERE deleted = 0 AND reflected_at IS NULL "
        f"AND category IN ({marks(categories)}) ORDER BY scope, user_id, category, created_at, rowid",
        tuple(categories),
    )
    return [row_to_record(row) for row in rows]


def unreflected_summary(conn: apsw.Connection, categories: Sequence[str]) -> tuple[int, str | None]:
    row = conn.execute(
        "SELECT COUNT(*), MIN(created_at) FROM records "
        f"WHERE deleted = 0 AND reflected_at IS NULL AND category IN ({marks(categories)})",
        tuple(categories),
    ).fetchone()
    count, first = row if row is not None else (0, None)
    return int(count), None if first is None else str(first)


def session_places(conn: apsw.Connection, session: str, where: VectorFilter) -> list[tuple[int, str]]:
    clause, params = filter_sql(where)
    rows = conn.execute(
        "SELECT rowid, source FROM records WHERE json_extract(source, '$.sessionId') = ? "
        f"AND deleted = 0 AND source IS NOT NULL{clause}",
        [session, *params],
    )
    return [(int(row), str(source)) for row, source in rows]


def insert(conn: apsw.Connection, record: MemoryRecord, vector_ready: bool) -> int:
    fs = record.fsrs
    conn.execute(
        f"INSERT INTO records({_INSERT_COLUMNS}, text_hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)",
        (
            record.id,
            record.scope,
            record.user_id,
            record.agent_id,
            record.category,
            record.l0,
            record.l1,
            record.l2,
            record.language,
            record.l0_hash,
            iso(record.created_at),
            iso(record.updated_at),
            _json(record.source or None),
            fs.stability,
            fs.difficulty,
            iso(fs.last_review),
            iso(fs.next_review),
            fs.reps,
            fs.lapses,
            "ready" if vector_ready else "pending",
            record.attribute,
            iso(record.reflected_at),
            text_hash(record.l0),
        ),
    )
    return int(conn.last_insert_rowid())


def rewrite(conn: apsw.Connection, row: int, new: MemoryRecord, vector_ready: bool) -> None:
    """A record's text and what derives from it, in place (merge keeps the row and its id)."""
    conn.execute(
        "UPDATE records SET l0 = ?, l1 = ?, l2 = ?, language = ?, l0_hash = ?, text_hash = ?, "
        "attribute = ?, source = ?, created_at = ?, updated_at = ?, vector_status = ? WHERE rowid = ?",
        (
            new.l0,
            new.l1,
            new.l2,
            new.language,
            new.l0_hash,
            text_hash(new.l0),
            new.attribute,
            _json(new.source),
            iso(new.created_at),
            iso(new.updated_at),
            "ready" if vector_ready else "pending",
            row,
        ),
    )


def set_fsrs(conn: apsw.Connection, record_id: str, state: FsrsState, reflected_at: datetime | None) -> None:
    conn.execute(
        "UPDATE records SET fsrs_stability = ?, fsrs_difficulty = ?, fsrs_last_review = ?, "
        "fsrs_next_review = ?, fsrs_reps = ?, fsrs_lapses = ?, "
        "reflected_at = COALESCE(?, reflected_at) WHERE id = ?",
        (
            state.stability,
            state.difficulty,
            iso(state.last_review),
            iso(state.next_review),
            state.reps,
            state.lapses,
            iso(reflected_at),
            record_id,
        ),
    )


def log_change(
    conn: apsw.Connection,
    record_id: str,
    user_id: str | None,
    action: str,
    old: Any,
    new: Any,
    reason: str | None,
) -> None:
    conn.execute(
        "INSERT INTO history(record_id, user_id, action, old_value, new_value, at, reason) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (record_id, user_id, action, _json(old), _json(new), iso(utc_now()), reason),
    )


def history_rows(conn: apsw.Connection, record_id: str) -> list[HistoryRow]:
    rows = conn.execute(
        "SELECT seq, action, old_value, new_value, at, reason FROM history WHERE record_id = ? ORDER BY seq",
        (record_id,),
    )
    return [
        HistoryRow(int(seq), str(action), old, new, str(at), reason)
        for seq, action, old, new, at, reason in rows
    ]


def forget_history(conn: apsw.Connection, user_ids: Sequence[str], record_ids: Sequence[str]) -> int:
    before = conn.total_changes()
    if user_ids:
        conn.execute(f"DELETE FROM history WHERE user_id IN ({marks(user_ids)})", tuple(user_ids))
    conn.executemany("DELETE FROM history WHERE record_id = ?", [(r,) for r in record_ids])
    return int(conn.total_changes() - before)


def _json(value: object) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)
