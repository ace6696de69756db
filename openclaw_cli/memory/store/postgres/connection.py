"""The one way to open a memory database on PostgreSQL: connect, check pgvector, choose the schema, migrate.

Every failure a user can meet before the first query (psycopg not installed, a server that does not answer,
a refused password, no `vector` extension, a schema from a newer openclaw) becomes a one-line StoreError
that names the server without its password.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from openclaw_cli.core.dsn import mask_dsn
from openclaw_cli.core.errors import StoreError

if TYPE_CHECKING:
    import psycopg

    from openclaw_cli.memory.store.postgres.storage import PostgresStorage

CONNECT_TIMEOUT_S = 10
SCHEMA_PREFIX = "openclaw_"
KEYWORD_WORK_MEM = "32MB"  # per sort or hash of one query, not per connection
MAX_IDENTIFIER = 63  # Postgres truncates longer names: longer ones get a hash suffix instead
VECTOR_SQL = "CREATE EXTENSION vector;"
INSTALL_HINT = "install the driver with `pip install 'openclaw-cli[postgres]'`"


def schema_name(database: str) -> str:
    """The Postgres schema of one memory database (an agent id, or the shared user store's name)."""
    name = SCHEMA_PREFIX + database
    if len(name.encode("utf-8")) <= MAX_IDENTIFIER:
        return name
    digest = hashlib.sha256(database.encode("utf-8")).hexdigest()[:12]
    return name.encode("utf-8")[: MAX_IDENTIFIER - 13].decode("utf-8", "ignore") + "_" + digest


def connect(dsn: str) -> psycopg.Connection:
    """An autocommit connection (transactions are explicit: storage.transaction())."""
    try:
        import psycopg
    except ImportError as exc:
        raise StoreError(
            "memory.backend is postgres but psycopg is not installed", hint=INSTALL_HINT
        ) from exc
    try:
        return psycopg.connect(dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.OperationalError as exc:
        raise connection_error(dsn, exc) from None
    except psycopg.ProgrammingError:  # a DSN psycopg cannot parse
        raise StoreError(f"memory.postgres.dsn is not a valid connection string: {mask_dsn(dsn)}") from None


def connection_error(dsn: str, exc: Exception) -> StoreError:
    """What went wrong connecting to `dsn`, in one line without its password."""
    text = str(exc)
    where = mask_dsn(dsn)
    if "password authentication failed" in text or "no password supplied" in text:
        return StoreError(
            f"PostgreSQL refused the password for {where}",
            hint="check the password in memory.postgres.dsn or PGPASSWORD",
        )
    if "does not exist" in text and "database" in text:
        return StoreError(
            f"the database in {where} does not exist", hint="create it, or fix memory.postgres.dsn"
        )
    first = text.strip().splitlines()[-1] if text.strip() else exc.__class__.__name__
    return StoreError(
        f"cannot reach PostgreSQL at {where}: {mask_dsn(first)}",
        hint="start the server or fix memory.postgres.dsn",
    )


def ensure_vector(conn: psycopg.Connection) -> str:
    """The schema the `vector` extension lives in, creating the extension when this role may."""
    import psycopg

    found = _vector_schema(conn)
    if found is not None:
        return found
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error:
        raise StoreError(
            "the PostgreSQL database has no `vector` extension (pgvector) and this role cannot create it",
            hint=f"install pgvector on the server and run, as a superuser in this database: {VECTOR_SQL}",
        ) from None
    return _vector_schema(conn) or "public"


def _vector_schema(conn: psycopg.Connection) -> str | None:
    row = conn.execute(
        "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'vector'"
    ).fetchone()
    return None if row is None else str(row[0])


def open_storage(dsn: str, database: str) -> PostgresStorage:
    """Open (creating and migrating as needed) the memory database `database` on the server at `dsn`."""
    conn = connect(dsn)  # first: it says when psycopg is not installed
    import psycopg
    from psycopg import sql

    from openclaw_cli.memory.store.postgres import schema
    from openclaw_cli.memory.store.postgres.storage import PostgresStorage

    try:
        name = schema_name(database)
        vector_home = ensure_vector(conn)
        path = sql.SQL("{}, {}").format(sql.Identifier(name), sql.Identifier(vector_home)).as_string(conn)
        conn.execute("SELECT set_config('search_path', %s, false)", (path,))
        # A filtered HNSW scan goes on past ef_search until enough rows pass the filter (pgvector 0.8).
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        # A keyword query's matching rows and their sort stay in memory: at 100k memories, 7k matches
        # spilled to disk with the default 4 MB (p95 274 -> 215 ms, keyword benchmark, load 6).
        conn.execute(f"SET work_mem = '{KEYWORD_WORK_MEM}'")
        schema.migrate(conn, name, schema.lock_key(name), database)
    except psycopg.OperationalError as exc:
        conn.close()
        raise connection_error(dsn, exc) from None
    except BaseException:
        conn.close()
        raise
    return PostgresStorage(conn, name, dsn)


def store_names(dsn: str) -> list[str]:
    """The memory databases (agent ids, and the shared store's name) the server holds, sorted."""
    from psycopg import sql

    from openclaw_cli.memory.store.postgres.schema import NAME_KEY

    conn = connect(dsn)
    try:
        schemas = conn.execute(
            "SELECT n.nspname FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid "
            "WHERE n.nspname LIKE %s AND c.relname = 'meta'",
            (SCHEMA_PREFIX.replace("_", "\\_") + "%",),
        ).fetchall()
        names = []
        for (schema,) in schemas:
            row = conn.execute(
                sql.SQL("SELECT value FROM {} WHERE key = %s").format(sql.Identifier(schema, "meta")),
                (NAME_KEY,),
            ).fetchone()
            if row is not None:
                names.append(str(row[0]))
        return sorted(names)
    finally:
        conn.close()


def server_facts(conn: psycopg.Connection) -> dict[str, str]:
    """The server's version and pgvector's, for `doctor` and `memory status`."""
    server = conn.execute("SHOW server_version").fetchone()
    vector = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    return {
        "serverVersion": str(server[0]) if server else "unknown",
        "pgvectorVersion": str(vector[0]) if vector else "missing",
    }
