"""Retrieval quality on fixtures/eval: recall@5, recall@10 and MRR for bm25-only, vector-only and hybrid.

Run: python -m pytest benchmarks/test_bench_eval.py --benchmark-only -s
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.config import SearchSettings
from tests.evalset import build_service, evaluate, load_jsonl


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_eval_quality(benchmark: Any, tmp_path: Path, mode: str) -> None:
    service = build_service(tmp_path)
    metrics = benchmark.pedantic(lambda: evaluate(service, SearchSettings(), mode), rounds=1, iterations=1)
    benchmark.extra_info.update(metrics.as_dict())
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for item in load_jsonl("queries.jsonl"):
        by_kind.setdefault(item["kind"], []).append(item)
    for kind, items in sorted(by_kind.items()):
        benchmark.extra_info[f"mrr[{kind}]"] = round(evaluate(service, SearchSettings(), mode, items).mrr, 4)
    print(f"\n{mode}: {metrics.as_dict()}")
    print("  " + ", ".join(f"{k} {v}" for k, v in benchmark.extra_info.items() if k.startswith("mrr[")))
    service.close()
