"""Whether the stored vectors are the vectors of their texts (`memory index --check`, `memory restore`, doctor).

Counting rows cannot see a vec0 chunk whose bytes were overwritten: `integrity_check` reads the page as
a valid blob, every record still has its row, and search silently ranks by garbage. Two checks see it:

- every stored vector's type and norm: each leg of a vector (store/layout.py) has the norm the embedder
  gives (1: every embedder L2-normalises each leg), and int8 storage moves that by under 2% (the constant
  English half of an unreadable text: 1.03%), so a leg off by more than NORM_TOLERANCE, a non-finite
  float or the int8 value -128 (which quantising never writes) is not what was written. Read a chunk at
  a time (vec_chunks.py): ~50 ms at 100k rows;
- a sample of up to SAMPLE records re-embedded with the configured embedder: a stored vector whose
  cosine to its text's fresh vector is under AGREEMENT was not made from that text (a copy of another
  row's bytes keeps a perfect norm). Int8 storage leaves the cosine above 0.999.

Repair (upkeep/index.py) marks what fails as pending and re-embeds it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.memory.store.layout import legs_of
from openclaw_cli.memory.store.sqlite import vec, vec_chunks

if TYPE_CHECKING:
    import apsw
    import numpy as np

    from openclaw_cli.memory.embedding.onnx_embedder import Embedder

SAMPLE = 32
NORM_TOLERANCE = 0.05
AGREEMENT = 0.95


@dataclass
class VectorFindings:
    checked: int = 0  # vectors whose type and norm were checked
    malformed: list[int] = field(default_factory=list)  # rowids: wrong norm or impossible values
    sampled: int = 0  # vectors compared with a fresh embedding of their text
    disagreeing: list[int] = field(default_factory=list)  # rowids: not the vector of their text
    not_compared: str | None = None  # why no sample was re-embedded (the embedder failed): not a finding

    @property
    def wrong(self) -> list[int]:
        return sorted(set(self.malformed) | set(self.disagreeing))


def check(
    conn: apsw.Connection, embedder_factory: Callable[[], Embedder], sample: int = SAMPLE
) -> VectorFindings:
    """Both checks on the current vec0 table of `conn`, when the embedder makes vectors of the stored
    identity (otherwise the index check reports an embedder change, and a rebuild replaces them all).
    A leg's expected norm is what the embedder gives the sample: 1 for every real embedder (each leg is
    L2-normalised), whatever a test's fake gives."""
    import numpy as np

    found = VectorFindings()
    table = vec.current_table(conn)
    identity = vec.stored_identity(conn)
    if table is None or identity is None:
        return found
    try:
        embedder = embedder_factory()
        if embedder.identity.to_dict() != identity:
            return found
        fresh, stored, rows = _sample(conn, table, embedder, sample)
    except OpenclawError as exc:  # an API that is down says nothing about the stored vectors
        found.not_compared = exc.message
        fresh, stored, rows = None, {}, []
    if fresh is not None:
        found.sampled = len(rows)
        found.disagreeing = [
            rowid
            for (rowid, _), vector in zip(rows, fresh, strict=True)
            if not _agrees(stored[rowid], vector)
        ]
    legs = _legs(legs_of(identity), int(identity["dimensions"]))
    expected = (
        [float(np.median(np.linalg.norm(fresh[:, a:b], axis=1))) for a, b in legs]
        if fresh is not None
        else [1.0] * len(legs)  # what every real embedder writes (each leg L2-normalised)
    )
    rowids, vectors = _all_vectors(conn, table, int(identity["dimensions"]))
    found.checked = len(rowids)
    found.malformed = _malformed(rowids, vectors, legs, expected)
    return found


def _sample(
    conn: apsw.Connection, table: str, embedder: Embedder, sample: int
) -> tuple[np.ndarray | None, dict[int, np.ndarray], list[tuple[int, str]]]:
    """Up to `sample` live records with a ready vector, at random: their fresh vectors (None when there
    are none), their stored ones, and (rowid, text)."""
    import numpy as np

    rows = [
        (int(r), str(text))
        for r, text in conn.execute(
            "SELECT rowid, l0 FROM records WHERE deleted = 0 AND vector_status = 'ready' "
            "ORDER BY random() LIMIT ?",
            (sample,),
        )
    ]
    stored = vec.stored_rows(conn, table, [r for r, _ in rows])
    rows = [(r, text) for r, text in rows if r in stored]
    if not rows:
        return None, stored, rows
    return np.asarray(embedder.embed_passages([t for _, t in rows]), dtype=np.float32), stored, rows


def _legs(widths: tuple[int, ...], dimensions: int) -> list[tuple[int, int]]:
    """Each leg's (start, end) in a vector; the whole vector when the widths do not add up to it."""
    if sum(widths) != dimensions:
        return [(0, dimensions)]
    bounds, start = [], 0
    for width in widths:
        bounds.append((start, start + width))
        start += width
    return bounds


def _all_vectors(conn: apsw.Connection, table: str, dimensions: int) -> tuple[list[int], np.ndarray]:
    """Every row's rowid and float32 vector (int8 dequantised), -128 kept visible as NaN."""
    import numpy as np

    fmt = vec.table_format(conn, table)
    chunks = vec_chunks.read_chunks(conn, table, vec.row_bytes(conn, fmt))
    if chunks is not None:
        ids, raw = vec_chunks.chunk_arrays(chunks)
        rowids = [int(r) for r in ids]
    else:  # a layout vec_chunks does not trust: row by row through vec0
        rows = vec.all_rows(conn, table)
        rowids = [r[0] for r in rows]
        raw = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.uint8).reshape(len(rows), -1)
    if not rowids:
        return [], np.zeros((0, dimensions), dtype=np.float32)
    if fmt.is_int8:
        values = np.ascontiguousarray(raw).view(np.int8).astype(np.float32)
        values[values == -128] = np.nan  # never written: quantising clips at +-127
        return rowids, values * np.float32(fmt.step)
    return rowids, np.ascontiguousarray(raw).view(fmt.numpy_dtype).astype(np.float32)


def _malformed(
    rowids: list[int], vectors: np.ndarray, legs: list[tuple[int, int]], expected: list[float]
) -> list[int]:
    import numpy as np

    if not rowids:
        return []
    bad = ~np.isfinite(vectors).all(axis=1)
    for (start, end), norm in zip(legs, expected, strict=True):
        norms = np.linalg.norm(np.nan_to_num(vectors[:, start:end]), axis=1)
        bad |= np.abs(norms - norm) > NORM_TOLERANCE * norm
    return [rowids[i] for i in np.flatnonzero(bad)]


def _agrees(stored: np.ndarray, fresh: np.ndarray) -> bool:
    import numpy as np

    scale = float(np.linalg.norm(stored) * np.linalg.norm(fresh))
    return bool(np.isfinite(stored).all()) and scale > 0 and float(stored @ fresh) / scale >= AGREEMENT
