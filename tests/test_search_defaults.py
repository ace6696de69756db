"""The search defaults are the best of what the sweep measures on the project's eval set."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_cli.config import SearchSettings
from openclaw_cli.memory.service import MemoryService
from tests.evalset import GRID, build_service, evaluate, sweep


@pytest.fixture(scope="module")
def eval_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryService]:
    service = build_service(Path(tmp_path_factory.mktemp("eval")))
    yield service
    service.close()


def test_defaults_are_the_best_combination_measured(eval_service: MemoryService) -> None:
    results = sweep(eval_service)
    best_metrics, best_values = results[0]
    defaults = SearchSettings().model_dump(by_alias=True)
    mine = next(m for m, values in results if all(defaults[k] == v for k, v in values.items()))
    assert (mine.mrr, mine.recall_at_10) == pytest.approx((best_metrics.mrr, best_metrics.recall_at_10)), (
        best_values
    )
    assert len(results) == len(list(__import__("itertools").product(*GRID.values())))


def test_hybrid_beats_either_signal_alone(eval_service: MemoryService) -> None:
    settings = SearchSettings()
    hybrid = evaluate(eval_service, settings, "hybrid")
    for mode in ("bm25", "vector"):
        alone = evaluate(eval_service, settings, mode)
        assert hybrid.mrr > alone.mrr and hybrid.recall_at_10 >= alone.recall_at_10, mode
    assert hybrid.queries >= 60 and hybrid.recall_at_10 > 0.7
