"""The backup, restore and salvage operations of one agent's memory (`openclaw memory backup | restore |
recover`, `openclaw doctor --fix`), and the daily copies cron's commands write for every store.

Restore and salvage replace a database that a running gateway would keep writing to through its open
connections (and its queued turns), so both refuse while this home's gateway runs. Salvage holds the
database's write lock while it reads, so other openclaw commands wait rather than write into the
damaged file what the new one would not have.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import Conflict, NotFound, StoreError
from openclaw_cli.core.paths import SHARED_AGENT, Home
from openclaw_cli.memory.upkeep import backup as copies
from openclaw_cli.memory.upkeep.salvage import Salvage

if TYPE_CHECKING:
    import apsw

    from openclaw_cli.memory.agent_memory import AgentMemory
    from openclaw_cli.memory.embedding.onnx_embedder import Embedder
    from openclaw_cli.memory.upkeep.restore import RestoreReport
    from openclaw_cli.memory.writing.purge import Taint

MEMORY_DB = Path("memory") / "memory.sqlite"


def refuse_while_gateway_runs(home: Home, what: str) -> None:
    """Refuse while this home's gateway process lives, whether or not it answers: a busy one still writes."""
    from openclaw_cli.gateway.client.pidfile import gateway_process

    record = gateway_process(home)
    if record is not None:
        raise Conflict(
            f"refusing to {what} while the gateway of this home runs (pid {record['pid']}): it writes to the "
            "database through connections of its own",
            hint="stop it with `openclaw gateway stop`, run this again, then start it again",
        )


def target_db(service: AgentMemory, shared: bool) -> Path:
    """The database a single-file command works on: the agent's own, or with `shared` the shared store."""
    return service.home.memory_db(SHARED_AGENT) if shared else service.db_path("agent")


def existing(path: Path) -> Path:
    if not path.exists():
        raise NotFound(f"no memory database at {path}", hint="add a memory first with `openclaw memory add`")
    return path


def backup_now(service: AgentMemory, output: Path | None, shared: bool, now: datetime) -> list[Path]:
    """`memory backup`: to `output`, or a manual copy of every database the agent reads beside each."""
    if output is not None:
        return [copies.backup_to(existing(target_db(service, shared)), output)]
    paths = [target_db(service, True)] if shared else service.db_paths()
    written = [copies.manual_backup(path, now) for path in paths if path.exists()]
    if not written:
        raise NotFound("no memory database yet: nothing to back up")
    return written


def list_all(service: AgentMemory, now: datetime) -> list[dict[str, Any]]:
    return [
        {"database": str(path), "backups": [b.to_dict(now) for b in copies.list_backups(path)]}
        for path in service.db_paths()
    ]


def restore_from(service: AgentMemory, source: Path, shared: bool, now: datetime) -> RestoreReport:
    from openclaw_cli.memory.upkeep.restore import restore

    refuse_while_gateway_runs(service.home, "restore a memory database")
    service.close()  # this process's own connections must not outlive the file they read
    return restore(target_db(service, shared), source, now, service.embedder)


# --- daily copies ------------------------------------------------------------------------------------


def store_paths(home: Home) -> list[Path]:
    """Every memory database under the home: each agent's and the shared one."""
    agents = home.root / "agents"
    if not agents.is_dir():
        return []
    return sorted(p / MEMORY_DB for p in agents.iterdir() if (p / MEMORY_DB).is_file())


def daily_backups(home: Home, keep_days: int, today: date) -> list[copies.DailyBackup]:
    """Today's copy of every store under the home (`session sweep`, `memory index --check`)."""
    done = []
    for path in store_paths(home):
        report = copies.daily(path, keep_days, today)
        if report is not None:
            done.append(report)
    return done


# --- salvage -----------------------------------------------------------------------------------------


@dataclass
class RecoverReport:
    database: str
    damage: str | None  # None: the database is whole and was left alone
    applied: bool = False
    kept: str | None = None  # the damaged file, kept beside the new one
    salvage: Salvage = field(default_factory=Salvage)
    vectors_pending: int = 0
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"database": self.database, "damage": self.damage, "applied": self.applied}
        if self.damage is not None:
            out.update(self.salvage.to_dict())
            out.update({"damagedFileKept": self.kept, "vectorsPending": self.vectors_pending})
        out["warning"] = self.warning
        return out


def recover(service: AgentMemory, now: datetime, *, apply: bool) -> list[RecoverReport]:
    """`memory recover`: salvage every damaged database the agent reads; without `apply`, only say what
    a salvage would bring back (nothing is written)."""
    service.close()
    paths = [path for path in service.db_paths() if path.exists()]
    damaged = {path: damage_of(path) for path in paths}
    if apply and any(damaged.values()):
        refuse_while_gateway_runs(service.home, "replace a damaged memory database")
    return [
        recover_file(path, now, apply=apply, embedder_factory=service.embedder, damage=damaged[path])
        for path in paths
    ]


def damage_of(path: Path) -> str | None:
    """What is wrong with the database at `path` (None: nothing)."""
    import apsw

    from openclaw_cli.memory.upkeep.integrity import find_damage

    try:
        conn = copies.connect(path, readonly=True)
    except apsw.Error as exc:
        return f"it cannot be opened ({exc})"
    try:
        damage = find_damage(conn)
        return None if damage.ok else damage.describe()
    except apsw.Error as exc:
        return f"it cannot be read ({exc})"
    finally:
        conn.close()


def recover_file(
    path: Path,
    now: datetime,
    *,
    apply: bool,
    embedder_factory: Callable[[], Embedder] | None,
    damage: str | None = "",
) -> RecoverReport:
    """Salvage the database at `path` when it is damaged (`damage`: what is wrong, when already known).
    Without `apply` the salvage is built and thrown away: only the report is made."""
    report = RecoverReport(str(path), damage_of(path) if damage == "" else damage)
    if report.damage is None:
        return report
    staged = path.with_name(f".{path.name}.salvage-{copies.stamp(now)}")
    try:
        if apply:
            _salvage_in_place(path, staged, now, report)
        else:
            _build(path, staged, copies.list_backups(path, kept=False), report.salvage)
    finally:
        for suffix in ("", "-wal", "-shm"):
            staged.with_name(staged.name + suffix).unlink(missing_ok=True)
    if apply:
        _refill(path, embedder_factory, report)
    return report


def _salvage_in_place(path: Path, staged: Path, now: datetime, report: RecoverReport) -> None:
    """Under the database's write lock: keep the damaged file, build the salvage from that copy; then
    put the salvage in place (the install takes the lock again, for one transaction)."""
    from openclaw_cli.memory.upkeep.restore import install, keep_current

    lock = _write_lock(path)
    try:
        kept = keep_current(path, now, "damaged")
        report.kept = None if kept is None else str(kept)
        try:
            _build(kept or path, staged, copies.list_backups(path, kept=False), report.salvage, path)
        except BaseException:
            if kept is not None:  # only a copy: the damaged database itself is untouched
                # -shm too: reading the copy (a byte copy of a WAL-mode file) made one beside it.
                for suffix in ("", "-wal", "-shm", "-journal"):
                    kept.with_name(kept.name + suffix).unlink(missing_ok=True)
            raise
    finally:
        if lock is not None:
            lock.close()  # rolls its (empty) transaction back
    install(path, staged)
    report.applied = True
    copies.clear_failures(path)


def _write_lock(path: Path) -> apsw.Connection | None:
    """A connection holding the database's write lock; None when the file does not open as one."""
    import apsw

    try:
        conn = copies.connect(path)
        conn.execute("BEGIN IMMEDIATE")
    except apsw.BusyError as exc:
        raise copies.busy_error(path) from exc
    except apsw.Error:
        return None
    return conn


def _build(
    source_path: Path,
    staged: Path,
    backups: list[copies.BackupFile],
    done: Salvage,
    live: Path | None = None,
) -> None:
    """The salvaged database at `staged`: rows of the damaged file, then the newest usable backup.
    `live`: the database errors name (the source may be a copy of it that a refusal removes)."""

    from openclaw_cli.memory.store.sqlite.connection import open_db
    from openclaw_cli.memory.upkeep import salvage

    source = _readable(source_path)
    backup = _newest_usable(backups)
    if source is None and backup is None:
        raise StoreError(
            f"nothing in {live or source_path} reads as a database and there is no backup to restore",
            hint="move the file aside to start a new store; nothing was changed",
        )
    target = open_db(staged)
    try:
        if source is not None:
            salvage.check_known_migrations(source)
            salvage.salvage_rows(source, target, done)
        if backup is not None:
            done.backup = backup.filename
            salvage.merge_backup(backup, target, done)
        salvage.find_lost(source, target, backup, done)
        salvage.finish(target)
    finally:
        for conn in (source, backup, target):
            if conn is not None:
                conn.close()


def _readable(path: Path) -> apsw.Connection | None:
    """A connection to the damaged file, or None when not even its schema reads (all from the backup)."""
    import apsw

    try:
        conn = copies.connect(path, readonly=True)
    except apsw.Error:
        return None
    try:
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except apsw.Error:
        conn.close()
        return None
    return conn


def _newest_usable(backups: list[copies.BackupFile]) -> apsw.Connection | None:
    for item in backups:
        if copies.problem_of(item.path) is None:
            return copies.connect(item.path, readonly=True)
    return None


def _refill(path: Path, embedder_factory: Callable[[], Embedder] | None, report: RecoverReport) -> None:
    """The vectors of the records now in place (and the rest of `memory index`'s repairs)."""
    from openclaw_cli.memory.store.memory_store import MemoryStore
    from openclaw_cli.memory.upkeep.index import pending_count, repair

    store = MemoryStore.open(path, embedder_factory, create=False)
    try:
        outcome = repair(store, embedder_factory)
        report.warning = outcome.warning
        report.vectors_pending = pending_count(store)
    finally:
        store.close()


# --- forgetting ---------------------------------------------------------------------------------------


def purge_copies(db_path: Path, user_ids: list[str], taint: Taint | None) -> tuple[list[str], list[str]]:
    """Forget a person in every copy of the database at `db_path` too (backups, and the files a restore
    or a salvage kept), as `memory purge` does in the database: (copies cleaned, copies that could not be,
    e.g. a damaged one)."""
    from openclaw_cli.core.errors import OpenclawError
    from openclaw_cli.memory.store.memory_store import MemoryStore
    from openclaw_cli.memory.writing.purge import purge_person

    cleaned: list[str] = []
    left: list[str] = []
    for item in copies.list_backups(db_path):
        try:
            store = MemoryStore.open(item.path, None, create=False)
        except OpenclawError:
            left.append(str(item.path))
            continue
        try:
            tainted = taint is not None and bool(taint.sessions or taint.messages)
            if tainted or _holds(store.conn, user_ids):
                purge_person(store, user_ids, taint)
                cleaned.append(str(item.path))
            store.conn.execute("PRAGMA journal_mode = DELETE")  # a copy stays one self-contained file
        except Exception as exc:  # noqa: BLE001 - a damaged copy (apsw) is reported, never half-read
            if type(exc).__module__ != "apsw":
                raise
            left.append(str(item.path))
        finally:
            store.close()
    return cleaned, left


def _holds(conn: apsw.Connection, user_ids: list[str]) -> bool:
    marks = ",".join("?" * len(user_ids))
    found = conn.execute(
        f"SELECT 1 FROM records WHERE user_id IN ({marks}) UNION ALL "
        f"SELECT 1 FROM history WHERE user_id IN ({marks}) LIMIT 1",
        [*user_ids, *user_ids],
    ).fetchone()
    return found is not None
