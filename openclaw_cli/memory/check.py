"""The memory checks `openclaw doctor` runs: each database opens, and its indexes agree with its records.

Damage is attributed (integrity.py): only damage to the records or their history calls for a backup;
a damaged keyword or vector index is rebuilt from the records. A database the user cannot read or write
is a permission problem, never reported as corruption.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openclaw_cli.errors import OpenclawError
from openclaw_cli.findings import Finding, Severity
from openclaw_cli.memory.db import DatabasePermissionError
from openclaw_cli.memory.integrity import REBUILD_HINT, RESTORE_HINT
from openclaw_cli.paths import Home

if TYPE_CHECKING:
    from openclaw_cli.config import Settings
    from openclaw_cli.memory.index import IndexCheck
    from openclaw_cli.memory.service import MemoryService


def check_memory(home: Home, agent: str, settings: Settings, fix: bool) -> list[Finding]:
    from openclaw_cli.agent_config import for_agent
    from openclaw_cli.memory.service import MemoryService

    service = MemoryService(home, agent, for_agent(settings, agent).memory)
    findings: list[Finding] = []
    try:
        opened = True
        for path in service.db_paths():
            if not path.exists():
                continue
            try:
                service.store(path)
            except DatabasePermissionError as error:
                findings.append(Finding("memory.permissions", "error", error.message, error.hint, str(path)))
                opened = False
            except OpenclawError as error:
                findings.append(Finding("memory.database", "error", error.message, error.hint, str(path)))
                opened = False
        if opened:
            findings += [_index_finding(service, report, fix) for report in service.check_indexes()]
    finally:
        service.close()
    return findings


def _index_finding(service: MemoryService, report: IndexCheck, fix: bool) -> Finding:
    if report.ok:
        return Finding(
            "memory.index", "ok", f"{report.records} memories, indexes consistent", path=report.path
        )
    if report.damage:
        hint = RESTORE_HINT if report.damaged_records else REBUILD_HINT
        return Finding(
            "memory.database", "error", f"integrity check failed: {report.damage}", hint, report.path
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
