"""An agent's workspace (seed 003 §4.1, §4.3): the Markdown files a session starts with, and notes.

Layout: AGENTS.md (rules), SOUL.md (persona), USER.md (who the user is), MEMORY.md (curated long-term
memory, loaded only in the owner's private session) and daily logs `memory/YYYY-MM-DD.md` (append-only).
The files are the user's own: they are read, never rewritten, except that `memory note` appends to them.
Every read and write goes through security/workspace_file.py, which seals them when
`security.encryptWorkspace` is on in an encrypted home and reads either kind by its header.

A file is read only when it resolves to a regular file inside the workspace: a symlink pointing elsewhere
(e.g. `memory/x.md -> /etc/passwd`) is not followed, and a FIFO never blocks a read.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.core.fsutil import ensure_private_dir, fsync_dir
from openclaw_cli.memory.store.records import SHARED_NOTES_FILE

if TYPE_CHECKING:
    from openclaw_cli.config.loading import MemorySettings
    from openclaw_cli.core.paths import Home

STANDING_FILES = ("AGENTS.md", "SOUL.md", "USER.md")
MEMORY_FILE = "MEMORY.md"
# Notes the owner shares with everyone the agent talks to: indexed as the agent's memory, never the owner's.
SHARED_FILE = SHARED_NOTES_FILE
LOG_DIR = "memory"
# What one file may put into a session's system prompt; the rest of a huge file is left out (and said so).
MAX_SESSION_FILE_BYTES = 256 * 1024
MAX_NOTE_CHARS = 16_000


@dataclass(frozen=True)
class WorkspaceFile:
    name: str  # relative to the workspace, with '/': "AGENTS.md", "memory/2026-03-24.md"
    path: Path
    text: str


class UnsafeFile(Exception):
    """A workspace path that is not read: a symlink out of the workspace, not a regular file, unreadable."""


def workspace_dir(home: Home, agent_id: str, settings: MemorySettings) -> Path:
    """`memory.workspace` when configured, else agents/<id>/workspace under the home.

    `~` expands; a relative path is under the home (never the directory a command happens to run in).
    An agent's own `agents.list[].workspace` arrives here as `memory.workspace` (agent_config.for_agent).
    """
    if settings.workspace:
        configured = Path(settings.workspace).expanduser()
        return configured if configured.is_absolute() else home.root / configured
    return home.workspace_dir(agent_id)


def daily_log_name(day: date) -> str:
    return f"{LOG_DIR}/{day.isoformat()}.md"


def session_files(
    home: Home, agent_id: str, settings: MemorySettings, *, private: bool, today: date
) -> list[WorkspaceFile]:
    """The workspace files a session starts with, in prompt order; missing or unsafe files are left out.

    AGENTS.md, SOUL.md and USER.md always; MEMORY.md and then yesterday's and today's logs only when
    `private` (the owner's own session, with nobody else in it): the notes are the owner's, and must not
    reach a group chat or another person's DM (identity.notes_private).
    A file that is not UTF-8 is decoded with U+FFFD for the bad bytes (the rest is still useful), and
    one larger than MAX_SESSION_FILE_BYTES is cut at a line end with a note saying so.
    """
    root = workspace_dir(home, agent_id, settings)
    names = list(STANDING_FILES)
    if private:
        names += [MEMORY_FILE, daily_log_name(today - timedelta(days=1)), daily_log_name(today)]
    found: list[WorkspaceFile] = []
    for name in names:
        path = root / name
        try:
            data, size = read_bounded(root, path, MAX_SESSION_FILE_BYTES)
        except (FileNotFoundError, UnsafeFile):
            continue
        found.append(WorkspaceFile(name, path, _session_text(data, size)))
    return found


def _session_text(data: bytes, size: int) -> str:
    if size <= len(data):
        return data.decode("utf-8", errors="replace")
    cut = data.rfind(b"\n") + 1 or len(data)
    kept = data[:cut].decode("utf-8", errors="replace")
    return kept + f"\n[... truncated: the file is {size} bytes, only the first {cut} are loaded]\n"


def safe_path(root: Path, path: Path) -> Path:
    """`path` resolved, if it is a regular file inside `root` (symlinks inside the workspace are fine).

    Raises FileNotFoundError when it does not exist and UnsafeFile when it must not be read.
    """
    resolved = path.resolve(strict=True)
    if not resolved.is_relative_to(root.resolve()):
        raise UnsafeFile(f"{path} points outside the workspace ({resolved}): not followed")
    if not stat.S_ISREG(resolved.stat().st_mode):
        raise UnsafeFile(f"{path} is not a regular file")
    return resolved


def read_bounded(root: Path, path: Path, limit: int) -> tuple[bytes, int]:
    """At most `limit` bytes of a safe workspace file, and its full size."""
    from openclaw_cli.security import records, workspace_file

    resolved = safe_path(root, path)
    try:
        with resolved.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            head = handle.read(limit)
            if not records.is_sealed(head):
                return head, size
            text = workspace_file.text_of(head + handle.read(), path)  # sealed: its text, read whole
            return text[:limit], len(text)
    except PermissionError as exc:
        raise UnsafeFile(f"{path} cannot be read: {exc.strerror}") from exc


@dataclass(frozen=True)
class NoteWritten:
    path: Path
    name: str
    line: int  # the first line of the appended entry


def append_note(
    home: Home, agent_id: str, settings: MemorySettings, text: str, *, durable: bool, now: datetime
) -> NoteWritten:
    """Append `text` as one list entry to today's log (or to MEMORY.md when `durable`).

    The file is created 0600 (its directories 0700) if missing; the entry is one `os.write` of an
    O_APPEND descriptor, fsynced, so concurrent notes never interleave within an entry.
    """
    body = text.strip()
    if not body:
        raise InvalidInput("the note is empty", hint="give the text to note, e.g. `openclaw memory note 'x'`")
    if "\x00" in body:  # as memory add: NUL is not text, and would end up in Markdown and the index
        raise InvalidInput("the note contains a NUL character", hint="remove it, e.g. with `tr -d '\\000'`")
    if len(body) > MAX_NOTE_CHARS:
        raise InvalidInput(f"the note is longer than {MAX_NOTE_CHARS} characters", hint="split it")
    root = workspace_dir(home, agent_id, settings)
    name = MEMORY_FILE if durable else daily_log_name(now.date())
    path = root / name
    ensure_private_dir(path.parent)
    if path.is_symlink() or path.exists():
        safe_path(root, path)  # never append through a link out of the workspace
    from openclaw_cli.security import workspace_file  # plain or sealed (security.encryptWorkspace)

    entry = _entry(body, now)
    before = workspace_file.append(path, entry.encode("utf-8"))
    fsync_dir(path.parent)
    return NoteWritten(path, name, before.count(b"\n") + 1)


def _entry(body: str, now: datetime) -> str:
    lines = body.splitlines()
    first = f"- {now.strftime('%H:%M')} {lines[0]}"
    return "\n".join([first, *(f"  {line}" for line in lines[1:])]) + "\n"
