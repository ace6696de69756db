"""`openclaw mcp` (issue 51): `memory_search` over stdio at 20,000 memories, per call, warm, without a gateway
(the server's own models, loaded at start) and with one running for the home (the server asks it); and
the start-up of a server to its first answered `tools/list`.

Each call is a whole MCP round trip through the SDK's own client (ClientSession over stdio): JSON-RPC
framing, the tool's argument validation, the search, the answer's JSON.

Measured 2026-12-07 on the shared 2-core machine (load average 5.5-6, other engineers' suites running),
40 calls each: without a gateway p50 50.5 ms, p95 111 ms; with a gateway p50 30.2 ms, p95 49.7 ms (the
same search in-process, ops.memory_search: p50 48.5 ms, so the protocol adds little; `recall` runs two
searches, the person's and the agent's). Start to first tools/list: p50 1.54 s, min 0.72 s, most of it
the SDK's import (~1.1 s of CPU: mcp_types' models).

Run: python -m pytest benchmarks/test_bench_mcp.py --benchmark-only -n 0 -p no:cacheprovider -s
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import synth
from tests.gateway_helpers import Gateway, start_gateway
from tests.mcp_helpers import McpClient, stdio_opener

ROUNDS = 40
PERSON = "u0"  # synth.build spreads its memories over u0, u1 and u2


@pytest.fixture(scope="module")
def home_20k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("m20k") / "home"
    home.mkdir(mode=0o700)
    synth.build(home, 20_000).close()
    return home


def _queries(count: int) -> list[str]:
    """Queries made of the stored texts' own words (3-5 of one memory each), so that both legs find work."""
    rng = random.Random(3)
    texts = synth.texts(20_000)
    out = []
    for _ in range(count):
        words = rng.choice(texts).split()
        out.append(" ".join(rng.sample(words[:-1], k=min(len(words) - 1, rng.randint(3, 5)))))
    return out


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(ordered[len(ordered) // 2] * 1000, 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 1),
        "min_ms": round(ordered[0] * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


def _measure(benchmark: Any, client: McpClient, label: str) -> None:
    queries = iter(_queries(ROUNDS + 5))
    client.ok("memory_search", {"query": next(queries)})  # waits for the warm-up, as no later call does
    timings: list[float] = []

    def run() -> None:
        started = time.perf_counter()
        found = client.ok("memory_search", {"query": next(queries), "k": 10})
        timings.append(time.perf_counter() - started)
        assert found["person"] == PERSON

    benchmark.pedantic(run, rounds=ROUNDS, iterations=1)
    stats = _stats(timings)
    load = os.getloadavg()[0]
    benchmark.extra_info.update({**stats, "load_average": load})
    print(f"\nMCP memory_search over stdio at 20k, {label}: {stats}, load {load:.1f}")


def test_mcp_search_20k_without_a_gateway(benchmark: Any, home_20k: Path) -> None:
    client = McpClient(stdio_opener(home_20k, "--user", PERSON))
    try:
        _measure(benchmark, client, "no gateway")
    finally:
        client.close()


@pytest.fixture
def gateway(home_20k: Path) -> Iterator[Gateway]:
    running = start_gateway(home_20k)
    try:
        yield running
    finally:
        running.stop()


def test_mcp_search_20k_with_a_gateway(benchmark: Any, home_20k: Path, gateway: Gateway) -> None:
    client = McpClient(stdio_opener(home_20k, "--user", PERSON))
    try:
        _measure(benchmark, client, "gateway running")
    finally:
        client.close()


def test_mcp_start_to_first_tools_list(benchmark: Any, home_20k: Path) -> None:
    """From launching `openclaw mcp` to the answer of its first tools/list (initialize included)."""
    timings: list[float] = []

    def run() -> None:
        started = time.perf_counter()
        client = McpClient(stdio_opener(home_20k, "--user", PERSON))
        try:
            tools = client.run(lambda session: session.list_tools()).tools
            timings.append(time.perf_counter() - started)
            assert len(tools) == 6
        finally:
            client.close()

    benchmark.pedantic(run, rounds=5, iterations=1)
    stats = _stats(timings)
    benchmark.extra_info.update({**stats, "load_average": os.getloadavg()[0]})
    print(f"\n`openclaw mcp` start to first tools/list: {stats}")
