"""A gateway's first turn pays nothing it could have done earlier: an idle session's collect turn starts at
once (no debounce), and the process warms its model client, embedders and searcher at start, saying
ready on /readyz only once that is done. Real gateway processes, the fake model on loopback.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import FakeOpenAI
from tests.gateway_helpers import (
    Gateway,
    chat_until_final,
    echo_server,
    http_json,
    request,
    running_gateway,
    write_config,
)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with echo_server() as server:
        yield server


def test_collect_on_an_idle_session_does_not_wait_for_the_debounce(tmp_path: Path, fake: FakeOpenAI) -> None:
    """debounceMs is 30 s: a turn that waited for it could not end within the 25 s this test allows, and
    the gateway's own account of the wait (queuedMs) stays below it."""
    home = tmp_path / "home"
    write_config(home, fake, gateway={"queue": {"mode": "collect", "debounceMs": 30_000}})
    with running_gateway(home) as gateway, gateway.ws() as conn:
        ack = request(conn, "chat.send", {"text": "hello there", "sessionKey": "agent:main:direct:idle"})
        assert ack["ok"], ack
        events = chat_until_final(conn, {ack["payload"]["runId"]}, timeout=25)
    final = events[-1]
    assert final["state"] == "final" and final["text"] == "echo: hello there"
    assert final["queuedMs"] < 30_000
    assert final["timings"]["startedAt"] - final["timings"]["receivedAt"] < 30


def _until_ready(gateway: Gateway, timeout: float = 120) -> list[tuple[int, int]]:
    """(/healthz, /readyz) status codes, polled from start until /readyz says ready."""
    seen: list[tuple[int, int]] = []
    deadline = time.monotonic() + timeout
    while not seen or seen[-1][1] != 200:
        assert time.monotonic() < deadline, f"never ready: {seen[-5:]}\n{gateway.log()[-2000:]}"
        seen.append((http_json(gateway.http + "/healthz")[0], http_json(gateway.http + "/readyz")[0]))
    return seen


def _warm_status(gateway: Gateway) -> dict[str, Any]:
    with gateway.ws() as conn:
        reply = request(conn, "status")
    assert reply["ok"], reply
    return dict(reply["payload"]["warm"])


def test_ready_only_once_the_model_client_embedders_and_searcher_are_loaded(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    home = tmp_path / "home"
    write_config(home, fake, agents={"list": [{"id": "main"}, {"id": "work"}]})
    with running_gateway(home) as gateway:
        seen = _until_ready(gateway)
        # importing the model client alone takes seconds: /healthz answered while /readyz said not yet
        assert (200, 503) in seen and all(health == 200 for health, _ in seen)
        warm = _warm_status(gateway)
        assert warm["failed"] == {}
        expected = {
            "turn code",
            "model client",
            "embedder main",
            "search main",
            "embedder work",
            "search work",
        }
        assert set(warm["done"]) == expected
        with gateway.ws() as conn:
            ack = request(conn, "chat.send", {"text": "after warm-up"})
            [*_, final] = chat_until_final(conn, {ack["payload"]["runId"]})
        assert final["state"] == "final" and final["text"] == "echo: after warm-up", final  # says why if not
    [ready] = [line for line in gateway.log().splitlines() if "ready: loaded" in line]
    assert "model client" in ready and "search work" in ready


def test_a_gateway_stopped_during_its_warm_up_does_not_wait_for_the_model_client(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """The model client's preload (litellm's import, seconds of CPU) fills nothing that the stop closes:
    a gateway stopped while it runs ends at once, by the signal, instead of finishing an import it will
    never use. Stopped as soon as it listens, long before that import can end."""
    home = tmp_path / "home"
    write_config(home, fake)
    with running_gateway(home) as gateway:
        pass  # stopped as soon as it has written its pid file
    assert gateway.process.returncode == -signal.SIGTERM  # ended by the signal, not killed after a wait
    [ready] = [line for line in gateway.log().splitlines() if "ready: loaded" in line]
    assert "model client" not in ready, ready


def test_a_gateway_without_a_model_gets_ready_without_the_model_client(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, None, llm={"model": None})
    with running_gateway(home) as gateway:
        _until_ready(gateway)
        warm = _warm_status(gateway)
    assert warm["failed"] == {}
    assert "model client" not in warm["done"] and "search main" in warm["done"]


def test_an_edited_config_is_warmed_too(tmp_path: Path, fake: FakeOpenAI) -> None:
    """An agent added to openclaw.json while the gateway runs gets its embedders and searcher loaded."""
    home = tmp_path / "home"
    write_config(home, fake)
    with running_gateway(home) as gateway:
        _until_ready(gateway)
        assert "search work" not in _warm_status(gateway)["done"]
        config = json.loads((home / "openclaw.json").read_text(encoding="utf-8"))
        config["agents"] = {"list": [{"id": "main"}, {"id": "work"}]}
        staged = home / "openclaw.json.edit"
        staged.write_text(json.dumps(config), encoding="utf-8")
        staged.chmod(0o600)
        os.replace(staged, home / "openclaw.json")  # whole, as editors save
        deadline = time.monotonic() + 60
        while "search work" not in (warm := _warm_status(gateway))["done"]:
            assert time.monotonic() < deadline, warm
            time.sleep(0.1)
    assert warm["failed"] == {}
