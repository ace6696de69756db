"""The transcript index's vectors in memory: nearest turns for a query vector.

Each turn's sign bits (one bit a dimension, 112 bytes a turn at 896 dimensions: 22 MB at 200k turns) are read
from their own table (store/sqlite/transcripts/vectors.py). A query ranks the rows it may return by sign
disagreement, each 64-dimension word weighted by the query's norm in it, so any weighting of a composite
query's halves is followed; the best SIGN_POOL rows are then scored exactly against their int8 vectors. A
person's search ranks only the rows of their own sessions, so it is no slower than the owner's.

A one-shot process reads the signs alone and the pool's int8 rows by rowid: an eighth of what every int8 row
weighs. A long-lived process (`resident`: the gateway, chat) also holds the int8 rows, read with the signs,
so a warm search gathers its pool from memory (reading 2,048 rows from SQLite took 35-45 ms of each search
on busy cores). Rows embedded since are read on the next search as a block of their own; blocks are merged
when there are more than MAX_BLOCKS, and everything is read again when vectors were removed (the storage's
generation changed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openclaw_cli.memory.store import vector_codec as codec

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.transcripts import TranscriptStorage

# Rows ranked by their signs that are re-scored exactly. Recall of the vector leg's top 10 / top 100 against
# the exact int8 scan, for the 33 questions of the transcript eval among 200k distractor vectors clustered
# around the eval's own turns: 0.88 / 0.84 at 1024, 0.93 / 0.90 at 2048, 0.95 / 0.95 at 4096 (among random
# distractors 0.94 / 0.63 at 2048, 0.98 / 0.74 at 4096). A one-shot process reads the pool's int8 rows from
# SQLite, ~40 ms per 2,048 rows on busy cores; a resident copy gathers them from memory for ~1 ms, so it
# re-scores twice as many. (Among 200k random rows and queries, the benchmark's worst case, recall@10 is
# 0.59 at 2048 and 0.74 at 4096: no neighbour stands out there.)
SIGN_POOL = 2048
SIGN_POOL_RESIDENT = 4096
MAX_BLOCKS = 8
WEIGHT_STEPS = 63  # a word's weight in the sign ranking, as an integer (see _integer_weights)


@dataclass
class _Block:
    rows: np.ndarray  # turn rowids, int64
    words: np.ndarray  # sign words, word-major: words[w] is word w of every row, contiguous
    int8: np.ndarray | None = None  # the int8 rows, row-major (resident copies only)
    order: np.ndarray | None = field(default=None, repr=False)  # positions sorted by rowid (for filters)

    def positions(self, allowed: np.ndarray) -> np.ndarray:
        """The positions of the rows of `allowed` (sorted rowids) that this block holds, ascending."""
        import numpy as np

        if self.order is None:
            self.order = np.argsort(self.rows, kind="stable")
        ordered = self.rows[self.order]
        at = np.minimum(np.searchsorted(ordered, allowed), len(ordered) - 1)
        return np.sort(self.order[at[ordered[at] == allowed]])


class TurnVectors:
    def __init__(self, *, resident: bool = False) -> None:
        self.resident = resident
        self.generation = -1
        self.last_vid = 0
        self._blocks: list[_Block] = []
        # The last filter's rows per block, kept while the same list of allowed rows comes again (the
        # storage returns the same list until the file changes) and the blocks stay as they are.
        self._subsets: tuple[Sequence[int], list[tuple[_Block, np.ndarray]]] | None = None

    @property
    def size(self) -> int:
        return sum(len(block.rows) for block in self._blocks)

    def refresh(self, storage: TranscriptStorage) -> None:
        """Read the signs (and, resident, the int8 rows) stored since the last refresh (all of them after a
        removal)."""
        import numpy as np

        generation = storage.vector_generation()
        if generation != self.generation:
            self.generation, self.last_vid, self._blocks, self._subsets = generation, 0, [], None
        last, rows, signs, int8 = storage.vectors_after(self.last_vid, with_int8=self.resident)
        if not len(rows):
            return
        words = np.frombuffer(signs, dtype=np.uint64).reshape(len(rows), -1)
        rows8 = np.frombuffer(int8, dtype=np.int8).reshape(len(rows), -1) if self.resident else None
        self._blocks.append(_Block(rows, np.ascontiguousarray(words.T), rows8))
        self.last_vid, self._subsets = last, None
        if len(self._blocks) > MAX_BLOCKS:
            self._blocks = [_merge(self._blocks)]

    def knn(
        self,
        storage: TranscriptStorage,
        query: np.ndarray,
        k: int,
        allowed: Sequence[int] | None = None,
        pool: int | None = None,
    ) -> list[tuple[int, float]]:
        """The `k` rows (of `allowed`, all when None) whose stored vectors score highest against `query`,
        with their scores: the best `pool` by signs (SIGN_POOL, or SIGN_POOL_RESIDENT), re-scored exactly."""
        import numpy as np

        query = np.asarray(query, dtype=np.float32)
        pool = pool or (SIGN_POOL_RESIDENT if self.resident else SIGN_POOL)
        picked = self._sign_pool(query, max(pool, k), allowed)
        if not picked:
            return []
        rows = np.concatenate([block.rows[at] for block, at in picked])
        if self.resident:
            matrix = np.concatenate([block.int8[at] for block, at in picked if block.int8 is not None])
            # A re-embedded turn lingers in an older block until a reload: its newest copy (last) counts.
            if len(picked) > 1:
                _, last = np.unique(rows[::-1], return_index=True)
                keep = np.sort(len(rows) - 1 - last)
                rows, matrix = rows[keep], matrix[keep]
        else:
            found, blob = storage.int8_rows(np.unique(rows).tolist())
            if not found:
                return []
            rows = np.asarray(found, dtype=np.int64)
            matrix = np.frombuffer(blob, dtype=np.int8).reshape(len(found), -1)
        scores = _dot(matrix, query) * np.float32(storage.vector_format().step)
        top = np.argsort(-scores, kind="stable")[:k]
        return [(int(rows[i]), float(scores[i])) for i in top]

    def sign_candidates(self, query: np.ndarray, pool: int, allowed: Sequence[int] | None) -> set[int]:
        """The rowids of the `pool` rows (of `allowed`) whose signs disagree least with the query's."""
        return {int(r) for block, at in self._sign_pool(query, pool, allowed) for r in block.rows[at]}

    def _sign_pool(
        self, query: np.ndarray, pool: int, allowed: Sequence[int] | None
    ) -> list[tuple[_Block, np.ndarray]]:
        """The `pool` rows (of `allowed`) whose signs disagree least with the query's, as positions in
        each block."""
        import numpy as np

        subsets = self._allowed_positions(allowed)
        if sum(len(at) for _, at in subsets) <= pool:
            return subsets
        query_words = codec.sign_words(query[None, :])[0]
        weights = _integer_weights(codec.word_weights(query, len(query_words)))
        scores = np.concatenate(
            [
                _disagreement(block.words if allowed is None else block.words[:, at], query_words, weights)
                for block, at in subsets
            ]
        )
        best = _lowest(scores, pool)
        out = []
        start = 0
        for block, at in subsets:
            mine = best[(best >= start) & (best < start + len(at))] - start
            out.append((block, at[mine]))
            start += len(at)
        return out

    def _allowed_positions(self, allowed: Sequence[int] | None) -> list[tuple[_Block, np.ndarray]]:
        """Each block with the positions of the rows of `allowed` it holds (every row when None)."""
        import numpy as np

        if allowed is None:
            return [(block, np.arange(len(block.rows))) for block in self._blocks if len(block.rows)]
        if self._subsets is not None and self._subsets[0] is allowed:
            return self._subsets[1]
        wanted = np.unique(np.asarray(allowed, dtype=np.int64))
        subsets = [(block, block.positions(wanted)) for block in self._blocks]
        subsets = [(block, at) for block, at in subsets if len(at)]
        self._subsets = (allowed, subsets)
        return subsets


def _merge(blocks: list[_Block]) -> _Block:
    import numpy as np

    int8 = [b.int8 for b in blocks if b.int8 is not None]
    return _Block(
        np.concatenate([b.rows for b in blocks]),
        np.concatenate([b.words for b in blocks], axis=1),
        np.concatenate(int8) if len(int8) == len(blocks) else None,
    )


def _integer_weights(weights: np.ndarray) -> np.ndarray:
    """The query's norm in each word as 0..WEIGHT_STEPS (a word weighted ~0, a leg switched off, drops out):
    integer sums in place and a counting selection measured 1.5x faster than float32 and argpartition."""
    import numpy as np

    peak = float(weights.max())
    scaled = weights / peak * WEIGHT_STEPS if peak > 0 else np.ones_like(weights)
    dtype = np.uint16 if len(weights) * 64 * WEIGHT_STEPS <= np.iinfo(np.uint16).max else np.uint32
    return np.rint(scaled).astype(dtype)


def _disagreement(words: np.ndarray, query_words: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each row's sign disagreement with the query, each word's count weighted by the query's norm in it.
    One 64-dim word at a time into buffers made once: no (rows x words) temporary, and no BLAS thread pool
    (measured 20-60x slower on shared, busy cores)."""
    import numpy as np

    rows = words.shape[1]
    out = np.zeros(rows, dtype=weights.dtype)
    xor = np.empty(rows, dtype=np.uint64)
    count = np.empty(rows, dtype=np.uint8)
    weighted = np.empty(rows, dtype=weights.dtype)
    for word in np.flatnonzero(weights):
        np.bitwise_xor(words[word], query_words[word], out=xor)
        np.bitwise_count(xor, out=count)
        np.multiply(count, weights[word], out=weighted, dtype=weights.dtype)
        out += weighted
    return out


def _lowest(scores: np.ndarray, pool: int) -> np.ndarray:
    """The positions, ascending, of the `pool` lowest scores (small integers) and of any tied with the last:
    the threshold comes from counting each score's rows, one pass instead of a partition."""
    import numpy as np

    threshold = int(np.searchsorted(np.cumsum(np.bincount(scores)), pool))
    return np.flatnonzero(scores <= threshold)


def _dot(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """int8 rows . float32 query without a float32 copy of the rows (einsum converts as it goes)."""
    import numpy as np

    return np.einsum("ij,j->i", rows, query, dtype=np.float32, casting="unsafe")
