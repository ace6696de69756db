"""`memory.purge` in the running gateway: the process that owns the inbox journal, the session writers and
the warm memory connections forgets the person itself (a rewrite under it from another process would be
lost, or would race its append handles).

1. What was already accepted is let through first (for up to IDLE_WAIT seconds), so that it is stored
   and then purged rather than stored after the purge; then no turn runs until the purge is done
   (messages arriving meanwhile are acknowledged and queued as usual).
2. Pending background extractions run now and end (they may have read the person's messages); the warm
   memory services of the WebSocket methods are closed (they open again when next used).
3. forget/everywhere.py does the work in a worker thread; this process's writers of the sessions it
   deleted or rewrote are released, and if a log it cleaned is this process's stdout or stderr, those
   are pointed at the new file.
4. The journal is rewritten on the event loop, which is the only writer of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.gateway.rpc import protocol as p

if TYPE_CHECKING:
    from openclaw_cli.gateway.core import GatewayCore

IDLE_WAIT = 30.0  # seconds the queued and running turns get to finish before the purge goes ahead


async def purge(
    core: GatewayCore, params: dict[str, Any], close_memory: Callable[[], None]
) -> dict[str, Any]:
    """`close_memory` closes the warm memory services of the WebSocket methods (Methods.close)."""
    from openclaw_cli.forget.everywhere import ForgetRequest, forget_person, journal_person, resolve_person

    settings = core.settings
    given = p.param_str(params, "userId", max_length=256) or ""
    person = resolve_person(given, settings)
    agent_id = core.agent_id(p.param_str(params, "agentId", required=False, max_length=128))
    request = ForgetRequest(
        person, agent_id, p.param_bool(params, "allAgents"), p.param_bool(params, "sessions")
    )
    await _drain(core)
    async with core.limiter.exclusive():
        await asyncio.to_thread(core.runtime.settle_extraction)
        outputs = _outputs()

        def work() -> Any:
            close_memory()
            return forget_person(
                core.home, settings, request, journal=False, on_sessions_changed=core.runtime.release_sessions
            )

        report = await asyncio.to_thread(work)
        report.journal = core.inbox.forget(lambda entry: journal_person(entry, settings) == person)
        _reopen(outputs)
    core.wake_words()  # the emptied word tables are warmed again with the words of what is left
    report.via = "gateway"
    return report.to_dict()


async def _drain(core: GatewayCore) -> None:
    deadline = time.monotonic() + IDLE_WAIT
    while time.monotonic() < deadline:
        busy = core.lanes.busy()
        if not busy["running"] and not busy["queued"]:
            return
        await asyncio.sleep(0.05)


def _outputs() -> list[tuple[int, Path, int]]:
    """(fd, path, inode) of this process's stdout and stderr when they are files (a background gateway
    logs to gateway/gateway.log)."""
    found = []
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            info = os.fstat(fd)
            path = Path(os.readlink(f"/proc/self/fd/{fd}"))
            if path.is_file() and os.stat(path).st_ino == info.st_ino:
                found.append((fd, path, info.st_ino))
    return found


def _reopen(outputs: list[tuple[int, Path, int]]) -> None:
    """Point stdout/stderr at their file again if the purge replaced it (cleaned it of the words)."""
    for fd, path, inode in outputs:
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == inode:
                continue
            new = os.open(path, os.O_WRONLY | os.O_APPEND)
            os.dup2(new, fd)
            os.close(new)
