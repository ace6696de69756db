"""Memory writing: the extraction pipeline's cost after the model call, and how well dedup's zones sort
the labelled pairs for each embedder.

Goal (reported in extra_info, not asserted): a turn that yields 5 memories, written into a 10k-memory
store through `write_memories` (exact dedup, semantic dedup against the nearest neighbours, merge,
embedding with the real local models, persistence), p95 <= 50 ms in a long-lived (warm) process.
Measured twice: with the local models embedding the 5 texts, and with their vectors computed beforehand
by the same models (what the pipeline adds around the embedding).

The 10k store is written with synthetic composite vectors (benchmarks/synth.py) under the real
composite embedder's identity, so the real models then embed the new memories into the same table.

Bulk load (issue 23), in one run so both rates meet the same machine load: the embedding-only rate of
2,000 English memories (the texts of test_bench_search.bulk_lines, the same two local models, in one warm
process) against the rate of a whole `openclaw memory add --batch` process on the same lines, rounds
interleaved; goal: the median of the rounds' CLI rate >= 85% of the embedding-only rate. Beside them, a
whole process that only loads the models and embeds the lines (benchmarks/embedding_process.py): how
much of the gap any process pays before its first vector. And the cost of one add as the store
grows: 1,000 records written into stores of 0, 10k and 30k memories, their vectors computed beforehand
(the models' cost does not depend on the store), so what is measured is the write path alone; goal:
the same per-record cost at every size.

Run: python -m pytest benchmarks/test_bench_writing.py --benchmark-only -n 0 -s
"""

from __future__ import annotations

import itertools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks import synth
from benchmarks.bracketed import cpu_seconds, embedding_around
from benchmarks.test_bench_search import bulk_lines
from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.writing.candidate import Candidate
from openclaw_cli.memory.writing.dedup import DedupZones
from openclaw_cli.memory.writing.write_path import write_memories
from tests import dedup_eval
from tests.memory_helpers import service_for, shared_model_cache, with_shared_models

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


# Rounds of the 2,000-record comparison: one round's ratio moves by +-0.08 with this machine's neighbours
# (0.75-0.90 in one run of ten), so the median of several is what is compared with the goal.
BULK_ROUNDS = 5
BULK_GOAL_SHARE = 0.85
ROOT = Path(__file__).resolve().parent.parent


def _timed_process(command: list[str], home: Path) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds and stdout of one whole process on `home` and the shared models."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    env |= {
        "OPENCLAW_HOME": str(home),
        "OPENCLAW_MEMORY__EMBEDDING__MODELCACHEDIR": str(shared_model_cache()),
    }
    cpu = cpu_seconds(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, check=True)
    elapsed = time.perf_counter() - started
    return elapsed, cpu_seconds(resource.RUSAGE_CHILDREN) - cpu, out.stdout


def _cli_batch_rate(source: Path, home: Path, expected: int) -> tuple[float, float]:
    """Records/s of one whole `memory add --batch` process (start-up and model load included), and the
    CPU seconds it used per record."""
    command = [sys.executable, "-m", "openclaw_cli", "memory", "add", "--batch", str(source), "--json"]
    elapsed, cpu, out = _timed_process(command, home)
    assert json.loads(out)["added"] == expected
    return expected / elapsed, cpu / expected


def _embedding_process_rate(source: Path, home: Path, expected: int) -> float:
    """Texts/s of a whole process that only loads the models and embeds (benchmarks/embedding_process.py)."""
    command = [sys.executable, "-m", "benchmarks.embedding_process", str(source)]
    elapsed, _, out = _timed_process(command, home)
    assert json.loads(out)["embedded"] == expected
    return expected / elapsed


def test_bench_bulk_cli_against_embedding_alone(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lines = bulk_lines("english")
    texts = [json.loads(line)["text"] for line in lines]
    source = tmp_path / "batch.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    embedder = service_for(tmp_path / "models").embedder()
    embedder.embed_passages(["warm up", "预热"])  # loaded and converted before anything is timed
    # The reference segments as bulk work does once USE-m3's full segmentation is in (use_m3_segmenter.py);
    # the CLI's batch starts that load once its models are in and pays for it inside its timed rate.
    multilingual = getattr(embedder, "multilingual", embedder)
    if hasattr(multilingual, "load_full_vocabulary"):
        multilingual.load_full_vocabulary()
    embedding: list[float] = []
    cli: list[float] = []
    process: list[float] = []
    # CPU seconds per record of each: on a loaded machine the wall rates move with the neighbours, but
    # the CPU the CLI spends beyond the models' own is what an idle machine's ratio is made of.
    cpu: dict[str, list[float]] = {"embedding": [], "cli": []}

    def both_processes(home: Path) -> tuple[tuple[float, float], float]:
        # In turn first: neither always meets the machine as the other left it.
        if len(cli) % 2 == 0:
            batch = _cli_batch_rate(source, home, len(lines))
            return batch, _embedding_process_rate(source, home.with_name(home.name + "-e"), len(lines))
        alone = _embedding_process_rate(source, home.with_name(home.name + "-e"), len(lines))
        return _cli_batch_rate(source, home, len(lines)), alone

    def one_round() -> None:
        home = tmp_path / f"home{len(cli)}"
        # Half the reference just before the processes run, half just after: a drift of the machine's
        # speed moves both sides alike (benchmarks/bracketed.py).
        around = embedding_around(embedder.embed_passages, texts, lambda: both_processes(home))
        embedding.append(len(texts) / around.embedding_s)
        cpu["embedding"].append(around.embedding_cpu_s / len(texts))
        (rate, per_record), alone = around.result
        cli.append(rate)
        process.append(alone)
        cpu["cli"].append(per_record)
        shutil.rmtree(home)

    benchmark.pedantic(one_round, rounds=BULK_ROUNDS, iterations=1)
    ratios = [c / e for c, e in zip(cli, embedding, strict=True)]
    figures = {
        "embedding_only_per_s": [round(r) for r in embedding],
        "cli_batch_per_s": [round(r) for r in cli],
        "ratio": [round(r, 3) for r in ratios],
        "ratio_median": round(statistics.median(ratios), 3),
        "cpu_ms_per_record": {k: [round(v * 1000, 2) for v in vs] for k, vs in cpu.items()},
        "cpu_ratio": [round(e / c, 3) for e, c in zip(cpu["embedding"], cpu["cli"], strict=True)],
        # A whole process that loads the models and embeds, and nothing else: what of the gap any
        # process pays (interpreter, settings, model sessions) and what the CLI adds.
        "embedding_process_per_s": [round(r) for r in process],
        "cli_to_embedding_process_median": round(
            statistics.median(c / p for c, p in zip(cli, process, strict=True)), 3
        ),
        # What a process that does nothing but load the models and embed reaches of the goal's reference:
        # the share the goal leaves for the CLI's own work is this minus the goal.
        "embedding_process_to_embedding_only_median": round(
            statistics.median(p / e for p, e in zip(process, embedding, strict=True)), 3
        ),
        "goal_ratio": BULK_GOAL_SHARE,
        "records": len(lines),
        "load_average": round(os.getloadavg()[0], 2),
    }
    benchmark.extra_info.update(figures)
    print(f"\nbulk load, 2,000 English records: {figures}")


class _Known:
    """The composite stand-in's vectors for the texts about to be written, computed beforehand."""

    def __init__(self, texts: list[str]) -> None:
        self.real = synth.CompositeEmbedder()
        self.identity = self.real.identity
        self.known = dict(zip(texts, self.real.embed_passages(texts), strict=True))

    def embed_passages(self, texts: list[str]) -> Any:
        import numpy as np

        return np.stack([self.known[t] for t in texts])

    def embed_query(self, text: str) -> Any:
        return self.real.embed_query(text)


def _records(service: MemoryService, texts: list[str], first: int) -> list[Any]:
    return [
        service.build_record(
            NewMemory(l0=t, category=synth.CATEGORIES[(first + i) % 6], user_id=f"u{(first + i) % 3}")
        )
        for i, t in enumerate(texts)
    ]


def _write_cost(home: Path, texts: list[str]) -> dict[str, float]:
    """ms per record (wall and CPU) of writing `texts` into a copy of `home` through add_many."""
    work = home.parent / f"{home.name}-copy"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(home, work)
    service = MemoryService(Home(work), "main", Settings().memory)
    known = _Known(texts)
    service.embedder = lambda: known  # type: ignore[method-assign]
    records = _records(service, texts, 0)
    service.store(service.db_path("user"))  # opened before the clock starts, as the CLI has it
    started, cpu = time.perf_counter(), cpu_seconds()
    report = service.add_many(records)
    wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    assert len(report.ids) == len(texts)
    service.close()
    shutil.rmtree(work)
    return {"ms": round(wall / len(texts) * 1000, 3), "cpu_ms": round(cpu / len(texts) * 1000, 3)}


def test_bench_bulk_cost_by_store_size(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sizes = (0, 10_000, 30_000)
    stored = synth.texts(sizes[-1])
    new = synth.texts(1_000, seed=99)
    home = tmp_path / "grown"
    home.mkdir()
    costs: dict[int, list[dict[str, float]]] = {size: [] for size in sizes}

    def measure() -> None:
        service = MemoryService(Home(home), "main", Settings().memory)
        filler = synth.CompositeEmbedder()
        service.embedder = lambda: filler  # type: ignore[method-assign]
        grown = 0
        for size in sizes:
            service.add_many(_records(service, stored[grown:size], grown))
            grown = size
            costs[size].append(_write_cost(home, new))
        service.close()

    benchmark.pedantic(measure, rounds=1, iterations=1)
    figures = {f"store_{size}": rows[0] for size, rows in costs.items()}
    benchmark.extra_info.update({**figures, "added": len(new), "load_average": round(os.getloadavg()[0], 2)})
    print(f"\nper-record cost of adding 1,000 records, by store size: {figures}")
