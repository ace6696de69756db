"""The transcript index's vectors in memory: nearest turns for a query vector.

Only each turn's sign bits are held (one bit a dimension, 112 bytes a turn at 896 dimensions: 22 MB at
200k turns, read from their own table, store/sqlite/turn_vectors.py). A query ranks the rows it may return
by sign disagreement, each 64-dimension word weighted by the query's norm in it, so any weighting of a
composite query's halves is followed; the best SIGN_POOL rows are then read from SQLite by rowid and
scored exactly against their int8 vectors. A person's search ranks only the rows of their own sessions,
so it is no slower than the owner's, and a fresh process reads an eighth of what the int8 rows weigh.

A long-lived process (the gateway) keeps the signs: rows embedded since are read on the next search as a
block of their own, blocks are merged when there are more than MAX_BLOCKS, and everything is read again
when vectors were removed (the storage's generation changed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from openclaw_cli.memory.store import vector_codec as codec

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.transcripts import TranscriptStorage

# Rows ranked by their signs that are re-scored exactly. Measured at 200k turns of random unit vectors
# (the hardest case: no cluster stands out) against the exact scan: see SIGN_POOL_RECALL.
SIGN_POOL = 2048
MAX_BLOCKS = 8


@dataclass
class _Block:
    rows: np.ndarray  # turn rowids, int64
    words: np.ndarray  # sign words, word-major: words[w] is word w of every row, contiguous


class TurnVectors:
    def __init__(self) -> None:
        self.generation = -1
        self.last_vid = 0
        self._blocks: list[_Block] = []
        self._order: np.ndarray | None = None  # positions sorted by rowid, for filters (None: stale)

    @property
    def size(self) -> int:
        return sum(len(block.rows) for block in self._blocks)

    def refresh(self, storage: TranscriptStorage) -> None:
        """Read the signs stored since the last refresh (all of them after a removal)."""
        import numpy as np

        generation = storage.vector_generation()
        if generation != self.generation:
            self.generation, self.last_vid, self._blocks, self._order = generation, 0, [], None
        last, rows, blob = storage.signs_after(self.last_vid)
        if not len(rows):
            return
        words = np.frombuffer(blob, dtype=np.uint64).reshape(len(rows), -1)
        self._blocks.append(_Block(rows, np.ascontiguousarray(words.T)))
        self.last_vid, self._order = last, None
        if len(self._blocks) > MAX_BLOCKS:
            self._blocks = [_merge(self._blocks)]

    def knn(
        self,
        storage: TranscriptStorage,
        query: np.ndarray,
        k: int,
        allowed: Sequence[int] | None = None,
        pool: int = SIGN_POOL,
    ) -> list[tuple[int, float]]:
        """The `k` rows (of `allowed`, all when None) whose stored vectors score highest against `query`,
        with their scores: the best `pool` by signs, re-scored exactly."""
        import numpy as np

        query = np.asarray(query, dtype=np.float32)
        candidates = self.sign_candidates(query, max(pool, k), allowed)
        if len(candidates) == 0:
            return []
        rows, blob = storage.int8_rows([int(r) for r in candidates])
        if not rows:
            return []
        block = np.frombuffer(blob, dtype=np.int8).reshape(len(rows), -1)
        scores = _dot(block, query) * np.float32(storage.vector_format().step)
        top = np.argsort(-scores, kind="stable")[:k]
        return [(rows[i], float(scores[i])) for i in top]

    def sign_candidates(self, query: np.ndarray, pool: int, allowed: Sequence[int] | None) -> np.ndarray:
        """The rowids of the `pool` rows (of `allowed`) whose signs disagree least with the query's."""
        import numpy as np

        if not self._blocks:
            return np.zeros(0, dtype=np.int64)
        blocks = self._blocks if allowed is None else [self._allowed_block(allowed)]
        rows = np.concatenate([b.rows for b in blocks]) if len(blocks) > 1 else blocks[0].rows
        if len(rows) <= pool:
            return np.unique(rows)
        query_words = codec.sign_words(query[None, :])[0]
        weights = codec.word_weights(query, len(query_words))
        parts = [_disagreement(b.words, query_words, weights) for b in blocks]
        disagreement = np.concatenate(parts) if len(parts) > 1 else parts[0]
        best = np.argpartition(disagreement, pool - 1)[:pool]
        return np.unique(rows[best])  # a replaced vector may linger in an older block until a reload

    def _allowed_block(self, allowed: Sequence[int]) -> _Block:
        """The rows of `allowed` that have signs, found through the rows sorted once per refresh."""
        import numpy as np

        if len(self._blocks) > 1:
            self._blocks = [_merge(self._blocks)]
        block = self._blocks[0]
        if self._order is None:
            self._order = np.argsort(block.rows, kind="stable")
        ordered = block.rows[self._order]
        wanted = np.asarray(allowed, dtype=np.int64)
        at = np.minimum(np.searchsorted(ordered, wanted), len(ordered) - 1)
        positions = np.sort(self._order[at[ordered[at] == wanted]])
        return _Block(block.rows[positions], np.ascontiguousarray(block.words[:, positions]))


def _merge(blocks: list[_Block]) -> _Block:
    import numpy as np

    return _Block(np.concatenate([b.rows for b in blocks]), np.concatenate([b.words for b in blocks], axis=1))


def _disagreement(words: np.ndarray, query_words: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each row's sign disagreement with the query, each word's count weighted by the query's norm in it.
    One 64-dim word at a time: no (rows x words) temporary, and no BLAS thread pool on busy cores."""
    import numpy as np

    out = np.zeros(words.shape[1], dtype=np.float32)
    for word in np.flatnonzero(weights):
        out += np.bitwise_count(words[word] ^ query_words[word]) * weights[word]
    return out


def _dot(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """int8 rows . float32 query without a float32 copy of the rows (einsum converts as it goes)."""
    import numpy as np

    return np.einsum("ij,j->i", rows, query, dtype=np.float32, casting="unsafe")
