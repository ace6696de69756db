"""Copies of a memory database made with SQLite's online backup API, and putting one back.

Where they live: `backups/` beside the database (`agents/<agentId>/memory/backups/`, the shared store's in
`agents/_shared/memory/backups/`), 0700, each copy 0600:
- `daily-YYYY-MM-DD.sqlite`: the rolling copy `session sweep` and `memory index --check` write once a day
  (local date), kept `memory.backup.keepDays` days;
- `before-<migration>-<UTC time>.sqlite`: the database as it was before a schema migration;
- `manual-<UTC time>.sqlite`: `openclaw memory backup` without `-o`.
Daily copies are pruned, and so are the databases restores replaced (kept beside it as
`memory.sqlite.replaced-<UTC time>`), after the same days; the others stay until the user deletes them,
the damaged files salvages keep (`memory.sqlite.damaged-<UTC time>`) too.

The backup API reads a consistent snapshot (WAL included) while other connections keep writing, and
writing into a live database happens under its write lock, as one transaction: connections of other
processes see the restore as any other commit, which a file rename would not give them. Copies are
written to a temporary name and renamed into place, in rollback-journal mode, so each is one
self-contained file.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import InvalidInput, StoreError
from openclaw_cli.core.fsutil import FILE_MODE, ensure_private_dir, fsync_dir

# The copying itself is the SQLite backend's (a migration copies the store before changing it); these names
# are this module's public API too, used by restore and recovery.
from openclaw_cli.memory.store.sqlite.file_copy import BACKUP_DIR as BACKUP_DIR
from openclaw_cli.memory.store.sqlite.file_copy import KEPT_NAME, fsync_file
from openclaw_cli.memory.store.sqlite.file_copy import SUFFIX as SUFFIX
from openclaw_cli.memory.store.sqlite.file_copy import backup_dir as backup_dir
from openclaw_cli.memory.store.sqlite.file_copy import before_migration as before_migration
from openclaw_cli.memory.store.sqlite.file_copy import connect as connect
from openclaw_cli.memory.store.sqlite.file_copy import copy_database as copy_database
from openclaw_cli.memory.store.sqlite.file_copy import stamp as stamp
from openclaw_cli.memory.store.sqlite.meta import BUSY_TIMEOUT_MS
from openclaw_cli.security.database import may_be_encrypted

if TYPE_CHECKING:
    import apsw

_NAME = re.compile(r"^(daily|before|manual)-(.+)\.sqlite$")
REQUIRED_TABLES = ("records", "schema_migrations")


@dataclass(frozen=True)
class BackupFile:
    path: Path
    kind: str  # daily, before (a migration), manual, replaced (by a restore), damaged (kept by a salvage)
    modified: datetime
    size: int

    def to_dict(self, now: datetime | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": str(self.path),
            "kind": self.kind,
            "modified": self.modified.isoformat().replace("+00:00", "Z"),
            "size": self.size,
        }
        if now is not None:
            out["ageSeconds"] = max(0, int((now - self.modified).total_seconds()))
        return out


def _describe(path: Path, kind: str) -> BackupFile | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return BackupFile(path, kind, datetime.fromtimestamp(info.st_mtime, UTC), info.st_size)


def list_backups(db_path: Path, *, kept: bool = True) -> list[BackupFile]:
    """Every copy of the database at `db_path`, newest first; `kept`: also the files a restore or a
    salvage left beside it."""
    found: list[BackupFile] = []
    directory = backup_dir(db_path)
    if directory.is_dir():
        for path in directory.iterdir():
            match = _NAME.match(path.name)
            if match and path.is_file() and (item := _describe(path, match.group(1))):
                found.append(item)
    if kept and db_path.parent.is_dir():
        for path in db_path.parent.iterdir():
            match = KEPT_NAME.search(path.name)
            ours = match and path.name.startswith(db_path.name + ".") and path.is_file()
            if match and ours and (item := _describe(path, match.group(1))):
                found.append(item)
    return sorted(found, key=lambda b: (b.modified, b.path.name), reverse=True)


# --- copying -----------------------------------------------------------------------------------------


def copy_file(path: Path, dest: Path) -> Path:
    """A byte copy of a database SQLite cannot copy (not even its first page reads), its -wal beside."""
    ensure_private_dir(dest.parent)
    for suffix in ("", "-wal"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            target = dest.with_name(dest.name + suffix)
            shutil.copyfile(source, target)
            os.chmod(target, FILE_MODE)
            fsync_file(target)
    fsync_dir(dest.parent)
    return dest


def keep_copy(db_path: Path, dest: Path) -> Path:
    """Copy the database (however damaged) to `dest`: through SQLite when it opens, else byte for byte."""
    import apsw

    try:
        source = connect(db_path)
    except apsw.Error:
        return copy_file(db_path, dest)
    try:
        return copy_database(source, dest)
    except apsw.BusyError as exc:
        raise busy_error(db_path) from exc
    except apsw.Error:
        return copy_file(db_path, dest)
    finally:
        source.close()


def busy_error(path: Path) -> StoreError:
    return StoreError(
        f"{path} stayed locked by another process for {BUSY_TIMEOUT_MS // 1000} s",
        hint="let the other openclaw command finish (or stop it), then run this again; nothing was changed",
    )


# --- checking ----------------------------------------------------------------------------------------


def problem_of(path: Path, *, thorough: bool = False) -> str | None:
    """Why the file at `path` is not a whole openclaw memory database, or None when it is.

    `thorough`: PRAGMA integrity_check (indexes against tables too) rather than quick_check."""
    import apsw

    from openclaw_cli.memory.store.sqlite.connection import SQLITE_MAGIC, load_vec

    try:
        with path.open("rb") as handle:
            head = handle.read(len(SQLITE_MAGIC))
    except IsADirectoryError:
        return "it is a directory"
    except OSError as exc:
        return f"it cannot be read ({exc.strerror})"
    if head != SQLITE_MAGIC and not may_be_encrypted(path):  # an encrypted page 1 starts with its salt
        return "it is not a SQLite database"
    try:
        conn = connect(path, readonly=True)
        load_vec(conn)  # the vec0 tables' columns are part of the schema compared
    except apsw.Error as exc:
        return f"it cannot be opened ({exc})"
    try:
        return _content_problem(conn, thorough)
    except apsw.Error as exc:
        return f"it is damaged ({exc})"
    finally:
        conn.close()


def _content_problem(conn: apsw.Connection, thorough: bool) -> str | None:
    from openclaw_cli.memory.store.sqlite.migrations import MIGRATIONS
    from openclaw_cli.memory.upkeep import schema

    check = "integrity_check" if thorough else "quick_check"
    lines = [str(r[0]) for r in conn.execute(f"PRAGMA {check}")]
    if lines != ["ok"]:
        return f"it is damaged ({lines[0]})"
    tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    if any(name not in tables for name in REQUIRED_TABLES):
        return "it is not an openclaw memory database (no records table)"
    known = {name for name, _ in MIGRATIONS}
    newer = [str(r[0]) for r in conn.execute("SELECT name FROM schema_migrations") if str(r[0]) not in known]
    if newer:
        return f"it was written by a newer openclaw (migration {newer[0]}): upgrade openclaw to use it"
    diff = schema.difference(conn)
    if not diff.ok:
        return f"its schema is not the one this openclaw writes ({diff.describe()})"
    return None


# --- writing copies --------------------------------------------------------------------------------


@contextmanager
def source_of(db_path: Path) -> Iterator[apsw.Connection]:
    import apsw

    if not db_path.exists():
        raise StoreError(f"no memory database at {db_path}", hint="nothing to back up yet")
    try:
        conn = connect(db_path)
    except apsw.Error as exc:
        raise StoreError(f"{db_path} cannot be opened ({exc})") from exc
    try:
        yield conn
    except apsw.BusyError as exc:
        raise busy_error(db_path) from exc
    finally:
        conn.close()


def backup_to(db_path: Path, dest: Path) -> Path:
    """`openclaw memory backup`: copy the database to `dest` (replaced atomically if it exists)."""
    import apsw

    _check_output(dest)
    if dest.resolve() in {db_path.resolve().with_name(db_path.name + s) for s in ("", "-wal", "-shm")}:
        raise InvalidInput(f"{dest} is the database itself", hint="give another file name")
    with source_of(db_path) as source:
        try:
            return copy_database(source, dest)
        except PermissionError as exc:
            raise InvalidInput(f"cannot write {dest} ({exc.strerror})") from exc
        except OSError as exc:
            raise InvalidInput(f"cannot write {dest} ({exc.strerror or exc})") from exc
        except apsw.CantOpenError as exc:
            raise InvalidInput(f"cannot write {dest} ({exc})") from exc


def _check_output(dest: Path) -> None:
    if str(dest) in ("", "."):
        raise InvalidInput("the output file name is empty", hint="give a file name after -o")
    if dest.is_dir():
        raise InvalidInput(f"{dest} is a directory", hint=f"give a file name, e.g. -o {dest}/memory.sqlite")
    if not dest.parent.is_dir():
        raise InvalidInput(f"cannot write {dest}: {dest.parent} is not a directory")
    if not os.access(dest.parent, os.W_OK | os.X_OK):
        raise InvalidInput(f"cannot write {dest}: permission denied in {dest.parent}")


def manual_backup(db_path: Path, now: datetime) -> Path:
    ensure_private_dir(backup_dir(db_path))
    return backup_to(db_path, backup_dir(db_path) / f"manual-{stamp(now)}{SUFFIX}")


@dataclass
class DailyBackup:
    path: str
    written: str | None = None
    pruned: list[str] | None = None
    problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "database": self.path,
            "written": self.written,
            "pruned": self.pruned or [],
            "problem": self.problem,
        }


def daily(db_path: Path, keep_days: int, today: date) -> DailyBackup | None:
    """Today's rolling copy when there is none yet, then copies older than `keep_days` days removed.

    Cheap when today's copy exists (a stat and a directory listing). A copy that fails its check (the
    database is damaged) is not kept and nothing is pruned: the older, good copies are what a salvage
    needs. The failure is remembered for the day (`.daily-DATE.failed`), so a cron job every 15 minutes
    does not copy a damaged database each time; a salvage clears it."""
    if keep_days <= 0 or not db_path.exists():
        return None
    report = DailyBackup(str(db_path))
    target = backup_dir(db_path) / f"daily-{today.isoformat()}{SUFFIX}"
    failed = _failure_mark(db_path, today)
    if failed.exists():
        report.problem = failed.read_text(encoding="utf-8", errors="replace").strip()
        return report
    if not target.exists():
        problem = _write_daily(db_path, target)
        if problem is not None:
            report.problem = f"no daily backup of {db_path}: {problem}"
            with suppress(OSError):
                failed.write_text(report.problem + "\n", encoding="utf-8")
                os.chmod(failed, FILE_MODE)
            return report
        report.written = str(target)
    report.pruned = [str(p) for p in prune(db_path, keep_days, today)]
    return report


def _failure_mark(db_path: Path, today: date) -> Path:
    return backup_dir(db_path) / f".daily-{today.isoformat()}.failed"


def clear_failures(db_path: Path) -> None:
    """Forget failed daily copies (the database was salvaged or restored: today's copy may be made)."""
    directory = backup_dir(db_path)
    if directory.is_dir():
        for mark in directory.glob(".daily-*.failed"):
            mark.unlink(missing_ok=True)


def _write_daily(db_path: Path, target: Path) -> str | None:
    """Write and check the copy; what is wrong with it (nothing kept), or None."""
    import apsw

    try:
        with source_of(db_path) as source:
            copy_database(source, target)
    except (apsw.Error, OSError, StoreError) as exc:
        return getattr(exc, "message", None) or getattr(exc, "strerror", None) or str(exc)
    problem = problem_of(target)
    if problem is not None:
        target.unlink(missing_ok=True)
    return problem


def prune(db_path: Path, keep_days: int, today: date) -> list[Path]:
    """Remove the daily copies, and the databases restores replaced, dated more than `keep_days - 1`
    days before `today` (a replaced database is a backup of what the restore undid; a damaged one a
    salvage kept stays: it may hold what the salvage could not read)."""
    oldest = today - timedelta(days=keep_days - 1)
    removed: list[Path] = []
    for item in list_backups(db_path):
        day = _dated(item)
        if day is None or day >= oldest:
            continue
        for suffix in ("", "-wal", "-shm", "-journal"):
            with suppress(FileNotFoundError):
                item.path.with_name(item.path.name + suffix).unlink()
        removed.append(item.path)
    return removed


def _dated(item: BackupFile) -> date | None:
    """The day a daily or replaced copy was made, from its name; None for the kinds never pruned."""
    try:
        if item.kind == "daily":
            return date.fromisoformat(item.path.name.removeprefix("daily-").removesuffix(SUFFIX))
        if item.kind == "replaced" and (match := KEPT_NAME.search(item.path.name)):
            return datetime.strptime(match.group(2)[:8], "%Y%m%d").date()
    except ValueError:
        return None
    return None
