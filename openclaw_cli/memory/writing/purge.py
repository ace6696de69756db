"""Forgetting for good (seed 000 §12, "right to be forgotten"), and the row removal it shares with sync.

`purge_user` removes every memory of one user from the stores it covers (this agent's and the shared
one, or every agent's with `all_agents`), with their history rows, their keyword-index rows and their
vectors (the vectors are the embedding cache: a record's `text_hash` lives on the record row itself, so
the row's removal takes the cache entry with it). FTS5 secure-delete and `PRAGMA secure_delete` overwrite
freed cells; the WAL is then checkpointed and truncated and the file VACUUMed, so the text cannot be
found in any byte of the database, its -wal or its -shm afterwards. With `sessions`, the user's direct
session transcripts go too.

`purge_store` also takes the `Taint` of the messages being forgotten (sessions/upkeep/redact.py): a memory of
anyone (another speaker of a group, the agent) whose source cites one of them holds those words in its
L2 and is removed too, with its history.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.paths import SHARED_AGENT, Home
from openclaw_cli.memory.store import people
from openclaw_cli.memory.store.persons import agent_ids_on_disk as agent_ids_on_disk
from openclaw_cli.memory.store.records import validate_user
from openclaw_cli.memory.store.vectors import centroid

if TYPE_CHECKING:
    from openclaw_cli.memory.store.memory_store import MemoryStore
    from openclaw_cli.memory.store.protocol import MemoryStorage


@dataclass
class PurgeReport:
    user: str
    memories: int = 0
    history_rows: int = 0
    sessions: int = 0
    databases: list[str] = field(default_factory=list)
    # Agents whose stores were not covered (no --all-agents) and still hold memories of the user.
    not_covered: list[str] = field(default_factory=list)

    @property
    def warning(self) -> str | None:
        if not self.not_covered:
            return None
        names = ", ".join(self.not_covered)
        return (
            f"memories of {self.user!r} remain in the stores of other agents ({names}): "
            "this purge covered only this agent and the shared store; rerun with --all-agents"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "purged": self.memories,
            "historyRows": self.history_rows,
            "sessions": self.sessions,
            "databases": self.databases,
            "notCovered": self.not_covered,
            "warning": self.warning,
        }


@dataclass(frozen=True)
class Taint:
    """Messages whose words are being forgotten: whole sessions, and single messages (session, idx)."""

    sessions: frozenset[str] = frozenset()
    messages: frozenset[tuple[str, int]] = frozenset()

    def touches(self, source: Any) -> bool:
        """Whether a memory with this `source` was made from one of the messages."""
        if not isinstance(source, dict) or not isinstance(source.get("sessionId"), str):
            return False
        session = source["sessionId"]
        if session in self.sessions:
            return True
        cited = source.get("messages")
        return isinstance(cited, list) and any(
            (session, idx) in self.messages for idx in cited if isinstance(idx, int)
        )


@dataclass
class StorePurge:
    memories: int = 0
    history_rows: int = 0
    derived: int = 0  # other people's or the agent's memories made from the person's messages


def purge_store(
    store: MemoryStore, user_id: str | Sequence[str], taint: Taint | None = None
) -> tuple[int, int]:
    """Remove `user_id`'s memories and history from one store and compact it: (memories, history rows)."""
    done = purge_person(store, [user_id] if isinstance(user_id, str) else list(user_id), taint)
    return done.memories, done.history_rows


def purge_person(store: MemoryStore, user_ids: list[str], taint: Taint | None = None) -> StorePurge:
    """Remove the memories of every id in `user_ids` (a person and the addresses linked to them), the
    memories `taint` says were made from their messages, and the history of both; then compact."""
    storage = store.storage
    done = StorePurge()
    with storage.transaction():
        rows = storage.rows_of_users(user_ids)
        derived = _derived(storage, user_ids, taint) if taint is not None else []
        storage.remove([rowid for rowid, _ in rows] + [rowid for rowid, _, _, _ in derived])
        gone = [record_id for _, record_id in rows] + [record_id for _, record_id, _, _ in derived]
        done.history_rows = storage.forget_history(user_ids=user_ids, record_ids=gone)
        for user_id in user_ids:
            people.forget_user(storage, user_id)
        for _, _, owner, l0 in derived:
            people.forget_if_unused(storage, owner, l0)
        centroid.forget(storage)  # a mean that included the user's vectors is computed again without them
        done.memories, done.derived = len(rows), len(derived)
        # The purge itself is kept, with a hash instead of the user id (the id may be a name or a number).
        digest = hashlib.sha256(user_ids[0].encode()).hexdigest()[:16]
        storage.log_change(
            "*", None, "purge", None, {"userId": digest, "count": len(rows), "derived": len(derived)}, None
        )
    storage.compact()
    return done


def _derived(
    storage: MemoryStorage, user_ids: list[str], taint: Taint
) -> list[tuple[int, str, str | None, str]]:
    """(rowid, id, user, l0) of the memories of others whose source cites a tainted message."""
    found = []
    for rowid, record_id, owner, l0, source in storage.sourced_rows():
        if owner in user_ids:
            continue
        try:
            parsed = json.loads(source)
        except (TypeError, ValueError):
            continue
        if taint.touches(parsed):
            found.append((rowid, record_id, owner, l0))
    return found


def holds_user(store: MemoryStore, user_id: str) -> bool:
    """Whether the store holds any record of `user_id`, live or deleted (a tombstone holds text too)."""
    return bool(store.storage.rows_of_users([user_id]))


def purge_user(
    home: Home,
    agent_id: str,
    user_id: str,
    *,
    all_agents: bool,
    sessions: bool,
    agents: list[str],
    open_store: Any,
) -> PurgeReport:
    """Purge `user_id` from this agent's and the shared store, or from every agent's with `all_agents`.

    `agents`: every agent with a memory database; `open_store(path)` gives the MemoryStore of one.
    Without `all_agents`, the other agents' stores are only read, to say plainly which of them still hold
    the user's memories.
    """
    validate_user(user_id)
    report = PurgeReport(user_id)
    covered = {agent_id, SHARED_AGENT}
    for agent in agents:
        store = open_store(home.memory_db(agent))
        if not all_agents and agent not in covered:
            if holds_user(store, user_id):
                report.not_covered.append(agent)
            continue
        memories, history = purge_store(store, user_id)
        report.memories += memories
        report.history_rows += history
        report.databases.append(str(store.path))
    if sessions:
        targets = agent_ids_on_disk_with_sessions(home) if all_agents else [agent_id]
        report.sessions = sum(purge_sessions(home, agent, user_id) for agent in targets)
    return report


def agent_ids_on_disk_with_sessions(home: Home) -> list[str]:
    agents = home.root / "agents"
    if not agents.is_dir():
        return []
    return sorted(p.name for p in agents.iterdir() if (p / "sessions").is_dir() and p.name != SHARED_AGENT)


def purge_sessions(home: Home, agent_id: str, user_id: str) -> int:
    """Delete the agent's sessions whose meta names `user_id` as the user (their direct conversations)."""
    from openclaw_cli.sessions.store import SessionStore, read_meta_file

    store = SessionStore(home, agent_id)
    removed = 0
    try:
        for session_id in store.session_ids_on_disk():
            try:
                meta = read_meta_file(store.session_dir(session_id) / "meta.json")
            except Exception:  # noqa: BLE001 - an unreadable meta names no user; doctor reports it
                continue
            if meta.get("userId") == user_id:
                store.delete(session_id)
                removed += 1
    finally:
        store.close()
    return removed
