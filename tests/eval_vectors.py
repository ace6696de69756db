"""The eval set's vectors, computed once per test run per model and shared by the modules that embed it.

Three modules build the eval store (tests/search_defaults.py): with the default pair (MiniLM and USE-m3
side by side), MiniLM alone and USE-m3 alone. The pair's two models are the same models, loaded the same
way, as each alone, so the same text gets the same vector in all three stores; embedding the ~2,500
memories and ~400 queries again in each took 4 (USE-m3) to 11 (MiniLM) CPU-s per model. `shared_vectors` wraps the real
embedder: a text first asked for is embedded by the model and kept, in a file per model in a directory
that the run's xdist workers share; any module embedding it later reads it from there. A vector does not
depend on the batch it was embedded in (tests/test_embed.py, tests/test_use_m3.py say so), so a kept one
is the one the model would give again. Nothing waits for another worker: a module that finds no file (or
an older one) embeds what it lacks itself, and publishing merges with whatever the other worker published.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from openclaw_cli.memory.embedding.composite import CompositeEmbedder
from openclaw_cli.memory.embedding.onnx_embedder import Embedder, EmbedderIdentity, QueryEmbedding

# How many published passages are embedded again and compared before a module uses them.
CHECKED_TEXTS = 6


def run_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of this run shared by its xdist workers (each has its own base temp inside the run's)."""
    base = tmp_path_factory.getbasetemp()
    directory = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "eval-vectors"
    directory.mkdir(exist_ok=True)
    return directory


class SharedVectors:
    """An embedder giving the model's vectors, each text embedded once per run (see the module's doc)."""

    def __init__(self, model: Embedder, directory: Path) -> None:
        self.model = model
        identity = model.identity
        self.path = directory / f"{identity.provider}-{identity.model}-{identity.dimensions}.npz"
        self.passages: dict[str, np.ndarray] = {}
        self.queries: dict[str, tuple[np.ndarray, float]] = {}
        self.published: set[str] = set()  # passages read from another module's file
        self.checked = False
        self.published_queries: set[str] = set()  # emptied once one of them is checked
        self._read()

    @property
    def identity(self) -> EmbedderIdentity:
        return self.model.identity

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self._check_published(texts)
        missing = [text for text in dict.fromkeys(texts) if text not in self.passages]
        if missing:
            self.passages.update(zip(missing, self.model.embed_passages(missing), strict=True))
        if not texts:
            return np.zeros((0, self.identity.dimensions), dtype=np.float32)
        return np.stack([self.passages[text] for text in texts])

    def embed_query(self, text: str) -> QueryEmbedding:
        if text in self.published_queries:
            self.published_queries.clear()  # the first published one is compared, as the passages are
            again = self.model.embed_query(text)
            vector, unknown_share = self.queries[text]
            assert np.array_equal(again.vector, vector) and again.unknown_share == unknown_share, (
                f"{self.path.name}: the model gives another vector than the published one for {text!r}"
            )
        if text not in self.queries:
            found = self.model.embed_query(text)
            self.queries[text] = (found.vector, found.unknown_share)
        vector, unknown_share = self.queries[text]
        return QueryEmbedding(vector=vector.copy(), unknown_share=unknown_share)

    def publish(self) -> None:
        """Write every vector known here or already published, atomically (the other worker may read)."""
        self._read()
        temporary = self.path.with_name(f"{self.path.stem}.{os.getpid()}.tmp.npz")
        np.savez(
            temporary,
            passage_texts=np.array(list(self.passages), dtype=str),
            passages=np.stack(list(self.passages.values())) if self.passages else np.zeros((0, 0)),
            query_texts=np.array(list(self.queries), dtype=str),
            queries=np.stack([v for v, _ in self.queries.values()]) if self.queries else np.zeros((0, 0)),
            unknown=np.array([u for _, u in self.queries.values()], dtype=np.float64),
        )
        temporary.replace(self.path)

    def _check_published(self, texts: Sequence[str]) -> None:
        """The first time published vectors are used, a few of them embedded again here must come out the
        same, to the bit: what makes sharing them the same as not."""
        if self.checked:
            return
        sample = [text for text in dict.fromkeys(texts) if text in self.published][:CHECKED_TEXTS]
        if sample:
            again = self.model.embed_passages(sample)
            assert all(np.array_equal(self.passages[t], v) for t, v in zip(sample, again, strict=True)), (
                f"{self.path.name}: the model gives other vectors than the published ones"
            )
            self.checked = True

    def _read(self) -> None:
        if not self.path.exists():
            return
        with np.load(self.path) as data:
            for text, vector in zip(data["passage_texts"], data["passages"], strict=True):
                if str(text) not in self.passages:
                    self.passages[str(text)] = vector
                    self.published.add(str(text))
            for text, vector, unknown in zip(
                data["query_texts"], data["queries"], data["unknown"], strict=True
            ):
                if str(text) not in self.queries:
                    self.queries[str(text)] = (vector, float(unknown))
                    self.published_queries.add(str(text))


def shared_vectors(embedder: Embedder, directory: Path) -> tuple[Embedder, list[SharedVectors]]:
    """`embedder` with each of its models' vectors shared: the pair as a pair of shared models (it embeds
    each half itself, as the real pair does), a single model as it is. Returns what to publish, too."""
    if isinstance(embedder, CompositeEmbedder):
        english = SharedVectors(embedder.english, directory)
        multilingual = SharedVectors(embedder.multilingual, directory)
        return CompositeEmbedder(english, multilingual), [english, multilingual]
    shared = SharedVectors(embedder, directory)
    return shared, [shared]
