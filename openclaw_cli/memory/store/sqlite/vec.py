"""The derived vector index: a sqlite-vec vec0 table (the in-memory copy for warm processes is
store/vectors/matrix.py; the backend-neutral query helpers store/vectors/query.py).

The vec0 table's name and the embedder that filled it live in `meta`, so a rebuild can fill a new table
and swap it in with one committed write, and a change of embedder is detected instead of mixing vectors.
A command without a read-ahead asks vec0 for the nearest rows; a `memory search` process and long-lived
ones (batch search, gateway) read the vectors into a numpy matrix by vec0's chunks (vec_chunks.py) and
score them there, many times faster than vec0's brute-force scan at 100k rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store import vector_codec as codec
from openclaw_cli.memory.store.sqlite.meta import get_meta, set_meta
from openclaw_cli.memory.store.vector_codec import VectorFormat

if TYPE_CHECKING:
    import apsw
    import numpy as np

    from openclaw_cli.memory.store.embedder import EmbedderIdentity
    from openclaw_cli.memory.store.protocol import VectorFilter

TABLE_KEY = "vector_table"
GENERATION_KEY = "vectors_generation"
IDENTITY_KEYS = ("embedder.provider", "embedder.model", "embedder.dimensions")
# Per table, because a rebuild fills a new int8 table while adds still go to the old (maybe float32) one.
DTYPE_KEY = "vector_dtype:{table}"
CLIP_KEY = "vector_clip:{table}"


def filter_sql(where: VectorFilter) -> tuple[str, list[Any]]:
    """`where` as SQL clauses (each starting with AND) on the scope, user_id and category columns, which
    the records table and every vec0 table share, and their parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if where.user_id is not None:
        clauses.append("user_id = ?")
        params.append(where.user_id)
    for column, values in (("scope", where.scopes), ("category", where.categories)):
        if values:
            clauses.append(f"{column} IN ({', '.join('?' for _ in values)})")
            params.extend(values)
    return "".join(f" AND {c}" for c in clauses), params


def stored_identity(conn: apsw.Connection) -> dict[str, Any] | None:
    values = [get_meta(conn, key) for key in IDENTITY_KEYS]
    if any(v is None for v in values):
        return None
    return {"provider": values[0], "model": values[1], "dimensions": int(str(values[2]))}


def identity_matches(conn: apsw.Connection, identity: EmbedderIdentity) -> bool:
    stored = stored_identity(conn)
    return stored is None or stored == identity.to_dict()


def current_table(conn: apsw.Connection) -> str | None:
    return get_meta(conn, TABLE_KEY)


def bump_generation(conn: apsw.Connection) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (GENERATION_KEY,),
    )


def generation(conn: apsw.Connection) -> int:
    return int(get_meta(conn, GENERATION_KEY) or 0)


def create_table(conn: apsw.Connection, dimensions: int, fmt: VectorFormat | None = None) -> str:
    """Create a new, empty vec0 table (int8 unless `fmt` says otherwise) and return its name.

    It is not yet the current one. Its format goes into `meta` in the same transaction.
    """
    existing = {
        str(r[0])
        for r in conn.execute("SELECT name FROM sqlite_schema WHERE name LIKE 'vec\\_%' ESCAPE '\\'")
    }
    number = 1
    while f"vec_{number}" in existing:
        number += 1
    name = f"vec_{number}"
    fmt = fmt or codec.int8_format(dimensions)
    conn.execute(table_ddl(name, dimensions, fmt))
    if fmt.is_int8:
        set_meta(conn, DTYPE_KEY.format(table=name), fmt.dtype)
        set_meta(conn, CLIP_KEY.format(table=name), fmt.clip)
    return name


def table_ddl(name: str, dimensions: int, fmt: VectorFormat) -> str:
    """The statement that creates vec0 table `name` (also the schema a restore expects, upkeep/schema.py)."""
    return (
        f"CREATE VIRTUAL TABLE {name} USING vec0(embedding {fmt.sql_type}[{int(dimensions)}] "
        "distance_metric=cosine, scope text, user_id text, category text)"
    )


def table_format(conn: apsw.Connection, table: str) -> VectorFormat:
    """How `table` stores vectors; tables made before int8 storage have no entry and are float32."""
    dtype = get_meta(conn, DTYPE_KEY.format(table=table))
    if dtype is None:
        return codec.FLOAT32
    return VectorFormat(dtype, float(get_meta(conn, CLIP_KEY.format(table=table)) or 1.0))


def drop_table(conn: apsw.Connection, table: str) -> None:
    """Drop a vec0 table and its format entries. Call inside a write transaction."""
    conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute(
        "DELETE FROM meta WHERE key IN (?, ?)", (DTYPE_KEY.format(table=table), CLIP_KEY.format(table=table))
    )


def ensure_table(conn: apsw.Connection, identity: EmbedderIdentity) -> str:
    """The current vec0 table, created for `identity` if there is none. Call inside a write transaction."""
    table = current_table(conn)
    if table is None:
        table = create_table(conn, identity.dimensions)
        set_current(conn, table, identity)
    return table


def set_current(conn: apsw.Connection, table: str, identity: EmbedderIdentity) -> None:
    for key, value in zip(
        IDENTITY_KEYS, (identity.provider, identity.model, identity.dimensions), strict=True
    ):
        set_meta(conn, key, value)
    set_meta(conn, TABLE_KEY, table)
    bump_generation(conn)


def upsert(
    conn: apsw.Connection,
    table: str,
    rowid: int,
    vector: np.ndarray,
    meta: tuple[str, str, str],
    fmt: VectorFormat | None = None,
) -> None:
    """Store `vector` at `rowid` (replacing its vector) in `table`, whose format the caller may know."""
    scope, user_id, category = meta
    fmt = fmt or table_format(conn, table)
    if _may_hold(conn, table, rowid):
        conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
    conn.execute(
        f"INSERT INTO {table}(rowid, embedding, scope, user_id, category) VALUES (?, {fmt.placeholder}, ?, ?, ?)",
        (rowid, codec.encode(vector, fmt), scope, user_id, category),
    )


def _may_hold(conn: apsw.Connection, table: str, rowid: int) -> bool:
    """Whether `table` may hold a vector at `rowid`, asked of vec0's rowid table (a plain index lookup):
    vec0's DELETE of a row it does not hold cost ~46 us, a third of writing a new record's rows. True when
    that table is not there as sqlite-vec lays it out (vec_chunks.py): then the DELETE runs as before."""
    import apsw

    try:
        return (
            conn.execute(f'SELECT 1 FROM "{table}_rowids" WHERE rowid = ?', (rowid,)).fetchone() is not None
        )
    except apsw.SQLError:
        return True


def delete(conn: apsw.Connection, table: str | None, rowids: Sequence[int]) -> None:
    if table is None:
        return
    for rowid in rowids:
        conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))


def read(conn: apsw.Connection, table: str, rowids: Sequence[int]) -> dict[int, np.ndarray]:
    """The stored vectors of `rowids` as float32 (dequantised for int8 tables); absent rows are left out."""
    fmt = table_format(conn, table)
    found: dict[int, np.ndarray] = {}
    for rowid in rowids:
        row = conn.execute(f"SELECT embedding FROM {table} WHERE rowid = ?", (rowid,)).fetchone()
        if row is not None:
            found[rowid] = codec.decode(row[0], fmt)
    return found


def knn(
    conn: apsw.Connection, table: str, query: np.ndarray, k: int, where: VectorFilter
) -> list[tuple[int, float]]:
    """Nearest rows, best first, through vec0.

    Float32 tables score by vec0's cosine. For int8 tables vec0 ranks with an int8 copy of the query;
    a few extra candidates are then re-scored against the dequantised rows with the float query, so
    scores (and order) are the same as the warm in-memory matrix gives.
    """
    import numpy as np

    fmt = table_format(conn, table)
    clause, params = filter_sql(where)
    wanted = k + max(k, 16) if fmt.is_int8 else k
    sql = (
        f"SELECT rowid, distance FROM {table} WHERE embedding MATCH {fmt.placeholder} AND k = ?{clause} "
        "ORDER BY distance"
    )
    rows = conn.execute(sql, (codec.query_blob(query, fmt), int(wanted), *params))
    hits = [(int(rowid), 1.0 - float(distance)) for rowid, distance in rows]
    if not fmt.is_int8:
        return hits
    stored = read(conn, table, [rowid for rowid, _ in hits])
    query = np.asarray(query, dtype=np.float32)
    scored = [(rowid, float(vector @ query)) for rowid, vector in stored.items()]
    scored.sort(key=lambda hit: (-hit[1], hit[0]))
    return scored[:k]


def stored_rows(conn: apsw.Connection, table: str, rowids: Sequence[int]) -> dict[int, np.ndarray]:
    """The stored vectors of these rows (those that have one), as float32 (int8 rows dequantised)."""
    fmt = table_format(conn, table)
    found: dict[int, np.ndarray] = {}
    for start in range(0, len(rowids), 500):
        chunk = list(rowids[start : start + 500])
        marks = ", ".join("?" for _ in chunk)
        for rowid, blob in conn.execute(
            f"SELECT rowid, embedding FROM {table} WHERE rowid IN ({marks})", chunk
        ):
            found[int(rowid)] = codec.decode(blob, fmt)
    return found


class TableSource:
    """Search straight from the vec0 table: right for a process that runs one query and exits."""

    def __init__(self, conn: apsw.Connection, table: str) -> None:
        self.conn = conn
        self.table = table

    def knn(self, query: np.ndarray, k: int, where: VectorFilter) -> list[tuple[int, float]]:
        return knn(self.conn, self.table, query, k, where)

    def rows(self, rowids: Sequence[int]) -> dict[int, np.ndarray]:
        return stored_rows(self.conn, self.table, rowids)


def all_rows(conn: apsw.Connection, table: str) -> list[tuple[int, bytes, str, str, str]]:
    """Every row of `table` as stored: (rowid, embedding blob, scope, user id, category)."""
    return [
        (int(r), bytes(blob), str(scope), str(user), str(category))
        for r, blob, scope, user, category in conn.execute(
            f"SELECT rowid, embedding, scope, user_id, category FROM {table}"
        )
    ]


def row_bytes(conn: apsw.Connection, fmt: VectorFormat) -> int:
    """How many bytes one stored vector of the current table takes."""
    identity = stored_identity(conn)
    return (identity["dimensions"] if identity else 0) * (1 if fmt.is_int8 else 4)


def filter_columns(conn: apsw.Connection) -> list[tuple[int, str, str, str]]:
    """(rowid, scope, user id, category) of every record: the values its vector row carries (`upsert` is
    given them from the record and `reassign` changes both), read from the records table in a fraction
    of the time vec0's text columns take."""
    return [
        (int(rowid), str(scope), str(user), str(category))
        for rowid, scope, user, category in conn.execute(
            "SELECT rowid, scope, COALESCE(user_id, ''), category FROM records"
        )
    ]


def embeddings(conn: apsw.Connection, table: str) -> Iterator[bytes]:
    """Every stored embedding blob of `table`, streamed (the vectors' mean reads them all)."""
    for (blob,) in conn.execute(f"SELECT embedding FROM {table}"):
        yield blob


def all_tables(conn: apsw.Connection) -> list[str]:
    """Every vec0 table, the current one and any a rebuild left behind: purged vectors go from all."""
    rows = conn.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'vec\\_%' ESCAPE '\\' "
        "AND sql LIKE 'CREATE VIRTUAL TABLE%'"
    )
    return [str(name) for (name,) in rows]
