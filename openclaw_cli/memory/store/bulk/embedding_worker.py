"""One background thread that embeds while the calling thread writes: a bulk load's chunks (store/bulk/load.py)
and an import's batches (portability/transfer.py).

onnxruntime releases the GIL while a model runs, so the models embed the coming records on this thread
while the caller checks and writes the earlier ones. While the worker lives, the interpreter's switch
interval (how long one thread may hold the GIL while another waits for it; default 5 ms) is short: the
models run one text at a time (~4 ms) on threads that need the GIL between runs, and with the default they
sat waiting for the writer's validation, SQL and analysis to hand it back.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from openclaw_cli.core.thread_imports import settle_numpy

SWITCH_INTERVAL = 0.0005
T = TypeVar("T")


class EmbeddingWorker:
    """Started by its first `submit`; `shutdown` gives the switch interval back."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._pool: ThreadPoolExecutor | None = None
        self._switch = sys.getswitchinterval()

    def submit(self, work: Callable[..., T], *args: Any) -> Future[T]:
        if self._pool is None:
            settle_numpy()  # numpy must not be imported by two threads at once (thread_imports.py)
            self._switch = sys.getswitchinterval()
            sys.setswitchinterval(min(self._switch, SWITCH_INTERVAL))
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self._name)
        return self._pool.submit(work, *args)

    def shutdown(self) -> None:
        """Wait for the running work, drop what has not started, and give the switch interval back."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
            sys.setswitchinterval(self._switch)
