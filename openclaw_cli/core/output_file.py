"""Files written where the user says (`-o FILE`, `memory migrate FILE`): checked before any work, and every
failure to create or replace one is a one-line error, never an OSError.

- A name that is empty or names a directory is a usage error (exit 2, like a bad option value), found
  before anything is read or written.
- A missing parent directory is created (0700, as the home's are). One that cannot be created, a parent
  that is a file, and a directory that refuses a new file are input errors (exit 1) naming the path.
- A regular file appears only when complete (fsutil.atomic_output); a symlink to one keeps the link.
- A target that exists and is not a regular file (/dev/stdout, /dev/fd/N of a pipe, a FIFO) is written to
  as it is: an atomic replace would put a plain file where the device was (as root, even /dev/null).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from openclaw_cli.core.errors import InvalidInput, UsageError
from openclaw_cli.core.fsutil import atomic_output, ensure_private_dir

STDOUT_HINT = "give a file name, or '-' for standard output"
ELSEWHERE_HINT = "choose another file, or '-' for standard output"
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def check_output_path(target: str, what: str = "--output", example: str = "export.json") -> Path:
    """The path `target` names, when a file can be written there; UsageError/InvalidInput otherwise.

    `what` names the option or argument in messages; `example` is the file name a hint suggests."""
    if not target.strip():
        raise UsageError(f"{what} is empty", hint=STDOUT_HINT)
    path = Path(target)
    try:
        # Path("out/") is Path("out"): without the slash check a file named "out" would be written.
        if path.is_dir() or target.endswith(("/", os.sep)):
            kind = "is a directory" if path.is_dir() else "ends with '/': it names a directory"
            raise UsageError(f"{what} {target} {kind}", hint=f"give a file name in it, e.g. {path / example}")
        ancestor = path.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise InvalidInput(f"cannot write {target}: {ancestor} is not a directory", hint=ELSEWHERE_HINT)
    except OSError as exc:  # e.g. a parent the user may not even look into
        raise cannot_write(path, exc) from exc
    return path


def cannot_write(path: Path, exc: OSError, hint: str = ELSEWHERE_HINT) -> InvalidInput:
    """A failure to create, fill or replace a file at `path`, as one line (no temporary file names)."""
    return InvalidInput(f"cannot write {path} ({exc.strerror or exc})", hint=hint)


def _special(path: Path) -> bool:
    try:
        return not stat.S_ISREG(path.stat().st_mode)
    except FileNotFoundError:
        return False  # not there yet, or a dangling symlink: a new file
    except OSError as exc:
        raise cannot_write(path, exc) from exc


@contextmanager
def output_file(target: str, what: str = "--output", example: str = "export.json") -> Iterator[BinaryIO]:
    """A private file at `target`, written as the module doc says."""
    path = check_output_path(target, what, example)
    if _special(path):
        with _guarded(path) as stage, path.open("wb") as stream:
            stage[0] = "write"
            yield stream
            stage[0] = "close"  # a buffered write may fail only here
        return
    path = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        ensure_private_dir(path.parent)
    except OSError as exc:
        raise InvalidInput(
            f"cannot create the directory {exc.filename or path.parent} for {target} ({exc.strerror})",
            hint=ELSEWHERE_HINT,
        ) from exc
    with replaced_file(path) as handle:
        yield handle


@contextmanager
def replaced_file(path: Path, hint: str = ELSEWHERE_HINT) -> Iterator[BinaryIO]:
    """fsutil.atomic_output, with its own failures (creating the temporary file, replacing `path`) as
    one-line errors naming `path`, with `hint`."""
    with _guarded(path, hint) as stage, atomic_output(path) as handle:
        stage[0] = "write"
        yield handle
        stage[0] = "replace"


@contextmanager
def _guarded(path: Path, hint: str = ELSEWHERE_HINT) -> Iterator[list[str]]:
    """OSErrors of opening, filling or replacing `path` as one line. The caller sets `stage[0]` to "write"
    while its block runs: the block's own OSErrors pass then, unless the disk is full (the block's only
    writing is to this output)."""
    stage = ["open"]
    try:
        yield stage
    except OSError as exc:
        if stage[0] == "write" and exc.errno not in _FULL:
            raise
        raise cannot_write(path, exc, hint) from exc
