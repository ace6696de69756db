"""The one reader and writer of the workspace's Markdown (MEMORY.md, SHARED.md, daily logs), plain or sealed.

With `security.encryptWorkspace` on in an encrypted home, a workspace file is sealed in the same format as
a transcript (records.py): the header line `OPENCLAW-SEALED aes-256-gcm/1 <file id>`, then one AES-256-GCM
record per line. Here a record holds a piece of the Markdown, newlines and all, and the file's text is its
records' plaintexts in order: a note appended is one more record (one write on an O_APPEND descriptor,
as a plain append is), and a whole rewrite (`memory notes edit`, a conversion) is one record replacing
the file atomically. A torn last record (a crash mid-append) is dropped, as a torn transcript line is.

Whatever the setting, a file is read by its own header, so a sealed file reads whole when the setting
was turned off and a plain file reads whole when it was turned on. A plain file written to with the
setting on is sealed first (whole, atomically), then appended to. What the user gives up: the files no
longer open in any editor, nor in grep; `openclaw memory notes show|edit` reads and edits them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from openclaw_cli.core.errors import StoreError
from openclaw_cli.core.fsutil import FILE_MODE, atomic_write_bytes
from openclaw_cli.security import records
from openclaw_cli.security.unlocked import default_home, home_of, key_for_home

WORKSPACE_NAMES = ("MEMORY.md", "SHARED.md")
LOG_DIR = "memory"

# Whether new workspace writes are sealed (security.encryptWorkspace): installed by the CLI edge, which
# reads the setting only when a workspace file of an encrypted home is written.
_policy: Callable[[], bool] | None = None


def set_policy(policy: Callable[[], bool] | None) -> None:
    global _policy
    _policy = policy


def _home(path: Path) -> Path | None:
    """The encrypted home a workspace file belongs to: the one it lies in, or (a workspace configured
    outside the home) the home this process works for."""
    return home_of(path) or default_home()


def _key(path: Path) -> bytes:
    root = _home(path)
    if root is None:
        raise StoreError(
            f"{path} is encrypted but no encrypted home holds its key", hint="run it with --home of its home"
        )
    return key_for_home(root)


def wants_sealed(path: Path) -> bool:
    """Whether a write to the workspace file at `path` seals it: the setting on, the home encrypted."""
    return _policy is not None and _home(path) is not None and _policy()


def is_sealed(path: Path) -> bool:
    return records.is_sealed_file(path)


def text_of(data: bytes, path: Path) -> bytes:
    """A workspace file's bytes as the Markdown they hold (plain bytes are returned as they are)."""
    if not records.is_sealed(data):
        return data
    return b"".join(piece for _, piece, complete in records.open_lines(data, _key(path), path) if complete)


def read(path: Path) -> bytes:
    """The Markdown of the workspace file at `path` (OSError passes through: FileNotFoundError and co)."""
    return text_of(path.read_bytes(), path)


def read_fd(fd: int, path: Path) -> bytes:
    """As `read`, from a descriptor the caller opened (O_NOFOLLOW and friends) and still owns."""
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return text_of(b"".join(chunks), path)


def sealed_bytes(text: bytes, key: bytes) -> bytes:
    sealer = records.Sealer.new(key)
    return sealer.header() + (sealer.seal(text) if text else b"")


def write(path: Path, text: bytes, *, seal: bool | None = None) -> None:
    """Replace the file at `path` with `text`, atomically: sealed when it is already, or when asked
    (`seal`, default: the setting), else plain."""
    sealed = seal if seal is not None else (is_sealed(path) or wants_sealed(path))
    atomic_write_bytes(path, sealed_bytes(text, _key(path)) if sealed else text)


def append(path: Path, entry: bytes) -> bytes:
    """Append `entry` (Markdown, ending in a newline) to the workspace file at `path`, durably, and
    return the file's text before it (for line numbers). A plain file that should be sealed is sealed
    first; a plain file's missing last newline is added, as a plain append always did."""
    if path.exists() and not is_sealed(path) and wants_sealed(path):
        write(path, read(path), seal=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, FILE_MODE)
    try:
        data = b""
        while chunk := os.pread(fd, 1 << 20, len(data)):
            data += chunk
        if not data and wants_sealed(path):
            sealer = records.Sealer.new(_key(path))
            os.write(fd, sealer.header() + sealer.seal(entry))
            before = b""
        elif records.is_sealed(data):
            sealer, _ = records.read_header(data, _key(path), path)
            before = text_of(data, path)
            if not data.endswith(b"\n"):  # a torn record (a crash mid-append): never authentic, cut off
                os.ftruncate(fd, data.rfind(b"\n") + 1)
            lead = b"" if not before or before.endswith(b"\n") else b"\n"
            os.write(fd, sealer.seal(lead + entry))
            before += lead
        else:
            lead = b"" if not data or data.endswith(b"\n") else b"\n"
            os.write(fd, lead + entry)
            before = data + lead
        os.fsync(fd)
    finally:
        os.close(fd)
    return before


def files_under(root: Path) -> list[Path]:
    """The workspace Markdown files in the workspace directory `root` that a conversion seals or opens."""
    found = [root / name for name in WORKSPACE_NAMES if (root / name).is_file()]
    logs = root / LOG_DIR
    if logs.is_dir():
        found += sorted(p for p in logs.glob("*.md") if p.is_file() and not p.is_symlink())
    return [p for p in found if not p.is_symlink()]


def convert(path: Path, key: bytes, seal: bool) -> bool:
    """Seal (or open) one workspace file in place, atomically; False when it already was."""
    data = path.read_bytes()
    if records.is_sealed(data) == seal:
        return False
    if seal:
        atomic_write_bytes(path, sealed_bytes(data, key))
    else:
        atomic_write_bytes(path, b"".join(p for _, p, ok in records.open_lines(data, key, path) if ok))
    return True
