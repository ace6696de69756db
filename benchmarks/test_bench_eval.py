"""Retrieval quality on fixtures/eval: recall@5, recall@10 and MRR per query kind for bm25-only,
vector-only and hybrid, through the real searcher, for each packaged embedder: the default (MiniLM and
USE-m3 side by side) and each model alone, every one with its own measured profile. Nonsense queries
report the share answered with nothing.

The last test reports what choosing between these embedders per query could reach at best: with hindsight,
the best of their rankings for each query.

Run: python -m pytest benchmarks/test_bench_eval.py --benchmark-only -n 0 -s
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.config.loading import SearchSettings
from openclaw_cli.memory.embedding.loader import LOCAL_MODELS
from openclaw_cli.memory.service import MemoryService
from tests.evalset import build_service, evaluate_by_kind, load_queries, rankings, reciprocal_rank

DEFAULT_MODEL = next(iter(LOCAL_MODELS))


@pytest.fixture(scope="module", params=list(LOCAL_MODELS))
def eval_service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    model = request.param
    service = build_service(Path(tmp_path_factory.mktemp("eval")), None if model == DEFAULT_MODEL else model)
    yield model, service
    service.close()


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_eval_quality(benchmark: Any, eval_service: tuple[str, MemoryService], mode: str) -> None:
    model, service = eval_service
    table = benchmark.pedantic(
        lambda: evaluate_by_kind(service, SearchSettings(), mode), rounds=1, iterations=1
    )
    benchmark.extra_info.update({"embedder": model, **table})
    print(f"\n{model} {mode}:")
    for kind, values in table.items():
        print(f"  {kind:14} {values}")
    assert table["overall"]["queries"] > 0


def test_eval_ceiling_of_the_packaged_models(
    benchmark: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """How far routing each query to the right packaged embedder could go on this eval: per query, with
    hindsight, the best of every embedder's hybrid ranking. No rule for choosing can beat it; a fusion
    of the rankings can, but only by lifting an answer above distractors that every embedder ranks higher."""
    items = [item for item in load_queries() if item["expected"]]
    per_model: dict[str, list[float]] = {}

    def rank_all() -> None:
        for model in LOCAL_MODELS:
            home = Path(tmp_path_factory.mktemp("ceiling"))
            service = build_service(home, None if model == DEFAULT_MODEL else model)
            found = rankings(service, SearchSettings(), "hybrid", items)
            per_model[model] = [reciprocal_rank(item, ids) for item, ids in zip(items, found, strict=True)]
            service.close()

    benchmark.pedantic(rank_all, rounds=1, iterations=1)
    mrr = {model: sum(values) / len(items) for model, values in per_model.items()}
    ceiling = sum(max(values) for values in zip(*per_model.values(), strict=True)) / len(items)
    benchmark.extra_info.update({"mrr": mrr, "ceiling": ceiling, "queries": len(items)})
    rounded = {model: round(value, 4) for model, value in mrr.items()}
    print(f"\nhybrid MRR by embedder: {rounded}")
    print(f"the best of them per query, with hindsight: {ceiling:.4f} over {len(items)} queries")
    assert max(mrr.values()) <= ceiling <= 1.0
