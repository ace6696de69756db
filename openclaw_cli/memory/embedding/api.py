"""An embedding model reached through litellm (OpenAI, Azure, Cohere, Ollama, an OpenAI-compatible server).

litellm takes ~2.7 s to import, so it is imported only when a text is embedded (openclaw_cli.llm.calls).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import ConfigError
from openclaw_cli.memory.embedding.onnx_embedder import (
    EmbedderIdentity,
    EmbeddingUnavailable,
    QueryEmbedding,
    l2_normalise,
)

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.config.loading import EmbeddingSettings


class LiteLLMEmbedder:
    """Any embedding model litellm can reach (OpenAI, Azure, Cohere, Ollama, an OpenAI-compatible server)."""

    def __init__(self, settings: EmbeddingSettings, *, retry_base_delay: float = 0.5) -> None:
        if not settings.model:
            raise ConfigError(
                "memory.embedding.model is required for provider litellm",
                hint="e.g. openclaw config set memory.embedding.model openai/text-embedding-3-small",
            )
        self._settings = settings
        self._model = settings.model
        self._retry_base_delay = retry_base_delay
        self._dimensions = settings.dimensions
        self._lock = threading.Lock()
        # The text leaves the machine: masked unless the user turned it off (memory/embedding/redact.py).
        self._redact = settings.redact is not False

    @property
    def identity(self) -> EmbedderIdentity:
        if self._dimensions is None:
            # Not configured: ask the model once and remember the answer.
            self._embed_raw(["dimension probe"])
        assert self._dimensions is not None
        return EmbedderIdentity("litellm", self._model, self._dimensions)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.identity.dimensions), dtype=np.float32)
        return self._embed_raw(list(texts))

    def embed_query(self, text: str) -> QueryEmbedding:
        return QueryEmbedding(vector=self._embed_raw([text])[0], unknown_share=0.0)

    def _embed_raw(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        from openclaw_cli.llm import calls as llm

        if self._redact:
            from openclaw_cli.memory.embedding.redact import redact_all

            texts = redact_all(texts)
        try:
            rows = llm.embed(
                self._model,
                texts,
                self._settings.api_base,
                self._settings.dimensions,
                batch_size=self._settings.batch_size,
                max_retries=self._settings.max_retries,
                base_delay=self._retry_base_delay,
            )
        except llm.ModelUnavailable as exc:
            raise EmbeddingUnavailable(
                f"embedding model litellm/{self._model} unavailable: {exc.message}",
                hint="the record is kept; run `openclaw memory index` later to fill in its vector",
            ) from exc
        matrix = np.asarray(rows, dtype=np.float32)
        self._check_width(matrix.shape[1])
        return l2_normalise(matrix)

    def _check_width(self, width: int) -> None:
        with self._lock:
            if self._dimensions is None:
                self._dimensions = width
        if width != self._dimensions:
            raise ConfigError(
                f"embedding model {self._model} returned {width}-dimensional vectors, "
                f"expected {self._dimensions}",
                hint="set memory.embedding.dimensions to the model's size (or one it supports)",
            )
