"""Reflection (seed 000 §7): distil insights from the memories not yet reflected on.

Unreflected memories are grouped by database, scope, user and category; each group is one model call
(split only when its lines would overflow the prompt budget) that yields at most `maxInsights` insights,
each with a confidence and the memories it rests on. Every model call happens before anything is
written, so a model that is missing, failing or talking nonsense leaves the databases as they were.
Then, per database and in one transaction, the insights are written through `write_memories` (category
`insight`, keyed by topic so that a newer insight on a topic replaces the older one), each starting at 3x
the mean stability of its evidence; the evidence's stability is halved (the insight now speaks for it);
every memory of the group is marked reflected, and the run's time is kept in the database's meta table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import Conflict, InvalidInput
from openclaw_cli.memory.reflect.apply import apply_outcomes
from openclaw_cli.memory.reflect.plan import REFLECTABLE, Group, GroupOutcome, ask_group, collect_groups
from openclaw_cli.memory.store.records import iso, parse_iso, utc_now

if TYPE_CHECKING:
    from openclaw_cli.config.loading import LlmSettings, ReflectionSettings, Settings
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.memory.store.memory_store import MemoryStore

LAST_RUN_KEY = "reflection.lastRunAt"
LOCK_NAME = "reflect.lock"

Progress = Callable[[int], None]


@dataclass(frozen=True)
class DueState:
    """Whether a run is due, and why (for `--if-due` and the report)."""

    due: bool
    reason: str
    unreflected: int
    last_run: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "due": self.due,
            "reason": self.reason,
            "unreflected": self.unreflected,
            "lastRunAt": iso(self.last_run),
        }


@dataclass
class ReflectReport:
    ran: bool
    reason: str
    due: DueState
    dry_run: bool = False
    groups: list[GroupOutcome] = field(default_factory=list)
    model_calls: int = 0

    @property
    def insights_written(self) -> int:
        return sum(1 for g in self.groups for i in g.insights if i.action in ("added", "merged"))

    @property
    def reflected(self) -> int:
        return 0 if self.dry_run or not self.ran else sum(len(g.group.records) for g in self.groups)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ran": self.ran,
            "reason": self.reason,
            "dryRun": self.dry_run,
            "due": self.due.to_dict(),
            "modelCalls": self.model_calls,
            "reflected": self.reflected,
            "insightsWritten": self.insights_written,
            "groups": [g.to_dict() for g in self.groups],
        }


def run_reflection(
    service: MemoryService,
    settings: Settings,
    *,
    lock_dir: Path,
    now: datetime | None = None,
    dry_run: bool = False,
    category: str | None = None,
    if_due: bool = False,
    progress: Progress | None = None,
) -> ReflectReport:
    """One reflection run. `if_due`: return without doing anything unless a run is due (cron);
    `dry_run`: ask the model and report the insights, write nothing; `category`: reflect on that one.

    Raises Conflict when another run holds the lock (with `if_due` that is a quiet "not now" instead),
    ModelUnavailable (or its InvalidReply) when no model is configured or it fails: nothing is changed.
    """
    moment = now or utc_now()
    categories = reflectable_categories(category)
    if dry_run:  # changes nothing, so it needs no lock and blocks no real run
        return _reflect(service, settings, moment, categories, dry_run=True, if_due=if_due, progress=progress)
    with run_lock(lock_dir) as acquired:
        if not acquired:
            if if_due:
                due = DueState(False, "another reflection is running", 0, None)
                return ReflectReport(False, due.reason, due)
            raise Conflict("another reflection is running", hint="wait for it to finish; nothing was changed")
        return _reflect(
            service, settings, moment, categories, dry_run=False, if_due=if_due, progress=progress
        )


def _reflect(
    service: MemoryService,
    settings: Settings,
    moment: datetime,
    categories: tuple[str, ...],
    *,
    dry_run: bool,
    if_due: bool,
    progress: Progress | None,
) -> ReflectReport:
    due = reflection_due(service, settings.memory.reflection, moment)
    if if_due and not due.due:
        return ReflectReport(False, f"not due: {due.reason}", due, dry_run)
    model = require_model(settings.llm)
    groups = collect_groups(service, categories)
    if not groups:
        return ReflectReport(False, "no unreflected memories", due, dry_run)
    outcomes = [
        _ask(group, settings, model, moment, progress)
        for group in groups  # every call before any write: a failure leaves nothing half done
    ]
    report = ReflectReport(True, "reflected", due, dry_run, outcomes, model_calls=len(groups))
    if not dry_run:
        with service.damage_guard():
            apply_outcomes(service, outcomes, moment, last_run_key=LAST_RUN_KEY)
    return report


def _ask(
    group: Group, settings: Settings, model: str, moment: datetime, progress: Progress | None
) -> GroupOutcome:
    outcome = ask_group(
        group,
        settings.llm,
        model,
        max_insights=settings.memory.reflection.max_insights,
        max_text_chars=settings.memory.max_text_chars,
        now=moment,
    )
    if progress is not None:
        progress(len(group.records))
    return outcome


def reflectable_categories(category: str | None) -> tuple[str, ...]:
    """The categories a run reflects on: the facts, never the insights it writes or workspace notes."""
    if category is None:
        return REFLECTABLE
    if category not in REFLECTABLE:
        raise InvalidInput(
            f"cannot reflect on category {category!r}", hint=f"use one of: {', '.join(REFLECTABLE)}"
        )
    return (category,)


def require_model(llm: LlmSettings) -> str:
    from openclaw_cli.llm.calls import ModelUnavailable

    if not llm.model:
        raise ModelUnavailable(
            "reflection needs a chat model, and none is configured",
            hint="set one with `openclaw config set llm.model openai/gpt-4o-mini` (and llm.apiBase for a "
            "local server); nothing was changed",
        )
    return llm.model


def reflection_due(service: MemoryService, settings: ReflectionSettings, now: datetime) -> DueState:
    """Due at `minUnreflected` unreflected memories, or when some wait and `intervalHours` have passed
    since the last run (or, before the first run, since the oldest of them was written)."""
    unreflected = 0
    oldest: datetime | None = None
    last_run: datetime | None = None
    for store in service.existing_stores():
        count, first = _unreflected_summary(store)
        unreflected += count
        oldest = first if oldest is None or (first is not None and first < oldest) else oldest
        ran = parse_iso(store.storage.get_meta(LAST_RUN_KEY))
        last_run = ran if last_run is None or (ran is not None and ran > last_run) else last_run
    if unreflected >= settings.min_unreflected:
        return DueState(
            True,
            f"{unreflected} unreflected memories (threshold {settings.min_unreflected})",
            unreflected,
            last_run,
        )
    if unreflected == 0:
        return DueState(False, "no unreflected memories", 0, last_run)
    since = last_run or oldest
    hours = (now - since).total_seconds() / 3600 if since is not None else 0.0
    what = "the last run" if last_run is not None else "the oldest unreflected memory"
    due = hours >= settings.interval_hours
    return DueState(
        due,
        f"{hours:.1f} h since {what} ({'at least' if due else 'under'} {settings.interval_hours:g} h), "
        f"{unreflected} unreflected (threshold {settings.min_unreflected})",
        unreflected,
        last_run,
    )


def _unreflected_summary(
    store: MemoryStore, categories: Sequence[str] = REFLECTABLE
) -> tuple[int, datetime | None]:
    count, first = store.storage.unreflected_summary(categories)
    return count, parse_iso(first)


def unreflected_count(service: MemoryService, category: str | None = None) -> int:
    """How many memories a run would reflect on (the total of a progress bar)."""
    categories = reflectable_categories(category)
    return sum(_unreflected_summary(store, categories)[0] for store in service.existing_stores())


@contextmanager
def run_lock(lock_dir: Path) -> Iterator[bool]:
    """The reflection lock, taken without waiting: yields False when another run holds it."""
    import filelock

    from openclaw_cli.core.fsutil import FILE_MODE, ensure_private_dir

    ensure_private_dir(lock_dir)
    lock = filelock.FileLock(str(lock_dir / LOCK_NAME), timeout=0, mode=FILE_MODE, thread_local=False)
    try:
        lock.acquire()
    except filelock.Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()
