"""The default local embedder: an English model and a multilingual model side by side in one vector.

all-MiniLM-L6-v2 is strong on English conversation but has almost no Chinese vocabulary; USE-m3 reads
16 languages and matches Chinese to English, but is weaker on English paraphrase. Each memory stores
both vectors, concatenated (each half unit-norm, so a half's dot product is that model's cosine), so one
table, one cache entry and one rebuild cover both. Search scores each half separately and weighs them by
the languages of the query and of the memory (semantic.py): a Chinese memory's English half is built
from unknown tokens and is never trusted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from openclaw_cli.memory.embed import EmbedderIdentity, QueryEmbedding
from openclaw_cli.memory.profiles import COMPOSITE

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.embed import Embedder


class CompositeEmbedder:
    def __init__(self, english: Embedder, multilingual: Embedder) -> None:
        self.english = english
        self.multilingual = multilingual
        dims = english.identity.dimensions + multilingual.identity.dimensions
        self.identity = EmbedderIdentity("local", COMPOSITE, dims)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        first = self.english.embed_passages(texts)
        second = self.multilingual.embed_passages(texts)
        return np.hstack([first, second]).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> QueryEmbedding:
        """Both halves unit-norm and unweighted: search weighs them per query and per memory. The unknown
        share is the English model's, which is what decides how far its half can be trusted."""
        import numpy as np

        english = self.english.embed_query(text)
        multilingual = self.multilingual.embed_query(text)
        vector = np.hstack([english.vector, multilingual.vector]).astype(np.float32, copy=False)
        return QueryEmbedding(vector=vector, unknown_share=english.unknown_share)
