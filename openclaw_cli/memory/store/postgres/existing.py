"""Whether a memory database exists on a server, asked without creating it (opening one creates it)."""

from __future__ import annotations

from openclaw_cli.memory.store.postgres.connection import connect, schema_name


def store_exists(dsn: str, database: str) -> bool:
    """Whether the server at `dsn` holds the memory database `database` (an agent id, or the shared store's)."""
    conn = connect(dsn)
    try:
        row = conn.execute(
            "SELECT to_regclass(format('%%I.meta', %s::text)) IS NOT NULL", (schema_name(database),)
        ).fetchone()
        return bool(row and row[0])
    finally:
        conn.close()
