"""The held-out paraphrase set (fixtures/paraphrase/, issue 24): hit@3 by default and with --all, and what
the real-words signal (search/vocabulary.py) costs: the one-time read of the English vocabulary and one
call per unmatched query.

Run: python -m pytest benchmarks/test_bench_paraphrase.py --benchmark-only -n 0 -s
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.config import SearchSettings
from openclaw_cli.memory.search import vocabulary
from openclaw_cli.memory.service import MemoryService
from tests import paraphrase_set


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryService]:
    svc = paraphrase_set.build_service(Path(tmp_path_factory.mktemp("paraphrase")))
    yield svc
    svc.close()


def test_paraphrase_hit_at_3(benchmark: Any, service: MemoryService) -> None:
    settings = SearchSettings()

    def measure() -> dict[str, float]:
        return {
            "hit@1": paraphrase_set.hit_at(service, settings, k=1),
            "hit@3": paraphrase_set.hit_at(service, settings, k=3),
            "hit@3 --all": paraphrase_set.hit_at(service, settings, k=3, all_results=True),
            "hit@10 --all": paraphrase_set.hit_at(service, settings, k=10, all_results=True),
        }

    table = benchmark.pedantic(measure, rounds=1, iterations=1)
    benchmark.extra_info.update(table)
    print("\nparaphrase set (24 questions, 1,012 memories):", {k: round(v, 4) for k, v in table.items()})
    assert 0.0 <= table["hit@3"] <= table["hit@3 --all"] <= 1.0


def test_vocabulary_cost(benchmark: Any) -> None:
    vocabulary.english_words.cache_clear()
    start = time.perf_counter()
    words = vocabulary.english_words()
    load_ms = (time.perf_counter() - start) * 1000
    benchmark(vocabulary.reads_as_words, "would a beef burger suit me?")
    benchmark.extra_info.update({"vocabularyLoadMs": round(load_ms, 1), "words": len(words)})
    print(f"\nEnglish vocabulary: {len(words)} words read in {load_ms:.1f} ms")
    assert len(words) > 20000
