"""The memory checks `openclaw doctor` runs: each database opens, and its indexes agree with its records.

Damage is attributed (upkeep/integrity.py): damage to the records or their history calls for a salvage
(`memory recover`, run here by --fix: every record that still reads, the rest from the newest backup);
a damaged keyword or vector index is rebuilt from the records. A database the user cannot read or write
is a permission problem, never reported as corruption.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.core.findings import Finding, Severity
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.store.sqlite.connection import DatabaseDamaged, DatabasePermissionError
from openclaw_cli.memory.upkeep.integrity import REBUILD_HINT, RESTORE_HINT

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.memory.upkeep.index_check import IndexCheck


def check_memory(home: Home, agent: str, settings: Settings, fix: bool) -> list[Finding]:
    from openclaw_cli.identity.agent_config import for_agent
    from openclaw_cli.identity.persons import owner_id
    from openclaw_cli.memory.service import MemoryService

    service = MemoryService(home, agent, for_agent(settings, agent).memory, owner=owner_id(settings))
    findings: list[Finding] = []
    damaged: list[tuple[Path, str]] = []  # records damaged: salvaged (--fix) once the stores are closed
    try:
        opened = True
        on_server = service.settings.backend == "postgres"
        for path in service.db_paths():
            if not (on_server or path.exists()):
                continue
            if not on_server and (found := _schema_findings(path, fix)):
                findings += found
                if any(f.severity == "error" for f in found):
                    opened = False  # what the schema lacks, the other checks would trip over
                    continue
            try:
                service.store(path)
            except DatabasePermissionError as error:
                findings.append(Finding("memory.permissions", "error", error.message, error.hint, str(path)))
                opened = False
            except DatabaseDamaged as error:
                damaged.append((path, error.message))
                opened = False
            except OpenclawError as error:
                findings.append(Finding("memory.database", "error", error.message, error.hint, str(path)))
                opened = False
        if opened and on_server:
            findings += _server_findings(service)
        if opened:
            findings += _note_findings(service, fix)
            for report in service.check_indexes():
                if report.damaged_records:
                    damaged.append((Path(report.path), str(report.damage)))
                else:
                    findings.append(_index_finding(service, report, fix))
    finally:
        service.close()
    for path, damage in damaged:
        findings += _salvage_findings(home, path, damage, fix, service)
    return findings


def _note_findings(service: MemoryService, fix: bool) -> list[Finding]:
    """Workspace notes that are not the owner's (an older version indexed them as every person's memory, or
    the owner changed): given to the owner by the next sync (any search, `memory index`) or by --fix."""
    from openclaw_cli.memory.workspace.markdown_index import own_strays

    findings = []
    for store in service.existing_stores():
        strays = len(store.storage.stray_notes(service.owner))
        if not strays:
            continue
        where = str(store.path)
        if fix:
            moved = own_strays(store, service.owner)
            message = (
                f"{moved} workspace notes were readable by everyone; they are now {service.owner!r}'s alone"
            )
            findings.append(Finding("memory.notes", "warning", message, None, where, fixed=True))
            continue
        message = (
            f"{strays} workspace notes (MEMORY.md, memory/*.md) are not the owner's ({service.owner!r}): "
            "other people's searches may find them"
        )
        hint = "run `openclaw doctor --fix` or `openclaw memory index` to give them to the owner"
        findings.append(Finding("memory.notes", "error", message, hint, where))
    return findings


def _schema_findings(path: Path, fix: bool) -> list[Finding]:
    """What the database lacks (or has beyond) its migrations' schema (upkeep/schema.py), checked before
    it is opened as a store: opening one without its `meta` table already fails."""
    from openclaw_cli.memory.upkeep import schema

    return schema.file_findings(path, fix)


def _server_findings(service: MemoryService) -> list[Finding]:
    """The PostgreSQL server each store lives on: its version, pgvector's, the schema and its rows."""
    from openclaw_cli.memory.store.postgres import upkeep
    from openclaw_cli.memory.store.postgres.storage import PostgresStorage

    findings = []
    for store in service.existing_stores():
        if not isinstance(store.storage, PostgresStorage):
            continue
        facts = upkeep.server_status(store.storage)
        message = (
            f"PostgreSQL {facts['serverVersion']}, pgvector {facts['pgvectorVersion']}, schema {facts['schema']} "
            f"v{facts['schemaVersion']}: " + ", ".join(f"{n} {table}" for table, n in facts["rows"].items())
        )
        findings.append(Finding("memory.server", "ok", message, path=facts["server"]))
    return findings


def _salvage_findings(
    home: Home, path: Path, damage: str, fix: bool, service: MemoryService
) -> list[Finding]:
    """Damaged records: named with `memory recover`, or (--fix) salvaged, and what was lost said."""
    from openclaw_cli.memory.upkeep.recovery import recover_file, refuse_while_gateway_runs

    message = f"integrity check failed: {damage}"
    if not fix:
        return [Finding("memory.database", "error", message, RESTORE_HINT, str(path))]
    try:
        refuse_while_gateway_runs(home, "salvage the database")
        report = recover_file(path, datetime.now(UTC), apply=True, embedder_factory=service.embedder)
    except OpenclawError as error:
        return [Finding("memory.database", "error", f"{message}; {error.message}", error.hint, str(path))]
    done = report.salvage
    summary = (
        f"{message}; salvaged {done.salvaged} memories, {len(done.restored)} restored from a backup, "
        f"{len(done.lost)} lost; the damaged file is kept as {report.kept}"
    )
    findings = [Finding("memory.database", "error", summary, None, str(path), fixed=True)]
    if done.lost:
        ids = ", ".join(entry["id"] for entry in done.lost[:20]) + (" ..." if len(done.lost) > 20 else "")
        findings.append(
            Finding(
                "memory.salvage",
                "warning",
                f"{len(done.lost)} memories could not be salvaged: {ids}",
                "re-add what matters with `openclaw memory add` (the damaged file is kept beside the database)",
                str(path),
            )
        )
    return findings


def _index_finding(service: MemoryService, report: IndexCheck, fix: bool) -> Finding:
    if report.ok:
        return Finding(
            "memory.index", "ok", f"{report.records} memories, indexes consistent", path=report.path
        )
    if report.damage:  # only derived indexes (damaged records are salvaged): rebuilt from the records
        return Finding(
            "memory.database", "error", f"integrity check failed: {report.damage}", REBUILD_HINT, report.path
        )
    if report.embedder_problem:
        return Finding(
            "memory.embedder",
            "error",
            "; ".join(report.problems()),
            "fix memory.embedding in openclaw.json (`openclaw config`), then run `openclaw memory index`",
            report.path,
        )
    fixed = False
    if fix and not report.embedder_mismatch:
        service.repair_indexes()
        fixed = True
    hint = (
        "run `openclaw memory index --rebuild`"
        if report.embedder_mismatch
        else "run `openclaw memory index` (or `openclaw doctor --fix`)"
    )
    severity: Severity = (
        "warning" if fixed or (report.vectors_pending and len(report.problems()) == 1) else "error"
    )
    return Finding("memory.index", severity, "; ".join(report.problems()), hint, report.path, fixed)
