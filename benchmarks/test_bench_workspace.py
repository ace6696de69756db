"""Workspace Markdown sync: 1,000 unchanged files in <= 1 s with nothing re-embedded (goal, in extra_info).

Two cases: files untouched since the last sync (answered from their size and mtime), and files whose
mtime changed but whose bytes did not (each is read and hashed, and still not re-chunked or re-embedded).
The first sync embeds through the composite stand-in (benchmarks/synth.py): what is measured is the
sync of unchanged files, which embeds nothing whatever the embedder.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from benchmarks.synth import CompositeEmbedder, texts
from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.service import MemoryService

FILES = 1000
GOAL_MS = 1000.0


class Counting(CompositeEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.passages = 0

    def embed_passages(self, batch: Any) -> Any:
        self.passages += len(batch)
        return super().embed_passages(batch)


def _prepared(tmp_path: Path) -> tuple[MemoryService, Counting, Path]:
    home = tmp_path / "home"
    logs = Home(home).workspace_dir("main") / "memory"
    logs.mkdir(parents=True)
    lines = texts(FILES * 4)
    for n in range(FILES):
        body = "".join(f"- {line}\n" for line in lines[n * 4 : n * 4 + 4])
        (logs / f"2024-{n // 28 % 12 + 1:02d}-{n % 28 + 1:02d}-{n}.md").write_text(body, encoding="utf-8")
    service = MemoryService(Home(home), "main", Settings().memory)
    embedder = Counting()
    service.embedder = lambda: embedder  # type: ignore[method-assign]
    first = service.sync_workspace()
    assert first is not None and first.indexed == FILES and embedder.passages == first.chunks
    return service, embedder, logs


def _report(benchmark: Any, label: str) -> None:
    stats = benchmark.stats.stats
    benchmark.extra_info.update(
        {
            "files": FILES,
            "goal_ms": GOAL_MS,
            "median_ms": round(stats.median * 1000, 1),
            "max_ms": round(stats.max * 1000, 1),
        }
    )
    print(
        f"\nBENCH workspace sync, {FILES} {label} files: median {stats.median * 1000:.1f} ms, max {stats.max * 1000:.1f} ms"
    )


def test_bench_sync_1000_untouched_files(benchmark: Any, tmp_path: Path) -> None:
    service, embedder, _ = _prepared(tmp_path)
    before = embedder.passages
    report = benchmark.pedantic(service.sync_workspace, rounds=5, iterations=1, warmup_rounds=1)
    assert report is not None and (report.unchanged, report.indexed, report.embedded) == (FILES, 0, 0)
    assert embedder.passages == before
    _report(benchmark, "untouched")
    service.close()


def test_bench_sync_1000_touched_but_unchanged_files(benchmark: Any, tmp_path: Path) -> None:
    service, embedder, logs = _prepared(tmp_path)
    before = embedder.passages
    paths = sorted(logs.iterdir())

    def touch() -> tuple[tuple[Any, ...], dict[str, Any]]:
        stamp = time.time_ns()
        for path in paths:
            os.utime(path, ns=(stamp, stamp))
        return (), {}

    report = benchmark.pedantic(service.sync_workspace, setup=touch, rounds=5, iterations=1)
    assert report is not None and (report.unchanged, report.indexed, report.embedded) == (FILES, 0, 0)
    assert embedder.passages == before
    _report(benchmark, "touched, unchanged")
    service.close()
