"""The transcript index's vectors in memory: nearest turns for a query vector.

vec0's brute-force scan of int8 rows took ~17 ms per 1,000 rows on this machine (3 s at 200k turns), so the
vectors are read into memory once and scanned with the memory store's VectorMatrix (sign-bit prefilter,
then exact int8 scores). A long-lived process keeps the copy: rows embedded since are read on the next
search and scored exactly on the side, and the matrix is rebuilt when they grow past TAIL_LIMIT or when
vectors were removed (the storage's generation changed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openclaw_cli.memory.store import vector_codec as codec
from openclaw_cli.memory.store.vector_matrix import VectorMatrix
from openclaw_cli.memory.store.vectors import VectorFilter

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.transcripts import TranscriptStorage

TAIL_LIMIT = 4096


class TurnVectors:
    def __init__(self) -> None:
        self.generation = -1
        self.last_vid = 0
        self.matrix: VectorMatrix | None = None
        self._tail_rows: list[int] = []
        self._tail: list[bytes] = []

    def refresh(self, storage: TranscriptStorage) -> None:
        generation = storage.vector_generation()
        if generation != self.generation:
            self.generation, self.last_vid, self.matrix = generation, 0, None
            self._tail_rows, self._tail = [], []
        vids, rows, blob = storage.vectors_after(self.last_vid)
        if not vids:
            return
        if self.matrix is None:  # the first read is the whole matrix
            self.matrix = VectorMatrix.of_int8(rows, blob, storage.vector_format())
            self.last_vid = vids[-1]
            return
        self.last_vid = vids[-1]
        width = len(blob) // len(vids)
        self._tail_rows += rows
        self._tail += [blob[i * width : (i + 1) * width] for i in range(len(vids))]
        if len(self._tail_rows) > TAIL_LIMIT:
            vids, rows, blob = storage.vectors_after(0)
            self.matrix = VectorMatrix.of_int8(rows, blob, storage.vector_format())
            self.last_vid = vids[-1]
            self._tail_rows, self._tail = [], []

    def knn(self, query: np.ndarray, k: int, fmt: codec.VectorFormat) -> list[tuple[int, float]]:
        """The `k` rows whose stored vectors score highest against `query` (matrix and recent rows)."""
        import numpy as np

        found = [] if self.matrix is None else self.matrix.knn(query, k, VectorFilter())
        if self._tail:
            block = np.frombuffer(b"".join(self._tail), dtype=np.int8).reshape(len(self._tail), -1)
            scores = (block.astype(np.float32) * np.float32(fmt.step)) @ np.asarray(query, dtype=np.float32)
            found += [(row, float(score)) for row, score in zip(self._tail_rows, scores, strict=True)]
        found.sort(key=lambda hit: -hit[1])
        return found[:k]
