"""The schema a memory database must have, compared object by object (`memory restore`, backups, doctor).

What is expected is not a hand-kept list: it is what the migrations build. The migrations a database
records as applied are run on an empty in-memory database, the current vec0 table (named in `meta`,
with its width and format) is created there the way `vec.create_table` creates it, and both schemas are
read the same way: every table's columns (PRAGMA table_xinfo), every index's table, uniqueness,
partiality and key columns, every trigger, every virtual table's module, and `PRAGMA user_version`.

Text that may legitimately differ between two healthy stores is left out: the FTS tokenizer (older text
analysis is re-analysed by `memory index`), CHECK constraints and index WHERE clauses (an edited
migration wrote the same structure in other words), SQLite's own tables (sqlite_stat1 after ANALYZE),
and vec0 tables other than the current one (left by an interrupted rebuild, which `memory index` drops).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    import apsw

    from openclaw_cli.core.findings import Finding

Column = tuple[str, int, str | None, int, int]  # declared type, not null, default, pk position, hidden
IndexShape = tuple[str, int, int, tuple[str, ...]]  # table, unique, partial, key columns
_VEC_NAME = re.compile(r"^vec_\d+(_|$)")
_MODULE = re.compile(r"USING\s+(\w+)", re.IGNORECASE)
# Tables that can be recreated empty without losing what the records say: the change log (lost rows are
# lost either way), the names memories introduce (rebuilt from the records) and the workspace file
# stamps (the files are re-read). Everything else missing calls for a backup.
RECREATABLE = ("history", "people", "workspace_files")


@dataclass
class Schema:
    """One database's schema as the comparison sees it."""

    tables: dict[str, dict[str, Column]] = field(default_factory=dict)
    virtual: dict[str, str] = field(default_factory=dict)  # name -> module
    indexes: dict[str, IndexShape] = field(default_factory=dict)
    triggers: dict[str, str] = field(default_factory=dict)  # name -> whitespace-normalised SQL
    sql: dict[str, str] = field(default_factory=dict)  # name -> CREATE statement (to recreate one)
    user_version: int = 0


@dataclass
class Difference:
    """What one database lacks or has beyond the expected schema."""

    missing_tables: list[str] = field(default_factory=list)
    missing_columns: list[tuple[str, str]] = field(default_factory=list)  # (table, column)
    other: list[str] = field(default_factory=list)  # every other difference, said in words

    @property
    def ok(self) -> bool:
        return not (self.missing_tables or self.missing_columns or self.other)

    def describe(self) -> str:
        said = [f"table {name} is missing" for name in self.missing_tables]
        said += [f"column {table}.{column} is missing" for table, column in self.missing_columns]
        said += self.other
        more = f" (and {len(said) - 3} more)" if len(said) > 3 else ""
        return "; ".join(said[:3]) + more


def _norm(sql: str) -> str:
    return " ".join(sql.split())


def read_schema(conn: apsw.Connection, vector_table: str | None) -> Schema:
    """The schema of `conn`'s main database; of the vec0 tables, only `vector_table` and its shadows."""
    found = Schema(user_version=int(next(iter(conn.execute("PRAGMA user_version")))[0]))
    rows = list(conn.execute("SELECT type, name, tbl_name, sql FROM main.sqlite_schema"))
    for kind, name, _, sql in rows:
        name = str(name)
        if name.startswith("sqlite_") or (_VEC_NAME.match(name) and not _belongs(name, vector_table)):
            continue
        if sql is not None:
            found.sql[name] = str(sql)
        if kind == "table" and sql is not None and str(sql).upper().startswith("CREATE VIRTUAL"):
            module = _MODULE.search(str(sql))
            found.virtual[name] = module.group(1).lower() if module else "?"
        elif kind == "table":
            found.tables[name] = _columns(conn, name)
        elif kind == "trigger":
            found.triggers[name] = _norm(str(sql))
    for table in list(found.tables):
        for _, index, unique, _, partial in conn.execute(f'PRAGMA main.index_list("{table}")'):
            keys = tuple(
                str(col) if col is not None else f"<expr {cid}>"
                for _, cid, col, _, _, key in conn.execute(f'PRAGMA main.index_xinfo("{index}")')
                if key
            )
            found.indexes[str(index)] = (table, int(unique), int(partial), keys)
    return found


def _belongs(name: str, vector_table: str | None) -> bool:
    return vector_table is not None and (name == vector_table or name.startswith(vector_table + "_"))


def _columns(conn: apsw.Connection, table: str) -> dict[str, Column]:
    return {
        str(name): (
            str(kind or "").upper(),
            int(notnull),
            None if dflt is None else str(dflt),
            int(pk),
            int(hidden),
        )
        for _, name, kind, notnull, dflt, pk, hidden in conn.execute(f'PRAGMA main.table_xinfo("{table}")')
    }


def expected_schema(applied: list[str], vector_ddl: str | None) -> Schema:
    """The schema the migrations in `applied` build, with the vec0 table `vector_ddl` creates."""
    import apsw

    from openclaw_cli.memory.store.sqlite.connection import load_vec
    from openclaw_cli.memory.store.sqlite.meta import FTS_ANALYSIS_KEY, set_meta, write_txn
    from openclaw_cli.memory.store.sqlite.migrations import MIGRATIONS, applied_migrations, with_tokenizer

    conn = apsw.Connection(":memory:")
    try:
        load_vec(conn)
        applied_migrations(conn)  # creates schema_migrations, as every migrated store has it
        for name, step in MIGRATIONS:
            if name not in applied:
                continue
            with write_txn(conn):
                if callable(step):
                    step(conn)
                else:
                    conn.execute(with_tokenizer(step))
                if name == MIGRATIONS[0][0]:
                    set_meta(conn, FTS_ANALYSIS_KEY, 1)
        table = None
        if vector_ddl is not None:
            conn.execute(vector_ddl)
            table = _MODULE_TABLE.search(vector_ddl)
        return read_schema(conn, table.group(1) if table else None)
    finally:
        conn.close()


_MODULE_TABLE = re.compile(r"CREATE VIRTUAL TABLE (\w+)")


def compare(actual: Schema, expected: Schema) -> Difference:
    """Everything `actual` lacks or has beyond `expected`."""
    diff = Difference()
    gone = [name for name in expected.virtual if name not in actual.virtual]
    for name, columns in expected.tables.items():
        if name not in actual.tables:
            if not any(name.startswith(v + "_") for v in gone):  # a shadow: said with its virtual table
                diff.missing_tables.append(name)
            continue
        have = actual.tables[name]
        diff.missing_columns += [(name, c) for c in columns if c not in have]
        diff.other += [f"column {name}.{c} is not in this version's schema" for c in have if c not in columns]
        diff.other += [
            f"column {name}.{c} is declared differently"
            for c, shape in columns.items()
            if c in have and have[c] != shape
        ]
    diff.other += [
        f"table {n} is not in this version's schema" for n in actual.tables if n not in expected.tables
    ]
    diff.missing_tables[:0] = gone
    for name, module in expected.virtual.items():
        if name in gone:
            continue
        elif actual.virtual[name] != module:
            diff.other.append(f"virtual table {name} uses {actual.virtual[name]}, not {module}")
    diff.other += [
        f"virtual table {n} is not in this version's schema"
        for n in actual.virtual
        if n not in expected.virtual
    ]
    for name, shape in expected.indexes.items():
        if shape[0] in diff.missing_tables:
            continue  # said with its table
        if name not in actual.indexes:
            diff.other.append(f"index {name} is missing")
        elif actual.indexes[name] != shape:
            diff.other.append(f"index {name} is defined differently")
    diff.other += [
        f"index {n} is not in this version's schema" for n in actual.indexes if n not in expected.indexes
    ]
    for name, sql in expected.triggers.items():
        if actual.triggers.get(name) != sql:
            diff.other.append(f"trigger {name} is missing or different")
    diff.other += [
        f"trigger {n} is not in this version's schema" for n in actual.triggers if n not in expected.triggers
    ]
    if actual.user_version != expected.user_version:
        diff.other.append(
            f"user_version is {actual.user_version}, this version writes {expected.user_version}"
        )
    return diff


def vector_ddl(conn: apsw.Connection) -> str | None:
    """The statement that creates the current vec0 table as this version would, from what `meta` says of
    it; None when there is none yet."""
    from openclaw_cli.memory.store.sqlite import vec

    if not _has_meta(conn):  # said as a missing table; no vector table can be named without it
        return None
    table = vec.current_table(conn)
    identity = vec.stored_identity(conn)
    if table is None or identity is None or not re.fullmatch(r"vec_\d+", table):
        return None
    return vec.table_ddl(table, int(identity["dimensions"]), vec.table_format(conn, table))


def _has_meta(conn: apsw.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_schema WHERE name = 'meta'").fetchone() is not None


def applied_names(conn: apsw.Connection) -> list[str]:
    return [str(r[0]) for r in conn.execute("SELECT name FROM schema_migrations")]


def difference(conn: apsw.Connection) -> Difference:
    """How the database on `conn` (sqlite-vec loaded) differs from the schema its migrations build."""
    ddl = vector_ddl(conn)
    table = _MODULE_TABLE.search(ddl) if ddl else None
    actual = read_schema(conn, table.group(1) if table else None)
    diff = compare(actual, expected_schema(applied_names(conn), ddl))
    if ddl is None and (name := _named_table(conn)) is not None:
        diff.other.append(f"meta names vector table {name}, which is not a vec0 table this version makes")
    return diff


def _named_table(conn: apsw.Connection) -> str | None:
    from openclaw_cli.memory.store.sqlite import vec

    table = vec.current_table(conn) if _has_meta(conn) else None
    return table if table is not None and not re.fullmatch(r"vec_\d+", table) else None


def repair(conn: apsw.Connection, diff: Difference) -> tuple[list[str], list[str]]:
    """Recreate what can be recreated from the expected schema: tables in RECREATABLE (empty), missing
    indexes, and missing columns that may be NULL or have a default. Returns (done, left) in words."""
    from openclaw_cli.memory.store.sqlite.meta import write_txn

    expected = expected_schema(applied_names(conn), vector_ddl(conn))
    done: list[str] = []
    left: list[str] = []
    with write_txn(conn):
        for table in diff.missing_tables:
            if table not in RECREATABLE:
                left.append(f"table {table} is missing")
                continue
            conn.execute(expected.sql[table])
            for index, shape in expected.indexes.items():
                if shape[0] == table and index in expected.sql:
                    conn.execute(expected.sql[index])
            done.append(f"table {table} was missing: recreated empty")
        for table, column in diff.missing_columns:
            kind, notnull, default, _, _ = expected.tables[table][column]
            if notnull and default is None:
                left.append(f"column {table}.{column} is missing (NOT NULL without a default)")
                continue
            clause = (
                f" NOT NULL DEFAULT {default}"
                if notnull
                else ("" if default is None else f" DEFAULT {default}")
            )
            conn.execute(f'ALTER TABLE "{table}" ADD COLUMN "{column}" {kind}{clause}')
            done.append(f"column {table}.{column} was missing: added")
        existing = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'index'")}
        for index, shape in expected.indexes.items():
            if index not in existing and index in expected.sql and shape[0] not in diff.missing_tables:
                conn.execute(expected.sql[index])
                done.append(f"index {index} was missing: recreated")
    return done, left


def describe_all(diff: Difference) -> dict[str, Any]:
    return {
        "missingTables": diff.missing_tables,
        "missingColumns": [f"{t}.{c}" for t, c in diff.missing_columns],
        "other": diff.other,
    }


def file_findings(path: Path, fix: bool) -> list[Finding]:
    """`findings` for the database file at `path`; nothing when it does not open or read (damage and
    permissions are other checks' findings)."""
    import apsw

    from openclaw_cli.memory.store.sqlite.connection import load_vec
    from openclaw_cli.memory.store.sqlite.file_copy import connect

    try:
        conn = connect(path, readonly=not fix)
    except apsw.Error:
        return []
    try:
        load_vec(conn)
        return findings(conn, str(path), fix)
    except apsw.Error:
        return []
    finally:
        conn.close()


def findings(conn: apsw.Connection, where: str, fix: bool) -> list[Finding]:
    """Doctor's view of one database's schema: nothing when it is whole; what --fix recreated (fixed);
    what only a backup can bring back (error)."""
    from openclaw_cli.core.findings import Finding

    diff = difference(conn)
    if diff.ok:
        return []
    if not fix:
        return [Finding(CHECK, "error", f"schema differs: {diff.describe()}", FIX_HINT, where)]
    done, left = repair(conn, diff)
    out = []
    if done:
        out.append(Finding(CHECK, "warning", "; ".join(done), None, where, fixed=True))
    rest = difference(conn)
    if not rest.ok:
        out.append(Finding(CHECK, "error", f"schema differs: {rest.describe()}", RESTORE_HINT, where))
    return out


CHECK = "memory.schema"
FIX_HINT = "run `openclaw doctor --fix`: it recreates what the records allow; the rest needs `openclaw memory restore`"
RESTORE_HINT = (
    "restore a backup with `openclaw memory restore FILE --yes` (`openclaw memory backup --list` lists them)"
)
