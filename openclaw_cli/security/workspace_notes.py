"""`openclaw memory notes show|edit`: the workspace's Markdown read and edited whether sealed or plain.

With `security.encryptWorkspace` on, MEMORY.md and the daily logs no longer open in an editor or grep;
these are the way in. `edit` puts the text in a 0600 temporary file in a private directory (the per-user
runtime dir, a tmpfs, when there is one), runs the user's editor on it, and writes the result back through
workspace_file.py in one atomic replace (sealed again if the file was or the setting says so); the
temporary file is removed whatever happens. An unchanged text writes nothing.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from openclaw_cli.core.errors import InvalidInput, NotFound, OpenclawError
from openclaw_cli.core.fsutil import ensure_private_dir
from openclaw_cli.security import workspace_file

_DAY = re.compile(r"(?:memory/)?(\d{4}-\d{2}-\d{2})(?:\.md)?")
NAMES_HINT = "name MEMORY.md, SHARED.md, today, or a day as YYYY-MM-DD"


class EditorFailed(OpenclawError):
    """The editor exited with an error: nothing was written back."""


@dataclass(frozen=True)
class NoteFile:
    name: str  # as in the workspace: "MEMORY.md", "memory/2026-03-24.md"
    path: Path
    sealed: bool


def resolve(root: Path, which: str, today: date) -> NoteFile:
    """The workspace file `which` names (never a path of the caller's choosing: only these names)."""
    if which in workspace_file.WORKSPACE_NAMES:
        name = which
    elif which == "today":
        name = f"{workspace_file.LOG_DIR}/{today.isoformat()}.md"
    else:
        match = _DAY.fullmatch(which)
        if match is None:
            raise InvalidInput(f"no workspace note file {which!r}", hint=NAMES_HINT)
        try:
            day = date.fromisoformat(match.group(1))
        except ValueError:
            raise InvalidInput(f"{which!r} is not a date", hint=NAMES_HINT) from None
        name = f"{workspace_file.LOG_DIR}/{day.isoformat()}.md"
    path = root / name
    if path.is_symlink():
        raise InvalidInput(f"{path} is a symbolic link: not followed", hint="edit its target yourself")
    return NoteFile(name, path, workspace_file.is_sealed(path))


def show(note: NoteFile) -> str:
    try:
        return workspace_file.read(note.path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        raise NotFound(
            f"{note.name} does not exist yet", hint="write one with `openclaw memory note`"
        ) from None


def edit(note: NoteFile, tmp_dir: Path, run_editor: Callable[[Path], int]) -> bool:
    """Let the user edit the note in `run_editor` (given the temporary file's path, returns its exit
    status); True when a changed text was written back."""
    try:
        before = workspace_file.read(note.path)
    except FileNotFoundError:
        before = b""
    ensure_private_dir(tmp_dir)
    fd, name = tempfile.mkstemp(prefix="note-", suffix=".md", dir=tmp_dir)  # 0600
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(before)
        status = run_editor(temp)
        if status != 0:
            raise EditorFailed(
                f"the editor exited with status {status}", hint=f"nothing was written to {note.name}"
            )
        after = temp.read_bytes()
    finally:
        temp.unlink(missing_ok=True)
    if after == before:
        return False
    ensure_private_dir(note.path.parent)
    workspace_file.write(note.path, after)
    return True
