"""Index upkeep of the postgres backend: what `memory index --check`, `memory index` and `memory status`
read and repair on the server, where the SQLite path counts and mends its file (upkeep/index*.py).

`records` is the truth. `keyword_rows` must hold exactly the live records, and the current vector table a
vector for every live record whose vector is `ready`. Foreign keys already keep rows of removed records out
of both; what can still drift is a live record without its keyword row, a tombstone's rows, a vector
table a killed rebuild left behind, or a keyword index written by an older text analysis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from psycopg import sql

from openclaw_cli.memory.store.postgres import keyword, vectors
from openclaw_cli.memory.store.postgres.connection import server_facts
from openclaw_cli.memory.store.postgres.records import scalar
from openclaw_cli.memory.store.postgres.schema import FTS_ANALYSIS_KEY, VERSION_KEY

if TYPE_CHECKING:
    from openclaw_cli.memory.store.embedder import EmbedderIdentity
    from openclaw_cli.memory.store.postgres.storage import PostgresStorage

_LIVE = "SELECT rowid FROM records WHERE deleted = 0"
_MISSING_KEYWORDS = f"({_LIVE} EXCEPT SELECT rowid FROM keyword_rows)"
_KEYWORD_ORPHANS = f"(SELECT rowid FROM keyword_rows EXCEPT {_LIVE})"


def analysis_version(storage: PostgresStorage) -> int:
    return int(storage.get_meta(FTS_ANALYSIS_KEY) or 1)


def stale_tables(storage: PostgresStorage) -> list[str]:
    current = storage.vector_table()
    return sorted(t for t in vectors.all_tables(storage.conn) if t != current)


def index_counts(storage: PostgresStorage) -> dict[str, Any]:
    """The counts of upkeep/index_check.IndexCheck, read in one snapshot."""
    conn = storage.conn
    with storage.snapshot():
        table = storage.vector_table()
        found: dict[str, Any] = {
            "records": scalar(conn, "SELECT count(*) FROM records WHERE deleted = 0"),
            "tombstones": scalar(conn, "SELECT count(*) FROM records WHERE deleted = 1"),
            "fts_rows": scalar(conn, "SELECT count(*) FROM keyword_rows"),
            "fts_missing": scalar(conn, f"SELECT count(*) FROM {_MISSING_KEYWORDS} AS m"),
            "fts_orphans": scalar(conn, f"SELECT count(*) FROM {_KEYWORD_ORPHANS} AS o"),
            "fts_analysis": analysis_version(storage),
            "vector_table": table,
            "stale_tables": stale_tables(storage),
            "vectors_pending": storage.pending_vectors(),
            "stored_embedder": storage.vector_identity(),
        }
        if table is not None:
            name = sql.Identifier(table)
            found["vector_rows"] = scalar(conn, sql.SQL("SELECT count(*) FROM {}").format(name))
            found["vectors_missing"] = scalar(
                conn,
                sql.SQL(
                    "SELECT count(*) FROM records WHERE deleted = 0 AND vector_status = 'ready' "
                    "AND rowid NOT IN (SELECT rowid FROM {})"
                ).format(name),
            )
            found["vector_orphans"] = scalar(
                conn, sql.SQL(f"SELECT count(*) FROM {{}} WHERE rowid NOT IN ({_LIVE})").format(name)
            )
    return found


def repair(storage: PostgresStorage) -> dict[str, int]:
    """Mend what drifted, in one transaction; returns how many rows each step touched."""
    from openclaw_cli.memory.text.analysis import ANALYSIS_VERSION

    conn = storage.conn
    done: dict[str, int] = {}
    with storage.transaction():
        if analysis_version(storage) < ANALYSIS_VERSION:
            live = conn.execute("SELECT rowid, l0, l1 FROM records WHERE deleted = 0").fetchall()
            conn.execute("DELETE FROM keyword_rows")
            for rowid, l0, l1 in live:
                keyword.write_row(conn, int(rowid), str(l0), l1)
            storage.set_meta(FTS_ANALYSIS_KEY, ANALYSIS_VERSION)
            done["fts_reanalysed"] = len(live)
        stale = stale_tables(storage)
        for table in stale:
            conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(table)))
        done["stale_tables_dropped"] = len(stale)
        done["fts_removed"] = conn.execute(
            f"DELETE FROM keyword_rows WHERE rowid IN {_KEYWORD_ORPHANS}"
        ).rowcount
        missing = conn.execute(
            f"SELECT rowid, l0, l1 FROM records WHERE rowid IN {_MISSING_KEYWORDS}"
        ).fetchall()
        for rowid, l0, l1 in missing:
            keyword.write_row(conn, int(rowid), str(l0), l1)
        done["fts_added"] = len(missing)
        done["vectors_removed"] = done["vectors_added"] = 0
        current = storage.vector_table()
        if current is not None:
            name = sql.Identifier(current)
            done["vectors_removed"] = conn.execute(
                sql.SQL(f"DELETE FROM {{}} WHERE rowid NOT IN ({_LIVE})").format(name)
            ).rowcount
            conn.execute(
                sql.SQL(
                    "UPDATE records SET vector_status = 'pending' WHERE deleted = 0 AND vector_status = 'ready' "
                    "AND rowid NOT IN (SELECT rowid FROM {})"
                ).format(name)
            )
        done["tombstones_purged"] = conn.execute("DELETE FROM records WHERE deleted = 1").rowcount
        storage.vectors_changed()
    return done


def pending_rows(storage: PostgresStorage, after: int, limit: int) -> list[tuple[int, str, str, str, str]]:
    """(rowid, L0, scope, user id, category) of live records waiting for a vector, after `after`."""
    rows = storage.conn.execute(
        "SELECT rowid, l0, scope, user_id, category FROM records WHERE deleted = 0 AND vector_status = 'pending' "
        "AND rowid > %s ORDER BY rowid LIMIT %s",
        (after, limit),
    )
    return [(int(r), str(l0), str(s), u or "", str(c)) for r, l0, s, u, c in rows]


def mark_ready(storage: PostgresStorage, rowids: list[int]) -> None:
    storage.conn.execute("UPDATE records SET vector_status = 'ready' WHERE rowid = ANY(%s)", (rowids,))


def server_status(storage: PostgresStorage) -> dict[str, Any]:
    """What `memory status` and doctor say of the server: versions, the schema, and its tables' rows."""
    from openclaw_cli.core.dsn import mask_dsn

    counts = {
        table: scalar(storage.conn, sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table)))
        for table in ("records", "history", "keyword_rows", "people", "workspace_files")
    }
    table = storage.vector_table()
    if table is not None:
        counts[table] = scalar(storage.conn, sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table)))
    return {
        "backend": "postgres",
        "server": mask_dsn(storage.dsn),
        "schema": storage.schema,
        "schemaVersion": int(storage.get_meta(VERSION_KEY) or 0),
        **server_facts(storage.conn),
        "rows": counts,
    }


def scope_counts(storage: PostgresStorage) -> dict[str, dict[str, int]]:
    """Live records per scope and category."""
    counts: dict[str, dict[str, int]] = {}
    for scope, category, number in storage.conn.execute(
        "SELECT scope, category, count(*) FROM records WHERE deleted = 0 GROUP BY scope, category ORDER BY 1, 2"
    ):
        counts.setdefault(str(scope), {})[str(category)] = int(number)
    return counts


def drop_table(storage: PostgresStorage, table: str) -> None:
    storage.conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))


def swap_in(storage: PostgresStorage, table: str, identity: EmbedderIdentity) -> int:
    """Make the filled `table` the current vector index (the old one goes), mark each live record ready or
    pending by whether it has a vector there, and rewrite the keyword rows; returns their number."""
    conn, old = storage.conn, storage.vector_table()
    conn.execute(
        sql.SQL(
            "UPDATE records SET vector_status = CASE WHEN rowid IN (SELECT rowid FROM {}) THEN 'ready' "
            "ELSE 'pending' END WHERE deleted = 0"
        ).format(sql.Identifier(table))
    )
    vectors.set_current(conn, table, identity)
    if old is not None and old != table:
        drop_table(storage, old)
    live = conn.execute("SELECT rowid, l0, l1 FROM records WHERE deleted = 0").fetchall()
    conn.execute("DELETE FROM keyword_rows")
    for rowid, l0, l1 in live:
        keyword.write_row(conn, int(rowid), str(l0), l1)
    from openclaw_cli.memory.text.analysis import ANALYSIS_VERSION

    storage.set_meta(FTS_ANALYSIS_KEY, ANALYSIS_VERSION)
    return len(live)
