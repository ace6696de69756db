"""FSRS-6 through the `fsrs` package: how well each memory is remembered, and what a hit does to it.

A memory starts as a card reviewed once ("Good") when it is written. Every retrieval during an agent turn
is another review, rated by the hit's rank as seed 000 §5.2 asks ("difficulty moves with the rank"): the
first hit is recalled best (Easy), the next ones well (Good), the rest with effort (Hard). A memory seen
again without a ranking (the same fact written twice) is a Good review. Retrievability falls as time passes
without a hit, so forgotten memories sink in the ranking, but nothing is ever deleted for it.

A lapse (seed 000 §5.2's `lapses`, "times forgotten") is counted when a memory is found only after its
retrievability fell below the scheduler's desired retention (it would have been forgotten: recalled late),
and when a merge corrects its value (what was remembered was wrong).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

from openclaw_cli.memory.store.records import FsrsState

if TYPE_CHECKING:
    import fsrs


@lru_cache(maxsize=1)
def _scheduler() -> fsrs.Scheduler:
    import fsrs

    # No learning steps: a memory is in the review state from its first write. No fuzzing: ranks must be
    # reproducible.
    return fsrs.Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)


def _to_card(state: FsrsState) -> fsrs.Card:
    import fsrs

    # An explicit card_id: without one, fsrs.Card sleeps a millisecond to make its timestamp id unique,
    # which would cost 1 ms per candidate in every search.
    if state.stability is None or state.last_review is None:
        return fsrs.Card(card_id=0)
    return fsrs.Card(
        card_id=0,
        state=fsrs.State.Review,
        stability=state.stability,
        difficulty=state.difficulty,
        due=state.next_review or state.last_review,
        last_review=state.last_review,
    )


# Ranks (0-based) rated Easy, then Good; every later rank is Hard. Injection shows ~5 memories and the
# memory_search tool 5 by default: the best hit is the one the answer leans on, the next two support it,
# and the rest were merely shown.
EASY_RANKS = 1
GOOD_RANKS = 3


def rating_for_rank(rank: int | None) -> int:
    """The FSRS rating (fsrs.Rating's value: 2 Hard, 3 Good, 4 Easy) of a hit at `rank` (0 = the best);
    None, a review with no ranking, is Good."""
    if rank is None:
        return 3
    if rank < 0:
        raise ValueError("a rank counts from 0")
    return 4 if rank < EASY_RANKS else 3 if rank < GOOD_RANKS else 2


def review(
    state: FsrsState, now: datetime, *, rank: int | None = None, corrected: bool = False
) -> FsrsState:
    """The state after one successful recall at `now`, by a search that ranked it `rank` (None: not by a
    search). `corrected`: a merge changed what the memory says, a lapse."""
    import fsrs

    late = state.stability is not None and retrievability(state, now) < _scheduler().desired_retention
    card, _ = _scheduler().review_card(_to_card(state), fsrs.Rating(rating_for_rank(rank)), now)
    return FsrsState(
        stability=card.stability,
        difficulty=card.difficulty,
        last_review=card.last_review,
        next_review=card.due,
        reps=state.reps + 1,
        lapses=state.lapses + (late or corrected),
    )


def initial_state(now: datetime) -> FsrsState:
    """A new card reviewed once ("Good") at `now`, reps 0. Without fuzzing the first review's stability,
    difficulty and interval do not depend on when it happens (the package sets due = review time +
    interval): they are computed once, since every record written costs a review otherwise (~50 us,
    a tenth of what a bulk load does per record beyond the models)."""
    if now.tzinfo != UTC:  # what the package's review refuses, refused alike
        raise ValueError("datetime must be timezone-aware and set to UTC")
    stability, difficulty, interval = _first_review()
    return FsrsState(stability=stability, difficulty=difficulty, last_review=now, next_review=now + interval)


@lru_cache(maxsize=1)
def _first_review() -> tuple[float | None, float | None, timedelta]:
    reviewed = review(FsrsState(), _ANY_MOMENT)
    assert reviewed.next_review is not None and reviewed.last_review == _ANY_MOMENT
    return reviewed.stability, reviewed.difficulty, reviewed.next_review - _ANY_MOMENT


_ANY_MOMENT = datetime(2000, 1, 1, tzinfo=UTC)


def retrievability(state: FsrsState, now: datetime) -> float:
    """Probability of recall at `now`, in [0, 1]; 1.0 for a memory with no review history yet."""
    return recall_probability(state.stability, state.last_review, now)


@dataclass(frozen=True)
class _Reviewed:
    """What `Scheduler.get_card_retrievability` reads of a card: its stability and last review."""

    stability: float
    last_review: datetime


def recall_probability(stability: float | None, last_review: datetime | None, now: datetime) -> float:
    """`retrievability` from the two values it depends on. Search computes it for every candidate
    (~70 a query): building an FsrsState and an fsrs.Card for each cost ~2 ms a warm search."""
    if stability is None or last_review is None:
        return 1.0
    value = _scheduler().get_card_retrievability(cast(Any, _Reviewed(stability, last_review)), now)
    return max(0.0, min(1.0, float(value)))


def scale_stability(state: FsrsState, factor: float) -> FsrsState:
    if state.stability is None:
        return state
    return state.model_copy(update={"stability": max(0.01, state.stability * factor)})
