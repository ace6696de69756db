"""FSRS as seed 000 §5.2 specifies it: a retrieval's rating follows its rank, difficulty moves with it, and
lapses count memories recalled late or corrected. Checked against the `fsrs` package's own scheduler."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import fsrs
import pytest

from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.store.forgetting import initial_state, rating_for_rank, retrievability, review
from openclaw_cli.memory.store.records import FsrsState
from openclaw_cli.memory.writing.candidate import Candidate
from openclaw_cli.memory.writing.write_path import write_memories
from tests.memory_helpers import FixedJudge, dedup_service, service_for

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _package_review(state: FsrsState, rating: fsrs.Rating, now: datetime) -> fsrs.Card:
    """What the package's scheduler, configured as the store's (no learning steps, no fuzz), makes of it."""
    scheduler = fsrs.Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)
    assert state.stability is not None and state.last_review is not None
    card = fsrs.Card(
        card_id=1,
        state=fsrs.State.Review,
        stability=state.stability,
        difficulty=state.difficulty,
        due=state.next_review or state.last_review,
        last_review=state.last_review,
    )
    return scheduler.review_card(card, rating, now)[0]


@pytest.mark.parametrize(
    ("rank", "rating"),
    [
        (0, fsrs.Rating.Easy),
        (1, fsrs.Rating.Good),
        (2, fsrs.Rating.Good),
        (3, fsrs.Rating.Hard),
        (9, fsrs.Rating.Hard),
    ],
)
def test_the_rank_rates_the_review(rank: int, rating: fsrs.Rating) -> None:
    assert rating_for_rank(rank) == rating.value


def test_a_review_without_a_rank_is_good_and_a_negative_rank_is_refused() -> None:
    assert rating_for_rank(None) == fsrs.Rating.Good.value
    with pytest.raises(ValueError):
        rating_for_rank(-1)


@pytest.mark.parametrize("rank", [0, 1, 5])
def test_intervals_are_the_package_schedulers(rank: int) -> None:
    state = initial_state(T0)
    when = T0 + timedelta(days=1)
    ours = review(state, when, rank=rank)
    theirs = _package_review(state, fsrs.Rating(rating_for_rank(rank)), when)
    assert ours.stability == pytest.approx(theirs.stability, rel=1e-12)
    assert ours.difficulty == pytest.approx(theirs.difficulty, rel=1e-12)
    assert ours.next_review == theirs.due
    assert ours.reps == state.reps + 1


def test_difficulty_moves_with_the_rank() -> None:
    state = initial_state(T0)
    when = T0 + timedelta(days=1)
    easy, good, hard = (review(state, when, rank=rank) for rank in (0, 1, 7))
    assert easy.difficulty is not None and good.difficulty is not None and hard.difficulty is not None
    assert easy.difficulty < good.difficulty < hard.difficulty
    assert easy.stability is not None and good.stability is not None and hard.stability is not None
    assert easy.stability > good.stability > hard.stability
    assert easy.next_review is not None and hard.next_review is not None
    assert easy.next_review > hard.next_review


def test_a_memory_found_after_its_retrievability_fell_is_a_lapse() -> None:
    state = initial_state(T0)
    assert state.stability is not None
    # R(t) = 0.9 exactly at t = S days (FSRS's definition of stability): before it, in time; after, late.
    in_time = T0 + timedelta(days=state.stability * 0.5)
    late = T0 + timedelta(days=state.stability * 3)
    assert retrievability(state, in_time) > 0.9 > retrievability(state, late)
    assert review(state, in_time, rank=0).lapses == 0
    assert review(state, late, rank=0).lapses == 1


def test_a_correction_is_a_lapse() -> None:
    state = initial_state(T0)
    assert review(state, T0 + timedelta(hours=1), corrected=True).lapses == 1


def test_record_hits_rate_each_hit_by_its_place(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    try:
        ids = [
            outcome.record_id or ""
            for outcome in write_memories(
                service,
                [
                    Candidate("Plays the cello on Sundays", "preference"),
                    Candidate("Allergic to peanuts", "profile"),
                    Candidate("Visited Lisbon in May", "event"),
                    Candidate("Prefers window seats on flights", "preference"),
                ],
                now=T0,
            )
        ]
        service.record_hits(ids, T0 + timedelta(days=1))
        states = [service.get(record_id).fsrs for record_id in ids]
        difficulties = [state.difficulty or 0.0 for state in states]
        assert difficulties[0] < difficulties[1] == difficulties[2] < difficulties[3]
        assert all(state.reps == 1 and state.lapses == 0 for state in states)
    finally:
        service.close()


def test_hits_reviewed_in_one_transaction_keep_each_its_rank_and_skip_the_deleted(tmp_path: Path) -> None:
    """A turn's hits are reviewed together (one commit): each as when reviewed alone with its rank, a
    memory deleted since the search skipped without moving the others' ranks."""
    texts = ["Plays the cello on Sundays", "Allergic to peanuts", "Visited Lisbon in May", "Owns a red bike"]
    services = [service_for(tmp_path / name) for name in ("together", "alone")]
    try:
        ids = []
        for service in services:
            written = write_memories(service, [Candidate(t, "preference") for t in texts], now=T0)
            ids.append([outcome.record_id or "" for outcome in written])
            service.delete(ids[-1][1])
        later = T0 + timedelta(days=2)
        together, alone = services
        assert together.record_hits(ids[0], later) == [ids[0][0], ids[0][2], ids[0][3]]
        store = next(iter(alone.existing_stores()))
        for rank, record_id in enumerate(ids[1]):
            store.record_hits([record_id], later, first_rank=rank)
        for mine, theirs in zip(ids[0], ids[1], strict=True):
            if mine != ids[0][1]:
                assert together.get(mine).fsrs == alone.get(theirs).fsrs
        assert together.get(ids[0][0]).fsrs.difficulty != together.get(ids[0][3]).fsrs.difficulty
    finally:
        for service in services:
            service.close()


def test_a_merge_that_corrects_a_value_counts_a_lapse(tmp_path: Path) -> None:
    service: MemoryService = dedup_service(tmp_path)
    try:
        [first] = write_memories(service, [Candidate("Lives in Berlin", "profile", attribute="city")], now=T0)
        soon = T0 + timedelta(hours=2)  # well before its retrievability falls: only the correction counts
        [moved] = write_memories(
            service,
            [Candidate("Moved to Munich last month", "profile", attribute="city")],
            judge=FixedJudge("different"),
            now=soon,
        )
        assert (moved.action, moved.record_id) == ("merged", first.record_id)
        state = service.get(first.record_id or "").fsrs
        assert (state.reps, state.lapses) == (1, 1)
        [again] = write_memories(
            service, [Candidate("Moved to Munich last month", "profile", attribute="city")], now=soon
        )
        assert again.action == "duplicate"
        assert service.get(first.record_id or "").fsrs.lapses == 1  # the same words again correct nothing
    finally:
        service.close()
