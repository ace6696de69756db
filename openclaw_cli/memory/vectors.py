"""The derived vector index: a sqlite-vec vec0 table, and an in-memory matrix for warm processes.

The vec0 table's name and the embedder that filled it live in `meta`, so a rebuild can fill a new table
and swap it in with one committed write, and a change of embedder is detected instead of mixing vectors.
A one-shot command asks vec0 for the nearest rows; a long-lived process (batch search, gateway) keeps the
vectors in a numpy matrix and scores them with one matrix-vector product, which is several times faster
than vec0's brute-force scan at 100k rows, and exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.db import get_meta, set_meta

if TYPE_CHECKING:
    import apsw
    import numpy as np

    from openclaw_cli.memory.embed import EmbedderIdentity

TABLE_KEY = "vector_table"
GENERATION_KEY = "vectors_generation"
IDENTITY_KEYS = ("embedder.provider", "embedder.model", "embedder.dimensions")


@dataclass(frozen=True)
class VectorFilter:
    """Which rows a search may return. Empty tuples mean no restriction."""

    user_id: str | None = None
    scopes: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()

    def sql(self) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if self.user_id is not None:
            clauses.append("user_id = ?")
            params.append(self.user_id)
        for column, values in (("scope", self.scopes), ("category", self.categories)):
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


def create_table(conn: apsw.Connection, dimensions: int) -> str:
    """Create a new, empty vec0 table and return its name (not yet the current one)."""
    existing = {
        str(r[0])
        for r in conn.execute("SELECT name FROM sqlite_schema WHERE name LIKE 'vec\\_%' ESCAPE '\\'")
    }
    number = 1
    while f"vec_{number}" in existing:
        number += 1
    name = f"vec_{number}"
    conn.execute(
        f"CREATE VIRTUAL TABLE {name} USING vec0("
        f"embedding float[{int(dimensions)}] distance_metric=cosine, scope text, user_id text, category text)"
    )
    return name


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
    conn: apsw.Connection, table: str, rowid: int, vector: np.ndarray, meta: tuple[str, str, str]
) -> None:
    scope, user_id, category = meta
    conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
    conn.execute(
        f"INSERT INTO {table}(rowid, embedding, scope, user_id, category) VALUES (?, ?, ?, ?, ?)",
        (rowid, vector.astype("float32").tobytes(), scope, user_id, category),
    )


def delete(conn: apsw.Connection, table: str | None, rowids: Sequence[int]) -> None:
    if table is None:
        return
    for rowid in rowids:
        conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))


def knn(
    conn: apsw.Connection, table: str, query: np.ndarray, k: int, where: VectorFilter
) -> list[tuple[int, float]]:
    """Nearest rows by cosine similarity, best first, through vec0."""
    clause, params = where.sql()
    sql = f"SELECT rowid, distance FROM {table} WHERE embedding MATCH ? AND k = ?{clause} ORDER BY distance"
    rows = conn.execute(sql, (query.astype("float32").tobytes(), int(k), *params))
    return [(int(rowid), 1.0 - float(distance)) for rowid, distance in rows]


class VectorMatrix:
    """All vectors of one table held in memory, reloaded when another writer bumps the generation."""

    def __init__(self) -> None:
        self.table: str | None = None
        self.generation = -1
        self._rowids: np.ndarray | None = None
        self._matrix: np.ndarray | None = None
        self._meta: dict[str, np.ndarray] = {}

    def refresh(self, conn: apsw.Connection) -> None:
        import numpy as np

        table, gen = current_table(conn), generation(conn)
        if table == self.table and gen == self.generation:
            return
        rows = (
            []
            if table is None
            else list(conn.execute(f"SELECT rowid, embedding, scope, user_id, category FROM {table}"))
        )
        self._rowids = np.array([r[0] for r in rows], dtype=np.int64)
        if rows:
            self._matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
                len(rows), -1
            )
        else:
            self._matrix = np.zeros((0, 1), dtype=np.float32)
        self._meta = {
            name: np.array([r[i] for r in rows], dtype=object)
            for i, name in ((2, "scope"), (3, "user_id"), (4, "category"))
        }
        self.table, self.generation = table, gen

    def knn(self, query: np.ndarray, k: int, where: VectorFilter) -> list[tuple[int, float]]:
        import numpy as np

        if self._matrix is None or self._rowids is None or len(self._rowids) == 0:
            return []
        scores = self._matrix @ query.astype(np.float32)
        mask = self._mask(where)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._rowids[i]), float(scores[i])) for i in top if np.isfinite(scores[i])]

    def _mask(self, where: VectorFilter) -> np.ndarray | None:
        import numpy as np

        mask: np.ndarray | None = None
        checks: list[tuple[str, tuple[str, ...]]] = [("scope", where.scopes), ("category", where.categories)]
        if where.user_id is not None:
            checks.append(("user_id", (where.user_id,)))
        for name, values in checks:
            if not values:
                continue
            part = np.isin(self._meta[name], list(values))
            mask = part if mask is None else mask & part
        return mask
