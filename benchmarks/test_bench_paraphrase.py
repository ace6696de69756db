"""The held-out paraphrase set (fixtures/paraphrase/, issue 24): hit@3 by default and with --all, and what
the real-words signal (search/legs/vocabulary.py) costs: the one-time read of the English vocabulary and one
call per unmatched query; and what the word-neighbours stage (search/legs/neighbours.py) costs a question: its
words and the best candidates' words embedded one by one on first meeting (cold), then read from the cache
(warm), and the cache's size.

Run: python -m pytest benchmarks/test_bench_paraphrase.py --benchmark-only -n 0 -s
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.config.loading import SearchSettings
from openclaw_cli.memory.search.legs import neighbours, vocabulary
from openclaw_cli.memory.search.pipeline import HybridSearcher, SearchRequest
from openclaw_cli.memory.service import MemoryService
from tests import paraphrase_set
from tests.evalset import NOW


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
    # Not hit@3 <= hit@3 --all: the floors may drop results ranked above the answer, lifting it into the top 3.
    assert 0.0 <= table["hit@3 --all"] <= table["hit@10 --all"] <= 1.0
    assert 0.0 <= table["hit@1"] <= table["hit@3"] <= 1.0


def test_vocabulary_cost(benchmark: Any) -> None:
    vocabulary.english_words.cache_clear()
    start = time.perf_counter()
    words = vocabulary.english_words()
    load_ms = (time.perf_counter() - start) * 1000
    benchmark(vocabulary.reads_as_words, "would a beef burger suit me?")
    benchmark.extra_info.update({"vocabularyLoadMs": round(load_ms, 1), "words": len(words)})
    print(f"\nEnglish vocabulary: {len(words)} words read in {load_ms:.1f} ms")
    assert len(words) > 20000


def test_word_neighbours_cost(benchmark: Any, service: MemoryService) -> None:
    """Each paraphrase question's search with and without the stage, on a fresh word cache (cold) and
    again (warm): the stage's share of a search, in ms per question."""
    store = next(iter(service.existing_stores()))
    queries = [item["query"] for item in paraphrase_set.load("queries.jsonl")]
    vectors = neighbours.word_vectors(service.embedder())
    assert vectors is not None
    with_stage = HybridSearcher(store, SearchSettings(), service.embedder(), warm=True)
    without = HybridSearcher(
        store, SearchSettings(), service.embedder(), warm=True, disabled=frozenset({"neighbours"})
    )

    def run(searcher: HybridSearcher) -> float:
        start = time.perf_counter()
        for query in queries:
            searcher.search(SearchRequest(query=query, user_id=paraphrase_set.USER), NOW)
        return (time.perf_counter() - start) * 1000 / len(queries)

    run(without)  # the legs' own caches (matrix, centroid) warm first
    vectors.clear()
    embedded = vectors.embedded
    cold = run(with_stage)
    words = vectors.embedded - embedded
    base = min(run(without) for _ in range(3))
    warm = benchmark.pedantic(lambda: run(with_stage), rounds=3, iterations=1)
    cache_mb = vectors.megabytes()
    table = {
        "msPerQueryWithout": round(base, 2),
        "msPerQueryColdCache": round(cold, 2),
        "msPerQueryWarm": round(warm, 2),
        "wordsEmbeddedCold": words,
        "cacheMB": round(cache_mb, 2),
        "loadavg": Path("/proc/loadavg").read_text().split()[0],
    }
    benchmark.extra_info.update(table)
    print("\nword neighbours, 24 questions:", table)
    assert words > 0 and warm > 0
