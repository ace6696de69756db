"""The default local embedder: an English model and a multilingual model side by side in one vector.

all-MiniLM-L6-v2 is strong on English conversation but has almost no Chinese vocabulary; USE-m3 reads
16 languages and matches Chinese to English, but is weaker on English paraphrase. Each memory stores
both vectors, concatenated (each half unit-norm, so a half's dot product is that model's cosine), so one
table, one cache entry and one rebuild cover both. Search scores each half separately and weighs them by
the languages of the query and of the memory (search/legs/semantic.py): a Chinese memory's English half would be
built from unknown tokens and is never trusted, so it is not computed at all (see `unread_half`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from openclaw_cli.core.thread_imports import settle_numpy
from openclaw_cli.memory.embedding.onnx_embedder import EmbedderIdentity, QueryEmbedding
from openclaw_cli.memory.store.layout import COMPOSITE, LANGUAGE_TRUST
from openclaw_cli.memory.store.layout import unread_half as unread_half
from openclaw_cli.memory.text.analysis import detect_language

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.embedding.onnx_embedder import Embedder


class CompositeEmbedder:
    def __init__(self, english: Embedder, multilingual: Embedder) -> None:
        self.english = english
        self.multilingual = multilingual
        dims = english.identity.dimensions + multilingual.identity.dimensions
        self.identity = EmbedderIdentity("local", COMPOSITE, dims)
        self._helper: ThreadPoolExecutor | None = None
        self._helper_lock = threading.Lock()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Both halves for English and mixed texts; for the others (Chinese, Japanese...) the English
        model is not run: search and dedup give its half no weight (store/layout.py LANGUAGE_TRUST), and it is
        ~80% of the embedding time of a short text."""
        import numpy as np

        self.expect_passages(len(texts))  # loading while the English model runs
        read = [i for i, text in enumerate(texts) if LANGUAGE_TRUST.get(detect_language(text), 0.0) > 0]
        first = np.tile(unread_half(self.english.identity.dimensions), (len(texts), 1))
        if read:
            first[read] = self.english.embed_passages([texts[i] for i in read])
        second = self.multilingual.embed_passages(texts)
        return np.hstack([first, second]).astype(np.float32, copy=False)

    def expect_passages(self, count: int) -> None:
        """`count` texts are about to be embedded: the multilingual model starts loading what bulk work
        needs, if it has anything to load (embedding/use_m3/segmenter.py)."""
        expect = getattr(self.multilingual, "expect_passages", None)
        if expect is not None:
            expect(count)

    def embed_query(self, text: str) -> QueryEmbedding:
        """Both halves unit-norm and unweighted: search weighs them per query and per memory. The unknown
        share is the English model's, which is what decides how far its half can be trusted."""
        import numpy as np

        # The two models run side by side (onnxruntime releases the GIL): a query waits for the slower
        # one instead of both, 2.8 -> 1.6 ms warm on 2 cores.
        pending = self._query_helper().submit(self.multilingual.embed_query, text)
        english = self.english.embed_query(text)
        multilingual = pending.result()
        vector = np.hstack([english.vector, multilingual.vector]).astype(np.float32, copy=False)
        return QueryEmbedding(vector=vector, unknown_share=english.unknown_share)

    def _query_helper(self) -> ThreadPoolExecutor:
        with self._helper_lock:
            if self._helper is None:
                settle_numpy()
                self._helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embed")
            return self._helper
