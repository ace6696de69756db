"""A turn's injected memory block stays what it was before the speed work (issue 54): the same memories,
the same text, for the eval's conversations over the eval store (tests/inject_golden.py), the first time a
message is searched and when it comes again (the caches a warm process keeps must not change a block)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_cli.memory.service import MemoryService
from tests.eval_vectors import run_directory, shared_vectors
from tests.evalset import build_service
from tests.inject_golden import GOLDEN, block_of, turns, warm_service

REPEATED = 40  # turns searched a second time, out of order, after all the others


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryService]:
    """The eval store (its vectors shared with the run's other eval modules), opened warm as the gateway
    opens it, with the same shared vectors."""
    directory, published = run_directory(tmp_path_factory), []
    home = Path(tmp_path_factory.mktemp("inject-golden"))

    def share(real):  # type: ignore[no-untyped-def]
        shared, models = shared_vectors(real, directory)
        published.extend(models)
        return shared

    build_service(home, share=share).close()
    warm = warm_service(home)
    shared = share(warm.embedder())
    warm.embedder = lambda: shared  # type: ignore[method-assign]
    yield warm
    for model in published:
        model.publish()
    warm.close()


def test_every_block_is_the_recorded_one_first_time_and_again(service: MemoryService) -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    all_turns = list(turns())
    assert [turn["name"] for turn in all_turns] == list(golden)
    built = {turn["name"]: block_of(service, turn) for turn in all_turns}
    differing = [name for name in golden if built[name] != golden[name]]
    assert not differing, f"{len(differing)} blocks changed, first {differing[:5]}"
    assert sum(1 for block in built.values() if block["ids"]) > 0.9 * len(built)
    again = all_turns[::-1][:REPEATED]
    repeated = {turn["name"]: block_of(service, turn) for turn in again}
    assert repeated == {name: golden[name] for name in repeated}
