"""What `openclaw memory restore FILE` would put in, shown before anything changes (without --yes).

The copy is checked as a restore checks it (integrity and schema, backup.problem_of); a copy that would be
refused is refused here in the same words. Then its contents are counted, read-only: live memories by
category, persons, the oldest and newest memory, the last schema migration it records and the embedder its
vectors were made with; beside them, what the live database holds now, which a restore would replace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.memory.upkeep.backup import connect, problem_of


@dataclass
class RestorePreview:
    source: str
    database: str
    records: int
    by_category: dict[str, int] = field(default_factory=dict)
    persons: int = 0
    oldest: str | None = None
    newest: str | None = None
    migration: str | None = None  # the last schema migration the copy records: its version
    embedder: str | None = None
    current_records: int | None = None  # the live database's memories; None when there is none

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "database": self.database,
            "records": self.records,
            "byCategory": self.by_category,
            "persons": self.persons,
            "oldest": self.oldest,
            "newest": self.newest,
            "schemaVersion": self.migration,
            "embedder": self.embedder,
            "currentRecords": self.current_records,
        }


def preview(db_path: Path, source: Path) -> RestorePreview:
    """Count what the copy at `source` holds (refused, as a restore would be, when it is not a good copy)."""
    problem = problem_of(source, thorough=True)
    if problem is not None:
        raise InvalidInput(f"cannot restore {source}: {problem}", hint=f"{db_path} was not changed")
    conn = connect(source, readonly=True)
    try:
        live = "FROM records WHERE deleted = 0"
        by_category = {
            str(c): int(n) for c, n in conn.execute(f"SELECT category, count(*) {live} GROUP BY 1")
        }
        row = conn.execute(
            f"SELECT count(DISTINCT user_id), min(created_at), max(created_at) {live}"
        ).fetchone()
        persons, oldest, newest = row if row is not None else (0, None, None)
        last = conn.execute("SELECT max(name) FROM schema_migrations").fetchone()
        migration = None if last is None else last[0]
        meta = dict(
            conn.execute("SELECT key, value FROM meta WHERE key IN ('embedder.model', 'embedder.dimensions')")
        )
    finally:
        conn.close()
    embedder = (
        f"{meta['embedder.model']} ({meta.get('embedder.dimensions')})" if "embedder.model" in meta else None
    )
    found = RestorePreview(
        str(source), str(db_path), sum(by_category.values()), by_category, int(persons or 0)
    )
    found.oldest, found.newest, found.migration, found.embedder = oldest, newest, migration, embedder
    if db_path.is_file() and problem_of(db_path) is None:
        from openclaw_cli.memory.upkeep.restore import live_records

        found.current_records = live_records(db_path)
    return found
