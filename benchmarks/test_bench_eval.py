"""Retrieval quality on fixtures/eval: recall@5, recall@10 and MRR per query kind for bm25-only,
vector-only and hybrid, through the real searcher, for each packaged embedder: the default (MiniLM and
USE-m3 side by side) and each model alone, every one with its own measured profile. Nonsense queries
report the share answered with nothing.

Run: python -m pytest benchmarks/test_bench_eval.py --benchmark-only -n 0 -s
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.config import SearchSettings
from openclaw_cli.memory.embedders import LOCAL_MODELS
from openclaw_cli.memory.service import MemoryService
from tests.evalset import build_service, evaluate_by_kind

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
