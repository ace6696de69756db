"""Cron expressions, through croniter (55 ms to import: only the scheduler and `cron list` load it)."""

from __future__ import annotations

from datetime import datetime

# croniter also takes a 6th (seconds) and 7th (year) field; cron.jobs keeps to what the system's cron
# reads, five fields or an @-nickname, so a schedule can move between the two unchanged.
NICKNAMES = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})


def problem(expression: str) -> str | None:
    """Why `expression` is not a schedule, or None when it is one."""
    text = expression.strip()
    if text.startswith("@"):
        return (
            None
            if text in NICKNAMES
            else f"unknown nickname {text!r} (use one of {', '.join(sorted(NICKNAMES))})"
        )
    if len(text.split()) != 5:
        return f"{expression!r} has {len(text.split())} fields, not 5 (minute hour day-of-month month day-of-week)"
    from croniter import croniter

    if not croniter.is_valid(text):
        return f"{expression!r} is not a valid cron expression (e.g. '*/15 * * * *')"
    return None


def next_after(expression: str, moment: datetime) -> datetime:
    """The first time strictly after `moment` that `expression` names (in `moment`'s time zone)."""
    from croniter import croniter

    found = croniter(expression.strip(), moment).get_next(datetime)
    assert isinstance(found, datetime)
    return found
