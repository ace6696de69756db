"""Loading the embedder on a background thread while the process does other work.

A one-search process opens its store, analyses the query and runs the keyword leg while the model
sessions initialise (onnxruntime does not hold the GIL then); a bulk load validates its input meanwhile.
What the load is for can be told at any time (`expect`): a bulk load's count makes USE-m3's full
segmentation start loading as soon as the models are in, whichever of the two comes first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING

from openclaw_cli.core.background import start_load

if TYPE_CHECKING:
    from openclaw_cli.memory.embedding.onnx_embedder import Embedder


class EmbedderPreload:
    def __init__(self, load: Callable[[], Embedder]) -> None:
        """`load`: the process's embedder, cached by its owner (a second call returns the same one)."""
        self._load = load
        self._thread: threading.Thread | None = None
        self._loaded = False  # the embedder is in
        self._expected = 0  # texts the process said it will embed
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        """Start loading (once). A failure is not reported here: the caller meets it again where it uses
        the embedder."""
        if self._thread is None:
            self._thread = start_load(self._run, "embedder-preload")

    def expect(self, count: int) -> None:
        """`count` texts are about to be embedded: what embedding that many needs starts loading as soon
        as the embedder is in, now if it is. Without a preload the embedder meets the count itself."""
        with self._lock:
            self._expected = count
            loaded = self._loaded
        if loaded:
            self._start_expected()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        self._load()  # a failure ends the thread quietly (start_load): the caller meets it again
        with self._lock:  # `expect` before or after this: one of the two starts it
            self._loaded = True
        self._start_expected()

    def _start_expected(self) -> None:
        with suppress(Exception):
            expect = getattr(self._load(), "expect_passages", None)
            if self._expected and expect is not None:
                expect(self._expected)
