"""Single words' vectors kept on disk, so that a word a search met is not embedded again by the next one.

The `neighbours` stage (search/legs/neighbours.py) embeds each content word of the best candidates alone: 50
to 100 words for an English question at 20k memories, each a model run of its own (~2-3 ms each on the
unoptimised session a one-search process loads: 120-190 ms of a cold search; 10-107 ms of a warm
process's first search of a question). The words are kept here: one SQLite table per model and way of
running it (`words-<key>.sqlite`, 0600) in the home's word cache (Home.word_cache_dir, 0700), read back
by the next search in about a millisecond.

The table holds words of the memories searches scored highly, so it is the home's and is forgotten with
them (forget_words: every purge of a person and every delete of a memory; DESIGN.md "Privacy"). A purge
first writes a new token in the directory's FORGOTTEN file, then empties every table (secure_delete, in
a write transaction, waiting out a busy one); a search notes the token before it reads its candidates
(WordTables.now) and writes its words only if, inside its write transaction, the token is unchanged. So
a search that read a memory before the purge removed it cannot put its words back after the purge.

Nothing here is trusted: a row whose digest (of its word and bytes) fails, a file SQLite cannot read, or a
table written under another key or format is dropped and the table started again; the caller also embeds
one word it read again once per process and table and compares the bytes (search/legs/neighbours.py
WordVectors), since the key (the model files' sizes and times, onnxruntime's version, how the session
runs) could miss a change. The table grows by the words searches meet: dictionary words only
(search/legs/vocabulary.py), at most the 21,746 whole words of MiniLM's vocabulary and their plurals for
English (~1.6 KB each); a table past MAX_BYTES is started again.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.fsutil import atomic_write_bytes, ensure_private_dir
from openclaw_cli.security.database import connect as encrypted_or_plain

if TYPE_CHECKING:
    import apsw
    import numpy as np

FORMAT = "word-vectors-v1"
BUSY_MS = 100  # another process writing: a read or write gives up after this and goes on without the table
# A table past this size is started again: English words alone stay far below it (~35 MB for the whole
# vocabulary), but the Chinese dictionary has ~350k words, and a cache must not grow without bound.
MAX_BYTES = 128 * 1024 * 1024
FORGOTTEN = "forgotten"  # the token a purge changes (see the module doc)
TABLES = "words-*.sqlite"
# A purge waits this long for a table another process holds (a read or write holds it for milliseconds;
# only a stuck process holds it longer), then removes the file instead.
PURGE_WAIT_S = 30.0
PURGE_BUSY_MS = 1000


def table_path(cache_dir: Path, key: str) -> Path:
    digest = hashlib.sha256(f"{FORMAT}|{key}".encode()).hexdigest()[:16]
    return cache_dir / f"words-{digest}.sqlite"


def forgotten_token(directory: Path) -> str:
    """The token the last purge wrote in `directory` ("" before any: no file)."""
    try:
        return (directory / FORGOTTEN).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return ""


@dataclass(frozen=True)
class WordTables:
    """The word tables of one home, as a search found them when it started: words it embeds are kept
    only while no purge has happened since (`token`)."""

    directory: Path
    token: str

    @classmethod
    def now(cls, directory: Path, legacy: Path | None = None) -> WordTables:
        """`legacy`: where an earlier version kept every home's tables (the model cache): removed at
        this home's first search since they moved, as they hold words of memories nobody can purge."""
        if legacy is not None and not directory.is_dir():
            remove_tables(legacy)
        return cls(directory, forgotten_token(directory))

    def current(self) -> bool:
        """Whether no purge has happened since the search started."""
        return forgotten_token(self.directory) == self.token


def forget_words(directory: Path, legacy: Path | None = None) -> list[Path]:
    """Empty every word table in `directory` (see the module doc), and remove those in `legacy` (as
    WordTables.now); the files that still hold words because they could neither be emptied nor removed
    (none, unless the file system refuses)."""
    # Written even where no table is yet: a search that started before the purge may be about to make one.
    atomic_write_bytes(directory / FORGOTTEN, secrets.token_hex(16).encode("ascii"))
    left = [path for path in sorted(directory.glob(TABLES)) if not _emptied(path)]
    return left + (remove_tables(legacy) if legacy is not None else [])


def remove_tables(directory: Path) -> list[Path]:
    """Remove the word tables in `directory` (where they were kept before they moved into the home);
    the files that could not be removed."""
    left = []
    for path in sorted(directory.glob(TABLES)) if directory.is_dir() else []:
        if not _removed(path):
            left.append(path)
    return left


def _emptied(path: Path) -> bool:
    """Delete every row of the table at `path`, overwriting the freed pages; a table held past
    PURGE_WAIT_S, or one that is not a word table SQLite can read, is removed instead."""
    import apsw

    deadline = time.monotonic() + PURGE_WAIT_S
    while True:
        try:
            conn = encrypted_or_plain(path, apsw.SQLITE_OPEN_READWRITE)
        except apsw.Error:
            return _removed(path)
        try:
            conn.setbusytimeout(PURGE_BUSY_MS)
            conn.execute("PRAGMA secure_delete = ON")
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("DELETE FROM words")
                conn.execute("COMMIT")  # busy while a reader finishes: waited for, then tried again
            except BaseException:
                with suppress(apsw.Error):
                    conn.execute("ROLLBACK")
                raise
            return True
        except apsw.BusyError:
            if time.monotonic() >= deadline:
                return _removed(path)
        except apsw.Error:  # not a database, damaged, or no words table: nothing to keep
            return _removed(path)
        finally:
            conn.close()


def _removed(path: Path) -> bool:
    for suffix in ("", "-journal"):
        try:
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        except OSError:
            return False
    return True


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
        self._opened: tuple[int, int] | None = None  # the file the connection has open

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

    def write(self, vectors: Mapping[str, np.ndarray], token: str | None = None) -> None:
        """Keep these words' vectors (float32 unit vectors), unless a purge has changed the directory's
        token since `token` was read (None: no check). Never fails the caller: a table another process
        holds is skipped, a damaged one started again."""
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
            self._insert(self._connection(), rows, token)
        except apsw.BusyError:
            return
        except Exception:  # noqa: BLE001  # as in read(): the search goes on without the table
            self.reset()

    def _insert(self, conn: apsw.Connection, rows: list[tuple[str, bytes, int]], token: str | None) -> None:
        # IMMEDIATE: the token is read under the write lock a purge's DELETE takes (see the module doc).
        conn.execute("BEGIN IMMEDIATE")
        try:
            if token is None or forgotten_token(self.path.parent) == token:
                conn.executemany("INSERT OR REPLACE INTO words VALUES (?, ?, ?)", rows)
            conn.execute("COMMIT")
        except BaseException:
            with suppress(Exception):
                conn.execute("ROLLBACK")
            raise

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

        if self._conn is not None and self._file_id() != self._opened:
            self.close()  # removed meanwhile (a purge gave up waiting, or another process reset it)
        if self._conn is None:
            self._conn = self._open()
            self._opened = self._file_id()
            try:
                self._check(self._conn)
            except apsw.BusyError:  # another process is making the table: not damage
                self.close()
                raise
            except Exception:  # noqa: BLE001  # not SQLite, damaged, or another model's: start again
                self.reset()
                self._conn = self._open()
                self._opened = self._file_id()
                self._check(self._conn)
        return self._conn

    def _file_id(self) -> tuple[int, int] | None:
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return info.st_dev, info.st_ino

    def _open(self) -> apsw.Connection:

        ensure_private_dir(self.path.parent)
        # Created 0600 before SQLite opens it (SQLite gives its journal the same mode).
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        conn = encrypted_or_plain(self.path)  # this home's words: keyed when the home is encrypted
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
