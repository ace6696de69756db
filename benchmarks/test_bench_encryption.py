"""Encrypted against plain, in one run (issue 52): warm and cold search at 20k, `memory add --batch` of
2,000, `session append`, a gateway turn. Goal: at most 10% slower each.

Each figure is measured on a plain home and on an encrypted copy of it, rounds interleaved so that load
moves both alike; the ratio is reported. A process that opens an encrypted home also pays one scrypt
unwrap of the data key (N=2^17: 128 MiB, reported on its own as `unwrap_ms`), which no per-operation
tuning removes: it is the price of a memory-hard KDF, paid once per process (the gateway once at start).
Run: python -m pytest benchmarks/test_bench_encryption.py --benchmark-only -n 0 -p no:cacheprovider -s
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from benchmarks import synth
from benchmarks.test_bench_search import QUERIES, bulk_lines
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.security import convert, keyfile, unlocked
from openclaw_cli.sessions.lifecycle import SessionManager
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.writer import Durability

ROOT = Path(__file__).resolve().parent.parent
PASS = "bench passphrase"
GOAL = 1.10


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    plain = tmp_path_factory.mktemp("plain20k") / "home"
    synth.build(plain, 20_000).close()
    sealed = plain.parent.parent / "sealed20k"
    shutil.copytree(plain, sealed)
    convert.init_home(sealed, PASS)
    unlocked.forget()
    return {"plain": plain, "encrypted": sealed}


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def _compare(benchmark: Any, label: str, run: Callable[[str], float], rounds: int) -> None:
    """`run(kind)` returns seconds for one round; plain and encrypted alternate."""
    samples: dict[str, list[float]] = {"plain": [], "encrypted": []}

    def one() -> None:
        for kind in ("plain", "encrypted"):
            samples[kind].append(run(kind))

    benchmark.pedantic(one, rounds=rounds, iterations=1, warmup_rounds=1)
    plain, sealed = _median_ms(samples["plain"]), _median_ms(samples["encrypted"])
    ratio = round(sealed / plain, 3)
    benchmark.extra_info.update({"plain_ms": plain, "encrypted_ms": sealed, "ratio": ratio, "goal": GOAL})
    print(f"\nBENCH {label}: plain {plain} ms, encrypted {sealed} ms, ratio {ratio} (goal <= {GOAL})")


def test_unwrap_cost(benchmark: Any, homes: dict[str, Path]) -> None:
    stored = keyfile.read_keyfile(homes["encrypted"])
    benchmark.pedantic(lambda: keyfile.unwrap(stored, PASS), rounds=5, iterations=1)
    print(f"\nBENCH scrypt unwrap: {round(benchmark.stats.stats.median * 1000, 1)} ms")


def test_warm_search_20k(benchmark: Any, homes: dict[str, Path]) -> None:
    unlocked.remember(homes["encrypted"], keyfile.unwrap(keyfile.read_keyfile(homes["encrypted"]), PASS))
    services = {kind: synth.composite_service(home, warm=True) for kind, home in homes.items()}
    requests = [SearchRequest(query=q, k=10) for q in QUERIES]
    for service in services.values():
        for request in requests:
            service.search(request)

    def run(kind: str) -> float:
        started = time.perf_counter()
        for request in requests:
            services[kind].search(request)
        return (time.perf_counter() - started) / len(requests)

    _compare(benchmark, "warm search 20k (per query)", run, rounds=15)
    for service in services.values():
        service.close()
    unlocked.forget()


def _process(home: Path, *args: str, kind: str) -> float:
    env = {"OPENCLAW_HOME": str(home), "PATH": "/usr/bin:/bin"}
    if kind == "encrypted":
        env["OPENCLAW_PASSPHRASE"] = PASS
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "openclaw_cli", *args], env=env, cwd=ROOT, capture_output=True, check=True
    )
    return time.perf_counter() - started


def test_cold_search_20k(benchmark: Any, homes: dict[str, Path]) -> None:
    _compare(
        benchmark,
        "cold `memory search` process 20k",
        lambda kind: _process(homes[kind], "memory", "search", QUERIES[1], "--json", kind=kind),
        rounds=5,
    )


def test_memory_add_batch_2000(benchmark: Any, homes: dict[str, Path], tmp_path: Path) -> None:
    source = tmp_path / "batch.jsonl"
    source.write_text("\n".join(bulk_lines("english")) + "\n", encoding="utf-8")
    made = [0]

    def run(kind: str) -> float:
        made[0] += 1
        home = tmp_path / f"{kind}{made[0]}"
        shutil.copytree(homes["plain"] / "cache" / "models", home / "cache" / "models")
        if kind == "encrypted":
            convert.init_home(home, PASS)
            unlocked.forget()
        took = _process(home, "memory", "add", "--batch", str(source), "--json", kind=kind)
        shutil.rmtree(home)
        return took

    _compare(benchmark, "`memory add --batch` 2,000 (process)", run, rounds=2)


def test_session_append(benchmark: Any, homes: dict[str, Path], tmp_path: Path) -> None:
    """In-process appends (the gateway's and the agent's path), and the whole CLI process."""
    stores: dict[str, tuple[SessionStore, str]] = {}
    for kind in ("plain", "encrypted"):
        root = tmp_path / kind
        root.mkdir()
        if kind == "encrypted":
            convert.init_home(root, PASS)
        store = SessionStore(Home(root), "main", Durability("never"))
        meta, _ = SessionManager(store).get_or_create("agent:main:main", datetime.now(UTC))
        stores[kind] = (store, meta["sessionId"])

    def run(kind: str) -> float:
        store, session_id = stores[kind]
        started = time.perf_counter()
        for i in range(200):
            store.append(session_id, "user", f"message number {i} with some words in it", datetime.now(UTC))
        return (time.perf_counter() - started) / 200

    _compare(benchmark, "session append in-process (per message)", run, rounds=10)
    for store, _ in stores.values():
        store.close()
    unlocked.forget()


def test_session_append_process(benchmark: Any, tmp_path: Path) -> None:
    roots = {kind: tmp_path / kind for kind in ("plain", "encrypted")}
    for kind, root in roots.items():
        root.mkdir()
        if kind == "encrypted":
            convert.init_home(root, PASS)
            unlocked.forget()
    _compare(
        benchmark,
        "`session append` process",
        lambda kind: _process(roots[kind], "session", "append", "agent:main:main", "hello there", kind=kind),
        rounds=8,
    )


def test_gateway_turn(benchmark: Any, tmp_path: Path) -> None:
    from tests.gateway_helpers import echo_server, running_gateway, send_all, write_config

    with echo_server() as fake:
        gateways = {}
        stack = []
        for kind in ("plain", "encrypted"):
            root = tmp_path / kind
            if kind == "encrypted":
                convert.init_home(root, PASS)
                unlocked.forget()
            write_config(root, fake, memory={"extraction": {"enabled": False}})
            manager = running_gateway(
                root, env={"OPENCLAW_PASSPHRASE": PASS} if kind == "encrypted" else None
            )
            gateways[kind] = manager.__enter__()
            stack.append(manager)
        try:

            def run(kind: str) -> float:
                # A connection per turn (the same handshake for both): a connection left idle while the
                # other gateway's turn runs can miss its keepalive on a loaded machine.
                started = time.perf_counter()
                with gateways[kind].ws() as conn:
                    send_all(conn, ["what did I say about tea"], "agent:main:main")
                return time.perf_counter() - started

            _compare(benchmark, "gateway turn (connect, chat.send to final)", run, rounds=15)
        finally:
            for manager in stack:
                manager.__exit__(None, None, None)
