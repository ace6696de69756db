"""Reflection over 1,000 memories with the fake model on loopback: wall time and number of model calls.

The memories (5 reflectable categories x 2 users, so 10 groups) are written through
`MemoryService.add_many` with synthetic passage vectors (benchmarks/synth.py): what reflection costs
(reading the groups, one model call per group, the insight writes and 1,000 marked sources with their
history rows in one transaction) does not depend on what the vectors mean. Each round starts from a
fresh copy of the database, since a run marks everything it reflected on.

Goal (reported in extra_info, not asserted): a run over 1,000 memories <= 5 s plus the model's own time,
with one model call per group.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks import synth
from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.reflect.run import run_reflection
from openclaw_cli.memory.service import MemoryService
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI
from tests.reflect_helpers import llm_settings, summarising_model

COUNT = 1000
CATEGORIES = ("profile", "preference", "event", "case", "lesson")


def _service(home: Path, settings: Settings) -> MemoryService:
    service = MemoryService(Home(home), "main", settings.memory)
    embedder = synth.CompositeEmbedder()
    service.embedder = lambda: embedder  # type: ignore[method-assign]
    return service


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("bench-reflect") / "home"
    service = _service(home, Settings())
    records = [
        service.build_record(NewMemory(l0=text, category=CATEGORIES[i % 5], user_id=f"u{i % 2}"))
        for i, text in enumerate(synth.texts(COUNT))
    ]
    assert len(service.add_many(records).ids) == COUNT
    for store in service.existing_stores():
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    service.close()
    return home


def test_bench_reflect_1000_memories(
    benchmark: Any, prepared: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
    fake = FakeOpenAI().start()
    fake.respond_with(summarising_model)
    settings = llm_settings(fake.url)
    runs: list[tuple[float, Any, int]] = []

    def fresh_copy(round_number: list[int] = [0]) -> tuple[tuple[Any, ...], dict[str, Any]]:  # noqa: B006
        round_number[0] += 1
        home = tmp_path / f"round-{round_number[0]}"
        shutil.copytree(prepared, home)
        return (_service(home, settings),), {}

    def reflect(service: MemoryService) -> None:
        before = len(fake.requests_to("/chat/completions"))
        start = time.perf_counter()
        report = run_reflection(service, settings, lock_dir=service.home.memory_dir("main"))
        runs.append(
            (time.perf_counter() - start, report, len(fake.requests_to("/chat/completions")) - before)
        )
        service.close()

    try:
        benchmark.pedantic(reflect, setup=fresh_copy, rounds=4, iterations=1)
    finally:
        fake.stop()
    cold = runs[0][0]  # includes importing litellm and fsrs, once per process
    seconds, report, requests = min(runs, key=lambda run: run[0])
    assert report.reflected == COUNT and report.model_calls == 10 == requests
    benchmark.extra_info.update(
        {
            "memories": COUNT,
            "groups": len(report.groups),
            "model_calls": report.model_calls,
            "http_requests": requests,
            "insights_written": report.insights_written,
            "best_s": round(seconds, 2),
            "cold_s": round(cold, 2),
            "goal_s": 5,
        }
    )
    print(
        f"\nBENCH reflect {COUNT} memories: best {seconds:.2f} s (first, cold: {cold:.2f} s), "
        f"{report.model_calls} model calls, "
        f"{report.insights_written} insights"
    )
