"""One job's command as a child process, with a deadline.

A child process, not a thread: a job that hangs (a stuck file system, a model call that never answers) is
stopped at its timeout, SIGTERM to its whole process group and SIGKILL after a grace period, and whatever
it leaked ends with it. Its work is crash-safe by design (atomic replaces, transactions), so a stop
mid-run leaves what was stored intact.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

GRACE_SECONDS = 5.0  # after SIGTERM, before SIGKILL
TAIL_CHARS = 500


@dataclass(frozen=True)
class Outcome:
    code: int | None  # None: stopped at its deadline
    output: str  # the tail of what it printed (with --quiet: what went wrong)

    @property
    def timed_out(self) -> bool:
        return self.code is None


Runner = Callable[[Sequence[str], Mapping[str, str], float], Awaitable[Outcome]]


def package_root() -> Path:
    """The folder holding the running openclaw_cli: the child runs with it as its working directory, so
    `python -m openclaw_cli` imports this very code even when another copy is installed."""
    import openclaw_cli

    return Path(openclaw_cli.__file__).resolve().parent.parent


async def run_command(argv: Sequence[str], env: Mapping[str, str], timeout: float) -> Outcome:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,  # with --quiet, what a job prints is what went wrong
        stderr=asyncio.subprocess.STDOUT,
        env=dict(env),
        cwd=package_root(),
        start_new_session=True,  # its own process group: a stop reaches its children too
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except (TimeoutError, asyncio.CancelledError) as stop:
        await _stop(proc)
        if isinstance(stop, asyncio.CancelledError):
            raise
        return Outcome(None, "")
    return Outcome(proc.returncode, out.decode("utf-8", "replace")[-TAIL_CHARS:].strip())


async def _stop(proc: asyncio.subprocess.Process) -> None:
    for sig, wait in ((signal.SIGTERM, GRACE_SECONDS), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            await asyncio.wait_for(proc.wait(), wait)
            return
        except TimeoutError:
            continue
