"""The search defaults of the default pair of models are the best the eval set measures, and fusion earns
its place (tests/search_defaults.py: what is checked, and why each embedder has a module of its own)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_cli.memory.embedding.loader import LOCAL_MODELS
from tests.search_defaults import CHECKED, Evaluation, check_the_defaults, evaluation_of


@pytest.fixture
def evaluation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Evaluation]:
    yield from evaluation_of("all-MiniLM-L6-v2-int8+use-m3-int8", tmp_path_factory)


def test_the_defaults_are_the_best_measured_and_fusion_earns_its_place(evaluation: Evaluation) -> None:
    check_the_defaults(evaluation)


def test_every_packaged_embedder_has_its_defaults_checked() -> None:
    """A model packaged later needs its own module here, or its profile would go unchecked."""
    assert sorted(CHECKED) == sorted(LOCAL_MODELS)
    for module in CHECKED.values():
        assert (Path(__file__).parent / module).is_file(), module
