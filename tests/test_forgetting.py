"""The FSRS state a memory starts with (store/forgetting.py): computed once and moved to each record's
time, it must be what the package's own first review at that time gives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from openclaw_cli.memory.store import forgetting
from openclaw_cli.memory.store.records import EARLIEST_CREATED, FsrsState, utc_now

MOMENTS = [
    EARLIEST_CREATED,
    datetime(2000, 1, 1, tzinfo=UTC),
    datetime(2024, 2, 29, 23, 59, 59, 999_999, tzinfo=UTC),
    datetime(2024, 5, 1, 10, 0, 0, 123_000, tzinfo=UTC),
    utc_now(),
    utc_now() + timedelta(days=1),
]


@pytest.mark.parametrize("moment", MOMENTS)
def test_the_start_state_is_the_packages_first_good_review_at_that_moment(moment: datetime) -> None:
    reviewed = forgetting.review(FsrsState(), moment)
    expected = reviewed.model_copy(update={"reps": 0})
    assert forgetting.initial_state(moment) == expected
    assert expected.last_review == moment and expected.next_review is not None
    assert expected.next_review > moment


@pytest.mark.parametrize(
    "moment",
    [datetime(2024, 5, 1, 10, 0), datetime(2024, 5, 1, 10, 0, tzinfo=timezone(timedelta(hours=8)))],
    ids=["naive", "offset"],
)
def test_a_moment_not_in_utc_is_refused_as_the_package_refuses_it(moment: datetime) -> None:
    with pytest.raises(ValueError, match="set to UTC") as ours:
        forgetting.initial_state(moment)
    with pytest.raises(ValueError) as theirs:
        forgetting.review(FsrsState(), moment)
    assert str(ours.value) == str(theirs.value)
