"""An embedder got from its factory on first use, and whether the next one must first prepare a model.

While a preload runs (service.preload_embedder), the factory blocks until the models are loaded: the
searcher holds a `DeferredEmbedder` and meets that wait only when it embeds the query, after the keyword leg.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.memory.store.embedder import Embedder, EmbedderIdentity, QueryEmbedding

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.config.loading import EmbeddingSettings


class DeferredEmbedder:
    """An `Embedder` got from its factory on first use (the factory blocks while a preload runs)."""

    def __init__(self, factory: Callable[[], Embedder]) -> None:
        self._factory = factory

    @property
    def identity(self) -> EmbedderIdentity:
        return self._factory().identity

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._factory().embed_passages(texts)

    def embed_query(self, text: str) -> QueryEmbedding:
        return self._factory().embed_query(text)

    def resolve(self) -> Embedder:
        """The embedder itself, for what reads more of it than the protocol (search/legs/neighbours.py)."""
        return self._factory()


def model_needs_preparing(settings: EmbeddingSettings, cache: Path) -> bool:
    """True when the next embedding will first convert a packaged model (seconds, once per home)."""
    if settings.provider != "local":
        return False
    from openclaw_cli.memory.embedding.loader import expected_identity
    from openclaw_cli.memory.embedding.onnx_embedder import local_model_files
    from openclaw_cli.memory.embedding.quantize import cached_name, is_cached
    from openclaw_cli.memory.embedding.use_m3 import model as use_m3
    from openclaw_cli.memory.store.layout import MINILM, USE_M3

    model = str(expected_identity(settings).model)  # type: ignore[union-attr]
    if model != MINILM and use_m3.needs_conversion(cache):
        return True
    if model == USE_M3:
        return False
    source, _ = local_model_files()
    return not is_cached(cache / cached_name(source))
