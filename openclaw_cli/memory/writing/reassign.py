"""`memory reassign`: give one person's memories to another (issue 20: every memory belongs to a person).

The gateway once wrote what it learnt in conversations under the placeholder user `default`; this moves
such memories (or any person's) to the person they belong to. Only live user-scope memories move. In
each store, one transaction changes, for every moved record:
- the record's `user_id` (and `updated_at`), and the `user_id` metadata of its vector in every vec0 table,
  so a search filtered by person finds it under the new one, in a cold or a warm (generation-bumped) process;
- the `user_id` of its earlier history rows, so that `memory purge --user NEW` still removes every byte
  of those words, and a new `reassign` history row with the record before and after;
- the `people` names of both persons (store/people.py), recomputed from their memories as `memory index
  --rebuild` would, so the names the moved memories introduce count for their new person.
Nothing else (keywords, the vectors themselves, FSRS state) depends on the person.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import InvalidInput, NotFound, UsageError
from openclaw_cli.core.paths import SHARED_AGENT, Home
from openclaw_cli.memory.store import people
from openclaw_cli.memory.store.persons import persons
from openclaw_cli.memory.store.protocol import RecordMatch
from openclaw_cli.memory.store.records import (
    CATEGORIES,
    iso,
    utc_now,
    validate_record_id,
    validate_user,
)
from openclaw_cli.memory.writing.purge import agent_ids_on_disk

if TYPE_CHECKING:
    from pathlib import Path

    from openclaw_cli.memory.store.memory_store import MemoryStore
    from openclaw_cli.memory.store.records import MemoryRecord

WHERE_FIELDS = ("session", "category", "since", "id")
WHERE_HINT = (
    "use FIELD=VALUE with FIELD one of session (a session key or id), category, since (YYYY-MM-DD) or id"
)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Condition:
    """One `--where FIELD=VALUE` as given (`text`) and as the storage matches it."""

    text: str
    match: RecordMatch


def parse_where(texts: Sequence[str], home: Home) -> list[Condition]:
    """The `--where` filters (all must match). A malformed one is a UsageError (exit 2) naming the fields;
    a session key that names no session is NotFound."""
    return [_condition(text, home) for text in texts]


def _condition(text: str, home: Home) -> Condition:
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or name not in WHERE_FIELDS:
        raise UsageError(
            f"invalid --where {text!r}: the fields are {', '.join(WHERE_FIELDS)}", hint=WHERE_HINT
        )
    if not value:
        raise UsageError(f"invalid --where {text!r}: {name} needs a value", hint=WHERE_HINT)
    if name == "category":
        if value not in CATEGORIES:
            raise UsageError(
                f"invalid --where {text!r}: unknown category", hint=f"use one of: {', '.join(CATEGORIES)}"
            )
        return Condition(text, RecordMatch("category", (value,)))
    if name == "since":
        try:
            day = date.fromisoformat(value) if _DATE.match(value) else None
        except ValueError:
            day = None
        if day is None:
            raise UsageError(f"invalid --where {text!r}: since takes a date, YYYY-MM-DD", hint=WHERE_HINT)
        return Condition(text, RecordMatch("since", (day.isoformat(),)))
    if name == "id":
        try:
            return Condition(text, RecordMatch("id", (validate_record_id(value),)))
        except InvalidInput as exc:
            raise UsageError(f"invalid --where {text!r}: {exc.message}", hint=exc.hint) from exc
    return Condition(text, RecordMatch("session", _session_ids(value, home)))


def _session_ids(value: str, home: Home) -> tuple[str, ...]:
    """A session id as given, or every session a key has had (its current one and those a reset archived)."""
    from openclaw_cli.sessions.ids import validate_session_id
    from openclaw_cli.sessions.index import list_sessions
    from openclaw_cli.sessions.keys import build_key, looks_like_key, parse_key

    try:
        if not looks_like_key(value):
            return (validate_session_id(value),)  # memories may outlive their session: not looked up
        key = parse_key(value)
    except InvalidInput as exc:
        raise UsageError(
            f"invalid --where session={value}: {exc.message}",
            hint="give a session key (agent:main:...) or id (s-...); see `openclaw session list`",
        ) from exc
    canonical = build_key(key)
    rows = list_sessions(home.sessions_dir(key.agent_id))
    ids = tuple(str(row["sessionId"]) for row in rows if row["sessionKey"] == canonical)
    if not ids:
        raise NotFound(
            f"no session for key {canonical}",
            hint="see `openclaw session list`, or give the session id (s-...) the memories name",
        )
    return ids


@dataclass
class StoreReassign:
    agent: str  # the directory the store is in: an agent id, or `_shared`
    path: str
    records: list[MemoryRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "path": self.path,
            "moved": len(self.records),
            "memories": [
                {"id": r.id, "category": r.category, "l0": r.l0, "createdAt": iso(r.created_at)}
                for r in self.records
            ],
        }


@dataclass
class ReassignReport:
    from_user: str
    to_user: str
    where: list[str]
    dry_run: bool
    stores: list[StoreReassign] = field(default_factory=list)
    # Agents whose stores were not covered (no --all-agents) and hold memories of `from_user` too.
    not_covered: list[str] = field(default_factory=list)
    cancelled: bool = False

    @property
    def matched(self) -> int:
        """The memories that match (and moved, unless this was a dry run or the answer was no)."""
        return sum(len(store.records) for store in self.stores)

    @property
    def moved(self) -> int:
        return 0 if self.dry_run or self.cancelled else self.matched

    def to_dict(self) -> dict[str, Any]:
        return {
            "from": self.from_user,
            "to": self.to_user,
            "where": self.where,
            "dryRun": self.dry_run,
            "moved": self.moved,
            "matched": self.matched,
            "cancelled": self.cancelled,
            "databases": [store.to_dict() for store in self.stores if store.records],
            "notCovered": self.not_covered,
        }


@dataclass(frozen=True)
class ReassignRequest:
    from_user: str
    to_user: str
    where: tuple[str, ...] = ()
    all_agents: bool = False
    dry_run: bool = False


def reassign(
    home: Home,
    agent_id: str,
    share_user_memory: bool,
    request: ReassignRequest,
    open_store: Callable[[Path], MemoryStore],
    confirm: Callable[[ReassignReport], bool] | None = None,
    *,
    agents: list[str] | None = None,
) -> ReassignReport:
    """Move `from_user`'s live user-scope memories matching every `where` to `to_user`, in this agent's
    store and the shared one (when `share_user_memory`), or every store with `all_agents`.

    `confirm(plan)`, when given and not a dry run, is asked once the matching memories are known; when it
    says no, nothing is written (`cancelled`). Each store is then changed in one transaction, which
    selects the matching memories again, so what moves is what matches when it is written. `agents`: every
    agent with a memory database (MemoryService.stored_agents); the files under the home when not given.
    """
    source, target = validate_user(request.from_user), validate_user(request.to_user)
    if source == target:
        raise UsageError(f"--from and --to are both {source!r}", hint="name two different persons")
    conditions = parse_where(request.where, home)
    report = ReassignReport(source, target, list(request.where), request.dry_run)
    holding = agent_ids_on_disk(home) if agents is None else agents
    covered = _covered(holding, agent_id, share_user_memory, request.all_agents)
    stores: list[tuple[StoreReassign, MemoryStore]] = []
    for agent in holding:
        store = open_store(home.memory_db(agent))
        if agent not in covered:
            if _holds(store, source):
                report.not_covered.append(agent)
            continue
        stores.append((StoreReassign(agent, str(store.path)), store))
    known = sorted({p.user_id for _, store in stores for p in persons(store.storage)})
    if source not in known:
        where = "any store" if request.all_agents else f"the stores of agent {agent_id}"
        names = ", ".join(known) if known else "none"
        elsewhere = (
            f"; agents {', '.join(report.not_covered)} hold some (--all-agents)" if report.not_covered else ""
        )
        raise NotFound(
            f"no memories of person {source!r} in {where} (persons: {names}){elsewhere}",
            hint="see `openclaw memory status` for the persons and their memories",
        )
    for listing, store in stores:
        listing.records = _matching(store, source, conditions)
        report.stores.append(listing)
    if request.dry_run or report.matched == 0:
        return report
    if confirm is not None and not confirm(report):
        report.cancelled = True
        return report
    for listing, store in stores:
        listing.records = move(
            store, source, target, conditions, reason=_reason(source, target, request.where)
        )
    return report


def _covered(agents: list[str], agent_id: str, share_user_memory: bool, all_agents: bool) -> set[str]:
    if all_agents:
        return set(agents)
    # The shared store holds user memories while sharing is on; the agent's own store may still hold
    # some from before, so both are covered then (as MemoryService.db_paths reads both).
    return {agent_id, SHARED_AGENT} if share_user_memory else {agent_id}


def _holds(store: MemoryStore, user_id: str) -> bool:
    return store.storage.has_user(user_id, scope="user")


def _reason(source: str, target: str, where: Sequence[str]) -> str:
    return f"reassigned from {source} to {target}" + (f" (where {' and '.join(where)})" if where else "")


def _matching(store: MemoryStore, user_id: str, conditions: Sequence[Condition]) -> list[MemoryRecord]:
    return store.storage.user_records(user_id, [c.match for c in conditions])


def move(
    store: MemoryStore, source: str, target: str, conditions: Sequence[Condition], *, reason: str
) -> list[MemoryRecord]:
    """Move the matching memories of `source` to `target` in one transaction; returns them as they were."""
    storage = store.storage
    with storage.transaction():
        records = _matching(store, source, conditions)
        if not records:
            return []
        moment = utc_now()
        for record in records:
            storage.reassign(store.rowid(record.id), record.id, target, moment)
            after = store.get(record.id).public_dict()
            store.log_change(record.id, target, "reassign", record.public_dict(), after, reason)
        people.recount(storage, (source, target))
        storage.vectors_changed()  # warm processes reload the vectors' person with them
    return records


def describe(record: MemoryRecord) -> str:
    """One line per memory for a preview: id, category, the day it was recorded and L0."""
    created = iso(record.created_at) or ""
    return f"{record.id}  {record.category:<10} {created[:10]}  {record.l0}"
