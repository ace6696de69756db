"""Reading a whole vec0 table in a few large reads, from the chunks sqlite-vec keeps it in.

Selecting every row through vec0 costs ~13 us a row for the vector and ~20 more for the three text
columns (1.3 s and 3.4 s at 100k rows, measured on 2 busy cores): vec0 reads each row's slice of its
chunk separately. Its shadow tables hold the same bytes a chunk at a time (1024 rows): `{table}_chunks`
has each chunk's size, validity bitmap and rowids, `{table}_vector_chunks00` its vectors back to back.
Reading those is one blob per 1024 rows (~30 ms for 90 MB).

The blobs are read straight into one block of memory whose pages the kernel maps in one call, and the
rows are then compacted in place (`chunk_arrays`) instead of copied. At 100k rows (90 MB) reading them as
98 bytes objects cost 64 ms (22k page faults of 4 KB, ~2-3 us each in a virtual machine) and copying
them into one array another 18 ms; into the mapped block the read costs 43-52 ms. Huge pages read in
20-26 ms, but in a virtual machine they cost 100-200 ms whenever the host must first back them (after
another process freed its memory): a whole one-search process, run after another process each time,
took 452-462 ms with the mapped block, 467-483 ms with 4 KB pages faulted one by one and 424-598 ms
(median ~525) with huge pages.

That layout is sqlite-vec's, not ours, so nothing is trusted: every chunk's sizes must agree with each
other and with the table's width, the valid rows must be exactly the rows vec0 counts, and sampled rows
must hold the bytes vec0 itself returns for them. Anything else (another sqlite-vec version, a table
being written) gives None, and the caller reads row by row as before.

`read_chunks` is plain SQLite reads, no numpy: it runs on a thread of its own while another imports numpy.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import apsw
    import numpy as np

ROWID_BYTES = 8  # each chunk's rowids: little-endian int64, one per slot
SAMPLED_ROWS = 3  # rows compared with vec0's own answer: the first, the middle and the last valid one


@dataclass(frozen=True)
class Chunk:
    """One vec0 chunk: `size` slots, a validity bit per slot (least significant bit first), each slot's
    rowid, and each slot's vector (`row_bytes` bytes; an invalid slot's bytes mean nothing): a view of
    the block all chunks of one read share."""

    size: int
    validity: bytes
    rowids: bytes
    vectors: memoryview

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
        # Each chunk's vectors are read by their rowid in the vectors table: one scan for the lengths
        # (SQLite reads no blob for length()), then one blob read per chunk into the shared block.
        lengths = {
            int(chunk_id): int(length)
            for chunk_id, length, kind in conn.execute(
                f'SELECT rowid, length(vectors), typeof(vectors) FROM "{table}_vector_chunks00"'
            )
            if kind == "blob"
        }
        listed = [
            (int(chunk_id), int(size), bytes(validity), bytes(rowids))
            for chunk_id, size, validity, rowids in conn.execute(
                f'SELECT chunk_id, size, validity, rowids FROM "{table}_chunks" ORDER BY chunk_id'
            )
        ]
        if not all(
            _consistent(size, validity, rowids, lengths.get(chunk_id, 0), row_bytes)
            for chunk_id, size, validity, rowids in listed
        ):
            return None
        chunks = _read_vectors(conn, f"{table}_vector_chunks00", listed, row_bytes)
        counted = conn.execute(f'SELECT count(*) FROM "{table}_rowids"').fetchone()
        if counted is None or sum(chunk.valid_count() for chunk in chunks) != counted[0]:
            return None
        if not _samples_agree(conn, table, chunks, row_bytes):
            return None
    except apsw.Error:
        return None
    return chunks


def _read_vectors(
    conn: apsw.Connection, vectors_table: str, listed: list[tuple[int, int, bytes, bytes]], row_bytes: int
) -> list[Chunk]:
    """The listed chunks with their vectors, read into one block (see the module's doc)."""
    block = memoryview(_mapped_block(sum(size for _, size, _, _ in listed) * row_bytes))
    chunks = []
    at = 0
    for chunk_id, size, validity, rowids in listed:
        length = size * row_bytes
        with conn.blob_open("main", vectors_table, "vectors", chunk_id, False) as blob:
            blob.read_into(block, at, length)
        chunks.append(Chunk(size, validity, rowids, block[at : at + length]))
        at += length
    return chunks


def _mapped_block(size: int) -> mmap.mmap | bytearray:
    """`size` bytes of private memory whose pages are mapped at once (MAP_POPULATE) rather than one fault
    at a time as they are written; a plain bytearray where the system has no such mapping."""
    if size == 0 or not hasattr(mmap, "MAP_ANONYMOUS"):
        return bytearray(size)
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_POPULATE", 0)
    return mmap.mmap(-1, size, flags=flags)


def chunk_arrays(chunks: Sequence[Chunk]) -> tuple[np.ndarray, np.ndarray]:
    """The valid rows of vec0 chunks read together (`read_chunks`): their rowids and their vectors' bytes
    (one row each), in chunk order. The rows are moved down over the invalid slots in the chunks' own
    block, which the vectors returned then view: the chunks' vectors are not to be read after this."""
    import numpy as np

    if not chunks:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.uint8)
    width = len(chunks[0].vectors) // chunks[0].size
    valid = [
        np.unpackbits(np.frombuffer(c.validity, np.uint8), bitorder="little").astype(bool) for c in chunks
    ]
    count = sum(int(v.sum()) for v in valid)
    shared = cast("mmap.mmap | bytearray", chunks[0].vectors.obj)  # the block of `_mapped_block`
    assert all(c.vectors.obj is shared for c in chunks), "chunks of one read_chunks"
    block = np.frombuffer(shared, dtype=np.uint8)
    block = block[: sum(c.size for c in chunks) * width].reshape(-1, width)
    rowids = np.empty(count, dtype=np.int64)
    at = start = 0
    for chunk, keep in zip(chunks, valid, strict=True):
        n = int(keep.sum())
        rowids[at : at + n] = np.frombuffer(chunk.rowids, dtype="<i8")[keep]
        if n < chunk.size:
            block[at : at + n] = block[start : start + chunk.size][keep]  # a copy first: may overlap
        elif at != start:
            block[at : at + n] = block[start : start + n]  # numpy copies overlapping slices safely
        at += n
        start += chunk.size
    return rowids, block[:count]


def valid_vectors(chunks: Sequence[Chunk]) -> Iterator[bytes]:
    """Each valid row's vector bytes, in chunk order and slot order: the order of vec0's full scan."""
    for chunk in chunks:
        width = len(chunk.vectors) // chunk.size
        for slot in chunk.valid_slots():
            yield bytes(chunk.vectors[slot * width : (slot + 1) * width])


def _consistent(size: int, validity: bytes, rowids: bytes, vectors_length: int, row_bytes: int) -> bool:
    return (
        size > 0
        and size % 8 == 0
        and len(validity) == size // 8
        and len(rowids) == size * ROWID_BYTES
        and vectors_length == size * row_bytes
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
