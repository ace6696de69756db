"""The memory checks `openclaw doctor` runs: each database opens, and its indexes agree with its records."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openclaw_cli.errors import OpenclawError
from openclaw_cli.findings import Finding, Severity
from openclaw_cli.paths import Home

if TYPE_CHECKING:
    from openclaw_cli.config import Settings


def check_memory(home: Home, agent: str, settings: Settings, fix: bool) -> list[Finding]:
    from openclaw_cli.memory.service import MemoryService

    service = MemoryService(home, agent, settings.memory)
    findings: list[Finding] = []
    try:
        for path in service.db_paths():
            if not path.exists():
                continue
            try:
                store = service.store(path)
                problems = [str(r[0]) for r in store.conn.execute("PRAGMA quick_check")]
            except OpenclawError as error:
                findings.append(Finding("memory.database", "error", error.message, error.hint, str(path)))
                continue
            except Exception as exc:  # apsw raises CorruptError and friends from the check itself
                problems = [str(exc)]
            if problems != ["ok"]:
                findings.append(
                    Finding(
                        "memory.database",
                        "error",
                        f"integrity check failed: {problems[0]}",
                        "restore the file from a backup; it was left as it was",
                        str(path),
                    )
                )
        reports = service.check_indexes() if not findings else []
        for report in reports:
            if report.ok:
                findings.append(
                    Finding(
                        "memory.index",
                        "ok",
                        f"{report.records} memories, indexes consistent",
                        path=report.path,
                    )
                )
                continue
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
            findings.append(
                Finding("memory.index", severity, "; ".join(report.problems()), hint, report.path, fixed)
            )
    finally:
        service.close()
    return findings
