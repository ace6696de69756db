"""The 100k realistic stores, built once and cached outside the repository (issue 23).

Embedding 100k memories with the two default models takes ~10 minutes on 2 cores, so the vectors, the
openclaw home and the naive design's database are kept under the system temp dir, keyed by a hash of the
corpus, BUILD and the model names: a rerun finds them and starts at once.
Both stores hold the same texts with the same vectors (embedded once by the real default embedder).

Run `python -m benchmarks.store100k` to build the cache ahead of `pytest benchmarks`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import corpus100k, naive

# A smaller count (OPENCLAW_BENCH_COUNT=2000) gives a quick smoke run of the same benchmarks.
COUNT = int(os.environ.get("OPENCLAW_BENCH_COUNT", "100000"))
# Bump when how the stores are built changes (this file or naive.build): the cache key holds it.
BUILD = 1
HERE = Path(__file__).resolve().parent
# Read once, at import: a model conversion points `tempfile` into its own work directory while it runs
# (fsutil.temp_files_inside), and a cache path resolved then would land inside it.
TEMP = Path(tempfile.gettempdir())


def model_cache() -> Path:
    """The converted models the test suite shares (tests/memory_helpers.shared_model_cache)."""
    return TEMP / f"openclaw-test-models-{os.getuid()}"


def settings() -> Any:
    """Default settings but for where the converted models live."""
    from openclaw_cli.config.loading import Settings

    base = Settings()
    embedding = base.memory.embedding.model_copy(update={"model_cache_dir": str(model_cache())})
    memory = base.memory.model_copy(update={"embedding": embedding})
    return base.model_copy(update={"memory": memory})


@functools.lru_cache
def cache_dir(count: int = COUNT) -> Path:
    """Keyed by what is built (the texts themselves, not the generator's source), so reformatting the
    generator keeps the cache."""
    digest = hashlib.sha256("\n".join(corpus100k.memories(count)).encode())
    digest.update(f"{BUILD}:{settings().memory.embedding.model}".encode())
    return TEMP / f"openclaw-bench-100k-{digest.hexdigest()[:12]}"


class Precomputed:
    """The real embedder, but passages come from the vectors embedded once for the corpus (`add` them
    part by part: the store keeps the embedder it was first given)."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self._vectors: dict[str, Any] = {}
        self.identity = real.identity

    def add(self, texts: Sequence[str], vectors: Any) -> None:
        self._vectors.update(zip(texts, vectors, strict=True))

    def embed_passages(self, texts: Sequence[str]) -> Any:
        import numpy as np

        return np.stack([self._vectors[t] for t in texts])

    def embed_query(self, text: str) -> Any:
        return self._real.embed_query(text)


PART = 10_000  # vectors are embedded and saved in parts: a build can resume, and run on several processes


@functools.lru_cache
def vector_dir() -> Path:
    """The full corpus's vectors, in parts; a smaller store takes the first ones (the same texts)."""
    digest = hashlib.sha256("\n".join(corpus100k.memories(COUNT)).encode())
    digest.update(f"{settings().memory.embedding.model}".encode())
    where = TEMP / f"openclaw-bench-vectors-{digest.hexdigest()[:12]}"
    where.mkdir(mode=0o700, exist_ok=True)
    return where


def part(number: int) -> Any:
    """The vectors of the full corpus's texts number*PART to (number+1)*PART, embedded by the default
    models unless saved; another process embedding the same part is waited for (a lock file with its pid)."""
    import numpy as np

    path = vector_dir() / f"part-{number:02d}.npy"
    lock = path.with_suffix(".lock")
    while not path.exists():
        try:
            handle = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            if not _alive(lock):
                lock.unlink(missing_ok=True)
            time.sleep(2)
            continue
        os.write(handle, str(os.getpid()).encode())
        os.close(handle)
        try:
            _embed_part(number, path)
        finally:
            lock.unlink(missing_ok=True)
    return np.load(path)


def _alive(lock: Path) -> bool:
    try:
        os.kill(int(lock.read_text() or "0"), 0)
    except (OSError, ValueError):
        return False
    return True


def _embed_part(number: int, path: Path) -> None:
    import numpy as np

    from openclaw_cli.memory.embedding.loader import create_embedder

    texts = corpus100k.memories(COUNT)[number * PART : (number + 1) * PART]
    embedder = create_embedder(settings().memory.embedding, cache_dir=model_cache())
    batches = [embedder.embed_passages(texts[i : i + 256]) for i in range(0, len(texts), 256)]
    temporary = path.with_suffix(".tmp.npy")
    np.save(temporary, np.vstack(batches).astype(np.float32))
    os.replace(temporary, path)


def _parts(count: int) -> list[int]:
    return list(range((count + PART - 1) // PART))


def _openclaw_home(root: Path, texts: list[str]) -> Path:
    """An openclaw home holding `texts`, written part by part as the vectors become available."""
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.agent_memory import NewMemory
    from openclaw_cli.memory.embedding.loader import create_embedder
    from openclaw_cli.memory.service import MemoryService

    home = root / "home"
    if (root / "home.done").exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(mode=0o700)
    service = MemoryService(Home(home), "main", settings().memory)
    fast = Precomputed(create_embedder(settings().memory.embedding, cache_dir=model_cache()))
    service.embedder = lambda: fast  # type: ignore[method-assign]
    categories = corpus100k.CATEGORIES
    for number in _parts(len(texts)):
        chunk = texts[number * PART : (number + 1) * PART]
        fast.add(chunk, part(number)[: len(chunk)])
        start = number * PART
        records = [
            service.build_record(NewMemory(l0=t, category=categories[(start + i) % len(categories)]))
            for i, t in enumerate(chunk)
        ]
        service.add_many(records)
    service.close()
    (root / "home.done").touch()
    return home


def build(count: int = COUNT) -> Path:
    """The cache directory, with home/ (an openclaw home) and naive.db, built if missing."""
    root = cache_dir(count)
    root.mkdir(mode=0o700, exist_ok=True)
    texts = corpus100k.memories(count)
    _openclaw_home(root, texts)
    if not (root / "naive.db").exists():
        import numpy as np

        vectors = np.vstack([part(n) for n in _parts(count)])[:count]
        naive.build(root / "naive.tmp.db", texts, vectors)
        os.replace(root / "naive.tmp.db", root / "naive.db")
    return root


if __name__ == "__main__":
    import sys

    # `python -m benchmarks.store100k [COUNT]` builds; `... embed FIRST STEP` only embeds parts FIRST,
    # FIRST+STEP, ... (a second process speeds a build up where there are cores to spare).
    started = time.perf_counter()
    if sys.argv[1:2] == ["embed"]:
        for number in _parts(COUNT)[int(sys.argv[2]) :: int(sys.argv[3])]:
            part(number)
        print(f"embedded in {time.perf_counter() - started:.0f} s")
    else:
        where = build(int(sys.argv[1]) if len(sys.argv) > 1 else COUNT)
        print(f"{where} in {time.perf_counter() - started:.0f} s")
