"""The derived vector index of the postgres backend: pgvector `halfvec` tables with an HNSW cosine index.

As in the SQLite file (store/sqlite/vec.py), each embedder's vectors live in a table `vec_N` named in
`meta`, with the scope, user id and category beside each vector, so a rebuild fills a new table and swaps
it in with one committed write. halfvec keeps 16-bit floats: finer than the SQLite file's int8 (an error
of ~5e-4 of a unit component against ~2e-3), half the size of float32, and HNSW indexes it up to 4000
dimensions (the composite vectors are 896).

A query asks the HNSW index for a few more candidates than wanted, with the filter inside the query
(pgvector 0.8's iterative scan goes on until enough rows pass it), and re-scores them exactly as the
SQLite backend does: the dot product of the stored vector with the float query.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from psycopg import sql

from openclaw_cli.memory.store.postgres.records import filter_sql
from openclaw_cli.memory.store.protocol import StoredRows
from openclaw_cli.memory.store.vector_codec import FLOAT16_BE

if TYPE_CHECKING:
    import numpy as np
    import psycopg

    from openclaw_cli.memory.store.embedder import EmbedderIdentity
    from openclaw_cli.memory.store.protocol import VectorFilter

TABLE_KEY = "vector_table"
GENERATION_KEY = "vectors_generation"
IDENTITY_KEYS = ("embedder.provider", "embedder.model", "embedder.dimensions")
HALFVEC_HEADER = 4  # halfvec_send: int16 dimensions, int16 unused, then big-endian float16 values
_READ_CHUNK = 5000


def literal(vector: np.ndarray) -> str:
    """A vector as pgvector's text input, '[x,y,...]' (sent as a bound parameter)."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def get_meta(conn: psycopg.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: psycopg.Connection, key: str, value: Any) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        (key, str(value)),
    )


def current_table(conn: psycopg.Connection) -> str | None:
    return get_meta(conn, TABLE_KEY)


def stored_identity(conn: psycopg.Connection) -> dict[str, Any] | None:
    values = [get_meta(conn, key) for key in IDENTITY_KEYS]
    if any(v is None for v in values):
        return None
    return {"provider": values[0], "model": values[1], "dimensions": int(str(values[2]))}


def bump_generation(conn: psycopg.Connection) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (%s, '1') "
        "ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + 1)::text",
        (GENERATION_KEY,),
    )


def generation(conn: psycopg.Connection) -> int:
    return int(get_meta(conn, GENERATION_KEY) or 0)


def all_tables(conn: psycopg.Connection) -> list[str]:
    """Every vector table of this schema, the current one and any a rebuild left behind."""
    rows = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename ~ '^vec_[0-9]+$'"
    )
    return [str(name) for (name,) in rows]


def create_table(conn: psycopg.Connection, dimensions: int) -> str:
    """A new, empty vector table with its HNSW index; not yet the current one."""
    existing = set(all_tables(conn))
    number = 1
    while f"vec_{number}" in existing:
        number += 1
    name = f"vec_{number}"
    conn.execute(
        sql.SQL(
            "CREATE TABLE {} (rowid bigint PRIMARY KEY REFERENCES records(rowid) ON DELETE CASCADE, "
            "embedding halfvec({}) NOT NULL, scope text NOT NULL, user_id text NOT NULL, category text NOT NULL)"
        ).format(sql.Identifier(name), sql.Literal(int(dimensions)))
    )
    conn.execute(
        sql.SQL("CREATE INDEX {} ON {} USING hnsw (embedding halfvec_cosine_ops)").format(
            sql.Identifier(f"{name}_hnsw"), sql.Identifier(name)
        )
    )
    return name


def ensure_table(conn: psycopg.Connection, identity: EmbedderIdentity) -> str:
    table = current_table(conn)
    if table is None:
        table = create_table(conn, identity.dimensions)
        set_current(conn, table, identity)
    return table


def set_current(conn: psycopg.Connection, table: str, identity: EmbedderIdentity) -> None:
    """Make `table` the current vector index, made by `identity`."""
    for key, value in zip(
        IDENTITY_KEYS, (identity.provider, identity.model, identity.dimensions), strict=True
    ):
        set_meta(conn, key, value)
    set_meta(conn, TABLE_KEY, table)
    bump_generation(conn)


def upsert(
    conn: psycopg.Connection, table: str, rowid: int, vector: np.ndarray, meta: tuple[str, str, str]
) -> None:
    scope, user_id, category = meta
    conn.execute(
        sql.SQL(
            "INSERT INTO {} (rowid, embedding, scope, user_id, category) VALUES (%s, %s::halfvec, %s, %s, %s) "
            "ON CONFLICT (rowid) DO UPDATE SET embedding = EXCLUDED.embedding, scope = EXCLUDED.scope, "
            "user_id = EXCLUDED.user_id, category = EXCLUDED.category"
        ).format(sql.Identifier(table)),
        (rowid, literal(vector), scope, user_id, category),
    )


def delete(conn: psycopg.Connection, tables: Sequence[str], rowids: Sequence[int]) -> None:
    for table in tables:
        conn.execute(
            sql.SQL("DELETE FROM {} WHERE rowid = ANY(%s)").format(sql.Identifier(table)), (list(rowids),)
        )


def reassign(conn: psycopg.Connection, rowid: int, user_id: str, scope: str | None = None) -> None:
    for table in all_tables(conn):
        conn.execute(
            sql.SQL("UPDATE {} SET user_id = %s, scope = coalesce(%s, scope) WHERE rowid = %s").format(
                sql.Identifier(table)
            ),
            (user_id, scope, rowid),
        )


def knn(
    conn: psycopg.Connection, table: str, query: np.ndarray, k: int, where: VectorFilter
) -> list[tuple[int, float]]:
    """The `k` nearest rows, best first: HNSW candidates re-scored by their exact dot with the query."""
    clause, params = filter_sql(where)
    wanted = k + max(k, 16)
    text = literal(query)
    rows = conn.execute(
        sql.SQL(
            "SELECT rowid, -((embedding::vector) <#> %s::vector) AS score FROM ("
            "SELECT rowid, embedding FROM {} WHERE true"
            + clause
            + " ORDER BY embedding <=> %s::halfvec LIMIT %s"
            ") AS candidates ORDER BY score DESC, rowid LIMIT %s"
        ).format(sql.Identifier(table)),
        [text, *params, text, wanted, k],
    )
    return [(int(rowid), float(score)) for rowid, score in rows]


def read(conn: psycopg.Connection, table: str, rowids: Sequence[int]) -> dict[int, np.ndarray]:
    """The stored vectors of these rows as float32; rows without one are left out."""
    import numpy as np

    rows = conn.execute(
        sql.SQL("SELECT rowid, halfvec_send(embedding) FROM {} WHERE rowid = ANY(%s)").format(
            sql.Identifier(table)
        ),
        (list(rowids),),
    )
    return {
        int(rowid): np.frombuffer(bytes(blob)[HALFVEC_HEADER:], dtype=">f2").astype(np.float32)
        for rowid, blob in rows
    }


def stored_rows(conn: psycopg.Connection, table: str | None, generation_now: int) -> StoredRows:
    """Every row of `table` for the warm in-memory matrix (store/vectors/matrix.py), without numpy."""
    if table is None:
        return StoredRows(None, generation_now, FLOAT16_BE, [])
    rows = conn.execute(
        sql.SQL(
            "SELECT rowid, substring(halfvec_send(embedding) FROM %s), scope, user_id, category FROM {} "
            "ORDER BY rowid"
        ).format(sql.Identifier(table)),
        (HALFVEC_HEADER + 1,),
    )
    found = [(int(r), bytes(blob), str(scope), str(user), str(cat)) for r, blob, scope, user, cat in rows]
    return StoredRows(table, generation_now, FLOAT16_BE, found)


def embeddings(conn: psycopg.Connection, table: str) -> Iterator[bytes]:
    """Every stored vector of `table` in the FLOAT16_BE layout, streamed (the vectors' mean reads them all)."""
    with conn.cursor() as cursor:
        cursor.execute(
            sql.SQL("SELECT substring(halfvec_send(embedding) FROM %s) FROM {}").format(
                sql.Identifier(table)
            ),
            (HALFVEC_HEADER + 1,),
        )
        while batch := cursor.fetchmany(_READ_CHUNK):
            for (blob,) in batch:
                yield bytes(blob)


class TableSource:
    """Search straight from the vector table: right for a process that runs one query and exits."""

    def __init__(self, conn: psycopg.Connection, table: str) -> None:
        self.conn = conn
        self.table = table

    def knn(self, query: np.ndarray, k: int, where: VectorFilter) -> list[tuple[int, float]]:
        return knn(self.conn, self.table, query, k, where)

    def rows(self, rowids: Sequence[int]) -> dict[int, np.ndarray]:
        return read(self.conn, self.table, rowids)
