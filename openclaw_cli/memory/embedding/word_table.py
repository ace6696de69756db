"""Single words' vectors kept on disk, for a process that runs one search and exits.

The `neighbours` stage (search/neighbours.py) embeds each content word of the best candidates alone: 50
to 100 words for an English question at 20k memories, each a model run of its own on the unoptimised
session a one-search process loads (~2-3 ms each: 120-190 ms of a cold search). A word's vector depends
only on the model, never on the store, so it is kept here, beside the converted models: one SQLite table
per model and way of running it (`words-<key>.sqlite`, 0600 in a 0700 directory), read back by the next
process in about a millisecond. Homes that share a model cache share it, as they share jieba's table.

Nothing here is trusted: a row whose digest (of its word and bytes) fails, a file SQLite cannot read, or a
table written under another key or format is dropped and the table started again; the caller also embeds
one word it read again once per process and compares the bytes (search/neighbours.py WordVectors), since
the key (the model files' sizes and times, onnxruntime's version, how the session runs) could miss a
change. The table grows by the words searches meet: dictionary words only (search/vocabulary.py), at most
the 21,746 whole words of MiniLM's vocabulary and their plurals for English (~1.6 KB each); a table past
MAX_BYTES is started again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.fsutil import ensure_private_dir

if TYPE_CHECKING:
    import apsw
    import numpy as np

FORMAT = "word-vectors-v1"
BUSY_MS = 100  # another process writing: a read or write gives up after this and goes on without the table
# A table past this size is started again: English words alone stay far below it (~35 MB for the whole
# vocabulary), but the Chinese dictionary has ~350k words, and a cache must not grow without bound.
MAX_BYTES = 128 * 1024 * 1024


def table_path(cache_dir: Path, key: str) -> Path:
    digest = hashlib.sha256(f"{FORMAT}|{key}".encode()).hexdigest()[:16]
    return cache_dir / f"words-{digest}.sqlite"


def _digest(word: str, blob: bytes) -> int:
    # 63 bits: SQLite integers are signed 64-bit.
    return int.from_bytes(hashlib.blake2b(word.encode() + b"\0" + blob, digest_size=8).digest()) >> 1


class WordTable:
    """The words' unit vectors (float32, `dimensions` each) of one model, in the file at `path`."""

    def __init__(self, path: Path, key: str, dimensions: int) -> None:
        self.path = path
        self.key = key
        self.dimensions = dimensions
        self.resets = 0  # times the table was found damaged or stale and started again (for the tests)
        self._conn: apsw.Connection | None = None

    def read(self, words: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors the table holds for `words`. A damaged row or file empties the table: {}."""
        import apsw
        import numpy as np

        if not words:
            return {}
        try:
            rows = self._connection().execute(
                "SELECT word, vector, digest FROM words WHERE word IN (SELECT value FROM json_each(?))",
                (json.dumps(list(words)),),
            )
            found = {}
            for word, blob, digest in rows:
                if len(blob) != 4 * self.dimensions or digest != _digest(word, blob):
                    self.reset()
                    return {}
                found[word] = np.frombuffer(blob, dtype=np.float32).copy()
            return found
        except apsw.BusyError:
            return {}
        except Exception:  # noqa: BLE001  # damaged, stale or unreachable: never fail the search for a cache
            self.reset()
            return {}

    def write(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Keep these words' vectors (float32 unit vectors). Never fails the caller: a table another
        process holds is skipped, a damaged one started again."""
        import apsw
        import numpy as np

        rows = []
        for word, vector in vectors.items():
            blob = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
            if len(blob) == 4 * self.dimensions:
                rows.append((word, blob, _digest(word, blob)))
        if not rows:
            return
        try:
            if self.path.exists() and self.path.stat().st_size > MAX_BYTES:
                self.reset()
            conn = self._connection()
            with conn:
                conn.executemany("INSERT OR REPLACE INTO words VALUES (?, ?, ?)", rows)
        except apsw.BusyError:
            return
        except Exception:  # noqa: BLE001  # as in read(): the search goes on without the table
            self.reset()

    def reset(self) -> None:
        """Start the table again, empty (it was damaged, stale, or gave a word another vector)."""
        self.resets += 1
        self.close()
        for suffix in ("", "-journal"):
            with suppress(OSError):
                Path(f"{self.path}{suffix}").unlink()

    def close(self) -> None:
        if self._conn is not None:
            with suppress(Exception):
                self._conn.close()
            self._conn = None

    def _connection(self) -> apsw.Connection:
        import apsw

        if self._conn is None:
            self._conn = self._open()
            try:
                self._check(self._conn)
            except apsw.BusyError:  # another process is making the table: not damage
                self.close()
                raise
            except Exception:  # noqa: BLE001  # not SQLite, damaged, or another model's: start again
                self.reset()
                self._conn = self._open()
                self._check(self._conn)
        return self._conn

    def _open(self) -> apsw.Connection:
        import apsw

        ensure_private_dir(self.path.parent)
        # Created 0600 before SQLite opens it (SQLite gives its journal the same mode).
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        conn = apsw.Connection(str(self.path))
        conn.setbusytimeout(BUSY_MS)
        # A cache: a commit need not reach the disk (a torn write is found by the digests and rebuilt).
        conn.execute("PRAGMA synchronous = OFF")
        return conn

    def _check(self, conn: apsw.Connection) -> None:
        """The table's key and format, made on first use; a table of another raises (and is reset)."""
        import apsw

        expected: list[Any] = [(f"{FORMAT}|{self.key}", self.dimensions)]
        stored: list[Any]
        try:
            stored = conn.execute("SELECT key, dimensions FROM meta").fetchall()
        except apsw.SQLError:  # no such table: a new file
            stored = []
        if not stored:
            # IMMEDIATE: two processes making the table at once take turns instead of both writing meta.
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS meta (key TEXT NOT NULL, dimensions INTEGER NOT NULL)"
                )
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS words "
                    "(word TEXT PRIMARY KEY, vector BLOB NOT NULL, digest INTEGER NOT NULL) WITHOUT ROWID"
                )
                stored = conn.execute("SELECT key, dimensions FROM meta").fetchall()
                if not stored:
                    conn.execute("INSERT INTO meta VALUES (?, ?)", expected[0])
                    stored = expected
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        if stored != expected:
            raise ValueError(f"{self.path} holds another model's words")
