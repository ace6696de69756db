"""`memory export` and `memory import` (seed 000 §9): move long-term memory between homes and machines.

Export streams the live records of this agent's databases in the format of portability/format.py, from one
read snapshot per database, in constant memory.

Import validates every record before it writes any (all problems are listed, by record index), then
writes in batches inside ONE write transaction per database, so an interrupted import leaves the store
as it was. It does not go through `writing.write_memories` (that path embeds and commits memory by memory
and judges near-duplicates); an import needs one transaction and batched embedding, so it does the two
exact checks itself, inside the transaction:
  - an id that already exists is skipped (`on_conflict="skip"`, the default) or overwritten
    (`"replace"`: the old value goes to history as an 'update' row);
  - a record whose normalised L0 text (`text.l0_hash`) equals a live memory of the same scope and user,
    or an earlier record of the same file, is skipped as a duplicate.
Vectors are never copied: records are re-embedded by the importing store's embedder, in batches. When that
store's vectors come from another embedder than the configured one, new vectors stay pending (never mixed)
and the report says to run `openclaw memory index --rebuild`. The transaction holds the database's write
lock for the whole import: other writers wait (up to the busy timeout), so import large files when the
assistant is idle. FSRS fields are kept as they are.

A JSON Lines stream may come filtered, cut or joined from a shell pipeline: its header and end lines are
advisory, what disagrees with them is a warning in the report (never an invalid record), and each part
of a joined stream is read with its own version (portability/stream.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, TypeAlias

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.memory.portability.files import ExportSource, ExportWriter, Format, unwrap
from openclaw_cli.memory.portability.format import (
    CURRENT_MAJOR,
    CURRENT_MINOR,
    FORMAT_VERSION,
    RecordError,
    check_importable,
    header,
    parse_version,
    record_to_export,
    to_record,
)
from openclaw_cli.memory.store.bulk.embedding_worker import EmbeddingWorker
from openclaw_cli.memory.store.memory_store import MemoryStore
from openclaw_cli.memory.store.vectors.cache import embed_cached_later

if TYPE_CHECKING:
    from openclaw_cli.memory.embedding.onnx_embedder import Embedder
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.memory.store.records import MemoryRecord

Progress = Callable[[int], None]
OnConflict = Literal["skip", "replace"]
PAGE = 1000
BATCH = 256
# A batch handed to the models: per database, its (record, action) pairs and their vectors to be asked for.
_Batch: TypeAlias = "list[tuple[Path, list[tuple[MemoryRecord, str]], Callable[[], list[Any]]]]"


# ---------------------------------------------------------------------------------------------- export


def iter_live_records(
    store: MemoryStore, scope: str | None = None, user_id: str | None = None
) -> Iterator[MemoryRecord]:
    """Live records in rowid order, a page at a time (keyset paging: no OFFSET rescans at 100k), without the
    workspace notes: the Markdown files are their truth, and an import could not tie a note to a file.

    Callers wanting one consistent snapshot wrap the iteration in a read transaction."""
    last = 0
    while True:
        rows = store.storage.live_after(last, PAGE, scope=scope, user_id=user_id, notes=False)
        yield from (record for _, record in rows)
        if len(rows) < PAGE:
            return
        last = rows[-1][0]


def count_exportable(service: MemoryService, scope: str | None = None, user_id: str | None = None) -> int:
    stores = service.existing_stores()
    return sum(store.storage.count_live(scope=scope, user_id=user_id, notes=False) for store in stores)


def _exporter_embedder(service: MemoryService) -> dict[str, Any] | None:
    """The identity the exporting store's vectors were made with (informational: import re-embeds)."""
    for store in service.existing_stores():
        found = store.storage.vector_identity()
        if found is not None:
            return found
    return None


def export_memories(
    service: MemoryService,
    out: BinaryIO,
    *,
    kind: Format = "json",
    scope: str | None = None,
    user_id: str | None = None,
    progress: Progress | None = None,
    now: datetime | None = None,
) -> int:
    """Write this agent's live memories (optionally one scope / user) to `out`; returns how many."""
    writer = ExportWriter(out, kind, header(service.agent_id, _exporter_embedder(service), now))
    for store in service.existing_stores():
        with store.storage.snapshot():  # one snapshot per database while a writer may be busy
            for record in iter_live_records(store, scope, user_id):
                writer.write(record_to_export(record))
                if progress is not None:
                    progress(1)
    writer.finish()
    return writer.count


# ---------------------------------------------------------------------------------------------- import


class InvalidExport(InvalidInput):
    """Records that cannot be imported; `errors` lists every one of them, `warnings` the stream's framing."""

    def __init__(self, errors: list[RecordError], total: int, warnings: list[str] | None = None) -> None:
        super().__init__(
            f"{len(errors)} of {total} records cannot be imported; nothing was imported",
            hint="fix them, or add --skip-invalid to import the others",
        )
        self.errors = errors
        self.warnings = warnings or []


@dataclass
class ImportReport:
    version: str
    dry_run: bool
    total: int = 0
    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    duplicates: list[dict[str, str]] = field(default_factory=list)
    invalid: list[RecordError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # workspace notes: the Markdown files are their truth
    pending_vectors: int = 0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "dryRun": self.dry_run,
            "records": self.total,
            "added": len(self.added),
            "replaced": len(self.replaced),
            "skippedExisting": len(self.existing),
            "skippedDuplicates": len(self.duplicates),
            "skippedInvalid": len(self.invalid),
            "skippedWorkspaceNotes": len(self.notes),
            "pendingVectors": self.pending_vectors,
            "warnings": self.warnings,
            "addedIds": self.added,
            "replacedIds": self.replaced,
            "existingIds": self.existing,
            "duplicates": self.duplicates,
            "invalid": [e.to_dict() for e in self.invalid],
        }


def _newer_minor(version: Any) -> bool:
    """A record of a newer minor version than this openclaw's: its unknown fields are ignored."""
    try:
        major, minor = parse_version(version)
    except InvalidInput:
        return False  # check_parts refuses that part
    return major == CURRENT_MAJOR and minor > CURRENT_MINOR


def _validated(
    service: MemoryService, source: ExportSource, *, derive: bool = True
) -> Iterator[tuple[int, MemoryRecord | RecordError]]:
    """Each record of `source`, built for this agent, or why it cannot be."""
    limit = service.settings.max_text_chars
    for index, item in source.items():
        if isinstance(item, RecordError):
            yield index, item
            continue
        value, line = unwrap(item)
        lenient = _newer_minor(source.version_of(item))
        try:
            yield index, to_record(value, service.agent_id, limit, lenient=lenient, derive=derive)
        except InvalidInput as exc:
            yield index, RecordError(index, exc.message, line)


def check_parts(source: ExportSource) -> None:
    """Refuse a joined stream with a part this openclaw cannot read (after a full pass over `source`)."""
    for part in source.framing.parts[1:]:  # the first part's version was checked from the header
        try:
            check_importable(part.version)
        except InvalidInput as exc:
            raise InvalidInput(f"{source.name}, {part.where()}: {exc.message}", hint=exc.hint) from exc


def validate_all(service: MemoryService, source: ExportSource) -> tuple[list[RecordError], int]:
    """Every problem of the file (bad records and repeated ids), and how many records it holds."""
    errors: list[RecordError] = []
    first_seen: dict[str, int] = {}
    total = 0
    for index, item in _validated(service, source, derive=False):
        total += 1
        if isinstance(item, RecordError):
            errors.append(item)
        elif item.id in first_seen:
            errors.append(
                RecordError(index, f"duplicate id {item.id!r} (also records[{first_seen[item.id]}])")
            )
        else:
            first_seen[item.id] = index
    return errors, total


class _Target:
    """One database an import writes to: its store (None in a dry run when it does not exist yet) and
    the embedder its new vectors come from (None: they stay pending, and `warning` says why)."""

    def __init__(self, service: MemoryService, path: Path, dry_run: bool) -> None:
        self.store: MemoryStore | None = None
        self.embedder: Embedder | None = None
        self.warning: str | None = None
        if path.exists() or not dry_run:
            self.store = service.store(path)
            if not dry_run:
                self.embedder, self.warning = self.store.usable_embedder()

    def exists(self, record_id: str) -> bool:
        return self.store is not None and self.store.exists(record_id)

    def same_text(self, record: MemoryRecord) -> str | None:
        """The id of a live memory of the same scope and user whose normalised L0 equals `record`'s."""
        if self.store is None:
            return None
        known = self.store.storage.same_text(record)
        return None if known is None else known.id

    def start_vectors(self, texts: list[str], worker: EmbeddingWorker) -> Callable[[], list[Any]]:
        """The vectors of `texts`, to be asked for later: those stored for the same texts are read now;
        the others are embedded on `worker` meanwhile."""
        embedder = self.embedder
        if embedder is None or self.store is None or not texts:
            return lambda: [None] * len(texts)
        later = embed_cached_later(
            self.store.storage, embedder, texts, lambda compute: worker.submit(compute).result
        )

        def vectors() -> list[Any]:
            from openclaw_cli.memory.embedding.onnx_embedder import EmbeddingUnavailable

            try:
                return list(later())
            except EmbeddingUnavailable as exc:
                self.embedder = None
                self.warning = f"{exc.message}; vectors are pending, run `openclaw memory index` later"
                return [None] * len(texts)

        return vectors


class _Importer:
    def __init__(self, service: MemoryService, report: ImportReport, on_conflict: OnConflict) -> None:
        self.service = service
        self.report = report
        self.on_conflict = on_conflict
        paths = list(dict.fromkeys(service.db_path(scope) for scope in ("user", "agent")))
        self.targets = {path: _Target(service, path, report.dry_run) for path in paths}
        self.seen: dict[tuple[Path, str, str | None, str], str] = {}
        self.worker = EmbeddingWorker("import-embed")

    def decide(self, record: MemoryRecord) -> Literal["add", "replace"] | None:
        """What to do with one valid record (None: skip it; the report says why)."""
        if record.workspace_note:  # an older version's export: indexed again from the files, as the owner's
            self.report.notes.append(record.id)
            return None
        path = self.service.db_path(record.scope)
        target = self.targets[path]
        action: Literal["add", "replace"] = "add"
        if any(t.exists(record.id) for t in self.targets.values()):
            if self.on_conflict == "skip" or not target.exists(record.id):
                self.report.existing.append(record.id)
                return None
            action = "replace"
        key = (path, record.scope, record.user_id, record.l0_hash)
        twin = self.seen.get(key) or target.same_text(record)
        if twin is not None:
            self.report.duplicates.append({"id": record.id, "duplicateOf": twin})
            return None
        self.seen[key] = record.id
        return action

    def start_batch(self, batch: list[tuple[MemoryRecord, str]]) -> _Batch:
        """`batch` by database, each group's vectors on their way (embedded while the previous batch is
        written: the writes stay in this thread, inside the import's transaction)."""
        by_path: dict[Path, list[tuple[MemoryRecord, str]]] = {}
        for record, action in batch:
            by_path.setdefault(self.service.db_path(record.scope), []).append((record, action))
        return [
            (path, group, self.targets[path].start_vectors([record.l0 for record, _ in group], self.worker))
            for path, group in by_path.items()
        ]

    def write_batch(self, batch: _Batch) -> None:
        for path, group, vectors in batch:
            target = self.targets[path]
            assert target.store is not None
            found = vectors()
            for (record, action), vector in zip(group, found, strict=True):
                if action == "replace":
                    target.store.replace(record, vector, reason="import --on-conflict replace")
                    self.report.replaced.append(record.id)
                else:
                    target.store.insert_record(record, vector)
                    self.report.added.append(record.id)
                self.report.pending_vectors += vector is None

    def run(self, records: Iterator[MemoryRecord], progress: Progress | None) -> None:
        """Each batch is written once the next one is full and on its way to the models. A record is
        decided before the batch before it is written: what it is compared with (ids stored before the
        import, and the texts `seen` in it) does not depend on that batch's writes."""
        batch: list[tuple[MemoryRecord, str]] = []
        started: _Batch | None = None
        try:
            for record in records:
                action = self.decide(record)
                if action is not None and self.report.dry_run:
                    (self.report.added if action == "add" else self.report.replaced).append(record.id)
                elif action is not None:
                    batch.append((record, action))
                if len(batch) >= BATCH:
                    started = self._write_then_start(started, batch)
                    batch = []
                if progress is not None:
                    progress(1)
            started = self._write_then_start(started, batch)
            if started is not None:
                self.write_batch(started)
        finally:
            self.worker.shutdown()
        self.report.warnings = sorted({t.warning for t in self.targets.values() if t.warning})
        if self.report.notes:
            self.report.warnings.append(
                f"{len(self.report.notes)} workspace notes were not imported: they are chunks of MEMORY.md and "
                "memory/*.md, indexed from those files (copy the workspace, then run `openclaw memory index`)"
            )

    def _write_then_start(
        self, started: _Batch | None, batch: list[tuple[MemoryRecord, str]]
    ) -> _Batch | None:
        """Start `batch` (if any), then write the batch started before it."""
        following = self.start_batch(batch) if batch else None
        if started is not None:
            self.write_batch(started)
        return following


def import_memories(
    service: MemoryService,
    source: ExportSource,
    *,
    on_conflict: OnConflict = "skip",
    dry_run: bool = False,
    skip_invalid: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    """Validate all of `source`, then import it in one transaction per database (see the module doc).

    Raises InvalidExport listing every bad record, before anything is written, unless `skip_invalid`.
    `progress(n)` is called as records are written (or checked, in a dry run)."""
    version = source.header.get("version")
    check_importable(version)
    errors, total = validate_all(service, source)
    check_parts(source)
    framing = list(source.framing.warnings)
    if errors and not skip_invalid:
        raise InvalidExport(errors, total, framing)
    report = ImportReport(
        version=str(version or FORMAT_VERSION), dry_run=dry_run, total=total, invalid=errors
    )
    bad = {e.index for e in errors}
    records = (item for index, item in _validated(service, source) if index not in bad)
    importer = _Importer(service, report, on_conflict)
    with ExitStack() as stack:
        if not dry_run:
            for target in importer.targets.values():
                assert target.store is not None
                stack.enter_context(service.damage_guard())
                stack.enter_context(target.store.storage.transaction())
        importer.run(records, progress)  # type: ignore[arg-type]  # errors were filtered out above
    report.warnings = framing + report.warnings
    return report
