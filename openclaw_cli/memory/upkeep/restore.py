"""Putting a database back: `openclaw memory restore FILE`, and the last step of a salvage.

The order never loses data: the file to restore is checked (integrity_check, and its whole schema against
what the migrations build: upkeep/schema.py) and copied next to the live database, the copy is checked
again, its vectors that are not their texts' are re-embedded there (upkeep/vector_check.py), the live
database is kept beside it (`memory.sqlite.replaced-<time>`),
and only then does the copy go in, through SQLite's backup API into the live file under its write lock
(one transaction; other connections see a commit). A live file SQLite cannot open at all is instead
replaced by a rename, its stale -wal and -shm first moved out of the way: a -wal left beside a new
file would be replayed into it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import InvalidInput, StoreError
from openclaw_cli.core.fsutil import ensure_private_dir, fsync_dir
from openclaw_cli.memory.upkeep.backup import (
    busy_error,
    clear_failures,
    connect,
    copy_database,
    keep_copy,
    problem_of,
    stamp,
)

if TYPE_CHECKING:
    import apsw

    from openclaw_cli.memory.embedding.onnx_embedder import Embedder
    from openclaw_cli.memory.upkeep.index import RepairReport


@dataclass
class RestoreReport:
    path: str
    source: str
    kept: str | None  # where the replaced database now is
    records: int
    vectors_reembedded: int = (
        0  # the copy's vectors that were not their text's, re-embedded before it went in
    )
    vectors_pending: int = 0
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "database": self.path,
            "restoredFrom": self.source,
            "kept": self.kept,
            "records": self.records,
            "vectorsReembedded": self.vectors_reembedded,
            "vectorsPending": self.vectors_pending,
            "warning": self.warning,
        }


def restore(
    db_path: Path, source: Path, now: datetime, embedder_factory: Callable[[], Embedder] | None = None
) -> RestoreReport:
    """Replace the database at `db_path` with the copy at `source` (see the module doc). With
    `embedder_factory`, the copy's vectors are checked against their texts first (vector_check.py) and
    those that are not theirs re-embedded in the staged copy, so that search never ranks by them."""
    problem = problem_of(source, thorough=True)
    if problem is not None:
        raise InvalidInput(f"cannot restore {source}: {problem}", hint=f"{db_path} was not changed")
    ensure_private_dir(db_path.parent)
    staged = db_path.with_name(f".{db_path.name}.restoring-{stamp(now)}")
    try:
        with _opened(source) as conn:
            copy_database(conn, staged)
        staged_problem = problem_of(staged)
        if staged_problem is not None:
            raise StoreError(
                f"the copy of {source} is not whole: {staged_problem}", hint="nothing was changed"
            )
        fixed = None if embedder_factory is None else _vectors_fixed(staged, embedder_factory)
        kept = keep_current(db_path, now, "replaced")
        install(db_path, staged)
        clear_failures(db_path)
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):  # the staged copy was opened as a store: WAL
            staged.with_name(staged.name + suffix).unlink(missing_ok=True)
    report = RestoreReport(
        str(db_path), str(source), None if kept is None else str(kept), live_records(db_path)
    )
    if fixed is not None:
        report.vectors_reembedded, report.vectors_pending = fixed.vectors_reembedded, fixed.still_pending
        report.warning = fixed.warning
    return report


def _vectors_fixed(staged: Path, embedder_factory: Callable[[], Embedder]) -> RepairReport:
    """Re-embed the staged copy's vectors that are not their text's, then fold its WAL back in (the
    install copies the main file's pages)."""
    from openclaw_cli.memory.store.memory_store import MemoryStore
    from openclaw_cli.memory.upkeep.index import refill_wrong_vectors

    store = MemoryStore.open(staged, embedder_factory, create=False)
    try:
        report = refill_wrong_vectors(store, embedder_factory)
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.conn.execute("PRAGMA journal_mode = DELETE")
        return report
    finally:
        store.close()


@contextmanager
def _opened(path: Path) -> Iterator[apsw.Connection]:
    import apsw

    try:
        conn = connect(path, readonly=True)
    except apsw.Error as exc:
        raise InvalidInput(f"cannot restore {path}: it cannot be opened ({exc})") from exc
    try:
        yield conn
    finally:
        conn.close()


def keep_current(db_path: Path, now: datetime, why: str) -> Path | None:
    """Keep the database at `db_path` beside it as `<name>.<why>-<time>`; None when there is none."""
    if not db_path.exists():
        return None
    return keep_copy(db_path, db_path.with_name(f"{db_path.name}.{why}-{stamp(now)}"))


def install(db_path: Path, new: Path) -> None:
    """Make the database at `db_path` hold what the (checked) file `new` holds."""
    import apsw

    if not db_path.exists():
        os.replace(new, db_path)
        fsync_dir(db_path.parent)
        return
    source = connect(new, readonly=True)
    try:
        try:
            live = connect(db_path)
        except apsw.Error:
            live = None
        if live is not None:
            try:
                with live.backup("main", source, "main") as job:
                    job.step(-1)
                return
            except apsw.BusyError as exc:
                raise busy_error(db_path) from exc
            except apsw.Error:
                pass  # not a database SQLite can write into (its header is gone): replaced below
            finally:
                live.close()
    finally:
        source.close()
    _replace_file(db_path, new)


def _replace_file(db_path: Path, new: Path) -> None:
    """Rename `new` over `db_path`; its -wal and -shm go first (their content is in the kept copy)."""
    for suffix in ("-wal", "-shm"):
        db_path.with_name(db_path.name + suffix).unlink(missing_ok=True)
    os.replace(new, db_path)
    fsync_dir(db_path.parent)


def live_records(db_path: Path) -> int:
    conn = connect(db_path, readonly=True)
    try:
        row = conn.execute("SELECT count(*) FROM records WHERE deleted = 0").fetchone()
        return 0 if row is None else int(row[0])
    finally:
        conn.close()
