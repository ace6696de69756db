"""The mean direction of a store's vectors, per model: what "close to everything" looks like there.

Some memories sit near every query in a model's space: short, generic sentences ("Assistant: Quite a
change of tone.") scored 0.88 semantic relevance for a question about payment callbacks. Such hubs are
close to the mean of all stored vectors. Search corrects each leg's cosine by how much more a memory
points along that mean than the average memory does (`SearchProfile.hub_weight`), so a memory ranks by
what it shares with the query rather than by how generic it is (centroid hubness reduction).

The mean moves slowly, so it is kept in `meta` and recomputed when the store has grown by a tenth since,
or its vector table was rebuilt. Writers refresh it (`refresh`); a reader that finds it
missing or stale computes it for itself without writing.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from openclaw_cli.memory.store.layout import legs_of
from openclaw_cli.memory.store.vector_codec import VectorFormat

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.store.protocol import MemoryStorage

META_KEY = "vector_centroid"
STALE_SHARE = 0.1
# Below this many vectors the mean is too close to each of them to say which are generic.
MIN_ROWS = 20
_READ_CHUNK = 10_000


@dataclass(frozen=True)
class Centroid:
    """Per leg: the unit mean direction and the mean alignment of the stored vectors with it."""

    table: str
    rows: int
    mark: int  # the largest rowid when it was computed: how staleness is measured, in O(log n)
    directions: tuple[np.ndarray, ...]
    mean_alignment: tuple[float, ...]

    def hubness(self, leg: int, block: np.ndarray) -> np.ndarray:
        """How much more each row of `block` (one leg of stored vectors) points along the mean than the
        average stored vector does: the amount search subtracts, times the profile's weight."""
        import numpy as np

        norms = np.linalg.norm(block, axis=1)
        aligned = np.where(norms > 0, (block @ self.directions[leg]) / np.maximum(norms, 1e-12), 0.0)
        return aligned - self.mean_alignment[leg]

    def to_json(self) -> str:
        return json.dumps(
            {
                "table": self.table,
                "rows": self.rows,
                "mark": self.mark,
                "directions": [base64.b64encode(d.astype("<f4").tobytes()).decode() for d in self.directions],
                "meanAlignment": list(self.mean_alignment),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> Centroid | None:
        import numpy as np

        try:
            data = json.loads(text)
            directions = tuple(np.frombuffer(base64.b64decode(d), dtype="<f4") for d in data["directions"])
            return cls(
                str(data["table"]),
                int(data["rows"]),
                int(data["mark"]),
                directions,
                tuple(float(a) for a in data["meanAlignment"]),
            )
        except (ValueError, KeyError, TypeError):
            return None  # damaged: computed again, as if missing


def compute(storage: MemoryStorage, table: str, legs: Sequence[int]) -> Centroid | None:
    """The centroid of every vector in the current index `table`, read in chunks; None when there are too few."""
    import numpy as np

    mark = _mark(storage)
    total = np.zeros(sum(legs), dtype=np.float64)
    count = 0
    blobs: list[bytes] = []
    fmt, stored = storage.vector_blobs()
    for blob in stored:
        blobs.append(blob)
        if len(blobs) >= _READ_CHUNK:
            total += _summed(blobs, fmt)
            count, blobs = count + len(blobs), []
    if blobs:
        total += _summed(blobs, fmt)
        count += len(blobs)
    if count < MIN_ROWS:
        return None
    directions, alignment = [], []
    start = 0
    for width in legs:
        summed = total[start : start + width]
        length = float(np.linalg.norm(summed))
        directions.append((summed / max(length, 1e-12)).astype(np.float32))
        # Each stored leg is a unit vector, so their mean alignment with the mean direction is its length.
        alignment.append(length / count)
        start += width
    return Centroid(table, count, mark, tuple(directions), tuple(alignment))


def load(storage: MemoryStorage) -> Centroid | None:
    text = storage.get_meta(META_KEY)
    return None if text is None else Centroid.from_json(text)


def is_fresh(storage: MemoryStorage, centroid: Centroid | None, table: str) -> bool:
    if centroid is None or centroid.table != table:
        return False
    return abs(_mark(storage) - centroid.mark) <= _allowance(centroid)


def next_refresh(centroid: Centroid | None) -> int:
    """The rowid after which a writer should refresh the centroid (0: at once)."""
    return 0 if centroid is None else centroid.mark + _allowance(centroid)


def current(storage: MemoryStorage, legs: Sequence[int]) -> Centroid | None:
    """The stored centroid when it is fresh; otherwise computed now (and not written: readers don't)."""
    table = storage.vector_table()
    if table is None:
        return None
    return _usable(storage, table, legs) or compute(storage, table, legs)


def refresh(storage: MemoryStorage, legs: Sequence[int] | None = None) -> Centroid | None:
    """Recompute and store the centroid if it is missing or stale (`legs`: the profile's for the stored
    embedder when not given); returns it. Call inside a write transaction."""
    table = storage.vector_table()
    if table is None:
        return None
    if legs is None:
        legs = legs_of(storage.vector_identity())
    stored = _usable(storage, table, legs)
    if stored is not None:
        return stored
    fresh = compute(storage, table, legs)
    if fresh is not None:
        storage.set_meta(META_KEY, fresh.to_json())
    return fresh


class Keeper:
    """One store's centroid as its `MemoryStore` keeps it: read again only after a write (a warm process,
    the gateway, builds a searcher per request but keeps its stores), refreshed as the store grows."""

    def __init__(self, storage: MemoryStorage) -> None:
        self.storage = storage
        self._due: int | None = None
        self._cached: tuple[int, tuple[int, ...], Centroid | None] = (-1, (), None)

    def current(self, legs: Sequence[int]) -> Centroid | None:
        """The centroid search corrects `legs` by (`current` above), cached per vector generation."""
        generation = self.storage.vector_generation()
        cached_generation, cached_legs, found = self._cached
        if cached_generation != generation or cached_legs != tuple(legs):
            found = current(self.storage, legs)
            self._cached = (generation, tuple(legs), found)
        return found

    def inserted(self, rowid: int) -> None:
        """A vector was stored at `rowid`: recompute the centroid once the store has grown by a tenth since,
        one comparison per insert otherwise (about 11 reads of each row over a bulk load from empty)."""
        if self._due is None:
            self._due = next_refresh(load(self.storage))
        if rowid > self._due:
            self._due = next_refresh(refresh(self.storage))


def forget(storage: MemoryStorage) -> None:
    """Drop the stored centroid and store a new one from what is left (after a purge). Call inside a write
    transaction."""
    storage.delete_meta(META_KEY)
    refresh(storage)


def _usable(storage: MemoryStorage, table: str, legs: Sequence[int]) -> Centroid | None:
    """The stored centroid, when it is fresh and has one direction per leg."""
    stored = load(storage)
    if stored is None or len(stored.directions) != len(legs) or not is_fresh(storage, stored, table):
        return None
    return stored


def _allowance(centroid: Centroid) -> int:
    return int(STALE_SHARE * max(centroid.rows, MIN_ROWS))


def _summed(blobs: list[bytes], fmt: VectorFormat) -> np.ndarray:
    import numpy as np

    matrix = np.frombuffer(b"".join(blobs), dtype=fmt.numpy_dtype)
    summed = matrix.reshape(len(blobs), -1).sum(axis=0, dtype=np.float64)
    return summed * fmt.step if fmt.is_int8 else summed


def _mark(storage: MemoryStorage) -> int:
    return storage.store_size()
