"""The in-memory copy of one vector table, for warm processes (batch search, gateway, benchmarks).

A one-shot command asks the backend for the nearest rows (store/sqlite/vec.py, store/postgres/vectors.py); a
long-lived process keeps the vectors here and scores them in numpy, several times faster than vec0's
brute-force scan at 100k rows. The rows come through the storage Protocol (`stored_vectors`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store import vector_codec as codec
from openclaw_cli.memory.store.protocol import StoredRows
from openclaw_cli.memory.store.vector_codec import VectorFormat
from openclaw_cli.memory.store.vectors import VectorFilter, scale_legs

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.protocol import MemoryStorage

INT8_SCAN_MIN_ROWS = 20_000  # below this the float32 scan takes under 2 ms: not worth a second copy
RESCORE_POOL = 256  # int8 candidates re-scored exactly; recall@10 against exact search measured at 1.0
SIGN_PREFILTER_MIN_ROWS = 20_000  # int8 tables: below this every row is scored, in chunks
# Rows the sign-bit prefilter passes on to exact scoring. At 100k x 896 synthetic clustered rows the
# recall@10 against exact search was the same from 1024 to 8192 (what is lost, ~1%, is lost to int8
# rounding, not to the prefilter), and each row rescored costs a gather of 896 bytes.
SIGN_POOL = 2048
SAMPLE_STRIDE = 16  # _best's bound comes from every 16th score of a large array
_CHUNK = 8192  # rows converted to float32 at a time when an int8 matrix is scored in full


def read_rows(storage: MemoryStorage) -> StoredRows:
    """The current vector table's rows. Plain reads, no numpy: safe on a thread of its own while
    another imports numpy (two threads importing numpy at once can break the import)."""
    return storage.stored_vectors()


class VectorMatrix:
    """All vectors of one table held in memory, reloaded when another writer bumps the generation.

    int8 tables stay int8 in memory (100k x 896 dims = 90 MB). Large ones also keep each row's sign
    bits (112 bytes a row at 896 dims): a query first ranks rows by weighted sign disagreement, which
    reads an eighth of the int8 bytes, and the best SIGN_POOL rows are then scored exactly against the
    dequantised rows. Float32 tables (made before int8 storage) keep the float matrix and, when large,
    an int8 copy scanned by onnxruntime's MatMulInteger whose best RESCORE_POOL rows are re-scored.
    """

    def __init__(self) -> None:
        self.table: str | None = None
        self.generation = -1
        self._rowids: np.ndarray | None = None
        self._matrix: np.ndarray | None = None
        self._int8: _Int8Scan | None = None
        self._rows8: np.ndarray | None = None
        self._step = 1.0
        self._signs: np.ndarray | None = None
        self._codes: dict[str, tuple[dict[str, int], np.ndarray]] = {}
        self._positions: dict[int, int] | None = None

    def refresh(self, storage: MemoryStorage) -> None:
        if not self.stale(storage):
            return
        self.load(read_rows(storage))

    def stale(self, storage: MemoryStorage) -> bool:
        return (storage.vector_table(), storage.vector_generation()) != (self.table, self.generation)

    def load(self, stored: StoredRows) -> None:
        """Hold `stored` (read_rows): the vectors as numpy arrays, and the filter columns as codes."""
        import numpy as np

        rows, fmt = stored.rows, stored.fmt
        self._rowids = np.array([r[0] for r in rows], dtype=np.int64)
        self._codes = {
            name: _encode([str(r[i]) for r in rows])
            for i, name in ((2, "scope"), (3, "user_id"), (4, "category"))
        }
        self._matrix = self._rows8 = self._signs = self._int8 = None
        if fmt.is_int8:
            self._load_int8(b"".join(r[1] for r in rows), len(rows), fmt)
        elif rows:
            # float32, or the postgres backend's 16-bit floats widened to float32
            matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=fmt.numpy_dtype).reshape(len(rows), -1)
            self._matrix = matrix.astype(np.float32, copy=False)
            self._int8 = _Int8Scan.build(self._matrix) if len(rows) >= INT8_SCAN_MIN_ROWS else None
        self._positions = None
        self.table, self.generation = stored.table, stored.generation

    @classmethod
    def of_int8(cls, rowids: Sequence[int], blob: bytes, fmt: VectorFormat) -> VectorMatrix:
        """A matrix of int8 rows given directly (the transcript index's vectors), with no filter columns."""
        import numpy as np

        matrix = cls()
        matrix._rowids = np.asarray(rowids, dtype=np.int64)
        matrix._codes = {
            name: ({}, np.zeros(len(rowids), dtype=np.int32)) for name in ("scope", "user_id", "category")
        }
        matrix._load_int8(blob, len(rowids), fmt)
        return matrix

    def _load_int8(self, blob: bytes, count: int, fmt: VectorFormat) -> None:
        import numpy as np

        self._rows8 = np.frombuffer(blob, dtype=np.int8).reshape(count, -1) if count else None
        self._step = fmt.step
        if self._rows8 is not None and count >= SIGN_PREFILTER_MIN_ROWS:
            # Word-major: each 64-dim word of every row is one contiguous uint64 array (see _sign_pool).
            self._signs = np.ascontiguousarray(codec.sign_words(self._rows8).T)

    def knn(self, query: np.ndarray, k: int, where: VectorFilter) -> list[tuple[int, float]]:
        import numpy as np

        if self._rowids is None or len(self._rowids) == 0:
            return []
        query = np.asarray(query, dtype=np.float32)
        mask = self._mask(where)
        if self._rows8 is not None:
            rows, exact = self._int8_candidates(query, k, mask)
        elif self._matrix is not None:
            rows, exact = self._float_candidates(query, k, mask)
        else:
            return []
        return self._top(rows, exact, k)

    def knn_scaled(
        self,
        query: np.ndarray,
        legs: Sequence[int],
        scalings: Sequence[Sequence[float]],
        k: int,
        where: VectorFilter,
    ) -> list[list[tuple[int, float]]]:
        """`knn` for several weightings of one query's legs at once (see `knn_scaled` below).

        The sign prefilter counts each word's disagreements once for all weightings (a positive factor
        keeps the signs), and the candidates are scored exactly once per leg, so two weightings cost
        little more than one. Each weighting keeps its own candidate pool, as `knn` would.
        """
        import numpy as np

        queries = [scale_legs(query, legs, factors) for factors in scalings]
        if self._rowids is None or len(self._rowids) == 0:
            return [[] for _ in queries]
        if self._rows8 is None or sum(legs) != self._rows8.shape[1]:
            return [self.knn(q, k, where) for q in queries]
        mask = self._mask(where)
        if self._signs is None:  # every row scored: once per leg, shared by the weightings
            return self._full_scan_scaled(np.asarray(query, dtype=np.float32), legs, scalings, k, mask)
        step = np.float32(self._step)
        out = []
        for query_n, rows in zip(
            queries, self._sign_pools(queries, max(SIGN_POOL, 8 * k), mask), strict=True
        ):
            out.append(self._top(rows, _dot(self._rows8[rows], query_n) * step, k))
        return out

    def _full_scan_scaled(
        self,
        query: np.ndarray,
        legs: Sequence[int],
        scalings: Sequence[Sequence[float]],
        k: int,
        mask: np.ndarray | None,
    ) -> list[list[tuple[int, float]]]:
        import numpy as np

        assert self._rowids is not None
        rows = np.arange(len(self._rowids))
        used = [any(factors[n] != 0 for factors in scalings) for n in range(len(legs))]
        dots = self._leg_dots(query, legs, used, rows)
        step = np.float32(self._step)
        out = []
        for factors in scalings:
            parts = [dot * np.float32(f) for dot, f in zip(dots, factors, strict=True) if f != 0]
            scores = (np.sum(parts, axis=0) if parts else np.zeros(len(rows), np.float32)) * step
            out.append(self._top(rows, scores if mask is None else np.where(mask, scores, -np.inf), k))
        return out

    def _leg_dots(
        self, query: np.ndarray, legs: Sequence[int], used: Sequence[bool], rows: np.ndarray
    ) -> list[np.ndarray]:
        """Each used leg's dot product of every int8 row (`rows` = all positions) with the query's leg,
        not yet times the step; an unused leg (weighted 0 everywhere) gets zeros."""
        import numpy as np

        assert self._rows8 is not None
        out = []
        start = 0
        for width, wanted in zip(legs, used, strict=True):
            dots = np.zeros(len(rows), dtype=np.float32)
            if wanted:
                part = query[start : start + width]
                for at in range(0, len(rows), _CHUNK):
                    block = self._rows8[at : at + _CHUNK, start : start + width]
                    dots[at : at + len(block)] = _dot(block, part)
            out.append(dots)
            start += width
        return out

    def _top(self, rows: np.ndarray, exact: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The k best of `rows` by their `exact` scores (row positions in the matrix), as (rowid, score)."""
        import numpy as np

        assert self._rowids is not None
        k = min(k, len(exact))
        if k == 0:
            return []
        top = np.argpartition(-exact, k - 1)[:k]
        top = top[np.argsort(-exact[top], kind="stable")]
        return [(int(self._rowids[rows[i]]), float(exact[i])) for i in top if np.isfinite(exact[i])]

    def rows(self, rowids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these rows, as float32 (int8 rows dequantised)."""
        import numpy as np

        if self._rowids is None or (self._matrix is None and self._rows8 is None):
            return {}
        if self._positions is None:
            self._positions = {int(r): i for i, r in enumerate(self._rowids)}
        found = [(rowid, i) for rowid in rowids if (i := self._positions.get(rowid)) is not None]
        if self._rows8 is not None:
            # One gather and one conversion for all rows (same values as row by row).
            block = self._rows8[[i for _, i in found]].astype(np.float32) * np.float32(self._step)
            return {r: block[n] for n, (r, _) in enumerate(found)}
        assert self._matrix is not None
        return {r: self._matrix[i] for r, i in found}

    def _float_candidates(
        self, query: np.ndarray, k: int, mask: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        assert self._matrix is not None
        if self._int8 is not None:
            approx = self._int8.scores(query).astype(np.float32)
            rows = _best(approx, max(RESCORE_POOL, 4 * k), mask)
            return rows, self._matrix[rows] @ query
        exact = self._matrix @ query
        if mask is not None:
            exact = np.where(mask, exact, -np.inf)
        return np.arange(len(exact)), exact

    def _int8_candidates(
        self, query: np.ndarray, k: int, mask: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Candidate rows and their exact scores against the dequantised int8 rows."""
        import numpy as np

        assert self._rows8 is not None
        if self._signs is not None:
            rows = self._sign_pool(query, max(SIGN_POOL, 8 * k), mask)
            return rows, _dot(self._rows8[rows], query) * np.float32(self._step)
        exact = np.concatenate(
            [_dot(self._rows8[start : start + _CHUNK], query) for start in range(0, len(self._rows8), _CHUNK)]
        ) * np.float32(self._step)
        if mask is not None:
            exact = np.where(mask, exact, -np.inf)
        return np.arange(len(exact)), exact

    def _sign_pool(self, query: np.ndarray, pool: int, mask: np.ndarray | None) -> np.ndarray:
        """The rows whose signs agree best with the query's, each 64-dim word weighted by the query's
        norm in it, so any weighting of a composite query's halves is followed."""
        return self._sign_pools([query], pool, mask)[0]

    def _sign_pools(
        self, queries: Sequence[np.ndarray], pool: int, mask: np.ndarray | None
    ) -> list[np.ndarray]:
        """`_sign_pool` of each query; a word's disagreement counts are computed once for all queries
        with the same signs in it (weightings of one query's halves)."""
        import numpy as np

        assert self._signs is not None
        words = self._signs.shape[0]
        counts: dict[tuple[int, int], np.ndarray] = {}
        out = []
        for query in queries:
            query_words = codec.sign_words(query[None, :])[0]
            weights = codec.word_weights(query, words)
            # One 64-dim word at a time: no (rows x words) temporary, and no BLAS call, whose thread pool
            # measured 20-60x slower than this loop on shared, busy cores.
            disagreement = np.zeros(self._signs.shape[1], dtype=np.float32)
            for word in np.flatnonzero(weights):
                key = (int(word), int(query_words[word]))
                if key not in counts:
                    counts[key] = np.bitwise_count(self._signs[word] ^ query_words[word])
                disagreement += counts[key] * weights[word]
            out.append(_best(-disagreement, pool, mask))
        return out

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


def _dot(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """int8 rows . float32 query without a float32 copy of the rows (einsum converts as it goes)."""
    import numpy as np

    return np.einsum("ij,j->i", rows, query, dtype=np.float32, casting="unsafe")


def _best(scores: np.ndarray, pool: int, mask: np.ndarray | None) -> np.ndarray:
    """Indices of the `pool` highest scores among the rows `mask` allows (all when None).

    On a large array a bound is first taken from every SAMPLE_STRIDE-th score, low enough that more than
    `pool` rows pass it (checked), so the exact selection runs on a few thousand rows instead of 100k:
    the same rows as selecting over all of them (among rows tied at the pool's edge, which ones is
    arbitrary either way), in a quarter of the time.
    """
    import numpy as np

    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    pool = min(pool, len(scores))
    if pool == 0:
        return np.zeros(0, dtype=np.int64)
    sample = scores[::SAMPLE_STRIDE]
    wanted = 2 * pool // SAMPLE_STRIDE + 1  # twice the pool's share of the sample
    if len(scores) >= 8 * pool and wanted < len(sample):
        bound = np.partition(sample, len(sample) - wanted)[len(sample) - wanted]
        passing = np.flatnonzero(scores >= bound)
        if len(passing) >= pool:
            rows = passing[np.argpartition(-scores[passing], pool - 1)[:pool]]
            return rows[np.isfinite(scores[rows])]
    rows = np.argpartition(-scores, pool - 1)[:pool]
    return rows[np.isfinite(scores[rows])]


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
            from onnx import TensorProto, helper, numpy_helper

            from openclaw_cli.onnx_runtime import runtime

            ort = runtime()  # telemetry off, as for the models

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
