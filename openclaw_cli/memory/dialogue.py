"""Dialogue context: a memory from a conversation lends relevance to the memories said next to it.

Turns of a conversation answer each other: "Assistant: Kevin is the groom?" is found by "what does the
groom do", but the fact is in the reply ("User: Yes, Kevin Zhang, he's an architect"). Each memory keeps
where it was said (`source`: session id and message indexes, as extraction records them), so search
takes its best hits, finds the memories said just after and just before them in the same session, and
gives each a share of the hit's relevance: most after a question (the answer), less after a statement
(usually an acknowledgement), least before (the context). A neighbour keeps its own relevance when that
is higher, and always stays within the request's filters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import apsw

    from openclaw_cli.memory.vectors import VectorFilter

MAX_GAP = 2  # message indexes between a hit and a neighbour (a tool message may sit in between)


@dataclass(frozen=True)
class Shares:
    """The share of a hit's relevance its neighbours get, by position."""

    after_question: float = 0.7
    after_statement: float = 0.5
    before: float = 0.6
    seeds: int = 10  # how many of the best hits lend relevance


@dataclass(frozen=True)
class Place:
    session: str
    first: int
    last: int


def place_of(source: Any) -> Place | None:
    """Where a memory was said, from its stored `source` (a JSON text or a dict), if in a session."""
    if isinstance(source, str):
        try:
            source = json.loads(source)
        except ValueError:
            return None
    if not isinstance(source, dict):
        return None
    session, messages = source.get("sessionId"), source.get("messages")
    if not isinstance(session, str) or not isinstance(messages, list) or not messages:
        return None
    indexes = [m for m in messages if isinstance(m, int)]
    return Place(session, min(indexes), max(indexes)) if indexes else None


def session_rows(conn: apsw.Connection, session: str, where: VectorFilter) -> list[tuple[int, Place]]:
    """Every live memory said in `session` that the request may return, with its place."""
    clause, params = where.sql()
    rows = conn.execute(
        "SELECT rowid, source FROM records WHERE json_extract(source, '$.sessionId') = ? "
        f"AND deleted = 0 AND source IS NOT NULL{clause}",
        [session, *params],
    )
    found = []
    for rowid, source in rows:
        place = place_of(source)
        if place is not None:
            found.append((int(rowid), place))
    return found


def lent_relevance(
    seed: Place,
    seed_relevance: float,
    seed_is_question: bool,
    others: Sequence[tuple[int, Place]],
    shares: Shares,
) -> dict[int, float]:
    """What the memories next to `seed` get from it: the nearest one after and the nearest one before."""
    after = [(p.first - seed.last, rowid) for rowid, p in others if 0 < p.first - seed.last <= MAX_GAP]
    before = [(seed.first - p.last, rowid) for rowid, p in others if 0 < seed.first - p.last <= MAX_GAP]
    lent: dict[int, float] = {}
    if after:
        share = shares.after_question if seed_is_question else shares.after_statement
        lent[min(after)[1]] = share * seed_relevance
    if before:
        lent[min(before)[1]] = shares.before * seed_relevance
    return lent
