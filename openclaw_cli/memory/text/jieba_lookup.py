"""jieba's dictionary as a table on disk, for a process that segments a few texts and exits.

jieba keeps its whole prefix dictionary (~600k entries) in a dict, loaded in 0.6-0.9 s per process even
from its cache; a `memory add` or a one-shot search then looks up a few dozen of them. Segmentation only
ever asks three things of that dict (`key in FREQ`, `FREQ[key]`, `FREQ.get(key)`), so a read-only SQLite
table answers them in microseconds each, with the same values and therefore the same segmentation. The
table is built once per cache directory from jieba's own dictionary, atomically, 0600.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.fsutil import ensure_private_dir, one_builder_at_a_time

if TYPE_CHECKING:
    import apsw

FORMAT = "jieba-lookup-v1"


class PrefixFrequencies(Mapping[str, int]):
    """The read-only view of jieba's FREQ that segmentation uses, answered by the table."""

    def __init__(self, conn: apsw.Connection) -> None:
        self._conn = conn
        self._memo: dict[str, int | None] = {}

    def _lookup(self, key: str) -> int | None:
        if key not in self._memo:
            row = self._conn.execute("SELECT freq FROM freq WHERE word = ?", (key,)).fetchone()
            self._memo[key] = None if row is None else int(row[0])
        return self._memo[key]

    def __getitem__(self, key: str) -> int:
        value = self._lookup(key)
        if value is None:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._lookup(key) is not None

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        value = self._lookup(key)
        return default if value is None else value

    def __iter__(self) -> Iterator[str]:
        return (str(row[0]) for row in self._conn.execute("SELECT word FROM freq"))

    def __len__(self) -> int:
        row = self._conn.execute("SELECT count(*) FROM freq").fetchone()
        return int(row[0]) if row else 0


def table_path(cache_dir: Path, dictionary: Path) -> Path:
    stat = dictionary.stat()
    key = f"{dictionary.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{FORMAT}"
    return cache_dir / f"jieba-{hashlib.sha256(key.encode()).hexdigest()[:16]}.sqlite"


def open_frequencies(cache_dir: Path, tokenizer: Any) -> tuple[PrefixFrequencies, int]:
    """(FREQ, total) for `tokenizer` (a jieba.Tokenizer), building the table on first use."""
    import apsw

    with tokenizer.get_dict_file() as handle:
        dictionary = Path(handle.name)
    path = table_path(cache_dir, dictionary)
    if not path.exists():
        with one_builder_at_a_time(path):
            if not path.exists():  # not built by another process while this one waited
                _build(path, tokenizer)
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    row = conn.execute("SELECT freq FROM freq_total").fetchone()
    if row is None:  # cannot happen for a table this module built; a damaged one is rebuilt
        conn.close()
        path.unlink(missing_ok=True)
        return open_frequencies(cache_dir, tokenizer)
    return PrefixFrequencies(conn), int(row[0])


def _build(path: Path, tokenizer: Any) -> None:
    import apsw

    ensure_private_dir(path.parent)
    with tokenizer.get_dict_file() as source:
        frequencies, total = tokenizer.gen_pfdict(source)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.unlink(missing_ok=True)
    conn = apsw.Connection(str(partial))
    try:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("BEGIN")
        conn.execute("CREATE TABLE freq (word TEXT PRIMARY KEY, freq INTEGER NOT NULL) WITHOUT ROWID")
        conn.execute("CREATE TABLE freq_total (freq INTEGER NOT NULL)")
        conn.executemany("INSERT INTO freq VALUES (?, ?)", frequencies.items())
        conn.execute("INSERT INTO freq_total VALUES (?)", (total,))
        conn.execute("COMMIT")
    finally:
        conn.close()
    os.chmod(partial, 0o600)
    os.replace(partial, path)  # a concurrent builder writes the same bytes; the last rename wins
