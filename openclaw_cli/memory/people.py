"""The cast of a user's life: names that memories introduce with a relation ("neighbour Gao Feng").

Kept in the `people` table as memories are written (store.insert_record, merge) so that search reads a
few hundred names instead of analysing every memory (subject.py explains what the names are for). A name
stays after its memory is deleted or purged with the user (purge.py removes the user's rows); an extra
name only makes search ask whether a memory starting with it is about that person.
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
