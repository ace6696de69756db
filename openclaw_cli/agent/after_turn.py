"""Work a turn leaves for after its reply (issue 23): what protects no data and only follows from it.

Today that is adding the turn's token usage to the session's totals in meta.json: a read, an atomic
replace and two fsyncs, 7-9 ms that the person waiting for the reply has no use for. The transcript
itself (the user's message and the reply, fsynced as session.fsync says) and the inbox journal stay
on the turn's path.

One worker thread per agent runs the actions in the order they were given. `settle()` waits for what
is queued (a purge, which must not meet a write to a session it removes); `close()` settles, then
stops the worker, and what a turn still running then leaves runs in that turn's own thread (no worker
is started after close: a stopping process would wait for it). A failure is logged: the reply was
delivered, only the totals fall behind.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait

log = logging.getLogger("openclaw.agent")


class AfterTurn:
    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None  # started on first use
        self._pending: set[Future[None]] = set()
        self._closed = False

    def submit(self, what: str, action: Callable[[], object]) -> None:
        """Run `action` after the actions given before it, off the caller's thread."""

        def run() -> None:
            try:
                action()
            except Exception as exc:  # noqa: BLE001 - the turn is over; nobody else would see it
                log.warning("%s failed after the turn: %s: %s", what, exc.__class__.__name__, exc)

        with self._guard:
            if not self._closed and self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="after-turn")
            executor = self._executor
            if executor is not None:
                future = executor.submit(run)
                self._pending.add(future)
        if executor is None:  # closed: the caller's thread does it, now
            run()
            return
        future.add_done_callback(self._forget)

    def _forget(self, future: Future[None]) -> None:
        with self._guard:
            self._pending.discard(future)

    def settle(self) -> None:
        """Wait until everything submitted so far has run."""
        with self._guard:
            pending = list(self._pending)
        wait(pending)

    def close(self) -> None:
        with self._guard:
            executor, self._executor = self._executor, None
            self._closed = True
        if executor is not None:
            executor.shutdown(wait=True)
