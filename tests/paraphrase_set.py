"""The held-out paraphrase set (fixtures/paraphrase/): 24 questions (16 English, 8 Chinese) that share no
content word with the memory answering them, among the eval's 964 distractors of u-lin (facts about other
people) and one near-duplicate about somebody else per answer, all stored for one user, u-para.

No search default was chosen on it: it judges the paraphrase work of issue 24 (hit@3 by default and with
--all). Used by benchmarks/test_bench_paraphrase.py and tests/test_paraphrase_set.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openclaw_cli.config.loading import SearchSettings, Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.search.pipeline import HybridSearcher, SearchRequest
from openclaw_cli.memory.service import MemoryService
from tests import evalset
from tests.evalset import NOW, load_jsonl
from tests.memory_helpers import with_shared_models

PARAPHRASE_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "paraphrase"
USER = "u-para"
DISTRACTOR_OWNER = "u-lin"  # every one of u-lin's generated distractors is about another person


def load(name: str) -> list[dict[str, Any]]:
    with (PARAPHRASE_DIR / name).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def records() -> list[dict[str, Any]]:
    """The answers, their near-duplicates, and the borrowed distractors, all as u-para's."""
    borrowed = [
        {**m, "userId": USER} for m in load_jsonl("distractors.jsonl") if m["userId"] == DISTRACTOR_OWNER
    ]
    return load("memories.jsonl") + borrowed


def build_service(home: Path) -> MemoryService:
    service = MemoryService(Home(home), "main", with_shared_models(Settings()).memory)
    service.add_many([evalset.eval_record(service, m) for m in records()])
    return service


def hit_at(service: MemoryService, settings: SearchSettings, k: int = 3, all_results: bool = False) -> float:
    """The share of the questions whose answer is among the first `k` results."""
    store = next(iter(service.existing_stores()))
    searcher = HybridSearcher(store, settings, service.embedder(), warm=True)
    queries = load("queries.jsonl")
    hits = 0
    for item in queries:
        request = SearchRequest(query=item["query"], k=k, user_id=item["userId"], all_results=all_results)
        found = [hit.record.id for hit in searcher.search(request, NOW).hits]
        hits += bool(set(found) & set(item["expected"]))
    return hits / len(queries)
