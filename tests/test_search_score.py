"""The final score, relevance x retrievability, and the top k by it (search/pipeline.py `_score`): a
search that stops computing retrievability once nothing further can enter the top k lists exactly what
scoring every candidate lists."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from openclaw_cli.memory.search.pipeline import MAX_K, SearchRequest
from openclaw_cli.memory.service import MemoryService
from tests.memory_helpers import add, service_for

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
DRINKS = ["oolong tea", "green tea", "black tea", "jasmine tea", "mint tea", "barley tea", "chai tea"]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> MemoryService:
    home = Path(tmp_path_factory.mktemp("score"))
    service = service_for(home)
    for n, drink in enumerate(DRINKS * 3):
        add(service, f"Maya drinks {drink} on day {n} of the trip to Kyoto.")
    store = next(iter(service.existing_stores()))
    # Every other memory was last reviewed long ago and barely remembered: its score falls well below
    # its relevance, so the top k by score is not the top k by relevance.
    long_ago = (NOW - timedelta(days=400)).isoformat()
    with store.storage.transaction():
        store.conn.execute(
            "UPDATE records SET fsrs_stability = 0.1, fsrs_last_review = ? WHERE rowid % 2 = 0", (long_ago,)
        )
    return service


def _ranked(service: MemoryService, query: str, k: int) -> list[tuple[str, float, float]]:
    hits = service.search(SearchRequest(query, k=k, all_results=True), NOW).hits
    return [(h.record.id, h.candidate.score, h.candidate.retrievability) for h in hits]


@pytest.mark.parametrize("query", ["what tea does Maya drink", "oolong tea", "Kyoto trip day 4"])
def test_the_top_k_is_the_top_k_of_every_candidate_scored(service: MemoryService, query: str) -> None:
    every = _ranked(service, query, MAX_K)
    assert len(every) > 10
    assert min(r for _, _, r in every) < 0.5 < max(r for _, _, r in every)  # retrievability decides
    for k in (1, 3, 5, 10):
        assert _ranked(service, query, k) == every[:k], k


def test_a_barely_remembered_memory_gives_way_to_a_less_relevant_remembered_one(
    service: MemoryService,
) -> None:
    hits = service.search(SearchRequest("oolong tea", k=3, all_results=True), NOW).hits
    relevance = sorted((h.candidate.relevance for h in hits), reverse=True)
    assert all(h.candidate.retrievability > 0.5 for h in hits)
    every = service.search(SearchRequest("oolong tea", k=MAX_K, all_results=True), NOW).hits
    forgotten = [h for h in every if h.candidate.retrievability < 0.5]
    assert any(h.candidate.relevance > relevance[-1] for h in forgotten)  # more relevant, yet not shown
