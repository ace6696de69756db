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

from openclaw_cli.core.fsutil import FILE_MODE

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
            fd = self._acquire()
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _acquire(self) -> int:
        """flock the file that is at `path` now. `doctor --fix` removes lock files nobody holds (see
        remove_if_free); a descriptor opened before such a removal locks a deleted inode, which would
        no longer exclude anyone, so after locking check the path still names our file, else reopen."""
        while True:
            fd = self._open()
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _same_file(fd, self.path):
                return fd
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            self._fd = None

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


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def remove_if_free(path: Path) -> bool:
    """Remove the lock file `path` if nobody holds it; True when removed. Never waits.

    The file is removed while we hold its lock: a process that opened it earlier and locks it later
    sees the path gone or replaced and reopens (ProcessLock._acquire), so mutual exclusion survives.
    """
    if fcntl is None:  # pragma: no cover - without flock we cannot tell whether it is held
        return False
    forget_lock(path)  # this process's cached descriptor, if any, is not holding it (we are not inside hold)
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        if not _same_file(fd, path):
            return False  # replaced meanwhile: the new file is someone else's
        path.unlink()
        return True
    finally:
        os.close(fd)
