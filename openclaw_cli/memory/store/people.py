"""The cast of a user's life: names that memories introduce with a relation ("neighbour Gao Feng"), and
the user's own names, which own those relations ("Lin's neighbour", "林伟的同事").

Kept in the `people` table as memories are written (store.insert_record, merge) so that search reads a
few hundred names instead of analysing every memory (search/subject.py explains what the names are for). A name
goes when the last memory saying it is deleted, and with its user on purge; `memory index --rebuild`
recomputes the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openclaw_cli.memory.search import subject

if TYPE_CHECKING:
    import apsw

ANY_USER = ""  # memories without a user


CAST = "cast"  # somebody a memory introduces with a relation
OWN = "own"  # whose relation it is: in a user's store, usually the user's own name
OWN_MIN_MENTIONS = 2  # one "Bob's sister Alice" must not make Bob the user


def note(conn: apsw.Connection, user_id: str | None, l0: str) -> None:
    """Count the names `l0` introduces and owns, if any. Call inside the write transaction of the memory."""
    for kind, name in ((CAST, subject.subject_of(l0).name), (OWN, subject.owner_of(l0))):
        if name:
            conn.execute(
                "INSERT INTO people(user_id, kind, name) VALUES (?, ?, ?) "
                "ON CONFLICT DO UPDATE SET mentions = mentions + 1",
                (user_id or ANY_USER, kind, name),
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
        conn.execute(
            "DELETE FROM people WHERE user_id = ? AND kind = ? AND name = ?",
            (user_id or ANY_USER, CAST, name),
        )


def cast(conn: apsw.Connection, user_id: str | None) -> frozenset[str]:
    """The names known for `user_id` (every user's when None)."""
    if user_id is None:
        rows = conn.execute("SELECT DISTINCT name FROM people WHERE kind = ?", (CAST,))
    else:
        rows = conn.execute("SELECT name FROM people WHERE user_id = ? AND kind = ?", (user_id, CAST))
    return frozenset(str(name) for (name,) in rows)


def own_names(conn: apsw.Connection, user_id: str | None) -> frozenset[str]:
    """The names `user_id`'s memories keep giving as the owner of their relations ("Lin's sister",
    "林伟的同事") and never introduce as somebody else: the user's own names. None for no single user."""
    if user_id is None:
        return frozenset()
    rows = list(
        conn.execute(
            "SELECT name, mentions FROM people WHERE user_id = ? AND kind = ? AND mentions >= ? AND name NOT IN "
            "(SELECT name FROM people WHERE user_id = ? AND kind = ?)",
            (user_id, OWN, OWN_MIN_MENTIONS, user_id, CAST),
        )
    )
    # The user owns most relations of their own store; "Bob's sister" twice beside "Lin's …" a hundred
    # times does not make Bob the user. Half the top count keeps the user's name in both scripts.
    top = max((int(m) for _, m in rows), default=0)
    return frozenset(str(name) for name, mentions in rows if int(mentions) * 2 >= top)


def rebuild(conn: apsw.Connection) -> int:
    """Fill the table from every live memory (the migration that adds it, and `memory index`)."""
    conn.execute("DELETE FROM people")
    for user_id, l0 in list(conn.execute("SELECT user_id, l0 FROM records WHERE deleted = 0")):
        note(conn, user_id, l0)
    return int(next(iter(conn.execute("SELECT count(*) FROM people")))[0])


def forget_user(conn: apsw.Connection, user_id: str) -> None:
    conn.execute("DELETE FROM people WHERE user_id = ?", (user_id,))
