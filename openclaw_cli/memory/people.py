"""The cast of a user's life: names that memories introduce with a relation ("neighbour Gao Feng").

Kept in the `people` table as memories are written (store.insert_record, merge) so that search reads a
few hundred names instead of analysing every memory (subject.py explains what the names are for). A name
goes when the last memory saying it is deleted, and with its user on purge; `memory index --rebuild`
recomputes the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openclaw_cli.memory import subject

if TYPE_CHECKING:
    import apsw

ANY_USER = ""  # memories without a user


def note(conn: apsw.Connection, user_id: str | None, l0: str) -> None:
    """Remember the name `l0` introduces, if any. Call inside the write transaction of the memory."""
    name = subject.subject_of(l0).name
    if name:
        conn.execute(
            "INSERT INTO people(user_id, name) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (user_id or ANY_USER, name),
        )


def forget_if_unused(conn: apsw.Connection, user_id: str | None, l0: str) -> None:
    """After a memory is deleted: drop the name it introduced unless another live memory still says it."""
    name = subject.subject_of(l0).name
    if not name:
        return
    still = conn.execute(
        "SELECT 1 FROM records WHERE user_id IS ? AND deleted = 0 AND instr(l0, ?) > 0 LIMIT 1",
        (user_id, name),
    ).fetchone()
    if still is None:
        conn.execute("DELETE FROM people WHERE user_id = ? AND name = ?", (user_id or ANY_USER, name))


def cast(conn: apsw.Connection, user_id: str | None) -> frozenset[str]:
    """The names known for `user_id` (every user's when None)."""
    if user_id is None:
        rows = conn.execute("SELECT DISTINCT name FROM people")
    else:
        rows = conn.execute("SELECT name FROM people WHERE user_id = ?", (user_id,))
    return frozenset(str(name) for (name,) in rows)


def rebuild(conn: apsw.Connection) -> int:
    """Fill the table from every live memory (the migration that adds it, and `memory index`)."""
    conn.execute("DELETE FROM people")
    for user_id, l0 in list(conn.execute("SELECT user_id, l0 FROM records WHERE deleted = 0")):
        note(conn, user_id, l0)
    return int(next(iter(conn.execute("SELECT count(*) FROM people")))[0])


def forget_user(conn: apsw.Connection, user_id: str) -> None:
    conn.execute("DELETE FROM people WHERE user_id = ?", (user_id,))
