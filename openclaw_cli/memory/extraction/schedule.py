"""Coalesced background jobs: one worker thread, one pending run per key.

The first poke for a key opens a window of `window` seconds; pokes inside it join it, and the job runs
once when it closes. A poke while the key's job is running opens a new window after it. A job may ask
to run again later (it was rate-limited) by returning a delay in seconds. Plain threads, so it works the
same under the gateway's asyncio loop and in a REPL. This state lives in the process only: what a
crash loses is a pending run, never a message, since the next run starts at the persisted checkpoint.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable


class CoalescingScheduler:
    def __init__(
        self,
        job: Callable[[str], float | None],
        window: float,
        *,
        on_error: Callable[[str, BaseException], None] | None = None,
        name: str = "openclaw-extract",
    ) -> None:
        self._job = job
        self._window = window
        self._on_error = on_error
        self._name = name
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, str]] = []
        self._due: dict[str, float] = {}  # key -> when its pending run is due
        self._running: str | None = None
        self._order = itertools.count()
        self._closing = False
        self._thread: threading.Thread | None = None

    def poke(self, key: str) -> None:
        """Schedule a run of `key` at the end of its window (joining a window already open)."""
        with self._cond:
            due = self._due.get(key)
            # Join an open window; but a run postponed for longer (rate limit) is brought forward to the
            # end of a new window, and checks its limit again then.
            if self._closing or (due is not None and due <= time.monotonic() + self._window):
                return
            self._schedule(key, self._window)
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=self._name, daemon=True)
                self._thread.start()

    def pending(self) -> list[str]:
        with self._cond:
            return sorted(self._due)

    def idle(self) -> bool:
        with self._cond:
            return not self._due and self._running is None

    def wait_idle(self, timeout: float) -> bool:
        """Block until nothing is pending or running (for tests and orderly shutdown)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._due or self._running is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self, wait: bool = True) -> bool:
        """Stop. With `wait`, pending runs start now (without waiting out their windows) and finish;
        a run that asks to be retried later is left to the next process, which finds the checkpoint.
        Without, pending runs are dropped and a running one is left to finish on its own. True when
        the worker has stopped."""
        with self._cond:
            self._closing = True
            if wait:
                for key in list(self._due):
                    self._schedule(key, 0.0)
            else:
                self._heap.clear()
                self._due.clear()
            self._cond.notify_all()
            thread = self._thread
            busy = self._running is not None
        if thread is not None and (wait or not busy):
            thread.join()  # an idle worker ends at once
        return thread is None or not thread.is_alive()

    def _schedule(self, key: str, delay: float) -> None:
        due = time.monotonic() + delay
        self._due[key] = due
        heapq.heappush(self._heap, (due, next(self._order), key))
        self._cond.notify_all()

    def _next_due(self) -> str | None:
        """The next key whose time has come, waiting for it; None when closing and nothing is left."""
        with self._cond:
            while True:
                while self._heap and self._due.get(self._heap[0][2]) != self._heap[0][0]:
                    heapq.heappop(self._heap)  # superseded by a later schedule of the same key
                if not self._heap:
                    if self._closing:
                        return None
                    self._cond.wait()
                    continue
                due, _, key = self._heap[0]
                left = due - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                heapq.heappop(self._heap)
                del self._due[key]
                self._running = key
                return key

    def _work(self) -> None:
        while (key := self._next_due()) is not None:
            retry: float | None = None
            try:
                retry = self._job(key)
            except BaseException as exc:  # the worker must outlive any one job
                if self._on_error is not None:
                    self._on_error(key, exc)
            with self._cond:
                self._running = None
                if retry is not None and not self._closing and key not in self._due:
                    self._schedule(key, retry)
                self._cond.notify_all()
