"""The one way to open a memory database: apsw, sqlite-vec, WAL, named migrations (sqlite/migrations.py).

A file that is not SQLite, or that SQLite finds damaged, or that this user cannot read or write, is refused
with an error that says which, before anything is changed.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import StoreError
from openclaw_cli.core.fsutil import create_private_file, ensure_private_dir
from openclaw_cli.memory.store.sqlite.meta import BUSY_TIMEOUT_MS
from openclaw_cli.memory.store.sqlite.migrations import migrate
from openclaw_cli.security.database import connect as encrypted_or_plain
from openclaw_cli.security.database import may_be_encrypted

if TYPE_CHECKING:
    import apsw

SQLITE_MAGIC = b"SQLite format 3\x00"


def vec_extension_path() -> str:
    """The sqlite-vec loadable shipped in the sqlite-vec package.

    Located through the import system without importing the package: its __init__ imports numpy.typing,
    which costs ~0.1-0.3 s on every start of a command that opens a memory database.
    """
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise StoreError("the sqlite-vec package is not installed", hint="reinstall openclaw-cli")
    return str(Path(next(iter(spec.submodule_search_locations))) / "vec0")


def load_vec(conn: apsw.Connection) -> None:
    conn.enable_load_extension(True)
    conn.load_extension(vec_extension_path())
    conn.enable_load_extension(False)


def _check_header(path: Path) -> None:
    """Refuse a file that is not SQLite before SQLite gets a chance to touch it."""
    with path.open("rb") as handle:
        head = handle.read(len(SQLITE_MAGIC))
    if (
        head and head != SQLITE_MAGIC and not may_be_encrypted(path)
    ):  # an encrypted page 1 starts with its salt
        raise StoreError(
            f"{path} is not a SQLite database",
            hint="move it aside (it was left as it was) and run the command again to start a new one",
        )


class DatabaseDamaged(StoreError):
    """SQLite finds the file damaged as it opens it (`openclaw memory recover` salvages it)."""


class DatabasePermissionError(StoreError):
    """The database or its directory cannot be read or written by this user: not damage, and never a
    reason to restore a backup."""


def _describe_access(path: Path) -> str:
    try:
        info = path.stat()
    except OSError:
        return "cannot be inspected"
    return f"mode {info.st_mode & 0o7777:04o}, owner uid {info.st_uid}, running as uid {os.geteuid()}"


def _permission_error(path: Path, what: str) -> DatabasePermissionError:
    return DatabasePermissionError(
        f"permission denied: cannot {what} {path} ({_describe_access(path)})",
        hint=f"run as the file's owner, or `openclaw doctor --fix` / `chmod` to restore 0600 files and 0700 "
        f"directories (`ls -l {path}`); the data was not touched",
    )


def _check_access(path: Path, *, readonly: bool) -> None:
    """SQLite reports a denied open as "unable to open database file" or as a read-only database, and a
    directory it cannot create -wal/-shm in only fails later: say what is wrong before it gets there."""
    if not os.access(path, os.R_OK):
        raise _permission_error(path, "read")
    if readonly:
        return
    if not os.access(path, os.W_OK):
        raise _permission_error(path, "write")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise _permission_error(path.parent, "create the journal files (-wal, -shm) in")


def open_db(path: Path, *, create: bool = True, readonly: bool = False) -> apsw.Connection:
    """Open (and if needed create and migrate) the memory database at `path`."""
    import apsw

    try:
        return _open(path, create=create, readonly=readonly)
    except PermissionError as exc:
        raise _permission_error(Path(exc.filename or path), "open") from exc
    except (apsw.CantOpenError, apsw.ReadOnlyError, apsw.PermissionsError, apsw.AuthError) as exc:
        raise _permission_error(path, f"open ({exc})") from exc


def _open(path: Path, *, create: bool, readonly: bool) -> apsw.Connection:
    import apsw

    exists = path.exists()
    if not exists and not create:
        raise StoreError(
            f"no memory database at {path}", hint="add a memory first with `openclaw memory add`"
        )
    if exists:
        _check_access(path, readonly=readonly)
        _check_header(path)
    else:
        ensure_private_dir(path.parent)
        create_private_file(path)
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    try:
        conn = encrypted_or_plain(path, flags)  # keyed when the home is encrypted (security/database.py)
        conn.setbusytimeout(BUSY_TIMEOUT_MS)
        load_vec(conn)
        _configure(conn, readonly=readonly)
        if not readonly:
            migrate(conn)
        # Per-term document counts, for leaving very common terms out of a query (search/pipeline.py). A temp
        # table: it lives with this connection and is not part of the stored schema.
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.records_vocab USING fts5vocab(main, records_fts, 'row')"
        )
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        raise DatabaseDamaged(
            f"{path} is damaged ({exc.__class__.__name__.removesuffix('Error').lower()})",
            hint="run `openclaw memory recover --yes`: it salvages what still reads, restores the rest from "
            "the newest backup and keeps the damaged file; it was left as it was",
        ) from exc
    return conn


def _configure(conn: apsw.Connection, *, readonly: bool) -> None:
    cursor = conn.cursor()
    if not readonly:
        cursor.execute("PRAGMA journal_mode = WAL")
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.execute("PRAGMA secure_delete = ON")
    cursor.execute("PRAGMA temp_store = MEMORY")


def schema(conn: apsw.Connection) -> list[tuple[str, str, str]]:
    """(type, name, sql) of every schema object, for tests and `memory status`."""
    return [
        (str(t), str(n), str(s))
        for t, n, s in conn.execute(
            "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name"
        )
    ]
