"""Export and import of a large memory store: wall time, peak memory (RSS) and records per second.

Goal: `memory export` streams, in < 200 MB RSS at 100k records (asserted: it is the design's promise).
Size: OPENCLAW_BENCH_PORTABILITY_N records (default 100,000). The source store is written in-process
through `MemoryService.add_many` with the synthetic composite vectors of synth.py. Export runs as the real
CLI process (it needs no model); import runs `import_memories` in its own process with the same synthetic
embedder (benchmarks/portability_worker.py), because the real models would take many minutes to embed 100k
texts and would measure the model rather than the import. Peak RSS is each child's ru_maxrss from wait4.
test_import_with_the_real_models measures `memory import` as users run it, on
OPENCLAW_BENCH_PORTABILITY_REAL_N records (default 500).

    python -m pytest benchmarks/test_bench_portability.py --benchmark-only -n 0 -s
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from benchmarks import synth
from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.service import MemoryService

ROOT = Path(__file__).resolve().parent.parent
SIZE = int(os.environ.get("OPENCLAW_BENCH_PORTABILITY_N", "100000"))
EXPORT_RSS_GOAL_MB = 200


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    return env | {"OPENCLAW_HOME": str(home), "PYTHONPATH": str(ROOT)}


def _measured(command: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall seconds, peak RSS in MB and stdout of `command`, run under portability_worker's `measure`."""
    wrapped = [sys.executable, "-m", "benchmarks.portability_worker", "measure", *command]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.run(wrapped, env=env, cwd=ROOT, stdout=out, stderr=err)
        out.seek(0)
        err.seek(0)
        errors = err.read().decode()
        assert proc.returncode == 0, errors
        figures = json.loads(errors.strip().split("\n")[-1])
        return figures["seconds"], figures["rssMb"], out.read()


@pytest.fixture(scope="module")
def source_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("portability") / "source"
    service = MemoryService(Home(home), "main", Settings().memory)
    composite = synth.CompositeEmbedder()
    service.embedder = lambda: composite  # type: ignore[method-assign]
    records = [
        service.build_record(NewMemory(l0=t, category=synth.CATEGORIES[i % 6], user_id=f"u{i % 3}"))
        for i, t in enumerate(synth.texts(SIZE))
    ]
    service.add_many(records)
    service.close()
    return home


def _report(benchmark: Any, name: str, seconds: float, rss_mb: float, count: int) -> None:
    benchmark.extra_info.update(
        {f"{name}_seconds": round(seconds, 2), f"{name}_peak_rss_mb": round(rss_mb, 1), "records": count}
    )
    benchmark.extra_info[f"{name}_records_per_s"] = round(count / seconds)
    print(f"\n{name}: {count} records in {seconds:.1f} s ({count / seconds:.0f}/s), peak RSS {rss_mb:.0f} MB")


@pytest.mark.parametrize("kind", ["jsonl", "json"])
def test_export(benchmark: Any, source_home: Path, tmp_path: Path, kind: str) -> None:
    target = tmp_path / f"export.{kind}"
    command = [sys.executable, "-m", "openclaw_cli", "memory", "export", "--format", kind, "-o", str(target)]
    figures: dict[str, float] = {}

    def run() -> None:
        figures["seconds"], figures["rss"], _ = _measured(command, _env(source_home))

    benchmark.pedantic(run, rounds=1, iterations=1)
    _report(benchmark, f"export_{kind}", figures["seconds"], figures["rss"], SIZE)
    benchmark.extra_info["file_mb"] = round(target.stat().st_size / 2**20, 1)
    assert figures["rss"] < EXPORT_RSS_GOAL_MB


@pytest.mark.parametrize("kind", ["jsonl", "json"])
def test_import(benchmark: Any, source_home: Path, tmp_path: Path, kind: str) -> None:
    exported = tmp_path / f"export.{kind}"
    env = _env(source_home)
    _measured(
        [sys.executable, "-m", "openclaw_cli", "memory", "export", "--format", kind, "-o", str(exported)], env
    )
    figures: dict[str, Any] = {}

    def run() -> None:
        target = tmp_path / f"target-{len(figures)}"
        command = [
            sys.executable,
            "-m",
            "benchmarks.portability_worker",
            "import",
            str(target),
            str(exported),
        ]
        figures["seconds"], figures["rss"], out = _measured(command, _env(target))
        figures["result"] = json.loads(out)

    benchmark.pedantic(run, rounds=1, iterations=1)
    assert figures["result"]["added"] == SIZE and figures["result"]["pending"] == 0
    _report(benchmark, f"import_{kind}", figures["seconds"], figures["rss"], SIZE)
    benchmark.extra_info[f"import_{kind}_core_seconds"] = round(figures["result"]["seconds"], 2)


REAL_SIZE = int(os.environ.get("OPENCLAW_BENCH_PORTABILITY_REAL_N", "500"))


def test_import_with_the_real_models(benchmark: Any, tmp_path: Path) -> None:
    """`memory import` as the user runs it: the real local models re-embed every record (converted models
    from the shared test cache, so the one-time conversion is not measured)."""
    from tests.memory_helpers import shared_model_cache

    records = [
        {"id": f"mem-{n}", "content": {"l0": text}, "createdAt": "2025-03-01T08:00:00.000Z"}
        for n, text in enumerate(synth.texts(REAL_SIZE, seed=11))
    ]
    exported = tmp_path / "export.json"
    header = {"version": "1.0", "agent": "main", "exportedAt": "2026-01-01T00:00:00.000Z", "embedder": None}
    exported.write_text(json.dumps({**header, "records": records}), encoding="utf-8")
    figures: dict[str, Any] = {}

    def run() -> None:
        home = tmp_path / f"home-{len(figures)}"
        env = _env(home) | {"OPENCLAW_MEMORY__EMBEDDING__MODELCACHEDIR": str(shared_model_cache())}
        command = [sys.executable, "-m", "openclaw_cli", "memory", "import", str(exported), "--json"]
        figures["seconds"], figures["rss"], out = _measured(command, env)
        figures["result"] = json.loads(out)

    benchmark.pedantic(run, rounds=1, iterations=1)
    assert figures["result"]["added"] == REAL_SIZE and figures["result"]["pendingVectors"] == 0
    _report(benchmark, "import_real_models", figures["seconds"], figures["rss"], REAL_SIZE)
