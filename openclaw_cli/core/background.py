"""A load started on a thread of its own, for a result the process may want later.

Used where something slow can be loaded ahead of need (the models at a command's start) or once it is
clearly needed (USE-m3's full segmentation, jieba's whole dictionary, for bulk work). A failure is dropped:
the caller either meets it again on its own path or goes on with what it has. The process joins the thread
before it exits, since a thread still inside a native loader at interpreter exit can crash it.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from contextlib import suppress


def start_load(load: Callable[[], object], name: str) -> threading.Thread:
    """Run `load()` on a daemon thread named `name`, ignoring its failure; joined at exit."""

    def run() -> None:
        with suppress(Exception):
            load()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    atexit.register(thread.join)
    return thread
