"""The query vectors of a warm process's recent searches, kept so the same text is embedded once.

A chat turn searches its message twice (the person's memories, then the agent's: inject._recall_local),
and a person says the same or nearly the same things every day; each search embedded the query again, two
models on a shared CPU (6-17 ms of a warm turn's 44 ms of injection at 2,000 memories, issue 54). A
vector depends on the text alone (tests/test_embed.py: not on the batch it was embedded in), so a kept
one is the one the model would give again, and a search that reads it ranks exactly as before.

What is kept is the embedding's future, per embedder object (a weak key: a closed service's embedder
takes its entries with it): a second search of the same text while the first is still embedding waits for
that one instead of embedding it again. A failed embedding is not kept (the next search tries again).
At most MEMO_SIZE texts per embedder, least recently used out first; `forget` empties every memo (a purge:
the vectors are of the person's own words).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openclaw_cli.memory.embedding.onnx_embedder import Embedder, QueryEmbedding

MEMO_SIZE = 256  # texts per embedder: 256 x 896 float32 is under 1 MB

_memos: weakref.WeakKeyDictionary[object, OrderedDict[str, Future[QueryEmbedding]]] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()


def embedding(
    embedder: Embedder, text: str, start: Callable[[], Future[QueryEmbedding]]
) -> Future[QueryEmbedding]:
    """The future of `text`'s vector by `embedder`: the kept one, else the one `start()` returns (kept)."""
    with _lock:
        try:
            memo = _memos.setdefault(embedder, OrderedDict())
        except TypeError:  # an embedder that cannot be weakly referenced is not memoised
            return start()
        found = memo.get(text)
        if found is not None and not (found.done() and found.exception() is not None):
            memo.move_to_end(text)
            return found
        future = start()
        memo[text] = future
        while len(memo) > MEMO_SIZE:
            memo.popitem(last=False)
    future.add_done_callback(lambda done: _drop_failed(embedder, text, done))
    return future


def _drop_failed(embedder: Embedder, text: str, done: Future[QueryEmbedding]) -> None:
    if done.cancelled() or done.exception() is not None:
        with _lock:
            memo = _memos.get(embedder)
            if memo is not None and memo.get(text) is done:
                del memo[text]


def forget() -> None:
    """Drop every kept query vector of this process (a purge or delete in this process)."""
    with _lock:
        for memo in _memos.values():
            memo.clear()
