"""The gateway with memory.backend postgres (issue 25): a real gateway process on the real test server, the
fake model on loopback. It gets ready, finds through memory.search what the CLI wrote (before it started and
while it runs: its warm path reads through the storage Protocol, not a file), and injects it into a turn."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent_helpers import tool_call
from tests.conftest import run_cli
from tests.fake_openai import FakeOpenAI
from tests.gateway_helpers import (
    Gateway,
    chat_until_final,
    echo_last_user,
    http_json,
    request,
    running_gateway,
    write_config,
)


def responder(body: dict[str, Any]) -> Any:
    """Echo the last user message; asked to "please store", call memory_add first."""
    last = (body.get("messages") or [{}])[-1]
    if body.get("tools") and last.get("role") == "user" and "please store" in str(last.get("content")):
        return tool_call("memory_add", {"text": "Ann keeps her spare key under the blue pot"})
    return echo_last_user(body)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    server.respond_with(responder)
    yield server
    server.stop()


def until_ready(gateway: Gateway, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while http_json(gateway.http + "/readyz")[0] != 200:
        assert time.monotonic() < deadline, gateway.log()[-2000:]
        time.sleep(0.05)


def memory_add(home: Path, text: str) -> str:
    added = run_cli(home, "memory", "add", text, "-c", "preference", "--json")
    assert added.returncode == 0, added.stderr
    return str(added.json()["id"])


def sent_to_the_model(fake: FakeOpenAI) -> str:
    """Every message of the last chat request, as one text."""
    body: dict[str, Any] = fake.requests_to("/chat/completions")[-1].body
    return json.dumps(body["messages"], ensure_ascii=False)


def test_a_gateway_on_postgres_finds_and_injects_what_the_cli_wrote(
    tmp_path: Path, fake: FakeOpenAI, pg_dsn: str
) -> None:
    home = tmp_path / "home"
    memory = {"backend": "postgres", "postgres": {"dsn": pg_dsn}, "extraction": {"enabled": False}}
    write_config(home, fake, memory=memory)
    tea = memory_add(home, "Drinks green tea every morning")
    with running_gateway(home) as gateway:
        until_ready(gateway)
        with gateway.ws() as conn:
            warm = request(conn, "status")["payload"]["warm"]
            assert warm["failed"] == {} and "search main" in warm["done"], warm
            found = request(conn, "memory.search", {"query": "green tea"}, timeout=120)
            assert found["ok"], found
            assert [hit["id"] for hit in found["payload"]["results"]][:1] == [tea]
            # Written by another process while the gateway runs: found at once, nothing cached stale.
            kayak = memory_add(home, "Paddles a sea kayak on weekends")
            later = request(conn, "memory.search", {"query": "sea kayak weekends"})
            assert kayak in [hit["id"] for hit in later["payload"]["results"]]
            ack = request(conn, "chat.send", {"text": "Which tea should I make this morning?"})
            [*_, final] = chat_until_final(conn, {ack["payload"]["runId"]})
        assert final["state"] == "final", final
    assert "Drinks green tea every morning" in sent_to_the_model(fake)
    assert "Traceback" not in gateway.log()
    assert not (home / "agents" / "main" / "memory" / "memory.sqlite").exists()


def test_what_a_turn_writes_through_the_gateway_lands_on_the_server(
    tmp_path: Path, fake: FakeOpenAI, pg_dsn: str
) -> None:
    """The model's memory_add tool and "remember that ..." write from the gateway's turn path; the CLI,
    another process, then reads them from the server with the person they belong to."""
    home = tmp_path / "home"
    memory = {"backend": "postgres", "postgres": {"dsn": pg_dsn}, "extraction": {"enabled": False}}
    write_config(home, fake, memory=memory)
    with running_gateway(home) as gateway:
        until_ready(gateway)
        with gateway.ws() as conn:
            for text in ("please store where my spare key is", "remember that I swim on Tuesdays"):
                ack = request(conn, "chat.send", {"text": text, "userId": "ann"})
                [*_, final] = chat_until_final(conn, {ack["payload"]["runId"]})
                assert final["state"] == "final", final
    assert "Traceback" not in gateway.log()
    listed = run_cli(home, "memory", "list", "--user", "ann", "--json")
    assert listed.returncode == 0, listed.stderr
    texts = {r["l0"]: r["userId"] for r in listed.json()}
    assert texts.get("Ann keeps her spare key under the blue pot") == "ann", texts
    assert any("swims on Tuesdays" in text for text in texts), texts  # "I swim": the third person, whole
    assert not (home / "agents" / "main" / "memory" / "memory.sqlite").exists()
