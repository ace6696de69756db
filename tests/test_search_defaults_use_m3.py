"""The search defaults of use-m3-int8 alone are the best the eval set measures, and fusion earns
its place (tests/search_defaults.py: what is checked, and why each embedder has a module of its own)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.search_defaults import Evaluation, check_the_defaults, evaluation_of


@pytest.fixture
def evaluation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Evaluation]:
    yield from evaluation_of("use-m3-int8", tmp_path_factory)


def test_the_defaults_are_the_best_measured_and_fusion_earns_its_place(evaluation: Evaluation) -> None:
    check_the_defaults(evaluation)
