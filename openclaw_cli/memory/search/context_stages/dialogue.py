"""Dialogue context: a memory from a conversation lends relevance to the memories said next to it.

Turns of a conversation answer each other: "Assistant: Kevin is the groom?" is found by "what does the
groom do", but the fact is in the reply ("User: Yes, Kevin Zhang, he's an architect"). Each memory keeps
where it was said (`source`: session id and message indexes, as extraction records them), so search
takes its best hits, finds the memories said just after and just before them in the same session, and
gives each a share of the hit's relevance: most after a question (the answer), less after a statement
(usually an acknowledgement), least before (the context). The share and the neighbour's own relevance
combine as independent evidence, 1 - (1 - own)(1 - share), as the two legs of fusion do; a neighbour
always stays within the request's filters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openclaw_cli.memory.store.protocol import MemoryStorage, VectorFilter


@dataclass(frozen=True)
class Shares:
    """The share of a hit's relevance its neighbours get, by position."""

    # Measured on the eval set with the audited labels (tests/fusion_eval.py): against 0.7/0.5/0.6 with
    # the larger of share and own relevance, MRR 0.732 -> 0.741 and recall@10 0.824 -> 0.831.
    after_question: float = 0.6
    after_statement: float = 0.4
    before: float = 0.3
    seeds: int = 10  # how many of the best hits lend relevance
    gap: int = 2  # messages between a hit and its neighbours (the reply to a reply, a tool message between)


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


def session_rows(storage: MemoryStorage, session: str, where: VectorFilter) -> list[tuple[int, Place]]:
    """Every live memory said in `session` that the request may return, with its place."""
    found = []
    for rowid, source in storage.session_places(session, where):
        place = place_of(source)
        if place is not None:
            found.append((rowid, place))
    return found


def lent_relevance(
    seed: Place,
    seed_relevance: float,
    seed_is_question: bool,
    others: Sequence[tuple[int, Place]],
    shares: Shares,
) -> dict[int, float]:
    """What the memories said within `shares.gap` messages of `seed` get from it (measured on the eval
    set: sharing with every memory within two messages beats only the nearest, and a decay with distance
    or a wider gap gains nothing)."""
    lent: dict[int, float] = {}
    after_share = shares.after_question if seed_is_question else shares.after_statement
    for rowid, place in others:
        after, before = place.first - seed.last, seed.first - place.last
        if 0 < after <= shares.gap:
            lent[rowid] = after_share * seed_relevance
        elif 0 < before <= shares.gap:
            lent[rowid] = shares.before * seed_relevance
    return lent


def said_after(seed: Place, others: Sequence[tuple[int, Place]], shares: Shares) -> set[int]:
    """The memories said within `shares.gap` messages after `seed`: the answer, when it asks."""
    return {rowid for rowid, place in others if 0 < place.first - seed.last <= shares.gap}
