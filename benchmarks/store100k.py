"""The 100k realistic stores, built once and cached outside the repository (issue 23).

Embedding 100k memories with the two default models takes ~10 minutes on 2 cores, so the vectors, the
openclaw home and the naive design's database are kept under the system temp dir, keyed by a hash of the
corpus generator, BUILD and the model names: a rerun finds them and starts at once.
Both stores hold the same texts with the same vectors (embedded once by the real default embedder).

Run `python -m benchmarks.store100k` to build the cache ahead of `pytest benchmarks`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import corpus100k, naive

# A smaller count (OPENCLAW_BENCH_COUNT=2000) gives a quick smoke run of the same benchmarks.
COUNT = int(os.environ.get("OPENCLAW_BENCH_COUNT", "100000"))
# Bump when how the stores are built changes (this file or naive.build): the cache key holds it.
BUILD = 1
HERE = Path(__file__).resolve().parent


def model_cache() -> Path:
    """The converted models the test suite shares (tests/memory_helpers.shared_model_cache)."""
    return Path(tempfile.gettempdir()) / f"openclaw-test-models-{os.getuid()}"


def settings() -> Any:
    """Default settings but for where the converted models live."""
    from openclaw_cli.config import Settings

    base = Settings()
    embedding = base.memory.embedding.model_copy(update={"model_cache_dir": str(model_cache())})
    memory = base.memory.model_copy(update={"embedding": embedding})
    return base.model_copy(update={"memory": memory})


def cache_dir(count: int = COUNT) -> Path:
    digest = hashlib.sha256()
    digest.update((HERE / "corpus100k.py").read_bytes())
    digest.update(f"{BUILD}:{settings().memory.embedding.model}:{count}".encode())
    return Path(tempfile.gettempdir()) / f"openclaw-bench-100k-{digest.hexdigest()[:12]}"


class Precomputed:
    """The real embedder, but passages come from the vectors embedded once for the corpus."""

    def __init__(self, real: Any, texts: Sequence[str], vectors: Any) -> None:
        self._real = real
        self._rows = {text: n for n, text in enumerate(texts)}
        self._vectors = vectors
        self.identity = real.identity

    def embed_passages(self, texts: Sequence[str]) -> Any:
        return self._vectors[[self._rows[t] for t in texts]]

    def embed_query(self, text: str) -> Any:
        return self._real.embed_query(text)


def _vectors(root: Path, texts: list[str]) -> Any:
    import numpy as np

    from openclaw_cli.memory.embedding.loader import create_embedder

    path = root / "vectors.npy"
    if path.exists():
        return np.load(path)
    full = cache_dir(COUNT) / "vectors.npy"
    if len(texts) < COUNT and full.exists():  # a smaller corpus is the full one's first texts
        return np.load(full, mmap_mode="r")[: len(texts)].copy()
    embedder = create_embedder(settings().memory.embedding, cache_dir=model_cache())
    parts = [embedder.embed_passages(texts[i : i + 512]) for i in range(0, len(texts), 512)]
    vectors = np.vstack(parts).astype(np.float32)
    np.save(root / "vectors.tmp.npy", vectors)
    os.replace(root / "vectors.tmp.npy", path)
    return vectors


def _openclaw_home(root: Path, texts: list[str], vectors: Any) -> Path:
    from openclaw_cli.memory.agent_memory import NewMemory
    from openclaw_cli.memory.embedding.loader import create_embedder
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.paths import Home

    home = root / "home"
    if (root / "home.done").exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(mode=0o700)
    service = MemoryService(Home(home), "main", settings().memory)
    real = create_embedder(settings().memory.embedding, cache_dir=model_cache())
    fast = Precomputed(real, texts, vectors)
    service.embedder = lambda: fast  # type: ignore[method-assign]
    categories = corpus100k.CATEGORIES
    records = [
        service.build_record(NewMemory(l0=t, category=categories[i % len(categories)]))
        for i, t in enumerate(texts)
    ]
    service.add_many(records)
    service.close()
    (root / "home.done").touch()
    return home


def build(count: int = COUNT) -> Path:
    """The cache directory, with vectors.npy, home/ (an openclaw home) and naive.db, built if missing."""
    root = cache_dir(count)
    root.mkdir(mode=0o700, exist_ok=True)
    texts = corpus100k.memories(count)
    vectors = _vectors(root, texts)
    _openclaw_home(root, texts, vectors)
    if not (root / "naive.db").exists():
        naive.build(root / "naive.tmp.db", texts, vectors)
        os.replace(root / "naive.tmp.db", root / "naive.db")
    return root


if __name__ == "__main__":
    import sys
    import time

    started = time.perf_counter()
    where = build(int(sys.argv[1]) if len(sys.argv) > 1 else COUNT)
    print(f"{where} in {time.perf_counter() - started:.0f} s")
