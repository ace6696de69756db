"""Retrieval quality on fixtures/eval: recall@5, recall@10 and MRR per query kind for bm25-only,
vector-only and hybrid, through the real searcher; nonsense queries report the share answered with nothing.

Run: python -m pytest benchmarks/test_bench_eval.py --benchmark-only -n 0 -s
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.config import SearchSettings
from openclaw_cli.memory.service import MemoryService
from tests.evalset import build_service, evaluate_by_kind


@pytest.fixture(scope="module")
def eval_service(tmp_path_factory: pytest.TempPathFactory) -> Any:
    service = build_service(Path(tmp_path_factory.mktemp("eval")))
    yield service
    service.close()


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_eval_quality(benchmark: Any, eval_service: MemoryService, mode: str) -> None:
    table = benchmark.pedantic(
        lambda: evaluate_by_kind(eval_service, SearchSettings(), mode), rounds=1, iterations=1
    )
    benchmark.extra_info.update({kind: values for kind, values in table.items()})
    print(f"\n{mode}:")
    for kind, values in table.items():
        print(f"  {kind:14} {values}")
