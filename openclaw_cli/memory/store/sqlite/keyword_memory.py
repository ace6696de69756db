"""The keyword index held in memory by a warm process: FTS5's own BM25, computed from postings in numpy.

FTS5 calls `bm25()` once per matching row, and each call reads that row's size from `records_fts_docsize`
with a statement of its own: at 100k memories a query matched ~5,000 rows and the ranking took ~2.5 ms of
CPU against 0.35 ms for the match itself. Here each term's postings (row, weighted frequency) and each
row's size in tokens are arrays, and the score is FTS5's formula (sqlite's fts5_aux.c), operation for
operation in float64: the same values, and the same order where they tie (FTS5 visits rows by rowid, and
SQLite's sorter keeps equal keys in the order they came).

It is a copy of the FTS5 index at one state of the index (`KeywordCache`: sqlite/keyword_state.py; once like
keyword.TermCounts). A stale copy is never used: FTS5 answers meanwhile, and the copy is built again on a
thread with a connection of its own once REBUILD_AFTER searches in a row found the database unchanged (a
process that writes between every chat turn's two searches keeps searching FTS5 and builds nothing). Rows are split into
tokens by the index's own tokenizer, so the postings hold exactly FTS5's tokens; a query term that is not
one known token (FTS5 searches a term of several as a phrase) is left to FTS5.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

from openclaw_cli.memory.text.analysis import FTS_TOKENIZE, match_terms

if TYPE_CHECKING:
    import apsw
    import numpy as np

K1, B = 1.2, 0.75  # FTS5's bm25() constants
COLUMN_WEIGHTS = (1.0, 0.4)  # l0, l1: the weights bm25_candidates passes to bm25()
SEEN_LIMIT = 100_000  # terms whose tokens a Tokens keeps
REBUILD_AFTER = 3  # searches in a row at one database state before a stale copy is built again
# ... and at least a 16th of the copy's rows: a build costs ~25 us of CPU a row (51 ms at 2,000) and saves a
# search ~0.14 ms there, so a gateway whose "remember this" changed the index every few turns spent ~6 ms of
# CPU a turn (10 clients) on copies that went stale again before they paid for themselves.
REBUILD_ROWS_PER_SEARCH = 16


class Tokens:
    """Terms' FTS5 tokens, by the index's tokenizer on a reading connection; lower-case ASCII letters and
    digits are their own token (unicode61 keeps them as they are), so only other terms call it."""

    def __init__(self, conn: apsw.Connection) -> None:
        import apsw

        name, *args = FTS_TOKENIZE.split()
        self._tokenizer = conn.fts5_tokenizer(name, args)
        self._reason = apsw.FTS5_TOKENIZE_DOCUMENT
        self._seen: dict[str, tuple[str, ...]] = {}

    def of(self, term: str) -> tuple[str, ...]:
        if term.isascii() and term.isalnum() and (term.islower() or term.isdigit()):
            return (term,)
        found = self._seen.get(term)
        if found is None:
            split = self._tokenizer(term.encode(), self._reason, None, include_offsets=False)
            found = tuple(str(t[0]) for t in split)
            if len(self._seen) < SEEN_LIMIT:
                self._seen[term] = found
        return found


class KeywordMemory:
    """Postings of every token, each row's length term of BM25, and the totals BM25 reads."""

    def __init__(
        self,
        key: object,
        rowids: np.ndarray,
        lengths: np.ndarray,
        postings: dict[str, tuple[np.ndarray, np.ndarray]],
    ) -> None:
        self.key = key
        self._rowids = rowids  # ascending: a posting's positions ascend with the rowids, as FTS5 visits them
        self._postings = postings  # token -> (positions, code of the weighted frequency)
        self._frequencies = _frequency_table()
        avgdl = float(lengths.sum()) / len(rowids) if len(rowids) else 1.0
        # Each row's k1 * (1 - b + b * D / avgdl), the part of the formula a query does not change.
        self._norm = K1 * (1 - B + B * lengths / avgdl)
        self._scratch = threading.local()  # _buffers

    @property
    def rows(self) -> int:
        return len(self._rowids)

    def document_counts(self, terms: Sequence[str], tokens: Tokens) -> dict[str, int] | None:
        """keyword.document_counts from the postings: each term's count of rows holding it, for the terms
        some row holds; None unless every term is its own one token (FTS5's vocabulary answers those)."""
        counts = {}
        for term in dict.fromkeys(terms):
            if tokens.of(term) != (term,):
                return None
            posting = self._postings.get(term)
            if posting is not None and len(posting[0]):
                counts[term] = len(posting[0])
        return counts

    def _buffers(self) -> tuple[np.ndarray, np.ndarray]:
        """This thread's score and match buffers, one entry a row, all zeros between queries: made once,
        not per query (a fresh 800 KB array and the scan of it for its non-zero scores were ~0.2 ms of
        the ~0.55 ms this takes at 100k rows). Per thread: a gateway searches on several at once."""
        import numpy as np

        found: tuple[np.ndarray, np.ndarray] | None = getattr(self._scratch, "buffers", None)
        if found is None:
            found = (np.zeros(len(self._rowids), np.float64), np.zeros(len(self._rowids), np.bool_))
            self._scratch.buffers = found
        return found

    @classmethod
    def build(
        cls,
        key: object,
        rows: Sequence[tuple[int, str, str]],
        tokens: Tokens,
        stop: threading.Event | None = None,
    ) -> KeywordMemory:
        """From the index's content rows (rowid, l0 terms, l1 terms), in any order.

        Vectorised: a row by row build in Python took ~7 s at 100k memories. Every term occurrence gets
        an integer id, and the postings are the (token, row) pairs counted per column."""
        import numpy as np

        ordered = sorted(rows)
        occurrences, place, column, term_ids = _occurrences(ordered, stop)
        token, place, column, names = _tokens_of(occurrences, place, column, term_ids, tokens)
        lengths = np.bincount(place, minlength=len(ordered)).astype(np.float64)
        rowids = np.array([r[0] for r in ordered], dtype=np.int64)
        return cls(key, rowids, lengths, _postings(token, place, column, len(ordered), names))

    def candidates(self, terms: Sequence[str], pool: int, tokens: Tokens) -> list[tuple[int, float]] | None:
        """What FTS5's `ORDER BY bm25() LIMIT pool` lists (keyword.bm25_candidates), or None for a query
        FTS5 must answer (a term of several tokens is a phrase). `tokens`: the searching connection's."""
        import numpy as np

        phrases = []
        for term in match_terms(terms):
            split = tokens.of(term)
            if len(split) != 1:
                return None
            phrases.append(split[0])
        rows = len(self._rowids)
        hits = [hit for token in phrases if (hit := self._postings.get(token)) is not None]
        if not hits or pool <= 0:
            return []
        score, listed = self._buffers()
        try:
            # FTS5 adds each phrase's term in the query's order, 0 for a phrase the row lacks: the same sums.
            for at, code in hits:
                weight = self._frequencies[code]
                idf = math.log((rows - len(at) + 0.5) / (len(at) + 0.5))
                idf = idf if idf > 0.0 else 1e-6
                score[at] += idf * ((weight * (K1 + 1.0)) / (weight + self._norm[at]))
                listed[at] = True
            matched = np.flatnonzero(listed)  # FTS5's matches, by rowid
            values = -score[matched]  # FTS5's bm25(): lower is better
        finally:  # the buffers go back to all zeros for the next query, whatever happened
            for at, _ in hits:
                score[at], listed[at] = 0.0, False
        scored = values != 0  # every term adds more than 0: all of them, as FTS5 matches them
        matched, values = matched[scored], values[scored]
        if len(matched) > pool:  # every row tied with the pool's last is kept, in rowid order
            edge = np.partition(values, pool - 1)[pool - 1]
            kept = values <= edge
            matched, values = matched[kept], values[kept]
        # ORDER BY bm25: SQLite's sorter keeps equal keys in the order they came (by rowid).
        best = np.argsort(values, kind="stable")[:pool]
        return [(int(self._rowids[matched[i]]), -float(values[i])) for i in best]


ROW_MARK, COLUMN_MARK = "\x00", "\x01"  # never a term: the analysis keeps no control characters
PART = 1024  # rows split at a time
CODE_SIDE = 256  # a term counted up to 255 times in each column of a row (an index term is 1-64 characters)


class Stopped(Exception):
    """The build was stopped (the storage is closing)."""


def _occurrences(
    ordered: Sequence[tuple[int, str, str]], stop: threading.Event | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, int]]:
    """Every term occurrence of the rows as a term id, with its row position and column (0: l0, 1: l1),
    and the term ids. Each part of PART rows is split once, joined with marks between rows and columns,
    so the per-occurrence work runs in C (a row by row split and lookup took ~3 s at 100k memories,
    4.5M occurrences), and a search on another thread waits at most one part's work for the GIL."""
    import numpy as np

    term_ids: dict[str, int] = {ROW_MARK: 0, COLUMN_MARK: 1}
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for start in range(0, len(ordered), PART):
        if stop is not None and stop.is_set():
            raise Stopped
        rows = ordered[start : start + PART]
        words = f" {ROW_MARK} ".join(f"{l0} {COLUMN_MARK} {l1}" for _, l0, l1 in rows).split()
        for word in set(words).difference(term_ids):
            term_ids[word] = len(term_ids)
        ids = np.fromiter(map(term_ids.__getitem__, words), dtype=np.int64, count=len(words))
        row_ends, column_ends = ids == 0, ids == 1
        if int(row_ends.sum()) != len(rows) - 1 or int(column_ends.sum()) != len(rows):
            raise ValueError("a keyword-index row holds a mark")  # the caller keeps searching FTS5
        place = np.cumsum(row_ends)
        column = np.cumsum(column_ends) - place
        kept = ~(row_ends | column_ends)
        parts.append((ids[kept], place[kept] + start, column[kept].astype(np.int8)))
    del term_ids[ROW_MARK], term_ids[COLUMN_MARK]
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int8), term_ids
    ids, places, columns = (np.concatenate(arrays) for arrays in zip(*parts, strict=True))
    return ids, places, columns, term_ids


def _tokens_of(
    occurrences: np.ndarray, place: np.ndarray, column: np.ndarray, term_ids: dict[str, int], tokens: Tokens
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """The occurrences of terms as occurrences of FTS5 tokens (a term of several tokens, rare, gives
    one per token), and each token id's token."""
    import numpy as np

    token_ids: dict[str, int] = {}
    single = np.full(max(term_ids.values(), default=-1) + 1, -1, dtype=np.int64)  # a one-token term's
    several: dict[int, list[int]] = {}
    for term, number in term_ids.items():
        found = [token_ids.setdefault(t, len(token_ids)) for t in tokens.of(term)]
        if len(found) == 1:
            single[number] = found[0]
        else:
            several[number] = found
    token = single[occurrences]
    if several:
        keep = token >= 0
        extra = [
            (t, p, c)
            for o, p, c in zip(
                occurrences[~keep].tolist(), place[~keep].tolist(), column[~keep].tolist(), strict=True
            )
            for t in several[o]
        ]
        token = np.concatenate([token[keep], np.array([e[0] for e in extra], dtype=np.int64)])
        place = np.concatenate([place[keep], np.array([e[1] for e in extra], dtype=np.int64)])
        column = np.concatenate([column[keep], np.array([e[2] for e in extra], dtype=np.int8)])
    return token, place, column, list(token_ids)


def _postings(
    token: np.ndarray, place: np.ndarray, column: np.ndarray, rows: int, names: list[str]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each token's rows (positions, ascending) and weighted frequency in each, from its occurrences."""
    import numpy as np

    if not len(token):
        return {}
    pair = token * max(rows, 1) + place  # sorted by token, then by row
    keys, counts = np.unique(pair, return_counts=True)
    in_l1 = np.zeros(len(keys), dtype=np.int64)
    l1_keys, l1_counts = np.unique(pair[column == 1], return_counts=True)
    in_l1[np.searchsorted(keys, l1_keys)] = l1_counts
    weights = _frequency_codes(counts - in_l1, in_l1)
    owner, at = keys // max(rows, 1), (keys % max(rows, 1)).astype(np.int32)  # 4 bytes a posting, not 8
    bounds = (np.flatnonzero(np.diff(owner)) + 1).tolist()
    starts, ends = [0, *bounds], [*bounds, len(keys)]
    return {names[int(owner[s])]: (at[s:e], weights[s:e]) for s, e in zip(starts, ends, strict=True)}


def _frequency_codes(in_l0: np.ndarray, in_l1: np.ndarray) -> np.ndarray:
    """Each posting's (count in l0, count in l1) as a small code into FREQUENCIES: 2 bytes a posting
    instead of a float64's 8 (at 100k memories, 4.2M postings)."""
    import numpy as np

    codes = np.minimum(in_l0, CODE_SIDE - 1) * CODE_SIDE + np.minimum(in_l1, CODE_SIDE - 1)
    if int(in_l0.max(initial=0)) >= CODE_SIDE or int(in_l1.max(initial=0)) >= CODE_SIDE:
        raise ValueError("a term repeated more than the frequency table holds")  # FTS5 answers instead
    return codes.astype(np.uint16)


def _frequency_table() -> np.ndarray:
    """FTS5's weighted frequency of a term in a row for each code: each column's weight added once per
    instance, l0's first, in that order (so the sums round as FTS5's do)."""
    import numpy as np

    table = np.zeros(CODE_SIDE * CODE_SIDE, dtype=np.float64)
    for in_l0 in range(CODE_SIDE):
        total = 0.0
        for _ in range(in_l0):
            total += COLUMN_WEIGHTS[0]
        for in_l1 in range(CODE_SIDE):
            table[in_l0 * CODE_SIDE + in_l1] = total
            total += COLUMN_WEIGHTS[1]
    return table


class KeywordCache:
    """One connection's in-memory copy of its keyword index (KeywordMemory), built on a thread with a
    reading connection of its own (apsw refuses one connection used by two threads at once)."""

    def __init__(self, open_reader: Callable[[], apsw.Connection]) -> None:
        self._open_reader = open_reader
        self._index: KeywordMemory | None = None
        self._tokens: Tokens | None = None  # the searching connection's, for the query's terms
        self._last_key: object = None  # the database state the last search saw
        self._seen = 0  # searches in a row that saw it
        self._failed: object = None  # a state whose build failed is not built again
        self._builder: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def ranked(
        self, conn: apsw.Connection, key: object, terms: Sequence[str], pool: int
    ) -> list[tuple[int, float]] | None:
        """The copy's `KeywordMemory.candidates` when it is of the database state `key`; None (FTS5
        answers) while there is no such copy, whose build this may start."""
        index = self._index
        if index is not None and index.key == key:
            if self._tokens is None:
                self._tokens = Tokens(conn)
            return index.candidates(terms, pool, self._tokens)
        # The first copy is built at once; a later one once REBUILD_AFTER searches in a row saw the same
        # state. Two were not enough: a chat turn searches twice (the person's memories, the agent's)
        # and then writes (its FSRS hits, a "remember this"), so each turn built a copy on a thread that
        # competed with the next turn for the CPU and was stale before any search could read it.
        with self._lock:  # searches on several threads start one build
            self._seen = self._seen + 1 if key == self._last_key else 1
            held = 0 if self._index is None else self._index.rows
            wanted = (
                self._index is None
                and self._last_key is None
                or self._seen >= max(REBUILD_AFTER, held // REBUILD_ROWS_PER_SEARCH)
            )
            self._last_key = key
            if wanted and key != self._failed and not self.building:
                self._builder = threading.Thread(
                    target=self._build, args=(key,), name="keywords-in-memory", daemon=True
                )
                self._builder.start()
        return None

    def document_counts(
        self, conn: apsw.Connection, key: object, terms: Sequence[str]
    ) -> dict[str, int] | None:
        """The copy's `KeywordMemory.document_counts` when it is of the database state `key`: a query's
        new terms cost ~0.4 ms through FTS5's vocabulary table at 100k memories. None otherwise."""
        index = self._index
        if index is None or index.key != key:
            return None
        if self._tokens is None:
            self._tokens = Tokens(conn)
        return index.document_counts(terms, self._tokens)

    def _build(self, key: object) -> None:
        try:
            reader = self._open_reader()
            try:
                rows = reader.execute(
                    "SELECT id, coalesce(c0, ''), coalesce(c1, '') FROM records_fts_content"
                ).fetchall()
                content = cast("list[tuple[int, str, str]]", rows)
                self._index = KeywordMemory.build(key, content, Tokens(reader), self._stop)
            finally:
                reader.close()
        except Exception:  # noqa: BLE001  # only speed is lost: FTS5 keeps answering
            self._failed = key

    @property
    def building(self) -> bool:
        return self._builder is not None and self._builder.is_alive()

    def wait(self) -> None:
        """Until a build under way is done (benchmarks and tests measure the copy, not FTS5)."""
        if self._builder is not None:
            self._builder.join()

    def close(self) -> None:
        """Stop a build under way and wait for its thread."""
        self._stop.set()
        if self._builder is not None:
            self._builder.join()
            self._builder = None
