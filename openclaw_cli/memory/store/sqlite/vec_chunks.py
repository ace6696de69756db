"""Reading a whole vec0 table in a few large reads, from the chunks sqlite-vec keeps it in.

Selecting every row through vec0 costs ~13 us a row for the vector and ~20 more for the three text
columns (1.3 s and 3.4 s at 100k rows, measured on 2 busy cores): vec0 reads each row's slice of its
chunk separately. Its shadow tables hold the same bytes a chunk at a time (1024 rows): `{table}_chunks`
has each chunk's size, validity bitmap and rowids, `{table}_vector_chunks00` its vectors back to back.
Reading those is one blob per 1024 rows (~30 ms for 90 MB).

That layout is sqlite-vec's, not ours, so nothing is trusted: every chunk's sizes must agree with each
other and with the table's width, the valid rows must be exactly the rows vec0 counts, and sampled rows
must hold the bytes vec0 itself returns for them. Anything else (another sqlite-vec version, a table
being written) gives None, and the caller reads row by row as before.

`read_chunks` is plain SQLite reads, no numpy: it runs on a thread of its own while another imports numpy.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import apsw
    import numpy as np

ROWID_BYTES = 8  # each chunk's rowids: little-endian int64, one per slot
SAMPLED_ROWS = 3  # rows compared with vec0's own answer: the first, the middle and the last valid one


@dataclass(frozen=True)
class Chunk:
    """One vec0 chunk: `size` slots, a validity bit per slot (least significant bit first), each slot's
    rowid, and each slot's vector (`row_bytes` bytes; an invalid slot's bytes mean nothing)."""

    size: int
    validity: bytes
    rowids: bytes
    vectors: bytes

    def valid_count(self) -> int:
        return int.from_bytes(self.validity, "little").bit_count()

    def valid_slots(self) -> list[int]:
        bits = int.from_bytes(self.validity, "little")
        return [slot for slot in range(self.size) if bits >> slot & 1]

    def rowid(self, slot: int) -> int:
        return int.from_bytes(
            self.rowids[slot * ROWID_BYTES : (slot + 1) * ROWID_BYTES], "little", signed=True
        )


def read_chunks(conn: apsw.Connection, table: str, row_bytes: int) -> list[Chunk] | None:
    """Every chunk of vec0 table `table` whose vectors are `row_bytes` long, in chunk order; None when
    the shadow tables are not laid out as expected or disagree with vec0 (see the module's doc)."""
    import apsw

    try:
        # Two plain scans joined here: SQLite's own join plans a scan of the vectors table per chunk.
        vectors = {
            int(chunk_id): bytes(blob)
            for chunk_id, blob in conn.execute(f'SELECT rowid, vectors FROM "{table}_vector_chunks00"')
        }
        chunks = [
            Chunk(int(size), bytes(validity), bytes(rowids), vectors.get(int(chunk_id), b""))
            for chunk_id, size, validity, rowids in conn.execute(
                f'SELECT chunk_id, size, validity, rowids FROM "{table}_chunks" ORDER BY chunk_id'
            )
        ]
        if not all(_consistent(chunk, row_bytes) for chunk in chunks):
            return None
        counted = conn.execute(f'SELECT count(*) FROM "{table}_rowids"').fetchone()
        if counted is None or sum(chunk.valid_count() for chunk in chunks) != counted[0]:
            return None
        if not _samples_agree(conn, table, chunks, row_bytes):
            return None
    except apsw.Error:
        return None
    return chunks


def chunk_arrays(chunks: Sequence[Chunk]) -> tuple[np.ndarray, np.ndarray]:
    """The valid rows of vec0 chunks: their rowids and their vectors' bytes (one row each), in chunk order."""
    import numpy as np

    valid = [
        np.unpackbits(np.frombuffer(c.validity, np.uint8), bitorder="little").astype(bool) for c in chunks
    ]
    count = sum(int(v.sum()) for v in valid)
    width = len(chunks[0].vectors) // chunks[0].size if chunks else 0
    rowids = np.empty(count, dtype=np.int64)
    block = np.empty((count, width), dtype=np.uint8)
    at = 0
    for chunk, keep in zip(chunks, valid, strict=True):
        n = int(keep.sum())
        rowids[at : at + n] = np.frombuffer(chunk.rowids, dtype="<i8")[keep]
        block[at : at + n] = np.frombuffer(chunk.vectors, dtype=np.uint8).reshape(chunk.size, width)[keep]
        at += n
    return rowids, block


def valid_vectors(chunks: Sequence[Chunk]) -> Iterator[bytes]:
    """Each valid row's vector bytes, in chunk order and slot order: the order of vec0's full scan."""
    for chunk in chunks:
        width = len(chunk.vectors) // chunk.size
        for slot in chunk.valid_slots():
            yield chunk.vectors[slot * width : (slot + 1) * width]


def _consistent(chunk: Chunk, row_bytes: int) -> bool:
    return (
        chunk.size > 0
        and chunk.size % 8 == 0
        and len(chunk.validity) == chunk.size // 8
        and len(chunk.rowids) == chunk.size * ROWID_BYTES
        and len(chunk.vectors) == chunk.size * row_bytes
    )


def _samples_agree(conn: apsw.Connection, table: str, chunks: list[Chunk], row_bytes: int) -> bool:
    """The first, middle and last valid rows hold, at their slot, the vector vec0 returns for their rowid."""
    counts = [chunk.valid_count() for chunk in chunks]
    total = sum(counts)
    for wanted in sorted({0, total // 2, total - 1})[:SAMPLED_ROWS] if total else []:
        chunk, slot = _nth_valid(chunks, counts, wanted)
        row = conn.execute(
            f'SELECT embedding FROM "{table}" WHERE rowid = ?', (chunk.rowid(slot),)
        ).fetchone()
        if row is None or bytes(row[0]) != chunk.vectors[slot * row_bytes : (slot + 1) * row_bytes]:
            return False
    return True


def _nth_valid(chunks: list[Chunk], counts: list[int], wanted: int) -> tuple[Chunk, int]:
    """The chunk and slot of the `wanted`-th valid row (0-based) over all chunks in order."""
    for chunk, count in zip(chunks, counts, strict=True):
        if wanted < count:
            return chunk, chunk.valid_slots()[wanted]
        wanted -= count
    raise IndexError(wanted)
