"""Search speed: warm in-process hybrid search at 10k and 100k memories, cold whole-process search at 10k,
and bulk loading with the local model.

Goals (issue 6): warm p95 <= 15 ms at 100k; cold search <= 900 ms (English and Chinese); bulk load
through the CLI >= 400 records/s. Report quiet-run figures with their spread and the load average.

Run: python -m pytest benchmarks/test_bench_search.py --benchmark-only -n 0 -p no:cacheprovider -s
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks import synth
from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.memory.service import MemoryService

ROOT = Path(__file__).resolve().parent.parent
QUERIES = [
    "which deploy broke the payments ledger",
    "coffee preferences in the morning",
    "PR #4242 review comments",
    "what does he think about dark mode editors",
    "postgres connection pool timeout lesson",
    "daughter birthday party plans",
    "kubernetes cluster upgrade failed",
    "favourite programming language for scripts",
]


@pytest.fixture(scope="module")
def home_10k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("m10k")
    synth.build(home, 10_000).close()
    return home


@pytest.fixture(scope="module")
def home_100k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("m100k")
    synth.build(home, 100_000).close()
    return home


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1] * 1000, 2),
    }


def _warm(benchmark: Any, home: Path, label: str) -> None:
    service = synth.composite_service(home, warm=True)
    requests = [SearchRequest(query=q, k=10) for q in QUERIES]
    for request in requests:  # load the model and the vector matrix
        service.search(request)
    samples: list[float] = []

    def one_round() -> None:
        for request in requests:
            started = time.perf_counter()
            service.search(request)
            samples.append(time.perf_counter() - started)

    benchmark.pedantic(one_round, rounds=25, iterations=1)
    stats = {**_spread(samples), "load_average": os.getloadavg()[0]}
    benchmark.extra_info.update(stats)
    print(f"\nwarm hybrid search at {label}: {stats} over {len(samples)} queries")
    service.close()


def test_warm_search_10k(benchmark: Any, home_10k: Path) -> None:
    _warm(benchmark, home_10k, "10k")


def test_warm_search_100k(benchmark: Any, home_100k: Path) -> None:
    _warm(benchmark, home_100k, "100k")


def test_vector_recall_against_exact_search(benchmark: Any, home_100k: Path) -> None:
    """The warm path's neighbours against an exact numpy scan of the same vectors (recall@10)."""
    service = synth.composite_service(home_100k, warm=True)
    store = service.store(service.db_path("user"))
    matrix = store.vector_matrix()
    table = store.conn.execute("SELECT value FROM meta WHERE key = 'vector_table'").fetchone()[0]
    ids = np.array([r[0] for r in store.conn.execute(f"SELECT rowid FROM {table}")])
    embedder = service.embedder()
    # Exact search is against the float vectors the embedder made, before int8 storage.
    texts = dict(store.conn.execute("SELECT rowid, l0 FROM records"))
    exact = embedder.embed_passages([texts[int(i)] for i in ids])
    from openclaw_cli.memory.store.sqlite.vec import knn
    from openclaw_cli.memory.store.vectors.query import VectorFilter

    # The synthetic queries' own vectors (like the stored ones) plus the real-model ones, under each
    # weighting of the composite's halves: the prefilter must not assume equal halves.
    probes = [f"probe {n}" for n in range(40)]
    latencies: list[float] = []

    def measure() -> dict[str, float]:
        out = {}
        for weights in ((1.0, 1.0), (1.0, 0.0), (0.0, 1.0), (0.7, 0.3)):
            embedder.weights = weights
            vectors_ = [embedder.embed_query(q).vector for q in QUERIES] + [
                v * np.repeat(np.array(weights, np.float32), synth.HALVES)
                for v in embedder.embed_passages(probes)
            ]
            recalls = []
            for vector in vectors_:
                truth = set(ids[np.argsort(-(exact @ vector))[:10]].tolist())
                started = time.perf_counter()
                warm = {r for r, _ in matrix.knn(vector, 10, VectorFilter())}
                latencies.append(time.perf_counter() - started)
                cold = {r for r, _ in knn(store.conn, table, vector, 10, VectorFilter())}
                recalls += [len(truth & warm) / 10, len(truth & cold) / 10]
            out[str(weights)] = float(np.mean(recalls))
        embedder.weights = (1.0, 1.0)
        return out

    recall = benchmark.pedantic(measure, rounds=1, iterations=1)
    benchmark.extra_info["recall@10"] = recall
    stage = _percentiles(latencies)
    print(f"\nvector recall@10 against exact float search at 100k by half weights: {recall}")
    print(f"warm vector stage at 100k: {stage} over {len(latencies)} queries")
    assert min(recall.values()) >= 0.95
    service.close()


COLD_QUERIES = {"english": "coffee preferences in the morning", "chinese": "我喜欢喝咖啡，不喜欢茶"}
COLD_GOAL_MS = 900


def _spread(samples: list[float]) -> dict[str, float]:
    """p50/p95 (as _percentiles) plus min and max: the spread a quiet-run figure is reported with."""
    ordered = sorted(samples)
    return {
        **_percentiles(ordered),
        "min_ms": round(ordered[0] * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


@pytest.mark.parametrize("language", sorted(COLD_QUERIES))
def test_cold_cli_search_10k(benchmark: Any, home_10k: Path, language: str) -> None:
    """The whole `openclaw memory search` process (interpreter, imports, models, one query) at 10k.
    Goal: <= 900 ms wall for an English and for a Chinese query."""
    env = {"OPENCLAW_HOME": str(home_10k), "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-m", "openclaw_cli", "memory", "search", COLD_QUERIES[language], "--json"]
    timings: list[float] = []

    def run() -> None:
        started = time.perf_counter()
        out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, check=True)
        timings.append(time.perf_counter() - started)
        assert "results" in json.loads(out.stdout)

    run()  # the first run builds jieba/pyc caches, as any first use would
    benchmark.pedantic(run, rounds=9, iterations=1)
    stats = _spread(timings[1:])
    benchmark.extra_info.update({**stats, "goal_ms": COLD_GOAL_MS, "load_average": os.getloadavg()[0]})
    print(f"\ncold `openclaw memory search` ({language}) at 10k: {stats}, load {os.getloadavg()[0]:.1f}")


def test_bulk_load_local_embeddings(benchmark: Any, tmp_path: Path) -> None:
    """Steady-state bulk loading: the model converted and loaded, jieba's dictionary loaded (one-time
    costs of a process, ~4 s once per home and ~1 s once per process, reported by other benchmarks)."""
    # Realistic memories: the eval set's one-line L0s (21 word pieces on average, English and Chinese),
    # numbered so each is unique; the synthetic benchmark text runs 38 word pieces of made-up words.
    eval_texts = [json.loads(line)["l0"] for line in synth.EVAL.read_text(encoding="utf-8").splitlines()]
    bodies = [f"{eval_texts[i % len(eval_texts)]} (#{i})" for i in range(2000)]
    home = Home(tmp_path)
    warmup = MemoryService(home, "warmup", Settings().memory)
    warmup.add(NewMemory(l0="预热 warm-up"))
    warmup.close()
    rounds: list[float] = []

    def load() -> None:
        service = MemoryService(home, f"bulk{len(rounds)}", Settings().memory)
        records = [service.build_record(NewMemory(l0=t)) for t in bodies]
        started = time.perf_counter()
        service.add_many(records)
        rounds.append(len(bodies) / (time.perf_counter() - started))
        service.close()

    benchmark.pedantic(load, rounds=3, iterations=1)
    benchmark.extra_info["records_per_s"] = round(statistics.median(rounds), 1)
    print(f"\nbulk load with local embeddings: {[round(r) for r in rounds]} records/s")


BULK_GOAL = 400  # records/s through `memory add --batch`, with every default model


def bulk_lines(language: str, count: int = 2000, seed: int = 3) -> list[str]:
    """JSON Lines for `memory add --batch`: English memories of ~110 characters (two of the eval set's
    one-line English memories joined), or its short Chinese ones (~30 characters); each numbered, so
    every text is new and is embedded."""
    import random

    eval_texts = [json.loads(line)["l0"] for line in synth.EVAL.read_text(encoding="utf-8").splitlines()]
    english = [t for t in eval_texts if t.isascii()]
    chinese = [t for t in eval_texts if not t.isascii()]
    rng = random.Random(seed)
    lines = []
    for n in range(count):
        if language == "english":
            text = f"{rng.choice(english)} {rng.choice(english)}"
            if len(text) > 112:
                text = text[:110].rsplit(" ", 1)[0] + "."
            text += f" (#{n})"
        else:
            text = f"{rng.choice(chinese)}（{n}）"
        lines.append(json.dumps({"text": text, "category": "note"}, ensure_ascii=False))
    return lines


@pytest.mark.parametrize("language", ["english", "chinese"])
def test_bulk_load_cli_batch(benchmark: Any, home_10k: Path, tmp_path: Path, language: str) -> None:
    """Records/s of the whole `openclaw memory add --batch` process (start-up, model load, embedding
    with both default models, writing) for 2,000 new memories, in a new home whose models are already
    converted. Goal: >= 400 records/s."""
    source = tmp_path / "batch.jsonl"
    source.write_text("\n".join(bulk_lines(language)) + "\n", encoding="utf-8")
    rates: list[float] = []

    def load() -> None:
        home = tmp_path / f"home{len(rates)}"
        shutil.copytree(home_10k / "cache" / "models", home / "cache" / "models")
        env = {"OPENCLAW_HOME": str(home), "PATH": "/usr/bin:/bin"}
        command = [sys.executable, "-m", "openclaw_cli", "memory", "add", "--batch", str(source), "--json"]
        started = time.perf_counter()
        out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, check=True)
        elapsed = time.perf_counter() - started
        added = json.loads(out.stdout)["added"]
        assert added == 2000
        rates.append(added / elapsed)
        shutil.rmtree(home)

    benchmark.pedantic(load, rounds=3, iterations=1)
    stats = {
        "records_per_s": round(statistics.median(rates), 1),
        "min": round(min(rates), 1),
        "max": round(max(rates), 1),
        "goal": BULK_GOAL,
        "load_average": os.getloadavg()[0],
    }
    benchmark.extra_info.update(stats)
    print(f"\nbulk load through `memory add --batch` ({language}): {stats}")
