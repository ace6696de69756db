"""Scaling the warm vector scan past 100k (issue 54, "Scale past 100k"): where the exact int8 scan of every
row should give way to an approximate index, measured on one process at growing sizes.

The warm process's vector leg (store/vectors/matrix.py) holds every int8 row in memory and, from 20k rows,
ranks rows by weighted sign-bit disagreement first and scores the best of them exactly: that is already an
approximate index (binary quantisation with exact re-scoring). This benchmark measures, at each size, the
exact scan of every row and the sign prefilter with fixed pools and with the default one (a 256th of the
rows past 256k): query time p50/p95, the memory the rows take (maxRssMB is the process's peak, generating
the vectors included), and the prefilter's recall@10 against the exact scan (issue 54 wants >= 0.99).

Vectors: the real default embedder's vectors of corpus100k's first texts (benchmarks/store100k.py's cached
parts, embedded if missing), and past those, mixtures of two of them plus noise, so every size holds
distinct vectors shaped like real ones. Queries are fresh mixtures (not stored rows). Run:
    python -m pytest benchmarks/test_bench_scan_scale.py -n 0 -p no:cacheprovider -s
(OPENCLAW_BENCH_SCALE_SIZES=100000,250000,500000,1000000 by default; OPENCLAW_BENCH_SCALE_PARTS=2: how
many 10k parts of real vectors to mix from.)
"""

from __future__ import annotations

import json
import os
import resource
import time
from typing import Any

import pytest

from benchmarks import store100k
from benchmarks.test_bench_search_100k import spread
from openclaw_cli.memory.store.vector_codec import int8_format, quantise
from openclaw_cli.memory.store.vectors import matrix as vector_matrix
from openclaw_cli.memory.store.vectors.matrix import VectorMatrix
from openclaw_cli.memory.store.vectors.query import VectorFilter

SIZES = [
    int(n) for n in os.environ.get("OPENCLAW_BENCH_SCALE_SIZES", "100000,250000,500000,1000000").split(",")
]
PARTS = int(os.environ.get("OPENCLAW_BENCH_SCALE_PARTS", "2"))
QUERIES = 100
POOLS = (1024, 2048, 4096)
K = 10
MIX = 0.6  # the second vector's share in a mixture
NOISE = 0.02  # per component, against components of ~1/30 in a unit vector of 896 dims
CHUNK = 50_000


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _base() -> Any:
    import numpy as np

    return np.vstack([store100k.part(n) for n in range(PARTS)]).astype(np.float32)


def _mixtures(base: Any, count: int, seed: int) -> Any:
    import numpy as np

    rng = np.random.default_rng(seed)
    first = rng.integers(0, len(base), count)
    second = rng.integers(0, len(base), count)
    mixed = base[first] + np.float32(MIX) * base[second]
    mixed += rng.normal(0, NOISE, mixed.shape).astype(np.float32)
    return mixed / np.linalg.norm(mixed, axis=1, keepdims=True)


def _rows(base: Any, size: int) -> Any:
    """`size` int8 rows: the real vectors first, then mixtures, quantised as the store stores them."""
    import numpy as np

    fmt = int8_format(base.shape[1])
    rows = np.empty((size, base.shape[1]), dtype=np.int8)
    real = min(size, len(base))
    rows[:real] = quantise(base[:real], fmt.step)
    for start in range(real, size, CHUNK):
        end = min(size, start + CHUNK)
        rows[start:end] = quantise(_mixtures(base, end - start, seed=start), fmt.step)
    return rows


def _timed(matrix: VectorMatrix, query: Any) -> tuple[float, list[int]]:
    started = time.perf_counter()
    found = matrix.knn(query, K, VectorFilter())
    return (time.perf_counter() - started) * 1000, [rowid for rowid, _ in found]


@pytest.mark.parametrize("size", SIZES)
def test_scan_at_size(benchmark: Any, size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    base = _base()
    blob = _rows(base, size).tobytes()  # one copy of the rows, shared by both matrices
    fmt = int8_format(base.shape[1])
    rowids = list(range(1, size + 1))
    prefilter = VectorMatrix.of_int8(rowids, blob, fmt)
    exact = VectorMatrix.of_int8(rowids, blob, fmt)
    exact._signs = None  # every row scored exactly: the reference, and the scan an index would replace
    queries = _mixtures(base, QUERIES, seed=size + 1)
    variants = [*(f"signPool{p}" for p in POOLS), "signPoolDefault"]
    samples: dict[str, list[float]] = {"exact": [], **{name: [] for name in variants}}
    overlap: dict[str, list[float]] = {name: [] for name in variants}
    load_before = _load()

    def measure() -> None:
        for query in queries:  # interleaved, query by query
            ms, truth = _timed(exact, query)
            samples["exact"].append(ms)
            for pool in (*POOLS, None):
                # A fixed pool, or (None) the default: SIGN_POOL growing with the table past 256k rows.
                with monkeypatch.context() as patched:
                    if pool is not None:
                        patched.setattr(vector_matrix, "SIGN_POOL", pool)
                        patched.setattr(vector_matrix, "SIGN_POOL_ROWS_PER_ROW", 1 << 62)
                    ms, found = _timed(prefilter, query)
                name = f"signPool{pool or 'Default'}"
                samples[name].append(ms)
                overlap[name].append(len(set(found) & set(truth)) / K)

    for query in queries[:5]:  # first touches of the arrays
        _timed(exact, query)
        _timed(prefilter, query)
    benchmark.pedantic(measure, rounds=1, iterations=1)
    signs = prefilter._signs
    figures = {
        "rows": size,
        "queryMs": {name: spread(values) for name, values in samples.items()},
        "recallAt10VsExact": {name: round(float(np.mean(v)), 4) for name, v in overlap.items()},
        "rowBytesMB": round(len(blob) / 2**20, 1),
        "signBytesMB": round((signs.nbytes if signs is not None else 0) / 2**20, 1),
        "maxRssMB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load": [load_before, _load()],
    }
    benchmark.extra_info.update(figures)
    print(f"\nvector scan at {size} rows:\n" + json.dumps(figures, indent=1))
    assert all(len(v) == QUERIES for v in samples.values())
