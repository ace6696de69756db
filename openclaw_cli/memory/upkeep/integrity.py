"""Page-level damage in a memory database, attributed to the tables it hits.

What to do about damage depends on where it is: the keyword (FTS5) and vector (vec0) tables are derived
from `records` and can be rebuilt from it (`memory index --rebuild`); damage to `records`, `history`,
`meta` or `schema_migrations` can only be undone from a backup. `PRAGMA quick_check` over the whole file
says whether anything is wrong; `PRAGMA quick_check(table)` (SQLite >= 3.33) then says which tables.
Doctor, `memory index --check`, rebuild and the write/search paths all use this one function, so they
agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openclaw_cli.memory.store.sqlite import vec

if TYPE_CHECKING:
    import apsw

_DERIVED = re.compile(r"^(records_fts(_\w+)?|vec_\d+(_\w+)?)$")
REBUILD_HINT = (
    "run `openclaw memory index --rebuild`: the records are intact and the index is rebuilt from them"
)
RESTORE_HINT = (
    "run `openclaw memory recover --yes` (or `openclaw doctor --fix`): it salvages every record that still "
    "reads, brings back the rest from the newest backup and keeps the damaged file; it was left as it was"
)


def is_derived(table: str) -> bool:
    """The FTS5 table, every vec0 table, and their shadow tables."""
    return bool(_DERIVED.match(table))


@dataclass
class Damage:
    """`derived`/`core`: damaged tables by kind; `unplaced`: damage no table check reproduces (e.g. pages
    no table uses), which a rebuild's VACUUM clears."""

    derived: list[str] = field(default_factory=list)
    core: list[str] = field(default_factory=list)
    unplaced: list[str] = field(default_factory=list)
    first: str = ""

    @property
    def ok(self) -> bool:
        return not (self.derived or self.core or self.unplaced)

    def describe(self) -> str:
        if self.core:
            return f"records damaged (tables {', '.join(self.core)}): {self.first}"
        if self.derived:
            return f"derived index damaged (tables {', '.join(self.derived)}): {self.first}"
        return f"unused pages damaged: {self.first}" if self.unplaced else "ok"


def _messages(conn: apsw.Connection, target: str = "") -> list[str]:
    """quick_check's lines; an error raised by the check itself is one more line."""
    sql = "PRAGMA quick_check" + (f'("{target}")' if target else "")
    try:
        rows = [str(r[0]) for r in conn.execute(sql)]
    except Exception as exc:  # apsw raises CorruptError and friends from the check itself
        return [f"{type(exc).__name__}: {exc}"]
    lines = [line for row in rows for line in row.splitlines() if not line.startswith("*** in database")]
    return [] if lines == ["ok"] else lines


def find_damage(conn: apsw.Connection) -> Damage:
    """quick_check of the whole file, then of each real table when it fails (to say where)."""
    damage = Damage()
    whole = _messages(conn)
    if not whole:
        return damage
    damage.first = whole[0]
    tables = [
        str(r[0])
        for r in conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        )
    ]
    for table in tables:
        if _messages(conn, table):
            (damage.derived if is_derived(table) else damage.core).append(table)
    if not (damage.derived or damage.core):
        damage.unplaced = whole
    return damage


def drop_derived(conn: apsw.Connection) -> None:
    """Remove the keyword and every vector table with their shadow tables, however damaged, and recreate
    an empty keyword index; the caller then refills both from `records`.

    DROP TABLE walks a table's pages to free them and fails on a damaged one, so the schema rows go
    instead (PRAGMA writable_schema) in one transaction: a crash rolls it back, and other connections
    reload the schema because the schema cookie moves. The pages those tables used are left unreferenced;
    the VACUUM that follows writes a new file without them. Chosen over building a fresh file and
    renaming it into place because that rename would race other processes holding the old file and its
    WAL open, while this stays inside SQLite's own locking and journaling.
    """
    from openclaw_cli.memory.store.sqlite.meta import FTS_ANALYSIS_KEY, set_meta, write_txn
    from openclaw_cli.memory.store.sqlite.migrations import FTS_DDL, with_tokenizer
    from openclaw_cli.memory.text.analysis import ANALYSIS_VERSION

    with write_txn(conn):
        names = [str(r[0]) for r in conn.execute("SELECT name FROM sqlite_schema")]
        doomed = [n for n in names if is_derived(n)]
        owners = {str(r[0]) for r in conn.execute("SELECT tbl_name FROM sqlite_schema")}
        version = int(next(iter(conn.execute("PRAGMA schema_version")))[0])
        conn.execute("PRAGMA writable_schema = ON")
        try:
            conn.executemany(
                "DELETE FROM sqlite_schema WHERE name = ? OR tbl_name = ?", [(n, n) for n in doomed]
            )
            if "sqlite_sequence" in owners:
                conn.execute("DELETE FROM sqlite_sequence WHERE name GLOB 'vec_[0-9]*'")
            conn.execute(f"PRAGMA schema_version = {version + 1}")
        finally:
            conn.execute("PRAGMA writable_schema = OFF")
        conn.execute(with_tokenizer(FTS_DDL))
        conn.execute(
            "DELETE FROM meta WHERE key = ? OR key GLOB 'vector_dtype:*' OR key GLOB 'vector_clip:*'",
            (vec.TABLE_KEY,),
        )
        conn.execute("UPDATE records SET vector_status = 'pending' WHERE deleted = 0")
        set_meta(conn, FTS_ANALYSIS_KEY, ANALYSIS_VERSION)  # empty, so current
        vec.bump_generation(conn)
    conn.execute("VACUUM")
