"""Isolation: each call of a plugin's code runs on a worker thread and is waited for at most its timeout.

A call that raises, or that passes its timeout, is an error of that plugin: counted, kept as its last
error, logged once per plugin and hook (the later ones are counted, not logged again), and never raised
into the caller. A call past its timeout cannot be stopped (Python has no way to kill a thread): it is
abandoned, and while it still runs that plugin's hook is skipped (counted as an error too), so that one
plugin that hangs never takes every worker.
Workers are daemon threads: a hung plugin never keeps the process from exiting.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("openclaw.plugins")
WORKERS = 4  # workers started at first use; more are added while all are busy (a hung call holds one)
MAX_WORKERS = 32


@dataclass
class PluginRecord:
    """One plugin found by discovery, and what became of it."""

    id: str
    source: str
    where: str
    version: str | None = None
    state: str = "loaded"  # loaded, disabled, denied, not-allowed, error
    conversation_access: bool = False
    timeout: float = 5.0
    registered: dict[str, list[str]] = field(default_factory=dict)  # injection point -> names
    hooks: list[str] = field(default_factory=list)  # the event hooks it implements
    errors: int = 0
    last_error: str | None = None
    last_error_at: float | None = None
    hung: set[str] = field(default_factory=set)  # hooks with a call still running past its timeout
    logged: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def fail(self, hook: str, message: str) -> None:
        with self.lock:
            self.errors += 1
            self.last_error = f"{hook}: {message}"
            self.last_error_at = time.time()
            first = hook not in self.logged
            self.logged.add(hook)
        if first:
            log.warning(
                "plugin %s: %s: %s (further errors of this hook are counted, not logged)",
                self.id,
                hook,
                message,
            )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "version": self.version,
            "source": self.source,
            "where": self.where,
            "state": self.state,
            "conversationAccess": self.conversation_access,
            "timeoutSeconds": self.timeout,
            "registered": {kind: list(names) for kind, names in self.registered.items() if names},
            "hooks": list(self.hooks),
            "errors": self.errors,
            "lastError": self.last_error,
        }


class Runner:
    """A pool of daemon workers that run plugin calls with a timeout."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._workers = 0
        self._idle = 0

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            with self._lock:
                self._idle -= 1
            if job is None:
                return
            future, call = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(call())
                except BaseException as exc:  # noqa: BLE001 - the plugin's error goes to its caller
                    future.set_exception(exc)
            with self._lock:
                self._idle += 1

    def submit(self, call: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:
            if self._idle == 0 and self._workers < MAX_WORKERS:
                for _ in range(WORKERS if self._workers == 0 else 1):
                    self._workers += 1
                    self._idle += 1
                    threading.Thread(target=self._work, name="openclaw-plugin", daemon=True).start()
        self._jobs.put((future, call))
        return future

    def call(self, record: PluginRecord, hook: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """fn(*args, **kwargs) within the plugin's timeout; None (and an error counted) if it fails."""
        ok, value = self.attempt(record, hook, fn, *args, **kwargs)
        return value if ok else None

    def attempt(
        self, record: PluginRecord, hook: str, fn: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> tuple[bool, Any]:
        """(True, what fn returned), or (False, the error's one-line description), counted."""
        if hook in record.hung:
            message = f"skipped: an earlier call passed its timeout of {record.timeout:g} s and still runs"
            record.fail(hook, message)
            return False, message
        future = self.submit(lambda: fn(*args, **kwargs))
        try:
            return True, future.result(timeout=record.timeout)
        except FutureTimeout:
            record.hung.add(hook)
            future.add_done_callback(lambda _f: record.hung.discard(hook))
            message = f"passed its timeout of {record.timeout:g} s"
        except Exception as exc:  # noqa: BLE001 - isolation: a plugin never breaks its caller
            message = f"{type(exc).__name__}: {exc}"
        record.fail(hook, message)
        return False, message
