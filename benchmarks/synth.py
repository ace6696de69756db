"""Synthetic memory databases for the speed and space benchmarks, built through the real write path.

Writing 100k records through a model would take minutes, and neither the speed of search nor the space
taken depends on what the vectors mean, so passages get clustered synthetic unit vectors of the coming
composite embedder's shape (896 dims: a 384-dim and a 512-dim unit half) from `CompositeEmbedder`;
`MemoryStore.add` writes everything else (records, FTS terms, vec0 rows, history) exactly as in real use.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.embedding.onnx_embedder import EmbedderIdentity, QueryEmbedding
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.store.layout import COMPOSITE

EVAL = Path(__file__).resolve().parent.parent / "fixtures" / "eval" / "memories.jsonl"
CATEGORIES = ("profile", "preference", "event", "case", "lesson", "insight")


def _vocabulary() -> list[str]:
    words: set[str] = set()
    for line in EVAL.read_text(encoding="utf-8").splitlines():
        words.update(w.strip(".,;:()\"'") for w in json.loads(line)["l0"].split())
    return sorted(w for w in words if w.isascii() and w.isalpha() and len(w) > 2)


def _zipf_vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    """The eval set's words among made-up ones, in a random frequency order.

    Real text follows Zipf's law over tens of thousands of words; drawing every word uniformly from the
    eval set's ~600 would make each query term match ~2% of all memories, which no real memory store
    sees, and would measure an artificially huge BM25 result set.
    """
    syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "ve", "zu", "an", "or", "el", "is", "um"]
    made_up = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(size)}
    words = _vocabulary() + sorted(made_up)
    rng.shuffle(words)
    return words


def texts(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    vocab = _zipf_vocabulary(rng)
    weights = [1.0 / rank for rank in range(1, len(vocab) + 1)]
    out = []
    for i in range(count):
        words = rng.choices(vocab, weights=weights, k=rng.randint(7, 14))
        if i % 10 == 0:
            words.append(f"PR #{rng.randint(1, 99999)}")
        out.append(" ".join(words) + f" ({i})")
    return out


def composite_service(home: Path, *, warm: bool = False) -> MemoryService:
    """A service whose embedder is the composite stand-in, with real MiniLM query vectors."""
    from openclaw_cli.memory.embedding.loader import create_embedder

    settings = Settings()
    service = MemoryService(Home(home), "main", settings.memory, warm=warm)
    local = create_embedder(settings.memory.embedding, cache_dir=Home(home).model_cache_dir)
    composite = CompositeEmbedder(query=local)
    service.embedder = lambda: composite  # type: ignore[method-assign]
    return service


def build(home: Path, count: int, seed: int = 7) -> MemoryService:
    """`count` memories with 896-dim composite vectors, written through `MemoryService.add_many`."""
    service = composite_service(home)
    records = [
        service.build_record(NewMemory(l0=t, category=CATEGORIES[i % 6], user_id=f"u{i % 3}"))
        for i, t in enumerate(texts(count, seed))
    ]
    service.add_many(records)
    return service


HALVES = (384, 512)


class CompositeEmbedder:
    """A stand-in for the coming composite embedder (a unit 384-dim half and a unit 512-dim half).

    Passage vectors are clustered synthetic unit halves, seeded by the text so they are stable; no model
    is loaded, since space and vector-search speed do not depend on what the vectors mean. With `query`
    the query vectors come from that embedder's 384-dim vector (the real model, so a warm search pays
    the model's time): the real two-model composite.
    """

    def __init__(self, query: Any = None, weights: tuple[float, float] = (1.0, 1.0), seed: int = 7) -> None:
        rng = np.random.default_rng(seed)
        self._centers = [rng.normal(size=(256, d)).astype(np.float32) for d in HALVES]
        self._query = query
        self.weights = weights

    @property
    def identity(self) -> EmbedderIdentity:
        # The real composite's identity, so search uses its profile (two scans, per-leg scoring).
        return EmbedderIdentity("local", COMPOSITE, sum(HALVES))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), sum(HALVES)), dtype=np.float32)
        for n, text in enumerate(texts):
            rng = np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))
            parts = [c[rng.integers(0, len(c))] + rng.normal(size=c.shape[1]) for c in self._centers]
            out[n] = np.concatenate([p / np.linalg.norm(p) for p in parts])
        return out

    def embed_query(self, text: str) -> QueryEmbedding:
        if self._query is None:
            vector = self.embed_passages([text])[0]
            unknown = 0.0
        else:  # the real composite model: a warm search pays both models' time
            real = self._query.embed_query(text)
            vector, unknown = real.vector.astype(np.float32), real.unknown_share
        vector[: HALVES[0]] *= self.weights[0]
        vector[HALVES[0] :] *= self.weights[1]
        return QueryEmbedding(vector=vector, unknown_share=unknown)
