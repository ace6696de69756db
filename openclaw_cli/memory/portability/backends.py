"""`memory migrate-backend`: move an agent's memory stores from SQLite to PostgreSQL and back.

Each store (the agent's, and the shared user store when it exists) is copied row by row through the storage
Protocol (store/protocol.py, StoreRows): every record with its id, FSRS state, vector status and tombstone,
every history row with its time, the people rows, the workspace files' state and the portable `meta`
values. Vectors are copied as stored, never re-embedded: the SQLite file's int8 values survive the
postgres halfvec exactly (an int8 step is ~250 times a float16 rounding), so a round trip gives them back
bit for bit. Keyword rows are rebuilt by the target's own insert, from the same analysis.

The source is only read, inside one snapshot, and kept: it still holds every person's words, so the server
of the move is recorded in the home (memory/known_stores.py, without its password) once a store is in it,
and `memory purge` covers the source as well as the target. The target is written in ONE transaction per store, and
its counts are checked inside that transaction before it commits: on any failure or mismatch nothing of
the move stays in the target. What happens to a target that already holds memory is the caller's `mode`:
  - "empty" (the default): refuse it;
  - "merge": add what it lacks: records whose id it does not hold (with their vectors and history),
    people, workspace files and meta values it has no row for; what it holds stays as it is;
  - "replace": empty it first (its records, history, people and workspace files), in the same
    transaction, then copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from openclaw_cli.core.errors import Conflict, InvalidInput, NotFound, StoreError
from openclaw_cli.core.paths import SHARED_AGENT, Home
from openclaw_cli.memory.store.embedder import EmbedderIdentity
from openclaw_cli.memory.store.memory_store import MemoryStore
from openclaw_cli.memory.store.vectors import centroid

if TYPE_CHECKING:
    from openclaw_cli.memory.store.protocol import MemoryStorage
    from openclaw_cli.memory.store.records import MemoryRecord

Backend = Literal["sqlite", "postgres"]
Mode = Literal["empty", "merge", "replace"]
Progress = Callable[[int], None]
PAGE = 1000
# Kept by each backend for itself (which table holds the vectors, its format, the schema's version):
# the target writes its own. The vectors' mean is recomputed from the copied vectors.
_OWN_META = ("vector_table", "vectors_generation", "schema_version", "fts_analysis_version", "store_name")
_OWN_META_PREFIXES = ("vector_dtype:", "vector_clip:", "embedder.", centroid.META_KEY)


@dataclass(frozen=True)
class Side:
    """Where a store lives: the SQLite files of `home`, or the server at `dsn`."""

    backend: Backend
    dsn: str | None = None

    def describe(self) -> str:
        from openclaw_cli.core.dsn import mask_dsn

        return "sqlite" if self.dsn is None else f"postgres ({mask_dsn(self.dsn)})"

    def where(self, home: Home, names: list[str]) -> str:
        """The stores of `names` on this side, as the command names them."""
        if self.dsn is None:
            return ", ".join(str(home.memory_db(name)) for name in names)
        from openclaw_cli.memory.store.postgres.connection import schema_name

        return f"{self.describe()} schema {', '.join(schema_name(name) for name in names)}"


@dataclass
class StoreMove:
    """What moving one store did."""

    name: str
    records: int = 0
    tombstones: int = 0
    vectors: int = 0
    history: int = 0
    people: int = 0
    workspace_files: int = 0
    meta: int = 0
    kept: list[str] = field(default_factory=list)  # merge: ids the target held already
    replaced: int = 0  # replace: records the target held before

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.name,
            "records": self.records,
            "tombstones": self.tombstones,
            "vectors": self.vectors,
            "history": self.history,
            "people": self.people,
            "workspaceFiles": self.workspace_files,
            "meta": self.meta,
            "keptExisting": len(self.kept),
            "replacedRecords": self.replaced,
        }


@dataclass
class BackendMove:
    """The stores of one agent to move from `source` to `target`."""

    home: Home
    names: list[str]
    source: Side
    target: Side

    def total(self) -> int:
        """How many records the move copies (for a progress bar)."""
        with ExitStack() as stack:
            return sum(
                stack.enter_context(_opened(self.home, self.source, n)).count_records() for n in self.names
            )

    def run(self, mode: Mode = "empty", progress: Progress | None = None) -> list[StoreMove]:
        """Move every store; a store whose target refuses (see the module doc) stops the run before any
        later store is touched. Stores moved before stay moved (each is whole)."""
        from openclaw_cli.memory.text import jieba_dictionary

        jieba_dictionary.set_cache_dir(self.home.cache_dir)  # the target analyses Han text
        moved = []
        for name in self.names:
            with (
                _opened(self.home, self.source, name) as source,
                _opened(self.home, self.target, name) as target,
            ):
                moved.append(copy_store(name, source, target, mode, progress))
            self._remember_server()
        return moved

    def _remember_server(self) -> None:
        """The server now holds (or, as the source, still holds) this home's memory: purge must reach it
        whatever memory.backend and memory.postgres.dsn say later. Recorded only once a store is in it:
        a move that wrote nothing leaves no server for every later purge to reach."""
        from openclaw_cli.memory.known_stores import record_server
        from openclaw_cli.memory.store.records import iso, utc_now

        server = self.source.dsn or self.target.dsn
        if server is not None:
            record_server(self.home, server, "migrate-backend", iso(utc_now()) or "")


def plan_move(home: Home, agent_id: str, current: Side, to: Backend, dsn: str | None) -> BackendMove:
    """The move of `agent_id`'s stores from the `current` backend to `to` (`dsn`: the server's, when
    either side is postgres). Raises when there is nothing to move or no server to move to."""
    if to == current.backend:
        raise InvalidInput(
            f"memory.backend is already {to}",
            hint="the source is the configured backend; switch it first to move the other way",
        )
    server = dsn or current.dsn
    if server is None or not server.strip():
        raise InvalidInput("no PostgreSQL server to move to", hint="give --dsn postgresql://user@host/db")
    home.memory_dir(agent_id)  # a bad agent id is a clear error before the server is asked
    source = Side(current.backend, server if current.backend == "postgres" else None)
    target = Side(to, server if to == "postgres" else None)
    names = [name for name in (agent_id, SHARED_AGENT) if _exists(home, source, name)]
    if not names:
        raise NotFound(
            f"agent {agent_id!r} has no memory on {source.describe()}",
            hint="check --agent; `openclaw memory status` shows where memory is",
        )
    return BackendMove(home, names, source, target)


def _exists(home: Home, side: Side, name: str) -> bool:
    if side.dsn is None:
        return home.memory_db(name).exists()
    from openclaw_cli.memory.store.postgres.existing import store_exists

    return store_exists(side.dsn, name)


@contextmanager
def _opened(home: Home, side: Side, name: str) -> Iterator[MemoryStorage]:
    path = home.memory_db(name)
    if side.dsn is None:
        home.ensure(path.parent)
        store = MemoryStore.open(path)
    else:
        from openclaw_cli.memory.store.postgres.connection import open_storage

        dsn = side.dsn
        store = MemoryStore(open_storage(dsn, name), path, None, reader=lambda: open_storage(dsn, name))
    try:
        yield store.storage
    finally:
        store.close()


def copy_store(
    name: str, source: MemoryStorage, target: MemoryStorage, mode: Mode, progress: Progress | None
) -> StoreMove:
    """Copy every row of `source` into `target` in one target transaction (see the module doc)."""
    report = StoreMove(name)
    with source.snapshot(), target.transaction():
        before = _prepare(name, target, mode, report)
        identity = source.vector_identity()
        if identity is not None and source.has_vectors():
            _same_embedder(name, target, identity)
            target.ensure_vectors(EmbedderIdentity(**identity))
        keep = set(report.kept)
        with target.copy_in_bulk():
            _copy_records(source, target, keep, report, progress)
        _copy_history(source, target, keep, report)
        _copy_small_tables(source, target, report)
        if target.has_vectors():
            centroid.forget(target)
            centroid.refresh(target)
        _verify(name, target, before, report)
    return report


def _prepare(name: str, target: MemoryStorage, mode: Mode, report: StoreMove) -> tuple[int, int]:
    """Apply `mode` to the target; returns its (records, history rows) before the copy."""
    held = target.count_records(), target.count_history()
    if held == (0, 0):
        return held
    if mode == "empty":
        raise Conflict(
            f"the target of {name!r} already holds {held[0]} records and {held[1]} history rows",
            hint="nothing was written; add --merge to add what it lacks, or --replace to overwrite it",
        )
    if mode == "replace":
        report.replaced = held[0]
        _empty(target)
        return 0, 0
    report.kept = [record.id for _, record in _all_records(target)]
    return held


def _empty(target: MemoryStorage) -> None:
    rowids = [rowid for rowid, _ in _all_records(target)]
    target.remove(rowids)
    history: set[str] = set()
    last = 0
    while changes := target.history_after(last, PAGE):
        history.update(change.record_id for change in changes)
        last = changes[-1].row.seq
    target.forget_history(record_ids=sorted(history))
    target.drop_people()
    for path in target.workspace_files():
        target.drop_workspace_file(path)


def _all_records(storage: MemoryStorage) -> Iterator[tuple[int, MemoryRecord]]:
    last = 0
    while page := storage.records_after(last, PAGE):
        yield from page
        last = page[-1][0]


def _same_embedder(name: str, target: MemoryStorage, identity: dict[str, Any]) -> None:
    held = target.vector_identity()
    if target.has_vectors() and held is not None and held != identity:
        raise Conflict(
            f"the target of {name!r} holds vectors of another embedder ({held['model']}, {held['dimensions']} "
            f"dimensions) than the source's ({identity['model']}, {identity['dimensions']})",
            hint="nothing was written; move into an empty target",
        )


def _copy_records(
    source: MemoryStorage, target: MemoryStorage, keep: set[str], report: StoreMove, progress: Progress | None
) -> None:
    last = 0
    while page := source.records_after(last, PAGE):
        last = page[-1][0]
        with_vector = [rowid for rowid, r in page if not r.deleted and r.vector_status == "ready"]
        vectors = source.read_vectors(with_vector) if with_vector and source.has_vectors() else {}
        copies = [(rowid, record) for rowid, record in page if record.id not in keep]
        new = target.insert_copies([(record, vectors.get(rowid)) for rowid, record in copies])
        for rowid, (_, record) in zip(new, copies, strict=True):
            if record.deleted:  # a tombstone keeps the vector status it had, and has no vector
                target.mark_deleted(rowid, record.updated_at)
                report.tombstones += 1
        written = [rowid for rowid, (old, _) in zip(new, copies, strict=True) if old in vectors]
        _check_vectors(target, written)
        report.records += len(copies)
        report.vectors += len(written)
        if progress is not None:
            progress(len(page))


def _check_vectors(target: MemoryStorage, written: list[int]) -> None:
    stored = len(target.read_vectors(written)) if written else 0
    if stored != len(written):
        raise StoreError(
            f"{len(written) - stored} of {len(written)} copied vectors cannot be read back from the target",
            hint="nothing was written; the source is unchanged",
        )


def _copy_history(source: MemoryStorage, target: MemoryStorage, keep: set[str], report: StoreMove) -> None:
    """Every history row, but those of records the target held already (a merge keeps their own)."""
    last = 0
    while changes := source.history_after(last, PAGE):
        last = changes[-1].row.seq
        wanted = [change for change in changes if change.record_id not in keep]
        target.append_history(wanted)
        report.history += len(wanted)


def _copy_small_tables(source: MemoryStorage, target: MemoryStorage, report: StoreMove) -> None:
    """People, workspace files and portable meta values the target has no row for."""
    held_people = {(p.user_id, p.kind, p.name) for p in target.people_rows()}
    for person in source.people_rows():
        if (person.user_id, person.kind, person.name) not in held_people:
            target.put_person(person)
            report.people += 1
    held_files = target.workspace_files()
    for path, file in source.workspace_files().items():
        if path not in held_files:
            target.put_workspace_file(file)
            report.workspace_files += 1
    held_meta = target.meta_items()
    for key, value in source.meta_items().items():
        if key not in held_meta and _portable(key):
            target.set_meta(key, value)
            report.meta += 1


def _portable(key: str) -> bool:
    return key not in _OWN_META and not key.startswith(_OWN_META_PREFIXES)


def _verify(name: str, target: MemoryStorage, before: tuple[int, int], report: StoreMove) -> None:
    """Count what the target holds now against what was copied; a mismatch rolls the move back."""
    found = target.count_records(), target.count_history()
    wanted = before[0] + report.records, before[1] + report.history
    if found != wanted:
        raise StoreError(
            f"moving {name!r}: the target holds {found[0]} records and {found[1]} history rows, "
            f"{wanted[0]} and {wanted[1]} were expected",
            hint="nothing was written; the source is unchanged",
        )
