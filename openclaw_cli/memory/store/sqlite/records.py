"""The `records` and `history` statements only the SQLite backend says this way: a record's insert, its
rewrite in place, matches on its JSON source, and forgetting history. What both backends say alike is in
store/shared/statements.py.

A record's keyword-index row is written with it (sqlite/keyword.py); its vector separately (sqlite/vec.py).
Lists of rowids are bound 500 at a time, well under SQLite's limit of bound parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store.protocol import RecordMatch, VectorFilter
from openclaw_cli.memory.store.record_rows import RECORD_COLUMNS, row_to_record, to_json
from openclaw_cli.memory.store.records import MemoryRecord, iso
from openclaw_cli.memory.store.shared import statements as st
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
    # The owner's workspace notes stay theirs: the files own them (statements.NOT_WORKSPACE_NOTE).
    not_note = st.SQLITE.sql(st.NOT_WORKSPACE_NOTE)
    clauses = ["user_id = ?", "scope = 'user'", "deleted = 0", not_note, *(f"({sql})" for sql, _ in parts)]
    params: list[Any] = [user_id, *(p for _, values in parts for p in values)]
    sql = f"SELECT {RECORD_COLUMNS} FROM records WHERE {' AND '.join(clauses)} ORDER BY created_at, rowid"
    return [row_to_record(row) for row in conn.execute(sql, params)]


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
            to_json(record.source or None),
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
            to_json(new.source),
            iso(new.created_at),
            iso(new.updated_at),
            "ready" if vector_ready else "pending",
            row,
        ),
    )


def forget_history(conn: apsw.Connection, user_ids: Sequence[str], record_ids: Sequence[str]) -> int:
    before = conn.total_changes()
    if user_ids:
        conn.execute(f"DELETE FROM history WHERE user_id IN ({marks(user_ids)})", tuple(user_ids))
    conn.executemany("DELETE FROM history WHERE record_id = ?", [(r,) for r in record_ids])
    return int(conn.total_changes() - before)
