"""The cast of a user's life: names that memories introduce with a relation ("neighbour Gao Feng"), and
the user's own names, which own those relations ("Lin's neighbour", "林伟的同事").

Kept in the `people` table as memories are written (store.insert_record, merge) so that search reads a
few hundred names instead of analysing every memory (text/subject.py explains what the names are for). A name
goes when the last memory saying it is deleted, and with its user on purge; `memory index --rebuild`
recomputes the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openclaw_cli.memory.text import subject

if TYPE_CHECKING:
    from openclaw_cli.memory.store.protocol import MemoryStorage

ANY_USER = ""  # memories without a user


CAST = "cast"  # somebody a memory introduces with a relation
OWN = "own"  # whose relation it is: in a user's store, usually the user's own name
OWN_MIN_MENTIONS = 2  # one "Bob's sister Alice" must not make Bob the user


def note(storage: MemoryStorage, user_id: str | None, l0: str) -> None:
    """Count the names `l0` introduces and owns, if any. Call inside the write transaction of the memory."""
    for kind, name in ((CAST, subject.subject_of(l0).name), (OWN, subject.owner_of(l0))):
        if name:
            storage.count_person(user_id or ANY_USER, kind, name)


def forget_if_unused(storage: MemoryStorage, user_id: str | None, l0: str) -> None:
    """After a memory is deleted: drop the name it introduced unless another live memory still says it."""
    name = subject.subject_of(l0).name
    if name and not storage.live_text_mentions(user_id, name):
        storage.drop_person(user_id or ANY_USER, CAST, name)


def cast(storage: MemoryStorage, user_id: str | None) -> frozenset[str]:
    """The names known for `user_id` (every user's when None)."""
    return frozenset(name for name, _ in storage.person_names(user_id, CAST))


def own_names(storage: MemoryStorage, user_id: str | None) -> frozenset[str]:
    """The names `user_id`'s memories keep giving as the owner of their relations ("Lin's sister",
    "林伟的同事") and never introduce as somebody else: the user's own names. None for no single user."""
    if user_id is None:
        return frozenset()
    introduced = cast(storage, user_id)
    rows = [
        (name, mentions)
        for name, mentions in storage.person_names(user_id, OWN)
        if mentions >= OWN_MIN_MENTIONS and name not in introduced
    ]
    # The user owns most relations of their own store; "Bob's sister" twice beside "Lin's …" a hundred
    # times does not make Bob the user. Half the top count keeps the user's name in both scripts.
    top = max((m for _, m in rows), default=0)
    return frozenset(name for name, mentions in rows if mentions * 2 >= top)


def rebuild(storage: MemoryStorage) -> int:
    """Fill the table from every live memory (the migration that adds it, and `memory index`)."""
    storage.drop_people()
    for user_id, l0 in list(storage.live_texts()):
        note(storage, user_id, l0)
    return storage.people_count()


def recount(storage: MemoryStorage, users: tuple[str, ...]) -> None:
    """Count these users' names again from their live memories (after memories moved between them)."""
    for user in users:
        storage.drop_person(user)
    for user_id, l0 in list(storage.live_texts(users)):
        note(storage, user_id, l0)


def forget_user(storage: MemoryStorage, user_id: str) -> None:
    storage.drop_person(user_id)
