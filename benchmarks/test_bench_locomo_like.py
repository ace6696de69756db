"""Transcript recall on LoCoMo-like conversations (issue 54's goal: held-out recall@10 >= 0.75, turn-level
evidence, each turn a session message in order with its session's date): recall@5, recall@10 and MRR per
question kind on the tuning half and on the held-out half of fixtures/eval/locomo_like (split by
conversation, English and Chinese in each), one home per half.

Run: .venv/bin/python -m pytest -n 0 benchmarks/test_bench_locomo_like.py -s
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.locomo_eval import PARTS, load, write_home
from tests.transcript_eval import evaluate
from tests.transcript_helpers import repaired_index

GOAL = 0.75


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


@pytest.mark.parametrize("part", PARTS)
def test_bench_locomo_like_recall_by_kind(benchmark: Any, tmp_path: Path, part: str) -> None:
    data = load(part)
    ids = write_home(tmp_path / "home", data)
    with repaired_index(tmp_path / "home") as index:
        figures = benchmark.pedantic(lambda: evaluate(index, data, ids), rounds=1, iterations=1)
    benchmark.extra_info.update({"part": part, "figures": figures, "load": _load(), "goal_recall@10": GOAL})
    print(part, json.dumps(figures, indent=1))
    assert figures["overall"]["questions"] == len(data["questions"])
