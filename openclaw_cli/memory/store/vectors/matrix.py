"""The in-memory copy of one vector table, for warm processes (batch search, gateway, benchmarks) and
for a `memory search` process on SQLite, which reads it ahead while its model loads
(MemoryStore.load_vectors_ahead). The rows come through the storage Protocol (`stored_vectors`).

The rows come from vec0's own chunks, a blob per 1024 rows (store/sqlite/vec_chunks.py), and are scored in
numpy: at 100k rows one vec0 brute-force pass took ~0.5 s and a read row by row through vec0 1.3 s, the
chunks ~0.04 s and the exact numpy scan of every row ~0.06 s (CPU, 2 busy cores). Processes that read
nothing ahead still ask vec0 for the nearest rows (store/sqlite/vec.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from openclaw_cli.memory.store import vector_codec as codec
from openclaw_cli.memory.store.protocol import StoredRows
from openclaw_cli.memory.store.sqlite.vec_chunks import chunk_arrays
from openclaw_cli.memory.store.vector_codec import VectorFormat
from openclaw_cli.memory.store.vectors.dot_memo import DotMemo
from openclaw_cli.memory.store.vectors.int8_scan import Int8Scan
from openclaw_cli.memory.store.vectors.leg_scan import agreement, leg_disagreements
from openclaw_cli.memory.store.vectors.query import VectorFilter, scale_legs
from openclaw_cli.memory.store.vectors.row_scan import best, chunked_dot, distinct, dot

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.protocol import MemoryStorage

INT8_SCAN_MIN_ROWS = 20_000  # below this the float32 scan takes under 2 ms: not worth a second copy
RESCORE_POOL = 256  # int8 candidates re-scored exactly; recall@10 against exact search measured at 1.0
SIGN_PREFILTER_MIN_ROWS = 20_000  # int8 tables: below this every row is scored, in chunks
# Rows the sign-bit prefilter passes on to exact scoring (per weighting of the query). On the 100k benchmark
# store (real vectors, its 300 queries, 50 candidates a weighting) the candidates found by the exact scan
# were found at 0.9969 with 2048, 0.9922 with 1024, 0.9739 with 512; 1024 against 2048 left 295 of 300
# final top-10 lists identical (mean overlap 0.9987) and cut the vector stage from 5.8-6.5 to 4.6-4.8 ms
# CPU (p50; p95 8.4-8.9 -> 6.2-6.8): each row rescored is a gather of 896 bytes.
SIGN_POOL = 1024
# Past 256k rows the pool grows with the table: recall@10 against exact with 1024 fell to 0.989 at 500k and
# 0.975 at 1M; a 256th of the rows kept >= 0.994 at the same cost (benchmarks/test_bench_scan_scale.py).
SIGN_POOL_ROWS_PER_ROW = 256


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
    `sign_prefilter=False` (one search per process) scores every row exactly instead.
    """

    def __init__(self, *, sign_prefilter: bool = True) -> None:
        # A process that runs one search scores every row instead: computing the sign bits reads all
        # the rows once anyway, and the exact scan costs about the same.
        self.sign_prefilter = sign_prefilter
        self.table: str | None = None
        self.generation = -1
        self._rowids: np.ndarray | None = None
        self._matrix: np.ndarray | None = None
        self._int8: Int8Scan | None = None
        self._rows8: np.ndarray | None = None
        self._step = 1.0
        self._signs: np.ndarray | None = None
        # Filter columns as integer codes; from chunks, made on the first filtered search (`_filter_codes`).
        self._codes: dict[str, tuple[dict[str, int], np.ndarray]] | None = None
        self._storage: MemoryStorage | None = None  # where filter columns are read when the rows lack them
        self._positions: dict[int, int] | None = None
        self._memo = DotMemo()  # the last full scan's products: a turn's second search reuses them

    def refresh(self, storage: MemoryStorage) -> None:
        self._storage = storage
        if not self.stale(storage):
            return
        self.load(read_rows(storage))

    def stale(self, storage: MemoryStorage) -> bool:
        return (storage.vector_table(), storage.vector_generation()) != (self.table, self.generation)

    def load(self, stored: StoredRows) -> None:
        """Hold `stored` (read_rows): the vectors as numpy arrays. Rows read one by one bring their filter
        columns; chunks do not, and the first filtered search reads them from the storage given to `refresh`."""
        import numpy as np

        rows, fmt = stored.rows, stored.fmt
        if stored.chunks is not None:
            self._rowids, block = chunk_arrays(stored.chunks)
            self._codes = None
        else:
            self._rowids = np.array([r[0] for r in rows], dtype=np.int64)
            block = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.uint8)
            self._codes = {
                name: _encode([str(r[i]) for r in rows])
                for i, name in ((2, "scope"), (3, "user_id"), (4, "category"))
            }
        count = len(self._rowids)
        self._matrix = self._rows8 = self._signs = self._int8 = None
        self._memo = DotMemo()
        if fmt.is_int8:
            self._load_int8(block.view(np.int8), count, fmt)
        elif count:
            # float32, or the postgres backend's 16-bit floats widened to float32
            matrix = block.view(fmt.numpy_dtype).reshape(count, -1)
            self._matrix = matrix.astype(np.float32, copy=False)
            self._int8 = Int8Scan.build(self._matrix) if count >= INT8_SCAN_MIN_ROWS else None
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
        matrix._load_int8(np.frombuffer(blob, dtype=np.int8), len(rowids), fmt)
        return matrix

    def _load_int8(self, values: np.ndarray, count: int, fmt: VectorFormat) -> None:
        import numpy as np

        self._rows8 = values.reshape(count, -1) if count else None
        self._step = fmt.step
        if self._rows8 is not None and self.sign_prefilter and count >= SIGN_PREFILTER_MIN_ROWS:
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

        The sign prefilter counts each leg's weighted disagreements once for all weightings (a positive
        factor keeps the signs and scales the leg's word weights), and the pooled rows are gathered and
        scored once per leg, so two weightings cost little more than one. Each weighting keeps its own
        candidate pool, as `knn` would.
        """
        import numpy as np

        if self._rowids is None or len(self._rowids) == 0:
            return [[] for _ in scalings]
        if self._rows8 is None or sum(legs) != self._rows8.shape[1]:
            return [self.knn(scale_legs(query, legs, factors), k, where) for factors in scalings]
        query = np.asarray(query, dtype=np.float32)
        mask = self._mask(where)
        used = [any(factors[n] != 0 for factors in scalings) for n in range(len(legs))]
        if self._signs is None:  # every row scored: once per leg, shared by the weightings
            dots = self._memo.scan(
                self._rows8, query, legs, used, lambda: self._leg_dots(query, legs, used, None)
            )
            everything = np.arange(len(self._rowids))
            return [self._top(everything, self._scores(dots, factors, mask), k) for factors in scalings]
        pools = self._scaled_sign_pools(query, legs, scalings, self._pool_size(k), mask)
        union = distinct(pools)
        dots = self._leg_dots(query, legs, used, union)
        out = []
        for factors, rows in zip(scalings, pools, strict=True):
            at = np.searchsorted(union, rows)
            out.append(self._top(rows, self._scores([d[at] for d in dots], factors, None), k))
        return out

    def _scores(
        self, dots: Sequence[np.ndarray], factors: Sequence[float], mask: np.ndarray | None
    ) -> np.ndarray:
        """Each row's score under one weighting of the legs, from its per-leg dot products."""
        import numpy as np

        parts = [dot * np.float32(f) for dot, f in zip(dots, factors, strict=True) if f != 0]
        scores = (np.sum(parts, axis=0) if parts else np.zeros(len(dots[0]), np.float32)) * np.float32(
            self._step
        )
        return scores if mask is None else np.where(mask, scores, -np.inf)

    def _leg_dots(
        self, query: np.ndarray, legs: Sequence[int], used: Sequence[bool], rows: np.ndarray | None
    ) -> list[np.ndarray]:
        """Each used leg's dot product of the int8 rows at positions `rows` (None: all of them, read in
        place) with the query's leg, not yet times the step; an unused leg (weighted 0 everywhere) gets zeros."""
        import numpy as np

        assert self._rows8 is not None
        count = len(self._rows8) if rows is None else len(rows)
        gathered = None if rows is None else self._rows8[rows]  # one gather for every leg
        out = []
        start = 0
        source = self._rows8 if gathered is None else gathered
        for width, wanted in zip(legs, used, strict=True):
            if wanted:
                out.append(chunked_dot(source[:, start : start + width], query[start : start + width]))
            else:
                out.append(np.zeros(count, dtype=np.float32))
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
        top = top[np.isfinite(exact[top])]
        # Whole arrays to lists at once: a row at a time took ~0.17 ms of a warm search at 100k.
        return list(zip(self._rowids[rows[top]].tolist(), exact[top].tolist(), strict=True))

    def rows(self, rowids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these rows, as float32 (int8 rows dequantised)."""
        held, block = self.block(rowids)
        return dict(zip(held, block, strict=True))

    def block(self, rowids: Sequence[int]) -> tuple[list[int], np.ndarray]:
        """The rows among `rowids` this matrix holds, in that order, and their vectors as one float32
        matrix (int8 rows dequantised): what `rows` gives, without a dict of row views to stack again."""
        import numpy as np

        if self._rowids is None or (self._matrix is None and self._rows8 is None):
            return [], np.zeros((0, 0), dtype=np.float32)
        found = self._positions_of(rowids)
        at = [i for _, i in found]
        if self._rows8 is not None:
            # One gather and one conversion for all rows (same values as row by row).
            block = self._rows8[at].astype(np.float32) * np.float32(self._step)
        else:
            assert self._matrix is not None
            block = self._matrix[at]
        return [r for r, _ in found], block

    def _positions_of(self, rowids: Sequence[int]) -> list[tuple[int, int]]:
        """(rowid, position in the matrix) of those of `rowids` it holds. A process that searches once
        finds them in one pass (~1 ms at 100k rows); the others keep a dict of every row (~19 ms to
        build at 100k, then ~0.2 us a row)."""
        import numpy as np

        assert self._rowids is not None
        if self.sign_prefilter or self._positions is not None:
            if self._positions is None:
                self._positions = {int(r): i for i, r in enumerate(self._rowids)}
            positions = self._positions
            return [(rowid, i) for rowid in rowids if (i := positions.get(rowid)) is not None]
        at = np.flatnonzero(np.isin(self._rowids, np.asarray(rowids, dtype=np.int64)))
        held = dict(zip(self._rowids[at].tolist(), at.tolist(), strict=True))
        return [(rowid, held[rowid]) for rowid in rowids if rowid in held]

    def _float_candidates(
        self, query: np.ndarray, k: int, mask: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        assert self._matrix is not None
        if self._int8 is not None:
            approx = self._int8.scores(query).astype(np.float32)
            rows = best(approx, max(RESCORE_POOL, 4 * k), mask)
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
            rows = self._sign_pool(query, self._pool_size(k), mask)
            return rows, dot(self._rows8[rows], query) * np.float32(self._step)
        exact = chunked_dot(self._rows8, query) * np.float32(self._step)
        if mask is not None:
            exact = np.where(mask, exact, -np.inf)
        return np.arange(len(exact)), exact

    def _pool_size(self, k: int) -> int:  # the rows the sign prefilter passes on to exact scoring
        rows = 0 if self._rowids is None else len(self._rowids)
        return max(SIGN_POOL, 8 * k, rows // SIGN_POOL_ROWS_PER_ROW)

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
            out.append(best(-disagreement, pool, mask))
        return out

    def _scaled_sign_pools(
        self,
        query: np.ndarray,
        legs: Sequence[int],
        scalings: Sequence[Sequence[float]],
        pool: int,
        mask: np.ndarray | None,
    ) -> list[np.ndarray]:
        """`_sign_pools` of each weighting of the query's legs. When every leg starts on a 64-dim word,
        a weighting's disagreement is the sum of each leg's (computed once) times its factor: the same
        sum, in another order, as weighting every word by the scaled query's norm in it."""
        import numpy as np

        assert self._signs is not None
        starts = np.cumsum([0, *legs[:-1]])
        if any(start % 64 for start in starts):
            return self._sign_pools([scale_legs(query, legs, factors) for factors in scalings], pool, mask)
        query_words = codec.sign_words(query[None, :])[0]
        weights = codec.word_weights(query, self._signs.shape[0])
        spans = [
            range(start // 64, (start + width + 63) // 64) if any(f[n] != 0 for f in scalings) else None
            for n, (start, width) in enumerate(zip(starts, legs, strict=True))
        ]
        per_leg = leg_disagreements(self._signs, query_words, weights, spans)
        return [best(agreement(per_leg, factors, self._signs.shape[1]), pool, mask) for factors in scalings]

    def _mask(self, where: VectorFilter) -> np.ndarray | None:
        import numpy as np

        mask: np.ndarray | None = None
        checks: list[tuple[str, tuple[str, ...]]] = [("scope", where.scopes), ("category", where.categories)]
        if where.user_id is not None:
            checks.append(("user_id", (where.user_id,)))
        for name, values in checks:
            if not values:
                continue
            index, codes = self._filter_codes()[name]
            wanted = [index[v] for v in values if v in index]
            part = np.isin(codes, wanted) if wanted else np.zeros(len(codes), dtype=bool)
            mask = part if mask is None else mask & part
        return mask

    def _filter_codes(self) -> dict[str, tuple[dict[str, int], np.ndarray]]:
        """Each filter column as codes aligned with the rows; a row without columns matches no filter."""
        import numpy as np

        if self._codes is None:
            assert self._rowids is not None and self._storage is not None, "refresh() gives the storage"
            found = {int(r[0]): r for r in self._storage.vector_filter_columns()}
            aligned = [found.get(int(rowid)) for rowid in self._rowids]
            self._codes = {}
            for i, name in ((1, "scope"), (2, "user_id"), (3, "category")):
                index, codes = _encode([str(r[i]) if r is not None else "" for r in aligned])
                missing = np.array([r is None for r in aligned], dtype=bool)
                self._codes[name] = (index, np.where(missing, -1, codes).astype(np.int32))
        return self._codes


def _encode(values: list[str]) -> tuple[dict[str, int], np.ndarray]:
    """Small integer codes for a text column, so a filter is an integer comparison per row."""
    import numpy as np

    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int32, count=len(values))
    return index, codes
