"""The retrieval eval set (fixtures/eval/) loaded into a real memory database, and its metrics.

Used by benchmarks/test_bench_eval.py (recall@5, recall@10 and MRR per mode) and by
benchmarks/tune_search.py (the sweep that chose the search defaults).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openclaw_cli.config import SearchSettings, Settings
from openclaw_cli.memory.search import HybridSearcher, SearchRequest
from openclaw_cli.memory.service import MemoryService, NewMemory
from openclaw_cli.paths import Home

EVAL_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "eval"
CREATED = datetime(2026, 1, 15, tzinfo=UTC)
NOW = datetime(2026, 1, 16, tzinfo=UTC)


def load_jsonl(name: str) -> list[dict[str, Any]]:
    with (EVAL_DIR / name).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def build_service(home_dir: Path) -> MemoryService:
    """A memory database holding the eval memories, all written at the same moment."""
    settings = Settings()
    service = MemoryService(Home(home_dir), "main", settings.memory)
    records = [
        service.build_record(
            NewMemory(
                l0=m["l0"],
                category=m["category"],
                scope=m["scope"],
                user_id=m["userId"],
                l1=m.get("l1") or None,
                record_id=m["id"],
                created_at=CREATED,
            )
        )
        for m in load_jsonl("memories.jsonl")
    ]
    service.add_many(records)
    return service


@dataclass
class Metrics:
    recall_at_5: float
    recall_at_10: float
    mrr: float
    queries: int

    def as_dict(self) -> dict[str, float]:
        return {
            "recall@5": round(self.recall_at_5, 4),
            "recall@10": round(self.recall_at_10, 4),
            "mrr": round(self.mrr, 4),
            "queries": self.queries,
        }


def evaluate(
    service: MemoryService, settings: SearchSettings, mode: str, queries: list[dict[str, Any]] | None = None
) -> Metrics:
    store = next(iter(service.existing_stores()))
    searcher = HybridSearcher(store, settings, service.embedder(), warm=True)
    items = queries if queries is not None else load_jsonl("queries.jsonl")
    r5 = r10 = rr = 0.0
    for item in items:
        request = SearchRequest(query=item["query"], k=10, user_id=item["userId"], mode=mode)  # type: ignore[arg-type]
        ids = [hit.record.id for hit in searcher.search(request, NOW).hits]
        expected = set(item["expected"])
        r5 += len(expected & set(ids[:5])) / len(expected)
        r10 += len(expected & set(ids[:10])) / len(expected)
        rr += next((1.0 / rank for rank, rid in enumerate(ids, start=1) if rid in expected), 0.0)
    n = len(items)
    return Metrics(r5 / n, r10 / n, rr / n, n)
