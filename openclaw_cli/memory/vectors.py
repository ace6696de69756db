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


def stored_rows(conn: apsw.Connection, table: str, rowids: Sequence[int]) -> dict[int, np.ndarray]:
    """The stored vectors of these rows (those that have one)."""
    import numpy as np

    found: dict[int, np.ndarray] = {}
    for start in range(0, len(rowids), 500):
        chunk = list(rowids[start : start + 500])
        marks = ", ".join("?" for _ in chunk)
        for rowid, blob in conn.execute(f"SELECT rowid, embedding FROM {table} WHERE rowid IN ({marks})", chunk):
            found[int(rowid)] = np.frombuffer(blob, dtype=np.float32)
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


INT8_SCAN_MIN_ROWS = 20_000  # below this the float32 scan takes under 2 ms: not worth a second copy
RESCORE_POOL = 256  # int8 candidates re-scored exactly; recall@10 against exact search measured at 1.0


class VectorMatrix:
    """All vectors of one table held in memory, reloaded when another writer bumps the generation.

    A float32 matrix-vector product over 100k x 384 reads 150 MB per query (~8 ms here). Large stores
    also keep an int8 copy scanned by onnxruntime's MatMulInteger (a quarter of the memory traffic);
    its best RESCORE_POOL rows are then re-scored exactly in float32, so results stay exact in practice.
    """

    def __init__(self) -> None:
        self.table: str | None = None
        self.generation = -1
        self._rowids: np.ndarray | None = None
        self._matrix: np.ndarray | None = None
        self._int8: _Int8Scan | None = None
        self._codes: dict[str, tuple[dict[str, int], np.ndarray]] = {}
        self._positions: dict[int, int] | None = None

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
        self._codes = {
            name: _encode([r[i] for r in rows]) for i, name in ((2, "scope"), (3, "user_id"), (4, "category"))
        }
        self._int8 = _Int8Scan.build(self._matrix) if len(rows) >= INT8_SCAN_MIN_ROWS else None
        self._positions = None
        self.table, self.generation = table, gen

    def knn(self, query: np.ndarray, k: int, where: VectorFilter) -> list[tuple[int, float]]:
        import numpy as np

        if self._matrix is None or self._rowids is None or len(self._rowids) == 0:
            return []
        query = query.astype(np.float32)
        mask = self._mask(where)
        if self._int8 is not None:
            approx = self._int8.scores(query).astype(np.float32)
            if mask is not None:
                approx = np.where(mask, approx, -np.inf)
            pool = min(max(RESCORE_POOL, 4 * k), len(approx))
            rows = np.argpartition(-approx, pool - 1)[:pool]
            rows = rows[np.isfinite(approx[rows])]
            exact = self._matrix[rows] @ query
        else:
            exact = self._matrix @ query
            if mask is not None:
                exact = np.where(mask, exact, -np.inf)
            rows = np.arange(len(exact))
        k = min(k, len(exact))
        if k == 0:
            return []
        top = np.argpartition(-exact, k - 1)[:k]
        top = top[np.argsort(-exact[top], kind="stable")]
        return [(int(self._rowids[rows[i]]), float(exact[i])) for i in top if np.isfinite(exact[i])]

    def rows(self, rowids: Sequence[int]) -> dict[int, np.ndarray]:
        if self._matrix is None or self._rowids is None:
            return {}
        if self._positions is None:
            self._positions = {int(r): i for i, r in enumerate(self._rowids)}
        found = ((rowid, self._positions.get(rowid)) for rowid in rowids)
        return {rowid: self._matrix[i] for rowid, i in found if i is not None}

    def _mask(self, where: VectorFilter) -> np.ndarray | None:
        import numpy as np

        mask: np.ndarray | None = None
        checks: list[tuple[str, tuple[str, ...]]] = [("scope", where.scopes), ("category", where.categories)]
        if where.user_id is not None:
            checks.append(("user_id", (where.user_id,)))
        for name, values in checks:
            if not values:
                continue
            index, codes = self._codes[name]
            wanted = [index[v] for v in values if v in index]
            part = np.isin(codes, wanted) if wanted else np.zeros(len(codes), dtype=bool)
            mask = part if mask is None else mask & part
        return mask


def _encode(values: list[str]) -> tuple[dict[str, int], np.ndarray]:
    """Small integer codes for a text column, so a filter is an integer comparison per row."""
    import numpy as np

    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int32, count=len(values))
    return index, codes


class _Int8Scan:
    """Approximate inner products of a query with every row, in int8 arithmetic (u8 x s8 -> int32)."""

    def __init__(self, session: Any) -> None:
        self._session = session

    @classmethod
    def build(cls, matrix: np.ndarray) -> _Int8Scan | None:
        """None when onnx/onnxruntime cannot build it: the exact float32 scan is then used instead."""
        import numpy as np

        try:
            import onnxruntime as ort
            from onnx import TensorProto, helper, numpy_helper

            scale = float(np.abs(matrix).max()) / 127 or 1.0
            weights = np.clip(np.rint(matrix / scale), -127, 127).astype(np.int8)
            rows, dims = matrix.shape
            graph = helper.make_graph(
                [helper.make_node("MatMulInteger", ["q", "w", "zero"], ["s"])],
                "int8_scan",
                [helper.make_tensor_value_info("q", TensorProto.UINT8, [1, dims])],
                [helper.make_tensor_value_info("s", TensorProto.INT32, [1, rows])],
                [
                    numpy_helper.from_array(np.ascontiguousarray(weights.T), "w"),
                    numpy_helper.from_array(np.array(128, dtype=np.uint8), "zero"),
                ],
            )
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
            model.ir_version = 8  # what every onnxruntime since 1.10 reads
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1  # measured: a second thread only adds synchronisation
            options.log_severity_level = 3
            session = ort.InferenceSession(
                model.SerializeToString(), options, providers=["CPUExecutionProvider"]
            )
        except Exception:  # any failure here only costs speed, never results
            return None
        return cls(session)

    def scores(self, query: np.ndarray) -> np.ndarray:
        import numpy as np

        scale = float(np.abs(query).max()) / 127 or 1.0
        quantised = (np.clip(np.rint(query / scale), -127, 127) + 128).astype(np.uint8)[None, :]
        return self._session.run(None, {"q": quantised})[0][0]
