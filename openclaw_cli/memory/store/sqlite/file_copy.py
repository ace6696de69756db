"""Consistent copies of a memory database with SQLite's online backup API: the copy a migration makes
before it changes a store with data, and the primitive upkeep/backup.py builds every other backup on.

Copies are written to a temporary name and renamed into place, in rollback-journal mode, so each is one
self-contained file.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import StoreError
from openclaw_cli.core.fsutil import create_private_file, ensure_private_dir, fsync_dir
from openclaw_cli.memory.store.sqlite.meta import BUSY_TIMEOUT_MS
from openclaw_cli.security.database import connect as encrypted_or_plain

if TYPE_CHECKING:
    import apsw

BACKUP_DIR = "backups"
SUFFIX = ".sqlite"
# A database a restore replaced or a salvage found damaged, kept beside the live one.
KEPT_NAME = re.compile(r"\.(replaced|damaged)-(\d{8}T\d{6}(?:\.\d+)?Z)$")


def backup_dir(db_path: Path) -> Path:
    return db_path.parent / BACKUP_DIR


def stamp(now: datetime) -> str:
    """A UTC time for a file name, to the millisecond (two manual backups a second apart are two files)."""
    moment = now.astimezone(UTC)
    return moment.strftime("%Y%m%dT%H%M%S.") + f"{moment.microsecond // 1000:03d}Z"


def connect(path: Path, *, readonly: bool = False) -> apsw.Connection:
    """A plain connection (no extension, no migration): the backup API copies pages, not rows."""
    import apsw

    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE
    # Keyed when the home is encrypted: a backup of an encrypted database is written with the same key.
    conn = encrypted_or_plain(path, flags)
    conn.setbusytimeout(BUSY_TIMEOUT_MS)
    return conn


def copy_database(source: apsw.Connection, dest: Path) -> Path:
    """A consistent copy of `source` as the new private file `dest`, which appears only once complete."""
    ensure_private_dir(dest.parent)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    create_private_file(tmp)
    try:
        target = connect(tmp)
        try:
            with target.backup("main", source, "main") as job:
                job.step(-1)
            # One self-contained file: no -wal beside a copy that is moved or mailed around.
            target.execute("PRAGMA journal_mode = DELETE")
        finally:
            target.close()
        fsync_file(tmp)
        os.replace(tmp, dest)
    except BaseException:
        for suffix in ("", "-wal", "-shm", "-journal"):
            tmp.with_name(tmp.name + suffix).unlink(missing_ok=True)
        raise
    fsync_dir(dest.parent)
    return dest


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def before_migration(conn: apsw.Connection, migration: str) -> Path | None:
    """The database as it is, before `migration` changes it (once per migration: another process that
    got there first made it already). A copy that cannot be written stops the migration."""
    import apsw

    filename = conn.filename
    if not filename:
        return None  # an in-memory database
    path = Path(filename)
    if path.parent.name == BACKUP_DIR or KEPT_NAME.search(path.name):
        return None  # a copy itself (opened to forget a person in it): not copied again
    directory = backup_dir(path)
    if directory.is_dir() and any(directory.glob(f"before-{migration}-*{SUFFIX}")):
        return None
    try:
        return copy_database(conn, directory / f"before-{migration}-{stamp(datetime.now(UTC))}{SUFFIX}")
    except (OSError, apsw.Error) as exc:
        if isinstance(exc, PermissionError):
            raise  # open_db says what is not accessible
        raise StoreError(
            f"cannot copy {path} before migrating it ({getattr(exc, 'strerror', None) or exc})",
            hint=f"free disk space in {directory.parent} and run the command again; nothing was changed",
        ) from exc
