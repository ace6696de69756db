"""`memory search --source memory,sessions` (memory/search/sources.py): the turn weight that puts a transcript
turn's relevance on the memories' scale, tuned on one half of the mixed eval and reported on the other
(tests/sources_eval.py says how the eval is built and scored), with each leg alone for comparison."""

from __future__ import annotations

import json
from pathlib import Path

from openclaw_cli.memory.search.sources import TURN_WEIGHT
from tests import sources_eval


def test_bench_turn_weight_tuned_and_held_out(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    questions, index, service = sources_eval.build(tmp_path / "home")
    try:
        best, table = benchmark.pedantic(lambda: sources_eval.tune(questions), rounds=1, iterations=1)
    finally:
        index.close()
        service.close()
    info = {
        "chosen": best,
        "shipped": TURN_WEIGHT,
        "heldOut": table[str(TURN_WEIGHT)]["held-out"],
        "heldOutEachLegAlone": sources_eval.alone(questions, "held-out"),
        "sweep": {w: {h: row[h]["macro"] for h in row} for w, row in table.items()},
    }
    benchmark.extra_info.update(info)
    print(json.dumps(info, indent=1))
    assert best == TURN_WEIGHT  # the shipped weight is the one the tuning half chooses
    assert info["heldOut"]["macro"] >= 0.5
