"""One turn's wait on a running gateway, and where it goes, the fake model answering in about 1 ms.

- A WebSocket `chat.send` on an idle session in the default queue mode (collect, debounceMs 1000): from
  sending the frame to holding the `final` event. Goal: no debounce, so far below 1 s.
- `/v1/chat/completions` (non-streaming and streaming): the median over the same request sent to the
  fake model directly. Goal: median overhead <= 25 ms.
- 10 clients x 20 turns at once: turns/s (goal >= 40), and the gateway's RSS growth over 1,000 turns
  (goal <= 60 MB).

Each path reports the median of every stage of the turn (agent/turn/stages.py: the gateway sends the split
with each turn, as `timings.stages` in the final event, a Server-Timing header, or an SSE comment line),
plus what the gateway's own stages do not cover (`transport`: the HTTP/WebSocket exchange, encoding,
the client). `client over model` is the model-call stage less the model's direct median: the client
library's own share.

Before/after in one run: OPENCLAW_BENCH_BASELINE=/path/to/another/source/tree starts a second gateway
from that tree on the same fake model, and every round sends the same request to both, interleaved, so
that load moves both alike. Its figures are reported under `baseline`.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from websockets.asyncio.client import connect

from benchmarks.test_bench_gateway import REPLY, _fake_model, _rss_kb
from tests.gateway_helpers import Gateway, chat_until_final, http_json, request, start_gateway, write_config

TURNS = 30
IDLE_GOAL_MS = 200
OVERHEAD_GOAL_MS = 25
CLIENTS = 10
CLIENT_TURNS = 20
TURNS_PER_SECOND_GOAL = 40
RSS_TURNS = 1000
RSS_GOAL_MB = 60


def _launcher(tree: str | None) -> tuple[str, ...]:
    """How to start the gateway from source `tree` (first on sys.path, ahead of the working directory)."""
    if tree is None:
        return ("-m", "openclaw_cli")
    code = f"import sys, runpy; sys.path[0] = {tree!r}; runpy.run_module('openclaw_cli', run_name='__main__')"
    return ("-c", code)


def _gateway(root: Path, url: str, tree: str | None, mode: str) -> Gateway:
    home = root / "home"
    write_config(home, None, llm={"apiBase": url}, gateway={"queue": {"mode": mode, "debounceMs": 1000}})
    gateway = start_gateway(home, launcher=_launcher(tree))
    deadline = time.monotonic() + 120
    while http_json(gateway.http + "/readyz")[0] != 200:
        assert time.monotonic() < deadline, "the gateway never said ready"
        time.sleep(0.05)
    with gateway.ws() as conn:  # not measured: whatever the first turn still loads
        ack = request(conn, "chat.send", {"text": "warm up"}, timeout=120)
        chat_until_final(conn, {ack["payload"]["runId"]}, timeout=120)
    return gateway


@pytest.fixture(scope="module")
def model_and_gateways(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Gateway]]]:
    """The fake model (its own process), this tree's gateway in the default queue mode, warmed by one
    turn, and the baseline's when OPENCLAW_BENCH_BASELINE names one."""
    fake, url = _fake_model()
    gateways = {"this": _gateway(tmp_path_factory.mktemp("bench-turn"), url, None, "collect")}
    baseline = os.environ.get("OPENCLAW_BENCH_BASELINE")
    if baseline:
        gateways["baseline"] = _gateway(tmp_path_factory.mktemp("bench-base"), url, baseline, "collect")
    yield url, gateways
    for gateway in gateways.values():
        gateway.stop()
    fake.terminate()
    fake.wait(10)


def _medians(splits: list[dict[str, float]]) -> dict[str, float]:
    """The median of every stage over the turns (a stage a turn lacks counts as 0 ms in it)."""
    names = list(dict.fromkeys(name for split in splits for name in split))
    return {name: round(statistics.median(s.get(name, 0.0) for s in splits), 2) for name in names}


def _report(benchmark: Any, figures: dict[str, Any]) -> None:
    benchmark.extra_info.update(figures)
    print(json.dumps({**figures, "load": Path("/proc/loadavg").read_text().split()[:3]}, indent=2))


# -- WebSocket ---------------------------------------------------------------------------------------


def _ws_turn(conn: Any, number: int) -> tuple[float, dict[str, Any], dict[str, float]]:
    sent = time.perf_counter()
    ack = request(conn, "chat.send", {"text": f"turn {number}", "sessionKey": "agent:main:direct:idle"})
    [*_, final] = chat_until_final(conn, {ack["payload"]["runId"]}, timeout=60)
    got = time.perf_counter()
    # perf_counter() here and monotonic() in the gateway read the same clock (CLOCK_MONOTONIC on Linux)
    timings = final["timings"]
    split = {
        "frame read + journal": (timings["createdAt"] - sent) * 1000,
        "lane wait": (timings["startedAt"] - timings["createdAt"]) * 1000,
        **timings["stages"],
        "event out": (got - timings["endedAt"]) * 1000,
    }
    return got - sent, final, split


def test_bench_ws_turn_on_an_idle_session(benchmark, model_and_gateways) -> None:  # type: ignore[no-untyped-def]
    _, gateways = model_and_gateways
    waits: dict[str, list[float]] = {name: [] for name in gateways}
    splits: dict[str, list[dict[str, float]]] = {name: [] for name in gateways}
    finals: list[dict[str, Any]] = []
    opened = contextlib.ExitStack()
    conns = {name: opened.enter_context(gateway.ws()) for name, gateway in gateways.items()}

    def turn() -> None:
        for name, conn in conns.items():
            wait, final, split = _ws_turn(conn, len(finals))
            waits[name].append(wait)
            splits[name].append(split)
            finals.append(final)

    try:
        benchmark.pedantic(turn, rounds=TURNS, iterations=1)
    finally:
        opened.close()
    assert all(f["state"] == "final" and f["text"] == REPLY for f in finals)
    figures = {
        name: {
            "turn_ms_median": round(statistics.median(waits[name]) * 1000, 1),
            "turn_ms_p90": round(sorted(waits[name])[int(len(waits[name]) * 0.9)] * 1000, 1),
            "stages_ms_median": _medians(splits[name]),
        }
        for name in gateways
    }
    _report(benchmark, {**figures, "goal_ms": IDLE_GOAL_MS})
    median_ms = figures["this"]["turn_ms_median"]
    assert median_ms <= IDLE_GOAL_MS, f"an idle session's turn took {median_ms:.0f} ms"


# -- /v1/chat/completions -------------------------------------------------------------------------------


def _server_timing(value: str) -> dict[str, float]:
    split = {}
    for entry in filter(None, (part.strip() for part in value.split(","))):
        name, _, duration = entry.partition(";dur=")
        split[name.replace("-", " ")] = float(duration)
    return split


def _post(
    url: str, path: str, body: dict[str, Any], token: str | None = None
) -> tuple[float, dict[str, float]]:
    """Seconds for one POST, its whole answer read (a stream to its end), and the stages the gateway
    reported (Server-Timing header, or the stream's `: server-timing` comment line)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    started = time.perf_counter()
    conn.request("POST", path, json.dumps(body), headers)
    reply = conn.getresponse()
    data = reply.read()
    elapsed = time.perf_counter() - started
    conn.close()
    assert reply.status == 200, data[:500]
    timing = reply.getheader("Server-Timing") or ""
    for line in data.decode("utf-8").splitlines():
        if line.startswith(": server-timing "):
            timing = line.removeprefix(": server-timing ")
    split = _server_timing(timing)
    if split:
        split["transport"] = elapsed * 1000 - sum(split.values())
    return elapsed, split


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_bench_completions_overhead_over_the_model(  # type: ignore[no-untyped-def]
    benchmark, model_and_gateways, stream: bool
) -> None:
    url, gateways = model_and_gateways
    direct: list[float] = []
    through: dict[str, list[float]] = {name: [] for name in gateways}
    splits: dict[str, list[dict[str, float]]] = {name: [] for name in gateways}
    body = {"messages": [{"role": "user", "content": "how are you?"}], "stream": stream}
    base_path = urlsplit(url).path.rstrip("/")

    def pair() -> None:
        direct.append(_post(url, base_path + "/chat/completions", {**body, "model": "fake"})[0])
        for name, gateway in gateways.items():
            wanted = {**body, "model": "main", "user": "bench"}
            elapsed, split = _post(gateway.http, "/v1/chat/completions", wanted, gateway.token)
            through[name].append(elapsed)
            splits[name].append(split)

    benchmark.pedantic(pair, rounds=TURNS, iterations=1, warmup_rounds=2)
    direct_ms = statistics.median(direct) * 1000
    figures: dict[str, Any] = {"model_direct_ms_median": round(direct_ms, 1)}
    for name in gateways:
        stages = _medians(splits[name][2:])  # the warm-up rounds are not in the timings either
        if "model call" in stages:
            stages["client over model"] = round(stages["model call"] - direct_ms, 2)
        figures[name] = {
            "through_gateway_ms_median": round(statistics.median(through[name]) * 1000, 1),
            "overhead_ms_median": round(statistics.median(through[name]) * 1000 - direct_ms, 1),
            "stages_ms_median": stages,
        }
    _report(benchmark, {**figures, "goal_overhead_ms": OVERHEAD_GOAL_MS})
    overhead_ms = figures["this"]["overhead_ms_median"]
    assert overhead_ms <= OVERHEAD_GOAL_MS, f"median overhead {overhead_ms:.1f} ms over the model"


# -- many clients at once -------------------------------------------------------------------------------


async def _client(gateway: Gateway, number: int, turns: int, tag: str) -> list[str]:
    """One client's turns, one after the other on its own session: the final states."""
    headers = {"Authorization": f"Bearer {gateway.token}"}
    states = []
    async with connect(gateway.ws_url, max_size=None, additional_headers=headers) as ws:
        for i in range(turns):
            frame = {
                "type": "req",
                "id": str(i),
                "method": "chat.send",
                "params": {"text": f"c{number} t{i}", "sessionKey": f"agent:main:direct:{tag}{number}"},
            }
            await ws.send(json.dumps(frame))
            while True:
                reply = json.loads(await ws.recv())
                if reply.get("event") == "chat" and reply["payload"]["state"] != "delta":
                    states.append(reply["payload"]["state"])
                    break
    return states


def _clients(gateway: Gateway, turns: int, tag: str) -> float:
    """CLIENTS clients of `turns` turns each, at once; turns per second, every turn answered."""
    started = time.perf_counter()
    results = asyncio.run(_all_clients(gateway, turns, tag))
    elapsed = time.perf_counter() - started
    assert all(states == ["final"] * turns for states in results)
    return CLIENTS * turns / elapsed


async def _all_clients(gateway: Gateway, turns: int, tag: str) -> list[list[str]]:
    return list(await asyncio.gather(*(_client(gateway, n, turns, tag) for n in range(CLIENTS))))


def test_bench_ten_clients_turns_per_second_and_rss(benchmark, model_and_gateways) -> None:  # type: ignore[no-untyped-def]
    """10 clients x 20 turns, interleaved with the baseline when there is one; then 1,000 more turns
    through this gateway, its RSS read before and after (the first rounds have grown its caches)."""
    _, gateways = model_and_gateways
    rates: dict[str, list[float]] = {name: [] for name in gateways}

    def rounds() -> None:
        for name, gateway in gateways.items():
            rates[name].append(_clients(gateway, CLIENT_TURNS, f"r{len(rates[name])}-"))

    benchmark.pedantic(rounds, rounds=3, iterations=1)
    gateway = gateways["this"]
    before = _rss_kb(gateway.process.pid)
    _clients(gateway, RSS_TURNS // CLIENTS, "rss-")
    growth_mb = (_rss_kb(gateway.process.pid) - before) / 1024
    figures = {name: {"turns_per_second_median": round(statistics.median(r), 1)} for name, r in rates.items()}
    figures["this"]["rss_growth_mb_per_1000_turns"] = round(growth_mb, 1)
    _report(
        benchmark, {**figures, "goal_turns_per_second": TURNS_PER_SECOND_GOAL, "goal_rss_mb": RSS_GOAL_MB}
    )
    assert figures["this"]["turns_per_second_median"] >= TURNS_PER_SECOND_GOAL
    assert growth_mb <= RSS_GOAL_MB
