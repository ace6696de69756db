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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from openclaw_cli.memory.store.layout import legs_of
from openclaw_cli.memory.store.vector_codec import VectorFormat, quantise

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
    return read_total(storage).centroid(table, _mark(storage), legs)


class Total:
    """The sum of a table's stored vectors and their count, from which `compute` makes the centroid.

    While the vectors are int8 and fit one read chunk, `exact` is their sum as integers: a writer that
    adds each vector it stores (`add`) then gets the centroid a new read would give, to the bit (one
    chunk's integer sum times the step, as `compute` reads it), without reading every vector again."""

    def __init__(
        self, fmt: VectorFormat, summed: np.ndarray | None, count: int, exact: np.ndarray | None
    ) -> None:
        self.fmt = fmt
        self.summed = summed
        self.count = count
        self.exact = exact

    def add(self, vector: np.ndarray) -> bool:
        """Count one more stored vector (as the store quantises it); False when the sum can no longer be
        kept to the bit: read it again."""
        import numpy as np

        if self.exact is None or self.count >= _READ_CHUNK:
            return False
        self.exact += quantise(np.asarray(vector, dtype=np.float32), self.fmt.step)
        self.count += 1
        self.summed = None  # made from `exact` when a centroid is wanted
        return True

    def centroid(self, table: str, mark: int, legs: Sequence[int]) -> Centroid | None:
        import numpy as np

        if self.count < MIN_ROWS:
            return None
        if self.summed is None:
            assert self.exact is not None
            self.summed = self.exact.astype(np.float64) * self.fmt.step
        directions, alignment = [], []
        start = 0
        for width in legs:
            summed = self.summed[start : start + width]
            length = float(np.linalg.norm(summed))
            directions.append((summed / max(length, 1e-12)).astype(np.float32))
            # Each stored leg is a unit vector, so their mean alignment with the mean direction is its length.
            alignment.append(length / self.count)
            start += width
        return Centroid(table, self.count, mark, tuple(directions), tuple(alignment))


def read_total(storage: MemoryStorage) -> Total:
    """The current table's vectors summed, `_READ_CHUNK` at a time."""
    import numpy as np

    fmt, stored = storage.vector_blobs()
    width = 0
    groups: list[np.ndarray] = []  # each read chunk's sum as stored (integers, for int8)
    count = 0
    blobs: list[bytes] = []
    for blob in stored:
        blobs.append(blob)
        if len(blobs) >= _READ_CHUNK:
            groups.append(_summed(blobs, fmt))
            count, blobs = count + len(blobs), []
    if blobs:
        groups.append(_summed(blobs, fmt))
        count += len(blobs)
    width = len(groups[0]) if groups else 0
    total = np.zeros(width, dtype=np.float64)
    for group in groups:
        total += group * fmt.step if fmt.is_int8 else group
    # One int8 chunk's float64 sum holds integers exactly (|sum| <= 127 x 10,000).
    exact = groups[0].astype(np.int64) if fmt.is_int8 and len(groups) == 1 else None
    return Total(fmt, total, count, exact)


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


def refresh(
    storage: MemoryStorage, legs: Sequence[int] | None = None, total: Total | None = None
) -> Centroid | None:
    """Recompute and store the centroid if it is missing or stale (`legs`: the profile's for the stored
    embedder when not given; `total`: the current table's vectors summed, read when not given); returns
    it. Call inside a write transaction."""
    table = storage.vector_table()
    if table is None:
        return None
    if legs is None:
        legs = legs_of(storage.vector_identity())
    stored = _usable(storage, table, legs)
    if stored is not None:
        return stored
    fresh = (total or read_total(storage)).centroid(table, _mark(storage), legs)
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
        self._tracking = False
        self._running: Total | None = None  # while tracking: the vectors' sum, kept as they are stored

    @contextmanager
    def tracking(self) -> Iterator[None]:
        """Inside one write transaction that only adds vectors, each through `inserted` with its vector
        (a bulk load's chunk): the vectors are summed as they are stored, so a refresh reads them once
        instead of at every tenth of growth (~65 times over 2,000 records loaded into an empty store)."""
        self._tracking = True
        try:
            yield
        finally:
            self._tracking = False
            self._running = None

    def current(self, legs: Sequence[int]) -> Centroid | None:
        """The centroid search corrects `legs` by (`current` above), cached per vector generation."""
        generation = self.storage.vector_generation()
        cached_generation, cached_legs, found = self._cached
        if cached_generation != generation or cached_legs != tuple(legs):
            found = current(self.storage, legs)
            self._cached = (generation, tuple(legs), found)
        return found

    def inserted(self, rowid: int, vector: np.ndarray | None = None) -> None:
        """`vector` was stored at `rowid`: recompute the centroid once the store has grown by a tenth since,
        one comparison per insert otherwise."""
        if self._running is not None and (vector is None or not self._running.add(vector)):
            self._running = None  # no longer the exact sum: read again at the next refresh
        if self._due is None:
            self._due = next_refresh(load(self.storage))
        if rowid > self._due:
            if self._tracking and self._running is None and self.storage.vector_table() is not None:
                self._running = read_total(self.storage)  # holds this vector already
            self._due = next_refresh(refresh(self.storage, total=self._running))


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
    return matrix.reshape(len(blobs), -1).sum(axis=0, dtype=np.float64)


def _mark(storage: MemoryStorage) -> int:
    return storage.store_size()
