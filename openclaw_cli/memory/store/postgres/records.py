"""The `records` and `history` statements only the postgres backend says this way: a record's insert and
rewrite, matches on its JSON source, and forgetting history. What both backends say alike is in
store/shared/statements.py.

The statements mirror store/sqlite/records.py; lists are bound as arrays (`= ANY(%s)`), so no statement's
text depends on what it is given. Times are stored as the same ISO text the SQLite file holds, so rows read
back into identical records and `since` compares as text on both backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store.protocol import RecordMatch, VectorFilter
from openclaw_cli.memory.store.record_rows import RECORD_COLUMNS, row_to_record, to_json
from openclaw_cli.memory.store.records import MemoryRecord, iso
from openclaw_cli.memory.store.shared import statements as st
from openclaw_cli.memory.store.sqlite.records import text_hash

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql

SESSION = "(source::jsonb ->> 'sessionId')"
_INSERT_COLUMNS = RECORD_COLUMNS.replace("rowid, ", "")


def filter_sql(where: VectorFilter, prefix: str = "") -> tuple[str, list[Any]]:
    """`where` as clauses (each starting with AND) on the scope, user_id and category columns."""
    clauses: list[str] = []
    params: list[Any] = []
    if where.user_id is not None:
        clauses.append(f"{prefix}user_id = %s")
        params.append(where.user_id)
    for column, values in (("scope", where.scopes), ("category", where.categories)):
        if values:
            clauses.append(f"{prefix}{column} = ANY(%s)")
            params.append(list(values))
    return "".join(f" AND {c}" for c in clauses), params


def records(
    conn: psycopg.Connection, where: str, params: Sequence[Any], tail: str = ""
) -> list[MemoryRecord]:
    rows = conn.execute(f"SELECT {RECORD_COLUMNS} FROM records WHERE {where} {tail}", params).fetchall()
    return [row_to_record(row) for row in rows]


def scalar(conn: psycopg.Connection, query: str | sql.Composed, params: Sequence[Any] = ()) -> int:
    row = conn.execute(query, params).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _match_sql(match: RecordMatch) -> tuple[str, list[Any]]:
    if match.field == "session":
        return f"{SESSION} = ANY(%s)", [list(match.values)]
    column = {"category": "category = %s", "since": "created_at >= %s", "id": "id = %s"}[match.field]
    return column, [match.values[0]]  # ISO UTC text sorts as time, so `since` compares as text


def user_records(
    conn: psycopg.Connection, user_id: str, matches: Sequence[RecordMatch]
) -> list[MemoryRecord]:
    parts = [_match_sql(m) for m in matches]
    # The owner's workspace notes stay theirs: the files own them (statements.NOT_WORKSPACE_NOTE).
    not_note = st.POSTGRES.sql(st.NOT_WORKSPACE_NOTE)
    where = " AND ".join(
        ["user_id = %s", "scope = 'user'", "deleted = 0", not_note, *(f"({s})" for s, _ in parts)]
    )
    params: list[Any] = [user_id, *(p for _, values in parts for p in values)]
    return records(conn, where, params, "ORDER BY created_at, rowid")


def session_places(conn: psycopg.Connection, session: str, where: VectorFilter) -> list[tuple[int, str]]:
    clause, params = filter_sql(where)
    rows = conn.execute(
        f"SELECT rowid, source FROM records WHERE {SESSION} = %s AND deleted = 0 AND source IS NOT NULL{clause}",
        [session, *params],
    )
    return [(int(row), str(source)) for row, source in rows]


def insert(conn: psycopg.Connection, record: MemoryRecord, vector_ready: bool) -> int:
    values = row_values(record, vector_ready)
    row = conn.execute(
        f"INSERT INTO records({_INSERT_COLUMNS}, text_hash) VALUES ({', '.join(['%s'] * len(values))}) "
        "RETURNING rowid",
        values,
    ).fetchone()
    assert row is not None
    return int(row[0])


def row_values(record: MemoryRecord, vector_ready: bool) -> tuple[Any, ...]:
    """The values of a new live record's row, in the order of RECORD_COLUMNS without rowid, then text_hash."""
    fs = record.fsrs
    return (
        record.id, record.scope, record.user_id, record.agent_id, record.category, record.l0, record.l1,
        record.l2, record.language, record.l0_hash, iso(record.created_at), iso(record.updated_at),
        to_json(record.source or None), fs.stability, fs.difficulty, iso(fs.last_review), iso(fs.next_review),
        fs.reps, fs.lapses, 0, "ready" if vector_ready else "pending", record.attribute,
        iso(record.reflected_at), text_hash(record.l0),
    )  # fmt: skip


def rewrite(conn: psycopg.Connection, row: int, new: MemoryRecord, vector_ready: bool) -> None:
    """A record's text and what derives from it, in place (merge keeps the row and its id)."""
    conn.execute(
        "UPDATE records SET l0 = %s, l1 = %s, l2 = %s, language = %s, l0_hash = %s, text_hash = %s, "
        "attribute = %s, source = %s, created_at = %s, updated_at = %s, vector_status = %s WHERE rowid = %s",
        (
            new.l0, new.l1, new.l2, new.language, new.l0_hash, text_hash(new.l0), new.attribute,
            to_json(new.source), iso(new.created_at), iso(new.updated_at),
            "ready" if vector_ready else "pending", row,
        ),
    )  # fmt: skip


def forget_history(conn: psycopg.Connection, user_ids: Sequence[str], record_ids: Sequence[str]) -> int:
    cursor = conn.execute(
        "DELETE FROM history WHERE user_id = ANY(%s) OR record_id = ANY(%s)",
        (list(user_ids), list(record_ids)),
    )
    return int(cursor.rowcount)
