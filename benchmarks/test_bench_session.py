"""Session speed goals: `session list` start-up with 1,000 sessions, append throughput and fsync latency."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from openclaw_cli.core.paths import Home
from openclaw_cli.sessions.lifecycle import SessionManager
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.writer import Durability

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TEXT = "Could you remind me what we decided about the trip to Lisbon next month? " * 2


@pytest.fixture(scope="module")
def thousand_sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("bench") / "home"
    manager = SessionManager(SessionStore(Home(home), "main", Durability("never")))
    for peer in range(1000):
        manager.append(f"agent:main:telegram:bot:direct:{peer}", "user", "hello", NOW)
    manager.store.close()
    return home


def test_bench_session_list_process_1000_sessions(benchmark, thousand_sessions: Path) -> None:  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    env["OPENCLAW_HOME"] = str(thousand_sessions)
    command = [sys.executable, "-m", "openclaw_cli", "session", "list", "--json"]

    def run() -> None:
        proc = subprocess.run(command, env=env, cwd=ROOT, capture_output=True)
        assert proc.returncode == 0 and proc.stdout.count(b'"sessionId"') == 1000

    benchmark.pedantic(run, rounds=10, warmup_rounds=1)
    benchmark.extra_info["goal_ms"] = 250


def test_bench_append_throughput_default_durability(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    manager = SessionManager(SessionStore(Home(tmp_path / "home"), "main", Durability("interval", 1000)))
    manager.append("agent:main:main", "user", "warm up", NOW)  # creates the session, loads the tokenizer
    batch = 1000

    def append_batch() -> None:
        for i in range(batch):
            manager.append("agent:main:main", "user" if i % 2 else "assistant", TEXT, NOW)

    benchmark.pedantic(append_batch, rounds=5, warmup_rounds=1)
    rate = batch / benchmark.stats.stats.mean
    benchmark.extra_info["messages_per_second"] = round(rate)
    benchmark.extra_info["goal_messages_per_second"] = 5000
    manager.store.close()


def test_bench_append_p99_latency_fsync_always(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    manager = SessionManager(SessionStore(Home(tmp_path / "home"), "main", Durability("always", 1000)))
    manager.append("agent:main:main", "user", "warm up", NOW)
    latencies: list[float] = []

    def append_one() -> None:
        start = time.perf_counter()
        manager.append("agent:main:main", "user", TEXT, NOW)
        latencies.append(time.perf_counter() - start)

    benchmark.pedantic(append_one, rounds=300, iterations=1)
    ordered = sorted(latencies)
    benchmark.extra_info["p50_ms"] = round(ordered[len(ordered) // 2] * 1000, 3)
    benchmark.extra_info["p99_ms"] = round(ordered[int(len(ordered) * 0.99) - 1] * 1000, 3)
    manager.store.close()
