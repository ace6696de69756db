"""Vector queries that hold for any backend: which rows a search may return (`VectorFilter`, defined
with the storage Protocol) and a query's legs weighted before a nearest-neighbour scan. The SQLite vec0
tables themselves are store/sqlite/vec.py; the warm in-memory copy is store/vectors/matrix.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store.protocol import VectorFilter as VectorFilter

if TYPE_CHECKING:
    import numpy as np


def scale_legs(query: np.ndarray, legs: Sequence[int], factors: Sequence[float]) -> np.ndarray:
    """The query with each leg (consecutive block of `legs` widths) multiplied by its factor; a leg
    weighted 0 is zeros."""
    import numpy as np

    parts = []
    start = 0
    for width, factor in zip(legs, factors, strict=True):
        part = query[start : start + width]
        parts.append(np.zeros(width, dtype=np.float32) if factor == 0 else part * factor)
        start += width
    return np.concatenate(parts).astype(np.float32, copy=False)


def knn_scaled(
    source: Any,
    query: np.ndarray,
    legs: Sequence[int],
    scalings: Sequence[Sequence[float]],
    k: int,
    where: VectorFilter,
) -> list[list[tuple[int, float]]]:
    """Nearest rows for each weighting of the query's legs, best first: `source.knn` of each scaled
    query, computed together when the source is the in-memory matrix."""
    together = getattr(source, "knn_scaled", None)  # the in-memory matrix (store/vectors/matrix.py)
    if together is not None:
        return list(together(query, legs, scalings, k, where))
    return [source.knn(scale_legs(query, legs, factors), k, where) for factors in scalings]
