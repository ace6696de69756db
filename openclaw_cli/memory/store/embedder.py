"""What the store needs to know of an embedder: its identity (which model made a vector), the interface
every embedder offers, and the error of one that is unavailable.

The embedders themselves live in memory/embedding/; these types sit here, below them, because the store
records the identity beside the vectors and embeds new records through the interface.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from openclaw_cli.core.errors import OpenclawError

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class EmbedderIdentity:
    """What produced a vector. Vectors from different identities must never be compared."""

    provider: str
    model: str
    dimensions: int

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "dimensions": self.dimensions}


@dataclass
class QueryEmbedding:
    vector: np.ndarray
    # Share of the query's word pieces the vocabulary maps to [UNK]: a vector built mostly from [UNK]
    # says nothing about the query, so search should lean on keywords instead.
    unknown_share: float


class Embedder(Protocol):
    @property
    def identity(self) -> EmbedderIdentity: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> QueryEmbedding: ...


class EmbeddingUnavailable(OpenclawError):
    """An API embedder failed after its retries; the record is kept and its vector stays pending."""
