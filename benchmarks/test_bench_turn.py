"""One turn's wait on a running gateway, one client at a time, the fake model answering in about 1 ms.

- A WebSocket `chat.send` on an idle session in the default queue mode (collect, debounceMs 1000): from
  sending the frame to holding the `final` event. Goal: no debounce, so far below 1 s.
- `/v1/chat/completions` (non-streaming and streaming): the median over the same request sent to the
  fake model directly. Goal: median overhead <= 25 ms.
"""

from __future__ import annotations

import http.client
import json
import statistics
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from benchmarks.test_bench_gateway import REPLY, _fake_model
from tests.gateway_helpers import Gateway, chat_until_final, http_json, request, start_gateway, write_config

TURNS = 30
IDLE_GOAL_MS = 200
OVERHEAD_GOAL_MS = 25


@pytest.fixture(scope="module")
def model_and_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Gateway]]:
    """The fake model (its own process) and a gateway in the default queue mode, warmed by one turn."""
    fake, url = _fake_model()
    home = tmp_path_factory.mktemp("bench-turn") / "home"
    write_config(home, None, llm={"apiBase": url}, gateway={"queue": {"mode": "collect", "debounceMs": 1000}})
    gateway = start_gateway(home)
    deadline = time.monotonic() + 120
    while http_json(gateway.http + "/readyz")[0] != 200:
        assert time.monotonic() < deadline, "the gateway never said ready"
        time.sleep(0.05)
    with gateway.ws() as conn:  # not measured: whatever the first turn still loads
        ack = request(conn, "chat.send", {"text": "warm up"}, timeout=120)
        chat_until_final(conn, {ack["payload"]["runId"]}, timeout=120)
    yield url, gateway
    gateway.stop()
    fake.terminate()
    fake.wait(10)


def test_bench_ws_turn_on_an_idle_session(benchmark, model_and_gateway: tuple[str, Gateway]) -> None:  # type: ignore[no-untyped-def]
    _, gateway = model_and_gateway
    waits: list[float] = []
    finals: list[dict[str, Any]] = []

    with gateway.ws() as conn:

        def turn() -> None:
            started = time.perf_counter()
            ack = request(
                conn, "chat.send", {"text": f"turn {len(waits)}", "sessionKey": "agent:main:direct:idle"}
            )
            [*_, final] = chat_until_final(conn, {ack["payload"]["runId"]}, timeout=60)
            waits.append(time.perf_counter() - started)
            finals.append(final)

        benchmark.pedantic(turn, rounds=TURNS, iterations=1)
    assert all(f["state"] == "final" and f["text"] == REPLY for f in finals)
    median_ms = statistics.median(waits) * 1000
    benchmark.extra_info.update(
        {
            "turn_ms_median": round(median_ms, 1),
            "turn_ms_p90": round(sorted(waits)[int(len(waits) * 0.9)] * 1000, 1),
            "queued_ms_median": round(statistics.median(f["queuedMs"] for f in finals), 1),
            "run_ms_median": round(statistics.median(f["runMs"] for f in finals), 1),
            "goal_ms": IDLE_GOAL_MS,
        }
    )
    print(json.dumps(benchmark.extra_info, indent=2))
    assert median_ms <= IDLE_GOAL_MS, f"an idle session's turn took {median_ms:.0f} ms"


def _post(url: str, path: str, body: dict[str, Any], token: str | None = None) -> float:
    """Seconds for one POST, its whole answer read (a stream to its end)."""
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
    return elapsed


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_bench_completions_overhead_over_the_model(  # type: ignore[no-untyped-def]
    benchmark, model_and_gateway: tuple[str, Gateway], stream: bool
) -> None:
    url, gateway = model_and_gateway
    direct: list[float] = []
    through: list[float] = []
    body = {"messages": [{"role": "user", "content": "how are you?"}], "stream": stream}
    base_path = urlsplit(url).path.rstrip("/")

    def pair() -> None:
        direct.append(_post(url, base_path + "/chat/completions", {**body, "model": "fake"}))
        through.append(
            _post(
                gateway.http,
                "/v1/chat/completions",
                {**body, "model": "main", "user": "bench"},
                gateway.token,
            )
        )

    benchmark.pedantic(pair, rounds=TURNS, iterations=1, warmup_rounds=2)
    overhead_ms = (statistics.median(through) - statistics.median(direct)) * 1000
    benchmark.extra_info.update(
        {
            "model_direct_ms_median": round(statistics.median(direct) * 1000, 1),
            "through_gateway_ms_median": round(statistics.median(through) * 1000, 1),
            "overhead_ms_median": round(overhead_ms, 1),
            "goal_overhead_ms": OVERHEAD_GOAL_MS,
        }
    )
    print(json.dumps(benchmark.extra_info, indent=2))
    assert overhead_ms <= OVERHEAD_GOAL_MS, f"median overhead {overhead_ms:.1f} ms over the model"
