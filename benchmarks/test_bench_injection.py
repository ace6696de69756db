"""A chat turn's memory injection in process, at the eval store's ~2,500 memories (issue 54).

`build_memory_block` as the gateway calls it (a warm MemoryService, default settings, the person's FSRS
hits recorded), for content-bearing messages of three kinds, interleaved turn by turn so that load moves
them alike:
- new: a message never said before ("I went running for 137 minutes ...");
- repeated: one message said again every turn;
- near: one word changes between turns (the day's number).
Goal: repeated and near-repeated messages cost no more than new ones (median ratio <= 1).

A second run of each kind writes a memory before every turn, as "remember this" does (every turn then
finds its caches stale). Prints each kind's median and p90 in ms and the ratios to `new`.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.config.loading import Settings
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.inject import build_memory_block
from openclaw_cli.memory.service import MemoryService
from tests.evalset import NOW, build_service
from tests.inject_golden import warm_service
from tests.memory_helpers import with_shared_models

TURNS = 40
PERSON = "u-lin"
NEW = (
    "I went running for {n} minutes this morning before work",
    "my sister called about the wedding, {n} guests so far",
    "remind me the ledger migration review is on day {n}",
    "we had dumplings for dinner at table {n}",
)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryService]:
    home = Path(tmp_path_factory.mktemp("bench-injection"))
    build_service(home).close()
    warm = warm_service(home)
    yield warm
    warm.close()


def _said(kind: str, n: int) -> str:
    if kind == "new":
        return NEW[n % len(NEW)].format(n=1000 + n)
    if kind == "repeated":
        return "I watered the plants on the balcony today"
    return f"I watered the plants on the balcony on day {n % 3}"


@pytest.mark.parametrize("writes", [False, True], ids=["reads", "remember-each-turn"])
def test_bench_injection_new_repeated_near(benchmark, service: MemoryService, writes: bool) -> None:  # type: ignore[no-untyped-def]
    settings = with_shared_models(Settings()).memory.inject
    kinds = ("new", "repeated", "near")
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    turn = iter(range(10**6))

    def one_round() -> None:
        n = next(turn)
        for kind in kinds:
            if writes:
                service.add(
                    NewMemory(
                        l0=f"Noted on turn {n} ({kind})", category="event", scope="user", user_id=PERSON
                    )
                )
            started = time.perf_counter()
            build_memory_block(service, settings, query=_said(kind, n), user_id=PERSON, now=NOW)
            times[kind].append((time.perf_counter() - started) * 1000)

    for _ in range(3):  # not measured: the first searches load the models, vectors and words
        one_round()
    for kind in kinds:
        times[kind].clear()
    benchmark.pedantic(one_round, rounds=TURNS, iterations=1)
    figures: dict[str, Any] = {
        kind: {
            "median_ms": round(statistics.median(v), 2),
            "p90_ms": round(sorted(v)[int(len(v) * 0.9)], 2),
        }
        for kind, v in times.items()
    }
    base = statistics.median(times["new"])
    figures["ratio_to_new"] = {k: round(statistics.median(times[k]) / base, 3) for k in ("repeated", "near")}
    figures["writes_each_turn"] = writes
    figures["load"] = Path("/proc/loadavg").read_text().split()[:3]
    benchmark.extra_info.update(figures)
    print(json.dumps(figures, indent=2))
    assert all(times.values())
