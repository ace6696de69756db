"""A deterministic stand-in for the composite embedder: 896 dims, a unit 384-dim half and a unit 512-dim half."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from openclaw_cli.memory.embedding.onnx_embedder import EmbedderIdentity, QueryEmbedding

HALVES = (384, 512)


def unit_halves(
    rng: np.random.Generator, count: int, centers: Sequence[np.ndarray] | None = None
) -> np.ndarray:
    """`count` composite vectors; with `centers` (one array per half) they cluster like real topics."""
    parts = []
    for n, dims in enumerate(HALVES):
        part = rng.normal(size=(count, dims))
        if centers is not None:
            part += centers[n][rng.integers(0, len(centers[n]), count)]
        parts.append(part / np.linalg.norm(part, axis=1, keepdims=True))
    return np.hstack(parts).astype(np.float32)


class CompositeFake:
    """Implements the `Embedder` protocol; each text's vector is seeded by its hash, so it is stable."""

    def __init__(self, weights: tuple[float, float] = (1.0, 1.0)) -> None:
        self.weights = weights
        self.calls = 0

    @property
    def identity(self) -> EmbedderIdentity:
        return EmbedderIdentity("fake", "composite-minilm-512", sum(HALVES))

    def _one(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        return unit_halves(np.random.default_rng(seed), 1)[0]

    def embed_passages(self, texts: Sequence[str]) -> Any:
        self.calls += 1
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, sum(HALVES)), np.float32)

    def embed_query(self, text: str) -> QueryEmbedding:
        vector = self._one(text)
        vector[: HALVES[0]] *= self.weights[0]
        vector[HALVES[0] :] *= self.weights[1]
        return QueryEmbedding(vector=vector, unknown_share=0.0)
