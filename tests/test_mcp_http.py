"""`openclaw mcp --http` (issue 51): streamable HTTP with the SDK's own client, behind a bearer token (the
gateway's, or mcp.token); refused without it; never bound off loopback without a token."""

from __future__ import annotations

import json
import stat
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_types import DEFAULT_NEGOTIATED_VERSION

from tests.conftest import run_cli
from tests.mcp_helpers import McpClient, free_port, http_opener, start_http, stop

TOKEN = "mcp-test-token-0123456789abcdef"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A server for the owner of a home whose config sets mcp.token."""
    home = tmp_path_factory.mktemp("mcphttp") / "home"
    home.mkdir(mode=0o700)
    (home / "openclaw.json").write_text(json.dumps({"mcp": {"token": TOKEN}}), encoding="utf-8")
    result = run_cli(
        home, "session", "append", "agent:main:main", "--role", "user", "the boiler needs a service in May"
    )
    assert result.returncode == 0, result.stderr
    port = free_port()
    process = start_http(home, port)
    try:
        yield f"http://127.0.0.1:{port}/mcp", home
    finally:
        stop(process)


@pytest.fixture(scope="module")
def client(served: tuple[str, Path]) -> Iterator[McpClient]:
    opened = McpClient(http_opener(served[0], TOKEN))
    yield opened
    opened.close()


def test_initialize_and_list_over_http(client: McpClient) -> None:
    assert client.initialized.server_info.name == "openclaw"
    assert len(client.run(lambda s: s.list_tools()).tools) == 6
    assert {str(r.uri) for r in client.run(lambda s: s.list_resources()).resources} == {
        "memory://MEMORY.md",
        "memory://today",
        "memory://stats",
    }
    assert [p.name for p in client.run(lambda s: s.list_prompts()).prompts] == ["recall"]


def test_every_tool_and_resource_over_http(client: McpClient) -> None:
    added = client.ok("memory_add", {"text": "the spare key is under the blue pot", "category": "event"})
    found = client.ok("memory_search", {"query": "where is the spare key"})
    assert added["id"] in [hit["id"] for hit in found["results"]]
    assert client.ok("memory_history", {"id": added["id"]})["history"][0]["action"] == "add"
    assert "boiler" in str(client.ok("session_search", {"query": "boiler service"})["results"])
    noted = client.ok("memory_note", {"text": "renew the passport before June", "durable": True})
    assert noted["location"].startswith("MEMORY.md:")
    client.ok("memory_note", {"text": "called the plumber"})
    assert "renew the passport" in client.read("memory://MEMORY.md")
    assert "called the plumber" in client.read("memory://today")
    assert json.loads(client.read("memory://stats"))["memories"] >= 1
    assert client.ok("memory_forget", {"id": added["id"]}) == {"deleted": added["id"]}


def test_a_bad_argument_over_http_is_a_tool_error(client: McpClient) -> None:
    assert "invalid argument k" in client.error("memory_search", {"query": "key", "k": 10**6})
    assert client.ok("memory_search", {"query": "key"})["person"] == "default"


def _post(url: str, token: str | None) -> int:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=10) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def _rpc(url: str, body: str, headers: dict[str, str]) -> tuple[dict[str, str], Any]:
    """One raw POST of the streamable HTTP transport: the reply's headers and its JSON-RPC message (a
    JSON body, or the `data:` line of a one-event stream)."""
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {TOKEN}",
        **headers,
    }
    with urllib.request.urlopen(urllib.request.Request(url, body.encode(), sent), timeout=30) as reply:
        text = reply.read().decode("utf-8")
        got = {key.lower(): value for key, value in reply.headers.items()}
    if not text.strip():
        return got, None
    if text.lstrip().startswith("{"):
        return got, json.loads(text)
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return got, json.loads(data[-1])


def test_a_lone_surrogate_over_http_is_a_tool_error(served: tuple[str, Path], client: McpClient) -> None:
    url = served[0]
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": DEFAULT_NEGOTIATED_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    headers, _ = _rpc(url, json.dumps(init), {})
    session = {
        "Mcp-Session-Id": headers["mcp-session-id"],
        "MCP-Protocol-Version": DEFAULT_NEGOTIATED_VERSION,
    }
    _rpc(url, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), session)
    raw = (
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", '
        '"params": {"name": "memory_add", "arguments": {"text": "half \\udc00 a pair"}}}'
    )
    _, answer = _rpc(url, raw, session)
    assert answer["result"]["isError"] and "lone surrogate" in answer["result"]["content"][0]["text"]
    assert client.ok("memory_search", {"query": "spare key"})["person"] == "default"  # still serving


def test_no_token_and_a_wrong_token_are_refused(served: tuple[str, Path]) -> None:
    assert _post(served[0], None) == 401
    assert _post(served[0], "not-the-token-at-all-xxxxxxxx") == 401


def test_a_non_loopback_bind_without_a_token_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = run_cli(home, "mcp", "--http", "--host", "0.0.0.0", "--port", str(free_port()))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [lines[0]] and lines[0].startswith("openclaw: error: refusing to serve MCP on 0.0.0.0")
    assert result.stdout == ""


def test_on_loopback_without_a_token_the_gateway_token_is_made_and_required(tmp_path: Path) -> None:
    home = tmp_path / "home"
    port = free_port()
    process = start_http(home, port)
    try:
        token_file = home / "gateway" / "token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        url = f"http://127.0.0.1:{port}/mcp"
        assert _post(url, None) == 401
        opened = McpClient(http_opener(url, token_file.read_text().strip()))
        try:
            assert opened.initialized.server_info.name == "openclaw"
        finally:
            opened.close()
    finally:
        stop(process)
