"""The transcript index's vector tables (store/sqlite/transcripts/statements.py delegates its vector statements here).

Each embedded turn has its int8 row in `turn_vectors` and its sign bits (one bit a dimension, packed into
64-bit words: 112 bytes at 896 dimensions) in `turn_signs`, under the same `vid`. Two tables because SQLite
keeps a row's columns together: signs stored beside the 896-byte int8 column would still cost a fresh
process every page of it (179 MB at 200k turns) where the sign table alone is ~25 MB. A search ranks every
row by its signs and reads the int8 rows of the few it keeps (transcripts/vectors.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import StoreError
from openclaw_cli.memory.store import vector_codec as codec
from openclaw_cli.memory.store.sqlite.records import chunks, marks

if TYPE_CHECKING:
    import apsw
    import numpy as np

FILL_BATCH = 8192  # int8 rows turned into signs at a time when an older index gains its sign table


def sign_blob(rows8: np.ndarray) -> bytes:
    """The stored signs of int8 rows (one row or several), each row's words in order."""
    return codec.sign_words(rows8).tobytes()


def put(conn: apsw.Connection, rowid: int, vector: np.ndarray, fmt: codec.VectorFormat) -> None:
    """Store one turn's vector and its signs (replacing what the turn had)."""
    import numpy as np

    data = codec.encode(vector, fmt)
    conn.execute("INSERT OR REPLACE INTO turn_vectors(turn, embedding) VALUES (?, ?)", (rowid, data))
    vid = conn.last_insert_rowid()
    signs = sign_blob(np.frombuffer(data, dtype=np.int8)[None, :])
    conn.execute("INSERT OR REPLACE INTO turn_signs(vid, turn, signs) VALUES (?, ?, ?)", (vid, rowid, signs))


def delete(conn: apsw.Connection, rowids: Sequence[int]) -> None:
    for chunk in chunks(rowids):
        conn.execute(f"DELETE FROM turn_vectors WHERE turn IN ({marks(chunk)})", chunk)
        conn.execute(f"DELETE FROM turn_signs WHERE turn IN ({marks(chunk)})", chunk)


def delete_all(conn: apsw.Connection) -> None:
    conn.execute("DELETE FROM turn_vectors")
    conn.execute("DELETE FROM turn_signs")


def vectors_after(conn: apsw.Connection, vid: int, with_int8: bool) -> tuple[int, np.ndarray, bytes, bytes]:
    """(the last vid, turn rows (int64), their signs joined, their int8 rows joined when `with_int8`, else
    b"") of the vectors stored after `vid`, row for row (no rows when there are none).

    Joined by SQLite in one scan: fetching 200k rows one by one into Python took ~270 ms of a fresh search
    where the aggregates take ~110. group_concat keeps a blob's bytes (NULs too) and CAST gives them back as
    a blob; the aggregates of one statement walk the same rows in the same order, so they stay aligned."""
    import numpy as np

    int8 = "CAST(group_concat(v.embedding, '') AS BLOB)" if with_int8 else "x''"
    row: Any = conn.execute(
        f"SELECT max(s.vid), count(*), group_concat(s.turn), CAST(group_concat(s.signs, '') AS BLOB), {int8} "
        f"FROM turn_signs AS s {'JOIN turn_vectors AS v USING (vid)' if with_int8 else ''} WHERE s.vid > ?",
        (vid,),
    ).fetchone()
    last, count, turns, signs, rows8 = row
    if not count:
        return vid, np.zeros(0, dtype=np.int64), b"", b""
    rows = np.fromstring(str(turns), dtype=np.int64, sep=",")
    if len(rows) != count or len(signs) % count or len(rows8) % count:
        raise StoreError("the transcript index's vector tables could not be read whole")
    return int(last), rows, bytes(signs), bytes(rows8)


def int8_rows(conn: apsw.Connection, rowids: Sequence[int]) -> tuple[list[int], bytes]:
    """(turn rows found, their int8 vectors joined in that order) of these turns."""
    found: list[int] = []
    blobs: list[bytes] = []
    for chunk in chunks(rowids):
        for rowid, blob in conn.execute(
            f"SELECT turn, embedding FROM turn_vectors WHERE turn IN ({marks(chunk)})", chunk
        ):
            found.append(int(rowid))
            blobs.append(blob)
    return found, b"".join(blobs)


def count_mismatch(conn: apsw.Connection) -> str | None:
    """Why the two tables disagree (a vector without its signs or the reverse), or None."""
    vectors = _count(conn, "SELECT count(*) FROM turn_vectors")
    signs = _count(conn, "SELECT count(*) FROM turn_signs")
    joined = _count(conn, "SELECT count(*) FROM turn_vectors JOIN turn_signs USING (vid, turn)")
    if vectors == signs == joined:
        return None
    return f"transcript vectors: {vectors} rows, {signs} sign rows, {joined} of them matching"


def _count(conn: apsw.Connection, sql: str) -> int:
    row = conn.execute(sql).fetchone()
    return 0 if row is None else int(row[0])


def fill_signs(conn: apsw.Connection) -> int:
    """Give every stored vector its signs (an index from before the sign table). Inside a transaction."""
    import numpy as np

    done = 0
    last = 0
    while True:
        batch: list[Any] = conn.execute(
            "SELECT vid, turn, embedding FROM turn_vectors WHERE vid > ? ORDER BY vid LIMIT ?",
            (last, FILL_BATCH),
        ).fetchall()
        if not batch:
            return done
        rows8 = np.frombuffer(b"".join(r[2] for r in batch), dtype=np.int8).reshape(len(batch), -1)
        words = codec.sign_words(rows8)
        conn.executemany(
            "INSERT OR REPLACE INTO turn_signs(vid, turn, signs) VALUES (?, ?, ?)",
            [(vid, turn, words[n].tobytes()) for n, (vid, turn, _) in enumerate(batch)],
        )
        done += len(batch)
        last = int(batch[-1][0])
