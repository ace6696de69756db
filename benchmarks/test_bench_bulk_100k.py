"""Bulk load of the 100k realistic corpus (issue 23): does `memory add --batch` keep up with the models as
the store grows, and how does it compare with the naive design's load?

The corpus is the 100k search benchmark's (benchmarks/corpus100k.py). It is loaded into one new home in ten
slices of 10k, one `openclaw memory add --batch` process each, so every slice's rate is the rate at that store
size (0, 10k, ... 90k memories already stored). Around each slice, the same texts are embedded by the same
default models in this process, half just before and half just after it (benchmarks/bracketed.py): that
slice's embedding-only rate, under the same machine conditions.
The naive design (benchmarks/naive.py) loads by embedding everything and then inserting the texts and
vectors into FTS5 and sqlite-vec: its rate is the texts over the embedding time plus its insert time.

Goal: every slice at >= 85% of its embedding-only rate, at any store size.
Run: python -m pytest benchmarks/test_bench_bulk_100k.py -n 0 -p no:cacheprovider -s  (~10 minutes on 2
cores; OPENCLAW_BENCH_COUNT=2000 for a quick smoke run of the same code).
"""

from __future__ import annotations

import functools
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import corpus100k, naive, store100k
from benchmarks.bracketed import cpu_seconds, embedding_around

ROOT = Path(__file__).resolve().parent.parent
SLICES = 10
GOAL_SHARE = 0.85


def _embedder() -> Any:
    from openclaw_cli.memory.embedding.loader import create_embedder

    embedder = create_embedder(store100k.settings().memory.embedding, cache_dir=store100k.model_cache())
    embedder.embed_passages(["warm up", "预热"])  # loaded and converted before anything is timed
    # As in test_bench_writing: the reference segments as bulk work does, the CLI pays for that load itself.
    multilingual = getattr(embedder, "multilingual", embedder)
    if hasattr(multilingual, "load_full_vocabulary"):
        multilingual.load_full_vocabulary()
    return embedder


def _batch_file(path: Path, texts: list[str], first: int) -> Path:
    categories = corpus100k.CATEGORIES
    lines = (
        json.dumps({"text": t, "category": categories[(first + i) % len(categories)]}, ensure_ascii=False)
        for i, t in enumerate(texts)
    )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _load_slice(source: Path, home: Path) -> tuple[float, float, dict[str, Any]]:
    """Seconds and CPU seconds of one whole `memory add --batch` process, and its JSON report."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    env |= {
        "OPENCLAW_HOME": str(home),
        "OPENCLAW_MEMORY__EMBEDDING__MODELCACHEDIR": str(store100k.model_cache()),
    }
    command = [sys.executable, "-m", "openclaw_cli", "memory", "add", "--batch", str(source), "--json"]
    started, cpu = time.perf_counter(), cpu_seconds(resource.RUSAGE_CHILDREN)
    out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, check=True)
    seconds, cpu = time.perf_counter() - started, cpu_seconds(resource.RUSAGE_CHILDREN) - cpu
    return seconds, cpu, json.loads(out.stdout)


def test_bench_bulk_load_100k_by_store_size(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    texts = corpus100k.memories(store100k.COUNT)
    size = (len(texts) + SLICES - 1) // SLICES
    embedder = _embedder()
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    rows: list[dict[str, Any]] = []
    vectors: list[Any] = []

    def load() -> None:
        for first in range(0, len(texts), size):
            part = texts[first : first + size]
            source = _batch_file(tmp_path / "slice.jsonl", part, first)
            around = embedding_around(
                embedder.embed_passages, part, functools.partial(_load_slice, source, home)
            )
            vectors.append(around.vectors)
            embedding, embedding_cpu = around.embedding_s, around.embedding_cpu_s
            seconds, cli_cpu, report = around.result
            assert report["added"] + report["duplicate"] == len(part) and not report["pendingVectors"], report
            rows.append(
                {
                    "stored_before": first,
                    "embedding_per_s": round(len(part) / embedding, 1),
                    "cli_per_s": round(len(part) / seconds, 1),
                    "ratio": round(embedding / seconds, 3),
                    # CPU seconds: the machine's neighbours move the wall rates between the two runs.
                    "cpu_ratio": round(embedding_cpu / cli_cpu, 3),
                    "embedding_s": embedding,
                    "cli_s": seconds,
                }
            )

    benchmark.pedantic(load, rounds=1, iterations=1)
    started = time.perf_counter()
    naive.build(tmp_path / "naive.db", texts, np.vstack(vectors))
    naive_insert = time.perf_counter() - started
    embedding_total = sum(r["embedding_s"] for r in rows)
    cli_total = sum(r["cli_s"] for r in rows)
    ratios = [r["ratio"] for r in rows]
    figures = {
        "records": len(texts),
        "slices": [{k: v for k, v in r.items() if k not in ("embedding_s", "cli_s")} for r in rows],
        "ratio_min_median": [min(ratios), round(statistics.median(ratios), 3)],
        "cpu_ratio_median": statistics.median(r["cpu_ratio"] for r in rows),
        "cli_per_s": round(len(texts) / cli_total, 1),
        "embedding_only_per_s": round(len(texts) / embedding_total, 1),
        "naive_per_s": round(len(texts) / (embedding_total + naive_insert), 1),
        "naive_insert_s": round(naive_insert, 1),
        "cli_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "goal_ratio": GOAL_SHARE,
        "load_average": round(os.getloadavg()[0], 2),
    }
    benchmark.extra_info.update(figures)
    print(f"\nbulk load of the 100k corpus in {SLICES} slices: {json.dumps(figures, indent=1)}")
