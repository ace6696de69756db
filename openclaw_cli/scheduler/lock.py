"""The lock a scheduled job's command takes, without waiting: system cron and the gateway share it, so two
runners of one job at once never both run it (the second is told, and does nothing).

A file lock (fcntl through filelock) under `cron/locks/`: the system releases it when its process ends, so
a job killed at its timeout or a crashed process never leaves a stale lock behind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openclaw_cli.core.fsutil import FILE_MODE, ensure_private_dir

if TYPE_CHECKING:
    from filelock import BaseFileLock

    from openclaw_cli.core.paths import Home

WHOLE_HOME = "all"  # the scope of a job that covers every agent at once (the daily backup)


def lock_path_name(job: str, scope: str) -> str:
    return f"{job}.{scope}.lock"


def try_job_lock(home: Home, job: str, scope: str) -> BaseFileLock | None:
    """The held lock of `job` for `scope` (an agent id, or WHOLE_HOME); None when another runner holds it.
    The caller keeps the returned object for as long as the job runs (dropping it releases the lock)."""
    import filelock

    from openclaw_cli.core.paths import validate_name

    validate_name(job, "job name")
    validate_name(scope, "agent id")
    folder = ensure_private_dir(home.ensure_root() / "cron" / "locks")
    lock = filelock.FileLock(
        str(folder / lock_path_name(job, scope)), timeout=0, mode=FILE_MODE, thread_local=False
    )
    try:
        lock.acquire()
    except filelock.Timeout:
        return None
    return lock
