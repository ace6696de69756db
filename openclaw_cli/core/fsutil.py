"""File-system primitives: private directories, atomic replacement, durable appends."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from openclaw_cli.core.errors import StoreError

DIR_MODE = 0o700
FILE_MODE = 0o600


class DirectoryError(StoreError):
    """A directory that cannot be created (or is a file): `path` and the system's `reason`."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot create the directory {path}: {reason}")
        self.path = path
        self.reason = reason


def ensure_private_dir(path: Path) -> Path:
    """Create `path` and any missing parents with mode 0700; an existing directory is left as it is.

    Only directories created here get their mode set: changing the mode of an existing one is a repair
    that `openclaw doctor --fix` reports, and a command that merely reads must not modify the home.
    DirectoryError says which directory could not be made, and why (the CLI words it for the home).
    """
    missing = []
    probe = path
    try:
        while not probe.exists():
            missing.append(probe)
            probe = probe.parent
        for directory in reversed(missing):
            try:
                directory.mkdir(mode=DIR_MODE)
            except FileExistsError:
                continue  # created meanwhile by another process: it is that process's to set up
            os.chmod(directory, DIR_MODE)  # mkdir's mode is filtered by the umask
    except OSError as exc:  # /proc/x, a read-only or full file system, a file on the way, no permission
        failed = Path(exc.filename) if exc.filename else path
        raise DirectoryError(failed, exc.strerror or str(exc)) from exc
    if not path.is_dir():
        raise DirectoryError(path, "it is not a directory")
    return path


def fsync_dir(path: Path) -> None:
    """Make a rename inside `path` durable."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data` so a reader sees the old or the new content, never a mix."""
    ensure_private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        fsync_dir(path.parent)


def atomic_write_json(path: Path, value: Any, *, durable: bool = True) -> None:
    from openclaw_cli.security.files import document_for_disk  # here: security imports this module

    text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False) + "\n"
    # Session documents are sealed in an encrypted home (security/files.py); all else as it was.
    atomic_write_bytes(path, document_for_disk(path, text.encode("utf-8")), durable=durable)


def create_private_file(path: Path) -> None:
    """Create an empty 0600 file if it does not exist."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE)
    os.close(fd)


@contextmanager
def one_builder_at_a_time(path: Path) -> Iterator[None]:
    """Hold the lock file `<path>.lock` (0600, kept) while this process builds the derived file `path`.

    A model conversion costs seconds of CPU. Processes started together on a fresh cache (a gateway
    and a CLI command, or several commands from a script) each converted the same model side by side;
    now the others wait here while one builds, then find the file built: callers check again inside.
    """
    import filelock

    ensure_private_dir(path.parent)
    with filelock.FileLock(f"{path}.lock", mode=FILE_MODE):
        yield


@contextmanager
def temp_files_inside(directory: Path) -> Iterator[None]:
    """Send what libraries write through `tempfile` into `directory` for the duration.

    onnxruntime's quantizer saves an ~80 MB shape-inferred copy of the model in the system temp dir, and
    a killed conversion leaves it there; inside the home's private cache it is the user's data, and
    `doctor` finds it with the rest of a conversion's leftovers. Process-wide: call it only where no
    other thread needs the system temp dir. Two such blocks in one process take turns: otherwise one
    thread's block sends another's temp files into its own directory, which it then deletes (seen when
    a gateway's warm-up converted a model while a test's own conversion ran).
    """
    with _TEMP_DIR_TURN:
        previous = tempfile.tempdir
        tempfile.tempdir = str(directory)
        try:
            yield
        finally:
            tempfile.tempdir = previous


_TEMP_DIR_TURN = threading.RLock()


@contextmanager
def atomic_output(path: Path) -> Iterator[BinaryIO]:
    """A private (0600) file that replaces `path` only when the block completes; removed otherwise."""
    ensure_private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
