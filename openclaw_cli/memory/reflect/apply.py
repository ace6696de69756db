"""Reflection's write side: insights written, their sources re-weighted and marked, in one transaction
per database (seed 000 §7 "洞察如何反哺检索").

- an insight starts at 3x the mean stability of its evidence, so it outlasts the facts it sums up;
- the evidence's stability is halved: search should now return the insight before the scattered facts,
  which stay (with their verbatim L2) and can still be found;
- every memory of a group is marked reflected, evidence or not: it has been considered, and must not
  be sent to the model again and again;
- every change leaves a history row (MemoryStore.set_fsrs), so nothing is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import NotFound
from openclaw_cli.memory.reflect.plan import INSIGHT_STABILITY_FACTOR
from openclaw_cli.memory.store.forgetting import scale_stability
from openclaw_cli.memory.store.records import FsrsState, iso
from openclaw_cli.memory.writing.write_path import write_memories

if TYPE_CHECKING:
    from openclaw_cli.memory.reflect.plan import GroupOutcome
    from openclaw_cli.memory.service import MemoryService

SOURCE_STABILITY_FACTOR = 0.5
# FSRS's own ceiling on an interval (fsrs.Scheduler.maximum_interval): keeps next_review within datetime.
MAX_INTERVAL_DAYS = 36500


def apply_outcomes(
    service: MemoryService, outcomes: Sequence[GroupOutcome], now: datetime, *, last_run_key: str
) -> None:
    """Write every group's insights and mark its sources, one transaction per database."""
    by_store: dict[Path, list[GroupOutcome]] = {}
    for outcome in outcomes:
        by_store.setdefault(outcome.group.store_path, []).append(outcome)
    for path, group_outcomes in by_store.items():
        # Insights go where the service puts their scope: normally this same database; if not (user
        # memory shared after these were written), that database joins the transaction too.
        paths = dict.fromkeys([path, *(service.db_path(o.group.scope) for o in group_outcomes)])
        with ExitStack() as transactions:
            for each in paths:
                transactions.enter_context(service.store(each).storage.transaction())
            for outcome in group_outcomes:
                _apply_group(service, outcome, now)
            service.store(path).storage.set_meta(last_run_key, iso(now))


def _apply_group(service: MemoryService, outcome: GroupOutcome, now: datetime) -> None:
    group = outcome.group
    written = write_memories(service, [i.candidate for i in outcome.insights], now=now)
    halve: set[str] = set()
    for planned, result in zip(outcome.insights, written, strict=True):
        planned.action = result.action
        planned.record_id = result.record_id or result.existing_id
        if result.action not in ("added", "merged") or planned.record_id is None:
            continue
        halve.update(planned.evidence)
        if planned.stability is not None:
            insight_store = service.store(service.db_path(group.scope))
            state = insight_store.get(planned.record_id).fsrs
            insight_store.set_fsrs(
                planned.record_id,
                with_stability(state, planned.stability),
                reason=f"reflection: {INSIGHT_STABILITY_FACTOR:g}x the mean stability of its evidence",
            )
    store = service.store(group.store_path)
    for record in group.records:
        try:  # as it is now: a hit since the model was asked has moved its state on
            state = store.get(record.id).fsrs
        except NotFound:  # deleted meanwhile: nothing left to mark
            continue
        reason = "reflection: reflected on"
        if record.id in halve:
            state = with_stability(state, scale_stability(state, SOURCE_STABILITY_FACTOR).stability)
            reason = f"reflection: evidence of an insight, stability x{SOURCE_STABILITY_FACTOR:g}"
        store.set_fsrs(record.id, state, reason=reason, reflected_at=now)


def with_stability(state: FsrsState, stability: float | None) -> FsrsState:
    """`state` with a new stability, and the next review moved to match (FSRS schedules the next review
    one stability after the last, where recall has fallen to 90%)."""
    if stability is None:
        return state
    anchor = state.last_review
    due = None if anchor is None else anchor + timedelta(days=min(stability, MAX_INTERVAL_DAYS))
    return state.model_copy(update={"stability": stability, "next_review": due or state.next_review})
