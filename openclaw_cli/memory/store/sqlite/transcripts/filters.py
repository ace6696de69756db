"""A transcript search's filter (store/transcripts.TurnFilter) as SQL on the `turns` table."""

from __future__ import annotations

from typing import Any

from openclaw_cli.memory.store.sqlite.records import marks
from openclaw_cli.memory.store.transcripts import TurnFilter


def filter_sql(where: TurnFilter) -> tuple[str, list[Any]]:
    """`where` as SQL clauses on `turns`, each starting with AND, and their parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if where.person is not None:
        clauses.append("session_id IN (SELECT session_id FROM session_people WHERE person = ?)")
        params.append(where.person)
    if where.sessions or where.keys:
        clauses.append(f"(session_id IN ({marks(where.sessions)}) OR session_key IN ({marks(where.keys)}))")
        params.extend(where.sessions)
        params.extend(where.keys)
    if where.role is not None:
        clauses.append("role = ?")
        params.append(where.role)
    if where.since is not None:
        clauses.append("ts >= ?")
        params.append(where.since)
    if where.until is not None:
        clauses.append("ts < ?")
        params.append(where.until)
    return "".join(f" AND {c}" for c in clauses), params
