"""Spreading transcript search's top hits (issue 54, transcript recall).

A turn lends relevance to its neighbours (search/transcripts.py, DIALOGUE_SHARE), so one exchange that
matches well fills three or more of the top places with a single answer, and small talk said again and
again ("how was your week?") fills them with copies of one line. A question whose evidence lies in several
sessions (LoCoMo's multi-hop kind) then finds one of them. So, walking the ranking from the top, a turn
past the first SESSION_FREE of its session keeps SESSION_DECAY of its relevance for each one above it, and
a turn whose text is one already ranked above it keeps REPEAT of it. It only reorders what was kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol, TypeVar

from openclaw_cli.memory.store.transcripts import Turn

SESSION_FREE = 2
SESSION_DECAY = 0.85
REPEAT = 0.5


class Ranked(Protocol):
    rowid: int
    relevance: float


R = TypeVar("R", bound=Ranked)


def diversify(ranked: Sequence[R], turns: dict[int, tuple[Turn, str]]) -> list[R]:
    """`ranked` (best first) with the relevance of crowding turns lowered, sorted again (stable)."""
    per_session: Counter[str] = Counter()
    seen: set[str] = set()
    for cand in ranked:
        turn = turns[cand.rowid][0]
        text = " ".join(turn.text.casefold().split())
        before = per_session[turn.session_id]
        if before >= SESSION_FREE:
            cand.relevance *= SESSION_DECAY ** (before - SESSION_FREE + 1)
        if text in seen:
            cand.relevance *= REPEAT
        per_session[turn.session_id] += 1
        seen.add(text)
    return sorted(ranked, key=lambda c: -c.relevance)
