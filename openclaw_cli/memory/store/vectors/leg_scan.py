"""Each stored row's sign-bit disagreement with a query, one leg of a composite vector at a time: the
prefilter of a warm search (store/vectors/matrix.py), which passes the best-agreeing rows on to be scored.

A leg's disagreement is the sum, over its 64-dim words, of the bits in which a row's signs differ from the
query's, each word weighted by the query's norm in it. At 100k rows that is ~1.5-2.5 ms a query on one
core, most of the vector stage. The legs are independent and numpy lets go of the GIL inside each
operation, so with rows enough to repay the hand-over the first leg is summed on a helper thread while
the caller sums the others: the same float32 operations in the same order, so the same sums. (The dot
products of the rows passed on, ~0.5 ms a leg, measured no faster split so: each leg's gather then
costs its own pass.)
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import numpy as np

PARALLEL_MIN_ROWS = 32_768  # below this a leg takes well under a millisecond: not worth the hand-over
T = TypeVar("T")

_helper: ThreadPoolExecutor | None = None
_helper_lock = threading.Lock()


def each_leg(calls: Sequence[Callable[[], T]], *, parallel: bool) -> list[T]:
    """Every call's result, in order; with `parallel` and two calls or more, the first on the helper."""
    if not parallel or len(calls) < 2:
        return [call() for call in calls]
    first = _pool().submit(calls[0])
    try:
        rest = [call() for call in calls[1:]]
    finally:
        head = first.result()  # waited for even when a call here failed: nothing is left running
    return [head, *rest]


def leg_disagreements(
    signs: np.ndarray,
    query_words: np.ndarray,
    weights: np.ndarray,
    spans: Sequence[range | None],
) -> list[np.ndarray | None]:
    """For each span of word numbers (None: a leg no weighting uses, left out), every row's weighted
    disagreement with the query, as float32. `signs` is word-major: signs[w] is word w of every row."""
    used = [n for n, span in enumerate(spans) if span is not None]
    sums = each_leg(
        [functools.partial(_disagreement, signs, query_words, weights, spans[n]) for n in used],
        parallel=signs.shape[1] >= PARALLEL_MIN_ROWS,
    )
    out: list[np.ndarray | None] = [None] * len(spans)
    for n, summed in zip(used, sums, strict=True):
        out[n] = summed
    return out


def _disagreement(
    signs: np.ndarray, query_words: np.ndarray, weights: np.ndarray, words: range | None
) -> np.ndarray:
    """One leg's sum, word by word, into buffers made once: no (rows x words) temporary, and no BLAS
    thread pool, which measured 20-60x slower than this loop on shared, busy cores."""
    import numpy as np

    rows = signs.shape[1]
    total = np.zeros(rows, dtype=np.float32)
    differing = np.empty(rows, dtype=signs.dtype)
    count = np.empty(rows, dtype=np.uint8)
    weighted = np.empty(rows, dtype=np.float32)
    for word in words or ():
        if weights[word] > 0:
            np.bitwise_xor(signs[word], query_words[word], out=differing)
            np.bitwise_count(differing, out=count)
            np.multiply(count, weights[word], out=weighted)
            total += weighted
    return total


def agreement(per_leg: Sequence[np.ndarray | None], factors: Sequence[float], rows: int) -> np.ndarray:
    """Minus the weighted sum of the legs' disagreements, summed leg after leg into one buffer: the
    same float32 values as negating the sum (negation is exact), without a temporary per leg."""
    import numpy as np

    out: np.ndarray | None = None
    scaled = np.empty(rows, dtype=np.float32)
    for disagreement, factor in zip(per_leg, factors, strict=True):
        if disagreement is None or factor == 0:
            continue
        if out is None:
            out = np.multiply(disagreement, -np.float32(factor))
        else:
            np.multiply(disagreement, np.float32(factor), out=scaled)
            out -= scaled
    return np.zeros(rows, np.float32) if out is None else out


def _pool() -> ThreadPoolExecutor:
    global _helper
    with _helper_lock:
        if _helper is None:
            _helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="leg-scan")
        return _helper
