"""A whole `openclaw memory search` process against a 2,000-memory home, without a gateway (the CLI loads the
model and searches) and with one running for the home (the CLI sends the query to it: gateway/client/reads.py).

Goal (issue 23): <= 250 ms wall with a gateway. Report quiet-run figures with their spread and the load.

Run: python -m pytest benchmarks/test_bench_remote_reads.py --benchmark-only -n 0 -p no:cacheprovider -s
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import synth
from tests.conftest import base_env
from tests.gateway_helpers import Gateway, start_gateway

ROOT = Path(__file__).resolve().parent.parent
QUERY = "coffee preferences in the morning"
GOAL_WITH_GATEWAY_MS = 250
ROUNDS = 15


@pytest.fixture(scope="module")
def home_2k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("m2k") / "home"
    home.mkdir(mode=0o700)
    synth.build(home, 2_000).close()
    return home


@pytest.fixture
def gateway(home_2k: Path) -> Iterator[Gateway]:
    running = start_gateway(home_2k)
    try:
        yield running
    finally:
        running.stop()


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(ordered[len(ordered) // 2] * 1000, 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 1),
        "min_ms": round(ordered[0] * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


def _measure(benchmark: Any, home: Path, label: str, *extra: str) -> dict[str, float]:
    command = [sys.executable, "-m", "openclaw_cli", "-v", "memory", "search", QUERY, "--json", *extra]
    env = base_env(home)
    timings: list[float] = []
    paths: list[str] = []

    def run() -> None:
        started = time.perf_counter()
        out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
        timings.append(time.perf_counter() - started)
        assert "results" in json.loads(out.stdout)
        paths.append("gateway" if "through the gateway at" in out.stderr else "local")

    run()  # the first run builds pyc caches, as any first use would
    benchmark.pedantic(run, rounds=ROUNDS, iterations=1)
    stats = _stats(timings[1:])
    load = os.getloadavg()[0]
    benchmark.extra_info.update({**stats, "load_average": load, "path": sorted(set(paths))})
    print(f"\n`openclaw memory search` at 2k, {label}: {stats}, load {load:.1f}, path {sorted(set(paths))}")
    return stats


def test_cli_search_2k_without_a_gateway(benchmark: Any, home_2k: Path) -> None:
    _measure(benchmark, home_2k, "no gateway")


def test_cli_search_2k_with_a_gateway(benchmark: Any, home_2k: Path, gateway: Gateway) -> None:
    stats = _measure(benchmark, home_2k, "gateway running")
    benchmark.extra_info["goal_ms"] = GOAL_WITH_GATEWAY_MS
    assert benchmark.extra_info["path"] == ["gateway"]
    print(f"goal <= {GOAL_WITH_GATEWAY_MS} ms: p50 {stats['p50_ms']} ms")


def test_cli_search_2k_local_while_a_gateway_runs(benchmark: Any, home_2k: Path, gateway: Gateway) -> None:
    _measure(benchmark, home_2k, "gateway running, --local", "--local")
