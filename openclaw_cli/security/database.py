"""The one way a home's SQLite database is opened: plain, or keyed with the home's data key.

SQLite3 Multiple Ciphers (the `apsw-sqlite3mc` build of apsw) encrypts every page and every WAL frame.
The cipher is chacha20, SQLite3MC's ChaCha20-Poly1305: authenticated (a changed page fails its Poly1305
tag and reads as CorruptError, never as other data), fast in plain software on any x86-64 without
depending on AES-NI, and the library's default and most used scheme. AEGIS is as fast but newer in the
library; the sqlcipher scheme (AES-CBC + HMAC-SHA512) is only worth its cost for compatibility with the
sqlcipher tools, which nothing here needs. The key is given raw (`x'..'`): the data key is already 32
random bytes, so no passphrase KDF runs per open (an open costs ~1 ms more, not a KDF's ~100 ms).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.security.keyfile import DB_CIPHER
from openclaw_cli.security.unlocked import default_home, home_of, key_for_home

if TYPE_CHECKING:
    import apsw

SQLITE_MAGIC = b"SQLite format 3\x00"
DECRYPTED_CACHE_KIB = 65536


def is_plain_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def may_be_encrypted(path: Path) -> bool:
    """Whether a file at `path` that does not start like SQLite may be an encrypted database (its page 1
    starts with a random salt) rather than something else."""
    return home_of(path) is not None or default_home() is not None


def key_for_database(path: Path) -> bytes | None:
    """The key to open `path` with: None in a plain home, and for a plain file in an encrypted home that
    `security init` has not reached yet (or a file `security decrypt` already turned back), so a home
    half-way through either still opens whole. A file outside every home (`memory backup -o`, a copy
    to restore) takes the key of the encrypted home this process works for, if any: a backup is
    encrypted with its home's key wherever it is written."""
    root = home_of(path) or default_home()
    if root is None:
        return None
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0
    if size > 0 and is_plain_sqlite(path):
        return None
    return key_for_home(root)


def apply_key(conn: apsw.Connection, key: bytes, schema: str = "main") -> None:
    """Key `conn` before its first read: the cipher, then the raw key (no KDF)."""
    conn.execute(f"PRAGMA {schema}.cipher = '{DB_CIPHER}'")
    conn.execute(f"PRAGMA {schema}.key = \"x'{key.hex()}'\"")
    # SQLite's page cache holds pages decrypted: with its default 2 MiB, a warm search at 20k re-read and
    # re-decrypted its pages from the OS cache on every query (1.1-1.45x plain, measured); up to 64 MiB
    # (grown only as pages are read) brings it to plain's speed.
    conn.execute(f"PRAGMA {schema}.cache_size = -{DECRYPTED_CACHE_KIB}")


def connect(path: Path, flags: int | None = None) -> apsw.Connection:
    """An apsw connection to `path`, keyed when it lies in an encrypted home. Callers go on as before
    (busy timeout, extensions, pragmas): a keyed connection behaves like a plain one."""
    import apsw

    key = key_for_database(path)
    conn = apsw.Connection(str(path)) if flags is None else apsw.Connection(str(path), flags=flags)
    if key is not None:
        try:
            apply_key(conn, key)
        except BaseException:
            conn.close()
            raise
    return conn


def rekey_file(path: Path, old: bytes | None, new: bytes | None) -> None:
    """Re-encrypt the whole database file `path` from key `old` to key `new` (None = plain), in place.

    Only ever called on a private copy (convert.py), which replaces the original once complete: SQLite3MC's
    rekey rewrites every page in one transaction, but a crash midway would leave a file whose state a
    resumed run would have to guess.
    """
    import apsw

    conn = apsw.Connection(str(path))
    try:
        if old is not None:
            apply_key(conn, old)
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute(f"PRAGMA cipher = '{DB_CIPHER}'")
        conn.execute(f"PRAGMA rekey = \"x'{new.hex()}'\"" if new is not None else "PRAGMA rekey = ''")
    finally:
        conn.close()
