"""Memory writing: the extraction pipeline's cost after the model call, and how well dedup's zones sort
the labelled pairs for each embedder.

Goal (reported in extra_info, not asserted): a turn that yields 5 memories, written into a 10k-memory
store through `write_memories` (exact dedup, semantic dedup against the nearest neighbours, merge,
embedding with the real local models, persistence), p95 <= 50 ms in a long-lived (warm) process.
Measured twice: with the local models embedding the 5 texts, and with their vectors computed beforehand
by the same models (what the pipeline adds around the embedding).

The 10k store is written with synthetic composite vectors (benchmarks/synth.py) under the real
composite embedder's identity, so the real models then embed the new memories into the same table.

Run: python -m pytest benchmarks/test_bench_writing.py --benchmark-only -n 0 -s
"""

from __future__ import annotations

import itertools
import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks import synth
from openclaw_cli.config import Settings
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.writing.candidate import Candidate
from openclaw_cli.memory.writing.dedup import DedupZones
from openclaw_cli.memory.writing.write_path import write_memories
from openclaw_cli.paths import Home
from tests import dedup_eval
from tests.memory_helpers import service_for, with_shared_models

ROUNDS = 20
TURN = [
    ("The user's {n}th standup moved to 9:30", "event"),
    ("Prefers {n} spaces of indentation in YAML", "preference"),
    ("Lesson {n}: pin the base image before rebuilding", "lesson"),
    ("Works on project Falcon-{n}", "profile"),
    ("Seems to plan work in {n}-day sprints", "insight"),
]


@pytest.fixture(scope="module")
def home_10k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("write10k")
    synth.build(home, 10_000).close()
    return home


def _turns(first: int) -> Any:
    for n in itertools.count(first):
        yield [Candidate(text.format(n=n), category, user_id="u0") for text, category in TURN]


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 2),
    }


class _Precomputed:
    """The real embedder, answering from vectors it computed beforehand (same identity, same vectors)."""

    def __init__(self, embedder: Any) -> None:
        self.real = embedder
        self.identity = embedder.identity
        self.known: dict[str, Any] = {}

    def prepare(self, texts: list[str]) -> None:
        self.known.update(zip(texts, self.real.embed_passages(texts), strict=True))

    def embed_passages(self, texts: list[str]) -> Any:
        import numpy as np

        return np.stack([self.known[t] for t in texts])

    def embed_query(self, text: str) -> Any:
        return self.real.embed_query(text)


def _write_turns(benchmark: Any, home: Path, *, embedding: bool) -> dict[str, float]:
    service = MemoryService(Home(home), "main", with_shared_models(Settings()).memory, warm=True)
    turns = _turns(1 if embedding else 1_000_000)  # both runs share the home: no text repeats
    precomputed = _Precomputed(service.embedder())
    if not embedding:  # before the store is opened: it keeps the embedder factory it is given
        service.embedder = lambda: precomputed  # type: ignore[method-assign]
    first = next(turns)
    precomputed.prepare([c.l0 for c in first])
    write_memories(service, first)  # loads the models and the vectors, as a running gateway has
    times: list[float] = []

    def one_turn(candidates: list[Candidate]) -> None:
        start = time.perf_counter()
        outcomes = write_memories(service, candidates)
        times.append(time.perf_counter() - start)
        assert [o.action for o in outcomes] == ["added"] * len(candidates)

    def next_turn() -> tuple[tuple[list[Candidate]], dict[str, Any]]:
        candidates = next(turns)
        if not embedding:
            precomputed.prepare([c.l0 for c in candidates])
        return (candidates,), {}

    benchmark.pedantic(one_turn, setup=next_turn, rounds=ROUNDS, iterations=1)
    service.close()
    return _percentiles(times)


def test_bench_write_turn_of_5_into_10k(benchmark, home_10k: Path) -> None:  # type: ignore[no-untyped-def]
    figures = _write_turns(benchmark, home_10k, embedding=True)
    benchmark.extra_info.update({**figures, "goal_p95_ms": 50, "store": 10_000, "turn": len(TURN)})
    print(f"\nwrite a turn of 5 into 10k, embedding included: {figures}")


def test_bench_write_turn_of_5_into_10k_without_embedding(benchmark, home_10k: Path) -> None:  # type: ignore[no-untyped-def]
    figures = _write_turns(benchmark, home_10k, embedding=False)
    benchmark.extra_info.update({**figures, "goal_p95_ms": 50, "store": 10_000, "turn": len(TURN)})
    print(f"\nwrite a turn of 5 into 10k, vectors computed beforehand: {figures}")


def test_bench_dedup_zones_per_embedder(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pairs = dedup_eval.load_pairs()
    a, b = dedup_eval.composite_vectors(service_for(tmp_path).embedder(), pairs)

    def measure() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, (profile, part) in dedup_eval.EMBEDDERS.items():
            sims = dedup_eval.similarities(profile, a[:, part], b[:, part], pairs)
            zones = DedupZones(profile.dedup_new_below, profile.dedup_duplicate_above)
            scores = dedup_eval.zone_scores(zones, sims, pairs)
            english = [n for n, p in enumerate(pairs) if p.lang == "en"]
            en_scores = dedup_eval.zone_scores(zones, [sims[n] for n in english], [pairs[n] for n in english])
            out[name] = {
                "zones": [zones.new_below, zones.duplicate_above],
                "all": {z: [round(p, 2), round(r, 2)] for z, (p, r) in scores.items()},
                "english": {z: [round(p, 2), round(r, 2)] for z, (p, r) in en_scores.items()},
            }
        return out

    figures = benchmark.pedantic(measure, rounds=1, iterations=1)
    benchmark.extra_info["pairs"] = len(pairs)
    benchmark.extra_info.update(figures)
    print(f"\n{len(pairs)} pairs; per zone [precision, recall]:")
    for name, row in figures.items():
        print(f"  {name:<9} zones {row['zones']}: all {row['all']}; English pairs {row['english']}")
