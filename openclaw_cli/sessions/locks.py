"""Inter-process locks on small lock files, plus the in-process locks that must go with them.

The append path takes a lock per message, so the lock has to be cheap: on POSIX it is `flock` on a
file descriptor kept open for the life of the process (~2 µs); the `filelock` package (which opens and
closes the lock file on every acquire, ~130 µs) is the fallback where `fcntl` does not exist.
flock is per open file description, so a threading lock serialises the threads of this process first.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from openclaw_cli.fsutil import FILE_MODE

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_registry_guard = threading.Lock()
_locks: dict[str, ProcessLock] = {}


class ProcessLock:
    """An exclusive lock held across threads and processes. Reentrancy is not supported."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.Lock()
        self._fd: int | None = None
        self._fallback: Any = None

    @contextmanager
    def hold(self) -> Iterator[None]:
        with self._thread_lock:
            if fcntl is None:
                with self._filelock():
                    yield
                return
            fd = self._open()
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _open(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
        return self._fd

    def _filelock(self) -> Any:
        if self._fallback is None:
            import filelock

            self._fallback = filelock.FileLock(str(self.path), mode=FILE_MODE)
        return self._fallback

    def close(self) -> None:
        with self._thread_lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def lock_for(path: Path) -> ProcessLock:
    """The one ProcessLock of this process for `path` (the parent directory must exist)."""
    key = str(path)
    with _registry_guard:
        lock = _locks.get(key)
        if lock is None:
            lock = ProcessLock(path)
            _locks[key] = lock
        return lock


def forget_lock(path: Path) -> None:
    """Close the cached descriptor of the lock file `path` (before the file is removed)."""
    with _registry_guard:
        lock = _locks.pop(str(path), None)
    if lock is not None:
        lock.close()


def is_held_elsewhere(path: Path) -> bool:
    """True when another open file description holds `path` locked right now."""
    if fcntl is None:  # pragma: no cover
        return False
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
