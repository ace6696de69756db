"""Local embedder speed, for each packaged embedder (the default pair and each model alone): passages
per second for a bulk load, and the latency of one query.

Goal: `memory add --batch` loads >= 400 records/s with every default model, so the pair's embedding
alone must run well above that. `test_bench_bulk_texts` embeds the very texts of the CLI benchmark
(test_bench_search.bulk_lines) and reports the rate as the ceiling no writing path can exceed.
Run: pytest benchmarks/test_bench_embed.py --benchmark-only -n 0 -p no:cacheprovider -s
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from benchmarks.test_bench_search import BULK_GOAL, bulk_lines
from openclaw_cli.config.loading import EmbeddingSettings
from openclaw_cli.memory.embedding.loader import LOCAL_MODELS, create_embedder
from openclaw_cli.memory.embedding.onnx_embedder import Embedder

PASSAGES = 512

_SUBJECTS = ["The user", "Lin", "Maria", "The team", "Our client", "The on-call engineer", "My sister"]
_FACTS = [
    "prefers dark roast coffee without sugar in the morning",
    "moved the weekly planning meeting to Thursday at 3pm because of travel",
    "deploys the payments API with docker compose and tails the logs for stack traces",
    "wants reminders about the quarterly VAT return two weeks before the deadline",
    "learned that running the migration on a copy of the database first avoids downtime",
    "is allergic to peanuts and avoids Thai restaurants that cook with peanut oil",
    "keeps the release checklist in the shared drive under ops/releases",
    "booked flights to Lisbon for the conference in the second week of May",
    "switched the CI runners to arm64 and saw the build time drop by a third",
    "asked to be addressed informally and dislikes long status emails",
]
_DETAILS = [
    "",
    "after the outage last spring",
    "and mentioned it twice during the retrospective",
    "according to the notes from the kickoff call with the vendor and the finance team",
    "which matters for scheduling anything before ten o'clock",
]
_CHINESE = [
    "用户喜欢在早上喝黑咖啡，不加糖。",
    "周四下午三点的会议改到了线上。",
    "上线前先在数据库副本上跑迁移。",
]


def realistic_passages(count: int, seed: int = 7) -> list[str]:
    """Memory-like sentences of mixed length (6-60 word pieces), about one in twelve in Chinese."""
    rng = random.Random(seed)
    passages = []
    for _ in range(count):
        if rng.random() < 1 / 12:
            passages.append(rng.choice(_CHINESE))
            continue
        detail = rng.choice(_DETAILS)
        sentence = f"{rng.choice(_SUBJECTS)} {rng.choice(_FACTS)}{' ' + detail if detail else ''}."
        passages.append(sentence)
    return passages


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One conversion of each packaged model, shared by every embedder measured here."""
    return tmp_path_factory.mktemp("embed-bench") / "models"


@pytest.fixture(scope="module", params=list(LOCAL_MODELS))
def embedder(request: pytest.FixtureRequest, model_cache: Path) -> tuple[str, Embedder]:
    model = str(request.param)
    loaded = create_embedder(EmbeddingSettings(model=model), cache_dir=model_cache)
    loaded.embed_passages(["warm-up", "预热"])
    return model, loaded


def test_bench_local_bulk_passages(benchmark: Any, embedder: tuple[str, Embedder]) -> None:
    model, loaded = embedder
    texts = realistic_passages(PASSAGES)
    vectors = benchmark.pedantic(loaded.embed_passages, args=(texts,), rounds=3, iterations=1)
    assert vectors.shape == (PASSAGES, LOCAL_MODELS[model])
    rate = round(PASSAGES / benchmark.stats.stats.mean)
    benchmark.extra_info.update({"embedder": model, "passages_per_second": rate})
    print(f"\n{model}: {rate} passages/s (mixed lengths, 1 in 12 Chinese)")


@pytest.mark.parametrize("language", ["english", "chinese"])
def test_bench_bulk_texts(benchmark: Any, embedder: tuple[str, Embedder], language: str) -> None:
    """The texts of the CLI bulk benchmark, embedded in one call: for the default pair, the most records
    per second `memory add --batch` could reach if start-up, parsing and writing cost nothing."""
    model, loaded = embedder
    texts = [json.loads(line)["text"] for line in bulk_lines(language)]
    vectors = benchmark.pedantic(loaded.embed_passages, args=(texts,), rounds=3, iterations=1)
    assert vectors.shape == (len(texts), LOCAL_MODELS[model])
    rate = round(len(texts) / benchmark.stats.stats.min)
    benchmark.extra_info.update({"embedder": model, "texts_per_second": rate, "bulk_goal": BULK_GOAL})
    print(f"\n{model} ({language} bulk texts): {rate} texts/s at best, against a {BULK_GOAL}/s load goal")


def test_bench_local_single_query(benchmark: Any, embedder: tuple[str, Embedder]) -> None:
    model, loaded = embedder
    result = benchmark(loaded.embed_query, "what coffee does the user drink in the morning?")
    assert result.vector.shape == (LOCAL_MODELS[model],)
    benchmark.extra_info["embedder"] = model
