"""Whose memories a store holds: the persons with user-scope memories, and how many each.

Every memory of the user scope belongs to a person (`userId`: `alice`, `telegram:123`). Memories the
gateway wrote before it resolved who was speaking went to the placeholder `default`; those written from a
conversation are found by their `source` (see `CONVERSATION_KINDS`) so that `doctor` can say so and point at
`openclaw memory reassign`. Nothing here changes a record.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from openclaw_cli.memory.store.records import DEFAULT_USER

if TYPE_CHECKING:
    from openclaw_cli.core.findings import Finding
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.store.protocol import MemoryStorage

CHECK = "memory.persons"
MEMORY_DB = Path("memory") / "memory.sqlite"  # an agent's memory database, inside its directory

# What a conversation leaves in `source`: extraction and "remember that ..." the session's id
# (extraction/candidates.py), the model's memory_add tool {"kind": "agent-tool"} (agent/tools/builtin.py) and the
# chat's /remember {"kind": "chat-command"} (agent/clients/chat.py). `memory add` from the CLI leaves no
# source (or the batch line's own), reflection {"kind": "reflection"}, workspace notes a path.
CONVERSATION_KINDS = ("agent-tool", "chat-command")
EVERY_AGENT = "*"  # the entry of a source whose stores could not be listed at all


@dataclass(frozen=True)
class Person:
    user_id: str
    memories: int

    def to_dict(self) -> dict[str, Any]:
        return {"userId": self.user_id, "memories": self.memories}


def persons(storage: MemoryStorage) -> list[Person]:
    """The persons with live user-scope memories in this database, by user id."""
    return [Person(user, count) for user, count in storage.user_counts()]


def merged(lists: list[list[Person]]) -> list[Person]:
    """Several databases' persons as one list (an agent reads its own store and the shared one)."""
    counts: dict[str, int] = {}
    for listing in lists:
        for person in listing:
            counts[person.user_id] = counts.get(person.user_id, 0) + person.memories
    return [Person(user, counts[user]) for user in sorted(counts)]


def conversation_defaults(storage: MemoryStorage, owners_sessions: frozenset[str] | None = None) -> int:
    """Live memories of `default` that a conversation wrote (they belong to whoever was speaking).

    With no owner configured, `default` is the owner's own id: the memories of the owner's sessions
    (`owners_sessions`, the main sessions) and those whose source names no session are then the owner's
    and not counted; None counts them all (an owner is configured, so `default` is nobody's now)."""
    sessions = storage.conversation_sessions(DEFAULT_USER, CONVERSATION_KINDS)
    if owners_sessions is None:
        return len(sessions)
    return sum(1 for session in sessions if session is not None and session not in owners_sessions)


def main_session_ids(home: Home, agent: str) -> frozenset[str]:
    """The ids of an agent's main sessions (current and archived): the owner's when no owner is set."""
    import json

    from openclaw_cli.core.errors import OpenclawError

    found = set()
    try:
        directory = home.sessions_dir(agent)
    except OpenclawError:  # the shared store's directory holds no sessions
        return frozenset()
    for meta_path in directory.glob("*/meta.json"):
        try:
            key = str(json.loads(meta_path.read_bytes()).get("sessionKey") or "")
        except (OSError, ValueError, AttributeError):
            continue
        if key.endswith(":main"):
            found.add(meta_path.parent.name)
    return frozenset(found)


@dataclass
class StorePersons:
    """One database's persons, for `doctor`: `agent` is the directory (`_shared` for the shared store)."""

    agent: str
    path: str
    persons: list[Person] = field(default_factory=list)
    conversation_defaults: int = 0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "path": self.path,
            "persons": [p.to_dict() for p in self.persons],
            "conversationDefaults": self.conversation_defaults,
            "error": self.error,
        }


def agent_ids_on_disk(home: Home) -> list[str]:
    """Every agent directory that holds a memory database, `_shared` included."""
    agents = home.root / "agents"
    if not agents.is_dir():
        return []
    return sorted(p.name for p in agents.iterdir() if (p / MEMORY_DB).is_file())


class StoreSource(Protocol):
    """Where the memory databases are: which agents have one, where each is (for the findings), and how to
    open one. The files under the home here (FileStores); the server's schemas in memory/backends.py."""

    def agents(self) -> list[str]: ...

    def where(self, agent: str) -> str: ...

    def open(self, agent: str) -> MemoryStorage: ...


@dataclass(frozen=True)
class FileStores:
    """The SQLite files under the home, opened as every command opens them (a read-only connection would
    leave its -wal and -shm behind)."""

    home: Home

    def agents(self) -> list[str]:
        return agent_ids_on_disk(self.home)

    def where(self, agent: str) -> str:
        return str(self.home.memory_db(agent))

    def open(self, agent: str) -> MemoryStorage:
        from openclaw_cli.memory.store.sqlite.connection import open_db
        from openclaw_cli.memory.store.sqlite.storage import SqliteStorage

        return SqliteStorage(open_db(self.home.memory_db(agent), create=False))


def every_store(
    home: Home, source: StoreSource | None = None, *, owner_is_default: bool = False
) -> list[StorePersons]:
    """The persons of every memory database `source` holds (each agent's and the shared one; the files
    under the home when not given). `owner_is_default`: no owner is configured, so `default` is the owner
    (see conversation_defaults). A source that cannot be listed (a server down) is one entry with its error."""
    from openclaw_cli.core.errors import OpenclawError

    source = source or FileStores(home)
    try:
        agents = source.agents()
    except OpenclawError as error:  # the memory check says why; here the stores are only unlisted
        return [StorePersons(EVERY_AGENT, "", error=error.message)]
    # Session ids are unique across agents: the shared store's memories come from any agent's sessions.
    owners = frozenset().union(*(main_session_ids(home, a) for a in agents)) if owner_is_default else None
    return [_store_persons(source, agent, owners) for agent in agents]


def _store_persons(source: StoreSource, agent: str, owners: frozenset[str] | None) -> StorePersons:
    from openclaw_cli.core.errors import OpenclawError

    listing = StorePersons(agent, source.where(agent))
    try:
        storage = source.open(agent)
    except OpenclawError as error:  # the memory check reports why; here it is only unlisted
        listing.error = error.message
        return listing
    try:
        listing.persons = persons(storage)
        listing.conversation_defaults = conversation_defaults(storage, owners)
    except Exception as exc:  # noqa: BLE001 - damage is the memory check's to report
        listing.error = f"cannot be read ({exc.__class__.__name__})"
    finally:
        storage.close()
    return listing


def findings_for(stores: list[StorePersons], *, shared: bool) -> list[Finding]:
    """One `ok` finding per store naming its persons, and a warning for each store where conversations
    wrote memories under `default`, with the command that gives them to their person. Nothing is moved."""
    from openclaw_cli.core.findings import Finding
    from openclaw_cli.core.paths import SHARED_AGENT

    found: list[Finding] = []
    for store in stores:
        where = {SHARED_AGENT: "the shared store", EVERY_AGENT: "every store"}.get(
            store.agent, f"agent {store.agent}"
        )
        if store.error is not None:
            found.append(
                Finding(
                    CHECK, "warning", f"{where}: persons not listed: {store.error}", None, store.path or None
                )
            )
            continue
        found.append(Finding(CHECK, "ok", f"{where}: {summary(store.persons)}", None, store.path))
        if store.conversation_defaults:
            if store.agent == SHARED_AGENT:
                scope = "" if shared else " --all-agents"
                command = f"openclaw memory reassign --from {DEFAULT_USER} --to PERSON{scope}"
            else:
                command = f"openclaw --agent {store.agent} memory reassign --from {DEFAULT_USER} --to PERSON"
            message = (
                f"{where}: {store.conversation_defaults} memories of user {DEFAULT_USER!r} were written from "
                "conversations (sessions, agent tools, /remember): they belong to whoever was speaking"
            )
            hint = f"{command} (see them first with --dry-run; --where session=KEY for one conversation)"
            found.append(Finding(CHECK, "warning", message, hint, store.path))
    return found


def summary(persons_list: list[Person], limit: int = 8) -> str:
    """`alice 3, default 2` (and `+N more` past `limit` persons): compact, for human output."""
    shown = ", ".join(f"{p.user_id} {p.memories}" for p in persons_list[:limit]) or "none"
    more = len(persons_list) - limit
    return shown + (f", +{more} more" if more > 0 else "")


def close_matches(wanted: str, known: Iterable[str], limit: int = 5) -> list[str]:
    """The persons `wanted` may have meant: the same peer on a channel (`alice` for `openai:alice`, where
    the gateway stored a /v1 user), the same id in another case, then near spellings."""
    import difflib

    names = sorted(set(known) - {wanted})
    folded = wanted.casefold()
    peer = folded.rpartition(":")[2]
    same = [n for n in names if n.casefold() == folded or n.casefold().rpartition(":")[2] == peer]
    by_fold = {n.casefold(): n for n in names}
    near = [by_fold[m] for m in difflib.get_close_matches(folded, list(by_fold), n=limit, cutoff=0.75)]
    return list(dict.fromkeys([*same, *near]))[:limit]


def unknown_person(user_id: str, storages: Sequence[MemoryStorage]) -> str | None:
    """Why `user_id` finds nothing, when no store holds a memory of that person: the words `memory search`
    and `memory list` warn with, naming the close matches. None when the person is known."""
    if any(storage.has_user(user_id) for storage in storages):
        return None
    known = [user for storage in storages for user, _count in storage.user_counts()]
    close = close_matches(user_id, known)
    said = f"; did you mean {', '.join(close)}?" if close else ""
    return f"no memories of user {user_id!r} (user ids match exactly{said})"
