"""The vector side of search: candidates by similarity, and a similarity that knows which model to trust.

A stored vector may hold several model vectors side by side (embedding/composite.py). Each leg's cosine is computed
on its own and combined per memory: the English leg's weight shrinks with the share of the query the
English model cannot read, and is zero for a memory that is not English, whose English vector was built
from unknown tokens. Because that weight differs per memory, one nearest-neighbour scan cannot rank by
it; two scans can: one by the weighted query (right for English memories) and one by the multilingual leg
alone (exactly right for the others). Their union is then scored exactly.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from openclaw_cli.memory.search.legs import query_memo
from openclaw_cli.memory.store.layout import LANGUAGE_TRUST

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.embedding.onnx_embedder import Embedder, QueryEmbedding
    from openclaw_cli.memory.search.profiles import SearchProfile
    from openclaw_cli.memory.store.protocol import VectorFilter
    from openclaw_cli.memory.store.vectors.centroid import Centroid

# How far a memory's English leg can be trusted, by the language detected when it was stored.


class VectorSource(Protocol):
    """Nearest rows of the current vector table (vec0 or the in-memory matrix) and their stored vectors."""

    def knn(self, query: np.ndarray, k: int, where: VectorFilter) -> list[tuple[int, float]]: ...

    def rows(self, rowids: Sequence[int]) -> dict[int, np.ndarray]: ...


@dataclass(frozen=True)
class HubCorrection:
    """Subtract `weight` x each memory's hubness (store/vectors/centroid.py) from every leg's cosine."""

    centroid: Centroid
    weight: float


@dataclass
class Similarity:
    score: float  # the combined cosine
    legs: tuple[float, ...]  # each leg's cosine


class QueryPrefetch:
    """The query's vector, computed on a worker thread once the query is analysed.

    The models release the GIL while they run, and so does SQLite: the keyword leg runs meanwhile
    instead of before (the embedding was ~5 ms of a warm search at 100k, the keyword leg ~5 ms). Started
    once the query is known to have terms; the search waits for it to settle before it returns.

    The workers are kept for the process (`_workers`): starting a thread per search waited for the new
    thread to take the GIL from the one embedding, 3.7 ms of a warm search's 4.8 ms analysis at 100k
    (p50 wall against 1.1 ms CPU, load 5.6).
    """

    def __init__(self, embedder: Embedder, text: str) -> None:
        self.text = text
        # A text searched a moment ago (the other search of a turn, a message said again) is not
        # embedded again (search/legs/query_memo.py).
        self._future: Future[QueryEmbedding] = query_memo.embedding(
            embedder, text, lambda: _workers().submit(embedder.embed_query, text)
        )

    def result(self) -> QueryEmbedding:
        return self._future.result()

    def settle(self) -> None:
        """Wait until the embedding is done, whatever its outcome: a search that ends before it uses
        the vector (an error) must not leave onnxruntime running as the process exits."""
        wait([self._future])


_WORKERS = 4  # searches running at once (the gateway's threads) each embed without waiting for another's
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _workers() -> ThreadPoolExecutor:
    """The process's query-embedding threads, made on first use; one is reused while idle. Like every
    executor's, they are joined at interpreter exit, so no model is left running as the process ends."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="query-prefetch")
        return _pool


def english_weight(profile: SearchProfile, unknown_share: float) -> float:
    """The first leg's weight for this query; the multilingual leg gets the rest."""
    if len(profile.legs) < 2:
        return 1.0
    return profile.english_weight * max(0.0, 1.0 - unknown_share)


def single_leg_weight(profile: SearchProfile, unknown_share: float) -> float:
    """A lone English model says little about a query it could not read: its vector is down-weighted."""
    if len(profile.legs) >= 2 or unknown_share <= profile.unknown_token_threshold:
        return 1.0
    return max(0.0, 1.0 - unknown_share)


def combine(legs: Sequence[float], weight: float, language: str) -> float:
    """One similarity from per-leg cosines: English leg by `weight` x the memory's trust, the rest by 1 - weight."""
    if len(legs) == 1:
        return legs[0]
    english = weight * LANGUAGE_TRUST.get(language, 0.0)
    other = 1.0 - weight
    total = english + other
    return (english * legs[0] + other * legs[1]) / total if total > 0 else legs[1]


def candidates(
    source: VectorSource,
    query: QueryEmbedding,
    profile: SearchProfile,
    pool: int,
    where: VectorFilter,
    hubs: HubCorrection | None = None,
    also: Sequence[int] = (),
) -> dict[int, tuple[float, ...]]:
    """Up to 2 x pool rows likely to be most similar, each with its per-leg cosines (corrected for
    hubness when `hubs` is given; the scans themselves rank by the plain cosine), then the rows `also`
    (the keyword leg's hits) the scans did not reach, read and scored with them in one pass; rows
    without a vector (pending) are left out."""
    import numpy as np

    from openclaw_cli.memory.store.vectors.query import knn_scaled

    vector = query.vector.astype(np.float32, copy=False)
    if len(profile.legs) < 2:
        nearest = source.knn(vector, pool, where)
        if hubs is None:
            found = {rowid: (score,) for rowid, score in nearest}
            rest = [rowid for rowid in also if rowid not in found]
            return found | (_cosines(source, vector, rest, profile.legs) if rest else {})
        rowids = [rowid for rowid, _ in nearest]
    else:
        split = profile.legs[0]
        weight = english_weight(profile, query.unknown_share)
        # The multilingual leg alone, then (unless it weighs 0) the English leg by `weight`.
        scalings = [(0.0, 1.0)] + ([(weight, 1.0 - weight)] if weight > 0 else [])
        scanned = knn_scaled(source, vector, (split, len(vector) - split), scalings, pool, where)
        rowids = [rowid for hits in scanned for rowid, _ in hits]
    return _cosines(source, vector, list(dict.fromkeys([*rowids, *also])), profile.legs, hubs)


def _cosines(
    source: VectorSource,
    query: np.ndarray,
    rowids: list[int],
    legs: Sequence[int],
    hubs: HubCorrection | None = None,
) -> dict[int, tuple[float, ...]]:
    """`leg_cosines` of the source's stored rows among `rowids`; the in-memory matrix hands them over as
    one block, the same float32 matrix as stacking its rows (~0.2 ms less a warm search)."""
    whole = getattr(source, "block", None)
    if whole is None:
        return leg_cosines(query, source.rows(rowids), legs, hubs)
    ids, matrix = whole(rowids)
    return block_cosines(query, ids, matrix, legs, hubs)


def leg_cosines(
    query: np.ndarray, rows: dict[int, np.ndarray], legs: Sequence[int], hubs: HubCorrection | None = None
) -> dict[int, tuple[float, ...]]:
    """Each row's cosine with the query, leg by leg (one matrix product per leg for all rows), less
    `hubs.weight` x its hubness on that leg."""
    import numpy as np

    if not rows:
        return {}
    ids = list(rows)
    return block_cosines(query, ids, np.stack([rows[rowid] for rowid in ids]), legs, hubs)


def block_cosines(
    query: np.ndarray,
    ids: list[int],
    matrix: np.ndarray,
    legs: Sequence[int],
    hubs: HubCorrection | None = None,
) -> dict[int, tuple[float, ...]]:
    """`leg_cosines` of rows given as one matrix, row n being row `ids[n]`."""
    import numpy as np

    if not ids:
        return {}
    matrix = matrix.astype(np.float32, copy=False)
    columns: list[np.ndarray] = []
    start = 0
    for width in legs:
        q, block = query[start : start + width], matrix[:, start : start + width]
        norms = np.linalg.norm(block, axis=1) * float(np.linalg.norm(q))
        column = np.where(norms > 0, (block @ q) / np.maximum(norms, 1e-12), 0.0)
        if hubs is not None:
            column = column - hubs.weight * hubs.centroid.hubness(len(columns), block)
        columns.append(column)
        start += width
    # One conversion of the whole table to Python floats: a row at a time took ~0.2 ms a warm search.
    return dict(zip(ids, map(tuple, np.stack(columns, axis=1).tolist()), strict=True))
