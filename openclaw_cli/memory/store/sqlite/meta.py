"""Write transactions and the `meta` key-value table of a memory database.

Every write goes through `write_txn`, which takes the write lock up front (BEGIN IMMEDIATE) so concurrent
writers wait on the busy timeout instead of failing with "database is locked".
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import apsw

BUSY_TIMEOUT_MS = 30_000  # how long a connection waits for another's lock
# meta key: the text.ANALYSIS_VERSION the keyword index was written with (absent: version 1, before it existed)
FTS_ANALYSIS_KEY = "fts_analysis_version"


@contextmanager
def write_txn(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """A write transaction that holds the write lock from the start; rolled back on any exception.

    Inside another one on the same connection it is a savepoint instead, so the outer transaction
    commits or rolls back the whole (reflection writes insights and marks their sources as one)."""
    if conn.in_transaction:
        with conn:  # apsw: SAVEPOINT, released on success, rolled back to on an exception
            yield conn
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def get_meta(conn: apsw.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def delete_meta(conn: apsw.Connection, key: str) -> None:
    conn.execute("DELETE FROM meta WHERE key = ?", (key,))


def set_meta(conn: apsw.Connection, key: str, value: Any) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, str(value)),
    )


def fts_analysis_version(conn: apsw.Connection) -> int:
    """The text-analysis version the keyword index was written with."""
    return int(get_meta(conn, FTS_ANALYSIS_KEY) or 1)
