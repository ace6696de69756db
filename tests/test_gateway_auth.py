"""The gateway's token check on a real process: HTTP and WebSocket upgrades carry the token, the
failure limit slows wrong tokens down per client and never refuses the right one."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from openclaw_cli.gateway.auth import FailureLimiter, authenticate
from tests.conftest import run_cli
from tests.fake_openai import FakeOpenAI
from tests.gateway_helpers import (
    Gateway,
    echo_server,
    http_json,
    request,
    running_gateway,
    write_config,
)

WRONG = "wrong-token-wrong-token"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with echo_server() as server:
        yield server


@pytest.fixture
def gateway(tmp_path: Path, fake: FakeOpenAI) -> Iterator[Gateway]:
    """A gateway of its own (the failure counts are per process), with the default limit of 10."""
    home = tmp_path / "home"
    write_config(home, fake)
    with running_gateway(home) as gw:
        yield gw


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI) -> Iterator[Gateway]:
    """One gateway for the tests of the upgrade, which fail few enough times to share it: together they
    send four wrong or missing tokens from 127.0.0.1, under the limit of 10, so none of them meets a 429
    whatever order they run in (the tests of the limit itself each have a gateway of their own)."""
    home = tmp_path_factory.mktemp("shared") / "home"
    write_config(home, fake)
    with running_gateway(home) as gw:
        yield gw


def _chat(gw: Gateway, token: str, *, source: str = "127.0.0.1") -> tuple[int, dict[str, str], Any]:
    """POST /v1/chat/completions from `source` (another loopback address is another client)."""
    body = json.dumps({"model": "main", "messages": [{"role": "user", "content": "hi"}]})
    conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=60, source_address=(source, 0))
    try:
        conn.request(
            "POST",
            "/v1/chat/completions",
            body,
            {"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        reply = conn.getresponse()
        return reply.status, dict(reply.getheaders()), json.loads(reply.read() or b"null")
    finally:
        conn.close()


def _upgrade_status(gw: Gateway, token: str | None) -> int:
    """The HTTP status a WebSocket upgrade with `token` (None: no Authorization) is answered with."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    try:
        with connect(gw.ws_url, open_timeout=10, additional_headers=headers):
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


def _raw_upgrade(gw: Gateway, extra: str = "") -> tuple[str, bytes]:
    """A hand-written upgrade request; (status line, the rest of the answer)."""
    lines = (
        f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{gw.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        f"{extra}\r\n"
    )
    with socket.create_connection(("127.0.0.1", gw.port), timeout=10) as sock:
        sock.sendall(lines.encode())
        data = b""
        while b"\r\n\r\n" not in data and (chunk := sock.recv(4096)):
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.lower().split(b"\r\n")
                if line.startswith(b"content-length:")
            ),
            0,
        )
        while len(body) < length and (chunk := sock.recv(4096)):
            body += chunk
    status, _, headers = head.partition(b"\r\n")
    return status.decode(), headers + b"\r\n\r\n" + body


# ---------------------------------------------------------------- the failure limit


def test_wrong_tokens_never_lock_out_the_right_token_over_http(gateway: Gateway) -> None:
    statuses = [_chat(gateway, WRONG)[0] for _ in range(12)]
    assert statuses == [401] * 10 + [429, 429]
    status, headers, body = _chat(gateway, WRONG)
    assert status == 429 and body["error"]["type"] == "rate_limit_error"
    assert 1 <= int(headers["retry-after"]) <= 60
    status, _, body = _chat(gateway, gateway.token)
    assert status == 200 and body["choices"][0]["message"]["content"] == "echo: hi"
    assert http_json(gateway.http + "/v1/models", token=gateway.token)[0] == 200
    assert _chat(gateway, WRONG)[0] == 429  # the right token does not clear the count either


def test_wrong_tokens_never_lock_out_the_right_token_over_websocket(gateway: Gateway) -> None:
    statuses = [_upgrade_status(gateway, WRONG) for _ in range(12)]
    assert statuses == [401] * 10 + [429, 429]
    assert _upgrade_status(gateway, None) == 429  # a missing token is a failure like a wrong one
    with gateway.ws() as conn:
        assert request(conn, "status")["payload"]["ok"] is True
    assert _chat(gateway, gateway.token)[0] == 200  # the same count guards HTTP: still let in


def test_failures_are_counted_per_client(gateway: Gateway) -> None:
    """Another loopback address is another client: one client's failures do not slow the other."""
    assert [_chat(gateway, WRONG, source="127.0.0.2")[0] for _ in range(11)] == [401] * 10 + [429]
    assert _chat(gateway, WRONG, source="127.0.0.1")[0] == 401
    assert _chat(gateway, gateway.token, source="127.0.0.2")[0] == 200


def test_limit_counts_then_forgets_failures_of_one_client() -> None:
    limiter = FailureLimiter(max_failures=2, window=60.0)
    assert authenticate("the-right-token!", "nope", "a", limiter) is not None
    refused = authenticate("the-right-token!", None, "a", limiter)
    assert refused is not None and refused.status == 401
    over = authenticate("the-right-token!", "nope", "a", limiter)
    assert over is not None and over.status == 429 and 1 <= over.retry_after <= 60
    assert authenticate("the-right-token!", "the-right-token!", "a", limiter) is None
    assert limiter.blocked_for("b") == 0.0
    assert len(limiter._failures["a"]) == 2  # refused while over the limit: not counted, nothing grows
    assert limiter.blocked_for("a", now=10**9) == 0.0  # the window passed


# ---------------------------------------------------------------- the WebSocket upgrade


def test_an_upgrade_without_a_token_is_http_401_not_101(shared: Gateway) -> None:
    with pytest.raises(InvalidStatus) as refused, connect(shared.ws_url, open_timeout=10):
        pass
    response = refused.value.response
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert "wrong or missing token" in json.loads(response.body or b"")["error"]["message"]
    status, rest = _raw_upgrade(shared)
    assert status.startswith("HTTP/1.1 401"), status
    assert b"authentication_error" in rest


def test_an_upgrade_with_a_wrong_token_is_401_and_with_the_right_one_101(shared: Gateway) -> None:
    assert _upgrade_status(shared, WRONG) == 401
    status, _ = _raw_upgrade(shared, f"Authorization: Bearer {shared.token}\r\n")
    assert status.startswith("HTTP/1.1 101"), status
    with shared.ws() as conn:
        status_reply = request(conn, "status")  # no connect request needed
        assert status_reply["ok"] and status_reply["payload"]["port"] == shared.port


def test_the_connect_request_still_answers_the_hello(shared: Gateway) -> None:
    with shared.ws() as conn:
        hello = request(conn, "connect", {"auth": {"token": shared.token}})
        assert hello["ok"] and hello["payload"]["protocol"] == 1
        assert "chat.send" in hello["payload"]["methods"]
        assert request(conn, "connect", {})["ok"]  # authenticated at the upgrade: the hello again
        assert request(conn, "health")["ok"]


def test_clients_send_the_token_at_the_upgrade(shared: Gateway) -> None:
    called = run_cli(shared.home, "gateway", "call", "status", "--port", str(shared.port))
    assert called.returncode == 0, called.stderr
    assert called.json()["port"] == shared.port
    wrong = run_cli(shared.home, "gateway", "call", "status", "--port", str(shared.port), "--token", WRONG)
    assert wrong.returncode == 1
    assert "HTTP 401" in wrong.stderr and "wrong or missing token" in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1
