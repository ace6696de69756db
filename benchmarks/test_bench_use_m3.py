"""USE multilingual v3 embedder: one-time conversion cost, load time, query latency, passages per second.

Run: pytest benchmarks/test_bench_use_m3.py --benchmark-only -n 0 -p no:cacheprovider -s
The conversion runs in a child process so its peak RSS is its own, not this process's high-water mark.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.test_bench_embed import realistic_passages
from openclaw_cli.memory.embedding.use_m3.model import MultilingualEmbedder, cached_model, table_path

PASSAGES = 512
_ROOT = Path(__file__).resolve().parent.parent

_CONVERT = """
import json, resource, sys, time
from pathlib import Path
start = time.perf_counter()
from openclaw_cli.memory.embedding.use_m3.model import convert
convert(Path(sys.argv[1]))
seconds = time.perf_counter() - start
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
print(json.dumps({"seconds": seconds, "peak_rss_mb": peak_mb}))
"""


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("use-m3-bench") / "models"


def _convert_in_child(cache: Path) -> dict[str, float]:
    for path in cache.glob("*") if cache.exists() else []:
        path.unlink()
    done = subprocess.run(
        [sys.executable, "-c", _CONVERT, str(cache)], capture_output=True, text=True, check=True, cwd=_ROOT
    )
    return json.loads(done.stdout)


def test_bench_conversion(benchmark: Any, cache_dir: Path) -> None:
    figures = benchmark.pedantic(_convert_in_child, args=(cache_dir,), rounds=2, iterations=1)
    model = cached_model(cache_dir)
    benchmark.extra_info.update(
        peak_rss_mb=round(figures["peak_rss_mb"]),
        model_mb=round(model.stat().st_size / 1e6, 1),
        table_mb=round(table_path(model).stat().st_size / 1e6, 1),
    )


@pytest.fixture(scope="module")
def embedder(cache_dir: Path) -> MultilingualEmbedder:
    loaded = MultilingualEmbedder(cache_dir, threads=2)
    loaded.embed_passages(["warm-up", "warm-up"])
    return loaded


def test_bench_load(benchmark: Any, embedder: MultilingualEmbedder, cache_dir: Path) -> None:
    # The cache is converted (the embedder fixture did it): this is the cost every later process pays.
    benchmark.pedantic(MultilingualEmbedder, args=(cache_dir, 2), rounds=5, iterations=1)


def test_bench_single_query(benchmark: Any, embedder: MultilingualEmbedder) -> None:
    result = benchmark(embedder.embed_query, "what coffee does the user drink in the morning?")
    assert result.vector.shape == (512,)


def test_bench_bulk_passages(benchmark: Any, embedder: MultilingualEmbedder) -> None:
    texts = realistic_passages(PASSAGES)
    vectors = benchmark.pedantic(embedder.embed_passages, args=(texts,), rounds=3, iterations=1)
    assert vectors.shape == (PASSAGES, 512)
    benchmark.extra_info["passages_per_second"] = round(PASSAGES / benchmark.stats.stats.mean)
