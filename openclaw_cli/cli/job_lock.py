"""The scheduled jobs' lock, taken by their CLI commands (scheduler/lock.py): when the gateway's schedule or
another cron job runs the same job now, the command says so (unless --quiet) and exits 0 having done
nothing, so system cron and the gateway never both run a job, and cron mails no error for it."""

from __future__ import annotations

from typing import Any

from openclaw_cli.cli import common

_held: list[Any] = []  # held until the process ends (the system releases the lock then, however it ends)


def take(job: str, scope: str, what: str, *, quiet: bool) -> bool:
    """True when this process may run `job` for `scope` (an agent id, or lock.WHOLE_HOME)."""
    from openclaw_cli.scheduler.lock import try_job_lock

    lock = try_job_lock(common.state().home, job, scope)
    if lock is None:
        if not quiet:
            common.warn(f"{what} is running already (the gateway's schedule or another cron job); skipped")
        return False
    _held.append(lock)
    return True
