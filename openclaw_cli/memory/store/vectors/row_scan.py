"""Scoring int8 vector rows against a float32 query, and picking the best rows: the arithmetic that
VectorMatrix's searches (store/vectors/matrix.py) share.

Rows are never converted to float32 as a whole (at 100k rows of 896 dims that would be a 358 MB
temporary): einsum converts as it goes, a chunk at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

SAMPLE_STRIDE = 16  # _best's bound comes from every 16th score of a large array
_CHUNK = 8192  # rows converted to float32 at a time when an int8 matrix is scored in full
PARALLEL_SCAN_MIN_ROWS = 32_768  # a full scan this long takes ~12 ms on one core: worth a second thread


def dot(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """int8 rows . float32 query without a float32 copy of the rows (einsum converts as it goes)."""
    import numpy as np

    return np.einsum("ij,j->i", rows, query, dtype=np.float32, casting="unsafe")


def chunked_dot(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """`dot` of every row, _CHUNK rows at a time (no float32 copy of the whole matrix), the second half on
    a thread of its own when there are PARALLEL_SCAN_MIN_ROWS rows or more: einsum lets go of the GIL, and
    a one-search process scans every row while its other core has nothing left to load (at 100k rows
    39 ms on one core, 19 ms on two)."""
    import numpy as np

    out = np.empty(len(rows), dtype=np.float32)

    def fill(start: int, stop: int) -> None:
        for at in range(start, stop, _CHUNK):
            end = min(at + _CHUNK, stop)
            out[at:end] = dot(rows[at:end], query)

    if len(rows) < PARALLEL_SCAN_MIN_ROWS:
        fill(0, len(rows))
        return out
    half = len(rows) // 2 // _CHUNK * _CHUNK  # the chunks of the one-thread scan: the same sums
    failure: list[BaseException] = []

    def second_half() -> None:
        try:
            fill(half, len(rows))
        except BaseException as error:  # noqa: BLE001  # raised again on the caller's thread
            failure.append(error)

    helper = threading.Thread(target=second_half, name="vector-scan", daemon=True)
    helper.start()
    fill(0, half)
    helper.join()
    if failure:
        raise failure[0]
    return out


def best(scores: np.ndarray, pool: int, mask: np.ndarray | None) -> np.ndarray:
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


def distinct(pools: Sequence[np.ndarray]) -> np.ndarray:
    """The distinct positions of `pools`, ascending. A sort and a comparison: np.unique hashes integers
    first, ~0.2 ms for two pools of 1024 against ~0.03 ms."""
    import numpy as np

    ordered = np.sort(np.concatenate(pools))
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
