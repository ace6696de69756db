"""The home's word tables (memory/embedding/word_table.py) in warm processes, at 100k (benchmarks/store100k.py).

A warm process's first search of a question embeds the words of its best candidates it has not met (the
`neighbours` stage: 10-107 ms), which made the tail of the warm benchmark. With the tables, words any
earlier process met are read from disk. Measured here with whole warm processes interleaved, each
searching the 300 queries once after the same warm-up (which meets no word): `empty` (the tables emptied
before: every word embedded, and kept), `kept` (the tables as the run before left them), `warmed` (the
tables emptied, then the background warm-up's pass, as in a gateway once ready: search/legs/word_warmup.py),
`none` (no tables, as before); the results must be the same, id for id and score for score. Each
search's process CPU time is given beside its wall time: on 2 shared cores the wall time mostly
measures the load.

Also: the store's vocabulary (the dictionary words of its texts, search/neighbours.meaningful_words, by
language) at 20k and 100k, and what embedding all of it would cost: the case for warming the tables in
the background.

Run: python -m pytest benchmarks/test_bench_word_table.py -n 0 -p no:cacheprovider -s
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import corpus100k, store100k
from benchmarks.test_bench_search_100k import spread
from openclaw_cli.core.paths import Home

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 3
VARIANTS = ("empty", "kept", "warmed", "none")
SAMPLE = 300  # words per language embedded to price the whole vocabulary


def _worker(home: Path, variant: str) -> dict[str, Any]:
    mode = {"empty": "table", "kept": "table"}.get(variant, variant)
    command = [sys.executable, "-m", "benchmarks.warm_words_worker", str(home), mode]
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT))}
    out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, check=True, text=True)
    return dict(json.loads(out.stdout))


def test_warm_search_100k_word_tables(benchmark: Any) -> None:
    home = store100k.build() / "home"
    words = Home(home).word_cache_dir
    runs: dict[str, list[dict[str, Any]]] = {variant: [] for variant in VARIANTS}

    def measure() -> None:
        for _ in range(ROUNDS):
            for variant in VARIANTS:
                if variant in ("empty", "warmed"):
                    for table in words.glob("words-*"):
                        table.unlink()
                    (words / "warmed.json").unlink(missing_ok=True)
                runs[variant].append(_worker(home, variant))

    benchmark.pedantic(measure, rounds=1)
    # The tail: the queries whose first search embeds words without the tables, in every variant.
    tail = [i for i, n in enumerate(runs["none"][0]["wordsPerQuery"]) if n]
    table = {
        variant: [
            {
                "first": spread(run["first"]),
                "firstCpu": spread(run["firstCpu"]),
                "again": spread(run["again"]),
                "queriesEmbedding": sum(1 for n in run["wordsPerQuery"] if n),
                "tailQueries": len(tail),
                "tailCpuMs": round(sum(run["firstCpu"][i] for i in tail), 1),
                "tailWallMs": round(sum(run["first"][i] for i in tail), 1),
                "embedded": run["embedded"],
                "warmUpEmbedded": run["warmUpEmbedded"],
                "fromTable": run["fromTable"],
                "load": run["load"],
            }
            for run in found
        ]
        for variant, found in runs.items()
    }
    benchmark.extra_info.update(table)
    print("\nwarm 100k, 300 queries' first searches by word tables (ms; one process each, interleaved):")
    for variant, rows in table.items():
        for row in rows:
            print(f"  {variant:6} {json.dumps(row)}")
    reference = runs["none"][0]["found"]
    assert all(run["found"] == reference for found in runs.values() for run in found)


def _vocabulary(texts: list[str]) -> dict[str, set[str]]:
    from openclaw_cli.memory.search.legs.neighbours import meaningful_words, word_kind

    found: dict[str, set[str]] = {"en": set(), "zh": set()}
    for text in texts:
        for word in meaningful_words(text):
            found[str(word_kind(word))].add(word)
    return found


def test_store_vocabulary_and_the_cost_of_embedding_it(benchmark: Any) -> None:
    from openclaw_cli.memory.search.legs import neighbours
    from openclaw_cli.memory.service import MemoryService

    corpus = corpus100k.memories(store100k.COUNT)
    sizes: dict[str, Any] = {}

    def count() -> None:
        for size in (20_000, store100k.COUNT):
            started = time.process_time()
            found = _vocabulary(corpus[:size])
            sizes[str(size)] = {
                "en": len(found["en"]),
                "zh": len(found["zh"]),
                "analysisCpuS": round(time.process_time() - started, 1),
            }
            sizes["words"] = found

    benchmark.pedantic(count, rounds=1)
    vocabulary = sizes.pop("words")
    service = MemoryService(Home(store100k.build() / "home"), "main", store100k.settings().memory, warm=True)
    embedder: Any = service.embedder()
    cost: dict[str, Any] = {}
    rng = random.Random(7)
    for kind, model in (("en", embedder.english), ("zh", embedder.multilingual)):
        vectors = neighbours.WordVectors({kind: model})
        sample = rng.sample(sorted(vocabulary[kind]), min(SAMPLE, len(vocabulary[kind])))
        started, cpu = time.perf_counter(), time.process_time()
        vectors.of(sample)
        wall_ms = (time.perf_counter() - started) * 1000 / len(sample)
        cpu_ms = (time.process_time() - cpu) * 1000 / len(sample)
        whole = len(vocabulary[kind])
        cost[kind] = {
            "msPerWord": round(wall_ms, 2),
            "cpuMsPerWord": round(cpu_ms, 2),
            "wholeVocabularyCpuS": round(cpu_ms * whole / 1000, 1),
            "tableMB": round(whole * 4 * model.identity.dimensions / 1e6, 1),
        }
    service.close()
    found = {"vocabulary": sizes, "embedding": cost, "load": os.getloadavg()[0]}
    benchmark.extra_info.update(found)
    print(f"\nstore vocabulary and its embedding: {json.dumps(found)}")
    assert all(sizes[str(size)]["en"] > 0 for size in (20_000, store100k.COUNT))
