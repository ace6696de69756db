"""Local embedder speed: passages per second for a bulk load, and the latency of one query.

Goal: a bulk load of >= 400 records/s overall, so embedding alone must be well above that.
Run: pytest benchmarks/test_bench_embed.py --benchmark-only -n 0 -p no:cacheprovider
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from openclaw_cli.config import EmbeddingSettings
from openclaw_cli.memory.embed import OnnxEmbedder
from openclaw_cli.memory.embedders import create_embedder

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
def embedder() -> OnnxEmbedder:
    loaded = create_embedder(EmbeddingSettings())
    assert isinstance(loaded, OnnxEmbedder)
    loaded.embed_passages(["warm-up"])
    return loaded


def test_bench_local_bulk_passages(benchmark: Any, embedder: OnnxEmbedder) -> None:
    texts = realistic_passages(PASSAGES)
    vectors = benchmark.pedantic(embedder.embed_passages, args=(texts,), rounds=3, iterations=1)
    assert vectors.shape == (PASSAGES, 384)
    benchmark.extra_info["passages_per_second"] = round(PASSAGES / benchmark.stats.stats.mean)


def test_bench_local_single_query(benchmark: Any, embedder: OnnxEmbedder) -> None:
    result = benchmark(embedder.embed_query, "what coffee does the user drink in the morning?")
    assert result.vector.shape == (384,)
