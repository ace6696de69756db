"""A store's vocabulary embedded ahead of its searches, in the background of a long-lived process; and
the count of searches running, which it waits for (imported by every search: nothing heavy at the top).

A warm process's first search of a question pays for each word of its best candidates the process has
not met (search/legs/neighbours.py: ~2.5 ms of CPU a word; 10-107 ms of such a search at 100k memories). Those
words are the dictionary words of the memories' texts, and there are few: 286 English and 179 Chinese in
the 100k benchmark corpus (the same at 20k), embedded in under a second of CPU, while reading them out of
the texts costs ~0.3 ms a text (31 s for 100k); a real store's English words are bounded by the
dictionary's ~22k (~55 s of CPU once, ~34 MB). benchmarks/test_bench_word_table.py measures them. So a
running gateway walks each store's memories in row order and embeds the words the home's tables lack
(WordVectors.of keeps them there, and in memory).

It never delays a turn: one daemon thread at the lowest CPU priority, in small steps (TEXTS texts read,
WORDS words embedded at a time), each begun only while `busy()` says no turn or search runs. It resumes
where it stopped: the last row done per store is kept beside the tables (MARKS) with the purge token it
was done under (embedding/word_table.py), so after a purge it walks every store again from the first row
(and a pass that overlapped the purge keeps nothing: WordVectors checks the token). Memories added later
are found by the next pass (`wake`, or every PASS_EVERY_S).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.fsutil import atomic_write_bytes
from openclaw_cli.memory.embedding.word_table import WordTables

if TYPE_CHECKING:
    from openclaw_cli.memory.search.legs.neighbours import WordVectors
    from openclaw_cli.memory.store.memory_store import MemoryStore

TEXTS = 32  # texts read and analysed per step (~10 ms)
WORDS = 8  # words embedded per step (~20 ms): a search that wants the model waits at most this long
IDLE_POLL_S = 0.05
PASS_EVERY_S = 300.0
MARKS = "warmed.json"


@dataclass(frozen=True)
class Source:
    """A store, and the lock its owner holds while it uses the store's connection."""

    store: MemoryStore
    lock: AbstractContextManager[Any]


@dataclass
class WordWarmUp:
    """Warms the tables in `directory` with the words of the stores' memories (see the module doc)."""

    vectors: WordVectors
    directory: Path
    busy: Callable[[], bool]
    stop: threading.Event = field(default_factory=threading.Event)
    wake: threading.Event = field(default_factory=threading.Event)
    embedded: int = 0  # words this warm-up ran through a model
    passes: int = 0  # passes over every store finished
    failed: str | None = None  # the last pass's error, if it ended in one

    def to_dict(self) -> dict[str, Any]:
        return {"wordsEmbedded": self.embedded, "passes": self.passes, "failed": self.failed}

    def forever(self, sources: Callable[[], Sequence[Source]]) -> None:
        """Pass after pass until `stop` (call it in a daemon thread); a pass that fails is retried at
        the next (a store closed under it, a damaged one: its searches say so)."""
        lower_priority()
        while not self.stop.is_set():
            self.wake.clear()
            try:
                if self.run_pass(sources()):
                    self.passes += 1
                    self.failed = None
            except Exception as exc:  # noqa: BLE001  # a background cache never stops the process
                self.failed = f"{exc.__class__.__name__}: {exc}"
            self.wake.wait(PASS_EVERY_S)

    def run_pass(self, sources: Sequence[Source]) -> bool:
        """Every store from where the last pass ended; False when stopped midway."""
        return all(self._store(source) for source in sources)

    def _store(self, source: Source) -> bool:
        from openclaw_cli.memory.search.legs.neighbours import dictionary_words

        key = str(source.store.path)
        while self._idle():
            tables = WordTables.now(self.directory)  # before the texts are read (word_table.py)
            marks = read_marks(self.directory, tables.token)
            with source.lock:
                rows = source.store.storage.records_after(marks.get(key, 0), TEXTS)
            if not rows:
                return True
            words = dict.fromkeys(
                w for _, record in rows if not record.deleted for w in dictionary_words(record.l0)
            )
            batch = list(words)
            for start in range(0, len(batch), WORDS):
                if not self._idle():
                    return False
                before = self.vectors.embedded
                self.vectors.of(batch[start : start + WORDS], tables)
                self.embedded += self.vectors.embedded - before
            marks[key] = rows[-1][0]
            atomic_write_bytes(
                self.directory / MARKS,
                json.dumps({"token": tables.token, "rows": marks}).encode(),
                durable=False,
            )
        return False

    def _idle(self) -> bool:
        """Wait while a turn or search runs; False once stopped."""
        while not self.stop.is_set():
            if not self.busy():
                return True
            self.stop.wait(IDLE_POLL_S)
        return False


_SEARCHES = [0]  # searches running in this process (MemoryService.search counts them)
_SEARCHES_LOCK = threading.Lock()


@contextmanager
def searching() -> Iterator[None]:
    """Around a search: the warm-up waits while any runs."""
    with _SEARCHES_LOCK:
        _SEARCHES[0] += 1
    try:
        yield
    finally:
        with _SEARCHES_LOCK:
            _SEARCHES[0] -= 1


def searches_running() -> int:
    return _SEARCHES[0]


def read_marks(directory: Path, token: str) -> dict[str, int]:
    """The last row warmed per store, if they were warmed since the last purge (`token`)."""
    try:
        found = json.loads((directory / MARKS).read_text(encoding="utf-8"))
        if found.get("token") == token:
            return {str(k): int(v) for k, v in found["rows"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        pass
    return {}


def lower_priority() -> None:
    """The calling thread at the lowest CPU priority (Linux gives each thread its own nice value)."""
    with suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
