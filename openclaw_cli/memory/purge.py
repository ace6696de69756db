"""Forgetting for good (seed 000 §12, "right to be forgotten"), and the row removal it shares with sync.

`purge_user` removes every memory of one user from the stores it covers (this agent's and the shared
one, or every agent's with `all_agents`), with their history rows, their keyword-index rows and their
vectors (the vectors are the embedding cache: a record's `text_hash` lives on the record row itself, so
the row's removal takes the cache entry with it). FTS5 secure-delete and `PRAGMA secure_delete` overwrite
freed cells; the WAL is then checkpointed and truncated and the file VACUUMed, so the text cannot be
found in any byte of the database, its -wal or its -shm afterwards. With `sessions`, the user's direct
session transcripts go too.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory import centroid, people, vectors
from openclaw_cli.memory.db import write_txn
from openclaw_cli.memory.records import iso, utc_now, validate_user
from openclaw_cli.paths import SHARED_AGENT, Home

if TYPE_CHECKING:
    import apsw

    from openclaw_cli.memory.store import MemoryStore

MEMORY_DB = Path("memory") / "memory.sqlite"


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


def vector_tables(conn: apsw.Connection) -> list[str]:
    """Every vec0 table, the current one and any a rebuild left behind: purged vectors go from all."""
    rows = conn.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'vec\\_%' ESCAPE '\\' "
        "AND sql LIKE 'CREATE VIRTUAL TABLE%'"
    )
    return [str(name) for (name,) in rows]


def remove_rows(conn: apsw.Connection, rowids: list[int]) -> None:
    """Delete records for good with their keyword and vector rows (the caller holds a write transaction)."""
    if not rowids:
        return
    for table in vector_tables(conn):
        vectors.delete(conn, table, rowids)
    for start in range(0, len(rowids), 500):
        chunk = [(rowid,) for rowid in rowids[start : start + 500]]
        conn.executemany("DELETE FROM records_fts WHERE rowid = ?", chunk)
        conn.executemany("DELETE FROM records WHERE rowid = ?", chunk)
    vectors.bump_generation(conn)


def compact(conn: apsw.Connection) -> None:
    """Rewrite the file so deleted text lingers in no free page, FTS segment or WAL frame."""
    conn.execute("INSERT INTO records_fts(records_fts) VALUES ('optimize')")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def purge_store(store: MemoryStore, user_id: str) -> tuple[int, int]:
    """Remove `user_id`'s memories and history from one store and compact it: (memories, history rows)."""
    conn = store.conn
    with write_txn(conn):
        rowids = [int(r[0]) for r in conn.execute("SELECT rowid FROM records WHERE user_id = ?", (user_id,))]
        remove_rows(conn, rowids)
        conn.execute("DELETE FROM history WHERE user_id = ?", (user_id,))
        history = conn.changes()
        people.forget_user(conn, user_id)
        centroid.forget(conn)  # a mean that included the user's vectors is computed again without them
        # The purge itself is kept, with a hash instead of the user id (the id may be a name or a number).
        digest = hashlib.sha256(user_id.encode()).hexdigest()[:16]
        conn.execute(
            "INSERT INTO history(record_id, user_id, action, old_value, new_value, at, reason) "
            "VALUES ('*', NULL, 'purge', NULL, ?, ?, NULL)",
            (json.dumps({"userId": digest, "count": len(rowids)}), iso(utc_now())),
        )
    compact(conn)
    return len(rowids), int(history)


def agent_ids_on_disk(home: Home) -> list[str]:
    """Every agent directory that holds a memory database, `_shared` included."""
    agents = home.root / "agents"
    if not agents.is_dir():
        return []
    return sorted(p.name for p in agents.iterdir() if (p / MEMORY_DB).is_file())


def holds_user(store: MemoryStore, user_id: str) -> bool:
    row = store.conn.execute("SELECT 1 FROM records WHERE user_id = ? LIMIT 1", (user_id,)).fetchone()
    return row is not None


def purge_user(
    home: Home,
    agent_id: str,
    user_id: str,
    *,
    all_agents: bool,
    sessions: bool,
    open_store: Any,
) -> PurgeReport:
    """Purge `user_id` from this agent's and the shared store, or from every agent's with `all_agents`.

    `open_store(path)` gives the MemoryStore of a database file. Without `all_agents`, the other agents'
    stores are only read, to say plainly which of them still hold the user's memories.
    """
    validate_user(user_id)
    report = PurgeReport(user_id)
    covered = {agent_id, SHARED_AGENT}
    for agent in agent_ids_on_disk(home):
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
