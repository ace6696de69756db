"""A gateway's first turn pays nothing it could have done earlier: an idle session's collect turn starts at
once (no debounce), and the process warms its model client, embedders and searcher at start, saying
ready on /readyz only once that is done. Real gateway processes, the fake model on loopback.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI
from tests.gateway_helpers import chat_until_final, echo_server, request, running_gateway, write_config


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
